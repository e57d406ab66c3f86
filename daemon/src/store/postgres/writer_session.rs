//! The writer's connection: made with the writer's lock, after the one
//! before it has ended on the server, and the question a commit in doubt
//! asks on it.
//!
//! A commit in doubt is settled only once the transaction that made it can
//! no longer commit: the server process that served the lost connection
//! must be gone. Until then it may still be committing (an fsync that
//! stalls, a wait for a synchronous standby, a network that cut only the
//! client's side), and a mark read meanwhile could say "not committed" of
//! a batch that then lands. So the new connection ends the old process
//! (`pg_terminate_backend`: a transaction that has not reached its commit
//! record rolls back, one past it finishes first) and waits until the
//! server no longer lists it; only then is the mark read. A single daemon
//! also needs the old process gone to take its exclusive lock again.

use std::time::Duration;

use super::db::{Backend, Db};
use crate::config::StoreConfig;

/// The advisory lock the writing connection holds ("FLIP" and 2).
pub const WRITER_LOCK: i64 = 0x464C_4950_0000_0002;

/// How often, and how many times, a new connection looks whether the old
/// process has gone before it gives up for this attempt.
const GONE_POLL: Duration = Duration::from_millis(20);
const GONE_POLLS: u32 = 50;

/// A writing connection: connected, the process of the writer's previous
/// connection (`previous`) ended, and holding the writer's lock: alone for
/// a single daemon, shared among the nodes of a cluster (`clustered`), so
/// that a single daemon never writes beside a cluster nor two beside each
/// other.
pub async fn connect_writer(
    config: &StoreConfig,
    clustered: bool,
    previous: Option<&Backend>,
) -> Result<Db, String> {
    let mut db = Db::new(super::connect::connect(config).await?);
    if let Some(previous) = previous {
        end_previous(&mut db, previous).await?;
    }
    lock(&mut db, clustered).await?;
    db.learn_backend().await.map_err(|e| super::describe(&e))?;
    Ok(db)
}

/// Takes the writer's lock on `db`.
async fn lock(db: &mut Db, clustered: bool) -> Result<(), String> {
    let sql = match clustered {
        false => "SELECT pg_try_advisory_lock($1)",
        true => "SELECT pg_try_advisory_lock_shared($1)",
    };
    let locked: bool = db
        .client()
        .query_one(sql, &[&WRITER_LOCK])
        .await
        .map_err(|e| super::describe(&e))?
        .get(0);
    match (locked, clustered) {
        (true, false) => Ok(()),
        (true, true) => {
            // A node stopped in the middle of a transaction (paused, cut
            // off) would hold its games' rows locked, and so keep the
            // others from taking them: the server ends such a transaction.
            let sql = "SET idle_in_transaction_session_timeout = '2s'";
            db.batch(sql).await.map_err(|e| super::describe(&e))
        }
        (false, false) => Err(
            "another flipd is writing to this database (a single daemon, or \
             the nodes of a cluster)"
                .into(),
        ),
        (false, true) => Err("a single flipd (not a cluster node) is writing to this \
             database: stop it before starting nodes on it"
            .into()),
    }
}

/// Ends the server process of the writer's previous connection and waits
/// until the server no longer lists it: from then on its transaction is
/// over, committed or not for good.
async fn end_previous(db: &mut Db, previous: &Backend) -> Result<(), String> {
    const END: &str = "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
         WHERE pid = $1 AND backend_start::text = $2";
    const LISTED: &str = "SELECT EXISTS (SELECT 1 FROM pg_stat_activity \
         WHERE pid = $1 AND backend_start::text = $2)";
    let params: [&(dyn tokio_postgres::types::ToSql + Sync); 2] =
        [&previous.pid, &previous.started];
    if let Err(e) = db.client().query(END, &params).await {
        // Not allowed to end it (another role): it ends when the server
        // notices the connection is gone, which is waited for below.
        tracing::debug!(error = %super::describe(&e), "could not end the writer's last process");
    }
    for _ in 0..GONE_POLLS {
        let listed: bool = db
            .client()
            .query_one(LISTED, &params)
            .await
            .map_err(|e| super::describe(&e))?
            .get(0);
        if !listed {
            return Ok(());
        }
        tokio::time::sleep(GONE_POLL).await;
    }
    Err(format!(
        "the server still runs the writer's last connection (process {}): waiting for it \
         to end before anything is written or any commit in doubt is settled",
        previous.pid
    ))
}

/// Connects again (ending the process of the lost connection, `lost`,
/// first) and reads whether the batch marked `mark` committed.
pub async fn read_mark(
    config: &StoreConfig,
    clustered: bool,
    lost: Option<&Backend>,
    writer: &str,
    mark: (i64, i64),
) -> Result<(Db, bool), String> {
    let mut db = connect_writer(config, clustered, lost).await?;
    const SQL: &str = "SELECT run, batch FROM writer_commits WHERE writer = $1";
    let row = db
        .query_opt(SQL, &[&writer])
        .await
        .map_err(|e| super::describe(&e))?;
    let committed = row.is_some_and(|r| (r.get::<_, i64>(0), r.get::<_, i64>(1)) == mark);
    Ok((db, committed))
}
