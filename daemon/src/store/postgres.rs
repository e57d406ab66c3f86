//! The store on a PostgreSQL server, for an operator who wants the games on
//! a database server of their own (a machine to itself, backups with
//! `pg_dump`, several daemons one day). It keeps every promise of the
//! SQLite store behind the same [`Store`](super::Store) handle: the actors send the same
//! requests (see `requests`) to two threads built the same way.
//!
//! - The writer thread owns the only writing connection (which holds an
//!   advisory lock, so that two daemons never write one database) and
//!   commits in batches, answering each write once its batch is committed
//!   (see `writer`, which also says what happens when the server goes away).
//! - The reader thread has a connection of its own (see `reader`).
//!
//! Each thread drives its connection on a runtime of its own, as rusqlite's
//! calls block the SQLite threads: the actors never wait on a socket to the
//! database. At start the writer thread checks and migrates the database
//! (see `schema`) and reads what the daemon recovers (see `recovery`)
//! before the daemon serves anyone.

mod archive;
#[cfg(test)]
mod cluster_tests;
mod connect;
mod copy;
#[cfg(test)]
mod cut_proxy;
mod db;
#[cfg(test)]
mod doubt_tests;
mod games;
mod held;
pub mod keeper;
mod names;
pub mod nodes;
mod ratings;
mod reader;
mod recovery;
mod retry;
pub mod schema;
#[cfg(test)]
mod takeover_tests;
#[cfg(test)]
mod tests;
mod tls;
mod tourneys;
mod writer;
mod writer_session;
mod writes;

use std::sync::Arc;
use std::sync::mpsc::channel;

use tokio::runtime::Runtime;

pub use super::membership::{Joined, Joining};
use super::opened::{Opened, StoreThreads};
use super::{StoreError, StoreStats};
use crate::config::StoreConfig;
use held::HeldMoves;
use reader::PgReader;
use recovery::Recovered;
use writer::PgWriter;

pub use archive::PgArchive;
pub use copy::{Copied, copy_store};

/// A statement's or a connection's error in words, the server's own message
/// first, never a password.
pub(crate) fn describe(error: &tokio_postgres::Error) -> String {
    let text = match error.as_db_error() {
        Some(db) => format!("{}: {} ({})", db.severity(), db.message(), db.code().code()),
        None => match std::error::Error::source(error) {
            Some(source) => format!("{error}: {source}"),
            None => error.to_string(),
        },
    };
    crate::store_url::redact(&text)
}

/// A game or tournament number as PostgreSQL's `bigint`.
pub(crate) fn to_i64(number: u64) -> i64 {
    i64::try_from(number).unwrap_or(i64::MAX)
}

/// The error for a database that cannot be used as the store.
fn refuse(config: &StoreConfig, why: impl Into<String>) -> StoreError {
    StoreError::Database {
        url: config.url.redacted(),
        why: why.into(),
    }
}

fn runtime(config: &StoreConfig) -> Result<Runtime, StoreError> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| refuse(config, format!("cannot start a runtime: {e}")))
}

/// Opens the store of `config.url`: connects, checks and migrates the
/// database, recovers (a cluster node: joins, and claims the games that
/// have no live owner), and starts the two threads.
pub fn open(config: &StoreConfig, joining: Option<Joining>) -> Result<Opened, StoreError> {
    // A node's deadlines on the server are cut to its lease.
    let config = &StoreConfig {
        lease: joining.as_ref().map(|j| j.lease),
        ..config.clone()
    };
    let stats = Arc::new(StoreStats::default());
    let (writes, write_rx) = channel();
    let (reads, read_rx) = channel();
    let (started_tx, started_rx) = channel();
    let writer_config = config.clone();
    let closing = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writer_closing = Arc::clone(&closing);
    let writer_stats = Arc::clone(&stats);
    let spawn_error = |e: std::io::Error| refuse(config, format!("cannot start a thread: {e}"));
    let writer = std::thread::Builder::new()
        .name("store-writer".into())
        .spawn(move || {
            let started = start_writer(writer_config, writer_closing, joining, &started_tx);
            if let Some(writer) = started {
                let batch_max = writer.config.batch_max;
                super::requests::run_writer(writer, &write_rx, batch_max, &writer_stats);
            }
        })
        .map_err(spawn_error)?;
    let recovered = match started_rx.recv() {
        Ok(started) => started?,
        Err(_) => return Err(refuse(config, "the writer thread stopped at start")),
    };
    let reader = PgReader {
        config: config.clone(),
        runtime: runtime(config)?,
        db: None,
        down: retry::Retry::default(),
        faults: config.faults.clone(),
    };
    let reader = std::thread::Builder::new()
        .name("store-reader".into())
        .spawn(move || reader::run_reader(reader, &read_rx))
        .map_err(spawn_error)?;
    let threads = StoreThreads::new(writes, reads, writer, reader, stats, closing);
    Ok(opened(threads, recovered))
}

fn opened(threads: StoreThreads, recovered: Recovered) -> Opened {
    Opened {
        store: threads.store(),
        threads,
        playing: recovered.playing,
        next_game: recovered.next_game,
        game_block: recovered.game_block,
        tourneys: recovered.tourneys,
        next_tourney: recovered.next_tourney,
        registered: recovered.registered,
        joined: recovered.joined,
    }
}

/// On the writer thread: connects, migrates and recovers, sends what it
/// recovered (or why it could not), and gives the writer to run.
fn start_writer(
    config: StoreConfig,
    closing: Arc<std::sync::atomic::AtomicBool>,
    joining: Option<Joining>,
    started: &std::sync::mpsc::Sender<Result<Recovered, StoreError>>,
) -> Option<PgWriter> {
    let prepared = runtime(&config).and_then(|runtime| {
        let clustered = joining.is_some();
        let recovered = runtime.block_on(async {
            let mut db = writer_session::connect_writer(&config, clustered, None).await?;
            schema::prepare(db.client()).await?;
            let recovered = match &joining {
                None => recovery::recover(&mut db).await?,
                Some(joining) => recovery::join(&mut db, joining).await?,
            };
            Ok::<_, String>((db, recovered))
        });
        let (db, recovered) = recovered.map_err(|why| refuse(&config, why))?;
        Ok((runtime, db, recovered))
    });
    let (runtime, db, mut recovered) = match prepared {
        Ok(prepared) => prepared,
        Err(error) => {
            let _ = started.send(Err(error));
            return None;
        }
    };
    let held = recovered
        .playing
        .iter()
        .map(|game| (game.id, game.moves.clone()));
    let held = HeldMoves::load(held);
    let faults = config.faults.clone();
    let mut writer = PgWriter {
        config,
        runtime,
        db: Some(db),
        held,
        run: random_run(),
        batch: 0,
        down: retry::Retry::default(),
        faults,
        closing,
        doubt: None,
        member: recovered.joined.as_ref().map(|j| j.member.clone()),
        claim_unsure: false,
        previous: None,
    };
    if let Err(why) = claim_at_start(&mut writer, &mut recovered) {
        let _ = started.send(Err(refuse(&writer.config, why)));
        return None;
    }
    started.send(Ok(recovered)).ok()?;
    Some(writer)
}

/// A node starting claims every game without a live owner it can (its own
/// earlier incarnation's among them), so that they are started with it.
fn claim_at_start(writer: &mut PgWriter, recovered: &mut Recovered) -> Result<(), String> {
    if writer.member.is_none() {
        return Ok(());
    }
    loop {
        let games = writer.claim()?;
        if games.is_empty() {
            return Ok(());
        }
        recovered.playing.extend(games);
    }
}

/// A writer's start, as its batches mark it: random, so that a restarted
/// daemon never takes an old mark for one of its own.
fn random_run() -> i64 {
    i64::from_ne_bytes(crate::random::random_u64().to_ne_bytes())
}

/// `flipd --recompute-ratings` on PostgreSQL: every rating replayed from the
/// rated games, in one transaction, under the writer's lock (so never
/// beside a running daemon); how many games were replayed.
pub fn recompute_ratings(config: &StoreConfig) -> Result<usize, StoreError> {
    let runtime = runtime(config)?;
    let recomputed = runtime.block_on(async {
        let mut db = writer_session::connect_writer(config, false, None)
            .await
            .map_err(|why| match why.contains("another flipd") {
                true => format!("{why}: stop it first"),
                false => why,
            })?;
        schema::prepare(db.client()).await?;
        let sql = |e: tokio_postgres::Error| describe(&e);
        db.batch("BEGIN").await.map_err(sql)?;
        let count = ratings::recompute(&mut db, config.rating_period_days)
            .await
            .map_err(sql)?;
        db.batch("COMMIT").await.map_err(sql)?;
        Ok::<_, String>(count)
    });
    recomputed.map_err(|why| refuse(config, why))
}
