//! A player taken out on its node for a game another node makes with it
//! (a tournament's round on the tournament's node, an accepted challenge
//! on the challenged's): it must be free (online, in no game in play, not
//! being seated elsewhere already); its open game closes and its seek
//! goes, as when a game is made with it here; and it takes no other seat
//! until that node made the game ([`LobbyCore::paired_away`]) or did not
//! ([`LobbyCore::free_taken_out`]).

use super::{Done, LobbyCore, LobbyEffect, done};
use crate::Name;
use crate::refusal::Refusal;

impl<R: Clone> LobbyCore<R> {
    /// Takes `name` out for a game another node makes with it (see the
    /// module docs); refused, changing nothing, if it is not free.
    pub fn take_out(&mut self, name: &Name) -> Result<Done<(), R>, Refusal> {
        let busy = self
            .people
            .get(&super::Caseless(name))
            .is_some_and(|p| p.pairing);
        if self.holder(name).is_none() || busy || self.check_free(name).is_err() {
            return Err(Refusal::NotFree(Name::clone(name)));
        }
        let mut effects = Vec::new();
        self.mark_taken_out(name, &mut effects);
        done((), effects)
    }

    /// Takes `name`, checked free, out: its open game closes, its seek
    /// goes, and it takes no other seat meanwhile.
    pub(super) fn mark_taken_out(&mut self, name: &Name, effects: &mut Vec<LobbyEffect<R>>) {
        self.vacate(name, effects);
        self.withdraw_seek(name);
        if let Some(person) = self.existing_person_mut(name) {
            person.pairing = true;
        }
    }

    /// The game `name` was taken out for was not made: it is free again.
    pub fn free_taken_out(&mut self, name: &Name) {
        if let Some(person) = self.existing_person_mut(name) {
            person.pairing = false;
        }
    }
}
