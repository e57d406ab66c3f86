//! What the actors ask of the store, as messages to its threads: the same
//! for every backend, so that the `Store` handle and the actors know nothing
//! of SQL. A backend is a writer thread that takes [`ToWriter`]s in order
//! and a reader thread that takes [`ToReader`]s.

use std::sync::mpsc::Receiver;

use flipline::Variant;
use flipline::protocol::GameId;
use tokio::sync::oneshot;

use super::{GameRecord, RatingChange, Registration, StoreError, StoredMove, StoredRating, Write};

/// A write's answer: the rows it changed, once committed.
pub(crate) type WriteAnswer = oneshot::Sender<Result<usize, StoreError>>;

/// A write and who waits for its commit (nobody, for fire-and-forget writes).
pub(crate) struct WriteJob {
    pub(crate) write: Write,
    pub(crate) done: Option<WriteAnswer>,
}

/// The moves held for a game in play (`None`: not in play, or no moves yet;
/// an error: its stored moves do not read back).
pub(crate) type HeldAnswer = oneshot::Sender<Result<Option<Vec<StoredMove>>, String>>;

pub(crate) enum ToWriter {
    Job(WriteJob),
    /// The moves of a game in play, answered from the writer's memory once
    /// everything queued before is committed.
    Held(GameId, HeldAnswer),
    /// Commit what is queued before this, then stop.
    Close,
}

/// What the writer does after a batch.
pub(crate) enum Then {
    Go,
    /// Told to close: every write queued before is in.
    Close,
    /// Every handle dropped without a close.
    Gone,
}

/// Fills `batch` (empty on entry) with the next writes: the first request
/// (waited for), then whatever else is queued, up to `batch_max` writes; asks
/// for held moves go to `asks`, to be answered after the batch.
pub(crate) fn next_batch(
    requests: &Receiver<ToWriter>,
    batch_max: usize,
    batch: &mut Vec<WriteJob>,
    asks: &mut Vec<(GameId, HeldAnswer)>,
) -> Then {
    match requests.recv() {
        Ok(ToWriter::Job(job)) => batch.push(job),
        Ok(ToWriter::Held(game, answer)) => asks.push((game, answer)),
        Ok(ToWriter::Close) => return Then::Close,
        Err(_) => return Then::Gone,
    }
    while batch.len() < batch_max {
        match requests.try_recv() {
            Ok(ToWriter::Job(job)) => batch.push(job),
            Ok(ToWriter::Held(game, answer)) => asks.push((game, answer)),
            Ok(ToWriter::Close) => return Then::Close,
            Err(std::sync::mpsc::TryRecvError::Empty) => break,
            Err(std::sync::mpsc::TryRecvError::Disconnected) => return Then::Gone,
        }
    }
    Then::Go
}

/// A read's answer.
pub(crate) type ReadAnswer<T> = oneshot::Sender<Result<T, StoreError>>;

/// A read, by what it asks; the reader answers it from a connection of its
/// own, never behind the writes.
pub(crate) enum Read {
    /// A game and its moves; `held` gives them if it is open or in play
    /// (from the writer's memory: see [`ToWriter::Held`]).
    Game {
        game: GameId,
        held: Option<Vec<StoredMove>>,
        answer: ReadAnswer<Option<GameRecord>>,
    },
    /// What a rated game changed, by player.
    RatingChanges {
        game: GameId,
        answer: ReadAnswer<Vec<RatingChange>>,
    },
    /// A name's ratings, in one variant or every one.
    RatingsOf {
        name: String,
        variant: Option<Variant>,
        answer: ReadAnswer<Vec<StoredRating>>,
    },
    /// The best ratings of a variant.
    Top {
        variant: Variant,
        count: u32,
        answer: ReadAnswer<Vec<StoredRating>>,
    },
    /// A registered name, in any case.
    Registration {
        name: String,
        answer: ReadAnswer<Option<Registration>>,
    },
}

/// What the reader thread is asked.
pub(crate) enum ToReader {
    Read(Read),
    /// Stop once the reads queued before are answered.
    Close,
}

impl Read {
    /// Answers the read with `why` it failed, whatever it asked.
    pub(crate) fn fail(self, why: StoreError) {
        match self {
            Read::Game { answer, .. } => drop(answer.send(Err(why))),
            Read::RatingChanges { answer, .. } => drop(answer.send(Err(why))),
            Read::RatingsOf { answer, .. } | Read::Top { answer, .. } => {
                drop(answer.send(Err(why)));
            }
            Read::Registration { answer, .. } => drop(answer.send(Err(why))),
        }
    }
}

/// Answers a write: its waiter, or the log for a write nobody waits for.
pub(crate) fn answer(job: WriteJob, result: Result<usize, StoreError>) {
    match job.done {
        Some(done) => {
            let _ = done.send(result);
        }
        None => {
            if let Err(error) = result {
                let write = job.write.summary();
                tracing::error!(%error, %write, "a store write failed");
            }
        }
    }
}
