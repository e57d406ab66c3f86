//! A cluster node's lease, as the node judges it itself: the database
//! decides who is alive (a node whose lease passed by the database's clock
//! may be declared dead and its games taken), so a node must stop
//! acknowledging anything before the database could think it dead. It
//! counts its lease from the moment it *sent* each renewal that
//! succeeded: the database stamps the lease later than that, so the node's
//! reckoning always ends first.
//!
//! A lease that ran out without anyone declaring the node dead comes back
//! with the next renewal (nobody took anything meanwhile); one the database
//! refuses to renew (the node was declared dead, its games are being taken)
//! is lost for good: the node stops and comes back as a new incarnation.

use std::time::Duration;

use crate::clock::Moment;

/// Where a node's lease stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Standing {
    /// Renewed within its length: the node acknowledges writes.
    Held,
    /// Not renewed lately: the node acknowledges nothing until a renewal
    /// succeeds again.
    Lapsed,
    /// The database declared the node dead: it stops.
    Lost,
}

/// How a node stands on its cluster's bus (NATS), as its last renewal saw
/// it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BusStanding {
    /// How long its own link has been down; zero while it is up (or the
    /// node has no bus).
    pub down_for: Duration,
    /// Whether another live node's link had been up for a lease or more
    /// (so NATS itself is not down: this node alone is cut off).
    pub others_hear: bool,
}

/// A node's lease.
#[derive(Clone, Debug)]
pub struct Lease {
    length: Duration,
    /// When the last renewal that succeeded was sent.
    renewed: Moment,
    /// Since when it has been held without a lapse (the first renewal sent
    /// after the last lapse).
    held_since: Moment,
    lost: bool,
}

/// How much sooner than the database a node gives up its lease: room for
/// the two clocks running at slightly different rates.
pub const SAFETY_MARGIN: Duration = Duration::from_millis(200);

impl Lease {
    /// A lease of `length` taken by a registration sent at `sent`.
    pub fn taken(length: Duration, sent: Moment) -> Lease {
        Lease {
            length,
            renewed: sent,
            held_since: sent,
            lost: false,
        }
    }

    /// A renewal sent at `sent` succeeded. A renewal answered after a later
    /// one leaves the later one standing.
    pub fn renewed(&mut self, sent: Moment) {
        if self.standing(sent) == Standing::Lapsed {
            self.held_since = sent;
        }
        if sent > self.renewed {
            self.renewed = sent;
        }
    }

    /// Whether the node may declare others dead at `now`: only once it has
    /// held its own lease for a whole length. After the database was
    /// unreachable every node's lease passed alike; the first node back
    /// must give the others the same length to renew theirs before it
    /// judges them, or one outage would make it take every game.
    pub fn may_judge_others(&self, now: Moment) -> bool {
        self.standing(now) == Standing::Held
            && now.saturating_duration_since(self.held_since) >= self.length
    }

    /// Whether the node may renew its lease while its store's writer has
    /// had work it could not finish for `writer_stuck_for`: not once that
    /// is as long as the lease holds. A node that can acknowledge nothing
    /// (its writing connection hung, its commits in doubt) must let its
    /// lease pass so that the others take its games over, rather than keep
    /// them with no reply while its lease keeper's own connection renews.
    ///
    /// Nor may it while it has been cut off from the bus for as long, when
    /// the others still hear each other: nobody reaches its games, so they
    /// must go to a node that can be reached. When nobody hears anybody
    /// (NATS itself down or restarting) every node keeps its lease and its
    /// games, which its own players still play.
    pub fn may_renew(&self, writer_stuck_for: Duration, bus: BusStanding) -> bool {
        let good_for = self.length.saturating_sub(SAFETY_MARGIN);
        !self.lost && writer_stuck_for < good_for && !self.cut_off_from_bus(bus)
    }

    /// Whether `bus` says this node alone has been out of the bus's reach
    /// for as long as its lease holds.
    pub fn cut_off_from_bus(&self, bus: BusStanding) -> bool {
        bus.others_hear && bus.down_for >= self.length.saturating_sub(SAFETY_MARGIN)
    }

    /// The database would not renew it: the node was declared dead.
    pub fn refused(&mut self) {
        self.lost = true;
    }

    /// Where it stands at `now`.
    pub fn standing(&self, now: Moment) -> Standing {
        if self.lost {
            return Standing::Lost;
        }
        let good_for = self.length.saturating_sub(SAFETY_MARGIN);
        match now.saturating_duration_since(self.renewed) < good_for {
            true => Standing::Held,
            false => Standing::Lapsed,
        }
    }

    /// The lease's length.
    pub fn length(&self) -> Duration {
        self.length
    }
}

/// Whether `name` may name a node: 1 to 32 ASCII letters, digits, `-` or
/// `_`, so that it reads plainly in logs, metrics and the database.
pub fn valid_node_name(name: &str) -> bool {
    (1..=32).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn at(ms: u64) -> Moment {
        Moment::from_micros(ms * 1000)
    }

    #[test]
    fn a_lease_lapses_before_its_length_and_comes_back_with_a_renewal() {
        let mut lease = Lease::taken(Duration::from_secs(3), at(1000));
        assert_eq!(lease.standing(at(3700)), Standing::Held);
        assert_eq!(lease.standing(at(3800)), Standing::Lapsed);
        lease.renewed(at(3900));
        assert_eq!(lease.standing(at(4000)), Standing::Held);
    }

    #[test]
    fn a_node_judges_others_only_after_a_whole_lease_held_since_its_last_lapse() {
        let mut lease = Lease::taken(Duration::from_secs(3), at(0));
        assert!(!lease.may_judge_others(at(1000)), "just joined");
        lease.renewed(at(2500));
        assert!(lease.may_judge_others(at(3000)));
        // The database away for ten seconds: the lease lapsed.
        lease.renewed(at(13_000));
        assert!(!lease.may_judge_others(at(13_100)), "back from a lapse");
        lease.renewed(at(15_000));
        assert!(lease.may_judge_others(at(16_000)));
    }

    #[test]
    fn a_node_whose_writer_is_stuck_for_a_lease_stops_renewing() {
        let lease = Lease::taken(Duration::from_secs(3), at(0));
        let bus = BusStanding::default();
        assert!(lease.may_renew(Duration::ZERO, bus));
        assert!(lease.may_renew(Duration::from_millis(2700), bus));
        assert!(!lease.may_renew(Duration::from_millis(2800), bus));
        let mut lost = lease.clone();
        lost.refused();
        assert!(!lost.may_renew(Duration::ZERO, bus));
    }

    #[test]
    fn a_node_cut_off_from_the_bus_for_a_lease_stops_renewing_only_if_others_hear_each_other() {
        let lease = Lease::taken(Duration::from_secs(3), at(0));
        let cut = |ms, others_hear| BusStanding {
            down_for: Duration::from_millis(ms),
            others_hear,
        };
        assert!(lease.may_renew(Duration::ZERO, cut(2700, true)));
        assert!(!lease.may_renew(Duration::ZERO, cut(2800, true)));
        // NATS down for everybody: nobody gives its games up.
        assert!(lease.may_renew(Duration::ZERO, cut(60_000, false)));
        assert!(lease.cut_off_from_bus(cut(2800, true)));
        assert!(!lease.cut_off_from_bus(cut(2800, false)));
    }

    #[test]
    fn a_refused_renewal_loses_the_lease_for_good() {
        let mut lease = Lease::taken(Duration::from_secs(3), at(0));
        lease.refused();
        lease.renewed(at(10));
        assert_eq!(lease.standing(at(20)), Standing::Lost);
    }

    #[test]
    fn node_names() {
        assert!(valid_node_name("a"));
        assert!(valid_node_name("node-2_b"));
        for bad in ["", "a b", "é", "a.b", &"x".repeat(33)] {
            assert!(!valid_node_name(bad), "{bad:?}");
        }
    }

    proptest! {
        /// Whatever order renewals are answered in, the node holds its lease
        /// only while the last renewal it sent and saw succeed is younger
        /// than the length less the margin: never later than the database
        /// (which stamps each renewal at or after its sending) lets it run.
        #[test]
        fn never_held_past_the_database_s_reckoning(
            sends in proptest::collection::vec(0u64..20_000, 1..20),
            length_ms in 2000u64..6000,
            now in 0u64..30_000,
        ) {
            let mut lease = Lease::taken(Duration::from_millis(length_ms), at(0));
            for &sent in &sends {
                lease.renewed(at(sent));
            }
            let latest = sends.iter().copied().max().unwrap_or(0);
            if lease.standing(at(now)) == Standing::Held {
                prop_assert!(now < latest + length_ms);
            }
        }
    }
}
