//! Ratings in PostgreSQL, as in the SQLite store (see `store/ratings.rs`):
//! changed in the transaction that stores a rated end, from the players'
//! ratings before it, their deviations grown for the rating periods since
//! their last rated game; recomputable from the rated games alone, in the
//! order they ended. Ends are stamped with `clock_timestamp()`, so two
//! ends in one transaction keep their order too.

use flipline::protocol::GameId;
use flipline::{Color, Variant};
use tokio_postgres::{Error, Row};

use super::db::Db;
use crate::rules::glicko::{self, Rating};
use crate::store::{RatingChange, StoredRating};

/// A rated game over, as the ratings need it.
struct RatedGame {
    id: i64,
    variant: Variant,
    black: String,
    white: String,
    winner: Option<Color>,
    /// When it ended, in seconds since the epoch.
    at: f64,
}

/// The columns [`rated_game`] reads, for one game or for all in the order
/// they ended.
const RATED_ONE_SQL: &str = "SELECT id, variant, black, white, result, \
     extract(epoch FROM ended_at)::double precision FROM games \
     WHERE id = $1 AND rated AND status = 'over'";
const RATED_ALL_SQL: &str = "SELECT id, variant, black, white, result, \
     extract(epoch FROM ended_at)::double precision FROM games \
     WHERE rated AND status = 'over' ORDER BY ended_at, id";

fn rated_game(row: &Row) -> Option<RatedGame> {
    let variant: String = row.get(1);
    let (black, white, result, at): (Option<String>, Option<String>, Option<String>, Option<f64>) =
        (row.get(2), row.get(3), row.get(4), row.get(5));
    Some(RatedGame {
        id: row.get(0),
        variant: variant.parse().ok()?,
        black: black?,
        white: white?,
        winner: result.as_deref().and_then(Color::from_letter),
        at: at?,
    })
}

/// A player's side of a rated game: the rating it enters with.
struct Side {
    name: String,
    before: Rating,
    games: i32,
}

async fn side_before(
    db: &mut Db,
    name: &str,
    variant: Variant,
    at: f64,
    period_days: u32,
) -> Result<Side, Error> {
    const SQL: &str = "SELECT rating, rd, volatility, games, \
         extract(epoch FROM rated_at)::double precision FROM ratings \
         WHERE lower(name) = lower($1) AND variant = $2";
    let row = db.query_opt(SQL, &[&name, &variant.name()]).await?;
    let Some(row) = row else {
        return Ok(Side {
            name: name.to_string(),
            before: glicko::START,
            games: 0,
        });
    };
    let rating = Rating {
        rating: row.get(0),
        rd: row.get(1),
        volatility: row.get(2),
    };
    let rated_at: f64 = row.get(4);
    let days = ((at - rated_at) / 86_400.0).max(0.0);
    Ok(Side {
        name: name.to_string(),
        before: glicko::idle(rating, days / f64::from(period_days.max(1))),
        games: row.get(3),
    })
}

async fn rate(db: &mut Db, game: &RatedGame, period_days: u32) -> Result<(), Error> {
    let variant = game.variant;
    let black = side_before(db, &game.black, variant, game.at, period_days).await?;
    let white = side_before(db, &game.white, variant, game.at, period_days).await?;
    let black_score = glicko::black_score(game.winner);
    let (black_after, white_after) = glicko::rate_pair(black.before, white.before, black_score);
    for (side, after) in [(black, black_after), (white, white_after)] {
        write_rating(db, &side, game, after).await?;
        const CHANGE: &str = "INSERT INTO rating_changes (game, name, before, after) \
             VALUES ($1, $2, $3, $4) ON CONFLICT (game, name) DO UPDATE SET \
             before = EXCLUDED.before, after = EXCLUDED.after, \
             seq = nextval('rating_change_order')";
        let params: [&(dyn tokio_postgres::types::ToSql + Sync); 4] =
            [&game.id, &side.name, &side.before.rating, &after.rating];
        db.execute(CHANGE, &params).await?;
    }
    Ok(())
}

async fn write_rating(
    db: &mut Db,
    side: &Side,
    game: &RatedGame,
    after: Rating,
) -> Result<(), Error> {
    const SQL: &str = "INSERT INTO ratings (name, variant, rating, rd, volatility, games, rated_at) \
         SELECT $1, $2, $3, $4, $5, $6, ended_at FROM games WHERE id = $7 \
         ON CONFLICT (lower(name), variant) DO UPDATE SET rating = EXCLUDED.rating, \
         rd = EXCLUDED.rd, volatility = EXCLUDED.volatility, games = EXCLUDED.games, \
         rated_at = EXCLUDED.rated_at";
    let games = side.games.saturating_add(1);
    let variant = game.variant.name();
    let params: [&(dyn tokio_postgres::types::ToSql + Sync); 7] = [
        &side.name,
        &variant,
        &after.rating,
        &after.rd,
        &after.volatility,
        &games,
        &game.id,
    ];
    db.execute(SQL, &params).await.map(|_| ())
}

/// Rates `game` if it is rated and over; whether it was.
pub async fn rate_if_rated(db: &mut Db, game: GameId, period_days: u32) -> Result<bool, Error> {
    let id = super::to_i64(game);
    let row = db.query_opt(RATED_ONE_SQL, &[&id]).await?;
    let Some(game) = row.as_ref().and_then(rated_game) else {
        return Ok(false);
    };
    rate(db, &game, period_days).await?;
    Ok(true)
}

/// Replays every rated game, in the order they ended, from no ratings;
/// how many. Runs in the caller's transaction.
pub async fn recompute(db: &mut Db, period_days: u32) -> Result<usize, Error> {
    db.batch("DELETE FROM rating_changes; DELETE FROM ratings")
        .await?;
    let rows = db.query(RATED_ALL_SQL, &[]).await?;
    let mut count = 0;
    for game in rows.iter().filter_map(rated_game) {
        rate(db, &game, period_days).await?;
        count += 1;
    }
    Ok(count)
}

/// What rated game `game` changed, in the order written.
pub async fn changes(db: &mut Db, game: GameId) -> Result<Vec<RatingChange>, Error> {
    const SQL: &str = "SELECT name, before, after FROM rating_changes WHERE game = $1 ORDER BY seq";
    let rows = db.query(SQL, &[&super::to_i64(game)]).await?;
    Ok(rows
        .iter()
        .map(|r| RatingChange {
            name: r.get(0),
            before: r.get(1),
            after: r.get(2),
        })
        .collect())
}

fn rating_row(row: &Row) -> Option<StoredRating> {
    let variant: String = row.get(1);
    let games: i32 = row.get(5);
    Some(StoredRating {
        name: row.get(0),
        variant: variant.parse().ok()?,
        rating: Rating {
            rating: row.get(2),
            rd: row.get(3),
            volatility: row.get(4),
        },
        games: u32::try_from(games).unwrap_or(0),
        bot: row.get(6),
    })
}

/// `name`'s ratings, in `variant` or every one, by variant.
pub async fn of(
    db: &mut Db,
    name: &str,
    variant: Option<Variant>,
) -> Result<Vec<StoredRating>, Error> {
    const SQL: &str = "SELECT r.name, r.variant, r.rating, r.rd, r.volatility, r.games, \
         COALESCE(p.bot, false) FROM ratings r LEFT JOIN players p ON lower(p.name) = lower(r.name) \
         WHERE lower(r.name) = lower($1) AND ($2::text IS NULL OR r.variant = $2) ORDER BY r.variant";
    let variant = variant.map(Variant::name);
    let rows = db.query(SQL, &[&name, &variant]).await?;
    Ok(rows.iter().filter_map(rating_row).collect())
}

/// The `count` best ratings in `variant`, best first.
pub async fn top(db: &mut Db, variant: Variant, count: u32) -> Result<Vec<StoredRating>, Error> {
    const SQL: &str = "SELECT r.name, r.variant, r.rating, r.rd, r.volatility, r.games, \
         COALESCE(p.bot, false) FROM ratings r LEFT JOIN players p ON lower(p.name) = lower(r.name) \
         WHERE r.variant = $1 ORDER BY r.rating DESC, r.name LIMIT $2";
    let rows = db.query(SQL, &[&variant.name(), &i64::from(count)]).await?;
    Ok(rows.iter().filter_map(rating_row).collect())
}
