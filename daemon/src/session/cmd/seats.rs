//! `NEW`, `JOIN`, `REMATCH` and `LEAVE` (and the helpers `SEEK` and
//! `ACCEPT`, in lobby.rs, share): the commands that take or
//! give up a seat. The lobby decides every seat, so each of them asks it
//! through `ask_lobby` and answers with what it says (all but a `LEAVE`
//! before `LOGIN`, which can only stop watching); a seat it gives becomes the
//! session's route to that game before the reply goes out.

use std::marker::PhantomData;
use std::sync::Arc;

use actix::{ActorFutureExt, AsyncContext, Context, Message, Recipient, WrapFuture};
use flipline::Color;
use flipline::protocol::{ErrorCode, GameId, ProtocolError};

use crate::messages::{
    Answer, Create, Join, Leave, LeaveElsewhere, Name, Rematch, RematchElsewhere, SitElsewhere,
};
use crate::rules::lobby::Left;
use crate::rules::refusal::Refusal;
use crate::session::{LobbyPort, SeatRef, Session, SessionRef};
use flipline::protocol::Reply;

/// How long a seat at another node's game is asked for while that node
/// does not answer: past two of the longest leases, by when a dead node's
/// games are taken over.
const SIT_THERE_WITHIN: std::time::Duration = std::time::Duration::from_secs(64);
const SIT_THERE_FIRST_PAUSE: std::time::Duration = std::time::Duration::from_millis(250);
const SIT_THERE_LONGEST_PAUSE: std::time::Duration = std::time::Duration::from_secs(2);

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
            name: Name::clone(&name),
            game,
            route: PhantomData,
        };
        let shared = Arc::clone(&self.shared);
        self.ask(
            ctx,
            &shared.lobby.join,
            join,
            move |act, ctx, joined| match joined {
                Err(e) if e == Refusal::NoGame(game).into() && act.shared.elsewhere.is_some() => {
                    act.join_elsewhere(ctx, name, game);
                }
                joined => act.seated(ctx, joined),
            },
        );
    }

    /// `JOIN` of a game this node does not hold: another node's, if one
    /// owns it.
    fn join_elsewhere(&mut self, ctx: &mut Context<Self>, name: Name, game: GameId) {
        let Some((to, sit)) = self.sit_request(ctx, name, game) else {
            return self.refuse(ctx, Refusal::NoGame(game));
        };
        self.ask(ctx, &to, sit, Session::seated);
    }

    /// The request that seats this session, as `name`, at `game` on the
    /// node that owns it, and where it goes: `None` off a cluster's bus.
    fn sit_request(
        &self,
        ctx: &mut Context<Self>,
        name: Name,
        game: GameId,
    ) -> Option<(
        Recipient<SitElsewhere<SessionRef>>,
        SitElsewhere<SessionRef>,
    )> {
        let to = self.shared.elsewhere.as_ref()?.sit.clone();
        let sit = SitElsewhere {
            game,
            conn: self.id,
            name,
            session: Session::own_ref(ctx),
        };
        Some((to, sit))
    }

    /// The leader paired this session's seek at `game` (or a tournament
    /// or an accepted challenge seated it there), which another node made:
    /// the seat there is taken as `JOIN` takes it, but nobody asked, so
    /// nothing is answered (the snapshot shows the game, as `START` shows a
    /// waiting seeker its pairing). Other commands wait meanwhile.
    pub(in crate::session) fn sit_there(&mut self, ctx: &mut Context<Self>, game: GameId) {
        let Some(name) = self.login_name().cloned() else {
            return;
        };
        let until = std::time::Instant::now() + SIT_THERE_WITHIN;
        self.try_sitting_there(ctx, name, game, (until, SIT_THERE_FIRST_PAUSE));
    }

    /// One attempt of [`Session::sit_there`]. A game's node that did not
    /// answer may have died before it did: the seat, held for this player,
    /// is taken over with its game, so the seat is asked for again (of the
    /// game's owner then) after `pause`, doubled each time, until `until`.
    fn try_sitting_there(
        &mut self,
        ctx: &mut Context<Self>,
        name: Name,
        game: GameId,
        (until, pause): (std::time::Instant, std::time::Duration),
    ) {
        let Some((to, sit)) = self.sit_request(ctx, Name::clone(&name), game) else {
            return;
        };
        let again = std::time::Instant::now() + pause < until;
        let sat = (to.send(sit).into_actor(self)).map(move |joined, act, ctx| match joined {
            Ok(Ok((seat, _))) => act.seat = Some(seat),
            Ok(Err(e)) if e.code == ErrorCode::Unavailable && again => {
                tracing::info!(game, error = %e, "a seat at another node's game: asked again shortly");
                let next = (pause * 2).min(SIT_THERE_LONGEST_PAUSE);
                let later = tokio::time::sleep(pause).into_actor(act);
                ctx.wait(later.map(move |(), act, ctx| {
                    act.try_sitting_there(ctx, name, game, (until, next));
                }));
            }
            Ok(Err(e)) => tracing::warn!(
                game,
                error = %e,
                "a seat at another node's game could not be taken"
            ),
            Err(_) => {}
        });
        ctx.wait(sat);
    }

    /// Answers a `JOIN`: the seat is the route to its game from now on.
    fn seated(&mut self, ctx: &mut Context<Self>, joined: Result<(SeatRef, Color), ProtocolError>) {
        let reply = joined.map(|(seat, color)| {
            let game = seat.game;
            self.seat = Some(seat);
            Answer::ok(Reply::Joined(game, color))
        });
        self.reply(ctx, reply);
    }

    pub(super) fn rematch(&mut self, ctx: &mut Context<Self>) {
        let Some(name) = self.logged_in(ctx) else {
            return;
        };
        let rematch = Rematch {
            name,
            route: PhantomData,
        };
        let shared = Arc::clone(&self.shared);
        self.ask(
            ctx,
            &shared.lobby.rematch,
            rematch,
            |act, ctx, rematched| {
                let elsewhere = act.shared.elsewhere.as_ref().map(|e| e.rematch.clone());
                match (rematched, elsewhere) {
                    // Not here: a seat at a game on another node asks there.
                    (Err(e), Some(to)) if e == Refusal::NotInGame.into() && act.seat.is_some() => {
                        let id = act.id;
                        act.ask(ctx, &to, RematchElsewhere(id), Session::rematched);
                    }
                    (rematched, _) => act.rematched(ctx, rematched),
                }
            },
        );
    }

    /// Answers a `REMATCH`: the new game's seat, or waiting.
    fn rematched(&mut self, ctx: &mut Context<Self>, seat: Result<Option<SeatRef>, ProtocolError>) {
        let reply = seat.map(|seat| match seat {
            Some(seat) => self.take_seat(seat),
            None => Answer::ok(Reply::Waiting),
        });
        self.reply(ctx, reply);
    }

    pub(super) fn leave(&mut self, ctx: &mut Context<Self>) {
        if self.login_name().is_none() {
            return self.stop_watching(ctx);
        }
        let elsewhere = self.shared.elsewhere.as_ref().map(|e| e.leave.clone());
        match (elsewhere, self.seat.as_ref().map(|s| s.game)) {
            // A seat at a game on another node is left there.
            (Some(to), Some(game)) => {
                let id = self.id;
                self.ask(
                    ctx,
                    &to,
                    LeaveElsewhere(id, game),
                    |act, ctx, left| match left {
                        Ok(true) => {
                            act.seat = None;
                            act.reply(ctx, Ok(Answer::default()));
                        }
                        Ok(false) => act.leave_here(ctx),
                        Err(e) => act.reply(ctx, Err(e)),
                    },
                );
            }
            _ => self.leave_here(ctx),
        }
    }

    /// `LEAVE` of what this node holds: a seat, the watching, or a seek.
    fn leave_here(&mut self, ctx: &mut Context<Self>) {
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
