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
mod records;
pub mod schema;
#[cfg(test)]
pub(crate) mod test_support;
#[cfg(test)]
mod tests;

use std::fs::File;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::thread::JoinHandle;

use flipline::Move;
use flipline::protocol::GameId;
use rusqlite::{Connection, OpenFlags};
use tokio::sync::oneshot;

pub use records::{GameRecord, Status, StoredMove, Write};

use crate::config::StoreConfig;
use move_log::MoveLog;
use schema::{describe, refuse};

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

/// A write's answer: the rows it changed, once committed.
type WriteAnswer = oneshot::Sender<Result<usize, StoreError>>;

/// A write and who waits for its commit (nobody, for fire-and-forget writes).
struct WriteJob {
    write: Write,
    done: Option<WriteAnswer>,
}

/// The moves held for a game in play (`None`: not in play, or no moves yet).
type HeldAnswer = oneshot::Sender<Option<Vec<StoredMove>>>;

enum ToWriter {
    Job(WriteJob),
    /// The moves of a game in play, answered from the writer's memory once
    /// everything queued before is committed.
    Held(GameId, HeldAnswer),
    /// Commit what is queued before this, then stop.
    Close,
}

type ReadJob = Box<dyn FnOnce(&Connection) + Send>;

enum ToReader {
    Job(ReadJob),
    Close,
}

/// Counts of the writer's work, for the log and for measuring group commit.
#[derive(Debug, Default)]
pub struct StoreStats {
    transactions: AtomicU64,
    writes: AtomicU64,
    largest_batch: AtomicU64,
}

impl StoreStats {
    /// (transactions committed, writes in them, the largest batch).
    pub fn snapshot(&self) -> (u64, u64, u64) {
        (
            self.transactions.load(Ordering::Relaxed),
            self.writes.load(Ordering::Relaxed),
            self.largest_batch.load(Ordering::Relaxed),
        )
    }

    fn committed(&self, batch: usize) {
        let batch = u64::try_from(batch).unwrap_or(u64::MAX);
        self.transactions.fetch_add(1, Ordering::Relaxed);
        self.writes.fetch_add(batch, Ordering::Relaxed);
        self.largest_batch.fetch_max(batch, Ordering::Relaxed);
    }
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

fn open_reader(path: &Path) -> Result<Connection, StoreError> {
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(path, flags).map_err(|e| refuse(path, describe(&e)))?;
    conn.busy_timeout(std::time::Duration::from_secs(5))
        .map_err(|e| refuse(path, describe(&e)))?;
    Ok(conn)
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

/// The writer: blocks for a request, drains the queue into one batch, commits
/// it, answers; until told to close.
fn run_writer(
    mut writer: Writer,
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
        let then = next_batch(requests, batch_max, &mut batch, &mut asks);
        if !batch.is_empty() {
            let started = std::time::Instant::now();
            let writes = batch.len();
            writer.commit_batch(&mut batch, stats);
            warn_if_slow(started.elapsed(), writes);
        }
        for (game, answer) in asks.drain(..) {
            let _ = answer.send(writer.log.held_moves(game));
        }
        match then {
            Then::Go => {}
            Then::Close => return writer.release_game_numbers(),
            Then::Gone => return,
        }
    }
}

/// What the writer does after a batch.
enum Then {
    Go,
    /// Told to close: every write is in, numbers reserved ahead can go back.
    Close,
    /// Every handle dropped without a close: stop, keeping the reservation.
    Gone,
}

/// A commit that took long held up every move in it: worth an operator's look
/// (a slow or saturated disk). The threshold is the daemon's other watches'.
fn warn_if_slow(took: std::time::Duration, writes: usize) {
    if took >= crate::watch::STALL_WARNING {
        tracing::warn!(
            ms = took.as_millis(),
            writes,
            "a commit took {} ms: every move in it waited as long",
            took.as_millis()
        );
    }
}

/// Fills `batch` (empty on entry) with the next writes: the first request
/// (waited for), then whatever else is queued, up to `batch_max` writes; asks
/// for held moves go to `asks`, to be answered after the batch.
fn next_batch(
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

/// The read-write connection and the move log that follows its transactions.
struct Writer {
    conn: Connection,
    log: MoveLog,
    /// A write failed: it may have been a game's creation, so the numbers
    /// reserved are kept at the close.
    failed: bool,
}

impl Writer {
    /// Commits `batch` in one transaction; if that fails, each write alone, so
    /// that a failing write does not take the others with it.
    /// Leaves `batch` empty.
    fn commit_batch(&mut self, batch: &mut Vec<WriteJob>, stats: &StoreStats) {
        match self.run_transaction(batch.iter().map(|job| &job.write)) {
            Ok(counts) => {
                stats.committed(batch.len());
                for (job, count) in batch.drain(..).zip(counts) {
                    answer(job, Ok(count));
                }
            }
            Err(error) if batch.len() == 1 => {
                self.failed = true;
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
        let result = self.run_transaction(std::iter::once(&job.write));
        if result.is_ok() {
            stats.committed(1);
        } else {
            self.failed = true;
        }
        let result = result.map(|counts| counts.into_iter().sum());
        answer(job, result.map_err(failed));
    }

    /// At a close: the next start numbers games on from the last one stored
    /// rather than past the block reserved ahead.
    fn release_game_numbers(&self) {
        if self.failed {
            return;
        }
        if let Err(error) = records::release_game_numbers(&self.conn) {
            tracing::warn!(%error, "cannot give back the game numbers reserved ahead");
        }
    }

    /// Runs `writes` and the log's upkeep in one transaction; the log keeps
    /// their changes only if it commits.
    fn run_transaction<'a>(
        &mut self,
        writes: impl Iterator<Item = &'a Write>,
    ) -> rusqlite::Result<Vec<usize>> {
        self.log.begin();
        let result = transaction(&mut self.conn, &mut self.log, writes);
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
) -> rusqlite::Result<Vec<usize>> {
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    let counts = writes
        .map(|write| write.apply(&tx, log))
        .collect::<rusqlite::Result<Vec<usize>>>()?;
    log.maintain(&tx)?;
    tx.commit()?;
    Ok(counts)
}

fn answer(job: WriteJob, result: Result<usize, StoreError>) {
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

fn run_reader(conn: &Connection, requests: &Receiver<ToReader>) {
    while let Ok(ToReader::Job(job)) = requests.recv() {
        job(conn);
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
