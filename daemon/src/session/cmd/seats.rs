//! `NEW`, `JOIN`, `REMATCH` and `LEAVE` (and the helpers `SEEK` and
//! `ACCEPT`, in lobby.rs, share): the commands that take or
//! give up a seat. The lobby decides every seat, so each of them asks it
//! through `ask_lobby` and answers with what it says (all but a `LEAVE`
//! before `LOGIN`, which can only stop watching); a seat it gives becomes the
//! session's route to that game before the reply goes out.

use std::marker::PhantomData;
use std::sync::Arc;

use actix::{Context, Message, Recipient};
use flipline::protocol::ProtocolError;

use crate::messages::{Answer, Create, Join, Leave, Name, Rematch};
use crate::rules::lobby::Left;
use crate::rules::refusal::Refusal;
use crate::session::{LobbyPort, SeatRef, Session};
use flipline::protocol::Reply;

impl Session {
    /// Asks the lobby (which decides every seat) and answers with what it
    /// says; a seat it gives becomes this session's route to that game before
    /// the reply goes out, so the next command already goes there.
    pub(super) fn ask_lobby<M, T, F>(
        &mut self,
        ctx: &mut Context<Self>,
        to: fn(&LobbyPort) -> &Recipient<M>,
        msg: M,
        answer: F,
    ) where
        M: Message<Result = Result<T, ProtocolError>> + Send + 'static,
        T: Send + 'static,
        F: FnOnce(&mut Session, T) -> Answer + 'static,
    {
        let shared = Arc::clone(&self.shared);
        self.ask(ctx, to(&shared.lobby), msg, move |act, ctx, result| {
            let reply = result.map(|value| answer(act, value));
            act.reply(ctx, reply);
        });
    }

    /// The name logged in with; commands that need one are refused before
    /// `LOGIN` (`on_line`), so this only guards that every command is answered.
    pub(super) fn logged_in(&mut self, ctx: &mut Context<Self>) -> Option<Name> {
        let name = self.login_name().cloned();
        if name.is_none() {
            self.refuse(ctx, Refusal::NotLoggedIn);
        }
        name
    }

    /// Takes the seat the lobby gave: the route to that game from now on.
    pub(super) fn take_seat(&mut self, seat: SeatRef) -> Answer {
        let game = seat.game;
        self.seat = Some(seat);
        Answer::ok(Reply::Game(game))
    }

    pub(super) fn new_game(&mut self, ctx: &mut Context<Self>, spec: flipline::protocol::NewGame) {
        let Some(name) = self.logged_in(ctx) else {
            return;
        };
        let create = Create {
            name,
            spec,
            route: PhantomData,
        };
        self.ask_lobby(ctx, |l| &l.create, create, Session::take_seat);
    }

    pub(super) fn join(&mut self, ctx: &mut Context<Self>, game: flipline::protocol::GameId) {
        let Some(name) = self.logged_in(ctx) else {
            return;
        };
        let join = Join {
            name,
            game,
            route: PhantomData,
        };
        self.ask_lobby(
            ctx,
            |l| &l.join,
            join,
            |act, (seat, color)| {
                let game = seat.game;
                act.seat = Some(seat);
                Answer::ok(Reply::Joined(game, color))
            },
        );
    }

    pub(super) fn rematch(&mut self, ctx: &mut Context<Self>) {
        let Some(name) = self.logged_in(ctx) else {
            return;
        };
        let rematch = Rematch {
            name,
            route: PhantomData,
        };
        self.ask_lobby(
            ctx,
            |l| &l.rematch,
            rematch,
            |act, seat| match seat {
                Some(seat) => act.take_seat(seat),
                None => Answer::ok(Reply::Waiting),
            },
        );
    }

    pub(super) fn leave(&mut self, ctx: &mut Context<Self>) {
        let Some(name) = self.login_name().cloned() else {
            return self.stop_watching(ctx);
        };
        let watching = !self.watching.is_empty();
        self.ask_lobby(
            ctx,
            |l| &l.leave,
            Leave { name, watching },
            |act, left| match left {
                Left::Game(_) => {
                    act.seat = None;
                    Answer::default()
                }
                Left::StopWatching => {
                    act.unwatch_all();
                    Answer::default()
                }
                Left::SeekWithdrawn => Answer::ok(Reply::SeekWithdrawn),
            },
        );
    }

    /// `LEAVE` before `LOGIN`: only watching can be left.
    fn stop_watching(&mut self, ctx: &mut Context<Self>) {
        if self.watching.is_empty() {
            return self.refuse(ctx, Refusal::NothingToLeave);
        }
        self.unwatch_all();
        self.reply(ctx, Ok(Answer::default()));
    }
}
