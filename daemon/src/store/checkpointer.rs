//! Checkpoints beside the writer, so that a commit pays for its own pages
//! and nothing else.
//!
//! SQLite checkpoints inside the commit that takes the WAL past
//! `wal_autocheckpoint`: that commit, and every move in its batch, waits
//! while the checkpoint copies the WAL into the database file and syncs it
//! (scattered pages, on a busy disk tens of milliseconds). Here a thread of
//! its own, on a connection of its own, copies the WAL once it holds
//! [`BESIDE_PAGES`] frames, in SQLite's PASSIVE mode, which never blocks
//! the writer. The writer still checkpoints itself at
//! [`checkpoint::CHECKPOINT_PAGES`](super::checkpoint::CHECKPOINT_PAGES),
//! which keeps the WAL bounded whatever happens beside it: by then the
//! thread beside has copied all but the last frames, so the writer's own
//! checkpoint is short.
//!
//! Why the writer must still do that: the WAL starts over (and so stays
//! small) only when a write begins with every frame copied, and a copy made
//! beside a writer that keeps committing is always a few frames behind. So
//! the thread beside copies again while frames keep coming (a few passes,
//! each shorter than the last): when it catches up between two commits the
//! next commit starts the WAL over, and the writer never checkpoints.

use std::path::Path;
use std::sync::mpsc::{Receiver, SyncSender, TrySendError, sync_channel};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;

use rusqlite::{Connection, OpenFlags};

use super::checkpoint::{self, CHECKPOINT_PAGES, Outcome};
use crate::config::{StoreConfig, Synchronous};
use crate::store_stats::StoreStats;

/// WAL frames after which the thread beside copies them: a quarter of the
/// writer's own bound.
pub const BESIDE_PAGES: i32 = 64;

/// Frames the WAL grows by before the thread beside is woken again: it has
/// several tries at catching up (and letting the WAL start over) before
/// the writer's bound. Each copy syncs the database file, so not at every
/// commit.
const WAKE_STEP: i32 = 32;

/// Passes in a row while the writer keeps adding frames: each copies what
/// came during the last, so a few suffice to catch up between two commits.
const PASSES: usize = 4;

/// What wakes the thread beside.
enum Signal {
    /// The WAL grew past [`BESIDE_PAGES`].
    Grown,
    /// The store closes.
    Stop,
}

/// The thread beside the writer. Dropping it stops the thread and closes
/// its connection; the writer holds it and drops it before its own
/// connection, so that the writer's is the last to close (the last
/// connection to close copies the WAL into the database file and removes
/// it, which one that never read the file would not do).
pub struct Checkpointer {
    stop: SyncSender<Signal>,
    thread: Option<JoinHandle<()>>,
}

impl Drop for Checkpointer {
    fn drop(&mut self) {
        // Waits behind a `Grown` not yet taken: one pass at most.
        let _ = self.stop.send(Signal::Stop);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Hooks the writer's commits (`conn`) to a thread beside it that
/// checkpoints the store of `config`. Without that thread (its connection
/// cannot be opened) the writer checkpoints alone, as SQLite would: the
/// store works either way, and the log says which.
pub fn start(
    conn: &mut Connection,
    config: &StoreConfig,
    stats: &Arc<StoreStats>,
) -> Result<Option<Checkpointer>, String> {
    let beside = match open_beside(&config.path, config.synchronous) {
        Ok(beside) => Some(beside),
        Err(error) => {
            tracing::warn!(
                error = %super::sql_error::describe(&error),
                "no checkpoints beside the writer: its commits checkpoint themselves"
            );
            None
        }
    };
    let (wake, woken) = sync_channel(1);
    let turn = Arc::new(Mutex::new(()));
    let hook = Hook {
        wake: beside.is_some().then(|| wake.clone()),
        turn: Arc::clone(&turn),
        stats: Arc::clone(stats),
        next_wake: BESIDE_PAGES,
    };
    hook_commits(conn, hook).map_err(|e| super::sql_error::describe(&e))?;
    let Some(beside) = beside else {
        return Ok(None);
    };
    let stats = Arc::clone(stats);
    let thread = std::thread::Builder::new()
        .name("store-checkpoint".into())
        .spawn(move || run(&beside, &woken, &turn, &stats))
        .map_err(|e| format!("cannot start the checkpoint thread: {e}"))?;
    Ok(Some(Checkpointer {
        stop: wake,
        thread: Some(thread),
    }))
}

/// A read-write connection for checkpoints only; it syncs the database file
/// as the writer's would.
fn open_beside(path: &Path, synchronous: Synchronous) -> rusqlite::Result<Connection> {
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(path, flags)?;
    conn.busy_timeout(std::time::Duration::from_secs(5))?;
    super::schema::set_synchronous(&conn, synchronous)?;
    // It never writes: its own commits would never checkpoint.
    conn.pragma_update(None, "wal_autocheckpoint", 0)?;
    Ok(conn)
}

/// What the writer's commits share with the thread beside.
struct Hook {
    /// Wakes the thread beside (none if it could not start).
    wake: Option<SyncSender<Signal>>,
    /// Held by whoever checkpoints: SQLite lets one checkpoint run at a
    /// time and skips any other, so the writer, at its bound, waits for the
    /// pass beside to end rather than skip its own (a WAL whose bound is
    /// skipped never starts over while commits keep coming).
    turn: Arc<Mutex<()>>,
    stats: Arc<StoreStats>,
    /// The WAL's size at which the thread beside is woken next.
    next_wake: i32,
}

impl Hook {
    fn wake_beside(&mut self) {
        // Full means a wake-up is already waiting: nothing to add.
        let gone = self.wake.as_ref().is_some_and(|w| {
            matches!(
                w.try_send(Signal::Grown),
                Err(TrySendError::Disconnected(_))
            )
        });
        if gone {
            tracing::warn!("the checkpoint thread is gone: commits checkpoint themselves");
            self.wake = None;
        }
    }
}

/// After each commit: wakes the thread beside once the WAL holds
/// [`BESIDE_PAGES`] frames and each [`WAKE_STEP`] more, and checkpoints in the commit itself at the
/// writer's bound. (The hook takes the place of SQLite's own, which
/// `wal_autocheckpoint` sets.)
fn hook_commits(conn: &mut Connection, mut hook: Hook) -> rusqlite::Result<()> {
    let own_bound = i32::try_from(CHECKPOINT_PAGES).unwrap_or(i32::MAX);
    conn.wal_hook(Some(move |wal: &mut rusqlite::hooks::Wal, pages: i32| {
        if pages >= own_bound {
            hook.stats.checkpointed_in_commit();
            let _turn = hook.turn.lock().unwrap_or_else(PoisonError::into_inner);
            // As SQLite's own hook: a checkpoint held back by a reader is
            // tried again at the next commit.
            let _ = wal.checkpoint();
        } else if pages >= hook.next_wake {
            hook.next_wake = pages.saturating_add(WAKE_STEP);
            hook.wake_beside();
        } else if pages < hook.next_wake.saturating_sub(WAKE_STEP) {
            // The WAL started over.
            hook.next_wake = BESIDE_PAGES;
        }
        Ok(())
    }))
}

/// Copies the WAL each time the writer says it has grown, until told to
/// stop.
fn run(conn: &Connection, woken: &Receiver<Signal>, turn: &Mutex<()>, stats: &StoreStats) {
    while let Ok(Signal::Grown) = woken.recv() {
        catch_up(conn, turn, stats);
    }
}

/// PASSIVE checkpoints until one finds nothing new to copy (the WAL may
/// start over at the next commit), the WAL started over meanwhile, or
/// [`PASSES`] were made.
fn catch_up(conn: &Connection, turn: &Mutex<()>, stats: &StoreStats) {
    let mut seen = -1;
    for _ in 0..PASSES {
        let outcome = {
            let _turn = turn.lock().unwrap_or_else(PoisonError::into_inner);
            checkpoint::passive(conn)
        };
        match outcome {
            Ok(Outcome {
                busy: false,
                frames,
                ..
            }) if frames > seen => {
                stats.checkpointed_beside();
                seen = frames;
            }
            Ok(_) => return,
            Err(error) => {
                // A full volume, or a disk failing: the writer meets it too,
                // and says so; its own checkpoints make room.
                tracing::debug!(
                    error = %super::sql_error::describe(&error),
                    "a checkpoint beside the writer failed"
                );
                return;
            }
        }
    }
}
