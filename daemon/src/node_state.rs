//! A cluster node's state as its parts share it: where its lease stands
//! (the lease keeper sets it, the store's writer reads it before every
//! batch, the health check reports it) and what the metrics count of it.
//! It sits below the store and the metrics, which import nothing of each
//! other.

use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};

use crate::rules::lease::Standing;

/// A node's shared state.
#[derive(Debug, Default)]
pub struct NodeState {
    /// 0: held; 1: lapsed; 2: lost.
    standing: AtomicU8,
    renewals: AtomicU64,
    renewal_failures: AtomicU64,
    games_claimed: AtomicU64,
    tourneys_claimed: AtomicU64,
    nodes_declared_dead: AtomicU64,
    remote_sent: AtomicU64,
    remote_served: AtomicU64,
    remote_resent: AtomicU64,
    pairings: AtomicU64,
    seeks_pooled: AtomicU64,
    /// The other live nodes, as the lease keeper last read them.
    peers: std::sync::Mutex<Vec<String>>,
    /// The lobby's leader and its epoch, as the lease keeper last read them.
    leader: std::sync::Mutex<Option<(String, i64)>>,
    /// Since when the store's writer has had work it could not finish (a
    /// batch under way, unreachable or in doubt), in microseconds from
    /// [`since_start`]'s origin, plus one; 0: none.
    writer_stuck_since: AtomicU64,
    /// Whether the bus's link to NATS is up.
    bus_up: std::sync::atomic::AtomicBool,
    /// Since when the bus's link has been as `bus_up` says, as
    /// `writer_stuck_since` counts; 0: the node has no bus.
    bus_since: AtomicU64,
    /// Messages to other nodes dropped because the bus's queue was full.
    bus_dropped: AtomicU64,
}

/// The microseconds from this process's first look at the clock to `at`.
fn since_start(at: std::time::Instant) -> u64 {
    static ORIGIN: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    let origin = *ORIGIN.get_or_init(std::time::Instant::now);
    u64::try_from(at.saturating_duration_since(origin).as_micros()).unwrap_or(u64::MAX)
}

const HELD: u8 = 0;
const LAPSED: u8 = 1;
const LOST: u8 = 2;

/// What the metrics show of a node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NodeCounts {
    pub renewals: u64,
    pub renewal_failures: u64,
    pub games_claimed: u64,
    /// Tournaments taken over from dead nodes.
    pub tourneys_claimed: u64,
    pub nodes_declared_dead: u64,
    /// Requests sent to other nodes (a `WATCH` of their games).
    pub remote_sent: u64,
    /// Requests of other nodes answered here.
    pub remote_served: u64,
    /// Players' commands a dead owner left unanswered, carried out (or
    /// answered as played) here.
    pub remote_resent: u64,
    /// Pairings of seeks this node ordered as the lobby's leader.
    pub pairings: u64,
    /// Seeks waiting in this node's pool (while it leads the lobby).
    pub seeks_pooled: u64,
    /// Whether the bus's link to NATS is up; `None` without a bus.
    pub bus_up: Option<bool>,
    /// Messages to other nodes dropped because the bus's queue was full.
    pub bus_dropped: u64,
}

impl NodeState {
    /// As the lease keeper judged it; a lease lost stays lost.
    pub fn set(&self, standing: Standing) {
        let value = match standing {
            Standing::Held => HELD,
            Standing::Lapsed => LAPSED,
            Standing::Lost => LOST,
        };
        let _ = self
            .standing
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |now| {
                (now != LOST).then_some(value)
            });
    }

    /// Where the lease stands.
    pub fn standing(&self) -> Standing {
        match self.standing.load(Ordering::Acquire) {
            HELD => Standing::Held,
            LAPSED => Standing::Lapsed,
            _ => Standing::Lost,
        }
    }

    /// A renewal succeeded, or failed (the database unreachable or slow).
    pub fn renewal(&self, succeeded: bool) {
        let counter = match succeeded {
            true => &self.renewals,
            false => &self.renewal_failures,
        };
        counter.fetch_add(1, Ordering::Relaxed);
    }

    /// Games taken over from dead nodes.
    pub fn claimed(&self, games: usize) {
        let games = u64::try_from(games).unwrap_or(u64::MAX);
        self.games_claimed.fetch_add(games, Ordering::Relaxed);
    }

    /// Tournaments taken over from dead nodes.
    pub fn claimed_tourneys(&self, tourneys: usize) {
        let tourneys = u64::try_from(tourneys).unwrap_or(u64::MAX);
        self.tourneys_claimed.fetch_add(tourneys, Ordering::Relaxed);
    }

    /// Nodes this one declared dead.
    pub fn declared_dead(&self, nodes: usize) {
        let nodes = u64::try_from(nodes).unwrap_or(u64::MAX);
        self.nodes_declared_dead.fetch_add(nodes, Ordering::Relaxed);
    }

    /// A request went to another node.
    pub fn remote_sent(&self) {
        self.remote_sent.fetch_add(1, Ordering::Relaxed);
    }

    /// A request of another node was answered here.
    pub fn remote_served(&self) {
        self.remote_served.fetch_add(1, Ordering::Relaxed);
    }

    /// A player's command a dead owner left unanswered came here again.
    pub fn remote_resent(&self) {
        self.remote_resent.fetch_add(1, Ordering::Relaxed);
    }

    /// As the lobby's leader, this node paired two seeks.
    pub fn paired(&self) {
        self.pairings.fetch_add(1, Ordering::Relaxed);
    }

    /// As the lobby's leader, this many seeks wait in the pool.
    pub fn set_seeks_pooled(&self, seeks: usize) {
        let seeks = u64::try_from(seeks).unwrap_or(u64::MAX);
        self.seeks_pooled.store(seeks, Ordering::Relaxed);
    }

    /// The other live nodes are these.
    pub fn set_peers(&self, peers: Vec<String>) {
        *self
            .peers
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = peers;
    }

    /// The other live nodes, as last read.
    pub fn peers(&self) -> Vec<String> {
        self.peers
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// The lobby's leader is this (as read); whether that changed.
    pub fn set_leader(&self, leader: Option<(String, i64)>) -> bool {
        let mut known = self
            .leader
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let changed = *known != leader;
        *known = leader;
        changed
    }

    /// The lobby's leader and its epoch, as last read.
    pub fn leader(&self) -> Option<(String, i64)> {
        self.leader
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// The writer has work it has not finished (a batch begun, a server
    /// unreachable, a commit in doubt): from now, unless it already had.
    pub fn writer_busy(&self) {
        let now = since_start(std::time::Instant::now()).saturating_add(1);
        let _ =
            self.writer_stuck_since
                .compare_exchange(0, now, Ordering::AcqRel, Ordering::Acquire);
    }

    /// The writer finished what it had (committed, or answered for good).
    pub fn writer_progressed(&self) {
        self.writer_stuck_since.store(0, Ordering::Release);
    }

    /// How long the writer has had work it could not finish, at `now`.
    pub fn writer_stuck_for(&self, now: std::time::Instant) -> std::time::Duration {
        elapsed(self.writer_stuck_since.load(Ordering::Acquire), now).unwrap_or_default()
    }

    /// The bus's link to NATS went up or down (the first call says the
    /// node has a bus, down until it connects).
    pub fn bus_link(&self, up: bool) {
        let now = since_start(std::time::Instant::now()).saturating_add(1);
        self.bus_up.store(up, Ordering::Release);
        self.bus_since.store(now, Ordering::Release);
    }

    /// Whether the bus's link is up and how long it has been so, at `now`;
    /// `None` for a node without a bus.
    pub fn bus_state(&self, now: std::time::Instant) -> Option<(bool, std::time::Duration)> {
        let since = elapsed(self.bus_since.load(Ordering::Acquire), now)?;
        Some((self.bus_up.load(Ordering::Acquire), since))
    }

    /// A message to another node was dropped: the bus's queue was full.
    /// Whether to say so in the log (the first, then one in 1,024).
    pub fn bus_dropped(&self) -> bool {
        let before = self.bus_dropped.fetch_add(1, Ordering::Relaxed);
        before.is_multiple_of(1024)
    }

    /// The counts now.
    pub fn counts(&self) -> NodeCounts {
        NodeCounts {
            renewals: self.renewals.load(Ordering::Relaxed),
            renewal_failures: self.renewal_failures.load(Ordering::Relaxed),
            games_claimed: self.games_claimed.load(Ordering::Relaxed),
            tourneys_claimed: self.tourneys_claimed.load(Ordering::Relaxed),
            nodes_declared_dead: self.nodes_declared_dead.load(Ordering::Relaxed),
            remote_sent: self.remote_sent.load(Ordering::Relaxed),
            remote_served: self.remote_served.load(Ordering::Relaxed),
            remote_resent: self.remote_resent.load(Ordering::Relaxed),
            pairings: self.pairings.load(Ordering::Relaxed),
            seeks_pooled: self.seeks_pooled.load(Ordering::Relaxed),
            bus_up: (self.bus_since.load(Ordering::Relaxed) != 0)
                .then(|| self.bus_up.load(Ordering::Relaxed)),
            bus_dropped: self.bus_dropped.load(Ordering::Relaxed),
        }
    }
}

/// The time from a stamp (microseconds since start, plus one; 0 for none)
/// to `now`.
fn elapsed(stamp: u64, now: std::time::Instant) -> Option<std::time::Duration> {
    let micros = since_start(now).saturating_sub(stamp.checked_sub(1)?);
    Some(std::time::Duration::from_micros(micros))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lost_lease_stays_lost() {
        let state = NodeState::default();
        assert_eq!(state.standing(), Standing::Held);
        state.set(Standing::Lapsed);
        assert_eq!(state.standing(), Standing::Lapsed);
        state.set(Standing::Lost);
        state.set(Standing::Held);
        assert_eq!(state.standing(), Standing::Lost);
    }

    #[test]
    fn the_writer_is_stuck_from_its_first_unfinished_work_until_it_progresses() {
        let state = NodeState::default();
        let later = |secs| std::time::Instant::now() + std::time::Duration::from_secs(secs);
        assert_eq!(state.writer_stuck_for(later(5)), std::time::Duration::ZERO);
        state.writer_busy();
        let stuck = state.writer_stuck_for(later(5));
        state.writer_busy();
        assert!(stuck >= std::time::Duration::from_secs(5), "{stuck:?}");
        assert!(
            state.writer_stuck_for(later(5)) >= stuck,
            "counted from the first"
        );
        state.writer_progressed();
        assert_eq!(state.writer_stuck_for(later(5)), std::time::Duration::ZERO);
    }
}
