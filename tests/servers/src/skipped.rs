//! What this test process ran its server tests against, and which tests it
//! skipped for want of a server, said on stderr when the process ends.
//!
//! A test that returns early counts as passed, and libtest captures what a
//! passing test prints: without this, a run that left the PostgreSQL and
//! cluster tests out would look like one that ran them. Libtest has no hook
//! at the end of a run; the process's exit is the one place after its
//! summary (cargo passes a test binary's stderr through), so the first
//! record registers an `atexit` function that prints the report.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::sync::{Mutex, Once, PoisonError};

use crate::programs::POSTGRES_LIBRARY;

/// What a skipped test wanted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Want {
    Postgres,
    /// The certificate authority of a PostgreSQL server the environment
    /// names (`FLIPLINE_TEST_POSTGRES_CA`).
    PostgresCa,
    /// PostgreSQL's programs, for a test that starts servers of its own.
    PostgresPrograms,
    Nats,
}

/// Everything the report says.
#[derive(Default)]
struct Record {
    /// The tests skipped (their names) and the programs found missing, by
    /// what they wanted.
    skipped: BTreeMap<Want, (BTreeSet<String>, Vec<&'static str>)>,
    /// The servers started for this process: what, and where.
    started: Vec<(&'static str, String)>,
    /// Skips on a thread not named after its test, told apart by number.
    unnamed: u64,
}

static RECORD: Mutex<Record> = Mutex::new(Record {
    skipped: BTreeMap::new(),
    started: Vec::new(),
    unnamed: 0,
});

fn with_record<T>(work: impl FnOnce(&mut Record) -> T) -> T {
    let mut record = RECORD.lock().unwrap_or_else(PoisonError::into_inner);
    work(&mut record)
}

/// Counts the calling test as skipped for want of `want`, with the
/// programs found `missing`, once however often it asks.
pub fn skipped(want: Want, missing: &[&'static str]) {
    // Libtest runs each test on a thread named after it; on any other
    // thread each call counts.
    let name = (std::thread::current().name())
        .filter(|name| *name != "main")
        .map(str::to_string);
    with_record(|record| note_skipped(record, want, name, missing));
    report_at_exit();
}

fn note_skipped(record: &mut Record, want: Want, test: Option<String>, missing: &[&'static str]) {
    let test = test.unwrap_or_else(|| {
        record.unnamed += 1;
        format!("#{}", record.unnamed)
    });
    let (tests, programs) = record.skipped.entry(want).or_default();
    tests.insert(test);
    *programs = missing.to_vec();
}

/// Notes that `what` was started for this process at `address`.
pub fn started(what: &'static str, address: String) {
    with_record(|record| record.started.push((what, address)));
    report_at_exit();
}

/// Registers [`at_exit`] with the C library, once.
#[allow(unsafe_code)]
fn report_at_exit() {
    static REGISTERED: Once = Once::new();
    REGISTERED.call_once(|| {
        // SAFETY: `atexit` only stores the pointer to a function that takes
        // nothing, reads this module's statics and does not unwind. If it
        // cannot be registered, the report is lost, nothing else.
        let _ = unsafe { libc::atexit(at_exit) };
    });
}

/// Prints the report, as the process exits (after libtest's summary).
extern "C" fn at_exit() {
    let report = with_record(|record| report(record));
    // Nowhere to say a failure to: stderr is the one place.
    let _ = std::io::stderr().write_all(report.as_bytes());
}

/// The report's text: a line a started server, then a line for each want
/// of skipped tests, saying how to have them run.
fn report(record: &Record) -> String {
    let mut text = String::new();
    for (what, address) in &record.started {
        text.push_str(&format!(
            "note: the tests needing {what} ran against a throwaway server started for them on {address}\n"
        ));
    }
    for (want, (tests, missing)) in &record.skipped {
        let count = match tests.len() {
            1 => "1 test".to_string(),
            n => format!("{n} tests"),
        };
        let postgres_place = format!("PATH or in {POSTGRES_LIBRARY}/*/bin");
        let remedy = match want {
            Want::Postgres => format!(
                "{}, or name a server in FLIPLINE_TEST_POSTGRES",
                install(missing, &postgres_place)
            ),
            Want::PostgresPrograms => install(missing, &postgres_place),
            Want::Nats => format!(
                "{}, or name a server in FLIPLINE_TEST_NATS",
                install(missing, "PATH")
            ),
            Want::PostgresCa => "FLIPLINE_TEST_POSTGRES names a server but \
                 FLIPLINE_TEST_POSTGRES_CA no certificate authority for it"
                .to_string(),
        };
        text.push_str(&format!(
            "note: {count} skipped, needing {}: {remedy}\n",
            what_of(*want)
        ));
    }
    text
}

fn what_of(want: Want) -> &'static str {
    match want {
        Want::Postgres => "PostgreSQL",
        Want::PostgresCa => "PostgreSQL's certificate authority",
        Want::PostgresPrograms => "PostgreSQL's programs (servers of their own)",
        Want::Nats => "a NATS server",
    }
}

/// That the `missing` programs were not found in `place`, and what to
/// install.
fn install(missing: &[&str], place: &str) -> String {
    format!(
        "{} not found on {place}: install {}",
        missing.join(", "),
        packages(missing)
    )
}

/// The Debian packages that bring `programs`, as a phrase.
fn packages(programs: &[&str]) -> String {
    let mut packages: Vec<&str> = Vec::new();
    for program in programs {
        let package = match *program {
            "openssl" | "nats-server" => program,
            _ => "postgresql",
        };
        if !packages.contains(&package) {
            packages.push(package);
        }
    }
    let named = packages.join(" and ");
    match packages.len() {
        1 => format!("Debian's package {named}"),
        _ => format!("Debian's packages {named}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn skipped_by(want: Want, tests: &[&str], missing: &[&'static str]) -> Record {
        let mut record = Record::default();
        let names = tests.iter().map(|t| t.to_string()).collect();
        record.skipped.insert(want, (names, missing.to_vec()));
        record
    }

    #[test]
    fn nothing_is_said_when_nothing_was_started_or_skipped() {
        assert_eq!(report(&Record::default()), "");
    }

    #[test]
    fn skipped_tests_are_counted_by_want_and_the_packages_named() {
        let mut record = skipped_by(
            Want::Postgres,
            &["a", "b"],
            &["initdb", "pg_ctl", "postgres", "psql"],
        );
        record
            .skipped
            .insert(Want::Nats, (["c".to_string()].into(), vec!["nats-server"]));
        assert_eq!(
            report(&record),
            "note: 2 tests skipped, needing PostgreSQL: initdb, pg_ctl, postgres, psql \
             not found on PATH or in /usr/lib/postgresql/*/bin: install Debian's package \
             postgresql, or name a server in FLIPLINE_TEST_POSTGRES\n\
             note: 1 test skipped, needing a NATS server: nats-server not found on PATH: \
             install Debian's package nats-server, or name a server in FLIPLINE_TEST_NATS\n"
        );
    }

    #[test]
    fn a_missing_openssl_is_its_own_package() {
        let record = skipped_by(Want::Postgres, &["a"], &["psql", "openssl"]);
        assert!(
            report(&record).contains("install Debian's packages postgresql and openssl,"),
            "{}",
            report(&record)
        );
    }

    #[test]
    fn started_servers_are_said_before_the_skipped_tests() {
        let mut record = skipped_by(Want::PostgresCa, &["tls"], &[]);
        record
            .started
            .push(("PostgreSQL", "127.0.0.1:27432".to_string()));
        let report = report(&record);
        let lines: Vec<&str> = report.lines().collect();
        assert_eq!(lines.len(), 2, "{report}");
        assert!(lines[0].contains("needing PostgreSQL ran against a throwaway server"));
        assert!(lines[0].ends_with("127.0.0.1:27432"));
        assert!(lines[1].starts_with("note: 1 test skipped, needing PostgreSQL's certificate"));
    }

    #[test]
    fn a_test_is_counted_once_however_often_it_is_skipped() {
        let mut record = Record::default();
        let nats = || Some("cluster::a".to_string());
        note_skipped(&mut record, Want::Nats, nats(), &["nats-server"]);
        note_skipped(&mut record, Want::Nats, nats(), &["nats-server"]);
        note_skipped(&mut record, Want::Nats, None, &["nats-server"]);
        note_skipped(&mut record, Want::Nats, None, &["nats-server"]);
        assert!(report(&record).starts_with("note: 3 tests skipped"));
    }
}
