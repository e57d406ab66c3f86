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
//!   bad write fails alone. A thread beside it copies the WAL into the file
//!   (`checkpointer`), so that commits seldom wait for a checkpoint; the
//!   writer keeps the WAL bounded and checkpoints when a
//!   commit finds the disk full (`checkpoint`), so writes go on by themselves
//!   once there is room; it stops writing if the WAL is removed or replaced
//!   under it (`wal_watch`), which a crash would otherwise turn into lost moves.
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
//! export`); [`Importer`] adds finished games to one (`flip import`).
//!
//! The same handle fronts a PostgreSQL store (`store.url`, see `postgres`):
//! the actors send both backends the same requests (`requests`), so nothing
//! above this module knows which it talks to.
//!
//! Writes nobody waits for (a cancelled game) go through the same queue,
//! which orders them with the moves; a crash may lose the last of them, and
//! recovery repairs that: a game left open is cancelled, and a game whose
//! stored moves end it is ended.
//!
//! Group commit, as first measured (a release build on two cores, the load
//! generator on the same cores): 1,000 games moved about 18,000 times a
//! second at about 70 moves a transaction, 100 games about 20,000 at about
//! 37, against about 30,000 and 60,000 with no store at all. Later figures
//! are in BENCHMARKS.md.

mod archive;
mod backup;
mod checkpoint;
mod checkpointer;
mod faults;
mod file_id;
mod import;
mod lock;
mod membership;
mod move_log;
mod open;
mod opened;
pub mod postgres;
mod private_file;
mod ratings;
mod reader;
mod records;
mod requests;
mod row;
pub mod schema;
mod sql_error;
#[cfg(test)]
pub(crate) mod test_support;
#[cfg(test)]
mod tests;
mod tourneys;
mod wal_watch;
mod writer;

use std::future::Future;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::mpsc::Sender;

use flipline::Move;
use flipline::protocol::GameId;
use tokio::sync::oneshot;

pub use crate::faults::Faults;
pub use crate::store_stats::StoreStats;
pub use archive::Archive;
pub use backup::BackupReport;
pub use import::{Imported, Importer};
pub use open::recompute_ratings;
pub use opened::{Opened, StoreThreads};
pub use ratings::{RatingChange, StoredRating, rounded};
pub use records::{GameRecord, Registration, Status, StoredMove, Write};

/// What a cluster's store says of a name a login takes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NameClaim {
    /// This node holds it now; `kept` is its seat in a game in play, if
    /// it has one.
    Taken { kept: Option<SeatKept> },
    /// A connection of this live node holds it.
    HeldBy(String),
}

/// A name's seat in a game in play on a cluster: one another node owns,
/// or one this node has just taken over (its lobby may not hold it yet).
#[derive(Clone, PartialEq, Eq)]
pub struct SeatKept {
    pub game: GameId,
    /// Whether this node's incarnation owns the game.
    pub here: bool,
    /// The owner, if live (none while a dead node's game waits to be
    /// taken over).
    pub node: Option<String>,
    /// A guest's secret, which alone takes the seat back.
    pub secret: Option<String>,
}

// A secret is never printed, not even in a debug log.
impl std::fmt::Debug for SeatKept {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SeatKept")
            .field("game", &self.game)
            .field("here", &self.here)
            .field("node", &self.node)
            .field("guest", &self.secret.is_some())
            .finish()
    }
}
pub use tourneys::{StoredForfeit, StoredTourney, StoredTourneyGame, TourneyWrite};

use requests::{NameAsk, Read, ReadAnswer, ToReader, ToWriter, WriteJob};
use schema::describe;

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
    /// The PostgreSQL database cannot be used as the store (at start).
    Database {
        /// Where it is, without a password.
        url: String,
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
            StoreError::Database { url, why } => write!(f, "cannot use the store {url}: {why}"),
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

impl Store {
    /// Queues a write nobody waits for; a failure is logged.
    pub fn write(&self, write: Write) {
        let job = WriteJob { write, done: None };
        self.stats.sent();
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
        self.stats.sent();
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

    /// The moves of a game in play, from the writer's memory once everything
    /// queued before is committed; `None` for a game with none.
    pub fn held_moves(
        &self,
        game: GameId,
    ) -> impl Future<Output = Result<Option<Vec<StoredMove>>, StoreError>> + use<> {
        let (tx, rx) = oneshot::channel();
        let asked = self.writes.send(ToWriter::Held(game, tx));
        async move {
            asked.map_err(|_| StoreError::Closed)?;
            let held = rx.await.map_err(|_| StoreError::Closed)?;
            held.map_err(StoreError::Failed)
        }
    }

    /// Claims games without a live owner for this cluster node (see
    /// `BatchWriter::claim`): the ones in play, with their moves, to start.
    pub fn claim(&self) -> impl Future<Output = Result<Vec<GameRecord>, StoreError>> + use<> {
        let (tx, rx) = oneshot::channel();
        let asked = self.writes.send(ToWriter::Claim(tx));
        async move {
            asked.map_err(|_| StoreError::Closed)?;
            let claimed = rx.await.map_err(|_| StoreError::Closed)?;
            claimed.map_err(StoreError::Failed)
        }
    }

    /// Takes `name` in the cluster's names online for this node (a cluster
    /// node's store only), once everything queued before is committed.
    pub fn claim_name(
        &self,
        name: String,
    ) -> impl Future<Output = Result<NameClaim, StoreError>> + use<> {
        let (tx, rx) = oneshot::channel();
        let asked = self.writes.send(ToWriter::Name(NameAsk::Claim(name, tx)));
        async move {
            asked.map_err(|_| StoreError::Closed)?;
            let claim = rx.await.map_err(|_| StoreError::Closed)?;
            claim.map_err(StoreError::Failed)
        }
    }

    /// Gives `name` back in the cluster's names online, after whatever is
    /// queued before (a claim of it too); a failure is logged.
    pub fn release_name(&self, name: String) {
        let _ = self.writes.send(ToWriter::Name(NameAsk::Release(name)));
    }

    /// Takes back the moves of `game` after its first `keep` (it holds
    /// `plies`); resolves once that is committed.
    pub fn take_back(
        &self,
        game: GameId,
        keep: u32,
        plies: u32,
    ) -> impl Future<Output = Result<(), StoreError>> + Send + 'static + use<> {
        let commit = self.commit(Write::TakeBack { game, keep, plies });
        async move { commit.await.map(|_| ()) }
    }

    /// Queues `read` (made with the sender of its answer) for the reader.
    fn ask<T: Send + 'static, F: FnOnce(ReadAnswer<T>) -> Read>(
        &self,
        read: F,
    ) -> impl Future<Output = Result<T, StoreError>> + use<T, F> {
        let (tx, rx) = oneshot::channel();
        let sent = self.reads.send(ToReader::Read(read(tx)));
        async move {
            sent.map_err(|_| StoreError::Closed)?;
            rx.await.map_err(|_| StoreError::Closed)?
        }
    }

    /// A game as the reader finds it, without waiting for the writer: how
    /// it stands and its result (the moves of a game in play are not read).
    pub fn game_as_stored(
        &self,
        game: GameId,
    ) -> impl Future<Output = Result<Option<GameRecord>, StoreError>> + use<> {
        self.ask(move |answer| Read::Game {
            game,
            held: Some(Vec::new()),
            answer,
        })
    }

    /// A game with its moves, as committed. The moves of a game in play come
    /// from the writer's memory, once what was queued before is committed;
    /// the rest from the reader.
    pub fn history(
        &self,
        game: GameId,
    ) -> impl Future<Output = Result<Option<GameRecord>, StoreError>> + use<> {
        let held = self.held_moves(game);
        let store = self.clone();
        async move {
            let held = held.await?;
            store
                .ask(move |answer| Read::Game { game, held, answer })
                .await
        }
    }

    /// What rated game `game` changed, by player (none for a game not rated).
    pub fn rating_changes(
        &self,
        game: GameId,
    ) -> impl Future<Output = Result<Vec<RatingChange>, StoreError>> + use<> {
        self.ask(move |answer| Read::RatingChanges { game, answer })
    }

    /// `name`'s ratings, in `variant` or in every variant it has one in.
    pub fn ratings_of(
        &self,
        name: String,
        variant: Option<flipline::Variant>,
    ) -> impl Future<Output = Result<Vec<StoredRating>, StoreError>> + use<> {
        self.ask(move |answer| Read::RatingsOf {
            name,
            variant,
            answer,
        })
    }

    /// The `count` best ratings in `variant`, best first.
    pub fn top(
        &self,
        variant: flipline::Variant,
        count: u32,
    ) -> impl Future<Output = Result<Vec<StoredRating>, StoreError>> + use<> {
        self.ask(move |answer| Read::Top {
            variant,
            count,
            answer,
        })
    }

    /// The registration of a name, in any case, if it is registered.
    pub fn registration(
        &self,
        name: String,
    ) -> impl Future<Output = Result<Option<Registration>, StoreError>> + use<> {
        self.ask(move |answer| Read::Registration { name, answer })
    }

    /// The node that owns `game` and whether it is live, on a cluster's
    /// store.
    pub fn owner_of(
        &self,
        game: GameId,
    ) -> impl Future<Output = Result<Option<(String, bool)>, StoreError>> + use<> {
        self.ask(move |answer| Read::OwnerOf { game, answer })
    }

    /// The game in play where `name` is seated, on a cluster's store.
    pub fn seat_in_play(
        &self,
        name: String,
    ) -> impl Future<Output = Result<Option<GameId>, StoreError>> + use<> {
        self.ask(move |answer| Read::SeatInPlay { name, answer })
    }

    /// The live node where `name` is online, on a cluster's store.
    pub fn name_node(
        &self,
        name: String,
    ) -> impl Future<Output = Result<Option<String>, StoreError>> + use<> {
        self.ask(move |answer| Read::NameNode { name, answer })
    }

    /// A block of game numbers for a cluster node.
    pub fn game_numbers(
        &self,
    ) -> impl Future<Output = Result<std::ops::Range<GameId>, StoreError>> + use<> {
        self.ask(move |answer| Read::GameNumbers { answer })
    }

    /// The writer's counts so far.
    pub fn stats(&self) -> (u64, u64, u64) {
        self.stats.snapshot()
    }

    /// The writer's counts as they go, for the metrics and the health check.
    pub fn live_stats(&self) -> Arc<StoreStats> {
        Arc::clone(&self.stats)
    }
}
