//! What a load run counts, and its report: one figure a line as `name value
//! unit`, or one JSON object.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

/// Counters shared by every connection of a run.
#[derive(Default)]
pub struct Counters {
    /// Connections logged in now.
    pub open: AtomicUsize,
    /// The most connections logged in at once.
    pub peak: AtomicUsize,
    /// Games finished while measuring.
    pub games: AtomicU64,
    /// Moves acknowledged while measuring.
    pub moves: AtomicU64,
    /// `ERR` replies by code.
    pub errors: Mutex<BTreeMap<u16, u64>>,
    /// Connections that failed to open or dropped, by reason.
    pub failures: Mutex<BTreeMap<String, u64>>,
    /// Move round trips.
    pub latencies: Histogram,
    /// The longest this tool was late to wake during the window, in µs.
    pub stall_us: AtomicU64,
    /// Set while the measured window is open.
    pub measuring: AtomicBool,
    /// Set when the run is over.
    pub stopping: AtomicBool,
    /// Connections that have finished their `--rounds` in the window.
    pub rounds_done: AtomicUsize,
    /// Wakes the window's end when one more connection is done.
    rounds_notify: tokio::sync::Notify,
}

impl Counters {
    /// One more connection logged in.
    pub fn opened(&self) {
        let now = self.open.fetch_add(1, Ordering::AcqRel) + 1;
        self.peak.fetch_max(now, Ordering::AcqRel);
    }

    /// A logged-in connection closed.
    pub fn closed(&self) {
        self.open.fetch_sub(1, Ordering::AcqRel);
    }

    /// One more connection finished its rounds.
    pub fn round_done(&self) {
        self.rounds_done.fetch_add(1, Ordering::AcqRel);
        self.rounds_notify.notify_one();
    }

    /// Returns once `connections` connections have finished their rounds.
    pub async fn all_rounds_played(&self, connections: usize) {
        while self.rounds_done.load(Ordering::Acquire) < connections {
            // notify_one keeps a permit when nobody waits: no wake-up is lost
            // between the load above and this wait.
            self.rounds_notify.notified().await;
        }
    }

    /// Counts an `ERR` reply.
    pub fn error(&self, code: u16) {
        let mut errors = self.errors.lock().unwrap_or_else(|e| e.into_inner());
        *errors.entry(code).or_default() += 1;
    }

    /// The figures counted so far, for a window of `seconds`, with the
    /// daemon's resident memory before and after if it was read.
    pub fn report(&self, seconds: f64, rss_kib: Option<(u64, u64)>) -> Report {
        Report {
            connections: self.peak.load(Ordering::Acquire),
            games: self.games.load(Ordering::Acquire),
            moves: self.moves.load(Ordering::Acquire),
            seconds,
            latency_ms: self.latencies.percentiles_ms(),
            stall_ms: self.stall_us.load(Ordering::Acquire) as f64 / 1000.0,
            errors: self.errors.lock().map(|e| e.clone()).unwrap_or_default(),
            failures: self.failures.lock().map(|f| f.clone()).unwrap_or_default(),
            rss_kib,
            rounds_done: self.rounds_done.load(Ordering::Acquire),
            ..Report::default()
        }
    }

    /// Counts a failed or dropped connection.
    pub fn failure(&self, reason: String) {
        let mut failures = self.failures.lock().unwrap_or_else(|e| e.into_inner());
        *failures.entry(reason).or_default() += 1;
    }
}

/// The figures of a finished run.
#[derive(Debug, Default)]
pub struct Report {
    /// Connections asked for.
    pub wanted: usize,
    /// The most connections held (logged in) at once.
    pub connections: usize,
    /// Games finished in the window.
    pub games: u64,
    /// Moves acknowledged in the window.
    pub moves: u64,
    /// Length of the window in seconds.
    pub seconds: f64,
    /// Round-trip percentiles in milliseconds: p50, p90, p99, max.
    pub latency_ms: [f64; 4],
    /// The longest this tool itself was late to wake, in milliseconds: every
    /// round trip in flight meanwhile counts it too.
    pub stall_ms: f64,
    /// `ERR` replies by code.
    pub errors: BTreeMap<u16, u64>,
    /// Connection failures by reason.
    pub failures: BTreeMap<String, u64>,
    /// The daemon's resident memory before the connections and at the end, KiB.
    pub rss_kib: Option<(u64, u64)>,
    /// A note on limits met (file descriptors).
    pub notes: Vec<String>,
    /// The games each connection was asked to finish in the window (`--rounds`).
    pub rounds: Option<u32>,
    /// Connections that finished them.
    pub rounds_done: usize,
}

/// Round trips in microseconds, in buckets that are 1% wide or narrower, counted
/// with atomics so that every connection records without a lock.
pub struct Histogram {
    buckets: Vec<AtomicU64>,
    max: AtomicU64,
}

/// Bucket bounds: 10 µs steps to 1 ms, 100 µs to 10 ms, 1 ms to 100 ms, 100 ms
/// to 10 s; beyond that the last bucket.
const STEPS: [(u64, u64); 4] = [
    (1_000, 10),
    (10_000, 100),
    (100_000, 1_000),
    (10_000_000, 100_000),
];

fn bucket_of(micros: u64) -> usize {
    let mut index = 0;
    let mut low = 0;
    for (high, step) in STEPS {
        if micros < high {
            return index + ((micros - low) / step) as usize;
        }
        index += ((high - low) / step) as usize;
        low = high;
    }
    index
}

fn bucket_upper(bucket: usize) -> u64 {
    let mut index = 0;
    let mut low = 0;
    for (high, step) in STEPS {
        let count = ((high - low) / step) as usize;
        if bucket < index + count {
            return low + (bucket - index + 1) as u64 * step;
        }
        index += count;
        low = high;
    }
    low
}

impl Default for Histogram {
    fn default() -> Histogram {
        let size = bucket_of(u64::MAX) + 1;
        Histogram {
            buckets: (0..size).map(|_| AtomicU64::new(0)).collect(),
            max: AtomicU64::new(0),
        }
    }
}

impl Histogram {
    /// Records one round trip.
    pub fn record(&self, micros: u64) {
        if let Some(bucket) = self.buckets.get(bucket_of(micros)) {
            bucket.fetch_add(1, Ordering::Relaxed);
        }
        self.max.fetch_max(micros, Ordering::Relaxed);
    }

    /// The upper bound of the bucket holding quantile `q` (nearest rank), in µs.
    pub fn quantile(&self, q: f64) -> u64 {
        let counts: Vec<u64> = self
            .buckets
            .iter()
            .map(|b| b.load(Ordering::Relaxed))
            .collect();
        let total: u64 = counts.iter().sum();
        if total == 0 {
            return 0;
        }
        let rank = ((q * total as f64).ceil() as u64).clamp(1, total);
        let mut seen = 0;
        for (bucket, count) in counts.iter().enumerate() {
            seen += count;
            if seen >= rank {
                return bucket_upper(bucket).min(self.max.load(Ordering::Relaxed));
            }
        }
        self.max.load(Ordering::Relaxed)
    }

    /// Adds another histogram's counts and maximum (another process's).
    pub fn merge(&self, other: &Histogram) {
        for (mine, theirs) in self.buckets.iter().zip(&other.buckets) {
            mine.fetch_add(theirs.load(Ordering::Relaxed), Ordering::Relaxed);
        }
        self.max
            .fetch_max(other.max.load(Ordering::Relaxed), Ordering::Relaxed);
    }

    /// The counts as text: the maximum, then `bucket:count` for each bucket
    /// that has any (see [`Histogram::parse`]).
    pub fn to_text(&self) -> String {
        let mut out = self.max.load(Ordering::Relaxed).to_string();
        for (bucket, count) in self.buckets.iter().enumerate() {
            let count = count.load(Ordering::Relaxed);
            if count > 0 {
                let _ = write!(out, " {bucket}:{count}");
            }
        }
        out
    }

    /// The counts [`Histogram::to_text`] wrote, or `None` if `text` is not such.
    pub fn parse(text: &str) -> Option<Histogram> {
        let histogram = Histogram::default();
        let mut words = text.split(' ');
        histogram
            .max
            .store(words.next()?.parse().ok()?, Ordering::Relaxed);
        for word in words {
            let (bucket, count) = word.split_once(':')?;
            let bucket: usize = bucket.parse().ok()?;
            histogram
                .buckets
                .get(bucket)?
                .fetch_add(count.parse().ok()?, Ordering::Relaxed);
        }
        Some(histogram)
    }

    /// p50, p90, p99 and max in milliseconds.
    pub fn percentiles_ms(&self) -> [f64; 4] {
        let ms = |us: u64| us as f64 / 1000.0;
        [
            ms(self.quantile(0.50)),
            ms(self.quantile(0.90)),
            ms(self.quantile(0.99)),
            ms(self.max.load(Ordering::Relaxed)),
        ]
    }
}

impl Report {
    fn moves_per_second(&self) -> f64 {
        if self.seconds > 0.0 {
            self.moves as f64 / self.seconds
        } else {
            0.0
        }
    }

    fn error_total(&self) -> u64 {
        self.errors.values().sum::<u64>() + self.failures.values().sum::<u64>()
    }

    /// Memory per game held, from the growth of the daemon's resident set.
    fn kib_per_game(&self) -> Option<f64> {
        let (before, after) = self.rss_kib?;
        let games = (self.connections / 2).max(1) as f64;
        Some(after.saturating_sub(before) as f64 / games)
    }

    /// One figure a line: `name value [unit]`.
    pub fn text(&self) -> String {
        let mut out = String::new();
        for note in &self.notes {
            let _ = writeln!(out, "note {note}");
        }
        let _ = writeln!(out, "connections {} of {}", self.connections, self.wanted);
        let _ = writeln!(out, "duration {:.1} s", self.seconds);
        let _ = writeln!(out, "games {}", self.games);
        let _ = writeln!(out, "moves {}", self.moves);
        let _ = writeln!(out, "moves/s {:.0}", self.moves_per_second());
        if let Some(rounds) = self.rounds {
            let _ = writeln!(
                out,
                "rounds done {} of {} connections ({rounds} games each)",
                self.rounds_done, self.connections
            );
        }
        for (name, value) in ["p50", "p90", "p99", "max"].iter().zip(self.latency_ms) {
            let _ = writeln!(out, "latency {name} {value:.2} ms");
        }
        let _ = writeln!(out, "load stall max {:.2} ms", self.stall_ms);
        let _ = writeln!(out, "errors {}", self.error_total());
        for (code, count) in &self.errors {
            let _ = writeln!(out, "errors {code} {count}");
        }
        for (reason, count) in &self.failures {
            let _ = writeln!(out, "failures {count} {reason}");
        }
        if let (Some((before, after)), Some(per_game)) = (self.rss_kib, self.kib_per_game()) {
            let _ = writeln!(out, "rss before {before} KiB");
            let _ = writeln!(out, "rss after {after} KiB");
            let _ = writeln!(out, "rss/game {per_game:.2} KiB");
        }
        out
    }

    /// The same figures as one JSON object.
    pub fn json(&self) -> String {
        let map = |m: &BTreeMap<String, u64>| -> String {
            let items: Vec<String> = m
                .iter()
                .map(|(k, v)| format!("{}:{v}", json_string(k)))
                .collect();
            format!("{{{}}}", items.join(","))
        };
        let codes: BTreeMap<String, u64> = self
            .errors
            .iter()
            .map(|(k, v)| (k.to_string(), *v))
            .collect();
        let [p50, p90, p99, max] = self.latency_ms;
        let rss = match (self.rss_kib, self.kib_per_game()) {
            (Some((before, after)), Some(per)) => {
                format!(
                    "{{\"before_kib\":{before},\"after_kib\":{after},\"per_game_kib\":{per:.2}}}"
                )
            }
            _ => "null".to_string(),
        };
        let rounds = match self.rounds {
            Some(asked) => format!("{{\"asked\":{asked},\"done\":{}}}", self.rounds_done),
            None => "null".to_string(),
        };
        let notes: Vec<String> = self.notes.iter().map(|n| json_string(n)).collect();
        format!(
            "{{\"connections\":{},\"wanted\":{},\"seconds\":{:.3},\"games\":{},\"moves\":{},\"moves_per_s\":{:.1},\
             \"latency_ms\":{{\"p50\":{p50},\"p90\":{p90},\"p99\":{p99},\"max\":{max}}},\"stall_ms\":{},\
             \"errors\":{{\"total\":{},\"by_code\":{}}},\"failures\":{},\"rss\":{rss},\"rounds\":{rounds},\"notes\":[{}]}}",
            self.connections,
            self.wanted,
            self.seconds,
            self.games,
            self.moves,
            self.moves_per_second(),
            self.stall_ms,
            self.error_total(),
            map(&codes),
            map(&self.failures),
            notes.join(",")
        )
    }
}

fn json_string(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The resident set of process `pid` in KiB, from /proc.
pub fn rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_quantiles_are_within_a_bucket() {
        let h = Histogram::default();
        for micros in 1..=1000u64 {
            h.record(micros * 10);
        }
        let [p50, p90, p99, max] = h.percentiles_ms();
        assert!((p50 - 5.0).abs() <= 0.1, "{p50}");
        assert!((p90 - 9.0).abs() <= 0.1, "{p90}");
        assert!((p99 - 9.9).abs() <= 0.1, "{p99}");
        assert_eq!(max, 10.0);
        assert_eq!(Histogram::default().quantile(0.5), 0);
        assert_eq!(bucket_upper(bucket_of(5_432)), 5_500);
        assert_eq!(bucket_upper(bucket_of(12_345)), 13_000);
        assert_eq!(bucket_upper(bucket_of(5)), 10);
    }

    #[test]
    fn reports_are_one_figure_a_line_or_json() {
        let mut report = Report {
            wanted: 4,
            connections: 4,
            moves: 100,
            seconds: 2.0,
            stall_ms: 1.5,
            ..Report::default()
        };
        report.errors.insert(429, 3);
        let text = report.text();
        assert!(text.contains("\nmoves/s 50\n"), "{text}");
        assert!(
            text.contains("\nerrors 3\n") && text.contains("\nerrors 429 3\n"),
            "{text}"
        );
        assert!(text.contains("latency p99 0.00 ms"), "{text}");
        assert!(text.contains("\nload stall max 1.50 ms\n"), "{text}");
        let json = report.json();
        assert!(json.starts_with('{') && json.ends_with('}'), "{json}");
        assert!(json.contains("\"by_code\":{\"429\":3}"), "{json}");
        assert!(json.contains("\"stall_ms\":1.5,"), "{json}");
        assert_eq!(json_string("a\"b\n"), "\"a\\\"b\\u000a\"");
    }
}
