//! The connection places every listener and session share: the shell around
//! [`crate::rules::admission::Places`], behind one lock taken only when a
//! connection arrives, logs in or goes (never on a line). A place taken is a
//! [`ConnectionSlot`] until a session takes it over; the session gives it
//! back when it drops (session/limits.rs), so each place is given back once.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use crate::reload::live::Live;
use crate::rules::admission::{Limits, Places, Refusal};
use crate::rules::peer::PeerKey;

/// The places taken (see the module docs).
#[derive(Debug, Default)]
pub struct Admission {
    places: Mutex<Places>,
    /// How long a player's address keeps the places kept for players after
    /// its last player went: the grace period of a seat, so that a player
    /// whose connection dropped comes back to it.
    reconnect_window: Duration,
}

impl Admission {
    /// Places whose players' addresses keep the reserve for `reconnect_window`.
    pub fn new(reconnect_window: Duration) -> Admission {
        Admission {
            places: Mutex::default(),
            reconnect_window,
        }
    }

    /// A place for a connection from `peer` under `max` places (the cap, or
    /// less where a descriptor table holds less) and the live limits.
    pub fn admit(
        self: &Arc<Self>,
        peer: PeerKey,
        max: usize,
        live: &Live,
    ) -> Result<ConnectionSlot, Refusal> {
        let limits = Limits {
            max,
            per_address: live.max_connections_per_address(),
            anonymous_max: Limits::anonymous_share(
                live.max_connections(),
                live.reserved_for_players_percent(),
            ),
            reconnect_window: self.reconnect_window,
        };
        self.lock().admit(peer, &limits, Instant::now())?;
        Ok(ConnectionSlot(Some((Arc::clone(self), peer))))
    }

    /// A connection from `peer` logged in.
    pub fn logged_in(&self, peer: PeerKey) {
        self.lock().logged_in(peer, Instant::now());
    }

    /// A connection from `peer` gave its name back and stays.
    pub fn logged_out(&self, peer: PeerKey) {
        self.lock().logged_out(peer);
    }

    /// A connection from `peer` went.
    pub fn release(&self, peer: PeerKey, logged_in: bool) {
        let window = self.reconnect_window;
        self.lock().release(peer, logged_in, Instant::now(), window);
    }

    /// Connections held now.
    pub fn connections(&self) -> usize {
        self.lock().total()
    }

    fn lock(&self) -> MutexGuard<'_, Places> {
        self.places.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Holds one place; gives it back when dropped, unless a session has taken
/// it over (see [`ConnectionSlot::hand_over`]).
#[derive(Debug)]
pub struct ConnectionSlot(Option<(Arc<Admission>, PeerKey)>);

impl ConnectionSlot {
    /// Where the connection comes from.
    pub fn peer(&self) -> Option<PeerKey> {
        self.0.as_ref().map(|(_, peer)| *peer)
    }

    /// The place now belongs to a session, which gives it back when it drops
    /// (one field fewer in every session).
    pub fn hand_over(mut self) {
        self.0 = None;
    }
}

impl Drop for ConnectionSlot {
    fn drop(&mut self) {
        if let Some((admission, peer)) = self.0.take() {
            admission.release(peer, false);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{IpAddr, Ipv4Addr};

    #[test]
    fn a_slot_not_handed_over_gives_its_place_back() {
        let live = Live::new(&crate::config::Config::embedded().unwrap());
        let admission = Arc::new(Admission::new(Duration::from_secs(60)));
        let peer = PeerKey::of(IpAddr::V4(Ipv4Addr::LOCALHOST));
        let slot = admission.admit(peer, 10, &live).unwrap();
        assert_eq!(slot.peer(), Some(peer));
        assert_eq!(admission.connections(), 1);
        drop(slot);
        assert_eq!(admission.connections(), 0);
        let kept = admission.admit(peer, 10, &live).unwrap();
        kept.hand_over();
        assert_eq!(admission.connections(), 1, "the session gives it back");
        admission.release(peer, false);
        assert_eq!(admission.connections(), 0);
    }
}
