//! What the move path counts, per thread: each thread adds to counters of
//! its own (relaxed atomics on lines no other thread writes), and a scrape
//! sums them. No lock and no shared line on the move path; a thread takes
//! the registry's lock once, the first time it counts.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use flipline::protocol::ErrorCode;

use crate::durations::Histogram;
pub use crate::durations::{BUCKETS, Durations};

/// One thread's counters.
#[derive(Debug, Default)]
struct ThreadCounters {
    moves: Histogram,
    errors: [AtomicU64; ErrorCode::ALL.len()],
}

/// The counters of a set of threads, for the scrape.
#[derive(Debug, Default)]
struct Registry {
    threads: Mutex<Vec<Arc<ThreadCounters>>>,
}

impl Registry {
    const fn new() -> Registry {
        Registry {
            threads: Mutex::new(Vec::new()),
        }
    }

    /// Counters for one more thread.
    fn join(&self) -> Arc<ThreadCounters> {
        let mine = Arc::new(ThreadCounters::default());
        let mut threads = self.threads.lock().unwrap_or_else(PoisonError::into_inner);
        threads.push(Arc::clone(&mine));
        mine
    }

    fn totals(&self) -> Totals {
        let threads = self.threads.lock().unwrap_or_else(PoisonError::into_inner);
        let mut totals = Totals::default();
        for thread in threads.iter() {
            thread.moves.add_to(&mut totals.moves);
            for (sum, slot) in totals.errors.iter_mut().zip(&thread.errors) {
                *sum += slot.load(Ordering::Relaxed);
            }
        }
        totals
    }
}

/// The daemon's threads.
static THREADS: Registry = Registry::new();

thread_local! {
    static MINE: Arc<ThreadCounters> = THREADS.join();
}

/// A move answered `took` after its line was read.
pub fn moved(took: Duration) {
    MINE.with(|mine| mine.moves.observe(took));
}

/// A command answered with `code`.
pub fn refused(code: ErrorCode) {
    if let Some(index) = ErrorCode::ALL.iter().position(|&c| c == code) {
        MINE.with(|mine| {
            if let Some(slot) = mine.errors.get(index) {
                slot.fetch_add(1, Ordering::Relaxed);
            }
        });
    }
}

/// Every thread's counts, summed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Totals {
    /// Moves, line read to reply.
    pub moves: Durations,
    /// Error replies by code, in the order of `ErrorCode::ALL`.
    pub errors: [u64; ErrorCode::ALL.len()],
}

/// The sums now.
pub fn totals() -> Totals {
    THREADS.totals()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_from_every_thread_are_summed_into_their_buckets() {
        let registry = Registry::new();
        std::thread::scope(|scope| {
            for _ in 0..3 {
                scope.spawn(|| {
                    let mine = registry.join();
                    mine.moves.observe(Duration::from_micros(300));
                    mine.moves.observe(Duration::from_secs(3));
                    mine.errors[6].fetch_add(1, Ordering::Relaxed);
                });
            }
        });
        let totals = registry.totals();
        assert_eq!(totals.moves.count, 6, "the slow ones too");
        let mut buckets = [0; BUCKETS.len()];
        buckets[1] = 3;
        assert_eq!(
            totals.moves.buckets, buckets,
            "300 µs in the 0.5 ms bucket, 3 s in none"
        );
        assert_eq!(totals.moves.sum_us, 3 * (300 + 3_000_000));
        assert_eq!(totals.errors[6], 3);
        assert_eq!(ErrorCode::ALL[6], ErrorCode::IllegalMove);
    }

    #[test]
    fn the_thread_counters_count_what_this_thread_saw() {
        let before = totals();
        moved(Duration::from_millis(2));
        refused(ErrorCode::TooMany);
        let after = totals();
        assert!(after.moves.count > before.moves.count);
        let index = ErrorCode::ALL
            .iter()
            .position(|&c| c == ErrorCode::TooMany)
            .unwrap_or(0);
        assert!(after.errors[index] > before.errors[index]);
    }
}
