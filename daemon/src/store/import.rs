//! [`Importer`]: finished games from elsewhere (GGF and WTHOR archives, `flip
//! import`) written into a store that no daemon is running on. It takes the
//! store's lock and runs the same checks and migrations as the daemon, so a
//! file it cannot use is refused as the daemon would refuse it, and a daemon
//! started meanwhile is refused until the import is done.
//!
//! A game already in the store is not added again: the importer knows every
//! finished game by its variant, players and moves (its start position's
//! among them; not its date, which the formats give to different
//! precisions), so importing the same games twice, from one format or two,
//! adds nothing the second time. Imported games are over
//! when written, so their moves go straight into `moves` (the log is for
//! games in play); their numbers follow the store's largest.

use std::collections::HashMap;
use std::path::Path;

use flipline::notation::transcript_string;
use flipline::protocol::GameId;
use rusqlite::{Connection, params};

use super::lock::{self, StoreLock};
use super::records::{GameRecord, Status, next_game_id};
use super::schema::{self, describe, refuse};
use super::{StoreError, failed};

/// What became of one game given to [`Importer::insert_finished`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Imported {
    /// Written, with this number.
    Added(GameId),
    /// Already in the store, as this game; nothing was written.
    Present(GameId),
}

/// A store opened to add finished games to (see the module docs).
pub struct Importer {
    // Declared before the lock: fields drop in order, and the lock's
    // descriptor must close after SQLite's (see `lock`).
    conn: Connection,
    present: HashMap<String, GameId>,
    next_id: GameId,
    _lock: StoreLock,
}

impl Importer {
    /// Opens (or creates) the store at `path` for writing, as the daemon
    /// would (locked, checked, migrated), and reads which games it holds.
    pub fn open(path: &Path) -> Result<Importer, StoreError> {
        let lock = lock::lock(path)?;
        let mut conn = Connection::open(path).map_err(|e| refuse(path, describe(&e)))?;
        let mut config = crate::Config::embedded()
            .map_err(|e| refuse(path, e.to_string()))?
            .store;
        config.path = path.to_path_buf();
        schema::prepare_writer(&mut conn, &config)?;
        let sql = |e: rusqlite::Error| refuse(path, describe(&e));
        let present = finished_keys(&conn).map_err(sql)?;
        let next_id = next_game_id(&conn).map_err(sql)?;
        Ok(Importer {
            conn,
            present,
            next_id,
            _lock: lock,
        })
    }

    /// Writes `games` (each over, with its result; their numbers are not
    /// read) in one transaction, leaving out those the store already holds
    /// (and repeats within `games`); says what became of each, in order.
    pub fn insert_finished(&mut self, games: &[GameRecord]) -> Result<Vec<Imported>, StoreError> {
        if let Some(game) = games
            .iter()
            .find(|g| g.status != Status::Over || g.result.is_none())
        {
            return Err(StoreError::Failed(format!(
                "an imported game must be over with a result (game {} is {})",
                game.id,
                game.status.word()
            )));
        }
        let tx = self.conn.transaction().map_err(failed)?;
        let mut added: HashMap<String, GameId> = HashMap::new();
        let mut outcome = Vec::with_capacity(games.len());
        let mut next_id = self.next_id;
        for game in games {
            let key = game_key(game);
            if let Some(&id) = self.present.get(&key).or_else(|| added.get(&key)) {
                outcome.push(Imported::Present(id));
                continue;
            }
            insert_game(&tx, next_id, game).map_err(failed)?;
            outcome.push(Imported::Added(next_id));
            added.insert(key, next_id);
            next_id = next_id.saturating_add(1);
        }
        tx.commit().map_err(failed)?;
        // Only once committed: a failed transaction leaves the importer as
        // it was.
        self.next_id = next_id;
        self.present.extend(added);
        Ok(outcome)
    }
}

/// What makes two finished games the same game, whatever archive they came
/// from: variant, players and moves, the start position's moves among them
/// (not when it was played, which GGF gives to the second and WTHOR as a
/// year, nor the move times, which an archive may round or leave out).
fn key_of(variant: &str, black: Option<&str>, white: Option<&str>, moves: &str) -> String {
    let seat = |s: Option<&str>| s.map_or_else(|| "\u{0}".to_string(), str::to_string);
    format!("{variant}\n{}\n{}\n{moves}", seat(black), seat(white))
}

fn game_key(game: &GameRecord) -> String {
    key_of(
        game.variant.name(),
        game.black.as_deref(),
        game.white.as_deref(),
        &transcript_string(&game.transcript()),
    )
}

/// The key of every finished game in the store, read in two scans (games,
/// then every stored move in order) rather than one query a game.
fn finished_keys(conn: &Connection) -> rusqlite::Result<HashMap<String, GameId>> {
    type Head = (String, Option<String>, Option<String>);
    let mut heads: HashMap<GameId, (Head, String)> = HashMap::new();
    let mut games =
        conn.prepare("SELECT id, variant, black, white FROM games WHERE status = 'over'")?;
    let mut rows = games.query([])?;
    while let Some(row) = rows.next()? {
        let head = (row.get(1)?, row.get(2)?, row.get(3)?);
        heads.insert(row.get(0)?, (head, String::new()));
    }
    let mut moves = conn.prepare("SELECT game, move FROM moves ORDER BY game, ply")?;
    let mut rows = moves.query([])?;
    while let Some(row) = rows.next()? {
        let game: GameId = row.get(0)?;
        if let Some((_, text)) = heads.get_mut(&game) {
            text.push_str(&row.get::<_, String>(1)?);
        }
    }
    Ok(heads
        .into_iter()
        .map(|(id, ((variant, black, white), moves))| {
            (
                key_of(&variant, black.as_deref(), white.as_deref(), &moves),
                id,
            )
        })
        .collect())
}

fn insert_game(conn: &Connection, id: GameId, game: &GameRecord) -> rusqlite::Result<()> {
    let Some(result) = game.result else {
        return Ok(());
    };
    let winner = result
        .winner
        .map_or_else(|| "draw".to_string(), |c| c.letter().to_string());
    conn.prepare_cached(
        "INSERT INTO games (id, variant, black, white, clock, status, result, black_score, \
         white_score, reason, started_at, ended_at) \
         VALUES (?1, ?2, ?3, ?4, ?5, 'over', ?6, ?7, ?8, ?9, ?10, ?11)",
    )?
    .execute(params![
        id,
        game.variant.name(),
        game.black,
        game.white,
        game.clock.map(|c| c.to_string()),
        winner,
        result.black,
        result.white,
        result.reason.word(),
        game.started_at,
        game.ended_at.as_deref().unwrap_or(&game.started_at),
    ])?;
    let mut statement =
        conn.prepare_cached("INSERT INTO moves (game, ply, move, ms) VALUES (?1, ?2, ?3, ?4)")?;
    for (ply, stored) in (1u32..).zip(&game.moves) {
        statement.execute(params![id, ply, stored.mv.to_string(), stored.ms])?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::test_support::{config, temp_path};
    use crate::store::{Archive, Store, StoredMove};
    use flipline::protocol::{ClockSpec, EndReason, GameResult};
    use flipline::{Color, Move, Variant};

    fn finished(black: &str, moves: &[&str]) -> GameRecord {
        GameRecord {
            id: 0,
            variant: Variant::Othello,
            black: Some(black.to_string()),
            white: Some("Tastet_Marc".to_string()),
            clock: ClockSpec::parse("15+0").ok(),
            status: Status::Over,
            result: Some(GameResult {
                winner: Some(Color::White),
                black: 3,
                white: 61,
                reason: EndReason::Resign,
            }),
            started_at: "2000-04-16T16:13:00Z".to_string(),
            ended_at: Some("2000-04-16T16:13:00Z".to_string()),
            secrets: [None, None],
            rated: false,
            tourney: None,
            moves: moves
                .iter()
                .map(|m| StoredMove {
                    mv: m.parse::<Move>().unwrap(),
                    ms: Some(1230),
                })
                .collect(),
        }
    }

    #[test]
    fn finished_games_are_added_once_and_read_back_as_written() {
        let db = temp_path("import");
        let games = [
            finished("fangr", &["f5", "d6"]),
            finished("fangr", &["f5", "f6"]),
        ];
        let mut importer = Importer::open(&db).unwrap();
        let first = importer.insert_finished(&games).unwrap();
        assert_eq!(first, [Imported::Added(1), Imported::Added(2)]);
        // Again, and a repeat within one call: nothing is added.
        let again = importer
            .insert_finished(&[
                games[1].clone(),
                finished("ann", &["f5"]),
                finished("ann", &["f5"]),
            ])
            .unwrap();
        assert_eq!(
            again,
            [
                Imported::Present(2),
                Imported::Added(3),
                Imported::Present(3)
            ]
        );
        drop(importer);
        // A new importer finds them in the file.
        let mut reopened = Importer::open(&db).unwrap();
        assert_eq!(
            reopened.insert_finished(&games[..1]).unwrap(),
            [Imported::Present(1)]
        );
        // A daemon cannot open the store while an importer holds it.
        assert!(Store::open(&config(&db)).is_err());
        drop(reopened);
        let read = Archive::open(&db)
            .unwrap()
            .finished_games(None, None, None)
            .unwrap();
        assert_eq!(read.len(), 3);
        assert_eq!(
            read[0],
            GameRecord {
                id: 1,
                ..games[0].clone()
            }
        );
    }

    #[test]
    fn a_game_not_over_is_refused() {
        let db = temp_path("import-open");
        let mut importer = Importer::open(&db).unwrap();
        let open = GameRecord {
            status: Status::Playing,
            ..finished("ann", &[])
        };
        assert!(importer.insert_finished(&[open]).is_err());
    }
}
