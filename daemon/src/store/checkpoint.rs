//! Keeping the WAL bounded, so that a full volume is a pause, not the end.
//!
//! SQLite appends every commit to the WAL and copies it into the database
//! file at a checkpoint; once a checkpoint has copied everything, the next
//! commit writes from the start of the WAL again, into space the file
//! already has. By default it checkpoints at 1000 pages (4 MiB): on a small
//! volume the WAL filled it before the first checkpoint, and then no
//! checkpoint could run (it needs room to grow the database file) and no
//! commit either (each needed room to grow the WAL), even after a restart.
//! So the writer checkpoints at [`CHECKPOINT_PAGES`], cuts the WAL back to
//! [`WAL_LIMIT_BYTES`] when a checkpoint lets it start over, empties it
//! when the daemon starts ([`empty_at_start`]), and checkpoints when a
//! commit fails for lack of space ([`make_room`]) before giving up on it.

use std::path::Path;

use rusqlite::Connection;

use super::sql_error::describe;

/// WAL pages after which a commit checkpoints (SQLite's default is 1000): the
/// WAL's bound, a megabyte. The thread beside the writer (`checkpointer`)
/// copies the frames long before, so this checkpoint copies few pages, and
/// none when that thread caught up and the WAL started over.
pub const CHECKPOINT_PAGES: u32 = 256;

/// What the WAL file is cut back to when it starts over: about the pages
/// between two checkpoints, so that the space a burst (or a reader holding
/// a checkpoint back) took is given back to the volume.
pub const WAL_LIMIT_BYTES: i64 = 1 << 20;

/// Sets the writer's checkpoint policy.
pub fn bound_wal(conn: &Connection) -> rusqlite::Result<()> {
    conn.pragma_update(None, "wal_autocheckpoint", CHECKPOINT_PAGES)?;
    // The pragma answers with the limit set: read it as a query.
    let _: i64 =
        conn.pragma_update_and_check(None, "journal_size_limit", WAL_LIMIT_BYTES, |r| r.get(0))?;
    Ok(())
}

/// Whether `error` is SQLite's "database or disk is full".
pub fn is_full(error: &rusqlite::Error) -> bool {
    error.sqlite_error_code() == Some(rusqlite::ErrorCode::DiskFull)
}

/// How a checkpoint went: `PRAGMA wal_checkpoint`'s row.
pub(super) struct Outcome {
    /// Readers (or another checkpoint) kept it from finishing.
    pub busy: bool,
    /// Frames in the WAL, and of those copied into the database file.
    pub frames: i64,
    pub copied: i64,
}

/// Copies what it can of the WAL without waiting for anyone and without
/// holding up the writer (see `checkpointer`).
pub(super) fn passive(conn: &Connection) -> rusqlite::Result<Outcome> {
    checkpoint(conn, "PASSIVE")
}

fn checkpoint(conn: &Connection, mode: &str) -> rusqlite::Result<Outcome> {
    let sql = format!("PRAGMA wal_checkpoint({mode})");
    conn.query_row(&sql, [], |r| {
        Ok(Outcome {
            busy: r.get::<_, i64>(0)? != 0,
            frames: r.get(1)?,
            copied: r.get(2)?,
        })
    })
}

/// At start, before anything is served: copies whatever the WAL holds into
/// the database file and truncates the WAL to nothing, so that a WAL grown
/// large (by an earlier build, or while checkpoints could not run) gives
/// its space back. TRUNCATE rather than RESTART: nothing else writes yet,
/// and the space is better back with the volume than held by a WAL that
/// may never need it. Failing (on a full volume) is no reason not to start:
/// the daemon serves and the writer checkpoints again as it commits.
/// `left` is the size of the WAL the last run left, for the log.
pub fn empty_at_start(conn: &Connection, left: u64) {
    match checkpoint(conn, "TRUNCATE") {
        Ok(outcome) if !outcome.busy => {
            if left > 0 {
                tracing::info!(
                    wal_bytes = left,
                    "the WAL left by the last run was checkpointed and emptied"
                );
            }
        }
        Ok(_) => tracing::warn!(
            wal_bytes = left,
            "the WAL could not be emptied at start (the file is in use); the store goes on"
        ),
        Err(error) => tracing::warn!(
            wal_bytes = left,
            error = %describe(&error),
            "the WAL could not be emptied at start; the store goes on and checkpoints as it writes"
        ),
    }
}

/// The size of the WAL file of the database `conn` has open (0 if none).
pub fn wal_bytes(conn: &Connection, path: &Path) -> u64 {
    std::fs::metadata(wal_path(conn, path)).map_or(0, |m| m.len())
}

/// After a commit failed for lack of space: checkpoints so that the commit,
/// tried again, fits. Returns whether the WAL can start over.
///
/// RESTART rather than TRUNCATE: in WAL mode a commit writes only to the
/// WAL, so it fails for lack of space when the WAL has to grow past the
/// blocks its file has (the last checkpoint found no room to grow the
/// database file, or a reader held it back, or the WAL was cut short
/// since). Once a checkpoint has copied every frame, RESTART makes the next
/// commit write from the start of the WAL, into blocks the file already
/// has: that commit then needs no free space at all. TRUNCATE would hand
/// those blocks back to the volume, and the commit would have to take them
/// again (failing if anything else took them first); `journal_size_limit`
/// still cuts the WAL back to its bound at that commit. The checkpoint
/// waits for a reader at most the connection's busy timeout (5 s).
pub fn make_room(conn: &Connection) -> bool {
    match checkpoint(conn, "RESTART") {
        Ok(outcome) => !outcome.busy && outcome.copied == outcome.frames,
        Err(_) => false,
    }
}

/// Copies every frame of the WAL into the database file (waiting for a
/// reader at most the busy timeout), so that what was committed no longer
/// depends on the WAL: for a WAL removed under the daemon, which a crash
/// would take with it.
pub fn save_all(conn: &Connection) -> Result<(), String> {
    match checkpoint(conn, "FULL") {
        Ok(outcome) if !outcome.busy && outcome.copied == outcome.frames => Ok(()),
        Ok(outcome) => Err(format!(
            "{} of {} pages copied, a reader held the rest",
            outcome.copied, outcome.frames
        )),
        Err(error) => Err(describe(&error)),
    }
}

/// The WAL file SQLite uses for the database `conn` has open (named from
/// the path SQLite resolved, which follows symbolic links), else `path`'s.
pub fn wal_path(conn: &Connection, path: &Path) -> std::path::PathBuf {
    let mut name = conn
        .path()
        .filter(|p| !p.is_empty())
        .map_or_else(|| path.as_os_str().to_owned(), std::ffi::OsString::from);
    name.push("-wal");
    std::path::PathBuf::from(name)
}
