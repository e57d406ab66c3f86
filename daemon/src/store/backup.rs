//! An online backup of a store: a copy made while flipd runs on it, with
//! SQLite's backup API, sound and whole as of one moment.
//!
//! The copy is taken in one step, inside one read transaction: in WAL mode a
//! reader never blocks the daemon's writer, and a copy made in several steps
//! would start over each time the daemon commits (which a busy daemon does
//! every few milliseconds), so it might never end. The copy is then checked
//! (`PRAGMA integrity_check`, the store's identity) before it is reported.

use std::path::Path;

use rusqlite::Connection;
use rusqlite::backup::{Backup, StepResult};

use super::archive::Archive;
use super::schema::{self, refuse};
use super::{StoreError, failed};

/// What a backup holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BackupReport {
    /// The copy's pages.
    pub pages: u64,
    /// Its games, every state.
    pub games: u64,
}

impl Archive {
    /// Copies this store to `target`, a file that must not exist yet (a
    /// backup never overwrites), and checks the copy. The copy is made under
    /// a name of its own beside `target` and given `target`'s name only once
    /// checked, so that a failed backup leaves nothing that could pass for
    /// one.
    pub fn backup_to(&self, target: &Path) -> Result<BackupReport, StoreError> {
        // Before anything is made: a PostgreSQL store is not copied here.
        self.connection()?;
        if target.exists() {
            return Err(refuse(
                target,
                "already exists; a backup never overwrites a file",
            ));
        }
        let mut partial = target.as_os_str().to_owned();
        partial.push(".partial");
        let partial = std::path::PathBuf::from(partial);
        let made = self.copy_to(&partial);
        if made.is_err() {
            let _ = std::fs::remove_file(&partial);
            return made;
        }
        std::fs::rename(&partial, target).map_err(|e| {
            let _ = std::fs::remove_file(&partial);
            refuse(
                target,
                format!("the checked copy could not take this name: {e}"),
            )
        })?;
        made
    }

    fn copy_to(&self, path: &Path) -> Result<BackupReport, StoreError> {
        let _ = std::fs::remove_file(path);
        super::private_file::create_private(path).map_err(|e| refuse(path, e.to_string()))?;
        let mut copy = Connection::open(path).map_err(failed)?;
        copy_whole(self.connection()?, &mut copy)?;
        let report = check(&copy, path)?;
        // Closed before it is renamed: nothing of it stays in a journal.
        copy.close().map_err(|(_, e)| failed(e))?;
        Ok(report)
    }
}

/// Copies `from` into `to` in one step.
fn copy_whole(from: &Connection, to: &mut Connection) -> Result<(), StoreError> {
    let backup = Backup::new(from, to).map_err(failed)?;
    // -1: every page at once (see the module docs). Busy or locked only if
    // another process holds the source exclusively: try again briefly.
    for _ in 0..100 {
        match backup.step(-1).map_err(failed)? {
            StepResult::Done => return Ok(()),
            StepResult::More | StepResult::Busy | StepResult::Locked => {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            _ => {}
        }
    }
    Err(StoreError::Failed(
        "the store stayed locked; the backup was not made".to_string(),
    ))
}

/// Checks the copy at `path`: whole, and flipline's; counts what it holds.
fn check(copy: &Connection, path: &Path) -> Result<BackupReport, StoreError> {
    let verdict: String = copy
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .map_err(failed)?;
    if verdict != "ok" {
        return Err(refuse(path, format!("the copy is damaged: {verdict}")));
    }
    schema::check_reader(copy, path)?;
    let pages: u64 = copy
        .query_row("PRAGMA page_count", [], |r| r.get(0))
        .map_err(failed)?;
    let games: u64 = copy
        .query_row("SELECT count(*) FROM games", [], |r| r.get(0))
        .map_err(failed)?;
    Ok(BackupReport { pages, games })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Store;
    use crate::store::test_support::{block_on, config, new_game, temp_path};
    use std::sync::atomic::{AtomicBool, Ordering};

    #[test]
    fn a_backup_made_while_the_daemon_writes_is_a_sound_store_with_the_games() {
        let path = temp_path("backup-source");
        let opened = Store::open(&config(&path)).unwrap();
        let store = opened.store;
        for id in 1..=50 {
            block_on(store.commit(new_game(id, Some("bob"), "f5d6"))).unwrap();
        }
        // The daemon goes on writing while the copy is made.
        let writing = AtomicBool::new(true);
        let target = temp_path("backup-copy");
        let report = std::thread::scope(|scope| {
            scope.spawn(|| {
                let mut id = 1000;
                while writing.load(Ordering::Relaxed) {
                    id += 1;
                    let _ = block_on(store.commit(new_game(id, Some("cid"), "f5")));
                }
            });
            let archive = Archive::open(&path).unwrap();
            let report = archive.backup_to(&target);
            writing.store(false, Ordering::Relaxed);
            report
        })
        .unwrap();
        assert!(report.games >= 50, "{report:?}");
        let mut partial = target.as_os_str().to_owned();
        partial.push(".partial");
        assert!(
            !std::path::Path::new(&partial).exists(),
            "only the checked copy stays"
        );
        let copy = Archive::open(&target).unwrap();
        assert_eq!(copy.game(7).unwrap().map(|g| g.moves.len()), Some(2));
        // The store, its write-ahead log and the copy hold password hashes:
        // their owner's alone.
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mut wal = path.as_os_str().to_owned();
            wal.push("-wal");
            for file in [path.as_path(), std::path::Path::new(&wal), target.as_path()] {
                let mode = std::fs::metadata(file).unwrap().permissions().mode();
                assert_eq!(mode & 0o077, 0, "{} is {mode:o}", file.display());
            }
        }
        let again = Archive::open(&path).unwrap().backup_to(&target);
        assert!(
            matches!(&again, Err(StoreError::Open { why, .. }) if why.contains("never overwrites")),
            "{again:?}"
        );
        opened.threads.close();
    }
}
