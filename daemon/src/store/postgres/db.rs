//! One connection and its prepared statements. Each statement is prepared
//! once a connection, the first time it is used, so that running it later
//! is one round trip (the text of a statement is sent once, not per write).

use std::collections::HashMap;

use tokio_postgres::types::ToSql;
use tokio_postgres::{Client, Error, Row, Statement};

/// Parameters of a statement.
pub type Params<'a> = &'a [&'a (dyn ToSql + Sync)];

/// A connection and its statements, prepared as they are used.
pub struct Db {
    client: Client,
    prepared: HashMap<&'static str, Statement>,
    /// The server's process serving it, once asked (the writer's).
    backend: Option<Backend>,
}

/// One server process serving one connection: its process number and when
/// it started, which together name it for good (a number may be reused).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Backend {
    pub pid: i32,
    pub started: String,
}

impl Db {
    pub fn new(client: Client) -> Db {
        Db {
            client,
            prepared: HashMap::new(),
            backend: None,
        }
    }

    /// Asks the server which process serves this connection, and keeps it.
    pub async fn learn_backend(&mut self) -> Result<(), Error> {
        const SQL: &str = "SELECT pid, backend_start::text FROM pg_stat_activity \
             WHERE pid = pg_backend_pid()";
        let row = self.client.query_one(SQL, &[]).await?;
        self.backend = Some(Backend {
            pid: row.get(0),
            started: row.get(1),
        });
        Ok(())
    }

    /// The server's process serving this connection, if asked.
    pub fn backend(&self) -> Option<&Backend> {
        self.backend.as_ref()
    }

    /// Whether the connection is gone (its server closed it or went away).
    pub fn is_closed(&self) -> bool {
        self.client.is_closed()
    }

    /// The client, for reads run once (checks).
    pub fn reader(&self) -> &Client {
        &self.client
    }

    /// The client itself, for statements run once (migrations, checks).
    pub fn client(&mut self) -> &mut Client {
        &mut self.client
    }

    async fn statement(&mut self, sql: &'static str) -> Result<Statement, Error> {
        if let Some(statement) = self.prepared.get(sql) {
            return Ok(statement.clone());
        }
        let statement = self.client.prepare(sql).await?;
        self.prepared.insert(sql, statement.clone());
        Ok(statement)
    }

    /// Runs `sql`; the rows it changed.
    pub async fn execute(&mut self, sql: &'static str, params: Params<'_>) -> Result<u64, Error> {
        let statement = self.statement(sql).await?;
        self.client.execute(&statement, params).await
    }

    /// Runs `sql`; its rows.
    pub async fn query(
        &mut self,
        sql: &'static str,
        params: Params<'_>,
    ) -> Result<Vec<Row>, Error> {
        let statement = self.statement(sql).await?;
        self.client.query(&statement, params).await
    }

    /// Runs `sql`; its row, if any.
    pub async fn query_opt(
        &mut self,
        sql: &'static str,
        params: Params<'_>,
    ) -> Result<Option<Row>, Error> {
        let statement = self.statement(sql).await?;
        self.client.query_opt(&statement, params).await
    }

    /// Runs statements without parameters (`BEGIN`, `COMMIT`), in one
    /// round trip.
    pub async fn batch(&self, sql: &str) -> Result<(), Error> {
        self.client.batch_execute(sql).await
    }
}
