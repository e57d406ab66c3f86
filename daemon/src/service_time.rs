//! Service time: the monotonic clock less the time the daemon was not running.
//! Every game reads its `now` here ([`now`]), so it is what the chess clocks,
//! the flag timers and the stored time of each move count.
//!
//! # Clock policy
//!
//! Players are charged for the time the server served them, not for the
//! server's downtime, which they get back (as lichess gives back its own):
//! - Across a restart nothing is charged: a recovered game's clocks are
//!   rebuilt from the stored time of each move (see `Table::new`), and the
//!   side to move starts its turn afresh.
//! - While the process is stopped (SIGSTOP, a debugger, a virtual machine
//!   paused) the monotonic clock runs on; that time is taken out here. A
//!   thread reads the clock every [`TICK`], so that while the daemon runs no
//!   two readings (the thread's or a game's) are more than a tick or so
//!   apart; a gap over [`PAUSE`] can only be time the daemon did not run at
//!   all, and all of it but one tick is given back. Shorter stalls (a busy
//!   thread, a slow disk) are charged as ever: the daemon was running.
//! - A flag timer set before a pause fires, by the real clock, as soon as the
//!   daemon runs again; by service time the flag has not fallen yet, so the
//!   table sets the timer again for the time left instead of ending the game.
//! - Grace periods, idle timeouts and rate limits stay on the real clock:
//!   they are about people, not the clocks of a game.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::rules::clock::Moment;

/// How often the ticker reads the clock.
pub const TICK: Duration = Duration::from_millis(100);

/// A gap between two readings longer than this is a pause of the daemon.
pub const PAUSE: Duration = Duration::from_secs(1);

/// Readings of the monotonic clock and the pauses seen between them, shared
/// by every thread without a lock (it is read several times a move, on
/// every worker). Readings are passed in, so the tests can make them up.
#[derive(Debug)]
pub struct ServiceClock {
    /// What the nanoseconds below count from.
    epoch: Instant,
    /// The latest reading.
    last: AtomicU64,
    /// Time given back so far.
    paused: AtomicU64,
    /// The latest service time handed out: none is ever earlier.
    served: AtomicU64,
}

impl ServiceClock {
    /// No pause yet, reading from `epoch`.
    pub fn new(epoch: Instant) -> ServiceClock {
        ServiceClock {
            epoch,
            last: AtomicU64::new(0),
            paused: AtomicU64::new(0),
            served: AtomicU64::new(0),
        }
    }

    /// Takes a reading `real` of the monotonic clock: the service time at it,
    /// and the pause it ended, if it did. Only the first reading after a gap
    /// sees it (`fetch_max` hands each the reading before it), so a pause is
    /// given back once however many threads wake from it. A reading taken
    /// before a pause but counted after it would come out earlier than what
    /// was already handed out: no service time is earlier than one before.
    pub fn read(&self, real: Instant) -> (Instant, Option<Duration>) {
        let at = nanos(real.saturating_duration_since(self.epoch));
        let before = self.last.fetch_max(at, Ordering::AcqRel);
        let mut ended = None;
        if at.saturating_sub(before) > nanos(PAUSE) {
            let given_back = at - before - nanos(TICK);
            self.paused.fetch_add(given_back, Ordering::AcqRel);
            ended = Some(Duration::from_nanos(given_back));
        }
        let paused = self.paused.load(Ordering::Acquire);
        let service = at.saturating_sub(paused);
        let served = self
            .served
            .fetch_max(service, Ordering::AcqRel)
            .max(service);
        (self.epoch + Duration::from_nanos(served), ended)
    }

    /// Time given back so far.
    #[cfg(test)]
    pub fn paused(&self) -> Duration {
        Duration::from_nanos(self.paused.load(Ordering::Acquire))
    }
}

fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// The daemon's clock, with its ticker; `None` if the ticker could not
/// start (then no gap can be told from an idle spell, and service time is
/// the monotonic clock).
fn clock() -> Option<&'static ServiceClock> {
    static CLOCK: OnceLock<Option<ServiceClock>> = OnceLock::new();
    CLOCK
        .get_or_init(|| {
            let ticker = std::thread::Builder::new()
                .name("service-time".into())
                .spawn(|| {
                    loop {
                        std::thread::sleep(TICK);
                        let _ = now();
                    }
                });
            match ticker {
                Ok(_) => Some(ServiceClock::new(Instant::now())),
                Err(error) => {
                    tracing::warn!(%error, "no service-time thread: a paused daemon charges the clocks");
                    None
                }
            }
        })
        .as_ref()
}

/// Starts the ticker (once per process; the first [`now`] would too). The
/// daemon calls it at start, before its workers copy their descriptor
/// tables: the thread opens no descriptor, but it is in the shared table.
pub fn start() {
    let _ = clock();
}

/// The service time now, as the rules count moments: microseconds since the
/// service clock's epoch (or, without its ticker, since the first reading).
pub fn now() -> Moment {
    static FALLBACK_EPOCH: OnceLock<Instant> = OnceLock::new();
    let Some(clock) = clock() else {
        let now = Instant::now();
        return moment_since(*FALLBACK_EPOCH.get_or_init(|| now), now);
    };
    let (service, ended) = clock.read(Instant::now());
    if let Some(pause) = ended {
        let ms = pause.as_millis();
        tracing::warn!(
            ms,
            "the daemon did not run for {ms} ms: the game clocks give that time back"
        );
    }
    moment_since(clock.epoch, service)
}

fn moment_since(epoch: Instant, at: Instant) -> Moment {
    let micros = at.saturating_duration_since(epoch).as_micros();
    Moment::from_micros(u64::try_from(micros).unwrap_or(u64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn readings_a_tick_apart_are_the_monotonic_clock() {
        let t0 = Instant::now();
        let d = ServiceClock::new(t0);
        for n in 1..=30u32 {
            let real = t0 + TICK * n;
            assert_eq!(d.read(real), (real, None));
        }
        assert_eq!(d.paused(), Duration::ZERO);
    }

    #[test]
    fn a_long_gap_is_given_back_but_a_tick_and_a_short_one_is_not() {
        let t0 = Instant::now();
        let d = ServiceClock::new(t0);
        let after_stall = t0 + 900 * MS;
        assert_eq!(
            d.read(after_stall),
            (after_stall, None),
            "under PAUSE: charged"
        );
        let resumed = after_stall + 3000 * MS;
        let (service, ended) = d.read(resumed);
        assert_eq!(ended, Some(2900 * MS));
        assert_eq!(service, after_stall + TICK);
        let later = resumed + TICK;
        assert_eq!(d.read(later).0, after_stall + TICK * 2, "the offset stays");
        assert_eq!(d.paused(), 2900 * MS);
    }

    #[test]
    fn a_reading_that_comes_late_from_another_thread_counts_no_gap() {
        let t0 = Instant::now();
        let d = ServiceClock::new(t0);
        let _ = d.read(t0 + 5 * TICK);
        let (service, ended) = d.read(t0 + 4 * TICK);
        assert_eq!(ended, None);
        assert_eq!(service, t0 + 5 * TICK, "never earlier than handed out");
        let (_, ended) = d.read(t0 + 6 * TICK);
        assert_eq!(ended, None, "measured from the latest reading");
    }

    #[test]
    fn a_reading_taken_before_a_pause_and_counted_after_it_does_not_go_back() {
        let t0 = Instant::now();
        let d = ServiceClock::new(t0);
        let before_pause = t0 + TICK;
        let _ = d.read(before_pause);
        // The ticker wakes first from a 5 s pause; a worker's reading taken
        // just before the pause is counted next.
        let (woke, ended) = d.read(before_pause + 5000 * MS);
        assert_eq!(ended, Some(4900 * MS));
        let (late, ended) = d.read(before_pause);
        assert_eq!(ended, None);
        assert!(late >= woke, "{late:?} < {woke:?}");
    }

    #[test]
    fn a_pause_is_given_back_once_whoever_sees_it() {
        let t0 = Instant::now();
        let d = ServiceClock::new(t0);
        let resumed = t0 + 3000 * MS;
        let readers: Vec<Option<Duration>> = std::thread::scope(|scope| {
            let threads: Vec<_> = (0..4).map(|_| scope.spawn(|| d.read(resumed).1)).collect();
            threads.into_iter().map(|t| t.join().unwrap()).collect()
        });
        assert_eq!(readers.iter().flatten().count(), 1, "{readers:?}");
        assert_eq!(d.paused(), 2900 * MS);
    }

    #[test]
    fn service_time_never_runs_backwards_while_the_daemon_runs() {
        let first = now();
        let second = now();
        assert!(second >= first);
    }
}
