//! The PostgreSQL and NATS servers flipline's tests use, for the daemon's
//! unit tests and the end-to-end tests alike (a crate of its own so that
//! both reach the same code, and the daemon's library carries none of it).
//!
//! Each server is, in this order:
//! 1. the one the environment names (`FLIPLINE_TEST_POSTGRES`, with
//!    `FLIPLINE_TEST_POSTGRES_CA`; `FLIPLINE_TEST_NATS`), as `.ci/run` does;
//! 2. else a throwaway one on loopback, started for this test process the
//!    first time a test asks, when its programs are installed
//!    (`throwaway.rs`), and stopped when the process ends;
//! 3. else none: the test returns early, skipped, and the process says at
//!    its end how many were and what to install (`skipped.rs`). Where
//!    `FLIPLINE_TEST_POSTGRES_REQUIRED` (or `FLIPLINE_TEST_NATS_REQUIRED`) is
//!    set, as in CI, the test fails instead: they never pass by not running.
//!
//! A server that should start and does not fails the tests that want it.
//!
//! - `programs.rs`: which programs are missing, found as the scripts find them.
//! - `throwaway.rs`: a server started by `serve.sh`, held for the process.
//! - `skipped.rs`: the skipped tests, and the report at the process's end.
//! - `scratch.rs`: [`ScratchDatabase`], a database for one test.

mod programs;
mod scratch;
mod skipped;
mod throwaway;

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

pub use scratch::{ScratchDatabase, execute, query_text, with_database};

use skipped::Want;

/// A server the tests may use.
struct Server {
    url: String,
    /// The certificate authority of a PostgreSQL server, if known.
    ca: Option<PathBuf>,
}

/// What was found for one kind of server, once for the process.
enum Found {
    Server(Server),
    /// Its programs are not installed (these are missing).
    Missing(Vec<&'static str>),
    /// It was to start and did not: why.
    Failed(String),
}

/// One kind of server, as the tests look for it.
struct Kind {
    want: Want,
    /// What it is called in messages.
    what: &'static str,
    /// The variable naming a server of the environment's.
    variable: &'static str,
    /// The variable naming that server's certificate authority, if any.
    ca_variable: Option<&'static str>,
    /// The variable that makes a missing server fail the tests.
    required: &'static str,
    /// The argument of `serve.sh`.
    serve: &'static str,
    /// What its throwaway server needs and is not installed, given `PATH`.
    missing: fn(&OsStr) -> Vec<&'static str>,
    /// The server, once looked for.
    found: OnceLock<Found>,
}

static POSTGRES: Kind = Kind {
    want: Want::Postgres,
    what: "PostgreSQL",
    variable: "FLIPLINE_TEST_POSTGRES",
    ca_variable: Some("FLIPLINE_TEST_POSTGRES_CA"),
    required: "FLIPLINE_TEST_POSTGRES_REQUIRED",
    serve: "postgres",
    missing: |path| programs::missing_for_postgres(path, Path::new(programs::POSTGRES_LIBRARY)),
    found: OnceLock::new(),
};

static NATS: Kind = Kind {
    want: Want::Nats,
    what: "NATS",
    variable: "FLIPLINE_TEST_NATS",
    ca_variable: None,
    required: "FLIPLINE_TEST_NATS_REQUIRED",
    serve: "nats",
    missing: programs::missing_for_nats,
    found: OnceLock::new(),
};

/// The URL of the PostgreSQL server for the tests (its role `flipd` may
/// create databases), or `None`, the calling test counted as skipped.
pub fn postgres_server() -> Option<String> {
    Some(server(&POSTGRES)?.url.clone())
}

/// The certificate authority of [`postgres_server`]'s server (for
/// `sslrootcert`), or `None`, the calling test counted as skipped.
pub fn postgres_ca() -> Option<PathBuf> {
    let server = server(&POSTGRES)?;
    if server.ca.is_none() {
        let why = "FLIPLINE_TEST_POSTGRES_CA names no certificate authority for its server";
        skip(&POSTGRES, Want::PostgresCa, why, &[]);
    }
    server.ca.clone()
}

/// Whether a test may start PostgreSQL servers of its own with
/// `tests/tools/postgres.sh` (to crash and resume them): its programs are
/// installed. If not, the calling test is counted as skipped.
pub fn may_start_postgres() -> bool {
    let missing = (POSTGRES.missing)(&search_path());
    if missing.is_empty() {
        return true;
    }
    let why = format!(
        "it starts servers of its own and {}",
        not_installed(&missing)
    );
    skip(&POSTGRES, Want::PostgresPrograms, &why, &missing);
    false
}

/// The URL of the NATS server for the cluster's tests (with the user
/// `flipd`'s password in it), or `None`, the calling test counted as
/// skipped.
pub fn nats_server() -> Option<String> {
    Some(server(&NATS)?.url.clone())
}

/// The server found for `kind`, or `None` for a test to skip; panics where
/// the server failed to start or is required.
fn server(kind: &'static Kind) -> Option<&'static Server> {
    // Tests asking at once wait for the one that starts it.
    match kind.found.get_or_init(|| find(kind)) {
        Found::Server(server) => Some(server),
        Found::Missing(missing) => {
            let why = format!(
                "{} names no {} server and {}",
                kind.variable,
                kind.what,
                not_installed(missing)
            );
            skip(kind, kind.want, &why, missing);
            None
        }
        Found::Failed(why) => panic!("{} for the tests: {why}", kind.what),
    }
}

/// The environment's server, else a throwaway one if its programs are here.
fn find(kind: &Kind) -> Found {
    if let Some(url) = variable(kind.variable) {
        let ca = kind.ca_variable.and_then(variable).map(PathBuf::from);
        return Found::Server(Server { url, ca });
    }
    let missing = (kind.missing)(&search_path());
    if !missing.is_empty() {
        return Found::Missing(missing);
    }
    match throwaway::start(kind.serve) {
        Ok(started) => {
            // Where it listens, without the URL's password.
            let authority = started.url.rsplit('@').next().unwrap_or_default();
            let address = authority.split('/').next().unwrap_or_default();
            skipped::started(kind.what, address.to_string());
            // postgres.sh makes the authority there; nats.sh none.
            let ca = kind.ca_variable.map(|_| started.dir.join("ca.pem"));
            Found::Server(Server {
                url: started.url,
                ca,
            })
        }
        Err(why) => Found::Failed(why),
    }
}

/// Fails the calling test where `kind` is required, else counts it as
/// skipped for want of `want`, the programs `missing` not installed.
fn skip(kind: &Kind, want: Want, why: &str, missing: &[&'static str]) {
    if is_set(kind.required) {
        panic!("{}: {why}", kind.required);
    }
    eprintln!("skipped: {why}");
    skipped::skipped(want, missing);
}

fn not_installed(missing: &[&str]) -> String {
    let verb = if missing.len() == 1 { "is" } else { "are" };
    format!("{} {verb} not installed", missing.join(", "))
}

/// A variable's value, if set and not blank.
fn variable(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

fn is_set(name: &str) -> bool {
    std::env::var_os(name).is_some()
}

fn search_path() -> OsString {
    std::env::var_os("PATH").unwrap_or_default()
}
