//! The daemon watching itself: actor threads that wake late and moves that take
//! long between their line being read and their reply being queued. Both are
//! logged as warnings, so that an operator (or a load run) can tell a stall in
//! the daemon from one in the network, the disk or the client. The store's
//! writer reports slow commits itself.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// How often each actor thread checks that it wakes on time.
const WATCH_PERIOD: Duration = Duration::from_millis(100);

/// A thread this late to wake, or a move this slow, is reported.
pub const STALL_WARNING: Duration = Duration::from_millis(50);

/// How often slow moves are summed up in the log (at most one line each time).
const REPORT_PERIOD: Duration = Duration::from_secs(1);

/// Sleeps `WATCH_PERIOD` over and over on one actor thread and warns when a
/// wake-up comes `STALL_WARNING` late or more: the thread was busy or not
/// run, and every connection and game on it waited as long. One timer per
/// thread, so it costs nothing per game.
pub async fn watch_thread(name: String) {
    loop {
        let asleep = Instant::now();
        tokio::time::sleep(WATCH_PERIOD).await;
        if let Some(late) = stalled(asleep, Instant::now()) {
            tracing::warn!(
                thread = %name,
                late_ms = late.as_millis(),
                "the {name} thread woke {} ms late: what runs on it waited as long",
                late.as_millis()
            );
        }
    }
}

/// How late a wake-up at `woke` was for a `WATCH_PERIOD` sleep begun at
/// `asleep`, if late enough to report.
fn stalled(asleep: Instant, woke: Instant) -> Option<Duration> {
    let late = woke
        .saturating_duration_since(asleep)
        .saturating_sub(WATCH_PERIOD);
    (late >= STALL_WARNING).then_some(late)
}

/// Moves that took `STALL_WARNING` or more inside the daemon, counted by the
/// sessions (atomics: they run on every worker) and summed up by
/// [`report_slow_moves`].
#[derive(Debug, Default)]
pub struct SlowMoves {
    count: AtomicU64,
    worst_us: AtomicU64,
}

impl SlowMoves {
    /// A move was answered `took` after its line was read.
    pub fn served(&self, took: Duration) {
        if took >= STALL_WARNING {
            self.count.fetch_add(1, Ordering::Relaxed);
            let micros = u64::try_from(took.as_micros()).unwrap_or(u64::MAX);
            self.worst_us.fetch_max(micros, Ordering::Relaxed);
        }
    }

    /// How many slow moves since the last call, and the slowest; `None` if none.
    fn take(&self) -> Option<(u64, Duration)> {
        let count = self.count.swap(0, Ordering::Relaxed);
        let worst = self.worst_us.swap(0, Ordering::Relaxed);
        (count > 0).then(|| (count, Duration::from_micros(worst)))
    }
}

/// Logs, once every `REPORT_PERIOD` that had any, how many moves were slow
/// inside the daemon and the slowest.
pub async fn report_slow_moves(moves: std::sync::Arc<SlowMoves>) {
    loop {
        tokio::time::sleep(REPORT_PERIOD).await;
        if let Some((count, worst)) = moves.take() {
            tracing::warn!(
                count,
                worst_ms = worst.as_millis(),
                "{count} moves took {} ms or more inside the daemon (the slowest {} ms)",
                STALL_WARNING.as_millis(),
                worst.as_millis()
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_wake_up_late_by_the_warning_threshold_is_a_stall() {
        let asleep = Instant::now();
        let on_time = asleep + WATCH_PERIOD + Duration::from_millis(3);
        assert_eq!(stalled(asleep, on_time), None);
        let late = asleep + WATCH_PERIOD + STALL_WARNING + Duration::from_millis(7);
        assert_eq!(
            stalled(asleep, late),
            Some(STALL_WARNING + Duration::from_millis(7))
        );
        assert_eq!(stalled(asleep, asleep), None, "a clock going nowhere");
    }

    #[test]
    fn slow_moves_are_counted_with_the_slowest_and_taken_once() {
        let moves = SlowMoves::default();
        moves.served(Duration::from_millis(3));
        assert_eq!(moves.take(), None, "a quick move is not slow");
        moves.served(STALL_WARNING);
        moves.served(Duration::from_millis(180));
        moves.served(Duration::from_millis(70));
        assert_eq!(moves.take(), Some((3, Duration::from_millis(180))));
        assert_eq!(moves.take(), None, "taking resets the tally");
    }
}
