//! Who may take a connection place, decided without I/O or clock reads (the
//! moment comes in as an argument). A connection arriving is refused when
//!
//! 1. the daemon holds its cap already (`Limits::max`): `server full`;
//! 2. its address holds `Limits::per_address` connections already, so that
//!    one peer cannot take every place with silent sockets;
//! 3. connections that have not logged in hold `Limits::anonymous_max`
//!    places already, unless the address is a player's: one with a
//!    connection logged in now, or one that had such a connection within
//!    `Limits::reconnect_window` (a player whose connection dropped, coming
//!    back to the seat kept for them). So sockets from many addresses that
//!    never log in cannot take the last places the players rely on.
//!
//! Every connection arrives not logged in; it stops counting as such when it
//! logs in, or when it goes. An address is tracked while it holds a
//! connection, and for `reconnect_window` after a player's connection from
//! it went; past `MAX_LINGERING` such lingering addresses the expired ones
//! are forgotten, and if that is not enough, all of them (which costs only
//! the reconnect privilege, never a count).

use std::collections::HashMap;
use std::time::{Duration, Instant};

use crate::peer::PeerKey;

/// Addresses tracked without a connection (see the module docs) before they
/// are pruned.
pub const MAX_LINGERING: usize = 16_384;

/// The limits a connection is admitted under (the daemon's live settings).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Connections held at once.
    pub max: usize,
    /// Connections from one address at once.
    pub per_address: u32,
    /// Connections that have not logged in, at once, from addresses that are
    /// not a player's.
    pub anonymous_max: usize,
    /// How long after a player's connection from an address went that the
    /// address still counts as a player's.
    pub reconnect_window: Duration,
}

impl Limits {
    /// `anonymous_max` for `max` places of which `reserved_percent` per cent
    /// (rounded down) are kept for players.
    pub fn anonymous_share(max: usize, reserved_percent: u8) -> usize {
        let reserved = max / 100 * usize::from(reserved_percent)
            + max % 100 * usize::from(reserved_percent) / 100;
        max.saturating_sub(reserved)
    }
}

/// Why a connection was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// Every place is taken.
    Full,
    /// The places left are kept for players.
    KeptForPlayers,
    /// The address holds this many (the limit) already.
    PerAddress(u32),
}

/// One address's connections.
#[derive(Clone, Copy, Debug, Default)]
struct Peer {
    connections: u32,
    /// Of those, logged in.
    players: u32,
    /// When a player's connection from here last logged in or went.
    player_seen: Option<Instant>,
}

impl Peer {
    fn is_players(&self, now: Instant, window: Duration) -> bool {
        self.players > 0
            || self
                .player_seen
                .is_some_and(|seen| now.saturating_duration_since(seen) < window)
    }
}

/// The places taken, by whom (see the module docs).
#[derive(Debug, Default)]
pub struct Places {
    total: usize,
    anonymous: usize,
    peers: HashMap<PeerKey, Peer>,
}

impl Places {
    /// Takes a place for a connection from `peer`, or says why not.
    pub fn admit(&mut self, peer: PeerKey, limits: &Limits, now: Instant) -> Result<(), Refusal> {
        if self.total >= limits.max {
            return Err(Refusal::Full);
        }
        let known = self.peers.get(&peer).copied().unwrap_or_default();
        if known.connections >= limits.per_address {
            return Err(Refusal::PerAddress(limits.per_address));
        }
        if self.anonymous >= limits.anonymous_max && !known.is_players(now, limits.reconnect_window)
        {
            return Err(Refusal::KeptForPlayers);
        }
        self.total += 1;
        self.anonymous += 1;
        self.peers.entry(peer).or_default().connections += 1;
        self.prune(now, limits.reconnect_window);
        Ok(())
    }

    /// A connection from `peer` logged in: it no longer counts as not logged
    /// in, and its address is a player's.
    pub fn logged_in(&mut self, peer: PeerKey, now: Instant) {
        self.anonymous = self.anonymous.saturating_sub(1);
        let entry = self.peers.entry(peer).or_default();
        entry.players = entry.players.saturating_add(1);
        entry.player_seen = Some(now);
    }

    /// A connection from `peer` that had logged in gave its name back and
    /// stays (a registration that could not be stored): it counts as not
    /// logged in again.
    pub fn logged_out(&mut self, peer: PeerKey) {
        self.anonymous = self.anonymous.saturating_add(1);
        if let Some(entry) = self.peers.get_mut(&peer) {
            entry.players = entry.players.saturating_sub(1);
        }
    }

    /// A connection from `peer` went (`logged_in`: it had logged in). Its
    /// place is free again; its address is forgotten unless a player's
    /// connection went from it within `window`.
    pub fn release(&mut self, peer: PeerKey, logged_in: bool, now: Instant, window: Duration) {
        self.total = self.total.saturating_sub(1);
        if !logged_in {
            self.anonymous = self.anonymous.saturating_sub(1);
        }
        let Some(entry) = self.peers.get_mut(&peer) else {
            return;
        };
        entry.connections = entry.connections.saturating_sub(1);
        if logged_in {
            entry.players = entry.players.saturating_sub(1);
            entry.player_seen = Some(now);
        }
        if entry.connections == 0 && !entry.is_players(now, window) {
            self.peers.remove(&peer);
        }
    }

    /// Connections held.
    pub fn total(&self) -> usize {
        self.total
    }

    /// Connections held that have not logged in.
    pub fn anonymous(&self) -> usize {
        self.anonymous
    }

    /// Addresses tracked.
    pub fn tracked(&self) -> usize {
        self.peers.len()
    }

    /// Connections held from `peer`.
    pub fn held_by(&self, peer: PeerKey) -> u32 {
        self.peers.get(&peer).map_or(0, |p| p.connections)
    }

    /// Keeps the addresses without a connection to `MAX_LINGERING`: the
    /// expired ones go first, then, if still too many, all of them.
    fn prune(&mut self, now: Instant, window: Duration) {
        if self.peers.len() <= self.total.saturating_add(MAX_LINGERING) {
            return;
        }
        self.peers
            .retain(|_, p| p.connections > 0 || p.is_players(now, window));
        if self.peers.len() > self.total.saturating_add(MAX_LINGERING) {
            self.peers.retain(|_, p| p.connections > 0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::net::{IpAddr, Ipv4Addr};

    fn peer(n: u8) -> PeerKey {
        PeerKey::of(IpAddr::V4(Ipv4Addr::new(127, 0, 0, n)))
    }

    const LIMITS: Limits = Limits {
        max: 10,
        per_address: 4,
        anonymous_max: 7,
        reconnect_window: Duration::from_secs(60),
    };

    #[test]
    fn the_share_for_anonymous_connections_rounds_the_reserve_down() {
        assert_eq!(Limits::anonymous_share(100_000, 10), 90_000);
        assert_eq!(Limits::anonymous_share(2, 10), 2);
        assert_eq!(Limits::anonymous_share(10, 10), 9);
        assert_eq!(Limits::anonymous_share(199, 50), 100);
        assert_eq!(Limits::anonymous_share(usize::MAX, 0), usize::MAX);
        assert_eq!(Limits::anonymous_share(usize::MAX, 100), 0);
    }

    #[test]
    fn one_address_holds_at_most_its_share() {
        let (mut places, now) = (Places::default(), Instant::now());
        for _ in 0..4 {
            assert_eq!(places.admit(peer(9), &LIMITS, now), Ok(()));
        }
        assert_eq!(
            places.admit(peer(9), &LIMITS, now),
            Err(Refusal::PerAddress(4))
        );
        assert_eq!(places.admit(peer(10), &LIMITS, now), Ok(()));
        places.release(peer(9), false, now, LIMITS.reconnect_window);
        assert_eq!(places.admit(peer(9), &LIMITS, now), Ok(()));
    }

    #[test]
    fn the_last_places_are_for_players_and_their_reconnects() {
        let (mut places, now) = (Places::default(), Instant::now());
        let player = peer(20);
        places.admit(player, &LIMITS, now).unwrap();
        places.logged_in(player, now);
        for n in 1..=7 {
            assert_eq!(places.admit(peer(n), &LIMITS, now), Ok(()), "{n}");
        }
        assert_eq!(
            places.admit(peer(8), &LIMITS, now),
            Err(Refusal::KeptForPlayers)
        );
        assert_eq!(places.admit(player, &LIMITS, now), Ok(()), "a player's");
        // The player's connections go; within the window it still may.
        places.release(player, false, now, LIMITS.reconnect_window);
        places.release(player, true, now, LIMITS.reconnect_window);
        let later = now + Duration::from_secs(59);
        assert_eq!(places.admit(player, &LIMITS, later), Ok(()));
        places.release(player, false, later, LIMITS.reconnect_window);
        let too_late = later + Duration::from_secs(60);
        assert_eq!(
            places.admit(player, &LIMITS, too_late),
            Err(Refusal::KeptForPlayers)
        );
        assert_eq!((places.total(), places.anonymous()), (7, 7));
    }

    #[test]
    fn past_the_cap_everyone_is_refused() {
        let (mut places, now) = (Places::default(), Instant::now());
        for n in 1..=10 {
            places.admit(peer(n), &LIMITS, now).unwrap();
            places.logged_in(peer(n), now);
        }
        assert_eq!(places.admit(peer(1), &LIMITS, now), Err(Refusal::Full));
    }

    /// What the test does to the places.
    #[derive(Clone, Debug)]
    enum Op {
        Arrive(u8),
        LogIn(usize),
        Go(usize),
        Wait(u64),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            3 => (0u8..6).prop_map(Op::Arrive),
            1 => any::<usize>().prop_map(Op::LogIn),
            2 => any::<usize>().prop_map(Op::Go),
            1 => (0u64..90).prop_map(Op::Wait),
        ]
    }

    /// The places as a list of connections, and the last time a player's
    /// connection was seen from each address: what `Places` must agree with.
    #[derive(Default)]
    struct Model {
        connections: Vec<(PeerKey, bool)>,
        player_seen: HashMap<PeerKey, Instant>,
    }

    impl Model {
        fn decide(&self, from: PeerKey, limits: &Limits, now: Instant) -> Result<(), Refusal> {
            let of_peer = self.connections.iter().filter(|(p, _)| *p == from);
            let anonymous = self.connections.iter().filter(|(_, l)| !l).count();
            let players_here = of_peer.clone().any(|(_, logged_in)| *logged_in)
                || self
                    .player_seen
                    .get(&from)
                    .is_some_and(|seen| now.duration_since(*seen) < limits.reconnect_window);
            if self.connections.len() >= limits.max {
                Err(Refusal::Full)
            } else if of_peer.count() >= limits.per_address as usize {
                Err(Refusal::PerAddress(limits.per_address))
            } else if anonymous >= limits.anonymous_max && !players_here {
                Err(Refusal::KeptForPlayers)
            } else {
                Ok(())
            }
        }
    }

    proptest! {
        /// Admission agrees with a model that counts every connection, each
        /// place is given back exactly once, and what is tracked stays
        /// bounded by the connections held.
        #[test]
        fn places_agree_with_a_count_of_every_connection(
            ops in proptest::collection::vec(op(), 0..200)
        ) {
            let (mut places, mut model) = (Places::default(), Model::default());
            let mut now = Instant::now();
            let window = LIMITS.reconnect_window;
            for op in ops {
                match op {
                    Op::Arrive(n) => {
                        let decided = model.decide(peer(n), &LIMITS, now);
                        prop_assert_eq!(places.admit(peer(n), &LIMITS, now), decided);
                        if decided.is_ok() {
                            model.connections.push((peer(n), false));
                        }
                    }
                    Op::LogIn(i) if !model.connections.is_empty() => {
                        let i = i % model.connections.len();
                        if let Some((p, logged_in)) = model.connections.get_mut(i)
                            && !*logged_in
                        {
                            *logged_in = true;
                            model.player_seen.insert(*p, now);
                            places.logged_in(*p, now);
                        }
                    }
                    Op::Go(i) if !model.connections.is_empty() => {
                        let (p, logged_in) = model.connections.remove(i % model.connections.len());
                        if logged_in {
                            model.player_seen.insert(p, now);
                        }
                        places.release(p, logged_in, now, window);
                    }
                    Op::Wait(secs) => now += Duration::from_secs(secs),
                    Op::LogIn(_) | Op::Go(_) => {}
                }
                let anonymous = model.connections.iter().filter(|(_, l)| !l).count();
                prop_assert_eq!(places.total(), model.connections.len());
                prop_assert_eq!(places.anonymous(), anonymous);
                prop_assert!(places.total() <= LIMITS.max);
                for n in 0..6 {
                    prop_assert!(places.held_by(peer(n)) <= LIMITS.per_address);
                }
                prop_assert!(places.tracked() <= places.total() + 6);
            }
            for (p, logged_in) in model.connections.drain(..) {
                places.release(p, logged_in, now, window);
            }
            // Only players' addresses linger, for their reconnects.
            prop_assert_eq!((places.total(), places.anonymous()), (0, 0));
            prop_assert!(places.tracked() <= model.player_seen.len());
        }
    }

    #[test]
    fn lingering_addresses_are_pruned_to_their_bound() {
        let (mut places, now) = (Places::default(), Instant::now());
        let window = Duration::from_secs(60);
        let limits = Limits {
            max: usize::MAX,
            per_address: 1,
            anonymous_max: usize::MAX,
            reconnect_window: window,
        };
        for n in 0..(MAX_LINGERING as u32 + 100) {
            let p = PeerKey::of(IpAddr::V4(Ipv4Addr::from(n)));
            places.admit(p, &limits, now).unwrap();
            places.logged_in(p, now);
            places.release(p, true, now, window);
        }
        assert!(
            places.tracked() <= MAX_LINGERING + 1,
            "{}",
            places.tracked()
        );
        assert_eq!(places.total(), 0);
    }
}
