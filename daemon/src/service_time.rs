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

use std::sync::{Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};

/// How often the ticker reads the clock.
pub const TICK: Duration = Duration::from_millis(100);

/// A gap between two readings longer than this is a pause of the daemon.
pub const PAUSE: Duration = Duration::from_secs(1);

/// The pauses seen between readings of the clock. Pure: the readings are
/// passed in.
#[derive(Debug)]
pub struct PauseDetector {
    /// The latest reading.
    last: Instant,
    /// Time given back so far.
    paused: Duration,
    tick: Duration,
    pause: Duration,
}

impl PauseDetector {
    /// No pause yet, reading from `start`; a gap over `pause` between
    /// readings that come every `tick` is a pause.
    pub fn new(start: Instant, tick: Duration, pause: Duration) -> PauseDetector {
        PauseDetector {
            last: start,
            paused: Duration::ZERO,
            tick,
            pause,
        }
    }

    /// Takes a reading `real` of the monotonic clock: the service time at it,
    /// and the pause it ended, if it did. Readings may come in a little out
    /// of order (from several threads); a late one counts no gap.
    pub fn read(&mut self, real: Instant) -> (Instant, Option<Duration>) {
        let gap = real.saturating_duration_since(self.last);
        let mut ended = None;
        if gap > self.pause {
            let given_back = gap.saturating_sub(self.tick);
            self.paused = self.paused.saturating_add(given_back);
            ended = Some(given_back);
        }
        self.last = self.last.max(real);
        // Never below the start: the time given back is time that passed.
        let service = real.checked_sub(self.paused).unwrap_or(real);
        (service, ended)
    }

    /// Time given back so far.
    pub fn paused(&self) -> Duration {
        self.paused
    }
}

/// The daemon's detector, with its ticker; `None` if the ticker could not
/// start (then no gap can be told from an idle spell, and service time is
/// the monotonic clock).
fn detector() -> Option<&'static Mutex<PauseDetector>> {
    static DETECTOR: OnceLock<Option<Mutex<PauseDetector>>> = OnceLock::new();
    DETECTOR
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
                Ok(_) => Some(Mutex::new(PauseDetector::new(Instant::now(), TICK, PAUSE))),
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
    let _ = detector();
}

/// The service time now.
pub fn now() -> Instant {
    let real = Instant::now();
    let Some(detector) = detector() else {
        return real;
    };
    let (service, ended) = detector
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .read(real);
    if let Some(pause) = ended {
        let ms = pause.as_millis();
        tracing::warn!(
            ms,
            "the daemon did not run for {ms} ms: the game clocks give that time back"
        );
    }
    service
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn readings_a_tick_apart_are_the_monotonic_clock() {
        let t0 = Instant::now();
        let mut d = PauseDetector::new(t0, TICK, PAUSE);
        for n in 1..=30u32 {
            let real = t0 + TICK * n;
            assert_eq!(d.read(real), (real, None));
        }
        assert_eq!(d.paused(), Duration::ZERO);
    }

    #[test]
    fn a_long_gap_is_given_back_but_a_tick_and_a_short_one_is_not() {
        let t0 = Instant::now();
        let mut d = PauseDetector::new(t0, TICK, PAUSE);
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
        let mut d = PauseDetector::new(t0, TICK, PAUSE);
        let _ = d.read(t0 + 5 * TICK);
        let (service, ended) = d.read(t0 + 4 * TICK);
        assert_eq!((service, ended), (t0 + 4 * TICK, None));
        let (_, ended) = d.read(t0 + 6 * TICK);
        assert_eq!(ended, None, "measured from the latest reading");
    }

    #[test]
    fn service_time_never_runs_backwards_while_the_daemon_runs() {
        let first = now();
        let second = now();
        assert!(second >= first);
    }
}
