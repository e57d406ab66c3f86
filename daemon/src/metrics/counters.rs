//! What the move path counts, per thread: each thread adds to counters of
//! its own (relaxed atomics on lines no other thread writes), and a scrape
//! sums them. No lock and no shared line on the move path; a thread takes
//! the registry's lock once, the first time it counts.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use flipline::protocol::ErrorCode;

/// The upper bounds of the latency buckets, in seconds (Prometheus's `le`).
pub const BUCKETS: [f64; 12] = [
    0.000_25, 0.000_5, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1.0,
];

/// A histogram of durations: a count per bucket (not cumulative: summed up
/// when read), the count and the sum.
#[derive(Debug, Default)]
struct Histogram {
    buckets: [AtomicU64; BUCKETS.len()],
    count: AtomicU64,
    sum_us: AtomicU64,
}

impl Histogram {
    fn observe(&self, took: Duration) {
        let seconds = took.as_secs_f64();
        let bucket = BUCKETS.iter().position(|&le| seconds <= le);
        if let Some(slot) = bucket.and_then(|b| self.buckets.get(b)) {
            slot.fetch_add(1, Ordering::Relaxed);
        }
        self.count.fetch_add(1, Ordering::Relaxed);
        let us = u64::try_from(took.as_micros()).unwrap_or(u64::MAX);
        self.sum_us.fetch_add(us, Ordering::Relaxed);
    }

    fn add_to(&self, total: &mut Durations) {
        for (sum, slot) in total.buckets.iter_mut().zip(&self.buckets) {
            *sum += slot.load(Ordering::Relaxed);
        }
        total.count += self.count.load(Ordering::Relaxed);
        total.sum_us += self.sum_us.load(Ordering::Relaxed);
    }
}

/// One thread's counters.
#[derive(Debug, Default)]
struct ThreadCounters {
    moves: Histogram,
    commits: Histogram,
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
            thread.commits.add_to(&mut totals.commits);
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

/// A batch of the store committed in `took`.
pub fn committed(took: Duration) {
    MINE.with(|mine| mine.commits.observe(took));
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

/// A histogram as read: per-bucket counts (not cumulative), count, sum.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Durations {
    /// The count in each of [`BUCKETS`], apart.
    pub buckets: [u64; BUCKETS.len()],
    /// Every observation, those past the last bucket too.
    pub count: u64,
    /// Their sum, in microseconds.
    pub sum_us: u64,
}

/// Every thread's counts, summed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Totals {
    /// Moves, line read to reply.
    pub moves: Durations,
    /// The store's commits.
    pub commits: Durations,
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
                    mine.commits.observe(Duration::from_millis(3));
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
        assert_eq!(totals.commits.buckets[4], 3, "3 ms in the 5 ms bucket");
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
