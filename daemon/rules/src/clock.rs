//! Chess clocks: base time plus an increment after each move; only the clock of
//! the side to move runs. The moments they are given are the daemon's service
//! time (its clock policy: the daemon's own pauses are not charged), passed in.

use std::ops::Add;
use std::time::Duration;

use flipline::Color;
use flipline::protocol::ClockSpec;

/// Both sides' clocks.
#[derive(Clone, Debug)]
pub struct Clocks {
    spec: ClockSpec,
    /// Milliseconds left for black and white, as of the last stop.
    left_ms: [u64; 2],
    /// The side whose clock runs, and since when.
    running: Option<(Color, Moment)>,
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
    pub fn start(&mut self, side: Color, now: Moment) {
        self.running = Some((side, now));
    }

    /// Stops the running clock at `now`. Returns `Err(side)` when that side's time
    /// ran out before `now`; otherwise its increment is added.
    pub fn stop(&mut self, now: Moment) -> Result<(), Color> {
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
    pub fn left(&self, side: Color, now: Moment) -> u64 {
        let stored = self.left_ms.get(slot(side)).copied().unwrap_or(0);
        match self.running {
            Some((running, since)) if running == side => {
                stored.saturating_sub(millis(now.saturating_duration_since(since)))
            }
            _ => stored,
        }
    }

    /// The side whose running clock has reached zero at `now`, if any.
    pub fn flagged(&self, now: Moment) -> Option<Color> {
        let (side, _) = self.running?;
        (self.left(side, now) == 0).then_some(side)
    }

    /// (black, white) milliseconds left at `now`, as `MOVED` carries them.
    pub fn both(&self, now: Moment) -> (u64, u64) {
        (self.left(Color::Black, now), self.left(Color::White, now))
    }
}

/// A moment of the clock the games count (the daemon's service time), as
/// microseconds from an origin the caller chose: 8 bytes where an `Instant`
/// takes 16, in every game's table. The origin is the caller's, not a
/// process-wide one, so the rules keep no state of their own and tests make
/// moments up.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Moment(u64);

impl Moment {
    /// The moment `micros` microseconds after the origin.
    pub const fn from_micros(micros: u64) -> Moment {
        Moment(micros)
    }

    /// Microseconds since the origin.
    pub const fn as_micros(self) -> u64 {
        self.0
    }

    /// The time from `earlier` to this moment (zero if `earlier` is later).
    pub fn saturating_duration_since(self, earlier: Moment) -> Duration {
        Duration::from_micros(self.0.saturating_sub(earlier.0))
    }
}

impl Add<Duration> for Moment {
    type Output = Moment;

    /// Saturating: a moment past the last one representable is that one.
    fn add(self, later: Duration) -> Moment {
        let micros = u64::try_from(later.as_micros()).unwrap_or(u64::MAX);
        Moment(self.0.saturating_add(micros))
    }
}

/// A duration in whole milliseconds, saturating.
pub fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_running_clock_moves_and_increments_are_added() {
        let spec = ClockSpec {
            base_ms: 1000,
            increment_ms: 500,
        };
        let mut clocks = Clocks::new(spec);
        let t0 = Moment::from_micros(1_000_000);
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
        let t0 = Moment::from_micros(1_000_000);
        assert_eq!(clocks.both(t0), (10_000 - 2500 + 1000 - 100 + 1000, 10_600));
        assert_eq!(clocks.charge(Color::White, 10_600), Err(Color::White));
        assert_eq!(clocks.left(Color::White, t0), 0);
    }
}
