//! A tournament's writes, in order: while one of its writes is not yet
//! stored, the commands on that tournament wait (the lobby serves
//! everything else meanwhile), so that what a command checks is what the
//! store holds. A command's write is answered as stored or not. The facts
//! the tournament goes on from (a round begun, a forfeit, a start drawn,
//! its end) are stored one at a time in the order they were decided, each
//! written again after a growing pause until it is stored, and each acted
//! on once stored: so the store never holds a later fact without an
//! earlier one, and a restart draws the tournament as it was.

use std::collections::{HashMap, VecDeque};

use actix::fut::{ActorFutureExt, WrapFuture};
use actix::{AsyncContext, Context};
use flipline::protocol::TourneyId;

use super::{Job, Lobby};
use crate::rules::table::end_retry_delay;
use crate::store::{TourneyWrite, Write};

/// The writes of each tournament not yet stored, and the commands waiting
/// for them.
#[derive(Default)]
pub(super) struct TourneyWrites {
    busy: HashMap<TourneyId, Busy>,
}

#[derive(Default)]
struct Busy {
    /// Writes sent and not answered, and pauses before a write again.
    pending: u32,
    waiting: VecDeque<Job>,
    /// Facts to store, in order, each with what follows once it is.
    facts: VecDeque<(TourneyWrite, Job)>,
    /// Whether the first of `facts` is being written (or waits to be again).
    writing_fact: bool,
}

impl TourneyWrites {
    /// Whether tournament `id` has writes not yet stored (or work waiting
    /// for them).
    pub(super) fn is_busy(&self, id: TourneyId) -> bool {
        self.busy.contains_key(&id)
    }
}

impl Lobby {
    /// Runs `job` on tournament `id` now, or once its writes are stored.
    pub(super) fn when_tourney_free(
        &mut self,
        ctx: &mut Context<Self>,
        id: TourneyId,
        job: impl FnOnce(&mut Lobby, &mut Context<Lobby>) + 'static,
    ) {
        match self.tourney_writes.busy.get_mut(&id) {
            Some(busy) => busy.waiting.push_back(Box::new(job)),
            None => job(self, ctx),
        }
    }

    /// Commits `write` for tournament `id` (its commands wait meanwhile),
    /// then `then` with whether it was stored.
    pub(super) fn commit_tourney(
        &mut self,
        ctx: &mut Context<Self>,
        id: TourneyId,
        write: TourneyWrite,
        then: impl FnOnce(&mut Lobby, &mut Context<Lobby>, bool) + 'static,
    ) {
        self.hold_tourney(id);
        let what = write.summary();
        let commit = self.services.store.commit(Write::Tourney(write));
        ctx.spawn(commit.into_actor(self).map(move |stored, act, ctx| {
            if let Err(error) = &stored {
                tracing::error!(%error, what, "a tournament's change could not be saved");
            }
            then(act, ctx, stored.is_ok());
            act.release_tourney(ctx, id);
        }));
    }

    /// Stores `write`, a fact tournament `id` goes on from, after the
    /// facts decided before it, again and again until it is stored; then
    /// `then`.
    pub(super) fn store_fact(
        &mut self,
        ctx: &mut Context<Self>,
        id: TourneyId,
        write: TourneyWrite,
        then: impl FnOnce(&mut Lobby, &mut Context<Lobby>) + 'static,
    ) {
        let busy = self.tourney_writes.busy.entry(id).or_default();
        busy.facts.push_back((write, Box::new(then)));
        self.write_next_fact(ctx, id, 1);
    }

    /// Writes the first fact of `id` not yet stored, unless one is being
    /// written.
    fn write_next_fact(&mut self, ctx: &mut Context<Self>, id: TourneyId, attempt: u32) {
        let Some(busy) = self.tourney_writes.busy.get_mut(&id) else {
            return;
        };
        if busy.writing_fact {
            return;
        }
        let Some((write, _)) = busy.facts.front() else {
            return;
        };
        let write = write.clone();
        busy.writing_fact = true;
        self.commit_tourney(ctx, id, write, move |act, ctx, stored| {
            if !stored {
                // Held over the pause: its commands and later facts wait.
                act.hold_tourney(id);
                ctx.run_later(end_retry_delay(attempt), move |act, ctx| {
                    act.fact_written(id);
                    act.write_next_fact(ctx, id, attempt.saturating_add(1));
                    act.release_tourney(ctx, id);
                });
                return;
            }
            act.fact_written(id);
            let then = (act.tourney_writes.busy.get_mut(&id))
                .and_then(|busy| busy.facts.pop_front())
                .map(|(_, then)| then);
            if let Some(then) = then {
                then(act, ctx);
            }
            act.write_next_fact(ctx, id, 1);
        });
    }

    fn fact_written(&mut self, id: TourneyId) {
        if let Some(busy) = self.tourney_writes.busy.get_mut(&id) {
            busy.writing_fact = false;
        }
    }

    fn hold_tourney(&mut self, id: TourneyId) {
        self.tourney_writes.busy.entry(id).or_default().pending += 1;
    }

    /// One write (or pause) of `id` is over: once none is left, the
    /// commands that waited run, in order, until one writes again.
    fn release_tourney(&mut self, ctx: &mut Context<Self>, id: TourneyId) {
        if let Some(busy) = self.tourney_writes.busy.get_mut(&id) {
            busy.pending = busy.pending.saturating_sub(1);
        }
        loop {
            let Some(busy) = self.tourney_writes.busy.get_mut(&id) else {
                return;
            };
            if busy.pending > 0 {
                return;
            }
            match busy.waiting.pop_front() {
                Some(job) => job(self, ctx),
                None if busy.facts.is_empty() => {
                    self.tourney_writes.busy.remove(&id);
                    return;
                }
                None => return,
            }
        }
    }
}
