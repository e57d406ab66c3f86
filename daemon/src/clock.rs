//! Chess clocks: base time plus an increment after each move; only the clock of
//! the side to move runs. The moments they are given are service time (see
//! [`crate::service_time`] for the clock policy: the daemon's pauses are not
//! charged).

use std::sync::OnceLock;
use std::time::{Duration, Instant};

use flipline::Color;
use flipline::protocol::ClockSpec;

/// Both sides' clocks.
#[derive(Clone, Debug)]
pub struct Clocks {
    spec: ClockSpec,
    /// Milliseconds left for black and white, as of the last stop.
    left_ms: [u64; 2],
    /// The side whose clock runs, and since when.
    running: Option<(Color, Instant)>,
}

fn slot(color: Color) -> usize {
    match color {
        Color::Black => 0,
        Color::White => 1,
    }
}

impl Clocks {
    /// Stopped clocks at the base time.
    pub fn new(spec: ClockSpec) -> Clocks {
        Clocks {
            spec,
            left_ms: [spec.base_ms; 2],
            running: None,
        }
    }

    /// The side whose clock runs.
    pub fn running(&self) -> Option<Color> {
        self.running.map(|(side, _)| side)
    }

    /// The specification the clocks were made from.
    pub fn spec(&self) -> ClockSpec {
        self.spec
    }

    /// Starts `side`'s clock (stopping nothing: call [`Clocks::stop`] first).
    pub fn start(&mut self, side: Color, now: Instant) {
        self.running = Some((side, now));
    }

    /// Stops the running clock at `now`. Returns `Err(side)` when that side's time
    /// ran out before `now`; otherwise its increment is added.
    pub fn stop(&mut self, now: Instant) -> Result<(), Color> {
        let Some((side, since)) = self.running.take() else {
            return Ok(());
        };
        self.charge(side, millis(now.saturating_duration_since(since)))
    }

    /// Takes `used_ms` off `side`'s time as for a move that took that long (the
    /// increment is added). `Err(side)` when that is all of its time. Recovery
    /// replays stored moves through this, so restored clocks are exact.
    pub fn charge(&mut self, side: Color, used_ms: u64) -> Result<(), Color> {
        let left = self.left_ms.get_mut(slot(side)).ok_or(side)?;
        if used_ms >= *left {
            *left = 0;
            return Err(side);
        }
        *left = *left - used_ms + self.spec.increment_ms;
        Ok(())
    }

    /// Milliseconds left for `side` at `now`.
    pub fn left(&self, side: Color, now: Instant) -> u64 {
        let stored = self.left_ms.get(slot(side)).copied().unwrap_or(0);
        match self.running {
            Some((running, since)) if running == side => {
                stored.saturating_sub(millis(now.saturating_duration_since(since)))
            }
            _ => stored,
        }
    }

    /// The side whose running clock has reached zero at `now`, if any.
    pub fn flagged(&self, now: Instant) -> Option<Color> {
        let (side, _) = self.running?;
        (self.left(side, now) == 0).then_some(side)
    }

    /// (black, white) milliseconds left at `now`, as `MOVED` carries them.
    pub fn both(&self, now: Instant) -> (u64, u64) {
        (self.left(Color::Black, now), self.left(Color::White, now))
    }
}

/// A moment as microseconds since the daemon first made one: 8 bytes where an
/// `Instant` takes 16, for the turn start every game keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Stamp(u64);

impl Stamp {
    /// The stamp of `instant` (moments before the first stamp count as it).
    /// The first stamp made is the epoch: the games' moments are service
    /// time ([`crate::service_time`]), which lags the monotonic clock by the
    /// pauses given back, so an epoch read from the monotonic clock could be
    /// later than every moment stamped after a pause.
    pub fn of(instant: Instant) -> Stamp {
        static EPOCH: OnceLock<Instant> = OnceLock::new();
        Stamp(micros_since(&EPOCH, instant))
    }

    /// The time from this stamp to `later` (zero if `later` is earlier).
    pub fn until(self, later: Stamp) -> Duration {
        Duration::from_micros(later.0.saturating_sub(self.0))
    }
}

/// Microseconds from `epoch` (set by the first moment given) to `instant`,
/// saturating: 8 bytes for a moment where an `Instant` takes 16. Each kind
/// of moment keeps an epoch of its own, so that moments of different clocks
/// (service time, the wall's monotonic clock) never share one.
pub fn micros_since(epoch: &'static OnceLock<Instant>, instant: Instant) -> u64 {
    let epoch = *epoch.get_or_init(|| instant);
    let micros = instant.saturating_duration_since(epoch).as_micros();
    u64::try_from(micros).unwrap_or(u64::MAX)
}

/// A duration in whole milliseconds, saturating.
pub fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamps_measure_the_time_between_them() {
        let _first = Stamp::of(Instant::now());
        let start = Instant::now();
        let later = start + Duration::from_millis(1500);
        assert_eq!(
            Stamp::of(start).until(Stamp::of(later)),
            Duration::from_millis(1500)
        );
        assert_eq!(Stamp::of(later).until(Stamp::of(start)), Duration::ZERO);
    }

    #[test]
    fn only_the_running_clock_moves_and_increments_are_added() {
        let spec = ClockSpec {
            base_ms: 1000,
            increment_ms: 500,
        };
        let mut clocks = Clocks::new(spec);
        let t0 = Instant::now();
        clocks.start(Color::Black, t0);
        assert_eq!(clocks.both(t0 + Duration::from_millis(300)), (700, 1000));
        assert_eq!(clocks.stop(t0 + Duration::from_millis(300)), Ok(()));
        assert_eq!(clocks.both(t0 + Duration::from_millis(900)), (1200, 1000));
        clocks.start(Color::White, t0);
        assert_eq!(
            clocks.stop(t0 + Duration::from_millis(1000)),
            Err(Color::White)
        );
        assert_eq!(clocks.left(Color::White, t0), 0);
    }

    #[test]
    fn charging_stored_moves_restores_the_clocks() {
        let spec = ClockSpec {
            base_ms: 10_000,
            increment_ms: 1000,
        };
        let mut clocks = Clocks::new(spec);
        assert_eq!(clocks.charge(Color::Black, 2500), Ok(()));
        assert_eq!(clocks.charge(Color::White, 400), Ok(()));
        assert_eq!(clocks.charge(Color::Black, 100), Ok(()));
        let t0 = Instant::now();
        assert_eq!(clocks.both(t0), (10_000 - 2500 + 1000 - 100 + 1000, 10_600));
        assert_eq!(clocks.charge(Color::White, 10_600), Err(Color::White));
        assert_eq!(clocks.left(Color::White, t0), 0);
    }
}
