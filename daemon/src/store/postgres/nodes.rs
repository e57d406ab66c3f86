//! The nodes of a cluster as rows of PostgreSQL: joining (a new
//! incarnation of a node), renewing the lease, declaring the nodes whose
//! lease passed dead, leaving, and claiming a dead node's games. Every
//! judgement of time is the database's (`clock_timestamp()`), never a
//! node's clock.

use std::time::{Duration, Instant};

use tokio_postgres::error::SqlState;

use super::db::Db;
use super::describe;
pub use crate::store::membership::{Incarnation, Member};

/// A lease's length as the database adds it to its clock.
fn millis(lease: Duration) -> f64 {
    lease.as_secs_f64() * 1000.0
}

/// How long a start waits for an earlier incarnation of its node to lapse
/// beyond the lease itself (its last renewal may have just been made).
const JOIN_SLACK: Duration = Duration::from_secs(2);

/// Joins the cluster as a new incarnation of `node`. An incarnation of the
/// same node still live (a restart within the lease) is waited out until
/// its lease passes and it can be declared dead; one that goes on renewing
/// is another flipd running as this node: an error.
pub async fn join(db: &mut Db, node: &str, lease: Duration) -> Result<Incarnation, String> {
    const SQL: &str = "INSERT INTO nodes (incarnation, node, started_at, lease_until, state) \
         VALUES (nextval('node_incarnations'), $1, clock_timestamp(), \
         clock_timestamp() + $2 * interval '1 millisecond', 'live') RETURNING incarnation";
    let give_up = Instant::now() + lease + JOIN_SLACK;
    let mut said = false;
    loop {
        // Only an earlier start of this node: the others are judged by the
        // lease keeper, once this node has held its lease a while.
        declare_expired_start(db, node).await?;
        match db.query_opt(SQL, &[&node, &millis(lease)]).await {
            Ok(Some(row)) => {
                return Ok(Incarnation {
                    node: node.to_string(),
                    number: row.get(0),
                });
            }
            Ok(None) => return Err("the database gave no incarnation".into()),
            Err(e) if e.code() == Some(&SqlState::UNIQUE_VIOLATION) => {
                if Instant::now() >= give_up {
                    return Err(format!(
                        "node {node:?} is live: another flipd runs as this node and renews \
                         its lease (give each node a name of its own)"
                    ));
                }
                if !said {
                    tracing::info!(
                        node,
                        "an earlier start of this node is still live by its lease: waiting \
                         for the lease to pass"
                    );
                    said = true;
                }
                tokio::time::sleep(Duration::from_millis(250)).await;
            }
            Err(e) => return Err(describe(&e)),
        }
    }
}

/// Renews the lease of `incarnation`: `Ok(false)` if the database no longer
/// holds it live (another node declared it dead).
pub async fn renew(
    db: &mut Db,
    incarnation: i64,
    lease: Duration,
    bus: Option<(bool, Duration)>,
) -> Result<Option<bool>, String> {
    // The bus's state is stamped by the database's clock, back by how long
    // the node has seen it so; the answer says whether another live node
    // has heard the bus for a whole lease (longer than any node takes to
    // reconnect once NATS is back, so that a restart of NATS, which cuts
    // every node, never makes the slowest to reconnect give its games up).
    const SQL: &str = "UPDATE nodes SET lease_until = clock_timestamp() + \
         $2::float8 * interval '1 millisecond', bus_up = $3, \
         bus_changed = clock_timestamp() - $4::float8 * interval '1 millisecond' \
         WHERE incarnation = $1 AND state = 'live' \
         RETURNING EXISTS (SELECT 1 FROM nodes o WHERE o.incarnation <> $1 \
         AND o.state = 'live' AND o.lease_until > clock_timestamp() AND o.bus_up \
         AND o.bus_changed <= clock_timestamp() - $2::float8 * interval '1 millisecond')";
    let (up, since) = match bus {
        Some((up, since)) => (Some(up), millis(since)),
        None => (None, 0.0),
    };
    let row = db
        .query_opt(SQL, &[&incarnation, &millis(lease), &up, &since])
        .await
        .map_err(|e| describe(&e))?;
    Ok(row.map(|row| row.get(0)))
}

/// The condition that `$1`, the node asking, is live by its own lease at
/// this moment of the database's clock: only such a node judges others,
/// claims their games or takes the lobby's lead. A statement delayed in the
/// network (sent before a cut, run after the heal, when every lease may
/// have passed, its sender's too) then decides nothing.
macro_rules! asker_live {
    () => {
        "EXISTS (SELECT 1 FROM nodes me WHERE me.incarnation = $1 \
         AND me.state = 'live' AND me.lease_until > clock_timestamp())"
    };
}
pub(super) use asker_live;

/// Declares dead every other live node whose lease passed, and forgets the
/// names they held; the ones declared here (another node may have declared
/// some first). Nothing, unless `incarnation`'s own lease holds.
pub async fn declare_expired(db: &mut Db, incarnation: i64) -> Result<Vec<Incarnation>, String> {
    const SQL: &str = concat!(
        "WITH dead AS (UPDATE nodes SET state = 'dead' \
         WHERE state = 'live' AND lease_until < clock_timestamp() AND incarnation <> $1 \
         AND ",
        asker_live!(),
        " RETURNING node, incarnation), \
         names AS (DELETE FROM names_online WHERE incarnation IN (SELECT incarnation FROM dead)) \
         SELECT node, incarnation FROM dead"
    );
    let rows = db
        .query(SQL, &[&incarnation])
        .await
        .map_err(|e| describe(&e))?;
    Ok(rows
        .iter()
        .map(|row| Incarnation {
            node: row.get(0),
            number: row.get(1),
        })
        .collect())
}

/// Declares dead an earlier start of `node` whose lease passed.
async fn declare_expired_start(db: &mut Db, node: &str) -> Result<(), String> {
    const SQL: &str = "WITH dead AS (UPDATE nodes SET state = 'dead' \
         WHERE node = $1 AND state = 'live' AND lease_until < clock_timestamp() \
         RETURNING incarnation) \
         DELETE FROM names_online WHERE incarnation IN (SELECT incarnation FROM dead)";
    db.execute(SQL, &[&node])
        .await
        .map(|_| ())
        .map_err(|e| describe(&e))
}

/// Leaves the cluster (a node stopping): declared dead at once, so that
/// the others take its games without waiting for its lease.
pub async fn leave(db: &mut Db, incarnation: i64) -> Result<(), String> {
    const SQL: &str = "WITH dead AS (UPDATE nodes SET state = 'dead', \
         lease_until = clock_timestamp() WHERE incarnation = $1 AND state = 'live' \
         RETURNING incarnation) \
         DELETE FROM names_online WHERE incarnation IN (SELECT incarnation FROM dead)";
    db.execute(SQL, &[&incarnation])
        .await
        .map(|_| ())
        .map_err(|e| describe(&e))
}

/// The other live nodes' names (live and within their lease).
pub async fn peers(db: &mut Db, incarnation: i64) -> Result<Vec<String>, String> {
    const SQL: &str = "SELECT node FROM nodes WHERE state = 'live' \
         AND lease_until > clock_timestamp() AND incarnation <> $1 ORDER BY node";
    let rows = db
        .query(SQL, &[&incarnation])
        .await
        .map_err(|e| describe(&e))?;
    Ok(rows.iter().map(|row| row.get(0)).collect())
}

/// The lobby's leader as the database holds it: its node and epoch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Leader {
    pub node: String,
    pub epoch: i64,
}

/// Takes the lobby's lead for `incarnation` if nobody holds it, or (with
/// `judge`: this node may judge others) if its holder is no longer live by
/// its lease, or (`hears`: this node's bus is up) its holder's bus has been
/// down for half a `lease` (nobody reaches it to seek); and only while
/// `incarnation` is live by its own. Then reads who leads.
pub async fn lead(
    db: &mut Db,
    incarnation: i64,
    (judge, hears): (bool, bool),
    lease: Duration,
) -> Result<Option<Leader>, String> {
    const TAKE: &str = concat!(
        "INSERT INTO leaders (role, incarnation, epoch) SELECT 'lobby', $1, 1 WHERE ",
        asker_live!(),
        " ON CONFLICT (role) DO UPDATE SET incarnation = EXCLUDED.incarnation, \
         epoch = leaders.epoch + 1 WHERE $2 AND leaders.incarnation <> EXCLUDED.incarnation \
         AND NOT EXISTS (SELECT 1 FROM nodes n WHERE n.incarnation = leaders.incarnation \
         AND n.state = 'live' AND n.lease_until > clock_timestamp() \
         AND NOT ($3 AND n.bus_up IS FALSE \
         AND n.bus_changed <= clock_timestamp() - $4::float8 / 2 * interval '1 millisecond'))"
    );
    const READ: &str = "SELECT n.node, l.epoch FROM leaders l \
         JOIN nodes n ON n.incarnation = l.incarnation WHERE l.role = 'lobby'";
    db.execute(TAKE, &[&incarnation, &judge, &hears, &millis(lease)])
        .await
        .map_err(|e| describe(&e))?;
    let row = db.query_opt(READ, &[]).await.map_err(|e| describe(&e))?;
    Ok(row.map(|row| Leader {
        node: row.get(0),
        epoch: row.get(1),
    }))
}

/// Whether some game open or in play has no live owner (a dead node's, or a
/// single daemon's left over), to be claimed.
pub async fn orphans(db: &mut Db) -> Result<bool, String> {
    const SQL: &str = "SELECT EXISTS (SELECT 1 FROM games g \
         WHERE g.status IN ('open', 'playing') AND (g.owner IS NULL OR g.owner IN \
         (SELECT incarnation FROM nodes WHERE state = 'dead')))";
    let row = db.query_opt(SQL, &[]).await.map_err(|e| describe(&e))?;
    Ok(row.is_some_and(|row| row.get(0)))
}

/// The games a claim took, in the claim's transaction.
pub struct Claimed {
    /// In play: to be started on this node.
    pub playing: Vec<i64>,
    /// Open (their creators left with the dead node): cancelled.
    pub cancelled: Vec<i64>,
}

/// Claims up to `share` games without a live owner for `incarnation`, in
/// the open transaction; games another node is claiming meanwhile are
/// skipped, so survivors share a dead node's games; none while
/// `incarnation` is not live by its own lease (a node declared dead, or
/// one whose claim was delayed past its lease, takes nothing). Each game's owner
/// changes under a row lock that every fenced write of its old owner takes
/// too (`FOR SHARE`), so no write of the old owner lands after the claim.
pub async fn claim(
    db: &mut Db,
    incarnation: i64,
    share: i64,
) -> Result<Claimed, tokio_postgres::Error> {
    const CLAIM: &str = concat!(
        "UPDATE games SET owner = $1 WHERE ",
        asker_live!(),
        " AND id IN (SELECT id FROM games \
         WHERE status IN ('open', 'playing') AND (owner IS NULL OR owner IN \
         (SELECT incarnation FROM nodes WHERE state = 'dead')) \
         ORDER BY id LIMIT $2 FOR UPDATE SKIP LOCKED) RETURNING id, status"
    );
    const CANCEL: &str = "UPDATE games SET status = 'cancelled', ended_at = clock_timestamp(), \
         black_secret = NULL, white_secret = NULL WHERE id = ANY($1)";
    let rows = db.query(CLAIM, &[&incarnation, &share]).await?;
    let mut claimed = Claimed {
        playing: Vec::new(),
        cancelled: Vec::new(),
    };
    for row in rows {
        let (id, status): (i64, String) = (row.get(0), row.get(1));
        match status.as_str() {
            "open" => claimed.cancelled.push(id),
            _ => claimed.playing.push(id),
        }
    }
    if !claimed.cancelled.is_empty() {
        db.execute(CANCEL, &[&claimed.cancelled]).await?;
    }
    Ok(claimed)
}

/// The cluster's number (see the schema's `cluster_identity`).
pub async fn cluster_identity(db: &mut Db) -> Result<String, String> {
    const SQL: &str = "SELECT id FROM cluster_identity LIMIT 1";
    let row = db.query_opt(SQL, &[]).await.map_err(|e| describe(&e))?;
    row.map(|row| row.get(0))
        .ok_or_else(|| "the database holds no cluster number".to_string())
}

/// The node that owns `game` (open or in play), if any, and whether it is
/// live (a dead one's games are about to be taken over).
pub async fn owner_of(db: &mut Db, game: u64) -> Result<Option<(String, bool)>, String> {
    const SQL: &str = "SELECT n.node, n.state = 'live' FROM games g \
         JOIN nodes n ON n.incarnation = g.owner \
         WHERE g.id = $1 AND g.status IN ('open', 'playing')";
    let row = db
        .query_opt(SQL, &[&super::to_i64(game)])
        .await
        .map_err(|e| describe(&e))?;
    Ok(row.map(|row| (row.get(0), row.get(1))))
}

/// The games in play this incarnation owns.
pub async fn owned_in_play(
    db: &mut Db,
    incarnation: i64,
) -> Result<Vec<i64>, tokio_postgres::Error> {
    const SQL: &str = "SELECT id FROM games WHERE owner = $1 AND status = 'playing'";
    let rows = db.query(SQL, &[&incarnation]).await?;
    Ok(rows.iter().map(|row| row.get(0)).collect())
}

/// The next block of numbers of `kind` (`game` or `tourney`): `size`
/// numbers above every one the store holds and every block given before.
pub async fn number_block(
    db: &mut Db,
    kind: &'static str,
    size: u64,
) -> Result<std::ops::Range<u64>, String> {
    const GAMES: &str = "UPDATE number_blocks SET next = GREATEST(next, \
         (SELECT COALESCE(MAX(id), 0) + 1 FROM games)) + $1 WHERE kind = 'game' \
         RETURNING next - $1";
    const TOURNEYS: &str = "UPDATE number_blocks SET next = GREATEST(next, \
         (SELECT COALESCE(MAX(id), 0) + 1 FROM tourneys)) + $1 WHERE kind = 'tourney' \
         RETURNING next - $1";
    let sql = match kind {
        "game" => GAMES,
        _ => TOURNEYS,
    };
    let size_i64 = super::to_i64(size);
    let row = db
        .query_opt(sql, &[&size_i64])
        .await
        .map_err(|e| describe(&e))?
        .ok_or("the database holds no numbers of that kind")?;
    let start = u64::try_from(row.get::<_, i64>(0)).map_err(|_| "a negative number".to_string())?;
    Ok(start..start.saturating_add(size))
}
