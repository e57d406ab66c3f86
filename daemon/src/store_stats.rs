//! The store writer's counts as they go: its queue, whether it refuses
//! writes, its batches and how long its commits take. The writer adds to
//! them; the metrics and the health check read them. Below both, so that the
//! store reports its commits and the metrics read them without either
//! importing the other.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use crate::durations::{Durations, Histogram};

/// Counts of the writer's work, for the log, the metrics and for measuring
/// group commit.
#[derive(Debug, Default)]
pub struct StoreStats {
    transactions: AtomicU64,
    writes: AtomicU64,
    largest_batch: AtomicU64,
    /// Writes sent and not yet taken by the writer.
    queued: AtomicU64,
    /// Whether the last batch was refused whole (a full or failing disk, a
    /// lost WAL): what `/healthz` reports.
    refusing: AtomicBool,
    /// How long each batch took to commit. One writer thread writes it.
    commit_times: Histogram,
    /// Checkpoints made beside the writer, and inside its commits.
    checkpoints_beside: AtomicU64,
    checkpoints_in_commit: AtomicU64,
}

impl StoreStats {
    /// Writes waiting for the writer now.
    pub fn queued(&self) -> u64 {
        self.queued.load(Ordering::Relaxed)
    }

    /// Whether the store refuses writes now (its last batch was refused).
    pub fn refusing(&self) -> bool {
        self.refusing.load(Ordering::Relaxed)
    }

    /// The commits' times so far.
    pub fn commit_times(&self) -> Durations {
        self.commit_times.read()
    }

    /// (transactions committed, writes in them, the largest batch).
    pub fn snapshot(&self) -> (u64, u64, u64) {
        (
            self.transactions.load(Ordering::Relaxed),
            self.writes.load(Ordering::Relaxed),
            self.largest_batch.load(Ordering::Relaxed),
        )
    }

    /// (checkpoints beside the writer, checkpoints inside its commits).
    pub fn checkpoints(&self) -> (u64, u64) {
        (
            self.checkpoints_beside.load(Ordering::Relaxed),
            self.checkpoints_in_commit.load(Ordering::Relaxed),
        )
    }

    /// A checkpoint ran beside the writer.
    pub(crate) fn checkpointed_beside(&self) {
        self.checkpoints_beside.fetch_add(1, Ordering::Relaxed);
    }

    /// A commit reached the WAL's bound and checkpointed itself.
    pub(crate) fn checkpointed_in_commit(&self) {
        self.checkpoints_in_commit.fetch_add(1, Ordering::Relaxed);
    }

    /// A write was queued for the writer.
    pub(crate) fn sent(&self) {
        self.queued.fetch_add(1, Ordering::Relaxed);
    }

    /// The writer took `writes` off its queue.
    pub(crate) fn taken(&self, writes: usize) {
        let writes = u64::try_from(writes).unwrap_or(u64::MAX);
        let _ = (self.queued).fetch_update(Ordering::Relaxed, Ordering::Relaxed, |q| {
            Some(q.saturating_sub(writes))
        });
    }

    /// Whether the writer's last batch was refused whole.
    pub(crate) fn set_refusing(&self, refusing: bool) {
        self.refusing.store(refusing, Ordering::Relaxed);
    }

    /// A transaction of `batch` writes committed.
    pub(crate) fn committed(&self, batch: usize) {
        let batch = u64::try_from(batch).unwrap_or(u64::MAX);
        self.transactions.fetch_add(1, Ordering::Relaxed);
        self.writes.fetch_add(batch, Ordering::Relaxed);
        self.largest_batch.fetch_max(batch, Ordering::Relaxed);
    }

    /// A batch (committed, retried or refused) took `took`.
    pub(crate) fn batch_took(&self, took: Duration) {
        self.commit_times.observe(took);
    }
}
