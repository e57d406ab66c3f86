//! Store faults on demand: writes that fail as a full disk's do, or a disk
//! that stops answering. The failure tests hand a [`Faults`] to an
//! in-process daemon through its [`StoreConfig`](crate::config::StoreConfig)
//! and switch it while clients play; a daemon started from a file never has
//! one (the field cannot be written in RON), so the checks cost one branch.

use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};

use rusqlite::ffi;

/// A switch shared by the test and the store's threads.
#[derive(Clone, Debug, Default)]
pub struct Faults(Arc<Switch>);

#[derive(Debug, Default)]
struct Switch {
    mode: Mutex<Mode>,
    changed: Condvar,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Mode {
    #[default]
    Healthy,
    /// Every transaction fails with `SQLITE_FULL`.
    Failing,
    /// Every read and write waits until the mode changes.
    Frozen,
}

impl PartialEq for Faults {
    /// The same switch.
    fn eq(&self, other: &Faults) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for Faults {}

impl Faults {
    /// A healthy switch.
    pub fn new() -> Faults {
        Faults::default()
    }

    /// From now on every write fails as on a full disk.
    pub fn fail_writes(&self) {
        self.set(Mode::Failing);
    }

    /// From now on every read and write waits, as on a frozen file system.
    pub fn freeze(&self) {
        self.set(Mode::Frozen);
    }

    /// Back to health: frozen work goes on, writes succeed again.
    pub fn heal(&self) {
        self.set(Mode::Healthy);
    }

    fn set(&self, mode: Mode) {
        *self.lock() = mode;
        self.0.changed.notify_all();
    }

    fn lock(&self) -> MutexGuard<'_, Mode> {
        self.0.mode.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Waits while frozen; then the mode.
    fn settled(&self) -> Mode {
        let guard = self.lock();
        let guard = self
            .0
            .changed
            .wait_while(guard, |mode| *mode == Mode::Frozen)
            .unwrap_or_else(PoisonError::into_inner);
        *guard
    }

    /// Before a transaction: waits while frozen, fails while failing.
    pub(super) fn before_write(&self) -> rusqlite::Result<()> {
        match self.settled() {
            Mode::Failing => Err(rusqlite::Error::SqliteFailure(
                ffi::Error::new(ffi::SQLITE_FULL),
                Some("database or disk is full (a fault switched on)".to_string()),
            )),
            Mode::Healthy | Mode::Frozen => Ok(()),
        }
    }

    /// Before a read: waits while frozen.
    pub(super) fn before_read(&self) {
        self.settled();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc::channel;
    use std::time::Duration;

    #[test]
    fn failing_writes_fail_as_a_full_disk_and_heal() {
        let faults = Faults::new();
        assert!(faults.before_write().is_ok());
        faults.fail_writes();
        let error = faults.before_write().unwrap_err();
        assert_eq!(
            error.sqlite_error_code(),
            Some(rusqlite::ErrorCode::DiskFull)
        );
        faults.heal();
        assert!(faults.before_write().is_ok());
    }

    #[test]
    fn a_frozen_store_waits_until_healed() {
        let faults = Faults::new();
        faults.freeze();
        let (done, finished) = channel();
        let waiting = faults.clone();
        let thread = std::thread::spawn(move || {
            waiting.before_read();
            let _ = done.send(());
        });
        assert!(
            finished.recv_timeout(Duration::from_millis(50)).is_err(),
            "a read went on while frozen"
        );
        faults.heal();
        assert!(finished.recv_timeout(Duration::from_secs(10)).is_ok());
        thread.join().unwrap();
    }
}
