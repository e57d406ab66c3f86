//! Store faults on demand: writes that fail as a full disk's do, or a disk
//! that stops answering. The failure tests hand a [`Faults`] to an
//! in-process daemon through its configuration (`StoreConfig::faults`, never
//! read from a file) and switch it while clients play; the store's threads
//! ask it before each transaction and each read, so the checks cost one
//! branch in a daemon started from a file.
//!
//! A leaf, below both the configuration that carries it and the store that
//! obeys it, so that neither imports the other back; it names no SQLite
//! error either: the store turns "writes fail" into its disk-full error.

use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};

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
    /// Every transaction fails as on a full disk.
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

    /// Before a transaction: waits while frozen, then whether it must fail.
    pub fn write_fails(&self) -> bool {
        self.settled() == Mode::Failing
    }

    /// Before a read: waits while frozen.
    pub fn before_read(&self) {
        self.settled();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc::channel;
    use std::time::Duration;

    #[test]
    fn failing_writes_fail_until_healed() {
        let faults = Faults::new();
        assert!(!faults.write_fails());
        faults.fail_writes();
        assert!(faults.write_fails());
        faults.heal();
        assert!(!faults.write_fails());
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
        assert!(
            finished.recv_timeout(Duration::from_secs(60)).is_ok(),
            "hang guard: the read never went on once healed"
        );
        thread.join().unwrap();
    }
}
