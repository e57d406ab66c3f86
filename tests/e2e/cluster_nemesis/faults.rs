//! The faults of the run: each node's links to PostgreSQL and to NATS go
//! through proxies the run cuts (refusing, or dropping silently) and heals;
//! nodes are paused (SIGSTOP) and killed; PostgreSQL is cut from every
//! node at once. A node that stopped by itself (declared dead after a
//! fault longer than its lease) is started again, as its operator's
//! supervisor would.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use flipline_tests::*;

use super::players::Addrs;
use crate::cluster::{LEASE_SECS, node_config_with};

/// One node: its process, its configuration and its two proxies.
pub struct Node {
    pub daemon: ChildDaemon,
    config: PathBuf,
    pub postgres: Proxy,
    pub nats: Proxy,
}

/// What one fault does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    PostgresRefused,
    PostgresSilent,
    NatsRefused,
    NatsSilent,
    BothSilent,
    Paused,
    Killed,
    PostgresCutFromAll,
}

const KINDS: [Kind; 8] = [
    Kind::PostgresRefused,
    Kind::PostgresSilent,
    Kind::NatsRefused,
    Kind::NatsSilent,
    Kind::BothSilent,
    Kind::Paused,
    Kind::Killed,
    Kind::PostgresCutFromAll,
];

/// A fault as it was done: what, to which node, for how long, and when.
#[derive(Clone, Debug)]
pub struct Fault {
    pub kind: Kind,
    pub node: usize,
    pub length: Duration,
    pub began: Instant,
}

/// The three nodes.
pub struct Cluster {
    pub nodes: Vec<Node>,
    pub addrs: Addrs,
}

impl Cluster {
    /// Nodes `names` on one database (`url`, at `postgres`) and one NATS
    /// server (`nats`, at `nats_server`), each through proxies of its own.
    pub fn start(
        dir: &std::path::Path,
        (url, postgres): (&str, SocketAddr),
        (nats, nats_server): (&str, SocketAddr),
        names: &[&str],
    ) -> Cluster {
        let nodes: Vec<Node> = (names.iter())
            .map(|name| {
                let pg = Proxy::start(postgres);
                let bus = Proxy::start(nats_server);
                let url = url.replacen(&postgres.to_string(), &pg.addr.to_string(), 1);
                let nats = nats.replacen(&nats_server.to_string(), &bus.addr.to_string(), 1);
                let config = node_config_with(dir, name, &url, &nats);
                let daemon = ChildDaemon::start_with(&config);
                Node {
                    daemon,
                    config,
                    postgres: pg,
                    nats: bus,
                }
            })
            .collect();
        let addrs = nodes.iter().map(|n| n.daemon.addr).collect();
        Cluster {
            nodes,
            addrs: std::sync::Arc::new(std::sync::Mutex::new(addrs)),
        }
    }

    /// One fault drawn from `rng`, done and healed; then the nodes that
    /// stopped are started again, and the run waits a lease and two
    /// seconds for the cluster to settle before the next.
    pub fn strike(&mut self, rng: &mut Rng) -> Fault {
        let kind = KINDS[usize::try_from(rng.next_u64() % 8).unwrap_or(0)];
        let node = usize::try_from(rng.next_u64() % 3).unwrap_or(0);
        // From a quarter of the lease to twice the lease.
        let lease_ms = LEASE_SECS * 1000;
        let length = Duration::from_millis(lease_ms / 4 + rng.next_u64() % (lease_ms * 7 / 4));
        let began = Instant::now();
        eprintln!(
            "nemesis: {kind:?} node {node} for {} ms",
            length.as_millis()
        );
        self.begin(kind, node);
        std::thread::sleep(length);
        self.heal(kind, node);
        self.restart_stopped();
        std::thread::sleep(Duration::from_secs(LEASE_SECS + 2));
        self.restart_stopped();
        Fault {
            kind,
            node,
            length,
            began,
        }
    }

    fn begin(&mut self, kind: Kind, node: usize) {
        let at = &mut self.nodes[node];
        match kind {
            Kind::PostgresRefused => at.postgres.refuse(),
            Kind::PostgresSilent => at.postgres.silence(),
            Kind::NatsRefused => at.nats.refuse(),
            Kind::NatsSilent => at.nats.silence(),
            Kind::BothSilent => {
                at.postgres.silence();
                at.nats.silence();
            }
            Kind::Paused => at.daemon.pause(),
            Kind::Killed => at.daemon.kill(),
            Kind::PostgresCutFromAll => self.nodes.iter().for_each(|n| n.postgres.silence()),
        }
    }

    fn heal(&mut self, kind: Kind, node: usize) {
        match kind {
            Kind::Paused => self.nodes[node].daemon.resume(),
            Kind::Killed => {}
            _ => self.heal_all(),
        }
    }

    /// Every link carries everything again.
    pub fn heal_all(&self) {
        for node in &self.nodes {
            node.postgres.heal();
            node.nats.heal();
        }
    }

    /// Starts again each node that stopped (killed, or declared dead).
    pub fn restart_stopped(&mut self) {
        for (i, node) in self.nodes.iter_mut().enumerate() {
            if node.daemon.has_exited() {
                node.daemon = ChildDaemon::start_with(&node.config);
                let mut addrs = self
                    .addrs
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                addrs[i] = node.daemon.addr;
            }
        }
    }
}
