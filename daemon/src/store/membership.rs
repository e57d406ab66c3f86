//! A cluster node's membership as the store gives it: the incarnation the
//! database numbered, the node about to join and the node that joined.
//! Plain data, below the PostgreSQL store that makes it and the cluster
//! that keeps the lease with it.

/// One start of a node: its name and the number the database gave it.
/// Games are owned by an incarnation, so a node that restarts (or stalled
/// past its lease) never writes to games it owned before.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Incarnation {
    pub node: String,
    pub number: i64,
}

/// This daemon as a node: its incarnation, and its lease's standing and
/// counts (shared with the writer, the lease keeper and the metrics).
#[derive(Clone, Debug)]
pub struct Member {
    pub incarnation: Incarnation,
    pub state: std::sync::Arc<crate::node_state::NodeState>,
}

/// A cluster node about to join: its name and its lease's length.
#[derive(Clone, Debug)]
pub struct Joining {
    pub node: String,
    pub lease: std::time::Duration,
}

/// What a node that joined needs to keep its lease: its membership, and
/// when the registration that took the lease was sent.
pub struct Joined {
    pub member: Member,
    /// The cluster's number (its NATS subjects carry it).
    pub cluster: String,
    pub lease: std::time::Duration,
    pub taken: std::time::Instant,
}
