//! Storing a game's end before it is announced. The first commit is held as
//! a move's is (`ctx.wait`: nothing else happens in the game until the store
//! answers), so that as long as the store is well nothing of the game comes
//! between its end and its `OVER`. If the store refuses it, the table's
//! [`IfRefused`] says what follows: a resignation is taken back and its
//! player told `ERR 503`; an ending nobody asked for (a flag, an abandonment,
//! the last move) is committed again, after a growing pause, until it is
//! stored. Meanwhile the game answers its messages (it takes no move: it is
//! over) but does not stop, so that the end is announced once stored.

use actix::fut::{self, ActorFutureExt, WrapFuture};
use actix::{AsyncContext, Context};
use flipline::protocol::{ErrorCode, GameResult, ProtocolError};

use super::{GameActor, GameResponse};
use crate::messages::{Answer, FromGame, Name};
use crate::rules::table::{Effect, IfRefused, end_retry_delay};
use crate::service_time;
use crate::session::SessionRef;
use crate::store::{RatingChange, StoreError, Write, rounded};

/// What followed an ending, to carry out once it is stored.
type Then = Vec<Effect<SessionRef>>;

/// A failure to store an ending is logged at its first retry and then once
/// in this many, not every second.
const LOG_EVERY: u32 = 30;

impl GameActor {
    /// An [`Effect::CommitEnd`] that no reply waits for.
    pub(super) fn commit_end(
        &mut self,
        ctx: &mut Context<Self>,
        result: GameResult,
        then: Then,
        refused: IfRefused,
    ) {
        let stored = self.store_end(result);
        ctx.wait(stored.map(move |stored, act, ctx| match (stored, refused) {
            (Ok(()), _) => act.announce_end(ctx, then),
            (Err(error), IfRefused::TakeBack) => {
                tracing::error!(game = act.id(), %error, "the end of a game could not be saved; it goes on");
                act.table.end_refused();
            }
            (Err(_), IfRefused::Retry) => act.retry_end(ctx, result, then, 1),
        }));
    }

    /// `END`: answered once the resignation is stored; if the store refuses
    /// it, the game goes on as it was and the player hears `ERR 503`.
    pub(super) fn resign(&mut self, ctx: &mut Context<Self>, name: &str) -> GameResponse {
        let mut effects = match self.table.resign(name) {
            Ok(effects) => effects,
            Err(e) => return GameResponse::Now(Err(e.into())),
        };
        let (result, then) = match effects.pop() {
            Some(Effect::CommitEnd { result, then, .. }) => (result, then),
            last => {
                effects.extend(last);
                self.carry_out(ctx, effects);
                return GameResponse::Now(Ok(Answer::default()));
            }
        };
        self.carry_out(ctx, effects);
        let stored = self.store_end(result).map(move |stored, act, ctx| match stored {
            Ok(()) => {
                act.announce_end(ctx, then);
                Ok(Answer::default())
            }
            Err(error) => {
                tracing::error!(game = act.id(), %error, "a resignation could not be saved; the game goes on");
                act.table.end_refused();
                Err(ProtocolError::new(
                    ErrorCode::Unavailable,
                    "the resignation could not be saved and the game goes on; try again",
                ))
            }
        });
        GameResponse::AfterCommit(Box::pin(stored))
    }

    fn store_end(
        &mut self,
        result: GameResult,
    ) -> impl fut::ActorFuture<GameActor, Output = Result<(), StoreError>> + 'static {
        let game = self.id();
        let commit = self.services.store.commit(Write::End { game, result });
        commit
            .into_actor(self)
            .map(|stored, _, _| stored.map(|_| ()))
    }

    /// The end is stored: what followed it goes out, and for a rated game
    /// what it did to the ratings (stored with the end) right after its
    /// `OVER`. The changes are read before anything goes out, with the
    /// mailbox held (`ctx.wait`), so that a player who leaves at `OVER`
    /// still hears `RATED`.
    fn announce_end(&mut self, ctx: &mut Context<Self>, then: Then) {
        self.ending = false;
        if !self.table.rated() {
            let then = self.table.end_stored(then, service_time::now());
            return self.carry_out_end(ctx, then);
        }
        let game = self.id();
        let read = self.services.store.rating_changes(game);
        ctx.wait(read.into_actor(self).map(move |changes, act, ctx| {
            let rated = match changes {
                Ok(changes) => act.ratings_told(changes),
                Err(error) => {
                    tracing::error!(game, %error, "the rating changes of a game could not be read");
                    Vec::new()
                }
            };
            let mut then = act.table.end_stored(then, service_time::now());
            let before_stop = then
                .iter()
                .position(|e| matches!(e, Effect::Stop))
                .unwrap_or(then.len());
            then.splice(before_stop..before_stop, rated);
            act.carry_out_end(ctx, then);
        }));
    }

    /// Carries out what follows a stored end, then tells the lobby the end
    /// is announced: whatever the lobby starts for the players next (a
    /// tournament's next round) reaches them after this game's last line.
    fn carry_out_end(&mut self, ctx: &mut Context<Self>, then: Then) {
        let result = then.iter().find_map(over_told);
        self.carry_out(ctx, then);
        if let Some(result) = result {
            let announced = FromGame::Announced(self.id(), result);
            self.services.lobby.do_send(announced);
        }
    }

    /// The `RATED` lines of a rated game's `changes`; the lobby hears the
    /// new othello ratings (`WHO` shows them).
    fn ratings_told(&self, changes: Vec<RatingChange>) -> Then {
        if self.table.position().variant() == flipline::Variant::Othello {
            for change in &changes {
                let after = i16::try_from(rounded(change.after)).unwrap_or(i16::MAX);
                let rated = FromGame::Rated(Name::from(change.name.as_str()), after);
                self.services.lobby.do_send(rated);
            }
        }
        let changes = changes
            .into_iter()
            .map(|c| (c.name, rounded(c.before), rounded(c.after)));
        self.table.rated_changes(changes)
    }

    /// Commits an ending again after the pause for `attempt`, and so on
    /// until it is stored. Not held: the game answers meanwhile.
    fn retry_end(&mut self, ctx: &mut Context<Self>, result: GameResult, then: Then, attempt: u32) {
        self.ending = true;
        let game = self.id();
        let delay = end_retry_delay(attempt);
        if attempt % LOG_EVERY == 1 {
            tracing::warn!(
                game,
                attempt,
                "the end of game {game} could not be saved; trying again, it is announced once saved"
            );
        }
        let store = self.services.store.clone();
        let retry = async move {
            tokio::time::sleep(delay).await;
            store.commit(Write::End { game, result }).await
        };
        ctx.spawn(
            retry
                .into_actor(self)
                .map(move |stored, act, ctx| match stored {
                    Ok(_) => {
                        tracing::info!(game, attempt, "the end of game {game} is saved");
                        act.announce_end(ctx, then);
                    }
                    Err(_) => act.retry_end(ctx, result, then, attempt.saturating_add(1)),
                }),
        );
    }
}

/// The result an effect's `OVER` tells, if it tells one.
fn over_told(effect: &Effect<SessionRef>) -> Option<GameResult> {
    let Effect::Broadcast(events) = effect else {
        return None;
    };
    events.iter().find_map(|event| match *event {
        flipline::protocol::Event::Over {
            winner,
            black,
            white,
            reason,
            ..
        } => Some(GameResult {
            winner,
            black,
            white,
            reason,
        }),
        _ => None,
    })
}
