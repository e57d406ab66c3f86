//! `NEW`, `SEEK`, `JOIN`, `REMATCH` and `LEAVE`: the commands that take or
//! give up a seat. The lobby decides every seat, so each of them asks it
//! through `ask_lobby` and answers with what it says (all but a `LEAVE`
//! before `LOGIN`, which can only stop watching); a seat it gives becomes the
//! session's route to that game before the reply goes out.

use actix::{Context, Handler, Message};
use flipline::protocol::{ErrorCode, ProtocolError};

use crate::lobby::Lobby;
use crate::messages::{Answer, Create, Join, Leave, Rematch, Seek};
use crate::rules::lobby::Left;
use crate::session::Session;

impl Session {
    /// Asks the lobby (which decides every seat) and answers with what it
    /// says; a seat it gives becomes this session's route to that game before
    /// the reply goes out, so the next command already goes there.
    fn ask_lobby<M, T, F>(&mut self, ctx: &mut Context<Self>, msg: M, answer: F)
    where
        M: Message<Result = Result<T, ProtocolError>> + Send + 'static,
        T: Send + 'static,
        Lobby: Handler<M>,
        F: FnOnce(&mut Session, T) -> Answer + 'static,
    {
        let lobby = self.shared.lobby.clone();
        self.ask(ctx, &lobby, msg, move |act, ctx, result| {
            let reply = result.map(|value| answer(act, value));
            act.reply(ctx, reply);
        });
    }

    pub(super) fn seek(
        &mut self,
        ctx: &mut Context<Self>,
        variant: flipline::Variant,
        clock: Option<flipline::protocol::ClockSpec>,
    ) {
        let Some(name) = self.name.clone() else {
            return;
        };
        let seek = Seek {
            name,
            variant,
            clock,
        };
        self.ask_lobby(ctx, seek, |act, seat| match seat {
            Some(seat) => {
                let game = seat.game;
                act.seat = Some(seat);
                Answer::ok(game.to_string())
            }
            None => {
                act.seat = None;
                Answer::ok("seeking")
            }
        });
    }

    pub(super) fn new_game(&mut self, ctx: &mut Context<Self>, spec: flipline::protocol::NewGame) {
        let Some(name) = self.name.clone() else {
            return;
        };
        self.ask_lobby(ctx, Create { name, spec }, |act, seat| {
            let game = seat.game;
            act.seat = Some(seat);
            Answer::ok(game.to_string())
        });
    }

    pub(super) fn join(&mut self, ctx: &mut Context<Self>, game: flipline::protocol::GameId) {
        let Some(name) = self.name.clone() else {
            return;
        };
        self.ask_lobby(ctx, Join { name, game }, |act, (seat, color)| {
            let game = seat.game;
            act.seat = Some(seat);
            Answer::ok(format!("{game} {color}"))
        });
    }

    pub(super) fn rematch(&mut self, ctx: &mut Context<Self>) {
        let Some(name) = self.name.clone() else {
            return self.error(ctx, ErrorCode::Forbidden, "you are not in a game");
        };
        self.ask_lobby(ctx, Rematch { name }, |act, seat| match seat {
            Some(seat) => {
                let game = seat.game;
                act.seat = Some(seat);
                Answer::ok(game.to_string())
            }
            None => Answer::ok("waiting"),
        });
    }

    pub(super) fn leave(&mut self, ctx: &mut Context<Self>) {
        let Some(name) = self.name.clone() else {
            return self.stop_watching(ctx);
        };
        let watching = !self.watching.is_empty();
        self.ask_lobby(ctx, Leave { name, watching }, |act, left| match left {
            Left::Game(_) => {
                act.seat = None;
                Answer::default()
            }
            Left::StopWatching => {
                act.unwatch_all();
                Answer::default()
            }
            Left::SeekWithdrawn => Answer::ok("seek withdrawn"),
        });
    }

    /// `LEAVE` before `LOGIN`: only watching can be left.
    fn stop_watching(&mut self, ctx: &mut Context<Self>) {
        if self.watching.is_empty() {
            return self.error(ctx, ErrorCode::Conflict, "nothing to leave");
        }
        self.unwatch_all();
        self.reply(ctx, Ok(Answer::default()));
    }
}
