//! Games, moves and players as rows of PostgreSQL: what the reader answers
//! and what recovery reads at start.

use flipline::protocol::{ClockSpec, EndReason, GameId, GameResult};
use flipline::{Color, Move, Variant};
use tokio_postgres::{Error, Row};

use super::db::Db;
use super::to_i64;
use crate::rules::registered::RegisteredNames;
use crate::store::{GameRecord, Registration, Status, StoredMove};

/// The columns [`game_from_row`] reads, times in the store's text form
/// (UTC, ISO 8601, to the second, as the SQLite store keeps them).
macro_rules! game_select {
    ($filter:literal) => {
        concat!(
            "SELECT id, variant, black, white, clock, status, result, black_score, white_score, \
             reason, to_char(started_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'), \
             to_char(ended_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'), \
             black_secret, white_secret, rated, tourney FROM games WHERE ",
            $filter
        )
    };
}
pub(super) use game_select;

/// A game's row, or why it does not read back (a column an operator
/// changed by hand).
pub fn game_from_row(row: &Row) -> Result<GameRecord, String> {
    let id: i64 = row.get(0);
    let text = |column: usize| row.get::<_, Option<String>>(column);
    let number = |column: usize| {
        row.get::<_, Option<i32>>(column)
            .and_then(|n| u32::try_from(n).ok())
    };
    let variant: String = row.get(1);
    let variant: Variant = variant
        .parse()
        .map_err(|_| format!("its variant {variant:?} is not one"))?;
    let clock = match text(4) {
        Some(clock) => Some(ClockSpec::parse(&clock).map_err(|e| e.message)?),
        None => None,
    };
    let status: String = row.get(5);
    let status = Status::from_word(&status).ok_or(format!("its status {status:?} is not one"))?;
    let result = match text(6) {
        Some(winner) => Some(GameResult {
            winner: match winner.as_str() {
                "draw" => None,
                letter => Some(Color::from_letter(letter).ok_or("its result is not one")?),
            },
            black: number(7).unwrap_or(0),
            white: number(8).unwrap_or(0),
            reason: text(9)
                .as_deref()
                .and_then(EndReason::from_word)
                .ok_or("its end reason is not one")?,
        }),
        None => None,
    };
    Ok(GameRecord {
        id: u64::try_from(id).map_err(|_| format!("its number {id} is negative"))?,
        variant,
        black: text(2),
        white: text(3),
        clock,
        status,
        result,
        started_at: text(10).unwrap_or_default(),
        ended_at: text(11),
        secrets: [text(12), text(13)],
        rated: row.get(14),
        tourney: (row.get::<_, Option<i64>>(15)).and_then(|t| u64::try_from(t).ok()),
        moves: Vec::new(),
    })
}

/// A game's stored moves, in order; a move that does not read back is an
/// error naming its ply.
pub async fn moves_of(db: &mut Db, game: GameId) -> Result<Vec<StoredMove>, String> {
    const SQL: &str = "SELECT ply, move, ms FROM moves WHERE game = $1 ORDER BY ply";
    let rows = db
        .query(SQL, &[&to_i64(game)])
        .await
        .map_err(|e| super::describe(&e))?;
    rows.iter().map(stored_move).collect()
}

pub(super) fn stored_move(row: &Row) -> Result<StoredMove, String> {
    let (ply, text): (i32, String) = (row.get(0), row.get(1));
    let mv: Move = text
        .parse()
        .map_err(|_| format!("its move {ply} ({text:?}) is not a move"))?;
    let ms: Option<i64> = row.get(2);
    Ok(StoredMove {
        mv,
        ms: ms.and_then(|ms| u64::try_from(ms).ok()),
    })
}

/// One game with its moves (`held`, from the writer, if it is open or in
/// play), in one snapshot.
pub async fn game(
    db: &mut Db,
    id: GameId,
    held: Option<Vec<StoredMove>>,
) -> Result<Option<GameRecord>, String> {
    let describe = |e: Error| super::describe(&e);
    db.batch("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
        .await
        .map_err(describe)?;
    let read = game_in_snapshot(db, id, held).await;
    let end = db.batch("COMMIT").await.map_err(describe);
    let game = read?;
    end?;
    Ok(game)
}

async fn game_in_snapshot(
    db: &mut Db,
    id: GameId,
    held: Option<Vec<StoredMove>>,
) -> Result<Option<GameRecord>, String> {
    const SQL: &str = game_select!("id = $1");
    let row = db
        .query_opt(SQL, &[&to_i64(id)])
        .await
        .map_err(|e| super::describe(&e))?;
    let Some(row) = row else {
        return Ok(None);
    };
    let mut game = game_from_row(&row).map_err(|why| format!("game {id}: {why}"))?;
    game.moves = match game.status {
        Status::Open | Status::Playing => match held {
            Some(moves) => moves,
            None => moves_of(db, id).await?,
        },
        Status::Over | Status::Cancelled => moves_of(db, id).await?,
    };
    Ok(Some(game))
}

/// A registered name, found without regard to case.
pub async fn registration(db: &mut Db, name: &str) -> Result<Option<Registration>, Error> {
    const SQL: &str = "SELECT p.name, p.password_hash, p.bot, r.rating FROM players p \
         LEFT JOIN ratings r ON lower(r.name) = lower(p.name) AND r.variant = 'othello' \
         WHERE lower(p.name) = lower($1)";
    let row = db.query_opt(SQL, &[&name]).await?;
    Ok(row.map(|r| Registration {
        name: r.get(0),
        hash: r.get(1),
        bot: r.get(2),
        othello_rating: r.get(3),
    }))
}

/// Every registered name, for the daemon's set.
pub async fn registered_names(db: &mut Db) -> Result<RegisteredNames, Error> {
    let rows = db.query("SELECT name FROM players", &[]).await?;
    let mut names = RegisteredNames::new();
    for row in &rows {
        names.insert(row.get::<_, &str>(0));
    }
    Ok(names)
}
