//! Databases made for one test and dropped after it, on the tests'
//! PostgreSQL server ([`crate::postgres_server`]: its role may create
//! databases).

use std::sync::atomic::{AtomicU64, Ordering};

use tokio_postgres::NoTls;

/// A database of its own, dropped (with anything still connected to it)
/// when this is dropped.
pub struct ScratchDatabase {
    server: String,
    name: String,
    /// The URL of the database itself, to give flipd.
    pub url: String,
}

impl ScratchDatabase {
    /// A new empty database on the tests' server named after `what`, or
    /// `None` when there is no server to use, the calling test counted as
    /// skipped (see [`crate::postgres_server`]).
    pub fn new(what: &str) -> Option<ScratchDatabase> {
        Some(ScratchDatabase::on(&crate::postgres_server()?, what))
    }

    /// A new empty database named after `what` on the server at `server`.
    pub fn on(server: &str, what: &str) -> ScratchDatabase {
        let server = server.to_string();
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let what: String = what
            .chars()
            .filter(|c| c.is_ascii_alphanumeric() || *c == '_')
            .take(30)
            .collect();
        let name = format!("flipd_{}_{n}_{what}", std::process::id()).to_ascii_lowercase();
        admin(&server, &format!("CREATE DATABASE {name}"))
            .unwrap_or_else(|e| panic!("cannot create a test database on {server}: {e}"));
        let url = with_database(&server, &name);
        ScratchDatabase { server, name, url }
    }

    /// Runs `sql` on this database (for a test that changes it by hand).
    pub fn execute(&self, sql: &str) -> Result<(), String> {
        execute(&self.url, sql)
    }

    /// The first column of the first row `sql` gives, as text.
    pub fn query_text(&self, sql: &str) -> Result<Option<String>, String> {
        query_text(&self.url, sql)
    }
}

impl Drop for ScratchDatabase {
    fn drop(&mut self) {
        let drop = format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", self.name);
        if let Err(e) = admin(&self.server, &drop) {
            eprintln!("cannot drop the test database {}: {e}", self.name);
        }
    }
}

/// The first column of the first row `sql` gives in the database at `url`,
/// as text.
pub fn query_text(url: &str, sql: &str) -> Result<Option<String>, String> {
    let (url, sql) = (url.to_string(), sql.to_string());
    on_runtime(async move {
        let client = connect(&url).await?;
        let rows = client.simple_query(&sql).await.map_err(|e| e.to_string())?;
        Ok(rows.iter().find_map(|message| match message {
            tokio_postgres::SimpleQueryMessage::Row(row) => row.get(0).map(str::to_string),
            _ => None,
        }))
    })
}

/// `url` with its database replaced by `name` (the URL form only).
pub fn with_database(url: &str, name: &str) -> String {
    let (base, query) = url
        .split_once('?')
        .map_or((url, None), |(b, q)| (b, Some(q)));
    let authority_start = base.find("://").map_or(0, |i| i + 3);
    let base = match base[authority_start..].find('/') {
        Some(slash) => &base[..authority_start + slash],
        None => base,
    };
    match query {
        Some(query) => format!("{base}/{name}?{query}"),
        None => format!("{base}/{name}"),
    }
}

async fn connect(url: &str) -> Result<tokio_postgres::Client, String> {
    let (client, connection) = tokio_postgres::connect(url, NoTls)
        .await
        .map_err(|e| e.to_string())?;
    tokio::spawn(connection);
    Ok(client)
}

/// Runs `sql` (statements without parameters) on the database at `url`.
pub fn execute(url: &str, sql: &str) -> Result<(), String> {
    admin(url, sql)
}

fn admin(url: &str, sql: &str) -> Result<(), String> {
    let (url, sql) = (url.to_string(), sql.to_string());
    on_runtime(async move {
        let client = connect(&url).await?;
        client.batch_execute(&sql).await.map_err(|e| e.to_string())
    })
}

/// Runs `work` on a runtime of its own, on a thread of its own, so that a
/// test may call this from inside another runtime.
fn on_runtime<T: Send + 'static>(
    work: impl std::future::Future<Output = Result<T, String>> + Send + 'static,
) -> Result<T, String> {
    let thread = std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| e.to_string())?;
        runtime.block_on(work)
    });
    thread
        .join()
        .unwrap_or_else(|_| Err("the database thread panicked".into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_urls_database_is_replaced_and_its_parameters_kept() {
        assert_eq!(
            with_database(
                "postgres://u:p@127.0.0.1:5432/postgres?sslmode=disable",
                "x"
            ),
            "postgres://u:p@127.0.0.1:5432/x?sslmode=disable"
        );
        assert_eq!(with_database("postgres://u@h", "x"), "postgres://u@h/x");
    }
}
