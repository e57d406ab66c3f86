//! The in-process test daemon: a configuration for tests ([`test_config`]), a
//! daemon started from it ([`start`], [`TestDaemon`]) and the temporary
//! directories that hold each daemon's store. They are together because a
//! daemon owns its directory: the handle removes it when the daemon stops, so
//! tests that run in parallel never share or leave behind a store.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use flipd::{Config, DaemonThread};

/// The embedded default, listening on port 0, with few threads, short engine
/// and shutdown times, no cap on connections per address, and a store in a
/// fresh temporary directory (see [`temp_dir`]; [`start`] removes it with the
/// daemon); each test changes what it needs on top.
pub fn test_config() -> Config {
    let mut config = Config::embedded().unwrap_or_else(|e| panic!("embedded config: {e}"));
    config.listen = "127.0.0.1:0".to_string();
    config.workers = 2;
    config.engine_threads = 1;
    config.engine_move_ms = 100;
    config.shutdown_drain_ms = 500;
    let store_dir = temp_dir("store");
    if let Some(url) = crate::postgres::database_for(&store_dir) {
        config.store.url = flipd::config::StoreUrl::new(url);
    }
    config.store.path = store_dir.join("flipline.db");
    // No fsync per commit: in-process daemons are never killed, and the tests
    // stay quick. The kill -9 test runs the binary with the default (full).
    config.store.synchronous = flipd::config::Synchronous::Normal;
    // Every test connects from 127.0.0.1, some with hundreds of connections:
    // the per-address cap would be the test's cap. The tests of that cap
    // set it back.
    config.max_connections_per_address = 100_000;
    config
}

/// Where the tests keep their temporary files: a directory per test daemon
/// under this, named after the process and a counter, so that parallel tests
/// and parallel runs never share one; each is removed with its daemon.
fn temp_root() -> PathBuf {
    std::env::temp_dir().join("flipline-tests")
}

/// A new empty directory for one test's files, named after `what`, this process
/// and a counter.
pub fn temp_dir(what: &str) -> PathBuf {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let dir = temp_root().join(format!("{}-{n}-{what}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir)
        .unwrap_or_else(|e| panic!("cannot create {}: {e}", dir.display()));
    dir
}

/// Removes a directory made by [`temp_dir`] (and nothing else).
pub fn remove_temp_dir(dir: &Path) {
    crate::postgres::drop_database(dir);
    if dir.starts_with(temp_root()) {
        let _ = std::fs::remove_dir_all(dir);
    }
}

/// An in-process daemon whose store directory is removed when it is dropped
/// (unless stopped with [`TestDaemon::stop_keeping_store`]).
pub struct TestDaemon {
    daemon: Option<DaemonThread>,
    /// Where it listens.
    pub addr: SocketAddr,
    /// Its TLS port, if its configuration asks for one.
    pub tls: Option<SocketAddr>,
    /// Where it serves metrics, if its configuration asks.
    pub metrics: Option<SocketAddr>,
    store: PathBuf,
    /// The configuration it runs with (to start another on the same store).
    pub config: Config,
}

impl TestDaemon {
    /// Shuts the daemon down gracefully and removes its store.
    pub fn stop(mut self) -> std::io::Result<()> {
        self.daemon.take().map_or(Ok(()), DaemonThread::stop)
    }

    /// Shuts the daemon down gracefully and leaves its store for the next one.
    pub fn stop_keeping_store(mut self) -> std::io::Result<()> {
        self.store = PathBuf::new();
        self.daemon.take().map_or(Ok(()), DaemonThread::stop)
    }
}

impl Drop for TestDaemon {
    fn drop(&mut self) {
        // A test that failed with its store broken on purpose (frozen, or
        // refusing writes) would otherwise wait for ever for the daemon's
        // last writes: the store is mended first, and the failure shown.
        if std::thread::panicking()
            && let Some(faults) = &self.config.store.faults
        {
            faults.heal();
        }
        drop(self.daemon.take());
        if let Some(dir) = self.store.parent() {
            remove_temp_dir(dir);
        }
    }
}

/// Starts an in-process daemon; dropping the handle stops it.
pub fn start(config: Config) -> TestDaemon {
    let daemon = DaemonThread::start(config.clone())
        .unwrap_or_else(|e| panic!("cannot start the daemon: {e}"));
    crate::client::name_daemon(daemon.addr, &config.store.path);
    TestDaemon {
        addr: daemon.addr,
        tls: daemon.tls,
        metrics: daemon.metrics,
        daemon: Some(daemon),
        store: config.store.path.clone(),
        config,
    }
}
