//! The tests' daemons on PostgreSQL: with `FLIPLINE_TEST_STORE=postgres`
//! (on the tests' server, see `flipline_test_servers`), every daemon a
//! test starts keeps its store in a database of its own instead of a
//! SQLite file, so that the same tests hold the PostgreSQL store to the
//! same promises. The database belongs to the test's temporary directory
//! and is dropped with it ([`crate::remove_temp_dir`]).
//!
//! Tests that read or break the SQLite file itself ask [`on_postgres`] and
//! say that they are skipped.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use flipline_test_servers::ScratchDatabase;

/// Whether this run's daemons keep their stores in PostgreSQL.
pub fn on_postgres() -> bool {
    std::env::var("FLIPLINE_TEST_STORE").is_ok_and(|store| store == "postgres")
}

/// Says that a test is skipped on PostgreSQL (it reads or breaks the SQLite
/// file) and returns `true` if it is.
pub fn sqlite_only(why: &str) -> bool {
    let skipped = on_postgres();
    if skipped {
        eprintln!("skipped on PostgreSQL: {why}");
    }
    skipped
}

/// Each test directory's database.
static DATABASES: Mutex<Option<HashMap<PathBuf, ScratchDatabase>>> = Mutex::new(None);

fn with_databases<T>(work: impl FnOnce(&mut HashMap<PathBuf, ScratchDatabase>) -> T) -> T {
    let mut databases = DATABASES.lock().unwrap_or_else(PoisonError::into_inner);
    work(databases.get_or_insert_with(HashMap::new))
}

/// The URL of the database for the store in `dir` (made on first use), when
/// this run is on PostgreSQL.
pub(crate) fn database_for(dir: &Path) -> Option<String> {
    if !on_postgres() {
        return None;
    }
    if let Some(url) = database_of(dir) {
        return Some(url);
    }
    let what = dir
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    let db = ScratchDatabase::new(&what).unwrap_or_else(|| {
        panic!("FLIPLINE_TEST_STORE=postgres needs a PostgreSQL server (FLIPLINE_TEST_POSTGRES, or its programs installed)")
    });
    let url = db.url.clone();
    with_databases(|databases| databases.insert(dir.to_path_buf(), db));
    Some(url)
}

/// The database of the store in `dir`, if there is one (to look into it).
pub fn database_of(dir: &Path) -> Option<String> {
    with_databases(|databases| databases.get(dir).map(|db| db.url.clone()))
}

/// Where a daemon's store is, as `flip export --db` and `Archive::open`
/// take it: its PostgreSQL URL, or its file.
pub fn store_place(config: &flipd::Config) -> PathBuf {
    match config.store.url.is_empty() {
        true => config.store.path.clone(),
        false => PathBuf::from(config.store.url.expose()),
    }
}

/// The first column of the first row `sql` gives in a daemon's PostgreSQL
/// store, as text.
pub fn store_query(config: &flipd::Config, sql: &str) -> Option<String> {
    flipline_test_servers::query_text(config.store.url.expose(), sql)
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
}

/// Runs `sqlite` on a daemon's SQLite file, or `postgres` on its PostgreSQL
/// database: for a test that changes a store by hand (a trigger that
/// refuses writes, a row written as a crash would leave it).
pub fn store_execute(config: &flipd::Config, sqlite: &str, postgres: &str) {
    if config.store.url.is_empty() {
        let conn = rusqlite::Connection::open(&config.store.path)
            .unwrap_or_else(|e| panic!("{}: {e}", config.store.path.display()));
        conn.busy_timeout(std::time::Duration::from_secs(5))
            .unwrap_or_else(|e| panic!("{e}"));
        conn.execute_batch(sqlite)
            .unwrap_or_else(|e| panic!("{sqlite}: {e}"));
    } else {
        flipline_test_servers::execute(config.store.url.expose(), postgres)
            .unwrap_or_else(|e| panic!("{postgres}: {e}"));
    }
}

/// Drops the database of the store in `dir`, if any.
pub(crate) fn drop_database(dir: &Path) {
    // Dropped outside the lock: dropping a database waits for the server.
    let removed = with_databases(|databases| databases.remove(dir));
    drop(removed);
}

/// Runs `tests/tools/postgres.sh` with `args` (start, stop, crash or resume
/// a server of a test's own); what it prints.
pub fn postgres_tool(args: &[&str]) -> String {
    server_tool("postgres.sh", args)
}

/// Runs the script `tests/tools/<script>` with `args`; what it prints.
fn server_tool(script: &str, args: &[&str]) -> String {
    let tool = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tools")
        .join(script);
    let output = std::process::Command::new("bash")
        .arg(tool)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{script}: {e}"));
    assert!(
        output.status.success(),
        "{script} {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).trim().to_string()
}

/// Runs `tests/tools/nats.sh` with `args` (start, stop or restart a NATS
/// server of a test's own); what it prints.
pub fn nats_tool(args: &[&str]) -> String {
    server_tool("nats.sh", args)
}
