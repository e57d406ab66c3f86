//! `UNDO` carried out: the table allows it, the game's stored moves say how
//! many stay, the store takes the rest back, and only then does the table
//! put the position back and announce it. Awaited with `ctx.wait`, like a
//! move, so that nothing else happens in the game meanwhile.

use actix::ResponseActFuture;
use actix::fut::{self, ActorFutureExt, WrapFuture};
use flipline::Move;
use flipline::protocol::{ErrorCode, ProtocolError, Reply};
use std::sync::atomic::Ordering;

use super::engine::ready;
use super::{GameActor, GameResponse};
use crate::messages::*;
use crate::rules::table::{TakeBack, UndoStep};
use crate::service_time;
use crate::store::StoreError;

impl GameActor {
    pub(super) fn undo(&mut self, name: &str) -> GameResponse {
        match self.table.undo(name) {
            Err(e) => GameResponse::Now(Err(e.into())),
            Ok(take_back) => {
                let name = name.to_string();
                GameResponse::AfterCommit(Box::pin(self.take_back(name, take_back)))
            }
        }
    }

    /// Reads the moves, asks the table, stores the take-back if it is not
    /// the other player's to agree, and tells the table once it is stored.
    fn take_back(
        &mut self,
        name: String,
        take_back: TakeBack,
    ) -> impl fut::ActorFuture<GameActor, Output = Answered> + 'static {
        let held = self.services.store.held_moves(self.id());
        let read = async move {
            let held = held.await.map_err(unavailable)?;
            let moves: Vec<(Move, Option<u64>)> = (held.unwrap_or_default().iter())
                .map(|m| (m.mv, m.ms))
                .collect();
            let keep = take_back.keep(&moves)?;
            Ok((moves, keep))
        };
        read.into_actor(self)
            .then(move |read: Result<_, ProtocolError>, act, ctx| {
                let step = read
                    .map(|(moves, keep)| (act.table.undo_allowed(&name, &take_back), moves, keep));
                let then: ResponseActFuture<GameActor, Answered> = match step {
                    Err(e) => {
                        let effects = act.table.undo_failed();
                        act.carry_out(ctx, effects);
                        ready(Err(e))
                    }
                    Ok((UndoStep::Asked(effects), _, _)) => {
                        act.carry_out(ctx, effects);
                        ready(Ok(Answer::ok(Reply::Asked)))
                    }
                    Ok((UndoStep::Store, moves, keep)) => {
                        Box::pin(act.store_take_back(moves, keep, take_back.plies()))
                    }
                };
                then
            })
    }

    fn store_take_back(
        &mut self,
        mut moves: Vec<(Move, Option<u64>)>,
        keep: u32,
        plies: u32,
    ) -> impl fut::ActorFuture<GameActor, Output = Answered> + 'static {
        let stored = self.services.store.take_back(self.id(), keep, plies);
        stored.into_actor(self).map(move |stored, act, ctx| {
            if let Err(error) = stored {
                let effects = act.table.undo_failed();
                act.carry_out(ctx, effects);
                return Err(unavailable(error));
            }
            moves.truncate(usize::try_from(keep).unwrap_or(usize::MAX));
            let effects = act.table.taken_back(&moves, service_time::now());
            act.handle.ply.store(act.table.plies(), Ordering::Relaxed);
            act.carry_out(ctx, effects);
            Ok(Answer::default())
        })
    }
}

fn unavailable(error: StoreError) -> ProtocolError {
    tracing::error!(%error, "a take-back could not be stored");
    ProtocolError::new(
        ErrorCode::Unavailable,
        "the store could not take the moves back; nothing changed, try again",
    )
}
