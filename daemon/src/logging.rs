//! The log: each line is formatted on the thread that logs it and written
//! to standard error by a thread of its own, so that no actor ever waits for
//! whatever reads flipd's standard error (a journald under pressure, a
//! terminal scrolled back, a full pipe). Logged synchronously, 20,000
//! logins at 64 KiB a second held every game for up to 54 s
//! (BENCHMARKS.md, "The log off the actors' threads").
//!
//! The queue holds [`QUEUED_LINES`]; past that, lines are dropped and
//! counted rather than let the games wait, and a warning says how many once
//! there is room again. At exit the queue is written out (for up to a
//! second) before flipd ends.

use std::time::Duration;

use tracing_appender::non_blocking::{ErrorCounter, NonBlockingBuilder, WorkerGuard};
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, Registry, reload};

use crate::LogFormat;

/// Lines the log may hold before they are dropped: a burst of tens of
/// thousands of logins fits (about 25 MB at most).
const QUEUED_LINES: usize = 128_000;

/// How often dropped lines are looked for.
const DROPS_CHECKED_EVERY: Duration = Duration::from_secs(10);

/// The running log: the handle that swaps its filter (SIGHUP), and the
/// writer thread, which writes out what is queued when this is dropped.
pub struct Logging {
    pub filter: reload::Handle<EnvFilter, Registry>,
    _writer: WorkerGuard,
}

/// Starts the log with `filter` (already checked).
pub fn start(format: LogFormat, filter: &str) -> Logging {
    let filter = EnvFilter::try_new(filter).unwrap_or_else(|_| EnvFilter::new("info"));
    let (filter, handle) = reload::Layer::new(filter);
    // Colour codes only for a person at a terminal, never in a log file.
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stderr())
        && std::env::var_os("NO_COLOR").is_none();
    let (writer, guard) = NonBlockingBuilder::default()
        .buffered_lines_limit(QUEUED_LINES)
        .lossy(true)
        .thread_name("log-writer")
        .finish(std::io::stderr());
    let drops = writer.error_counter();
    let lines = tracing_subscriber::fmt::layer()
        .with_ansi(ansi)
        .with_writer(writer);
    let registry = tracing_subscriber::registry().with(filter);
    match format {
        LogFormat::Text => registry.with(lines).init(),
        LogFormat::Json => registry.with(lines.json()).init(),
    }
    watch_drops(drops);
    Logging {
        filter: handle,
        _writer: guard,
    }
}

/// Warns, every [`DROPS_CHECKED_EVERY`] that saw any, how many lines the
/// full queue dropped. (The warning itself goes through the queue: when it
/// is still full, the next check counts it.)
fn watch_drops(drops: ErrorCounter) {
    let watch = move || {
        let mut told = 0;
        loop {
            std::thread::sleep(DROPS_CHECKED_EVERY);
            let dropped = drops.dropped_lines();
            if dropped > told {
                let since = dropped - told;
                tracing::warn!(
                    dropped = since,
                    "{since} log lines were dropped: whatever reads flipd's standard \
                     error is too slow for it (the games did not wait for it)"
                );
                told = dropped;
            }
        }
    };
    if let Err(e) = std::thread::Builder::new()
        .name("log-drops".into())
        .spawn(watch)
    {
        tracing::warn!("cannot watch the log for dropped lines: {e}");
    }
}
