//! The statements each [`Write`] runs in PostgreSQL, inside the writer's
//! transaction. Moves that follow one another in a batch go in one
//! multi-row statement (one round trip for a thousand games' moves); the
//! held moves check each move's order first and follow the transaction.
//!
//! On a node of a cluster every write of a game is fenced: it happens only
//! if `games.owner` is this node's incarnation, and it share-locks the
//! game's row (`FOR SHARE`) until the commit. A claim of a dead node's games
//! changes the owner under a row lock (see `nodes`), so once a claim has
//! committed no write of the old owner lands.

use flipline::protocol::{GameId, GameResult, TourneyId};
use tokio_postgres::Error;

use super::db::Db;
use super::held::HeldMoves;
use super::to_i64;
use crate::store::{Status, StoredMove, TourneyWrite, Write};

/// Why a write failed: a statement's error, or a check of the held moves
/// (made before anything is sent).
#[derive(Debug)]
pub enum WriteError {
    Sql(Error),
    Refused(String),
    /// A write of a game or tournament this node no longer owns: another
    /// node took it over (this one was declared dead). Nothing of it was
    /// written.
    Fenced(Owned),
}

/// What a cluster node owns, and writes only while it does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Owned {
    Game(GameId),
    Tourney(TourneyId),
}

impl std::fmt::Display for Owned {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Owned::Game(game) => write!(f, "game {game}"),
            Owned::Tourney(id) => write!(f, "tournament {id}"),
        }
    }
}

impl From<Error> for WriteError {
    fn from(error: Error) -> WriteError {
        WriteError::Sql(error)
    }
}

/// Moves waiting to be inserted together.
#[derive(Default)]
struct PendingMoves {
    games: Vec<i64>,
    plies: Vec<i32>,
    moves: Vec<String>,
    ms: Vec<Option<i64>>,
}

impl PendingMoves {
    fn push(&mut self, game: GameId, ply: u32, mv: StoredMove) {
        self.games.push(to_i64(game));
        self.plies.push(i32::try_from(ply).unwrap_or(i32::MAX));
        self.moves.push(mv.mv.to_string());
        self.ms
            .push(mv.ms.map(|ms| i64::try_from(ms).unwrap_or(i64::MAX)));
    }

    /// Move `ply` of `game`, checked against the held moves first.
    fn check_and_push(
        &mut self,
        held: &mut HeldMoves,
        (game, ply, mv, ms): (GameId, u32, flipline::Move, u64),
    ) -> Result<(), WriteError> {
        let stored = StoredMove { mv, ms: Some(ms) };
        held.append(game, ply, stored)
            .map_err(WriteError::Refused)?;
        self.push(game, ply, stored);
        Ok(())
    }

    /// Inserts them, in one statement, and empties the list. A cluster
    /// node (`owner`) inserts only moves of games it owns, under a share
    /// lock on each game's row that a claim would have to wait for; a move
    /// of a game it does not own fails the transaction.
    async fn flush(&mut self, db: &mut Db, owner: Option<i64>) -> Result<(), WriteError> {
        if self.games.is_empty() {
            return Ok(());
        }
        const SQL: &str = "INSERT INTO moves (game, ply, move, ms) \
             SELECT * FROM unnest($1::bigint[], $2::integer[], $3::text[], $4::bigint[])";
        const FENCED: &str = "WITH v (game, ply, move, ms) AS (SELECT * FROM \
             unnest($1::bigint[], $2::integer[], $3::text[], $4::bigint[])), \
             owned AS (SELECT id FROM games WHERE id IN (SELECT game FROM v) \
             AND owner = $5 FOR SHARE) \
             INSERT INTO moves (game, ply, move, ms) \
             SELECT v.game, v.ply, v.move, v.ms FROM v JOIN owned ON owned.id = v.game";
        let inserted = match owner {
            None => {
                db.execute(SQL, &[&self.games, &self.plies, &self.moves, &self.ms])
                    .await?
            }
            Some(owner) => {
                let params: [&(dyn tokio_postgres::types::ToSql + Sync); 5] =
                    [&self.games, &self.plies, &self.moves, &self.ms, &owner];
                db.execute(FENCED, &params).await?
            }
        };
        if usize::try_from(inserted).ok() != Some(self.games.len()) {
            return Err(fenced(db, &self.games, owner).await);
        }
        *self = PendingMoves::default();
        Ok(())
    }
}

/// Whether a batch holds moves alone (written by [`moves_alone`]).
pub fn are_moves_alone(writes: &[&Write]) -> bool {
    writes.iter().all(|w| matches!(w, Write::Move { .. }))
}

/// A batch of moves alone, and its mark, in one statement outside any
/// transaction block (a statement is a transaction of its own): one round
/// trip, the common case under load. `None` if the batch holds anything
/// but moves. The held moves are checked and changed first, as in [`run`].
pub async fn moves_alone(
    db: &mut Db,
    held: &mut HeldMoves,
    writes: &[&Write],
    mark: &Mark<'_>,
) -> Option<Result<Vec<usize>, WriteError>> {
    if !are_moves_alone(writes) {
        return None;
    }
    let mut pending = PendingMoves::default();
    for write in writes {
        if let Write::Move { game, ply, mv, ms } = write
            && let Err(refused) = pending.check_and_push(held, (*game, *ply, *mv, *ms))
        {
            return Some(Err(refused));
        }
    }
    let done = match mark.owner {
        None => unfenced_moves(db, &pending, mark).await,
        Some(_) => fenced_moves(db, &pending, mark).await,
    };
    Some(done.map(|()| vec![1; writes.len()]))
}

/// What marks a writer's batch in `writer_commits` (see `writer`), and for a
/// cluster node the incarnation whose games it writes.
pub struct Mark<'a> {
    pub writer: &'a str,
    pub run: i64,
    pub batch: i64,
    pub owner: Option<i64>,
}

async fn unfenced_moves(
    db: &mut Db,
    pending: &PendingMoves,
    mark: &Mark<'_>,
) -> Result<(), WriteError> {
    const SQL: &str = "WITH inserted AS (INSERT INTO moves (game, ply, move, ms) \
         SELECT * FROM unnest($1::bigint[], $2::integer[], $3::text[], $4::bigint[])) \
         INSERT INTO writer_commits (writer, run, batch) VALUES ($7, $5, $6) \
         ON CONFLICT (writer) DO UPDATE SET run = EXCLUDED.run, batch = EXCLUDED.batch";
    let params = batch_params(pending, mark);
    db.execute(SQL, &params[..7]).await?;
    Ok(())
}

/// The parameters of a batch of moves with its mark, as both statements
/// number them: the moves' four columns, the mark's run, batch and writer,
/// then the owner (used by the fenced statement only).
fn batch_params<'a>(
    pending: &'a PendingMoves,
    mark: &'a Mark<'_>,
) -> [&'a (dyn tokio_postgres::types::ToSql + Sync); 8] {
    [
        &pending.games,
        &pending.plies,
        &pending.moves,
        &pending.ms,
        &mark.run,
        &mark.batch,
        &mark.writer,
        &mark.owner,
    ]
}

/// A cluster node's batch of moves: all of it, with its mark, if the node
/// owns every game in it (each game's row share-locked, so that a claim
/// waits for the statement), or nothing.
async fn fenced_moves(
    db: &mut Db,
    pending: &PendingMoves,
    mark: &Mark<'_>,
) -> Result<(), WriteError> {
    const SQL: &str = "WITH v (game, ply, move, ms) AS (SELECT * FROM \
         unnest($1::bigint[], $2::integer[], $3::text[], $4::bigint[])), \
         owned AS (SELECT id FROM games WHERE id IN (SELECT game FROM v) \
         AND owner = $8 FOR SHARE), \
         whole AS (SELECT (SELECT count(*) FROM owned) = \
         (SELECT count(DISTINCT game) FROM v) AS ok), \
         inserted AS (INSERT INTO moves (game, ply, move, ms) \
         SELECT v.game, v.ply, v.move, v.ms FROM v, whole WHERE whole.ok RETURNING 1), \
         marked AS (INSERT INTO writer_commits (writer, run, batch) \
         SELECT $7, $5, $6 FROM whole WHERE whole.ok \
         ON CONFLICT (writer) DO UPDATE SET run = EXCLUDED.run, batch = EXCLUDED.batch \
         RETURNING 1) \
         SELECT ok FROM whole";
    let params = batch_params(pending, mark);
    let row = db.query_opt(SQL, &params).await?;
    match row.is_some_and(|row| row.get::<_, bool>(0)) {
        true => Ok(()),
        false => Err(fenced(db, &pending.games, mark.owner).await),
    }
}

/// The error for writes to `games` refused for want of ownership: the
/// first game this node does not own (read again to name it).
async fn fenced(db: &mut Db, games: &[i64], owner: Option<i64>) -> WriteError {
    const SQL: &str = "SELECT id FROM games WHERE id = ANY($1) \
         AND owner IS DISTINCT FROM $2 ORDER BY id LIMIT 1";
    match db.query_opt(SQL, &[&games, &owner]).await {
        Ok(Some(row)) => WriteError::Fenced(Owned::Game(
            u64::try_from(row.get::<_, i64>(0)).unwrap_or(0),
        )),
        Ok(None) => WriteError::Refused("a move's game is not in the store".into()),
        Err(e) => WriteError::Sql(e),
    }
}

/// Fails unless this node (`owner`) owns `game`, share-locking its row for
/// the transaction so that no claim takes it before the commit. A single
/// daemon (`None`) owns every game.
async fn owned(db: &mut Db, game: GameId, owner: Option<i64>) -> Result<(), WriteError> {
    let Some(owner) = owner else {
        return Ok(());
    };
    const SQL: &str = "SELECT 1 FROM games WHERE id = $1 AND owner = $2 FOR SHARE";
    match db.query_opt(SQL, &[&to_i64(game), &owner]).await? {
        Some(_) => Ok(()),
        None => Err(WriteError::Fenced(Owned::Game(game))),
    }
}

/// Fails unless this node (`owner`) is live in the database, share-locking
/// its row for the transaction, so that a node declared dead (paused past
/// its lease, and let go on before its own keeper says so) makes no new
/// game or tournament (`new`): what it owned is fenced by `owned` and
/// `runs`, a new one by this. A single daemon (`None`) is always live.
async fn live(db: &mut Db, new: Owned, owner: Option<i64>) -> Result<(), WriteError> {
    let Some(owner) = owner else {
        return Ok(());
    };
    const SQL: &str = "SELECT 1 FROM nodes WHERE incarnation = $1 AND state = 'live' FOR SHARE";
    match db.query_opt(SQL, &[&owner]).await? {
        Some(_) => Ok(()),
        None => Err(WriteError::Fenced(new)),
    }
}

/// Fails unless this node (`owner`) runs the tournament `write` is of,
/// share-locking its row so that no claim takes it before the commit; a
/// new one needs this node live. A single daemon (`None`) runs them all.
async fn runs(db: &mut Db, write: &TourneyWrite, owner: Option<i64>) -> Result<(), WriteError> {
    let id = write.tourney();
    if matches!(write, TourneyWrite::New { .. }) {
        return live(db, Owned::Tourney(id), owner).await;
    }
    let Some(owner) = owner else {
        return Ok(());
    };
    const SQL: &str = "SELECT 1 FROM tourneys WHERE id = $1 AND owner = $2 FOR SHARE";
    match db.query_opt(SQL, &[&to_i64(id), &owner]).await? {
        Some(_) => Ok(()),
        None => Err(WriteError::Fenced(Owned::Tourney(id))),
    }
}

/// Runs `writes` in the open transaction; the rows each changed.
pub async fn run(
    db: &mut Db,
    held: &mut HeldMoves,
    writes: &[&Write],
    rating_period_days: u32,
    owner: Option<i64>,
) -> Result<Vec<usize>, WriteError> {
    let mut counts = Vec::with_capacity(writes.len());
    let mut pending = PendingMoves::default();
    for write in writes {
        if let Write::Move { game, ply, mv, ms } = write {
            pending.check_and_push(held, (*game, *ply, *mv, *ms))?;
            counts.push(1);
            continue;
        }
        pending.flush(db, owner).await?;
        if let Some(game) = write.game()
            && !matches!(write, Write::NewGame { .. })
        {
            owned(db, game, owner).await?;
        }
        let count = apply(db, held, write, rating_period_days, owner).await?;
        counts.push(usize::try_from(count).unwrap_or(usize::MAX));
    }
    pending.flush(db, owner).await?;
    Ok(counts)
}

/// Runs one write other than a move.
async fn apply(
    db: &mut Db,
    held: &mut HeldMoves,
    write: &Write,
    rating_period_days: u32,
    owner: Option<i64>,
) -> Result<u64, WriteError> {
    let changed = match write {
        Write::NewGame { .. } => new_game(db, held, write, owner).await?,
        Write::Seats {
            game,
            black,
            white,
            secrets: [black_secret, white_secret],
        } => {
            const SQL: &str = "UPDATE games SET black = $2, white = $3, status = 'playing', \
                 black_secret = $4, white_secret = $5 WHERE id = $1";
            let params: [&(dyn tokio_postgres::types::ToSql + Sync); 5] =
                [&to_i64(*game), black, white, black_secret, white_secret];
            db.execute(SQL, &params).await?
        }
        Write::Move { .. } => 0,
        Write::TakeBack { game, keep, plies } => {
            let count = held
                .take_back(*game, *keep, *plies)
                .map_err(WriteError::Refused)?;
            const SQL: &str = "DELETE FROM moves WHERE game = $1 AND ply > $2";
            let keep = i32::try_from(*keep).unwrap_or(i32::MAX);
            db.execute(SQL, &[&to_i64(*game), &keep]).await?;
            u64::try_from(count).unwrap_or(u64::MAX)
        }
        Write::End { game, result } => {
            let changed = end_game(db, *game, result).await?;
            held.close(*game);
            super::ratings::rate_if_rated(db, *game, rating_period_days).await?;
            changed
        }
        Write::Cancel { game } => {
            const SQL: &str = "UPDATE games SET status = 'cancelled', ended_at = clock_timestamp(), \
                 black_secret = NULL, white_secret = NULL WHERE id = $1 AND status = 'open'";
            let changed = db.execute(SQL, &[&to_i64(*game)]).await?;
            if changed > 0 {
                held.close(*game);
            }
            changed
        }
        Write::Register { name, hash } => {
            const SQL: &str = "INSERT INTO players (name, password_hash, created_at) \
                 VALUES ($1, $2, now()) ON CONFLICT DO NOTHING";
            db.execute(SQL, &[name, hash]).await?
        }
        Write::MarkBot { name } => {
            const SQL: &str = "UPDATE players SET bot = true WHERE lower(name) = lower($1)";
            db.execute(SQL, &[name]).await?
        }
        Write::Tourney(write) => {
            runs(db, write, owner).await?;
            super::tourneys::apply(write, db, owner).await?
        }
    };
    Ok(changed)
}

async fn new_game(
    db: &mut Db,
    held: &mut HeldMoves,
    write: &Write,
    owner: Option<i64>,
) -> Result<u64, WriteError> {
    let Write::NewGame {
        id,
        variant,
        black,
        white,
        secrets: [black_secret, white_secret],
        clock,
        status,
        start,
        rated,
        tourney,
    } = write
    else {
        return Ok(0);
    };
    live(db, Owned::Game(*id), owner).await?;
    const SQL: &str = "INSERT INTO games (id, variant, black, white, clock, status, started_at, \
         black_secret, white_secret, rated, tourney, tourney_round, owner) \
         VALUES ($1, $2, $3, $4, $5, $6, now(), $7, $8, $9, $10, $11, $12)";
    let clock = clock.map(|c| c.to_string());
    let tourney_id = tourney.map(|t| to_i64(t.0));
    let round = tourney.map(|t| i32::try_from(t.1).unwrap_or(i32::MAX));
    let params: [&(dyn tokio_postgres::types::ToSql + Sync); 12] = [
        &to_i64(*id),
        &variant.name(),
        black,
        white,
        &clock,
        &status.word(),
        black_secret,
        white_secret,
        rated,
        &tourney_id,
        &round,
        &owner,
    ];
    let mut changed = db.execute(SQL, &params).await?;
    let moves: Vec<StoredMove> = start
        .iter()
        .map(|&mv| StoredMove { mv, ms: None })
        .collect();
    if matches!(status, Status::Open | Status::Playing) {
        held.open(*id, moves.clone()).map_err(WriteError::Refused)?;
    }
    let mut pending = PendingMoves::default();
    for (ply, mv) in (1u32..).zip(moves) {
        pending.push(*id, ply, mv);
        changed += 1;
    }
    pending.flush(db, owner).await?;
    Ok(changed)
}

async fn end_game(db: &mut Db, game: GameId, result: &GameResult) -> Result<u64, Error> {
    const SQL: &str = "UPDATE games SET status = 'over', result = $2, black_score = $3, \
         white_score = $4, reason = $5, ended_at = clock_timestamp(), black_secret = NULL, \
         white_secret = NULL WHERE id = $1";
    let winner = result
        .winner
        .map_or_else(|| "draw".to_string(), |c| c.letter().to_string());
    let black = i32::try_from(result.black).unwrap_or(i32::MAX);
    let white = i32::try_from(result.white).unwrap_or(i32::MAX);
    let params: [&(dyn tokio_postgres::types::ToSql + Sync); 5] = [
        &to_i64(game),
        &winner,
        &black,
        &white,
        &result.reason.word(),
    ];
    db.execute(SQL, &params).await
}
