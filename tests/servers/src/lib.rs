//! The PostgreSQL and NATS servers flipline's tests use, for the daemon's
//! unit tests and the end-to-end tests alike (a crate of its own so that
//! both reach the same code, and the daemon's library carries none of it).
//!
//! Each server is the one the environment names (`FLIPLINE_TEST_POSTGRES`,
//! with `FLIPLINE_TEST_POSTGRES_CA`; `FLIPLINE_TEST_NATS`), as `.ci/run`
//! starts them (`tests/tools/postgres.sh`, `nats.sh`). Without it a test
//! returns early, skipped with a word on stderr; where
//! `FLIPLINE_TEST_POSTGRES_REQUIRED` (or `FLIPLINE_TEST_NATS_REQUIRED`) is
//! set, as in CI, the test fails instead: they never pass by not running.
//!
//! - `scratch.rs`: [`ScratchDatabase`], a database for one test.

mod scratch;

use std::path::PathBuf;
use std::sync::OnceLock;

pub use scratch::{ScratchDatabase, execute, query_text, with_database};

/// A server the tests may use.
struct Server {
    url: String,
    /// The certificate authority of a PostgreSQL server, if known.
    ca: Option<PathBuf>,
}

/// One kind of server, as the tests look for it.
struct Kind {
    /// What it is called in messages.
    what: &'static str,
    /// The variable naming a server of the environment's.
    variable: &'static str,
    /// The variable naming that server's certificate authority, if any.
    ca_variable: Option<&'static str>,
    /// The variable that makes a missing server fail the tests.
    required: &'static str,
    /// The server, once looked for.
    found: OnceLock<Option<Server>>,
}

static POSTGRES: Kind = Kind {
    what: "PostgreSQL",
    variable: "FLIPLINE_TEST_POSTGRES",
    ca_variable: Some("FLIPLINE_TEST_POSTGRES_CA"),
    required: "FLIPLINE_TEST_POSTGRES_REQUIRED",
    found: OnceLock::new(),
};

static NATS: Kind = Kind {
    what: "NATS",
    variable: "FLIPLINE_TEST_NATS",
    ca_variable: None,
    required: "FLIPLINE_TEST_NATS_REQUIRED",
    found: OnceLock::new(),
};

/// The URL of the PostgreSQL server for the tests (its role `flipd` may
/// create databases), or `None` for the calling test to skip.
pub fn postgres_server() -> Option<String> {
    Some(server(&POSTGRES)?.url.clone())
}

/// The certificate authority of [`postgres_server`]'s server (for
/// `sslrootcert`), or `None` for the calling test to skip.
pub fn postgres_ca() -> Option<PathBuf> {
    let server = server(&POSTGRES)?;
    if server.ca.is_none() {
        let why =
            "FLIPLINE_TEST_POSTGRES_CA names no certificate authority for FLIPLINE_TEST_POSTGRES";
        if is_set(POSTGRES.required) {
            panic!("{why}");
        }
        eprintln!("skipped: {why}");
    }
    server.ca.clone()
}

/// The URL of the NATS server for the cluster's tests (with the user
/// `flipd`'s password in it), or `None` for the calling test to skip.
pub fn nats_server() -> Option<String> {
    Some(server(&NATS)?.url.clone())
}

/// The server found for `kind`, or `None` for a test to skip; panics where
/// `kind` is required.
fn server(kind: &'static Kind) -> Option<&'static Server> {
    let found = kind.found.get_or_init(|| {
        let url = variable(kind.variable)?;
        let ca = kind.ca_variable.and_then(variable).map(PathBuf::from);
        Some(Server { url, ca })
    });
    if found.is_none() {
        let why = format!("{} names no {} server", kind.variable, kind.what);
        if is_set(kind.required) {
            panic!("{}: {why}", kind.required);
        }
        eprintln!("skipped: {why}");
    }
    found.as_ref()
}

/// A variable's value, if set and not blank.
fn variable(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

fn is_set(name: &str) -> bool {
    std::env::var_os(name).is_some()
}
