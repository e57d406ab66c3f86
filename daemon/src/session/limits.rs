//! What a connection may take: its place in the connection count (taken by
//! the listener as a `ConnectionSlot`, see crate::admission; the session's
//! `Drop` gives it back), the count of sessions on each thread that bounds a
//! descriptor table (`held_here`), the rate limit on commands (`TokenBucket`)
//! and the idle timeout. Each of them costs every connection, idle ones too,
//! so they keep little in it: the rate, the burst and the timeout are the
//! daemon's settings, the time of the last input serves both the bucket and
//! the idle check, and idle connections are found by the lobby's sweep rather
//! than by a timer each.

use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use actix::{ActorContext, Context};

use super::Session;
use crate::config::RateLimit;
use crate::waits::seconds;

// The session holds its place in the connection count (see
// `ConnectionSlot::hand_over`): given back here, once, whatever stopped it.
impl Drop for Session {
    fn drop(&mut self) {
        let logged_in = self.name.is_some();
        self.shared.admission.release(self.peer, logged_in);
        HELD_HERE.with(|held| held.set(held.get().saturating_sub(1)));
    }
}

thread_local! {
    /// Sessions on this thread. A session never leaves the thread it starts
    /// on, so with a descriptor table per worker this counts the connections
    /// in this thread's table.
    pub(super) static HELD_HERE: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Sessions on the calling thread (see `HELD_HERE`).
pub fn held_here() -> usize {
    HELD_HERE.with(std::cell::Cell::get)
}

/// A connection on this thread that is not a session yet (a TLS handshake
/// under way), counted in `HELD_HERE` as one, since it holds a descriptor
/// as one does; dropped before its session starts, on the same thread.
pub struct HeldHere(());

impl HeldHere {
    /// Counts one more connection on this thread until dropped.
    pub fn now() -> HeldHere {
        HELD_HERE.with(|held| held.set(held.get() + 1));
        HeldHere(())
    }
}

impl Drop for HeldHere {
    fn drop(&mut self) {
        HELD_HERE.with(|held| held.set(held.get().saturating_sub(1)));
    }
}

/// Per-connection rate limit: a bucket of `burst` tokens refilled at `rate`/s.
/// The rate and the burst are the daemon's, and the time of the last refill is
/// the session's last input: both are passed in rather than kept in every
/// connection.
pub(super) struct TokenBucket {
    /// `f32`: it packs beside the line codec in every session.
    tokens: f32,
}

impl TokenBucket {
    pub(super) fn new(limit: RateLimit) -> TokenBucket {
        TokenBucket {
            tokens: limit.burst as f32,
        }
    }

    /// Adds what `elapsed` earns, up to the burst.
    pub(super) fn refill(&mut self, limit: RateLimit, elapsed: Duration) {
        let refill = elapsed.as_secs_f32() * limit.per_second as f32;
        self.tokens = (self.tokens + refill).min(limit.burst as f32);
    }

    /// Takes a token if there is one.
    pub(super) fn take(&mut self) -> bool {
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            true
        } else {
            false
        }
    }

    /// How long until the next token: zero while one is there, `None` when
    /// the bucket never refills (a rate of 0).
    pub(super) fn wait(&self, limit: RateLimit) -> Option<Duration> {
        let missing = (1.0 - self.tokens).max(0.0);
        if missing == 0.0 {
            return Some(Duration::ZERO);
        }
        if limit.per_second == 0 {
            return None;
        }
        Some(Duration::from_secs_f32(missing / limit.per_second as f32))
    }
}

/// The `ERR 429` message: what happened and how long to wait, in seconds
/// rounded up to the millisecond, so that waiting that long is enough.
pub(super) fn slow_down_message(wait: Option<Duration>) -> String {
    match wait {
        Some(wait) => format!("too many commands, slow down: wait {}", seconds(wait)),
        None => "too many commands, slow down: no more are accepted".to_string(),
    }
}

/// A moment of a connection's input, as microseconds since the first such
/// moment the process made: 8 bytes where an `Instant` takes 16, in every
/// session.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct Moment(u64);

impl Moment {
    /// Now.
    pub(super) fn now() -> Moment {
        Moment::of(Instant::now())
    }

    /// The moment `instant` was.
    pub(super) fn of(instant: Instant) -> Moment {
        static EPOCH: OnceLock<Instant> = OnceLock::new();
        let epoch = *EPOCH.get_or_init(|| instant);
        let micros = instant.saturating_duration_since(epoch).as_micros();
        Moment(u64::try_from(micros).unwrap_or(u64::MAX))
    }

    /// The time from this moment to `later` (zero if `later` is earlier).
    pub(super) fn until(self, later: Moment) -> Duration {
        Duration::from_micros(later.0.saturating_sub(self.0))
    }

    /// The time since this moment.
    pub(super) fn elapsed(self) -> Duration {
        self.until(Moment::now())
    }
}

impl Session {
    /// Idle connections are found by the lobby's sweep (see `Lobby::sweep_idle`)
    /// rather than by a timer in every connection, which would cost each one a
    /// timer entry and its allocation.
    pub(super) fn close_if_idle(&mut self, ctx: &mut Context<Self>) {
        let timeout = self.shared.live.idle_timeout();
        if self.last_input.elapsed() >= timeout {
            self.send_text(ctx, Arc::from("INFO closing an idle connection\n"));
            ctx.stop();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMIT: RateLimit = RateLimit {
        per_second: 2,
        burst: 3,
    };

    #[test]
    fn a_moment_measures_to_the_microsecond_and_never_back() {
        let t0 = Instant::now();
        let (a, b) = (Moment::of(t0), Moment::of(t0 + Duration::from_micros(1500)));
        assert_eq!(a.until(b), Duration::from_micros(1500));
        assert_eq!(b.until(a), Duration::ZERO);
        assert_eq!(std::mem::size_of::<Moment>(), 8);
    }

    #[test]
    fn an_empty_bucket_waits_for_the_missing_part_of_a_token() {
        let mut bucket = TokenBucket::new(LIMIT);
        assert_eq!(bucket.wait(LIMIT), Some(Duration::ZERO));
        for _ in 0..3 {
            assert!(bucket.take());
        }
        assert!(!bucket.take());
        assert_eq!(bucket.wait(LIMIT), Some(Duration::from_millis(500)));
        bucket.refill(LIMIT, Duration::from_millis(200));
        let wait = bucket.wait(LIMIT).unwrap();
        assert!(
            wait.abs_diff(Duration::from_millis(300)) < Duration::from_millis(1),
            "{wait:?}"
        );
        bucket.refill(LIMIT, wait);
        assert!(bucket.take(), "waiting as long as told earns a token");
        let never = RateLimit {
            per_second: 0,
            burst: 1,
        };
        let mut bucket = TokenBucket::new(never);
        assert!(bucket.take());
        assert_eq!(bucket.wait(never), None, "a rate of 0 never refills");
    }

    /// Each of `count` commands arriving `apart` after the last: whether it
    /// was let through.
    fn flood(
        bucket: &mut TokenBucket,
        limit: RateLimit,
        count: usize,
        apart: Duration,
    ) -> Vec<bool> {
        (0..count)
            .map(|_| {
                bucket.refill(limit, apart);
                bucket.take()
            })
            .collect()
    }

    #[test]
    fn a_flood_gets_the_burst_then_one_command_per_token_earned() {
        // The end-to-end flood's settings, on a made-up clock: what passes
        // depends on the time between commands, never on how fast a machine
        // is.
        let limit = RateLimit {
            per_second: 1,
            burst: 5,
        };
        let mut bucket = TokenBucket::new(limit);
        let at_once = flood(&mut bucket, limit, 20, Duration::from_millis(10));
        assert_eq!(at_once.iter().filter(|p| **p).count(), 5, "{at_once:?}");
        assert!(
            at_once[..5].iter().all(|p| *p),
            "the burst first: {at_once:?}"
        );
        // 190 ms since the burst ran out: 0.81 s of a token is missing, and
        // once that has passed one command goes through, and only one.
        let wait = bucket.wait(limit).unwrap();
        assert!(
            wait.abs_diff(Duration::from_millis(810)) < Duration::from_millis(1),
            "{wait:?}"
        );
        bucket.refill(limit, wait);
        assert!(bucket.take());
        assert!(!bucket.take());
        // Twenty commands over 2.85 s: the burst and the two tokens earned.
        let mut bucket = TokenBucket::new(limit);
        let spread = flood(&mut bucket, limit, 20, Duration::from_millis(150));
        assert_eq!(spread.iter().filter(|p| **p).count(), 7, "{spread:?}");
        // However long the bucket rests, it holds no more than the burst.
        bucket.refill(limit, Duration::from_secs(3600));
        let rested = flood(&mut bucket, limit, 20, Duration::ZERO);
        assert_eq!(rested.iter().filter(|p| **p).count(), 5, "{rested:?}");
    }

    #[test]
    fn the_message_says_the_wait_in_seconds_rounded_up() {
        for (wait, text) in [
            (Duration::from_millis(300), "wait 0.3 s"),
            (Duration::from_micros(9_001), "wait 0.01 s"),
            (Duration::from_millis(1250), "wait 1.25 s"),
            (Duration::from_secs(2), "wait 2 s"),
            (Duration::ZERO, "wait 0 s"),
        ] {
            assert_eq!(
                slow_down_message(Some(wait)),
                format!("too many commands, slow down: {text}")
            );
        }
        assert!(slow_down_message(None).contains("no more are accepted"));
    }
}
