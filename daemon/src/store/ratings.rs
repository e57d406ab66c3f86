//! Ratings: one Glicko-2 rating per registered name and variant, changed
//! by each rated game in the transaction that stores its end, so that a
//! rating never counts a game the store does not hold as over, nor misses
//! one. The arithmetic is `rules::glicko`; this file reads and writes rows.
//!
//! Each rated game is a rating period of its own for both players, each
//! rated from the other's rating before it; before that, a player's
//! deviation grows for the rating periods (`rating_period_days`) since their
//! last rated game, counted from the games' stored end times. So the
//! ratings are a function of the stored games alone: [`recompute`] replays
//! them, in the order they ended, to the same values.

use flipline::protocol::GameId;
use flipline::{Color, Variant};
use rusqlite::{Connection, OptionalExtension, params};

use crate::rules::glicko::{self, Rating};
pub use crate::rules::ratings::{StoredRating, rounded};

/// A rated game's change to one player: before and after.
#[derive(Clone, Debug, PartialEq)]
pub struct RatingChange {
    /// The player.
    pub name: String,
    /// The rating before the game.
    pub before: f64,
    /// After it.
    pub after: f64,
}

/// One side of a rated game: its player's rating before the game (the
/// deviation grown for the time since their last rated game).
struct Side {
    name: String,
    before: Rating,
    games: u32,
}

/// The rating of `name` in `variant` as stored, with its games and when it
/// last changed; none for a player not rated yet.
fn stored(
    conn: &Connection,
    name: &str,
    variant: Variant,
) -> rusqlite::Result<Option<(Rating, u32, String)>> {
    let sql = "SELECT rating, rd, volatility, games, rated_at FROM ratings \
               WHERE name = ?1 COLLATE NOCASE AND variant = ?2";
    conn.prepare_cached(sql)?
        .query_row(params![name, variant.name()], |r| {
            let rating = Rating {
                rating: r.get(0)?,
                rd: r.get(1)?,
                volatility: r.get(2)?,
            };
            Ok((rating, r.get(3)?, r.get(4)?))
        })
        .optional()
}

/// Days between two stored times (ISO 8601, UTC); 0 if either does not read.
fn days_between(conn: &Connection, from: &str, to: &str) -> rusqlite::Result<f64> {
    conn.prepare_cached("SELECT COALESCE(julianday(?2) - julianday(?1), 0)")?
        .query_row(params![from, to], |r| r.get(0))
}

/// `name`'s rating before a game ending at `at`: a new player's, or the
/// stored one with its deviation grown for the periods since.
fn side_before(
    conn: &Connection,
    name: &str,
    variant: Variant,
    at: &str,
    period_days: u32,
) -> rusqlite::Result<Side> {
    let Some((rating, games, rated_at)) = stored(conn, name, variant)? else {
        return Ok(Side {
            name: name.to_string(),
            before: glicko::START,
            games: 0,
        });
    };
    let days = days_between(conn, &rated_at, at)?;
    let periods = days / f64::from(period_days.max(1));
    Ok(Side {
        name: name.to_string(),
        before: glicko::idle(rating, periods),
        games,
    })
}

/// A rated game over, as the ratings need it.
struct RatedGame {
    id: GameId,
    variant: Variant,
    black: String,
    white: String,
    winner: Option<Color>,
    /// When it ended (what the deviation grows until).
    at: String,
}

/// The columns [`rated_game`] reads, in its order.
const RATED_COLUMNS: &str = "id, variant, black, white, result, ended_at";

/// The rated game of a row of [`RATED_COLUMNS`]; `None` for one that cannot
/// be rated (an unknown variant, a seat or an end time missing).
fn rated_game(r: &rusqlite::Row<'_>) -> rusqlite::Result<Option<RatedGame>> {
    let variant: String = r.get(1)?;
    let (black, white, at): (Option<String>, Option<String>, Option<String>) =
        (r.get(2)?, r.get(3)?, r.get(5)?);
    let result: Option<String> = r.get(4)?;
    let (Ok(variant), Some(black), Some(white), Some(at)) =
        (variant.parse::<Variant>(), black, white, at)
    else {
        return Ok(None);
    };
    Ok(Some(RatedGame {
        id: r.get(0)?,
        variant,
        black,
        white,
        winner: result.as_deref().and_then(Color::from_letter),
        at,
    }))
}

/// Rates `game`: both ratings and the game's changes are written. The
/// ratings as they were before count, so the order of the players does not
/// matter.
fn rate(conn: &Connection, game: &RatedGame, period_days: u32) -> rusqlite::Result<()> {
    let (variant, at) = (game.variant, game.at.as_str());
    let black = side_before(conn, &game.black, variant, at, period_days)?;
    let white = side_before(conn, &game.white, variant, at, period_days)?;
    let black_score = glicko::black_score(game.winner);
    let (black_after, white_after) = glicko::rate_pair(black.before, white.before, black_score);
    for (side, after) in [(black, black_after), (white, white_after)] {
        write_rating(conn, &side, variant, after, at)?;
        conn.prepare_cached(
            "INSERT OR REPLACE INTO rating_changes (game, name, before, after) \
             VALUES (?1, ?2, ?3, ?4)",
        )?
        .execute(params![
            game.id,
            side.name,
            side.before.rating,
            after.rating
        ])?;
    }
    Ok(())
}

fn write_rating(
    conn: &Connection,
    side: &Side,
    variant: Variant,
    after: Rating,
    at: &str,
) -> rusqlite::Result<()> {
    conn.prepare_cached(
        "INSERT INTO ratings (name, variant, rating, rd, volatility, games, rated_at) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) \
         ON CONFLICT (name, variant) DO UPDATE SET rating = ?3, rd = ?4, volatility = ?5, \
         games = ?6, rated_at = ?7",
    )?
    .execute(params![
        side.name,
        variant.name(),
        after.rating,
        after.rd,
        after.volatility,
        side.games.saturating_add(1),
        at
    ])
    .map(|_| ())
}

/// The game just ended (in this transaction): if it is rated, its players'
/// ratings change. Returns whether it was rated.
pub(super) fn rate_if_rated(
    conn: &Connection,
    game: GameId,
    period_days: u32,
) -> rusqlite::Result<bool> {
    let sql = format!(
        "SELECT {RATED_COLUMNS} FROM games WHERE id = ?1 AND rated = 1 AND status = 'over'"
    );
    let found = (conn.prepare_cached(&sql)?)
        .query_row(params![game], rated_game)
        .optional()?;
    let Some(Some(game)) = found else {
        return Ok(false);
    };
    rate(conn, &game, period_days)?;
    Ok(true)
}

/// Every rating again from the rated games stored, in the order they ended:
/// what the ratings table should hold. Returns how many games were rated.
pub fn recompute(conn: &Connection, period_days: u32) -> rusqlite::Result<usize> {
    conn.execute_batch("DELETE FROM ratings; DELETE FROM rating_changes;")?;
    let games: Vec<Option<RatedGame>> = {
        let sql = format!(
            "SELECT {RATED_COLUMNS} FROM games WHERE rated = 1 AND status = 'over' \
             ORDER BY ended_at, id"
        );
        let mut statement = conn.prepare(&sql)?;
        let rows = statement.query_map([], rated_game)?;
        rows.collect::<rusqlite::Result<_>>()?
    };
    let mut count = 0;
    for game in games.into_iter().flatten() {
        rate(conn, &game, period_days)?;
        count += 1;
    }
    Ok(count)
}

/// What a rated game changed, by player.
pub fn changes(conn: &Connection, game: GameId) -> rusqlite::Result<Vec<RatingChange>> {
    let mut statement = conn.prepare_cached(
        "SELECT name, before, after FROM rating_changes WHERE game = ?1 ORDER BY rowid",
    )?;
    let rows = statement.query_map(params![game], |r| {
        Ok(RatingChange {
            name: r.get(0)?,
            before: r.get(1)?,
            after: r.get(2)?,
        })
    })?;
    rows.collect()
}

const RATING_SELECT: &str = "SELECT r.name, r.variant, r.rating, r.rd, r.volatility, r.games, \
     COALESCE(p.bot, 0) FROM ratings r LEFT JOIN players p ON p.name = r.name COLLATE NOCASE";

fn rating_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Option<StoredRating>> {
    let variant: String = r.get(1)?;
    let Ok(variant) = variant.parse::<Variant>() else {
        return Ok(None);
    };
    Ok(Some(StoredRating {
        name: r.get(0)?,
        variant,
        rating: Rating {
            rating: r.get(2)?,
            rd: r.get(3)?,
            volatility: r.get(4)?,
        },
        games: r.get(5)?,
        bot: r.get::<_, i64>(6)? != 0,
    }))
}

/// `name`'s ratings, in one variant or in each it has one in.
pub fn of(
    conn: &Connection,
    name: &str,
    variant: Option<Variant>,
) -> rusqlite::Result<Vec<StoredRating>> {
    let sql = format!(
        "{RATING_SELECT} WHERE r.name = ?1 COLLATE NOCASE AND (?2 IS NULL OR r.variant = ?2) \
         ORDER BY r.variant"
    );
    let mut statement = conn.prepare_cached(&sql)?;
    let rows = statement.query_map(params![name, variant.map(Variant::name)], rating_row)?;
    Ok(rows
        .collect::<rusqlite::Result<Vec<_>>>()?
        .into_iter()
        .flatten()
        .collect())
}

/// The `count` best ratings in `variant`, best first.
pub fn top(conn: &Connection, variant: Variant, count: u32) -> rusqlite::Result<Vec<StoredRating>> {
    let sql =
        format!("{RATING_SELECT} WHERE r.variant = ?1 ORDER BY r.rating DESC, r.name LIMIT ?2");
    let mut statement = conn.prepare_cached(&sql)?;
    let rows = statement.query_map(params![variant.name(), count], rating_row)?;
    Ok(rows
        .collect::<rusqlite::Result<Vec<_>>>()?
        .into_iter()
        .flatten()
        .collect())
}

/// `flipd --recompute-ratings` on a SQLite store: the file at `config` has
/// its ratings rebuilt from its rated games (the daemon must not be running
/// on it: the store's lock refuses a second user). Returns how many games
/// were rated.
pub fn recompute_file(config: &crate::config::StoreConfig) -> Result<usize, super::StoreError> {
    use super::schema::{describe, refuse};
    let path = config.path.as_path();
    let _lock = super::lock::lock(path)?;
    let mut conn = Connection::open(path).map_err(|e| refuse(path, describe(&e)))?;
    super::schema::prepare_writer(&mut conn, config)?;
    let sql = |e: rusqlite::Error| refuse(path, describe(&e));
    let tx = conn.transaction().map_err(sql)?;
    let count = recompute(&tx, config.rating_period_days).map_err(sql)?;
    tx.commit().map_err(sql)?;
    Ok(count)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::test_support::{block_on, new_game};
    use crate::store::{Status, Store, Write};
    use flipline::protocol::{EndReason, GameResult};

    fn rated_game(store: &Store, id: GameId, black: &str, white: &str, winner: Option<Color>) {
        let mut write = new_game(id, Some(white), "");
        if let Write::NewGame {
            black: b,
            rated,
            status,
            ..
        } = &mut write
        {
            *b = Some(black.to_string());
            *rated = true;
            *status = Status::Playing;
        }
        block_on(store.commit(write)).unwrap();
        let result = GameResult {
            winner,
            black: 32,
            white: 32,
            reason: EndReason::Resign,
        };
        block_on(store.commit(Write::End { game: id, result })).unwrap();
    }

    #[test]
    fn a_players_deviation_grows_for_the_periods_since_their_last_rated_game() {
        let path = crate::store::test_support::temp_path("idle");
        let mut config = crate::store::test_support::config(&path);
        config.rating_period_days = 2;
        let opened = Store::open(&config).unwrap();
        opened.threads.close();
        // ann was last rated 30 days ago: 15 periods of 2 days.
        let conn = Connection::open(&path).unwrap();
        let last = Rating {
            rating: 1700.0,
            rd: 60.0,
            volatility: 0.06,
        };
        conn.execute(
            "INSERT INTO ratings (name, variant, rating, rd, volatility, games, rated_at) \
             VALUES ('ann', 'othello', ?1, ?2, ?3, 40, \
             strftime('%Y-%m-%dT%H:%M:%SZ', 'now', '-30 days'))",
            params![last.rating, last.rd, last.volatility],
        )
        .unwrap();
        drop(conn);
        let opened = Store::open(&config).unwrap();
        rated_game(&opened.store, 1, "ann", "bob", None);
        let changes = block_on(opened.store.rating_changes(1)).unwrap();
        opened.threads.close();
        let conn = Connection::open(&path).unwrap();
        let (ann, _, _) = stored(&conn, "ann", Variant::Othello).unwrap().unwrap();
        let grown = glicko::idle(last, 15.0);
        let bob = glicko::START;
        let (expected, _) = glicko::rate_pair(grown, bob, 0.5);
        assert!(grown.rd > 60.0 + 10.0, "{grown:?}");
        assert!((ann.rd - expected.rd).abs() < 0.5, "{ann:?} {expected:?}");
        assert!(
            (ann.rating - expected.rating).abs() < 0.5,
            "{ann:?} {expected:?}"
        );
        assert!(
            changes
                .iter()
                .any(|c| c.name == "ann" && c.before == last.rating)
        );
    }

    #[test]
    fn ratings_recomputed_from_the_games_are_the_ratings_kept() {
        let path = crate::store::test_support::temp_path("ratings");
        let config = crate::store::test_support::config(&path);
        let opened = Store::open(&config).unwrap();
        let store = opened.store;
        let results = [
            Some(Color::Black),
            None,
            Some(Color::White),
            Some(Color::Black),
        ];
        for (id, winner) in (1..).zip(results) {
            let (black, white) = if id % 2 == 1 {
                ("ann", "bob")
            } else {
                ("bob", "cy")
            };
            rated_game(&store, id, black, white, winner);
        }
        let kept = |store: &Store| {
            let mut all = Vec::new();
            for name in ["ann", "bob", "cy"] {
                all.extend(block_on(store.ratings_of(name.into(), None)).unwrap());
            }
            all
        };
        let live = kept(&store);
        assert_eq!(live.len(), 3);
        assert_eq!(live.iter().map(|r| r.games).sum::<u32>(), 8);
        let changes = block_on(store.rating_changes(1)).unwrap();
        assert_eq!(changes.len(), 2);
        assert!(changes[0].after > changes[0].before, "black won game 1");
        opened.threads.close();
        assert_eq!(recompute_file(&config).unwrap(), 4);
        let opened = Store::open(&config).unwrap();
        assert_eq!(kept(&opened.store), live);
        opened.threads.close();
    }
}
