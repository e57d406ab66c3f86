//! Engine work (bot moves, hints) on threads of its own, apart from the threads
//! that run connections and games, each search bounded by a deadline.

use std::time::Instant;

use actix::{Actor, Handler, Message, SyncContext};
use flipline::Game;
use flipline::engine::{self, Choice};

/// One engine thread of the pool (a `SyncArbiter` runs several).
pub struct EngineWorker;

impl Actor for EngineWorker {
    type Context = SyncContext<Self>;
}

/// Search `game` at `level` until `deadline`.
#[derive(Message)]
#[rtype(result = "Option<Choice>")]
pub struct Think {
    /// The position, side to move included.
    pub game: Game,
    /// Engine level 1..=10.
    pub level: u8,
    /// Varies the choice between equal moves.
    pub seed: u64,
    /// When the answer is due; a job that waited past it still gets a shallow move.
    pub deadline: Instant,
}

/// Draw a random start: `plies` random legal moves of `variant` the engine
/// judges balanced (`from random:N`); `None` if no game lasts that long.
#[derive(Message)]
#[rtype(result = "Option<Vec<flipline::Move>>")]
pub struct DrawStart {
    /// The game.
    pub variant: flipline::Variant,
    /// How many moves.
    pub plies: usize,
    /// Which start (the same seed, the same moves).
    pub seed: u64,
}

impl Handler<DrawStart> for EngineWorker {
    type Result = Option<Vec<flipline::Move>>;

    fn handle(&mut self, job: DrawStart, _: &mut SyncContext<Self>) -> Self::Result {
        engine::random_start::random_start(job.variant, job.plies, job.seed)
    }
}

impl Handler<Think> for EngineWorker {
    type Result = Option<Choice>;

    fn handle(&mut self, job: Think, _: &mut SyncContext<Self>) -> Option<Choice> {
        crate::metrics::engine_job_taken();
        // The level's own budget caps the deadline: a weak level answers quickly.
        let deadline = job
            .deadline
            .min(Instant::now() + engine::level(job.level).time_budget());
        let mut stop = || Instant::now() >= deadline;
        engine::choose(&job.game, job.level, job.seed, &mut stop)
    }
}
