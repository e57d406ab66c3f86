//! `MOVE`, `PASS`, `END`, `SAY`, `BOARD`, `HINT` and `QUIT`: the commands for one
//! game, sent straight to its actor by the route the session holds (its seat,
//! or for `BOARD` the game it watches most recently), without asking the
//! lobby. `MOVE` and `PASS` are the daemon's busiest path: they copy as
//! little as they can, and their time from the line read to the reply goes to
//! `SlowMoves`.

use actix::{ActorContext, ActorFutureExt, AsyncContext, Context, WrapFuture};
use flipline::protocol::Reply;

use crate::messages::{Action, Answer, ToGame};
use crate::rules::refusal::Refusal;
use crate::session::{SeatRef, Session};

impl Session {
    /// The game a game command is for: the seat, else (for `BOARD`) the game
    /// being watched most recently.
    fn current_game(&self, spectator_ok: bool) -> Option<SeatRef> {
        self.seat.clone().or_else(|| {
            if spectator_ok {
                self.watching.last().cloned()
            } else {
                None
            }
        })
    }

    /// `MOVE`, `PASS` and the like: sent from the seat as it is, since this is
    /// the busiest path (no copy of the game's address per move).
    pub(super) fn play(&mut self, ctx: &mut Context<Self>, action: Action) {
        let (Some(seat), Some(name)) = (&self.seat, self.login_name()) else {
            return self.refuse(ctx, Refusal::NotInGame);
        };
        let is_move = matches!(action, Action::Move(_) | Action::Pass);
        let request = seat.tx.send(ToGame::Play {
            name: name.clone(),
            action,
        });
        self.await_answer(ctx, request, move |act, ctx, result| {
            // Input waits while a command does, so the last input is this line.
            if is_move {
                let took = act.last_input.elapsed();
                act.shared.slow_moves.served(took);
                crate::metrics::counters::moved(took);
            }
            act.reply(ctx, result)
        });
    }

    /// `QUIT`: a player in a game in play is told first that the seat is
    /// kept and for how long (the game knows both); a game gone by then
    /// leaves a plain `OK bye`. The session stops whatever the answer.
    pub(super) fn quit(&mut self, ctx: &mut Context<Self>) {
        let bye = || Ok(Answer::ok(Reply::Bye));
        let (Some(seat), Some(name)) = (&self.seat, self.login_name()) else {
            self.reply(ctx, bye());
            return ctx.stop();
        };
        let request = seat.tx.send(ToGame::Play {
            name: name.clone(),
            action: Action::Quit,
        });
        let request = request.into_actor(self).map(move |answer, act, ctx| {
            act.reply(ctx, answer.unwrap_or_else(|_| bye()));
            ctx.stop();
        });
        ctx.wait(request);
    }

    pub(super) fn board(&mut self, ctx: &mut Context<Self>) {
        let Some(seat) = self.current_game(true) else {
            return self.refuse(ctx, Refusal::NotInGame);
        };
        // Spectators have no seat; any name reads the board.
        let name = self.login_name().cloned().unwrap_or_default();
        let request = seat.tx.send(ToGame::Play {
            name,
            action: Action::Board,
        });
        self.await_answer(ctx, request, |act, ctx, result| act.reply(ctx, result));
    }

    pub(super) fn hint(&mut self, ctx: &mut Context<Self>) {
        let (Some(seat), Some(name)) = (self.current_game(false), self.login_name().cloned())
        else {
            return self.refuse(ctx, Refusal::NotInGame);
        };
        let request = seat.tx.send(ToGame::Hint { name });
        self.await_answer(ctx, request, |act, ctx, result| act.reply(ctx, result));
    }
}
