//! Noticing the WAL file removed or replaced under the running daemon.
//!
//! SQLite opens the WAL once and writes through that descriptor for the
//! connection's life. A clean-up script that deletes `flipline.db-wal` does
//! not stop it: commits go on into the deleted file, the moves are
//! acknowledged, and a crash then loses them (a later open finds no WAL, or
//! another file under its name). So the writer keeps the identity (device,
//! inode) of the WAL it opened with and looks at the name again before each
//! batch: one `stat`. Once it is gone or another file, every write fails,
//! and what was committed is first copied into the database file (a
//! checkpoint reads the WAL through SQLite's descriptor, which still holds
//! the removed file), so that a crash then loses nothing acknowledged.
//!
//! SQLite's own changes to the WAL keep its identity while the daemon has
//! it open: a checkpoint restarts it in place, `journal_size_limit` and a
//! TRUNCATE checkpoint shorten the same file, and it deletes the file only
//! when the last connection closes, after the writer's last batch.

use std::path::{Path, PathBuf};

use rusqlite::Connection;

use super::StoreError;
use super::checkpoint::wal_path;
use super::file_id::FileId;
use super::schema::refuse;

/// The WAL file the writer writes through, and whether it is still there.
pub(super) struct WalWatch {
    path: PathBuf,
    /// `None` where files have no identity: nothing is watched.
    id: Option<FileId>,
    lost: bool,
    /// A look at it failed and was logged: not again until one succeeds.
    unreadable: bool,
}

/// What [`WalWatch::check`] found.
pub(super) enum Wal {
    /// The WAL is the one SQLite writes.
    Intact,
    /// Just found gone or replaced: what happened, in words.
    Lost(String),
    /// Found so before: writes stay stopped.
    StillLost,
}

impl WalWatch {
    /// Watches the WAL of `conn`, the writer's connection to `db`, once WAL
    /// mode is set and the file read (SQLite has created the WAL by then).
    pub(super) fn new(conn: &Connection, db: &Path) -> Result<WalWatch, StoreError> {
        let path = wal_path(conn, db);
        let metadata = std::fs::metadata(&path)
            .map_err(|e| refuse(db, format!("cannot find its WAL {}: {e}", path.display())))?;
        Ok(WalWatch {
            id: FileId::of(&metadata),
            path,
            lost: false,
            unreadable: false,
        })
    }

    /// The WAL's name.
    pub(super) fn path(&self) -> &Path {
        &self.path
    }

    /// Looks at the WAL's name (one `stat`, none once lost).
    pub(super) fn check(&mut self) -> Wal {
        let Some(id) = self.id else {
            return Wal::Intact;
        };
        if self.lost {
            return Wal::StillLost;
        }
        let what = match std::fs::metadata(&self.path) {
            Ok(metadata) if FileId::of(&metadata) == Some(id) => {
                self.unreadable = false;
                return Wal::Intact;
            }
            Ok(_) => "was replaced by another file",
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => "was removed",
            // Not a sign that the file went (a passing EIO, ENOMEM, a
            // permission changed): the commit itself tells whether the disk
            // still works, and the next batch looks again.
            Err(e) => {
                if !std::mem::replace(&mut self.unreadable, true) {
                    let wal = self.path.display();
                    tracing::warn!(%wal, error = %e, "cannot look at the WAL; writing on");
                }
                return Wal::Intact;
            }
        };
        self.lose(what.to_string())
    }

    fn lose(&mut self, what: String) -> Wal {
        self.lost = true;
        Wal::Lost(what)
    }

    /// Why every write fails once the WAL is lost.
    pub(super) fn refusal(&self) -> StoreError {
        StoreError::Failed(format!(
            "the WAL {} was removed or replaced under the running flipd, so writes are \
             stopped: stop flipd and restore the store from a backup if it is damaged",
            self.path.display()
        ))
    }
}
