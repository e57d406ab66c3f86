//! Registrations per address: a name registered is kept for good, so one
//! peer must not register hundreds. Each address has an allowance of
//! `per_hour` registrations that refills at `per_hour` an hour (a token
//! bucket: up to `per_hour` at once, then one every `60 / per_hour`
//! minutes, so at most `per_hour` an hour in the long run). Pure: the moment
//! comes in as an argument.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use crate::bounded::{Forgettable, make_room};
use crate::peer::PeerKey;

/// The most addresses kept (an address whose allowance is full again is
/// forgotten first).
pub const MAX_TRACKED: usize = 10_000;

const HOUR: f64 = 3600.0;

/// One address's allowance.
#[derive(Clone, Copy, Debug)]
struct Allowance {
    left: f64,
    /// When `left` was last brought up to date.
    at: Instant,
}

impl Allowance {
    /// The allowance at `now`, refilled since `at`.
    fn at(self, per_hour: u32, now: Instant) -> Allowance {
        let full = f64::from(per_hour);
        let earned = now.saturating_duration_since(self.at).as_secs_f64() * full / HOUR;
        Allowance {
            left: (self.left + earned).min(full),
            at: now,
        }
    }
}

/// An allowance left alone for an hour is full again, whatever the rate:
/// forgetting it then changes nothing.
impl Forgettable for Allowance {
    fn is_spent(&self, now: Instant) -> bool {
        now.saturating_duration_since(self.at) >= Duration::from_secs(3600)
    }

    fn is_busy(&self) -> bool {
        false
    }

    fn last(&self) -> Instant {
        self.at
    }
}

/// The allowances of the addresses that registered lately.
#[derive(Debug)]
pub struct Registrations {
    by_address: HashMap<PeerKey, Allowance>,
    bound: usize,
}

impl Default for Registrations {
    fn default() -> Registrations {
        Registrations::with_bound(MAX_TRACKED)
    }
}

impl Registrations {
    /// Keeps at most `bound` addresses.
    pub fn with_bound(bound: usize) -> Registrations {
        Registrations {
            by_address: HashMap::new(),
            bound,
        }
    }

    /// Takes one registration from `peer`'s allowance, or says how long
    /// until there is one.
    pub fn take(&mut self, peer: PeerKey, per_hour: u32, now: Instant) -> Result<(), Duration> {
        let full = Allowance {
            left: f64::from(per_hour),
            at: now,
        };
        let allowance = self
            .by_address
            .get(&peer)
            .map_or(full, |a| a.at(per_hour, now));
        if allowance.left < 1.0 {
            let missing = 1.0 - allowance.left;
            let secs = missing * HOUR / f64::from(per_hour.max(1));
            return Err(Duration::try_from_secs_f64(secs).unwrap_or(Duration::MAX));
        }
        make_room(&mut self.by_address, &peer, self.bound, now);
        let left = allowance.left - 1.0;
        self.by_address.insert(peer, Allowance { left, at: now });
        Ok(())
    }

    /// Gives back a registration taken but not made (nothing was hashed).
    pub fn give_back(&mut self, peer: PeerKey, per_hour: u32, now: Instant) {
        if let Some(allowance) = self.by_address.get_mut(&peer) {
            let refilled = allowance.at(per_hour, now);
            allowance.left = (refilled.left + 1.0).min(f64::from(per_hour));
            allowance.at = now;
        }
    }

    /// Addresses kept.
    pub fn tracked(&self) -> usize {
        self.by_address.len()
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

    #[test]
    fn an_address_registers_its_allowance_then_one_every_share_of_an_hour() {
        let (mut r, t0) = (Registrations::default(), Instant::now());
        for _ in 0..10 {
            assert_eq!(r.take(peer(9), 10, t0), Ok(()));
        }
        assert_eq!(r.take(peer(9), 10, t0), Err(Duration::from_secs(360)));
        assert_eq!(r.take(peer(10), 10, t0), Ok(()), "others are not held");
        let later = t0 + Duration::from_secs(300);
        assert_eq!(r.take(peer(9), 10, later), Err(Duration::from_secs(60)));
        assert_eq!(r.take(peer(9), 10, t0 + Duration::from_secs(360)), Ok(()));
    }

    #[test]
    fn a_registration_given_back_may_be_made_again() {
        let (mut r, t0) = (Registrations::default(), Instant::now());
        r.take(peer(9), 1, t0).unwrap();
        assert!(r.take(peer(9), 1, t0).is_err());
        r.give_back(peer(9), 1, t0);
        assert_eq!(r.take(peer(9), 1, t0), Ok(()));
    }

    proptest! {
        /// However the registrations come, an address makes at most its
        /// allowance plus what the time since refills.
        #[test]
        fn an_address_registers_at_most_its_allowance_and_the_refill(
            steps in proptest::collection::vec((0u8..5, 0u64..120), 1..300),
            per_hour in 1u32..20,
        ) {
            let (mut r, t0) = (Registrations::with_bound(5), Instant::now());
            let mut now = t0;
            let mut made = [0usize; 5];
            for (from, wait_secs) in steps {
                now += Duration::from_secs(wait_secs);
                if r.take(peer(from), per_hour, now).is_ok()
                    && let Some(count) = made.get_mut(usize::from(from))
                {
                    *count += 1;
                }
            }
            let hours = (now - t0).as_secs_f64() / 3600.0;
            let most = f64::from(per_hour) * (1.0 + hours) + 1e-9;
            for count in made {
                prop_assert!(count as f64 <= most, "{count} > {most}");
            }
        }

        /// Many addresses: those kept stay within the bound.
        #[test]
        fn the_addresses_kept_stay_within_the_bound(
            steps in proptest::collection::vec((0u8..40, 0u64..600), 1..300),
        ) {
            let (mut r, mut now) = (Registrations::with_bound(5), Instant::now());
            for (from, wait_secs) in steps {
                now += Duration::from_secs(wait_secs);
                let _ = r.take(peer(from), 2, now);
                prop_assert!(r.tracked() <= 5);
            }
        }
    }
}
