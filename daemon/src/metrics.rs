//! Metrics for Prometheus, and the health check, on a listener of their own
//! (`metrics.listen`, off by default): `GET /metrics` in Prometheus's text
//! format, `GET /healthz`. The move path only adds to counters of its own
//! thread (`counters`); a scrape sums them and reads what the daemon keeps
//! anyway (connections, the store's queue and commit times, through
//! [`StoreStats`], which sits below both: the metrics import nothing of the
//! store, and the store nothing of the metrics). The threads' counters are
//! the process's: a process runs one daemon, save in the tests.

pub mod counters;
mod exposition;
mod http;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};

use crate::admission::Admission;
use crate::store_stats::StoreStats;

pub use http::serve;

/// Games in play in this process.
static GAMES_IN_PLAY: AtomicI64 = AtomicI64::new(0);

/// Engine jobs sent and not yet begun.
static ENGINE_QUEUE: AtomicI64 = AtomicI64::new(0);

/// Connections admitted on each port, and TLS handshakes that failed, of
/// one daemon: counted as they happen (an accept is not on the move path),
/// by the listeners that share it.
#[derive(Debug, Default)]
pub struct Doors([AtomicU64; 4]);

/// Where a connection came in, or how its handshake failed.
#[derive(Clone, Copy, Debug)]
pub enum Door {
    /// Admitted on the plain port.
    Plain = 0,
    /// Admitted on the TLS port (its handshake yet to come).
    Tls = 1,
    /// A TLS handshake the client broke off or spoke wrongly.
    HandshakeRefused = 2,
    /// A TLS handshake the login deadline ended.
    HandshakeLate = 3,
}

impl Doors {
    /// One more connection or failed handshake, as `door` says.
    pub fn count(&self, door: Door) {
        if let Some(slot) = self.0.get(door as usize) {
            slot.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// The counts, in the order of [`Door`].
    fn counts(&self) -> [u64; 4] {
        self.0.each_ref().map(|slot| slot.load(Ordering::Relaxed))
    }
}

/// A game began (or came back after a restart).
pub fn game_begun() {
    GAMES_IN_PLAY.fetch_add(1, Ordering::Relaxed);
}

/// A game in play ended.
pub fn game_over() {
    GAMES_IN_PLAY.fetch_sub(1, Ordering::Relaxed);
}

/// An engine job was sent to the pool.
pub fn engine_job_sent() {
    ENGINE_QUEUE.fetch_add(1, Ordering::Relaxed);
}

/// The pool took an engine job.
pub fn engine_job_taken() {
    ENGINE_QUEUE.fetch_sub(1, Ordering::Relaxed);
}

/// What a scrape and the health check read.
pub struct Sources {
    /// The connection places.
    pub admission: Arc<Admission>,
    /// The store's writer.
    pub store: Arc<StoreStats>,
    /// Set once the daemon begins to stop.
    pub stopping: Arc<AtomicBool>,
    /// A cluster node's lease and counts; `None` for a single daemon.
    pub node: Option<Arc<crate::node_state::NodeState>>,
    /// Connections by port, failed handshakes.
    pub doors: Arc<Doors>,
}

/// Whether the daemon serves: `Err` with why not.
fn health(sources: &Sources) -> Result<(), &'static str> {
    if sources.stopping.load(Ordering::Relaxed) {
        return Err("stopping");
    }
    if sources.store.refusing() {
        return Err("the store refuses writes");
    }
    match sources.node.as_ref().map(|node| node.standing()) {
        Some(crate::rules::lease::Standing::Lapsed) => Err("the node's lease lapsed"),
        Some(crate::rules::lease::Standing::Lost) => Err("the node was declared dead"),
        _ => Ok(()),
    }
}

/// The gauges now.
fn gauges(sources: &Sources) -> exposition::Gauges {
    exposition::Gauges {
        games_in_play: GAMES_IN_PLAY.load(Ordering::Relaxed).max(0),
        connections: i64::try_from(sources.admission.connections()).unwrap_or(i64::MAX),
        store_queue: i64::try_from(sources.store.queued()).unwrap_or(i64::MAX),
        engine_queue: ENGINE_QUEUE.load(Ordering::Relaxed).max(0),
        node: sources.node.as_ref().map(|node| node.counts()),
        checkpoints: sources.store.checkpoints(),
        doors: sources.doors.counts(),
    }
}

/// A scrape of a cluster's node with nothing counted yet: every metric
/// flipd exports, each with its type and help line. The metrics reference
/// (docs/reference/metrics.md) is made from it, so that it names every
/// metric and only those.
pub fn every_metric() -> String {
    let node = crate::node_state::NodeState::default();
    // A node with a bus: its metrics too.
    node.bus_link(false);
    let gauges = exposition::Gauges {
        node: Some(node.counts()),
        ..exposition::Gauges::default()
    };
    exposition::text(
        counters::Totals::default(),
        counters::Durations::default(),
        gauges,
    )
}
