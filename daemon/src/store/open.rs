//! Opening the store: the lock that keeps a second daemon off it (see
//! `lock`), the checks and migrations (see `schema`), the recovery data
//! (games left open cancelled, the games in play, the next game number,
//! the registered names), then the two threads.
//! Recovery runs on the writer's connection before its thread takes it over,
//! so the daemon serves nobody until the file is checked and the games to
//! resume are known. [`StoreThreads`] holds the threads, which hold the lock
//! until their connections close.

use std::path::Path;
use std::sync::Arc;
use std::sync::mpsc::channel;

use rusqlite::Connection;

use super::checkpoint;
use super::checkpointer;
use super::lock::{self, StoreLock};
use super::move_log::{Logged, MoveLog};
use super::opened::{Opened, StoreThreads};
use super::reader::{open_reader, run_reader};
use super::requests::run_writer;
use super::row::Damaged;
use super::schema::{self, describe, refuse};
use super::tourneys;
use super::wal_watch::WalWatch;
use super::writer::{StoreStats, Writer};
use super::{Store, StoreError, Write, records};
use crate::config::StoreConfig;

impl Store {
    /// Opens (or creates) the store of `config`, checks and migrates it, cancels
    /// games left open, loads the games in play and starts the threads: on
    /// the PostgreSQL server of `config.url` if it names one (see
    /// `postgres`), else in the SQLite file of `config.path`.
    pub fn open(config: &StoreConfig) -> Result<Opened, StoreError> {
        Store::open_as(config, None)
    }

    /// As [`Store::open`], for a node of a cluster (`joining`) if given:
    /// then the store must be PostgreSQL's.
    pub fn open_as(
        config: &StoreConfig,
        joining: Option<super::membership::Joining>,
    ) -> Result<Opened, StoreError> {
        if !config.url.is_empty() {
            return super::postgres::open(config, joining);
        }
        if joining.is_some() {
            return Err(StoreError::Failed(
                "a cluster node needs a PostgreSQL store (store.url)".into(),
            ));
        }
        let path = config.path.as_path();
        let lock = lock::lock(path)?;
        let mut conn = Connection::open(path).map_err(|e| refuse(path, describe(&e)))?;
        let left = checkpoint::wal_bytes(&conn, path);
        schema::prepare_writer(&mut conn, config)?;
        checkpoint::empty_at_start(&conn, left);
        let wal = WalWatch::new(&conn, path)?;
        let startup = |e: rusqlite::Error| refuse(path, describe(&e));
        let log = MoveLog::load(&conn).map_err(startup)?;
        let mut writer = Writer {
            beside: None,
            conn,
            log,
            faults: config.faults.clone(),
            disk_full: false,
            wal,
            rating_period_days: config.rating_period_days,
        };
        cancel_open_games(&mut writer, path).map_err(startup)?;
        // The log was read once, into the writer's memory: recovery takes
        // the moves from there.
        let held = |_: &Connection| {
            Ok(Logged {
                moves: writer.log.all_held(),
                damaged: writer.log.damaged().to_vec(),
            })
        };
        let in_play = records::playing(&writer.conn, held).map_err(startup)?;
        for damaged in &in_play.damaged {
            left_out(damaged, path);
        }
        let playing = in_play.games;
        let next_game = records::next_game_id(&writer.conn).map_err(startup)?;
        let tourneys = tourneys::load(&writer.conn).map_err(startup)?;
        let next_tourney = tourneys::next_id(&writer.conn).map_err(startup)?;
        let registered = records::registered_names(&writer.conn).map_err(startup)?;
        let reader = open_reader(path)?;
        let threads = start_threads(writer, reader, config, lock)?;
        let store = threads.store();
        Ok(Opened {
            store,
            threads,
            playing,
            next_game,
            game_block: None,
            tourneys,
            next_tourney,
            registered,
            joined: None,
        })
    }
}

/// Cancels the games left open at the last stop. A write that fails (on a
/// full volume) leaves them open for the next start to cancel: no reason
/// not to serve the games in play. An open game whose logged moves do not
/// read back is left open and as it is, as a damaged game in play is.
fn cancel_open_games(writer: &mut Writer, path: &Path) -> rusqlite::Result<()> {
    let mut open = records::open_games(&writer.conn)?;
    for damaged in writer.log.damaged() {
        if let Some(at) = open.iter().position(|&game| game == damaged.game) {
            open.remove(at);
            left_out(damaged, path);
        }
    }
    if open.is_empty() {
        return Ok(());
    }
    let cancels: Vec<Write> = open.iter().map(|&game| Write::Cancel { game }).collect();
    match writer.run_transaction(cancels.iter()) {
        Ok(_) => tracing::info!(
            cancelled = open.len(),
            "cancelled games left open at the last stop"
        ),
        Err(error) => tracing::warn!(
            open = open.len(),
            error = %describe(&error),
            "cannot cancel the games left open at the last stop; the next start will"
        ),
    }
    Ok(())
}

/// Logs a game left out at the start because its rows do not read back.
fn left_out(damaged: &Damaged, path: &Path) {
    let (game, why) = (damaged.game, &damaged.why);
    tracing::error!(
        game,
        why,
        "game {game} is left out at this start, its stored rows do not read back \
         ({why}); the other games are recovered. Its rows are kept as they are: \
         repair them in {} (sqlite3) and restart to bring it back",
        path.display()
    );
}

/// `flipd --recompute-ratings`: the store of `config`, whichever backend,
/// has its ratings rebuilt from its rated games. Returns how many games
/// were rated.
pub fn recompute_ratings(config: &StoreConfig) -> Result<usize, StoreError> {
    if !config.url.is_empty() {
        return super::postgres::recompute_ratings(config);
    }
    super::ratings::recompute_file(config)
}

/// The SQLite store's two threads, each holding the lock on the file.
fn start_threads(
    mut writer: Writer,
    reader_conn: Connection,
    config: &StoreConfig,
    lock: StoreLock,
) -> Result<StoreThreads, StoreError> {
    let stats = Arc::new(StoreStats::default());
    let (writes, write_rx) = channel();
    let (reads, read_rx) = channel();
    let writer_stats = Arc::clone(&stats);
    let batch_max = config.batch_max;
    let faults = config.faults.clone();
    let spawn_error = |e: std::io::Error| StoreError::Failed(format!("cannot start: {e}"));
    // Each thread holds the lock until its connection is closed, so that
    // the file stays locked (and its descriptor open, see `lock`) for as
    // long as either thread has it open, closed or not by `close`.
    let lock = Arc::new(lock);
    let writer_lock = Arc::clone(&lock);
    writer.beside =
        checkpointer::start(&mut writer.conn, config, &stats).map_err(StoreError::Failed)?;
    let writer = std::thread::Builder::new()
        .name("store-writer".into())
        .spawn(move || {
            run_writer(writer, &write_rx, batch_max, &writer_stats);
            drop(writer_lock);
        })
        .map_err(spawn_error)?;
    let reader = std::thread::Builder::new()
        .name("store-reader".into())
        .spawn(move || {
            run_reader(&reader_conn, &read_rx, faults.as_ref());
            drop(reader_conn);
            drop(lock);
        })
        .map_err(spawn_error)?;
    Ok(StoreThreads::new(
        writes,
        reads,
        writer,
        reader,
        stats,
        Arc::default(),
    ))
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{block_on, config, temp_path};
    use super::*;

    #[test]
    fn the_registered_names_are_loaded_at_start_whatever_their_case() {
        let path = temp_path("registered-names");
        let opened = Store::open(&config(&path)).unwrap();
        assert!(opened.registered.is_empty());
        for name in ["Vic", "ann"] {
            let hash = "$argon2id$not-checked-here".to_string();
            let write = Write::Register {
                name: name.to_string(),
                hash,
            };
            assert_eq!(block_on(opened.store.commit(write)), Ok(1));
        }
        opened.threads.close();
        let opened = Store::open(&config(&path)).unwrap();
        let registered = &opened.registered;
        assert_eq!(registered.len(), 2);
        assert_eq!(registered.registered("vic"), Some("Vic"));
        assert_eq!(registered.registered("ANN"), Some("ann"));
        assert_eq!(registered.registered("bob"), None);
        opened.threads.close();
    }
}
