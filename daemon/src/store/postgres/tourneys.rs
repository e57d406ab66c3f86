//! Tournaments in PostgreSQL: the same facts as in the SQLite store (see
//! `store/tourneys.rs`), written as they happen and read back at start.

use flipline::Move;
use flipline::notation::{parse_transcript, transcript_string};
use flipline::protocol::{TourneyId, TourneySpec};
use tokio_postgres::Error;

use super::db::Db;
use super::to_i64;
use crate::store::tourneys::{OVER_KEPT, absent_of, absent_word, stored_game};
use crate::store::{StoredForfeit, StoredTourney, StoredTourneyGame, TourneyWrite};

/// Runs a tournament's write; the rows it changed. A new tournament is
/// owned by `owner`, the cluster node that makes it (see `writes::runs`).
pub async fn apply(write: &TourneyWrite, db: &mut Db, owner: Option<i64>) -> Result<u64, Error> {
    match write {
        TourneyWrite::New { id, creator, spec } => {
            const SQL: &str = "INSERT INTO tourneys (id, creator, spec, created_at, owner) \
                 VALUES ($1, $2, $3, now(), $4)";
            db.execute(SQL, &[&to_i64(*id), creator, &spec.to_string(), &owner])
                .await
        }
        TourneyWrite::Join { id, name } => {
            const SQL: &str = "INSERT INTO tourney_players (tourney, seq, name) \
                 SELECT $1, (SELECT COALESCE(MAX(seq), 0) + 1 FROM tourney_players \
                 WHERE tourney = $1), $2 WHERE NOT EXISTS (SELECT 1 FROM tourney_players \
                 WHERE tourney = $1 AND lower(name) = lower($2))";
            db.execute(SQL, &[&to_i64(*id), name]).await
        }
        TourneyWrite::Leave { id, name } => {
            const SQL: &str =
                "DELETE FROM tourney_players WHERE tourney = $1 AND lower(name) = lower($2)";
            db.execute(SQL, &[&to_i64(*id), name]).await
        }
        TourneyWrite::Round {
            id,
            round,
            forfeits,
        } => {
            const SQL: &str = "UPDATE tourneys SET round = GREATEST(round, $2) WHERE id = $1";
            let round = i32::try_from(*round).unwrap_or(i32::MAX);
            let mut changed = db.execute(SQL, &[&to_i64(*id), &round]).await?;
            for forfeit in forfeits {
                changed += store_forfeit(db, *id, forfeit).await?;
            }
            Ok(changed)
        }
        TourneyWrite::Forfeit { id, forfeit } => store_forfeit(db, *id, forfeit).await,
        TourneyWrite::Start { id, group, moves } => {
            const SQL: &str = "INSERT INTO tourney_starts (tourney, start_group, moves) \
                 VALUES ($1, $2, $3) ON CONFLICT (tourney, start_group) \
                 DO UPDATE SET moves = EXCLUDED.moves";
            let group = i32::try_from(*group).unwrap_or(i32::MAX);
            db.execute(SQL, &[&to_i64(*id), &group, &transcript_string(moves)])
                .await
        }
        TourneyWrite::Over { id, winner } => {
            const SQL: &str =
                "UPDATE tourneys SET over = true, winner = $2, ended_at = now() WHERE id = $1";
            db.execute(SQL, &[&to_i64(*id), winner]).await
        }
    }
}

/// A forfeit, written again (last in its round's order) if already there.
async fn store_forfeit(db: &mut Db, id: TourneyId, f: &StoredForfeit) -> Result<u64, Error> {
    const SQL: &str = "INSERT INTO tourney_forfeits (tourney, round, black, white, absent) \
         VALUES ($1, $2, $3, $4, $5) ON CONFLICT (tourney, round, black, white) \
         DO UPDATE SET absent = EXCLUDED.absent, seq = nextval('tourney_forfeit_order')";
    let round = i32::try_from(f.round).unwrap_or(i32::MAX);
    let absent = absent_word(f.absent);
    db.execute(SQL, &[&to_i64(id), &round, &f.black, &f.white, &absent])
        .await
}

/// The tournaments not over, and the last [`OVER_KEPT`] over, by number.
pub async fn load(db: &mut Db) -> Result<Vec<StoredTourney>, Error> {
    const SQL: &str = "SELECT id, creator, spec, round, over FROM tourneys \
         WHERE NOT over OR id IN (SELECT id FROM tourneys WHERE over ORDER BY id DESC LIMIT $1) \
         ORDER BY id";
    let rows = db.query(SQL, &[&i64::from(OVER_KEPT)]).await?;
    read_back(db, rows).await
}

/// The most tournaments one claim takes: the rest wait for the next.
const CLAIM_SHARE: i64 = 4;

/// Takes over for `incarnation` up to [`CLAIM_SHARE`] tournaments not over
/// whose owner is dead (or that no node owns), and reads them back, in one
/// transaction: a claim whose reading failed is not kept, so no tournament
/// is owned by a node that does not hold it. Tournaments another node is
/// claiming meanwhile are skipped; none while `incarnation` is not live by
/// its own lease. Each owner changes under a row lock that
/// every fenced write of the old owner takes too (`writes::runs`).
pub async fn claim(db: &mut Db, incarnation: i64) -> Result<Vec<StoredTourney>, Error> {
    // The lease keeper asks every second: one statement when nothing is to
    // be taken (the common case), the transaction only when something is.
    const ANY: &str = "SELECT EXISTS (SELECT 1 FROM tourneys WHERE NOT over AND \
         (owner IS NULL OR owner IN (SELECT incarnation FROM nodes WHERE state = 'dead')))";
    const CLAIM: &str = concat!(
        "UPDATE tourneys SET owner = $1 WHERE ",
        super::nodes::asker_live!(),
        " AND id IN (SELECT id FROM tourneys \
         WHERE NOT over AND (owner IS NULL OR owner IN \
         (SELECT incarnation FROM nodes WHERE state = 'dead')) \
         ORDER BY id LIMIT $2 FOR UPDATE SKIP LOCKED) RETURNING id"
    );
    const READ: &str =
        "SELECT id, creator, spec, round, over FROM tourneys WHERE id = ANY($1) ORDER BY id";
    let any = db.query_opt(ANY, &[]).await?;
    if !any.is_some_and(|row| row.get::<_, bool>(0)) {
        return Ok(Vec::new());
    }
    db.batch("BEGIN").await?;
    let claimed = async {
        let rows = db.query(CLAIM, &[&incarnation, &CLAIM_SHARE]).await?;
        let ids: Vec<i64> = rows.iter().map(|row| row.get(0)).collect();
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let rows = db.query(READ, &[&ids]).await?;
        read_back(db, rows).await
    }
    .await;
    let end = if claimed.is_ok() {
        "COMMIT"
    } else {
        "ROLLBACK"
    };
    let ended = db.batch(end).await;
    let claimed = claimed?;
    ended?;
    Ok(claimed)
}

/// The tournaments not over that `incarnation` owns: read again after a
/// claim whose commit went unanswered (it may have happened).
pub async fn owned(db: &mut Db, incarnation: i64) -> Result<Vec<StoredTourney>, Error> {
    const SQL: &str = "SELECT id, creator, spec, round, over FROM tourneys \
         WHERE owner = $1 AND NOT over ORDER BY id";
    let rows = db.query(SQL, &[&incarnation]).await?;
    read_back(db, rows).await
}

/// The tournaments of `rows` (id, creator, spec, round, over) with their
/// players, games, forfeits and starts.
async fn read_back(
    db: &mut Db,
    rows: Vec<tokio_postgres::Row>,
) -> Result<Vec<StoredTourney>, Error> {
    let mut tourneys = Vec::new();
    for row in rows {
        let (id, spec): (i64, String) = (row.get(0), row.get(2));
        let Ok(parsed) = spec.parse::<TourneySpec>() else {
            tracing::error!(
                tourney = id,
                spec,
                "a stored tournament's terms do not read"
            );
            continue;
        };
        let id = u64::try_from(id).unwrap_or(0);
        tourneys.push(StoredTourney {
            id,
            creator: row.get(1),
            spec: parsed,
            players: players_of(db, id).await?,
            round: u32::try_from(row.get::<_, i32>(3)).unwrap_or(0),
            over: row.get(4),
            games: games_of(db, id).await?,
            forfeits: forfeits_of(db, id).await?,
            starts: starts_of(db, id).await?,
        });
    }
    Ok(tourneys)
}

/// The number for the next tournament.
pub async fn next_id(db: &mut Db) -> Result<TourneyId, Error> {
    let row = db
        .query("SELECT COALESCE(MAX(id), 0) FROM tourneys", &[])
        .await?;
    let last: i64 = row.first().map_or(0, |r| r.get(0));
    Ok(u64::try_from(last).unwrap_or(0).saturating_add(1))
}

async fn players_of(db: &mut Db, id: TourneyId) -> Result<Vec<String>, Error> {
    const SQL: &str = "SELECT name FROM tourney_players WHERE tourney = $1 ORDER BY seq";
    let rows = db.query(SQL, &[&to_i64(id)]).await?;
    Ok(rows.iter().map(|r| r.get(0)).collect())
}

async fn games_of(db: &mut Db, id: TourneyId) -> Result<Vec<StoredTourneyGame>, Error> {
    const SQL: &str = "SELECT id, tourney_round, black, white, status, result, black_score, \
         white_score FROM games WHERE tourney = $1 ORDER BY id";
    let rows = db.query(SQL, &[&to_i64(id)]).await?;
    Ok(rows
        .iter()
        .map(|r| {
            let number = |column: usize| {
                r.get::<_, Option<i32>>(column)
                    .and_then(|n| u32::try_from(n).ok())
            };
            stored_game(
                u64::try_from(r.get::<_, i64>(0)).unwrap_or(0),
                number(1).unwrap_or(0),
                [r.get(2), r.get(3)],
                r.get::<_, String>(4) == "over",
                r.get(5),
                (number(6), number(7)),
            )
        })
        .collect())
}

async fn forfeits_of(db: &mut Db, id: TourneyId) -> Result<Vec<StoredForfeit>, Error> {
    const SQL: &str = "SELECT round, black, white, absent FROM tourney_forfeits \
         WHERE tourney = $1 ORDER BY round, seq";
    let rows = db.query(SQL, &[&to_i64(id)]).await?;
    Ok(rows
        .iter()
        .map(|r| StoredForfeit {
            round: u32::try_from(r.get::<_, i32>(0)).unwrap_or(0),
            black: r.get(1),
            white: r.get(2),
            absent: absent_of(r.get(3)),
        })
        .collect())
}

async fn starts_of(db: &mut Db, id: TourneyId) -> Result<Vec<(u32, Vec<Move>)>, Error> {
    const SQL: &str =
        "SELECT start_group, moves FROM tourney_starts WHERE tourney = $1 ORDER BY start_group";
    let rows = db.query(SQL, &[&to_i64(id)]).await?;
    let mut starts = Vec::new();
    for row in rows {
        let (group, moves): (i32, String) = (row.get(0), row.get(1));
        let group = u32::try_from(group).unwrap_or(0);
        match parse_transcript(&moves) {
            Ok(moves) => starts.push((group, moves)),
            Err(error) => {
                tracing::error!(tourney = id, group, %error, "a stored start does not read");
            }
        }
    }
    Ok(starts)
}
