//! A game's questions to the engine pool: bot moves and hints, off the
//! actor threads.

use std::time::{Duration, Instant};

use actix::fut::{self, ActorFutureExt, WrapFuture};
use actix::{AsyncContext, Context, ResponseActFuture};
use flipline::protocol::{ErrorCode, ProtocolError};

use super::{GameActor, HINT_LEVEL};
use crate::engine_pool::Think;
use crate::messages::*;
use crate::random::random_u64;
use crate::rules::table::{Played, Turn};
use crate::service_time;
use flipline::protocol::Reply;

impl GameActor {
    /// Asks the engine pool for a bot move; the table drops an answer for a
    /// turn that has gone by.
    pub(super) fn think(&mut self, ctx: &mut Context<Self>, level: u8, turn: Turn) {
        // The budget is a share of the clock, in service time; the engine's
        // deadline is on the real clock, which its threads read.
        let budget = self
            .table
            .think_budget(self.services.config.engine_move_ms, service_time::now());
        let job = Think {
            game: self.table.position(),
            level,
            seed: random_u64(),
            deadline: Instant::now() + budget,
        };
        crate::metrics::engine_job_sent();
        let request =
            self.services
                .engine
                .send(job)
                .into_actor(self)
                .map(move |answer, act, ctx| {
                    if answer.is_err() {
                        // Never taken: the pool is gone.
                        crate::metrics::engine_job_taken();
                    }
                    // The pool gone (shutting down) or without an answer: the
                    // table plays the first legal move rather than stall the game.
                    let mv = answer.ok().flatten().map(|choice| choice.mv);
                    match act.table.bot_answer(turn, mv, service_time::now()) {
                        Some(Played::Commit(commit)) => {
                            let stored = act.store_move(commit);
                            ctx.wait(stored.map(|_, _, _| ()));
                        }
                        Some(Played::Refused(e, effects)) => {
                            tracing::warn!(game = act.id(), error = %e, "bot move refused");
                            act.carry_out(ctx, effects);
                        }
                        None => {}
                    }
                });
        ctx.spawn(request);
    }
}

impl GameActor {
    /// `HINT`: the engine's move for `name`, if the table allows it.
    pub(super) fn hint(&mut self, name: &str) -> ResponseActFuture<Self, Answered> {
        let position = match self.table.hint(name, &self.services.config.hints) {
            Ok(position) => position,
            Err(e) => return ready(Err(e.into())),
        };
        let job = Think {
            game: position,
            level: HINT_LEVEL,
            seed: random_u64(),
            deadline: Instant::now() + Duration::from_millis(self.services.config.engine_move_ms),
        };
        crate::metrics::engine_job_sent();
        Box::pin(
            self.services
                .engine
                .send(job)
                .into_actor(self)
                .map(|answer, _, _| match answer {
                    Ok(Some(choice)) => Ok(Answer::ok(Reply::Hint(
                        choice.mv,
                        choice.score,
                        choice.exact,
                    ))),
                    Ok(None) => Err(ProtocolError::new(ErrorCode::Conflict, "the game is over")),
                    Err(_) => {
                        // Never taken: the pool is gone.
                        crate::metrics::engine_job_taken();
                        Err(ProtocolError::new(
                            ErrorCode::Unavailable,
                            "the engine is not available",
                        ))
                    }
                }),
        )
    }
}

pub(super) fn ready(reply: Answered) -> ResponseActFuture<GameActor, Answered> {
    Box::pin(fut::ready(reply))
}
