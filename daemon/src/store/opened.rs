//! What opening a store gives the daemon, whichever the backend: the
//! handle for the actors, the threads to close at the end, and what was
//! recovered to start from.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Sender;
use std::thread::JoinHandle;

use flipline::protocol::{GameId, TourneyId};

use super::requests::{ToReader, ToWriter};
use super::tourneys::StoredTourney;
use super::writer::StoreStats;
use super::{GameRecord, Store};
use crate::rules::registered::RegisteredNames;

/// An opened store and what the daemon needs from it to start.
pub struct Opened {
    /// The handle for the actors.
    pub store: Store,
    /// The threads, to close at the end.
    pub threads: StoreThreads,
    /// Games that were being played when the daemon last stopped.
    pub playing: Vec<GameRecord>,
    /// The number for the next new game.
    pub next_game: GameId,
    /// A cluster node's first block of game numbers (it takes more as it
    /// goes); `None`: a single daemon, counting on from `next_game`.
    pub game_block: Option<std::ops::Range<GameId>>,
    /// The tournaments not over, and the last over.
    pub tourneys: Vec<StoredTourney>,
    /// The number for the next tournament.
    pub next_tourney: TourneyId,
    /// Every registered name, for the accounts.
    pub registered: RegisteredNames,
    /// A cluster node's membership, for its lease keeper.
    pub joined: Option<super::membership::Joined>,
}

/// The store's threads; [`StoreThreads::close`] stops them after the work queued.
pub struct StoreThreads {
    writes: Sender<ToWriter>,
    reads: Sender<ToReader>,
    writer: JoinHandle<()>,
    reader: JoinHandle<()>,
    stats: Arc<StoreStats>,
    /// Set by [`StoreThreads::close`] before it waits: a writer waiting on
    /// a server that is down (PostgreSQL, a commit in doubt) stops waiting.
    closing: Arc<AtomicBool>,
}

impl StoreThreads {
    /// The threads of a backend, with the ends of their queues.
    pub(super) fn new(
        writes: Sender<ToWriter>,
        reads: Sender<ToReader>,
        writer: JoinHandle<()>,
        reader: JoinHandle<()>,
        stats: Arc<StoreStats>,
        closing: Arc<AtomicBool>,
    ) -> StoreThreads {
        StoreThreads {
            writes,
            reads,
            writer,
            reader,
            stats,
            closing,
        }
    }

    /// A handle on them for the actors.
    pub(super) fn store(&self) -> Store {
        Store {
            writes: self.writes.clone(),
            reads: self.reads.clone(),
            stats: Arc::clone(&self.stats),
        }
    }

    /// Commits everything queued so far, stops both threads and waits for them.
    /// Requests queued later fail with [`super::StoreError::Closed`].
    pub fn close(self) {
        self.closing.store(true, Ordering::Relaxed);
        let _ = self.writes.send(ToWriter::Close);
        let _ = self.reads.send(ToReader::Close);
        let _ = self.writer.join();
        let _ = self.reader.join();
        let (transactions, writes, largest) = self.stats.snapshot();
        let (beside, in_commit) = self.stats.checkpoints();
        tracing::info!(
            transactions,
            writes,
            largest_batch = largest,
            checkpoints_beside = beside,
            checkpoints_in_commit = in_commit,
            "store closed: {writes} writes in {transactions} transactions"
        );
    }
}
