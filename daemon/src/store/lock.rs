//! The lock that keeps a second daemon off a store: an exclusive `flock` on
//! the database file itself, so that the file is locked whatever name it is
//! reached by (a symbolic link, a hard link, a relative path). A lock named
//! after the path (`<store>.lock`, what earlier builds took) let a second
//! flipd in through another name, and both then recovered the same games.
//!
//! On Linux `flock` locks and SQLite's `fcntl` locks do not see each other,
//! so the lock takes nothing from SQLite. The other way round is the care
//! needed here: closing any descriptor of a file drops every `fcntl` lock the
//! process holds on it, SQLite's included. So the locked descriptor is opened
//! before SQLite opens the file and closed after its connections are, and a
//! second store of the same file in this process is refused from a list of
//! the files held here, before it opens (and then closes) a descriptor of
//! its own.
//!
//! `<store>.lock` files left by earlier builds are left alone: they hold
//! nothing now, and a flipd of an earlier build still running holds only
//! that file, so it has to be stopped before this one starts.

use std::fs::{File, TryLockError};
use std::path::Path;
use std::sync::{Mutex, PoisonError};

use super::StoreError;
use super::file_id::FileId;
use super::schema::refuse;

/// The files whose store this process holds.
static HELD: Mutex<Vec<FileId>> = Mutex::new(Vec::new());

/// Why a locked store is refused.
const IN_USE: &str = "in use by another flipd (it holds a lock on this file, \
                      perhaps reached by another name or link)";

/// The database file, locked until this is dropped.
pub(super) struct StoreLock {
    /// Held open for the lock; closed only after SQLite's connections.
    _file: File,
    id: Option<FileId>,
}

impl Drop for StoreLock {
    fn drop(&mut self) {
        if let Some(id) = self.id {
            held().retain(|held| *held != id);
        }
    }
}

fn held() -> std::sync::MutexGuard<'static, Vec<FileId>> {
    HELD.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Locks the store at `path`, creating the file (and its directory) if there
/// is none: an empty file is a new SQLite database.
pub(super) fn lock(path: &Path) -> Result<StoreLock, StoreError> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .map_err(|e| refuse(path, format!("cannot create {}: {e}", dir.display())))?;
    }
    // Held throughout, so that two stores opened at once in this process
    // cannot both pass the look at the list.
    let mut held = held();
    let before = std::fs::metadata(path).ok().as_ref().and_then(FileId::of);
    if before.is_some_and(|id| held.contains(&id)) {
        return Err(refuse(path, IN_USE));
    }
    let mut options = File::options();
    options.read(true).write(true).create(true).truncate(false);
    // A new store holds password hashes: its owner's alone (SQLite gives the
    // `-wal` and `-shm` files the same mode).
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let file = options
        .open(path)
        .map_err(|e| refuse(path, format!("cannot open: {e}")))?;
    match file.try_lock() {
        Ok(()) => {}
        Err(TryLockError::WouldBlock) => return Err(refuse(path, IN_USE)),
        Err(TryLockError::Error(e)) => return Err(refuse(path, format!("cannot lock: {e}"))),
    }
    let id = file.metadata().ok().as_ref().and_then(FileId::of);
    if let Some(id) = id {
        held.push(id);
    }
    Ok(StoreLock { _file: file, id })
}
