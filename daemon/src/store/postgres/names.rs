//! Names online across a cluster (`names_online`): a node's login takes
//! the name's row for its incarnation, and its logout gives it back. The
//! row's primary key on the folded name is what keeps one connection per
//! name in the whole cluster; a node's own lobby already keeps one per
//! name on the node, so a row of this incarnation is always this node's to
//! take again.

use tokio_postgres::Error;

use super::db::Db;
use crate::store::{NameClaim, SeatKept};

/// Takes `name` for `incarnation`, a live node's: from nobody, from this
/// incarnation itself, or from a node that is dead or whose lease passed
/// (it acknowledges nothing any more). The row is not taken while the
/// taker's own lease is not held.
const TAKE: &str = "INSERT INTO names_online (folded, name, incarnation, since) \
     SELECT lower($1), $1, $2, clock_timestamp() WHERE EXISTS (SELECT 1 FROM nodes \
     WHERE incarnation = $2 AND state = 'live' AND lease_until > clock_timestamp()) \
     ON CONFLICT (folded) DO UPDATE SET name = EXCLUDED.name, \
     incarnation = EXCLUDED.incarnation, since = EXCLUDED.since \
     WHERE names_online.incarnation = EXCLUDED.incarnation \
     OR names_online.incarnation IN (SELECT incarnation FROM nodes \
     WHERE state = 'dead' OR lease_until <= clock_timestamp()) \
     RETURNING incarnation";

/// The node holding `name`, and whether that is `incarnation` itself.
const HOLDER: &str = "SELECT n.node, o.incarnation = $2 FROM names_online o \
     JOIN nodes n ON n.incarnation = o.incarnation WHERE o.folded = lower($1)";

/// The game in play where `$1` sits (the first, if a fault left two), its
/// live owner, the guest's secret of that seat, and whether incarnation
/// `$2` owns it (a game this node has just taken over, which its lobby
/// may not hold yet).
const KEPT: &str = "SELECT g.id, n.node, CASE WHEN lower(g.black) = lower($1) \
     THEN g.black_secret ELSE g.white_secret END, g.owner IS NOT DISTINCT FROM $2 \
     FROM games g LEFT JOIN nodes n ON n.incarnation = g.owner AND n.state = 'live' \
     WHERE g.status = 'playing' \
     AND (lower(g.black) = lower($1) OR lower(g.white) = lower($1)) ORDER BY g.id LIMIT 1";

/// Takes `name` for `incarnation`, with its seat in a game in play if any, or
/// says which node holds it.
///
/// A refused take is read again to name the holder; if the row went
/// meanwhile (its holder logged out), the take is tried once more. A take
/// refused with no holder found is this node's own lease not held.
pub async fn claim(db: &mut Db, incarnation: i64, name: &str) -> Result<NameClaim, String> {
    for _ in 0..2 {
        let taken = db.query_opt(TAKE, &[&name, &incarnation]).await;
        if taken.map_err(|e| describe(&e))?.is_some() {
            let kept = kept_seat(db, incarnation, name).await;
            return Ok(NameClaim::Taken {
                kept: kept.map_err(|e| describe(&e))?,
            });
        }
        let holder = db.query_opt(HOLDER, &[&name, &incarnation]).await;
        match holder.map_err(|e| describe(&e))? {
            Some(row) if !row.get::<_, bool>(1) => return Ok(NameClaim::HeldBy(row.get(0))),
            // This incarnation's own row, not taken: its lease is not held.
            Some(_) => break,
            None => {}
        }
    }
    Err("this node's lease is not held: it takes no name".into())
}

/// `name`'s seat in a game in play, wherever it is.
async fn kept_seat(db: &mut Db, incarnation: i64, name: &str) -> Result<Option<SeatKept>, Error> {
    let row = db.query_opt(KEPT, &[&name, &incarnation]).await?;
    Ok(row.map(|row| SeatKept {
        game: u64::try_from(row.get::<_, i64>(0)).unwrap_or(0),
        here: row.get(3),
        node: row.get(1),
        secret: row.get(2),
    }))
}

/// The game in play where `name` is seated, if any (one at most: a name
/// sits in one game in play in the whole cluster).
pub async fn seat_in_play(db: &mut Db, name: &str) -> Result<Option<u64>, String> {
    const SQL: &str = "SELECT id FROM games WHERE status = 'playing' \
         AND (lower(black) = lower($1) OR lower(white) = lower($1)) ORDER BY id LIMIT 1";
    let row = db
        .query_opt(SQL, &[&name])
        .await
        .map_err(|e| describe(&e))?;
    Ok(row.and_then(|row| u64::try_from(row.get::<_, i64>(0)).ok()))
}

/// The live node where `name` is online, if any: one whose lease has not
/// passed (a name held by a node that stopped renewing is free to take).
pub async fn node_of(db: &mut Db, name: &str) -> Result<Option<String>, String> {
    const SQL: &str = "SELECT n.node FROM names_online o \
         JOIN nodes n ON n.incarnation = o.incarnation WHERE o.folded = lower($1) \
         AND n.state = 'live' AND n.lease_until > clock_timestamp()";
    let row = db
        .query_opt(SQL, &[&name])
        .await
        .map_err(|e| describe(&e))?;
    Ok(row.map(|row| row.get(0)))
}

/// Gives `name` back, if `incarnation` holds it.
pub async fn release(db: &mut Db, incarnation: i64, name: &str) -> Result<(), String> {
    const SQL: &str = "DELETE FROM names_online WHERE folded = lower($1) AND incarnation = $2";
    db.execute(SQL, &[&name, &incarnation])
        .await
        .map(|_| ())
        .map_err(|e| describe(&e))
}

fn describe(e: &Error) -> String {
    super::describe(e)
}

impl super::writer::PgWriter {
    /// Takes `name` for this node (see [`claim`]), on the writer's
    /// connection; refused while the lease is not held.
    pub(super) fn claim_name(&mut self, name: &str) -> Result<NameClaim, String> {
        let incarnation = self.incarnation()?;
        self.connected()?;
        let db = self.db.as_mut().ok_or("no connection to PostgreSQL")?;
        self.runtime.block_on(claim(db, incarnation, name))
    }

    /// Gives `name` back, if this node holds it (see [`release`]).
    pub(super) fn release_name(&mut self, name: &str) -> Result<(), String> {
        let incarnation = self.incarnation()?;
        self.connected()?;
        let db = self.db.as_mut().ok_or("no connection to PostgreSQL")?;
        self.runtime.block_on(release(db, incarnation, name))
    }

    /// This node's incarnation, while its lease is held.
    fn incarnation(&self) -> Result<i64, String> {
        let Some(member) = &self.member else {
            return Err("only a cluster node holds names online".into());
        };
        self.may_write()?;
        Ok(member.incarnation.number)
    }
}
