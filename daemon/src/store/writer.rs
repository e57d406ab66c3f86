//! The writer thread: it owns the only read-write connection and commits in
//! batches. It waits for the first request, takes whatever else is queued (up
//! to `batch_max`), runs it all in one transaction and answers each write only
//! once that commits: group commit, so a thousand games moving at once cost a
//! few disk syncs, not a thousand. A batch that fails is retried one write per
//! transaction, so that one bad write fails alone and the others are kept;
//! one that fails for lack of space is tried again after a checkpoint (see
//! `checkpoint`). Before each batch it checks that the WAL is still the
//! file SQLite writes (see `wal_watch`); once it is not, every write fails.

use rusqlite::Connection;

use super::checkpoint;
use super::checkpointer::Checkpointer;
use super::move_log::MoveLog;
use super::requests::{BatchWriter, WriteJob, answer};
use super::schema::describe;
use super::wal_watch::{Wal, WalWatch};
use super::{Faults, StoreError, Write, failed};
// Re-exported for the opening, which starts the writer with them.
pub(super) use crate::store_stats::StoreStats;

/// The read-write connection and the move log that follows its transactions.
pub(super) struct Writer {
    /// The thread that checkpoints beside the writer (see `checkpointer`).
    /// Declared first so that it stops, and closes its connection, before
    /// `conn` closes.
    pub(super) beside: Option<Checkpointer>,
    pub(super) conn: Connection,
    pub(super) log: MoveLog,
    /// Faults switched on by a failure test.
    pub(super) faults: Option<Faults>,
    /// Writes are failing for lack of space (logged once, when it began).
    pub(super) disk_full: bool,
    /// The WAL file, looked at before each batch.
    pub(super) wal: WalWatch,
    /// Days in a rating period, for the ratings a rated end changes.
    pub(super) rating_period_days: u32,
}

impl BatchWriter for Writer {
    fn commit_batch(&mut self, batch: &mut Vec<WriteJob>, stats: &StoreStats) {
        Writer::commit_batch(self, batch, stats);
    }

    fn held_moves(
        &self,
        game: flipline::protocol::GameId,
    ) -> Result<Option<Vec<super::StoredMove>>, String> {
        self.log.moves_to_tell(game)
    }
}

impl Writer {
    /// Commits `batch` in one transaction; if that fails, each write alone, so
    /// that a failing write does not take the others with it. A full disk
    /// fails every write alike: they are answered together instead.
    /// Leaves `batch` empty.
    pub(super) fn commit_batch(&mut self, batch: &mut Vec<WriteJob>, stats: &StoreStats) {
        if !self.wal_intact() {
            stats.set_refusing(true);
            let refusal = self.wal.refusal();
            batch
                .drain(..)
                .for_each(|job| answer(job, Err(refusal.clone())));
            return;
        }
        match self.run_with_room(batch.iter().map(|job| &job.write)) {
            Ok(counts) => {
                stats.set_refusing(false);
                stats.committed(batch.len());
                for (job, count) in batch.drain(..).zip(counts) {
                    answer(job, Ok(count));
                }
            }
            Err(error) if batch.len() == 1 || checkpoint::is_full(&error) => {
                stats.set_refusing(true);
                let why = describe(&error);
                batch
                    .drain(..)
                    .for_each(|job| answer(job, Err(StoreError::Failed(why.clone()))));
            }
            Err(_) => batch
                .drain(..)
                .for_each(|job| self.commit_alone(job, stats)),
        }
    }

    fn commit_alone(&mut self, job: WriteJob, stats: &StoreStats) {
        let result = self.run_with_room(std::iter::once(&job.write));
        if result.is_ok() {
            stats.committed(1);
        }
        let result = result.map(|counts| counts.into_iter().sum());
        answer(job, result.map_err(failed));
    }

    /// Runs `writes` in one transaction; if it fails for lack of space,
    /// checkpoints (see `checkpoint::make_room`) and tries once more, so
    /// that writes go on by themselves as soon as there is room.
    fn run_with_room<'a>(
        &mut self,
        writes: impl Iterator<Item = &'a Write> + Clone,
    ) -> rusqlite::Result<Vec<usize>> {
        let first = self.run_transaction(writes.clone());
        let result = match first {
            Err(error) if checkpoint::is_full(&error) => {
                if checkpoint::make_room(&self.conn) {
                    self.run_transaction(writes)
                } else {
                    Err(error)
                }
            }
            other => other,
        };
        self.note_room(&result);
        result
    }

    /// Logs once when writes start failing for lack of space, and once when
    /// they succeed again (not at every batch of a full disk).
    fn note_room<T>(&mut self, result: &rusqlite::Result<T>) {
        match result {
            Err(error) if checkpoint::is_full(error) && !self.disk_full => {
                self.disk_full = true;
                tracing::error!(
                    error = %describe(error),
                    "the store's disk is full: every write fails (moves are answered \
                     ERR 503) until there is room again; they go on by themselves then"
                );
            }
            Ok(_) if self.disk_full => {
                self.disk_full = false;
                tracing::warn!("the store's disk has room again: writes succeed");
            }
            _ => {}
        }
    }

    /// Whether the WAL is still the file SQLite writes (see `wal_watch`).
    /// When it is found gone, what was committed is copied into the
    /// database file at once, so that a crash loses none of it.
    fn wal_intact(&mut self) -> bool {
        let what = match self.wal.check() {
            Wal::Intact => return true,
            Wal::StillLost => return false,
            Wal::Lost(what) => what,
        };
        let wal = self.wal.path().display().to_string();
        let store = self.conn.path().unwrap_or("the store").to_string();
        let saved = match checkpoint::save_all(&self.conn) {
            Ok(()) => "every move acknowledged so far was copied into the database file".into(),
            Err(why) => format!(
                "the moves in it could not be copied into the database file ({why}): \
                 stop flipd cleanly (not kill -9), its close copies them"
            ),
        };
        tracing::error!(
            wal,
            "the store's WAL {wal} {what} while flipd was running: every write fails from \
             now on (moves are answered ERR 503), {saved}. Stop flipd, check the store \
             (sqlite3 {store} 'PRAGMA integrity_check') and restore it from a backup if \
             it is damaged; never remove the files beside a running daemon's store"
        );
        false
    }

    /// Runs `writes` and the log's upkeep in one transaction; the log keeps
    /// their changes only if it commits.
    pub(super) fn run_transaction<'a>(
        &mut self,
        writes: impl Iterator<Item = &'a Write>,
    ) -> rusqlite::Result<Vec<usize>> {
        super::faults::before_write(self.faults.as_ref())?;
        self.log.begin();
        let period = self.rating_period_days;
        let result = transaction(&mut self.conn, &mut self.log, writes, period);
        match result {
            Ok(_) => self.log.commit(),
            Err(_) => self.log.rollback(),
        }
        result
    }
}

fn transaction<'a>(
    conn: &mut Connection,
    log: &mut MoveLog,
    writes: impl Iterator<Item = &'a Write>,
    rating_period_days: u32,
) -> rusqlite::Result<Vec<usize>> {
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    let counts = writes
        .map(|write| write.apply(&tx, log, rating_period_days))
        .collect::<rusqlite::Result<Vec<usize>>>()?;
    log.maintain(&tx)?;
    tx.commit()?;
    Ok(counts)
}
