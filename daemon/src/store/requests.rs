//! What the actors ask of the store, as messages to its threads: the same
//! for every backend, so that the `Store` handle and the actors know nothing
//! of SQL. A backend is a writer thread that takes [`ToWriter`]s in order
//! and a reader thread that takes [`ToReader`]s.

use std::sync::mpsc::Receiver;

use flipline::Variant;
use flipline::protocol::GameId;
use tokio::sync::oneshot;

use super::{
    GameRecord, NameClaim, RatingChange, Registration, StoreError, StoreStats, StoredMove,
    StoredRating, Write,
};

/// Where a write's outcome goes: the rows it changed, once committed, or
/// why not. A game waiting for it is a homed task (`homed.rs`), so the
/// answer wakes it through its thread's own driver.
pub(crate) type WriteAnswer = oneshot::Sender<Result<usize, StoreError>>;

/// A write and who waits for its commit (nobody, for fire-and-forget writes).
pub(crate) struct WriteJob {
    pub(crate) write: Write,
    pub(crate) done: Option<WriteAnswer>,
}

/// The moves held for a game in play (`None`: not in play, or no moves yet;
/// an error: its stored moves do not read back).
pub(crate) type HeldAnswer = oneshot::Sender<Result<Option<Vec<StoredMove>>, String>>;

/// The games a claim took in play, with their moves (see
/// [`BatchWriter::claim`]).
pub(crate) type ClaimAnswer = oneshot::Sender<Result<Vec<GameRecord>, String>>;

/// A cluster node's login taking a name, or its logout giving it back
/// (see [`BatchWriter::claim_name`]).
pub(crate) enum NameAsk {
    Claim(String, oneshot::Sender<Result<NameClaim, String>>),
    Release(String),
}

/// What the writer answers after a batch, not a write of its own.
pub(crate) enum Ask {
    /// See [`ToWriter::Held`].
    Held(GameId, HeldAnswer),
    /// See [`ToWriter::Claim`].
    Claim(ClaimAnswer),
    /// See [`ToWriter::Name`].
    Name(NameAsk),
}

pub(crate) enum ToWriter {
    Job(WriteJob),
    /// The moves of a game in play, answered from the writer's memory once
    /// everything queued before is committed.
    Held(GameId, HeldAnswer),
    /// A cluster node claims games without a live owner (a dead node's):
    /// from then on it holds and writes them.
    Claim(ClaimAnswer),
    /// A name taken or given back in the cluster's names online, once
    /// everything queued before is committed.
    Name(NameAsk),
    /// Commit what is queued before this, then stop.
    Close,
}

/// A backend's writer, as [`run_writer`] drives it.
pub(crate) trait BatchWriter {
    /// Commits `batch` in one transaction (or each write alone if that
    /// fails) and answers every write in it; leaves it empty.
    fn commit_batch(&mut self, batch: &mut Vec<WriteJob>, stats: &StoreStats);

    /// The moves of a game in play, as the writer holds them.
    fn held_moves(&self, game: GameId) -> Result<Option<Vec<StoredMove>>, String>;

    /// Claims games that have no live owner for this node, as many as a
    /// share, and holds them; the ones in play, with their moves. Only a
    /// cluster node's store can.
    fn claim(&mut self) -> Result<Vec<GameRecord>, String> {
        Err("only a cluster node's store takes games over".into())
    }

    /// Takes `name` for this node in the cluster's names online, unless a
    /// live node holds it. Only a cluster node's store can: a single
    /// daemon's names are its lobby's alone.
    fn claim_name(&mut self, _name: &str) -> Result<NameClaim, String> {
        Err("only a cluster node's store holds names online".into())
    }

    /// Gives `name` back, if this node holds it.
    fn release_name(&mut self, _name: &str) -> Result<(), String> {
        Err("only a cluster node's store holds names online".into())
    }

    /// How soon it has work of its own to do with no request (a commit in
    /// doubt to settle); `None`: none.
    fn waiting(&self) -> Option<std::time::Duration> {
        None
    }

    /// Does that work, if it is due.
    fn tend(&mut self, _stats: &StoreStats) {}
}

/// The writer thread's loop, whatever the backend: blocks for a request,
/// drains the queue into one batch, commits it, answers; until told to
/// close.
pub(crate) fn run_writer(
    mut writer: impl BatchWriter,
    requests: &Receiver<ToWriter>,
    batch_max: usize,
    stats: &StoreStats,
) {
    // One batch buffer for the writer's life: a fresh one per batch (tens of
    // kilobytes with many games) made the allocator hand memory back to the
    // system and fault it in again, batch after batch.
    let mut batch = Vec::with_capacity(batch_max.min(4096));
    let mut asks = Vec::new();
    loop {
        let then = next_batch(requests, batch_max, &mut batch, &mut asks, writer.waiting());
        writer.tend(stats);
        stats.taken(batch.len());
        if !batch.is_empty() {
            let started = std::time::Instant::now();
            let writes = batch.len();
            writer.commit_batch(&mut batch, stats);
            let took = started.elapsed();
            stats.batch_took(took);
            warn_if_slow(took, writes);
        }
        for ask in asks.drain(..) {
            match ask {
                Ask::Held(game, answer) => drop(answer.send(writer.held_moves(game))),
                Ask::Claim(answer) => drop(answer.send(writer.claim())),
                Ask::Name(NameAsk::Claim(name, answer)) => {
                    drop(answer.send(writer.claim_name(&name)));
                }
                Ask::Name(NameAsk::Release(name)) => {
                    if let Err(error) = writer.release_name(&name) {
                        tracing::warn!(%error, %name, "a name online was not given back");
                    }
                }
            }
        }
        match then {
            Then::Go => {}
            Then::Close | Then::Gone => {
                // A last word with the server, or the work is given up.
                writer.tend(stats);
                return;
            }
        }
    }
}

/// A commit that took long held up every move in it: worth an operator's look
/// (a slow or saturated disk or database). The threshold is the daemon's
/// other watches'.
fn warn_if_slow(took: std::time::Duration, writes: usize) {
    if took >= crate::stall_watch::STALL_WARNING {
        tracing::warn!(
            ms = took.as_millis(),
            writes,
            "a commit took {} ms: every move in it waited as long",
            took.as_millis()
        );
    }
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
/// (waited for, at most `wait` if given: then none), then whatever else is
/// queued, up to `batch_max` writes; asks for held moves and claims go to
/// `asks`, to be answered after the batch.
pub(crate) fn next_batch(
    requests: &Receiver<ToWriter>,
    batch_max: usize,
    batch: &mut Vec<WriteJob>,
    asks: &mut Vec<Ask>,
    wait: Option<std::time::Duration>,
) -> Then {
    let first = match wait {
        Some(wait) => match requests.recv_timeout(wait) {
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => return Then::Go,
            received => received.map_err(|_| ()),
        },
        None => requests.recv().map_err(|_| ()),
    };
    match first {
        Ok(ToWriter::Job(job)) => batch.push(job),
        Ok(ToWriter::Held(game, answer)) => asks.push(Ask::Held(game, answer)),
        Ok(ToWriter::Claim(answer)) => asks.push(Ask::Claim(answer)),
        Ok(ToWriter::Name(ask)) => asks.push(Ask::Name(ask)),
        Ok(ToWriter::Close) => return Then::Close,
        Err(()) => return Then::Gone,
    }
    while batch.len() < batch_max {
        match requests.try_recv() {
            Ok(ToWriter::Job(job)) => batch.push(job),
            Ok(ToWriter::Held(game, answer)) => asks.push(Ask::Held(game, answer)),
            Ok(ToWriter::Claim(answer)) => asks.push(Ask::Claim(answer)),
            Ok(ToWriter::Name(ask)) => asks.push(Ask::Name(ask)),
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
    /// The node that owns a game open or in play, if any, and whether it
    /// is live (a cluster's store).
    OwnerOf {
        game: GameId,
        answer: ReadAnswer<Option<(String, bool)>>,
    },
    /// The game in play where a name is seated, if any (a cluster's store).
    SeatInPlay {
        name: String,
        answer: ReadAnswer<Option<GameId>>,
    },
    /// The live node where a name is online, if any (a cluster's store).
    NameNode {
        name: String,
        answer: ReadAnswer<Option<String>>,
    },
    /// A block of game numbers for a cluster node (see
    /// [`crate::rules::numbers`]).
    GameNumbers {
        answer: ReadAnswer<std::ops::Range<GameId>>,
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
            Read::GameNumbers { answer } => drop(answer.send(Err(why))),
            Read::OwnerOf { answer, .. } => drop(answer.send(Err(why))),
            Read::NameNode { answer, .. } => drop(answer.send(Err(why))),
            Read::SeatInPlay { answer, .. } => drop(answer.send(Err(why))),
        }
    }
}

/// Answers a write: its waiter, or the log for a write nobody waits for.
pub(crate) fn answer(job: WriteJob, result: Result<usize, StoreError>) {
    match job.done {
        Some(done) => drop(done.send(result)),
        None => {
            if let Err(error) = result {
                let write = job.write.summary();
                tracing::error!(%error, %write, "a store write failed");
            }
        }
    }
}
