//! The game store: SQLite (WAL mode) in one file, written by one thread that
//! commits in batches, read by another.
//!
//! rusqlite blocks, so no actor thread ever calls it. Actors hold a [`Store`], a
//! cheap handle that queues requests to the two store threads and hands back a
//! future for each answer:
//! - The writer thread owns the only read-write connection. It blocks for the
//!   first request, takes whatever else is queued (up to `batch_max`), runs them
//!   all in one transaction, commits, and only then answers each: group commit,
//!   so a thousand games moving at once cost a few disk syncs, not a thousand.
//!   Should the batch fail, its writes are retried one transaction each, so one
//!   bad write fails alone.
//! - The reader thread owns a read-only connection (WAL lets it read while the
//!   writer writes) for `HISTORY` and accounts.
//!
//! Requests are answered in the order they were queued, and a write queued after
//! another is committed with it or after it: a game's moves reach the file in
//! the order they were played.
//!
//! [`Store::open`] checks the file (see [`schema`]), finds the games to recover,
//! and starts the threads; [`StoreThreads::close`] lets them finish what is
//! queued and stops them. [`Archive`] reads a store without a daemon (`flip
//! export`).

mod move_log;
mod reader;
mod records;
pub mod schema;
#[cfg(test)]
pub(crate) mod test_support;
#[cfg(test)]
mod tests;
mod writer;

use std::fs::File;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::mpsc::{Sender, channel};
use std::thread::JoinHandle;

use flipline::Move;
use flipline::protocol::GameId;
use rusqlite::Connection;
use tokio::sync::oneshot;

pub use records::{GameRecord, Status, StoredMove, Write};
pub use writer::StoreStats;

use crate::config::StoreConfig;
use move_log::MoveLog;
use reader::{ReadJob, ToReader, open_reader, run_reader};
use schema::{describe, refuse};
use writer::{ToWriter, WriteJob, Writer, run_writer};

/// Why the store could not do something.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StoreError {
    /// The file cannot be used as the store (at start, or by `flip export`).
    Open {
        /// The file.
        path: PathBuf,
        /// Why, in words.
        why: String,
    },
    /// A statement failed: a full disk, an I/O error, a broken constraint.
    Failed(String),
    /// The store's threads have stopped (the daemon is shutting down).
    Closed,
}

impl std::fmt::Display for StoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StoreError::Open { path, why } => {
                write!(f, "cannot use the store {}: {why}", path.display())
            }
            StoreError::Failed(why) => write!(f, "the store failed: {why}"),
            StoreError::Closed => f.write_str("the store is closed"),
        }
    }
}

impl std::error::Error for StoreError {}

fn failed(error: rusqlite::Error) -> StoreError {
    StoreError::Failed(describe(&error))
}

/// The handle actors use: cloned freely, never blocks.
#[derive(Clone)]
pub struct Store {
    writes: Sender<ToWriter>,
    reads: Sender<ToReader>,
    stats: Arc<StoreStats>,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store").field("stats", &self.stats).finish()
    }
}

/// The store's threads; [`StoreThreads::close`] stops them after the work queued.
pub struct StoreThreads {
    writes: Sender<ToWriter>,
    reads: Sender<ToReader>,
    writer: JoinHandle<()>,
    reader: JoinHandle<()>,
    stats: Arc<StoreStats>,
    /// Held for the daemon's life: a second daemon on the same file is refused.
    _lock: File,
}

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
}

impl Store {
    /// Opens (or creates) the store of `config`, checks and migrates it, cancels
    /// games left open, loads the games in play and starts the threads.
    pub fn open(config: &StoreConfig) -> Result<Opened, StoreError> {
        let path = config.path.as_path();
        let lock = lock_file(path)?;
        let mut conn = Connection::open(path).map_err(|e| refuse(path, describe(&e)))?;
        schema::prepare_writer(&mut conn, config)?;
        let startup = |e: rusqlite::Error| refuse(path, describe(&e));
        let log = MoveLog::load(&conn).map_err(startup)?;
        let mut writer = Writer {
            conn,
            log,
            failed: false,
        };
        let open = records::open_games(&writer.conn).map_err(startup)?;
        if !open.is_empty() {
            let cancels: Vec<Write> = open.iter().map(|&game| Write::Cancel { game }).collect();
            writer.run_transaction(cancels.iter()).map_err(startup)?;
            tracing::info!(
                cancelled = open.len(),
                "cancelled games left open at the last stop"
            );
        }
        // The log was read once, into the writer's memory: recovery takes
        // the moves from there.
        let held = |_: &Connection| Ok(writer.log.all_held());
        let playing = records::playing(&writer.conn, held).map_err(startup)?;
        let next_game = records::next_game_id(&writer.conn).map_err(startup)?;
        let reader = open_reader(path)?;
        let threads = StoreThreads::start(writer, reader, config.batch_max, lock)?;
        let store = Store {
            writes: threads.writes.clone(),
            reads: threads.reads.clone(),
            stats: Arc::clone(&threads.stats),
        };
        Ok(Opened {
            store,
            threads,
            playing,
            next_game,
        })
    }

    /// Queues a write nobody waits for; a failure is logged.
    pub fn write(&self, write: Write) {
        let job = WriteJob { write, done: None };
        if self.writes.send(ToWriter::Job(job)).is_err() {
            tracing::warn!("a write after the store closed was dropped");
        }
    }

    /// Queues a write; the future resolves with the rows it changed once it is
    /// committed, or with why it was not.
    pub fn commit(
        &self,
        write: Write,
    ) -> impl Future<Output = Result<usize, StoreError>> + Send + 'static + use<> {
        let (tx, rx) = oneshot::channel();
        let job = WriteJob {
            write,
            done: Some(tx),
        };
        let sent = self.writes.send(ToWriter::Job(job));
        async move {
            sent.map_err(|_| StoreError::Closed)?;
            rx.await.map_err(|_| StoreError::Closed)?
        }
    }

    /// Appends a move; resolves once it is committed.
    pub fn append_move(
        &self,
        game: GameId,
        ply: u32,
        mv: Move,
        ms: u64,
    ) -> impl Future<Output = Result<(), StoreError>> + Send + 'static + use<> {
        let commit = self.commit(Write::Move { game, ply, mv, ms });
        async move { commit.await.map(|_| ()) }
    }

    /// Runs `query` on the reader thread.
    pub fn read<T, F>(&self, query: F) -> impl Future<Output = Result<T, StoreError>> + use<T, F>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> rusqlite::Result<T> + Send + 'static,
    {
        let (tx, rx) = oneshot::channel();
        let job: ReadJob = Box::new(move |conn| {
            let _ = tx.send(query(conn).map_err(failed));
        });
        let sent = self.reads.send(ToReader::Job(job));
        async move {
            sent.map_err(|_| StoreError::Closed)?;
            rx.await.map_err(|_| StoreError::Closed)?
        }
    }

    /// A game with its moves, as committed. The moves of a game in play come
    /// from the writer's memory (the log it would otherwise read has no
    /// index), the rest from the reader.
    pub fn history(
        &self,
        game: GameId,
    ) -> impl Future<Output = Result<Option<GameRecord>, StoreError>> + use<> {
        let (tx, rx) = oneshot::channel();
        let asked = self.writes.send(ToWriter::Held(game, tx));
        let store = self.clone();
        async move {
            asked.map_err(|_| StoreError::Closed)?;
            let held = rx.await.map_err(|_| StoreError::Closed)?;
            let in_play = move |_: &Connection| Ok(held.unwrap_or_default());
            let read = store.read(move |conn| records::game_with(conn, game, in_play));
            read.await
        }
    }

    /// The password hash a name is registered with, if it is.
    pub fn password_hash(
        &self,
        name: String,
    ) -> impl Future<Output = Result<Option<String>, StoreError>> + use<> {
        self.read(move |conn| records::password_hash(conn, &name))
    }

    /// The writer's counts so far.
    pub fn stats(&self) -> (u64, u64, u64) {
        self.stats.snapshot()
    }
}

/// `<store>.lock`, locked for as long as the returned file is open: two daemons
/// writing one store would hand out the same game numbers.
fn lock_file(path: &Path) -> Result<File, StoreError> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .map_err(|e| refuse(path, format!("cannot create {}: {e}", dir.display())))?;
    }
    let mut name = path.as_os_str().to_owned();
    name.push(".lock");
    let lock_path = PathBuf::from(name);
    let file = File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .map_err(|e| refuse(path, format!("cannot open {}: {e}", lock_path.display())))?;
    match file.try_lock() {
        Ok(()) => Ok(file),
        Err(std::fs::TryLockError::WouldBlock) => Err(refuse(
            path,
            "in use by another flipd (its .lock file is held)",
        )),
        Err(std::fs::TryLockError::Error(e)) => Err(refuse(
            path,
            format!("cannot lock {}: {e}", lock_path.display()),
        )),
    }
}

impl StoreThreads {
    fn start(
        writer: Writer,
        reader_conn: Connection,
        batch_max: usize,
        lock: File,
    ) -> Result<StoreThreads, StoreError> {
        let stats = Arc::new(StoreStats::default());
        let (writes, write_rx) = channel();
        let (reads, read_rx) = channel();
        let writer_stats = Arc::clone(&stats);
        let spawn_error = |e: std::io::Error| StoreError::Failed(format!("cannot start: {e}"));
        let writer = std::thread::Builder::new()
            .name("store-writer".into())
            .spawn(move || run_writer(writer, &write_rx, batch_max, &writer_stats))
            .map_err(spawn_error)?;
        let reader = std::thread::Builder::new()
            .name("store-reader".into())
            .spawn(move || run_reader(&reader_conn, &read_rx))
            .map_err(spawn_error)?;
        Ok(StoreThreads {
            writes,
            reads,
            writer,
            reader,
            stats,
            _lock: lock,
        })
    }

    /// Commits everything queued so far, stops both threads and waits for them.
    /// Requests queued later fail with [`StoreError::Closed`].
    pub fn close(self) {
        let _ = self.writes.send(ToWriter::Close);
        let _ = self.reads.send(ToReader::Close);
        let _ = self.writer.join();
        let _ = self.reader.join();
        let (transactions, writes, largest) = self.stats.snapshot();
        tracing::info!(
            transactions,
            writes,
            largest_batch = largest,
            "store closed: {writes} writes in {transactions} transactions"
        );
    }
}

/// A store opened read-only, without a daemon: for `flip export`.
pub struct Archive {
    conn: Connection,
}

impl Archive {
    /// Opens the store at `path` read-only; refuses anything that is not a
    /// flipline store of this build's schema.
    pub fn open(path: &Path) -> Result<Archive, StoreError> {
        if !path.exists() {
            return Err(refuse(path, "no such file"));
        }
        let conn = open_reader(path)?;
        schema::check_reader(&conn, path)?;
        Ok(Archive { conn })
    }

    /// Finished games, by number; only `player`'s if given, only those ended on
    /// or after `since` (`YYYY-MM-DD` or a full UTC time) if given.
    pub fn finished_games(
        &self,
        player: Option<&str>,
        since: Option<&str>,
    ) -> Result<Vec<GameRecord>, StoreError> {
        records::finished(&self.conn, player, since).map_err(failed)
    }

    /// One game, in whatever state.
    pub fn game(&self, id: GameId) -> Result<Option<GameRecord>, StoreError> {
        records::game(&self.conn, id).map_err(failed)
    }

    /// Games being played, by number.
    pub fn playing_games(&self) -> Result<Vec<GameRecord>, StoreError> {
        records::playing(&self.conn, move_log::logged_moves).map_err(failed)
    }
}
