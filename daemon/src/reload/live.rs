//! The settings a running daemon changes on SIGHUP (declared `live` in
//! config.rs; `reload/decision.rs` decides what a reload takes): the per-connection limits, the connection caps (in all, per
//! address, the places kept for players), the login deadline and the store
//! deadline. Each is an atomic that connections and listeners read where
//! they use it, so a reload needs no lock and no message to every
//! connection, and reading costs a plain load on the paths each line takes.
//! A setting read at a connection's start (the longest line, built into its
//! codec) applies to connections made after the reload; the others apply to
//! every connection at its next use.

use std::sync::atomic::{AtomicU8, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

use crate::config::{Config, RateLimit};
use crate::outbox::Bound;

/// The live values of the reloadable settings, shared by every connection.
#[derive(Debug)]
pub struct Live {
    per_second: AtomicU32,
    burst: AtomicU32,
    max_line_bytes: AtomicUsize,
    outbound_queue_lines: AtomicUsize,
    outbound_queue_bytes: AtomicUsize,
    idle_timeout_secs: AtomicU64,
    max_connections: AtomicUsize,
    max_connections_per_address: AtomicU32,
    reserved_for_players_percent: AtomicU8,
    login_deadline_secs: AtomicU64,
    store_deadline_ms: AtomicU64,
}

impl Live {
    /// The values of `config`.
    pub fn new(config: &Config) -> Live {
        let live = Live {
            per_second: AtomicU32::new(0),
            burst: AtomicU32::new(0),
            max_line_bytes: AtomicUsize::new(0),
            outbound_queue_lines: AtomicUsize::new(0),
            outbound_queue_bytes: AtomicUsize::new(0),
            idle_timeout_secs: AtomicU64::new(0),
            max_connections: AtomicUsize::new(0),
            max_connections_per_address: AtomicU32::new(0),
            reserved_for_players_percent: AtomicU8::new(0),
            login_deadline_secs: AtomicU64::new(0),
            store_deadline_ms: AtomicU64::new(0),
        };
        live.apply(config);
        live
    }

    /// Takes the values of `config`. Each is stored alone: a line handled
    /// meanwhile may see a new rate with the old burst, which is harmless.
    pub fn apply(&self, config: &Config) {
        let store = Ordering::Relaxed;
        self.per_second.store(config.rate_limit.per_second, store);
        self.burst.store(config.rate_limit.burst, store);
        self.max_line_bytes.store(config.max_line_bytes, store);
        self.outbound_queue_lines
            .store(config.outbound_queue_lines, store);
        self.outbound_queue_bytes
            .store(config.outbound_queue_bytes, store);
        self.idle_timeout_secs
            .store(config.idle_timeout_secs, store);
        self.max_connections.store(config.max_connections, store);
        self.max_connections_per_address
            .store(config.max_connections_per_address, store);
        self.reserved_for_players_percent
            .store(config.reserved_for_players_percent, store);
        self.login_deadline_secs
            .store(config.login_deadline_secs, store);
        self.store_deadline_ms
            .store(config.store_deadline_ms, store);
    }

    /// The rate limit on each connection's commands.
    pub fn rate_limit(&self) -> RateLimit {
        RateLimit {
            per_second: self.per_second.load(Ordering::Relaxed),
            burst: self.burst.load(Ordering::Relaxed),
        }
    }

    /// The longest command line, for connections made from now on.
    pub fn max_line_bytes(&self) -> usize {
        self.max_line_bytes.load(Ordering::Relaxed)
    }

    /// What may be queued for a client before it is disconnected: writes
    /// and their bytes.
    pub fn outbound_bound(&self) -> Bound {
        Bound {
            texts: self.outbound_queue_lines.load(Ordering::Relaxed),
            bytes: self.outbound_queue_bytes.load(Ordering::Relaxed),
        }
    }

    /// Silence after which a connection is closed.
    pub fn idle_timeout(&self) -> Duration {
        Duration::from_secs(self.idle_timeout_secs.load(Ordering::Relaxed))
    }

    /// Connections held at once.
    pub fn max_connections(&self) -> usize {
        self.max_connections.load(Ordering::Relaxed)
    }

    /// Connections from one address at once.
    pub fn max_connections_per_address(&self) -> u32 {
        self.max_connections_per_address.load(Ordering::Relaxed)
    }

    /// The share of `max_connections` (per cent) kept for players.
    pub fn reserved_for_players_percent(&self) -> u8 {
        self.reserved_for_players_percent.load(Ordering::Relaxed)
    }

    /// How long a connection may stay without logging in or watching.
    pub fn login_deadline(&self) -> Duration {
        Duration::from_secs(self.login_deadline_secs.load(Ordering::Relaxed))
    }

    /// The longest a command waits for the store.
    pub fn store_deadline(&self) -> Duration {
        Duration::from_millis(self.store_deadline_ms.load(Ordering::Relaxed))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reload_replaces_every_live_value() {
        let before = Config::embedded().unwrap();
        let mut config = before.clone();
        let live = Live::new(&config);
        assert_eq!(live.rate_limit(), config.rate_limit);
        config.rate_limit = RateLimit {
            per_second: 3,
            burst: 4,
        };
        config.max_line_bytes = 100;
        config.outbound_queue_lines = 20;
        config.outbound_queue_bytes = 5000;
        config.idle_timeout_secs = 7;
        config.max_connections = 9;
        config.max_connections_per_address = 3;
        config.reserved_for_players_percent = 20;
        config.login_deadline_secs = 4;
        config.store_deadline_ms = 300;
        // Every setting declared live is changed here, save the log filter
        // (the subscriber holds it): one declared live and not held here
        // fails this test until it is.
        let declared_live: Vec<String> = Config::settings()
            .into_iter()
            .filter(|s| s.live && s.name != "log_filter")
            .map(|s| s.name)
            .collect();
        assert_eq!(before.differences(&config), declared_live);
        live.apply(&config);
        assert_eq!(live.rate_limit(), config.rate_limit);
        assert_eq!(live.max_line_bytes(), 100);
        assert_eq!(
            live.outbound_bound(),
            Bound {
                texts: 20,
                bytes: 5000
            }
        );
        assert_eq!(live.idle_timeout(), Duration::from_secs(7));
        assert_eq!(live.max_connections(), 9);
        assert_eq!(live.max_connections_per_address(), 3);
        assert_eq!(live.reserved_for_players_percent(), 20);
        assert_eq!(live.login_deadline(), Duration::from_secs(4));
        assert_eq!(live.store_deadline(), Duration::from_millis(300));
    }
}
