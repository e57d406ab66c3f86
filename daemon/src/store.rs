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

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::config::Synchronous;
    use flipline::Variant;
    use flipline::protocol::{EndReason, GameResult};
    use std::sync::atomic::AtomicUsize;

    /// A store path in a fresh directory of its own, removed when dropped.
    pub(crate) struct TempDb(PathBuf);

    impl std::ops::Deref for TempDb {
        type Target = PathBuf;

        fn deref(&self) -> &PathBuf {
            &self.0
        }
    }

    impl AsRef<Path> for TempDb {
        fn as_ref(&self) -> &Path {
            &self.0
        }
    }

    impl Drop for TempDb {
        fn drop(&mut self) {
            if let Some(dir) = self.0.parent() {
                let _ = std::fs::remove_dir_all(dir);
            }
        }
    }

    pub(crate) fn temp_path(what: &str) -> TempDb {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir()
            .join("flipd-store-tests")
            .join(format!("{}-{n}-{what}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        TempDb(dir.join("flipline.db"))
    }

    pub(crate) fn config(path: &Path) -> StoreConfig {
        StoreConfig {
            path: path.to_path_buf(),
            synchronous: Synchronous::Normal,
            batch_max: 64,
            cache_mb: 8,
        }
    }

    pub(crate) fn new_game(id: GameId, white: Option<&str>, start: &str) -> Write {
        Write::NewGame {
            id,
            variant: Variant::Othello,
            black: Some("ann".into()),
            white: white.map(str::to_string),
            clock: flipline::protocol::ClockSpec::parse("5+3").ok(),
            status: if white.is_some() {
                Status::Playing
            } else {
                Status::Open
            },
            start: flipline::notation::parse_transcript(start).unwrap(),
        }
    }

    pub(crate) fn block_on<F: Future>(future: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap()
            .block_on(future)
    }

    #[test]
    fn the_writer_cache_is_set_in_mebibytes() {
        let path = temp_path("cache");
        let conn = writer(&path).conn;
        schema::set_cache(&conn, 3).unwrap();
        let kib: i64 = conn
            .pragma_query_value(None, "cache_size", |r| r.get(0))
            .unwrap();
        assert_eq!(kib, -3072);
    }

    /// The writer of a new store at `path`.
    fn writer(path: &Path) -> Writer {
        let mut conn = Connection::open(path).unwrap();
        schema::prepare_writer(&mut conn, &config(path)).unwrap();
        let log = MoveLog::load(&conn).unwrap();
        Writer {
            conn,
            log,
            failed: false,
        }
    }

    fn job(write: Write) -> (WriteJob, oneshot::Receiver<Result<usize, StoreError>>) {
        let (tx, rx) = oneshot::channel();
        (
            WriteJob {
                write,
                done: Some(tx),
            },
            rx,
        )
    }

    #[test]
    fn a_store_keeps_games_across_restarts_and_cancels_open_ones() {
        let path = temp_path("restart");
        let opened = Store::open(&config(&path)).unwrap();
        assert_eq!((opened.playing.len(), opened.next_game), (0, 1));
        let store = opened.store;
        store.write(new_game(1, Some("bot:3"), "f5d6"));
        store.write(new_game(2, None, ""));
        block_on(store.append_move(1, 3, "c3".parse().unwrap(), 1500)).unwrap();
        opened.threads.close();
        assert!(block_on(store.append_move(1, 4, Move::Pass, 1)).is_err());

        let opened = Store::open(&config(&path)).unwrap();
        assert_eq!(opened.next_game, 3);
        let [game] = opened.playing.as_slice() else {
            panic!("{:?}", opened.playing)
        };
        assert_eq!(game.id, 1);
        assert_eq!(game.white.as_deref(), Some("bot:3"));
        assert_eq!(game.clock.map(|c| c.to_string()).as_deref(), Some("5+3"));
        let ms: Vec<Option<u64>> = game.moves.iter().map(|m| m.ms).collect();
        assert_eq!(ms, [None, None, Some(1500)]);
        assert_eq!(
            flipline::notation::transcript_string(&game.transcript()),
            "f5d6c3"
        );
        let open = block_on(opened.store.history(2)).unwrap().unwrap();
        assert_eq!(open.status, Status::Cancelled);
        assert!(open.ended_at.is_some());
        assert_eq!(block_on(opened.store.history(9)).unwrap(), None);
        opened.threads.close();
    }

    #[test]
    fn writes_queued_together_are_committed_in_one_transaction() {
        let path = temp_path("batch");
        let conn = writer(&path);
        let (requests, queue) = channel();
        let mut answers = Vec::new();
        let (first, _) = job(new_game(1, Some("bob"), ""));
        requests.send(ToWriter::Job(first)).unwrap();
        for ply in 1..=40 {
            let mv = if ply % 2 == 1 { "f5" } else { "d6" };
            let (job, answer) = job(Write::Move {
                game: 1,
                ply,
                mv: if ply <= 2 {
                    mv.parse().unwrap()
                } else {
                    Move::Pass
                },
                ms: 10,
            });
            requests.send(ToWriter::Job(job)).unwrap();
            answers.push(answer);
        }
        requests.send(ToWriter::Close).unwrap();
        let stats = StoreStats::default();
        run_writer(conn, &queue, 1000, &stats);
        assert_eq!(stats.snapshot(), (1, 41, 41));
        for mut answer in answers {
            assert_eq!(answer.try_recv().unwrap(), Ok(1));
        }
    }

    #[test]
    fn a_failing_write_fails_alone_and_the_batch_bound_holds() {
        let path = temp_path("alone");
        let mut conn = writer(&path);
        let stats = StoreStats::default();
        let (create, _) = job(new_game(1, Some("bob"), ""));
        let (good, mut good_answer) = job(Write::Move {
            game: 1,
            ply: 1,
            mv: "f5".parse().unwrap(),
            ms: 5,
        });
        // No game 7: the move log refuses the move.
        let (bad, mut bad_answer) = job(Write::Move {
            game: 7,
            ply: 1,
            mv: "f5".parse().unwrap(),
            ms: 5,
        });
        let mut batch = vec![create, bad, good];
        conn.commit_batch(&mut batch, &stats);
        assert!(batch.is_empty(), "every job answered");
        assert_eq!(good_answer.try_recv().unwrap(), Ok(1));
        assert!(matches!(
            bad_answer.try_recv().unwrap(),
            Err(StoreError::Failed(_))
        ));
        assert_eq!(stats.snapshot().0, 2, "the two good writes, each alone");
        let (requests, queue) = channel();
        for _ in 0..5 {
            requests
                .send(ToWriter::Job(job(Write::Cancel { game: 1 }).0))
                .unwrap();
        }
        let mut batch = Vec::new();
        let then = next_batch(&queue, 3, &mut batch, &mut Vec::new());
        assert!(matches!(then, Then::Go));
        assert_eq!(batch.len(), 3);
        batch.clear();
        requests.send(ToWriter::Close).unwrap();
        let then = next_batch(&queue, 3, &mut batch, &mut Vec::new());
        assert!(matches!(then, Then::Close), "told to close");
        assert_eq!(batch.len(), 2);
        batch.clear();
        drop(requests);
        let then = next_batch(&queue, 3, &mut batch, &mut Vec::new());
        assert!(matches!(then, Then::Gone), "every handle dropped");
    }

    #[test]
    fn a_full_disk_refuses_writes_and_the_store_goes_on_after() {
        let path = temp_path("full");
        let mut conn = writer(&path);
        let stats = StoreStats::default();
        let (create, _) = job(new_game(1, Some("bob"), ""));
        conn.commit_batch(&mut vec![create], &stats);
        let pages: i64 = (conn.conn)
            .pragma_query_value(None, "page_count", |r| r.get(0))
            .unwrap();
        (conn.conn)
            .pragma_update(None, "max_page_count", pages)
            .unwrap();
        let mut refused = None;
        for ply in 1..=5000 {
            let (write, mut answer) = job(Write::Register {
                name: format!("player{ply}"),
                hash: "x".repeat(200),
            });
            conn.commit_batch(&mut vec![write], &stats);
            if let Err(e) = answer.try_recv().unwrap() {
                refused = Some(e);
                break;
            }
        }
        let refused = refused.expect("the page limit was never reached");
        assert!(refused.to_string().contains("disk is full"), "{refused}");
        (conn.conn)
            .pragma_update(None, "max_page_count", pages * 100)
            .unwrap();
        let (write, mut answer) = job(Write::Register {
            name: "later".into(),
            hash: "x".into(),
        });
        conn.commit_batch(&mut vec![write], &stats);
        assert_eq!(answer.try_recv().unwrap(), Ok(1));
    }

    #[test]
    fn files_that_are_not_a_store_are_refused_by_name_and_left_alone() {
        let garbage = temp_path("garbage");
        let bytes: Vec<u8> = (0..8192u32).map(|i| (i * 7 % 251) as u8).collect();
        std::fs::write(&garbage, &bytes).unwrap();
        let foreign = temp_path("foreign");
        Connection::open(&foreign)
            .unwrap()
            .execute_batch("CREATE TABLE accounts (id INTEGER); INSERT INTO accounts VALUES (1);")
            .unwrap();
        let newer = temp_path("newer");
        let conn = Connection::open(&newer).unwrap();
        conn.pragma_update(None, "application_id", schema::APPLICATION_ID)
            .unwrap();
        conn.pragma_update(None, "user_version", 99).unwrap();
        conn.execute_batch("CREATE TABLE t (x);").unwrap();
        drop(conn);
        for (path, why) in [
            (&garbage, "not a SQLite database"),
            (&foreign, "another program"),
            (&newer, "newer flipd"),
        ] {
            let before = std::fs::read(path).unwrap();
            let error = Store::open(&config(path)).err().unwrap();
            let text = error.to_string();
            assert!(text.contains(&path.display().to_string()), "{text}");
            assert!(text.contains(why), "{text}");
            assert_eq!(
                std::fs::read(path).unwrap(),
                before,
                "{} changed",
                path.display()
            );
            let error = Archive::open(path).err().unwrap();
            assert!(error.to_string().contains(why), "{error}");
        }
    }

    #[test]
    fn a_damaged_store_is_refused_at_start() {
        let path = temp_path("damaged");
        let opened = Store::open(&config(&path)).unwrap();
        for id in 1..=300 {
            opened.store.write(new_game(id, Some("bob"), "f5d6c3d3c4"));
        }
        opened.threads.close();
        let mut bytes = std::fs::read(&path).unwrap();
        assert!(bytes.len() > 8 * 4096, "{} bytes", bytes.len());
        // Scribble over the pages after the first, as a bad disk might.
        for (i, byte) in bytes.iter_mut().enumerate().skip(4096 * 2).take(4096 * 4) {
            *byte = (i % 251) as u8;
        }
        std::fs::write(&path, &bytes).unwrap();
        let error = Store::open(&config(&path)).err().unwrap().to_string();
        assert!(error.contains(&path.display().to_string()), "{error}");
        assert!(error.contains("damaged"), "{error}");
        assert_eq!(std::fs::read(&path).unwrap(), bytes, "left as it was");
    }

    #[test]
    fn a_second_store_on_the_same_file_is_refused() {
        let path = temp_path("twice");
        let opened = Store::open(&config(&path)).unwrap();
        let error = Store::open(&config(&path)).err().unwrap();
        assert!(error.to_string().contains("in use"), "{error}");
        opened.threads.close();
        Store::open(&config(&path)).unwrap().threads.close();
    }

    #[test]
    fn the_archive_finds_finished_games_by_player_and_date() {
        let path = temp_path("archive");
        let opened = Store::open(&config(&path)).unwrap();
        let store = opened.store;
        let result = GameResult {
            winner: Some(flipline::Color::Black),
            black: 40,
            white: 24,
            reason: EndReason::Normal,
        };
        store.write(new_game(1, Some("bob"), "f5"));
        store.write(new_game(2, Some("cid"), "f5d6"));
        store.write(new_game(3, Some("bob"), ""));
        store.write(Write::End { game: 1, result });
        block_on(store.commit(Write::End { game: 2, result })).unwrap();
        let archive = Archive::open(&path).unwrap();
        let all = archive.finished_games(None, None).unwrap();
        assert_eq!(all.iter().map(|g| g.id).collect::<Vec<_>>(), [1, 2]);
        assert_eq!(all[1].result, Some(result));
        assert_eq!(all[1].moves.len(), 2);
        let bobs = archive.finished_games(Some("bob"), None).unwrap();
        assert_eq!(bobs.iter().map(|g| g.id).collect::<Vec<_>>(), [1]);
        assert!(
            archive
                .finished_games(None, Some("2999-01-01"))
                .unwrap()
                .is_empty()
        );
        assert_eq!(
            archive
                .finished_games(None, Some("2000-01-01"))
                .unwrap()
                .len(),
            2
        );
        assert_eq!(archive.playing_games().unwrap().len(), 1);
        opened.threads.close();
    }

    fn rows(conn: &Connection, sql: &str) -> i64 {
        conn.query_row(sql, [], |r| r.get(0)).unwrap()
    }

    fn a_move(game: GameId, ply: u32) -> Write {
        let mv = if ply.is_multiple_of(3) {
            Move::Pass
        } else {
            "f5".parse().unwrap()
        };
        Write::Move {
            game,
            ply,
            mv,
            ms: u64::from(ply) * 10,
        }
    }

    fn the_end(game: GameId) -> Write {
        let result = GameResult {
            winner: None,
            black: 32,
            white: 32,
            reason: EndReason::Resign,
        };
        Write::End { game, result }
    }

    #[test]
    fn moves_stay_in_the_log_until_their_game_ends() {
        let path = temp_path("log");
        let opened = Store::open(&config(&path)).unwrap();
        let store = opened.store;
        store.write(new_game(1, Some("bob"), "f5d6"));
        for ply in 3..=6 {
            block_on(store.commit(a_move(1, ply))).unwrap();
        }
        let reader = open_reader(&path).unwrap();
        assert_eq!(rows(&reader, "SELECT count(*) FROM move_log"), 6);
        assert_eq!(rows(&reader, "SELECT count(*) FROM moves"), 0);
        let playing = block_on(store.history(1)).unwrap().unwrap();
        let scanned = records::game(&reader, 1).unwrap().unwrap();
        assert_eq!(playing, scanned, "the writer's memory and the log agree");
        block_on(store.commit(the_end(1))).unwrap();
        let over = block_on(store.history(1)).unwrap().unwrap();
        assert_eq!(over.moves, playing.moves);
        assert_eq!(over.moves.len(), 6);
        assert_eq!(over.moves[4].ms, Some(50));
        assert_eq!(
            rows(&reader, "SELECT count(*) FROM moves WHERE game = 1"),
            6
        );
        let late = block_on(store.commit(a_move(1, 7)));
        assert!(
            matches!(late, Err(StoreError::Failed(why)) if why.contains("not open or in play"))
        );
        opened.threads.close();
    }

    #[test]
    fn numbers_reserved_before_a_crash_are_not_given_again() {
        let path = temp_path("crash");
        {
            // A daemon killed with numbers reserved and one game written.
            let mut writer = writer(&path);
            let writes = [Write::ReserveGames { through: 70 }, new_game(1, None, "")];
            writer.run_transaction(writes.iter()).unwrap();
        }
        let opened = Store::open(&config(&path)).unwrap();
        assert_eq!(opened.next_game, 71);
        block_on(opened.store.commit(Write::ReserveGames { through: 60 })).unwrap();
        opened.threads.close();
        let opened = Store::open(&config(&path)).unwrap();
        assert_eq!(opened.next_game, 2, "a clean close gives the numbers back");
        opened.threads.close();
    }

    #[test]
    fn a_close_after_a_failed_write_keeps_the_numbers_reserved() {
        let path = temp_path("keep");
        let opened = Store::open(&config(&path)).unwrap();
        block_on(opened.store.commit(Write::ReserveGames { through: 40 })).unwrap();
        assert!(block_on(opened.store.commit(a_move(999, 1))).is_err());
        opened.threads.close();
        let opened = Store::open(&config(&path)).unwrap();
        assert_eq!(opened.next_game, 41);
        opened.threads.close();
    }

    #[test]
    fn a_move_out_of_order_is_refused_and_the_game_goes_on() {
        let path = temp_path("order");
        let mut writer = writer(&path);
        let stats = StoreStats::default();
        let (create, _) = job(new_game(1, Some("bob"), "f5"));
        let (again, mut again_answer) = job(a_move(1, 1));
        let (next, mut next_answer) = job(a_move(1, 2));
        writer.commit_batch(&mut vec![create, again, next], &stats);
        let refused = again_answer.try_recv().unwrap().unwrap_err();
        assert!(refused.to_string().contains("out of order"), "{refused}");
        assert_eq!(next_answer.try_recv().unwrap(), Ok(1));
        assert_eq!(writer.log.held_moves(1).map(|m| m.len()), Some(2));
        assert_eq!(rows(&writer.conn, "SELECT count(*) FROM move_log"), 2);
    }

    #[test]
    fn a_store_of_the_first_schema_moves_its_games_in_play_to_the_log() {
        let path = temp_path("upgrade");
        {
            let conn = Connection::open(&path).unwrap();
            conn.execute_batch(schema::first_schema()).unwrap();
            conn.execute_batch(
                "PRAGMA application_id = 1179404624; PRAGMA user_version = 1;
                 INSERT INTO games (id, variant, black, white, status, result,
                                    black_score, white_score, reason, started_at)
                   VALUES (1, 'othello', 'ann', 'bob', 'over', 'X', 40, 24, 'resign', 'then'),
                          (2, 'othello', 'ann', 'cid', 'playing', NULL, NULL, NULL, NULL, 'then');
                 INSERT INTO moves VALUES (1, 1, 'f5', 10), (1, 2, 'd6', 20),
                   (2, 1, 'f5', 30), (2, 2, 'f6', 40), (2, 3, 'e6', 50);",
            )
            .unwrap();
        }
        let opened = Store::open(&config(&path)).unwrap();
        assert_eq!(opened.next_game, 3, "numbering goes on from the last game");
        let [game] = opened.playing.as_slice() else {
            panic!("{:?}", opened.playing)
        };
        assert_eq!(
            flipline::notation::transcript_string(&game.transcript()),
            "f5f6e6"
        );
        block_on(opened.store.commit(a_move(2, 4))).unwrap();
        let over = block_on(opened.store.history(1)).unwrap().unwrap();
        assert_eq!(
            flipline::notation::transcript_string(&over.transcript()),
            "f5d6"
        );
        opened.threads.close();
        let conn = Connection::open(&path).unwrap();
        assert_eq!(rows(&conn, "SELECT count(*) FROM move_log"), 4);
        assert_eq!(rows(&conn, "SELECT count(*) FROM moves"), 2);
        assert_eq!(rows(&conn, "SELECT reserved FROM game_numbers"), 2);
        assert_eq!(
            rows(&conn, "PRAGMA user_version"),
            i64::from(schema::SCHEMA_VERSION)
        );
    }

    /// What the log must match: the moves of each game in play and of each
    /// finished one.
    #[derive(Default)]
    struct Model {
        playing: std::collections::BTreeMap<GameId, u32>,
        finished: Vec<(GameId, u32)>,
        next_game: GameId,
    }

    /// One step of [`the_move_log_matches_every_game_through_failures_and_restarts`]:
    /// what to do and to which of the games in play.
    #[derive(Clone, Copy, Debug)]
    enum Step {
        Move(usize),
        End(usize),
        /// Commit the writes so far.
        Commit,
        /// Commit the writes so far with a bad one: all roll back.
        Fail,
        /// Read the log again from the file, as at a start.
        Restart,
    }

    fn step() -> impl proptest::strategy::Strategy<Value = Step> {
        use proptest::prelude::*;
        prop_oneof![
            12 => (0..5usize).prop_map(Step::Move),
            2 => (0..4usize).prop_map(Step::End),
            4 => Just(Step::Commit),
            1 => Just(Step::Fail),
            1 => Just(Step::Restart),
        ]
    }

    /// Runs `steps` on a writer whose log is kept short (16 rows, trimmed by
    /// 4), against a model of the plies of each game.
    fn run_steps(writer: &mut Writer, steps: &[Step]) -> Model {
        let mut model = Model {
            next_game: 1,
            ..Model::default()
        };
        let mut pending: Vec<Write> = Vec::new();
        let mut staged = Model::default();
        let start = |model: &Model, staged: &mut Model, pending: &mut Vec<Write>| {
            while staged.playing.len() < 5 {
                let id = model.next_game.max(staged.next_game);
                staged.next_game = id + 1;
                staged.playing.insert(id, 1);
                pending.push(new_game(id, Some("bob"), "f5"));
            }
        };
        staged.playing = model.playing.clone();
        staged.next_game = model.next_game;
        start(&model, &mut staged, &mut pending);
        for step in steps.iter().chain([Step::Commit].iter()) {
            let games: Vec<GameId> = staged.playing.keys().copied().collect();
            match *step {
                Step::Move(slot) => {
                    let game = games[slot % games.len()];
                    let plies = staged.playing.entry(game).or_default();
                    *plies += 1;
                    pending.push(a_move(game, *plies));
                }
                Step::End(slot) => {
                    // The oldest game never ends: it would pin the log if it
                    // were not logged again.
                    let game = games[1 + slot % (games.len() - 1)];
                    let plies = staged.playing.remove(&game).unwrap_or(0);
                    staged.finished.push((game, plies));
                    pending.push(the_end(game));
                    start(&model, &mut staged, &mut pending);
                }
                Step::Commit | Step::Fail => {
                    if matches!(step, Step::Fail) {
                        pending.push(a_move(999_999, 1));
                    }
                    let outcome = writer.run_transaction(pending.iter());
                    let writes = i64::try_from(pending.len()).unwrap();
                    pending.clear();
                    assert_log_is_short(writer, writes);
                    if outcome.is_ok() {
                        model.playing = staged.playing.clone();
                        model.finished = staged.finished.clone();
                        model.next_game = staged.next_game;
                    } else {
                        staged.playing = model.playing.clone();
                        staged.finished = model.finished.clone();
                        staged.next_game = model.next_game;
                        start(&model, &mut staged, &mut pending);
                    }
                }
                Step::Restart => {
                    writer.log = MoveLog::load(&writer.conn).unwrap();
                    writer.log.set_bounds(16, 4);
                }
            }
        }
        model
    }

    /// The log holds at most its bound (16 rows or twice the moves held), a
    /// trim step, every game logged again, and the last batch's rows.
    fn assert_log_is_short(writer: &Writer, last_batch: i64) {
        let held = i64::try_from(writer.log.held()).unwrap();
        let in_log = rows(&writer.conn, "SELECT count(*) FROM move_log");
        let most = 16.max(2 * held) + 4 + held + last_batch;
        assert!(
            in_log <= most,
            "{in_log} rows in the log, at most {most} expected"
        );
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(32))]

        #[test]
        fn the_move_log_matches_every_game_through_failures_and_restarts(
            steps in proptest::collection::vec(step(), 1..600),
        ) {
            let path = temp_path("model");
            let mut writer = writer(&path);
            writer.log.set_bounds(16, 4);
            let model = run_steps(&mut writer, &steps);
            let logged = move_log::logged_moves(&writer.conn).unwrap();
            for (&game, &plies) in &model.playing {
                let expected: Vec<StoredMove> = (1..=plies)
                    .map(|ply| match a_move(game, ply) {
                        Write::Move { mv, ms, .. } if ply > 1 => StoredMove { mv, ms: Some(ms) },
                        _ => StoredMove { mv: "f5".parse().unwrap(), ms: None },
                    })
                    .collect();
                proptest::prop_assert_eq!(writer.log.held_moves(game), Some(expected.clone()));
                proptest::prop_assert_eq!(logged.get(&game), Some(&expected));
            }
            proptest::prop_assert_eq!(logged.len(), model.playing.len());
            for &(game, plies) in &model.finished {
                let stored = rows(&writer.conn, &format!("SELECT count(*) FROM moves WHERE game = {game}"));
                proptest::prop_assert_eq!(stored, i64::from(plies));
            }
        }
    }
}
