//! How much time an external engine is given for a move, and how long the
//! bot waits for it before it resigns the game for the engine (pure).
//!
//! - With a clock, the engine's share of a move is what is left (less a
//!   reserve for the connection and the engine's start-up: 5 % and 200 ms)
//!   over the moves it may still have to make (half the empty squares, and
//!   two more), plus most of the increment. GTP is told the time left
//!   itself (`time_left`, whole seconds, GTP having no increments) and
//!   budgets the move on its own; NBoard has no clock, so its `set depth`
//!   is picked from the share ([`nboard_depth`]): lower when time is short.
//! - Without one, the share is `--think-ms`; GTP is told it as byo-yomi,
//!   that many seconds (at least one: GTP counts whole seconds) for each
//!   move.
//! - The bot waits twice the share (or the seconds GTP was told, if more)
//!   and two seconds more, never past the time left on the clock: an engine
//!   that takes longer has hung, and the game is resigned for it rather than
//!   left waiting.

use std::time::Duration;

use flipline::protocol::ClockSpec;

/// One move's time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Budget {
    /// The engine's share of this move.
    pub share: Duration,
    /// What GTP is told: `time_settings` and `time_left` in whole seconds.
    pub gtp: GtpTime,
    /// How long the bot waits for the move before it resigns.
    pub wait: Duration,
}

/// GTP's view of the clock (Canadian byo-yomi, in seconds).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GtpTime {
    /// `time_settings main byo_yomi stones`.
    pub settings: (u64, u64, u64),
    /// `time_left <color> seconds stones`.
    pub left: (u64, u64),
}

/// The budget of a move with `empties` squares left: `clock` is the game's
/// clock and the mover's time left on it, `think` the share without one.
pub fn budget(clock: Option<(ClockSpec, Duration)>, empties: u32, think: Duration) -> Budget {
    let slack = Duration::from_secs(2);
    match clock {
        None => {
            let seconds = think.as_secs() + u64::from(think.subsec_nanos() > 0);
            let seconds = seconds.max(1);
            let told = Duration::from_secs(seconds);
            Budget {
                share: think,
                gtp: GtpTime {
                    settings: (0, seconds, 1),
                    left: (seconds, 1),
                },
                wait: think.max(told).saturating_mul(2).saturating_add(slack),
            }
        }
        Some((spec, left)) => {
            let reserve = left / 20 + Duration::from_millis(200);
            let usable = left.saturating_sub(reserve);
            let moves = empties / 2 + 2;
            let increment = Duration::from_millis(spec.increment_ms).mul_f64(0.75);
            let share = (usable / moves + increment).min(usable);
            Budget {
                share,
                gtp: GtpTime {
                    settings: (spec.base_ms / 1000, 0, 0),
                    left: (usable.as_secs(), 0),
                },
                wait: share.saturating_mul(2).saturating_add(slack).min(left),
            }
        }
    }
}

/// The NBoard depth for a move's share: deep enough to use it, shallow
/// enough that an engine such as Edax (which, at these depths, also solves
/// the last dozen or two empties exactly) answers within it.
pub fn nboard_depth(share: Duration) -> u32 {
    match share.as_millis() {
        0..200 => 4,
        200..500 => 6,
        500..1500 => 8,
        1500..4000 => 10,
        4000..10_000 => 12,
        _ => 14,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_a_clock_the_think_time_is_byo_yomi_in_whole_seconds() {
        let b = budget(None, 60, Duration::from_millis(1500));
        assert_eq!(b.share, Duration::from_millis(1500));
        assert_eq!((b.gtp.settings, b.gtp.left), ((0, 2, 1), (2, 1)));
        assert_eq!(b.wait, Duration::from_secs(6));
        let quick = budget(None, 60, Duration::from_millis(100));
        assert_eq!(quick.gtp.left, (1, 1));
        assert_eq!(quick.wait, Duration::from_secs(4));
    }

    #[test]
    fn with_a_clock_the_share_shrinks_as_the_time_does() {
        let spec = ClockSpec {
            base_ms: 300_000,
            increment_ms: 2000,
        };
        let start = budget(Some((spec, Duration::from_secs(300))), 60, Duration::ZERO);
        assert_eq!(start.gtp.settings, (300, 0, 0));
        assert_eq!(start.gtp.left.1, 0);
        assert!(start.share > Duration::from_secs(9) && start.share < Duration::from_secs(11));
        let short = budget(Some((spec, Duration::from_secs(3))), 30, Duration::ZERO);
        assert!(short.share < start.share && short.wait <= Duration::from_secs(3));
        let flagging = budget(Some((spec, Duration::from_millis(100))), 30, Duration::ZERO);
        assert_eq!(
            (flagging.share, flagging.wait),
            (Duration::ZERO, Duration::from_millis(100))
        );
    }

    #[test]
    fn less_time_is_a_shallower_nboard_depth() {
        let depths: Vec<u32> = [0, 300, 1000, 2000, 5000, 60_000]
            .iter()
            .map(|&ms| nboard_depth(Duration::from_millis(ms)))
            .collect();
        assert!(depths.is_sorted(), "{depths:?}");
        assert_eq!((depths[0], depths[5]), (4, 14));
    }
}
