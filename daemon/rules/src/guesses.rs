//! Wrong passwords, counted so that parallel connections do not multiply
//! the guesses and nobody else's failures cost the owner anything. Pure: no
//! I/O, no clock reads (each call takes its moment).
//!
//! A guess (a password checked against a registered name) is begun before
//! its hash and settled after it. Three records may refuse it at once,
//! without hashing, with how long to wait:
//!
//! - the name from this address: one guess at a time, and after each
//!   failure a back-off (`delay`, doubled per failure in a row, at most
//!   `delay_max`) that every connection from the address waits out;
//! - the address, over every name: `per_address` failures free (as many
//!   at once), then one guess at a time, each after a back-off that doubles
//!   likewise;
//! - the name, over every address: past `per_name` failures, guesses from
//!   addresses that have failed for the name are refused for the name's
//!   back-off and come one at a time. An address that has not failed for the
//!   name is never held by it: the owner does not pay for an attack.
//!
//! A right password clears only its own record (the name from that
//! address): it resets nobody else's back-off, and not the counts of its
//! address or its name, which an attacker could otherwise reset by logging
//! in to an account of their own. What a record counts is forgotten
//! `FORGET_AFTER` after its last failure; each map keeps at most its bound
//! of records (see [`crate::bounded`]). Names are counted without
//! regard to case, so that `Ann` and `ann` share their counts.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use crate::bounded::{Forgettable, make_room};
use crate::peer::PeerKey;

/// Failures older than this (since a record's last) are forgotten.
pub const FORGET_AFTER: Duration = Duration::from_secs(15 * 60);

/// The most records each map keeps (beyond those with a guess under way).
pub const MAX_TRACKED: usize = 10_000;

/// The limits guesses are counted under (the daemon's `passwords` settings).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GuessLimits {
    /// The back-off after the first failure past a record's free ones.
    pub delay: Duration,
    /// The longest back-off.
    pub delay_max: Duration,
    /// Failures an address has free, over every name.
    pub per_address: u32,
    /// Failures a name has free, over every address.
    pub per_name: u32,
}

/// Why a guess was refused, and how long until one may be tried.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// Too many wrong passwords for the name (from this address, or from
    /// addresses that failed, this one among them).
    ForName(Duration),
    /// Too many wrong passwords from this address.
    FromAddress(Duration),
}

impl Refusal {
    /// How long to wait.
    pub fn wait(self) -> Duration {
        match self {
            Refusal::ForName(wait) | Refusal::FromAddress(wait) => wait,
        }
    }
}

/// A guess begun: to be settled (or released) once.
#[derive(Debug, PartialEq, Eq)]
pub struct Guess {
    name: String,
    peer: PeerKey,
    /// The address had failed for the name: the name's record counts this
    /// guess as under way.
    under_name: bool,
    /// Neither the name from this address nor the address had failed.
    clean: bool,
}

impl Guess {
    /// Whether the guess comes from an address with no failure on record:
    /// the owner, most likely, served before addresses that failed.
    pub fn is_clean(&self) -> bool {
        self.clean
    }
}

/// One record's failures.
#[derive(Clone, Copy, Debug)]
struct Record {
    failures: u32,
    in_flight: u32,
    last: Instant,
    /// No guess past the free failures is begun before this.
    not_before: Instant,
}

impl Record {
    fn new(now: Instant) -> Record {
        Record {
            failures: 0,
            in_flight: 0,
            last: now,
            not_before: now,
        }
    }

    /// The record as it stands at `now`: failures past `FORGET_AFTER` gone.
    fn at(mut self, now: Instant) -> Record {
        if self.failures > 0 && now.saturating_duration_since(self.last) >= FORGET_AFTER {
            self.failures = 0;
            self.not_before = now;
        }
        self
    }

    /// Whether one more guess may begin, with `free` failures free: within
    /// them any number at once; past them one at a time, after the back-off.
    fn admits(&self, free: u32, limits: &GuessLimits, now: Instant) -> Result<(), Duration> {
        if self.failures.saturating_add(self.in_flight) < free {
            return Ok(());
        }
        let left = self.not_before.saturating_duration_since(now);
        if self.in_flight == 0 && left.is_zero() {
            return Ok(());
        }
        // A guess under way: its end is not known; the least back-off is
        // the soonest another could be worth trying.
        Err(if self.in_flight > 0 {
            left.max(limits.delay)
        } else {
            left
        })
    }

    fn fail(&mut self, free: u32, limits: &GuessLimits, now: Instant) -> Duration {
        self.failures = self.failures.saturating_add(1);
        self.last = now;
        let backoff = backoff(self.failures, free, limits);
        self.not_before = now + backoff;
        backoff
    }
}

impl Forgettable for Record {
    fn is_spent(&self, now: Instant) -> bool {
        self.at(now).failures == 0
    }

    fn is_busy(&self) -> bool {
        self.in_flight > 0
    }

    fn last(&self) -> Instant {
        self.last
    }
}

/// The back-off after `failures` failures of which `free` were free: none
/// within them, then `delay` doubled for each failure past the first beyond
/// them, at most `delay_max`.
pub fn backoff(failures: u32, free: u32, limits: &GuessLimits) -> Duration {
    let Some(past) = failures.checked_sub(free) else {
        return Duration::ZERO;
    };
    let doublings = past.min(31);
    limits
        .delay
        .saturating_mul(1 << doublings)
        .min(limits.delay_max)
}

/// The failures on record (see the module docs).
#[derive(Clone, Debug)]
pub struct Guesses {
    pairs: HashMap<(String, PeerKey), Record>,
    addresses: HashMap<PeerKey, Record>,
    names: HashMap<String, Record>,
    bound: usize,
}

impl Default for Guesses {
    fn default() -> Guesses {
        Guesses::with_bound(MAX_TRACKED)
    }
}

impl Guesses {
    /// Records kept to `bound` per map.
    pub fn with_bound(bound: usize) -> Guesses {
        Guesses {
            pairs: HashMap::new(),
            addresses: HashMap::new(),
            names: HashMap::new(),
            bound,
        }
    }

    /// Begins a guess for `name` from `peer`, or refuses it (see the module
    /// docs). A guess begun must be settled or released.
    pub fn begin(
        &mut self,
        name: &str,
        peer: PeerKey,
        limits: &GuessLimits,
        now: Instant,
    ) -> Result<Guess, Refusal> {
        let name = name.to_ascii_lowercase();
        let pair_key = (name.clone(), peer);
        let at = |record: Option<&Record>| record.map_or(Record::new(now), |r| r.at(now));
        let pair = at(self.pairs.get(&pair_key));
        let address = at(self.addresses.get(&peer));
        let named = at(self.names.get(&name));
        pair.admits(1, limits, now).map_err(Refusal::ForName)?;
        address
            .admits(limits.per_address, limits, now)
            .map_err(Refusal::FromAddress)?;
        let under_name = pair.failures > 0;
        if under_name {
            named
                .admits(limits.per_name, limits, now)
                .map_err(Refusal::ForName)?;
        }
        let clean = pair.failures == 0 && address.failures == 0;
        self.store_pair(
            pair_key,
            Record {
                in_flight: pair.in_flight + 1,
                ..pair
            },
            now,
        );
        let address = Record {
            in_flight: address.in_flight + 1,
            ..address
        };
        self.store_address(peer, address, now);
        if under_name {
            let named = Record {
                in_flight: named.in_flight + 1,
                ..named
            };
            self.store_name(name.clone(), named, now);
        }
        Ok(Guess {
            name,
            peer,
            under_name,
            clean,
        })
    }

    /// The guess was checked: `right` clears its own record; a wrong one
    /// counts against the name from its address, the address and the name.
    /// Returns how long the connection that guessed waits for its answer
    /// (zero when right): the longest back-off its failure leaves its
    /// address under for the name, so that one connection that waits as
    /// told is never refused.
    pub fn settle(
        &mut self,
        guess: Guess,
        right: bool,
        limits: &GuessLimits,
        now: Instant,
    ) -> Duration {
        let pair_key = (guess.name.clone(), guess.peer);
        if right {
            // Only the failures of the name from this address are cleared.
            if let Some(pair) = self.pairs.get_mut(&pair_key) {
                pair.failures = 0;
                pair.not_before = now;
            }
            self.release(guess);
            return Duration::ZERO;
        }
        let (peer, name) = (guess.peer, guess.name.clone());
        self.release(guess);
        let address = self.fail_address(peer, limits, now);
        // The address has failed for the name now: the name's back-off
        // holds it too.
        let named = self.fail_name(name, limits, now);
        let mut pair = self
            .pairs
            .get(&pair_key)
            .map_or(Record::new(now), |r| r.at(now));
        let own = pair.fail(1, limits, now);
        self.store_pair(pair_key, pair, now);
        own.max(address).max(named)
    }

    /// The guess was not checked (the hash threads were busy, say): it
    /// counts as nothing.
    pub fn release(&mut self, guess: Guess) {
        let pair_key = (guess.name, guess.peer);
        done(&mut self.pairs, &pair_key);
        done(&mut self.addresses, &guess.peer);
        if guess.under_name {
            done(&mut self.names, &pair_key.0);
        }
    }

    /// Records kept, per map: the names from each address, the addresses,
    /// the names.
    pub fn tracked(&self) -> (usize, usize, usize) {
        (self.pairs.len(), self.addresses.len(), self.names.len())
    }

    fn fail_address(&mut self, peer: PeerKey, limits: &GuessLimits, now: Instant) -> Duration {
        let mut address = self
            .addresses
            .get(&peer)
            .map_or(Record::new(now), |r| r.at(now));
        let backoff = address.fail(limits.per_address, limits, now);
        self.store_address(peer, address, now);
        backoff
    }

    fn fail_name(&mut self, name: String, limits: &GuessLimits, now: Instant) -> Duration {
        let mut named = self
            .names
            .get(&name)
            .map_or(Record::new(now), |r| r.at(now));
        let backoff = named.fail(limits.per_name, limits, now);
        self.store_name(name, named, now);
        backoff
    }

    fn store_pair(&mut self, key: (String, PeerKey), record: Record, now: Instant) {
        make_room(&mut self.pairs, &key, self.bound, now);
        self.pairs.insert(key, record);
    }

    fn store_address(&mut self, key: PeerKey, record: Record, now: Instant) {
        make_room(&mut self.addresses, &key, self.bound, now);
        self.addresses.insert(key, record);
    }

    fn store_name(&mut self, key: String, record: Record, now: Instant) {
        make_room(&mut self.names, &key, self.bound, now);
        self.names.insert(key, record);
    }
}

/// One guess under `key` is over; a record with nothing left goes.
fn done<K: std::hash::Hash + Eq>(map: &mut HashMap<K, Record>, key: &K) {
    if let Some(record) = map.get_mut(key) {
        record.in_flight = record.in_flight.saturating_sub(1);
        if record.in_flight == 0 && record.failures == 0 {
            map.remove(key);
        }
    }
}
