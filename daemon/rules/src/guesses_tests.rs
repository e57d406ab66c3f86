//! The guess counts (`rules::guesses`): named cases, then properties over
//! random schedules of guesses from many connections and addresses.

use std::net::{IpAddr, Ipv4Addr};
use std::time::{Duration, Instant};

use proptest::prelude::*;

use super::guesses::{FORGET_AFTER, GuessLimits, Guesses, Refusal, backoff};
use crate::peer::PeerKey;

const LIMITS: GuessLimits = GuessLimits {
    delay: Duration::from_millis(250),
    delay_max: Duration::from_secs(8),
    per_address: 3,
    per_name: 5,
};

fn peer(n: u8) -> PeerKey {
    PeerKey::of(IpAddr::V4(Ipv4Addr::new(127, 0, 0, n)))
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// One wrong guess from `from` for `name`, begun and settled at `now`;
/// returns the back-off told.
fn fail(g: &mut Guesses, name: &str, from: PeerKey, now: Instant) -> Duration {
    let guess = g.begin(name, from, &LIMITS, now).unwrap();
    g.settle(guess, false, &LIMITS, now)
}

#[test]
fn backoffs_double_past_the_free_failures_up_to_the_cap() {
    let limits = GuessLimits {
        delay_max: ms(1500),
        ..LIMITS
    };
    let ms_of = |failures, free| backoff(failures, free, &limits).as_millis();
    let one_free: Vec<u128> = (1..=6).map(|n| ms_of(n, 1)).collect();
    assert_eq!(one_free, [250, 500, 1000, 1500, 1500, 1500]);
    assert_eq!(ms_of(2, 3), 0, "within the free ones");
    assert_eq!(ms_of(3, 3), 250);
    assert_eq!(ms_of(u32::MAX, 0), 1500);
}

#[test]
fn one_address_guesses_a_name_one_at_a_time_after_its_backoff() {
    let (mut g, t0) = (Guesses::default(), Instant::now());
    let first = g.begin("ann", peer(9), &LIMITS, t0).unwrap();
    assert_eq!(
        g.begin("Ann", peer(9), &LIMITS, t0),
        Err(Refusal::ForName(ms(250))),
        "one at a time, whatever the case"
    );
    assert_eq!(g.settle(first, false, &LIMITS, t0), ms(250));
    assert_eq!(
        g.begin("ann", peer(9), &LIMITS, t0 + ms(100)),
        Err(Refusal::ForName(ms(150)))
    );
    assert_eq!(fail(&mut g, "ann", peer(9), t0 + ms(250)), ms(500));
}

#[test]
fn an_address_has_its_free_failures_over_all_names_then_backs_off() {
    let (mut g, t0) = (Guesses::default(), Instant::now());
    let at_once: Vec<_> = ["a", "b", "c"]
        .iter()
        .map(|name| g.begin(name, peer(9), &LIMITS, t0).unwrap())
        .collect();
    assert_eq!(
        g.begin("d", peer(9), &LIMITS, t0),
        Err(Refusal::FromAddress(ms(250))),
        "three free, at once too"
    );
    for guess in at_once {
        g.settle(guess, false, &LIMITS, t0);
    }
    assert_eq!(
        g.begin("d", peer(9), &LIMITS, t0),
        Err(Refusal::FromAddress(ms(250)))
    );
    assert_eq!(
        fail(&mut g, "d", peer(9), t0 + ms(250)),
        ms(500),
        "the guesser waits the address's back-off, the longer"
    );
    assert_eq!(
        g.begin("e", peer(9), &LIMITS, t0 + ms(300)),
        Err(Refusal::FromAddress(ms(450))),
        "the fourth failure, the second past the free ones, doubled it"
    );
    assert!(
        g.begin("e", peer(10), &LIMITS, t0).is_ok(),
        "others are not held"
    );
}

#[test]
fn past_its_ceiling_a_name_refuses_only_addresses_that_failed_for_it() {
    let (mut g, t0) = (Guesses::default(), Instant::now());
    for n in 1..=6 {
        fail(&mut g, "ann", peer(n), t0);
    }
    // Each address's own back-off (250 ms) is over; the name's (500 ms: the
    // sixth failure, five free) is not.
    let later = t0 + ms(300);
    let refused = Err(Refusal::ForName(ms(200)));
    assert_eq!(g.begin("ann", peer(1), &LIMITS, later), refused);
    let owner = g.begin("ann", peer(20), &LIMITS, later).unwrap();
    assert!(owner.is_clean(), "the owner's address has not failed");
    assert_eq!(g.settle(owner, true, &LIMITS, later), Duration::ZERO);
    assert_eq!(
        g.begin("ann", peer(1), &LIMITS, later),
        refused,
        "the owner's right password reset nobody's back-off"
    );
}

#[test]
fn the_name_ceiling_lets_failed_addresses_through_one_at_a_time() {
    let (mut g, t0) = (Guesses::default(), Instant::now());
    for n in 1..=5 {
        fail(&mut g, "ann", peer(n), t0);
    }
    // The name's back-off after five failures with five free: 250 ms.
    let after = t0 + ms(250);
    let one = g.begin("ann", peer(1), &LIMITS, after).unwrap();
    assert!(!one.is_clean());
    assert!(matches!(
        g.begin("ann", peer(2), &LIMITS, after),
        Err(Refusal::ForName(_))
    ));
    g.settle(one, false, &LIMITS, after);
    assert_eq!(
        g.begin("ann", peer(2), &LIMITS, after + ms(100)),
        Err(Refusal::ForName(ms(400))),
        "the name's back-off doubled"
    );
}

#[test]
fn a_right_password_clears_only_its_own_record() {
    let (mut g, t0) = (Guesses::default(), Instant::now());
    fail(&mut g, "ann", peer(9), t0);
    fail(&mut g, "ann", peer(10), t0);
    let later = t0 + ms(250);
    let right = g.begin("ann", peer(10), &LIMITS, later).unwrap();
    g.settle(right, true, &LIMITS, later);
    assert!(g.begin("ann", peer(10), &LIMITS, later).is_ok(), "cleared");
    assert_eq!(fail(&mut g, "ann", peer(9), later), ms(500), "not reset");
}

#[test]
fn a_released_guess_counts_as_nothing_and_failures_are_forgotten() {
    let (mut g, t0) = (Guesses::default(), Instant::now());
    let guess = g.begin("ann", peer(9), &LIMITS, t0).unwrap();
    g.release(guess);
    assert_eq!(g.tracked(), (0, 0, 0));
    fail(&mut g, "ann", peer(9), t0);
    fail(&mut g, "ann", peer(9), t0 + ms(250));
    let much_later = t0 + FORGET_AFTER + ms(250);
    let guess = g.begin("ann", peer(9), &LIMITS, much_later).unwrap();
    assert!(guess.is_clean(), "forgotten");
    assert_eq!(g.settle(guess, false, &LIMITS, much_later), ms(250));
}

/// A step of a schedule: connection `conn` tries `name`, or finishes the
/// guess it has under way (always a wrong password: an attack), or time
/// passes.
#[derive(Clone, Debug)]
enum Step {
    Try { conn: usize, name: u8 },
    Settle { conn: usize },
    Wait(u64),
}

fn step(connections: usize, names: u8) -> impl Strategy<Value = Step> {
    prop_oneof![
        3 => (0..connections, 0..names).prop_map(|(conn, name)| Step::Try { conn, name }),
        2 => (0..connections).prop_map(|conn| Step::Settle { conn }),
        1 => (0u64..400).prop_map(Step::Wait),
    ]
}

/// Runs `steps` for `connections` connections from `from(conn)`; returns the
/// guesses begun (hashed) per address and per name from the first address,
/// and the time it took.
fn attack(
    g: &mut Guesses,
    steps: &[Step],
    from: impl Fn(usize) -> PeerKey,
    t0: Instant,
) -> (Vec<(PeerKey, String)>, Duration) {
    let mut now = t0;
    let mut under_way: std::collections::HashMap<usize, super::guesses::Guess> =
        std::collections::HashMap::new();
    let mut begun = Vec::new();
    for step in steps {
        match step {
            Step::Try { conn, name } if !under_way.contains_key(conn) => {
                let name = format!("n{name}");
                if let Ok(guess) = g.begin(&name, from(*conn), &LIMITS, now) {
                    begun.push((from(*conn), name));
                    under_way.insert(*conn, guess);
                }
            }
            Step::Settle { conn } => {
                if let Some(guess) = under_way.remove(conn) {
                    g.settle(guess, false, &LIMITS, now);
                }
            }
            Step::Wait(millis) => now += ms(*millis),
            Step::Try { .. } => {}
        }
    }
    (begun, now - t0)
}

/// The most guesses that may begin within `elapsed` with `free` failures
/// free: the free ones, then one per least back-off.
fn ceiling(free: u32, elapsed: Duration) -> usize {
    let spaced = elapsed.as_millis() / LIMITS.delay.as_millis();
    free as usize + 1 + spaced as usize
}

proptest! {
    /// However many connections one address opens, and whenever they try,
    /// it gets no more guesses than one connection that waits as told: the
    /// free failures, then one per back-off, for every name together and
    /// for each name (one free there).
    #[test]
    fn parallel_connections_from_one_address_get_no_more_guesses_than_one(
        connections in 1usize..40,
        steps in proptest::collection::vec(step(40, 4), 0..300),
    ) {
        let (mut g, t0) = (Guesses::default(), Instant::now());
        let steps: Vec<Step> = steps
            .into_iter()
            .map(|s| match s {
                Step::Try { conn, name } => Step::Try { conn: conn % connections, name },
                Step::Settle { conn } => Step::Settle { conn: conn % connections },
                wait => wait,
            })
            .collect();
        let (begun, elapsed) = attack(&mut g, &steps, |_| peer(9), t0);
        prop_assert!(begun.len() <= ceiling(LIMITS.per_address, elapsed));
        for name in 0..4 {
            let name = format!("n{name}");
            let for_name = begun.iter().filter(|(_, n)| *n == name).count();
            prop_assert!(for_name <= ceiling(0, elapsed), "{name}: {for_name}");
        }
    }

    /// Whatever an attack from other addresses did, the owner from an
    /// address that never failed is never refused, and the owner's right
    /// password changes nothing for the attackers.
    #[test]
    fn the_owner_from_a_clean_address_is_never_refused_and_resets_nobody(
        steps in proptest::collection::vec(step(20, 3), 0..300),
        probe in 0usize..20,
    ) {
        let (mut g, t0) = (Guesses::default(), Instant::now());
        let from = |conn: usize| peer(1 + (conn % 5) as u8);
        let (_, elapsed) = attack(&mut g, &steps, from, t0);
        let now = t0 + elapsed;
        for name in ["n0", "n1", "n2"] {
            let without = g.clone().begin(name, from(probe), &LIMITS, now);
            let owner = g.begin(name, peer(200), &LIMITS, now);
            prop_assert!(owner.is_ok(), "{name}: {owner:?}");
            if let Ok(owner) = owner {
                prop_assert!(owner.is_clean());
                g.settle(owner, true, &LIMITS, now);
            }
            let with = g.clone().begin(name, from(probe), &LIMITS, now);
            prop_assert_eq!(without.map(|_| ()), with.map(|_| ()));
        }
    }

    /// One connection alone that waits as long as each answer told it is
    /// never refused, whatever names it tries.
    #[test]
    fn one_connection_that_waits_as_told_is_never_refused(
        tries in proptest::collection::vec((0u8..4, 0u64..300), 1..60),
    ) {
        let (mut g, mut now) = (Guesses::default(), Instant::now());
        for (name, extra) in tries {
            let begun = g.begin(&format!("n{name}"), peer(9), &LIMITS, now);
            prop_assert!(begun.is_ok(), "{begun:?}");
            if let Ok(guess) = begun {
                now += g.settle(guess, false, &LIMITS, now) + ms(extra);
            }
        }
    }

    /// Many addresses and names: what is kept stays within the bound (plus
    /// the guesses under way, which are never dropped).
    #[test]
    fn tracked_state_stays_bounded(
        steps in proptest::collection::vec(step(60, 50), 0..400),
    ) {
        let (mut g, t0) = (Guesses::with_bound(8), Instant::now());
        let from = |conn: usize| peer(conn as u8);
        let mut now = t0;
        let mut under_way = std::collections::HashMap::new();
        for step in &steps {
            match step {
                Step::Try { conn, name } if !under_way.contains_key(conn) => {
                    if let Ok(guess) = g.begin(&format!("n{name}"), from(*conn), &LIMITS, now) {
                        under_way.insert(*conn, guess);
                    }
                }
                Step::Settle { conn } => {
                    if let Some(guess) = under_way.remove(conn) {
                        g.settle(guess, false, &LIMITS, now);
                    }
                }
                Step::Wait(millis) => now += ms(*millis),
                Step::Try { .. } => {}
            }
            let (pairs, addresses, names) = g.tracked();
            let busy = under_way.len();
            prop_assert!(pairs <= 8 + busy && addresses <= 8 + busy && names <= 8 + busy);
        }
    }
}
