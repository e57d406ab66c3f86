//! A histogram of durations in fixed buckets, as relaxed atomics: one
//! thread writes it, a scrape reads it. The metrics' per-thread counters and
//! the store's commit times are each one; a leaf, so that the store records
//! its commits without importing the metrics.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// The upper bounds of the latency buckets, in seconds (Prometheus's `le`).
pub const BUCKETS: [f64; 12] = [
    0.000_25, 0.000_5, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1.0,
];

/// A histogram of durations: a count per bucket (not cumulative: summed up
/// when read), the count and the sum.
#[derive(Debug, Default)]
pub struct Histogram {
    buckets: [AtomicU64; BUCKETS.len()],
    count: AtomicU64,
    sum_us: AtomicU64,
}

impl Histogram {
    /// One more duration.
    pub fn observe(&self, took: Duration) {
        let seconds = took.as_secs_f64();
        let bucket = BUCKETS.iter().position(|&le| seconds <= le);
        if let Some(slot) = bucket.and_then(|b| self.buckets.get(b)) {
            slot.fetch_add(1, Ordering::Relaxed);
        }
        self.count.fetch_add(1, Ordering::Relaxed);
        let us = u64::try_from(took.as_micros()).unwrap_or(u64::MAX);
        self.sum_us.fetch_add(us, Ordering::Relaxed);
    }

    /// Adds what this holds to `total`.
    pub fn add_to(&self, total: &mut Durations) {
        for (sum, slot) in total.buckets.iter_mut().zip(&self.buckets) {
            *sum += slot.load(Ordering::Relaxed);
        }
        total.count += self.count.load(Ordering::Relaxed);
        total.sum_us += self.sum_us.load(Ordering::Relaxed);
    }

    /// What this holds now.
    pub fn read(&self) -> Durations {
        let mut read = Durations::default();
        self.add_to(&mut read);
        read
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_fall_in_their_buckets_and_the_slow_ones_only_count() {
        let histogram = Histogram::default();
        histogram.observe(Duration::from_micros(300));
        histogram.observe(Duration::from_secs(3));
        let read = histogram.read();
        let mut buckets = [0; BUCKETS.len()];
        buckets[1] = 1;
        assert_eq!(read.buckets, buckets, "300 µs in the 0.5 ms bucket");
        assert_eq!((read.count, read.sum_us), (2, 3_000_300));
    }
}
