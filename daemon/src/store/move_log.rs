//! The moves of games in play: appended to `move_log` in the order they are
//! played, and held by the writer in memory until their game ends.
//!
//! Why a log: `moves` is clustered by game, so with hundreds of games moving at
//! once each move of a batch lands on a page of its own, and every such page
//! is written to the WAL whole at the commit (at 200 games, one 4 KiB page a
//! move). Rows appended in `seq` order share the last page or two instead. When
//! a game ends its moves go into `moves` together (one or two pages), in the
//! same transaction as its result, and leave the log.
//!
//! The log is trimmed from the front, behind the first row still needed by a
//! game in play. So that one long game cannot pin it, a game whose first row
//! falls too far behind the head is logged again at the head (from memory);
//! readers take the last row of each ply.
//!
//! Moves taken back (`UNDO`) are not deleted, which would need an index on
//! the log: each taken-back ply is logged again as [`TAKEN_BACK`], a row
//! that ends the game's moves until a later row for that ply replaces it.
//! Such a row always comes after the rows it cancels, and the trim deletes a
//! prefix of the log, so no trim keeps a cancelled move without its marker.
//!
//! The writer's [`MoveLog`] changes with its transaction: whatever a batch did
//! to it is undone when the batch rolls back.
//!
//! A game whose logged rows do not read back is damaged: it is not held,
//! recovery leaves it out, and its rows are kept out of the trim, as they
//! are, for repair.
//!
//! The log has no index (that is what keeps a move cheap), so `HISTORY` of a
//! game in play takes its moves from the writer's memory: the request waits
//! in the writer's queue behind the writes before it, so every acknowledged
//! move is in the answer (reading 300,000 log rows for one game took 12-15
//! ms). The log itself is read only where the writer is not running: the
//! recovery at start, the `Archive` (`flip export`, `flip --local`) and
//! `flipd --copy-store-to`.

use std::collections::HashMap;

use flipline::Move;
use flipline::protocol::GameId;
use rusqlite::{Connection, params};

use super::row::{Damaged, StoredMove, unreadable};

/// Rows the log may hold before games lagging behind are logged again: at least
/// this many, or twice the moves of the games in play.
const MIN_LOG_ROWS: i64 = 65_536;
/// Rows freed at the front before they are deleted, so that a trim deletes
/// whole pages and runs once in many batches.
const TRIM_STEP: i64 = 4_096;

/// More plies than any game has (each ply fills a square or passes, and two
/// passes in a row end a game: a 10x10 game has at most 200). A logged ply
/// beyond it is from a damaged file and ignored, rather than sizing a vector.
const MOST_PLIES: usize = 1024;

/// The `move` of a row that takes its ply back: the game's moves stop before
/// it, unless a later row plays that ply again.
const TAKEN_BACK: &str = "undone";

/// A move as the writer holds it: 12 bytes. Milliseconds beyond `u32` (49
/// days) are kept as `u32::MAX` in memory and in `moves`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Held {
    mv: Move,
    ms: Option<u32>,
}

impl Held {
    fn stored(self) -> StoredMove {
        StoredMove {
            mv: self.mv,
            ms: self.ms.map(u64::from),
        }
    }
}

/// A game in play's moves and where they start in the log.
#[derive(Clone, Debug, PartialEq, Eq)]
struct LoggedGame {
    /// The `seq` of the first row its moves need.
    first_seq: i64,
    moves: Vec<Held>,
}

/// A change to undo if the transaction rolls back.
enum Undo {
    /// A move was appended; `created` when it was the game's first.
    Appended { game: GameId, created: bool },
    /// The game finished and left the log.
    Finished { game: GameId, logged: LoggedGame },
    /// The game was logged again from `first_seq` on.
    Relogged { game: GameId, first_seq: i64 },
    /// Its last moves were taken back.
    TakenBack { game: GameId, moves: Vec<Held> },
}

/// The writer's view of the log, in step with its committed rows.
pub struct MoveLog {
    games: HashMap<GameId, LoggedGame>,
    /// The `seq` the next row gets.
    next_seq: i64,
    /// Rows below this `seq` are deleted.
    trimmed_below: i64,
    /// Rows the log may hold before lagging games are logged again (at least).
    min_rows: i64,
    /// Rows freed at the front before they are deleted.
    trim_step: i64,
    /// The `seq` at which [`MoveLog::maintain`] next looks at the games: a
    /// look costs a pass over every game in play.
    next_look: i64,
    undo: Vec<Undo>,
    /// `next_seq` and `trimmed_below` when the transaction began.
    saved: (i64, i64),
    /// Games open or in play at the load whose rows do not read back; their
    /// rows are never trimmed.
    damaged: Vec<Damaged>,
}

/// The logged moves of the games open or in play, by game, and the games
/// whose logged rows do not read back.
#[derive(Debug, Default)]
pub struct Logged {
    /// The moves of each game that has any.
    pub moves: HashMap<GameId, Vec<StoredMove>>,
    /// The games left out.
    pub damaged: Vec<Damaged>,
}

impl MoveLog {
    /// Reads the log of a store (at start, before any write).
    pub fn load(conn: &Connection) -> rusqlite::Result<MoveLog> {
        let read = read(conn, None)?;
        let damaged: Vec<Damaged> = (read.damaged.iter())
            .map(|(game, seq, error)| damage(*game, *seq, error))
            .collect();
        // The trim starts at the first row of a game not damaged.
        let sql = format!(
            "SELECT COALESCE(MAX(seq), 0) + 1, MIN(CASE WHEN {} THEN seq END) FROM move_log",
            not_damaged(&damaged)
        );
        let (next_seq, first) = conn.query_row(&sql, [], |r| {
            Ok((r.get::<_, i64>(0)?, r.get::<_, Option<i64>>(1)?))
        })?;
        let trimmed_below = first.unwrap_or(next_seq);
        Ok(MoveLog {
            games: read.games.into_iter().collect(),
            next_seq,
            trimmed_below,
            min_rows: MIN_LOG_ROWS,
            trim_step: TRIM_STEP,
            next_look: next_seq,
            undo: Vec::new(),
            saved: (next_seq, trimmed_below),
            damaged,
        })
    }

    /// The games whose logged rows do not read back (found at the load).
    pub fn damaged(&self) -> &[Damaged] {
        &self.damaged
    }

    /// Marks the start of a transaction.
    pub fn begin(&mut self) {
        self.undo.clear();
        self.saved = (self.next_seq, self.trimmed_below);
    }

    /// The transaction committed: its changes stay.
    pub fn commit(&mut self) {
        self.undo.clear();
    }

    /// The transaction rolled back: its changes are undone.
    pub fn rollback(&mut self) {
        while let Some(undo) = self.undo.pop() {
            match undo {
                Undo::Appended { game, created } => {
                    if created {
                        self.games.remove(&game);
                    } else if let Some(logged) = self.games.get_mut(&game) {
                        logged.moves.pop();
                    }
                }
                Undo::Finished { game, logged } => {
                    self.games.insert(game, logged);
                }
                Undo::Relogged { game, first_seq } => {
                    if let Some(logged) = self.games.get_mut(&game) {
                        logged.first_seq = first_seq;
                    }
                }
                Undo::TakenBack { game, moves } => {
                    if let Some(logged) = self.games.get_mut(&game) {
                        logged.moves.extend(moves);
                    }
                }
            }
        }
        (self.next_seq, self.trimmed_below) = self.saved;
    }

    /// Appends move `ply` of `game`, which must be the game's next and the game
    /// open or in play.
    pub fn append(
        &mut self,
        conn: &Connection,
        game: GameId,
        ply: u32,
        mv: Move,
        ms: Option<u64>,
    ) -> rusqlite::Result<usize> {
        let created = !self.games.contains_key(&game);
        if created && !in_play(conn, game)? {
            return Err(refused(format!("game {game} is not open or in play")));
        }
        let held = self.games.get(&game).map_or(0, |g| g.moves.len());
        if usize::try_from(ply).ok() != held.checked_add(1) {
            return Err(refused(format!(
                "move {ply} of game {game} out of order: {held} moves are stored"
            )));
        }
        let seq = self.next_seq;
        insert_row(conn, seq, game, ply, mv, ms)?;
        self.next_seq = self.next_seq.saturating_add(1);
        let ms = ms.map(|ms| u32::try_from(ms).unwrap_or(u32::MAX));
        let logged = self.games.entry(game).or_insert(LoggedGame {
            first_seq: seq,
            moves: Vec::new(),
        });
        logged.moves.push(Held { mv, ms });
        self.undo.push(Undo::Appended { game, created });
        Ok(1)
    }

    /// Takes back the moves of `game` after its first `keep`, which must hold
    /// `plies` moves now (a game that moved on meanwhile is refused). Logs a
    /// [`TAKEN_BACK`] row for each; returns how many.
    pub fn take_back(
        &mut self,
        conn: &Connection,
        game: GameId,
        keep: u32,
        plies: u32,
    ) -> rusqlite::Result<usize> {
        let held = self.games.get(&game).map_or(0, |g| g.moves.len());
        let (Ok(keep_len), Ok(plies_len)) = (usize::try_from(keep), usize::try_from(plies)) else {
            return Err(refused(format!("game {game}: ply out of range")));
        };
        if held != plies_len || keep_len >= plies_len {
            return Err(refused(format!(
                "cannot take game {game} back to {keep} moves from {plies}: {held} are stored"
            )));
        }
        for ply in keep.saturating_add(1)..=plies {
            insert_text_row(conn, self.next_seq, game, ply, TAKEN_BACK, None)?;
            self.next_seq = self.next_seq.saturating_add(1);
        }
        let Some(logged) = self.games.get_mut(&game) else {
            return Err(refused(format!("game {game} has no moves")));
        };
        let moves = logged.moves.split_off(keep_len);
        let count = moves.len();
        self.undo.push(Undo::TakenBack { game, moves });
        Ok(count)
    }

    /// The game is over (or cancelled): its moves go into `moves` and leave the
    /// log. Returns how many.
    pub fn finish(&mut self, conn: &Connection, game: GameId) -> rusqlite::Result<usize> {
        let Some(logged) = self.games.remove(&game) else {
            return Ok(0);
        };
        let inserted = insert_moves(conn, game, &logged.moves);
        self.undo.push(Undo::Finished { game, logged });
        inserted
    }

    /// Keeps the log short: logs lagging games again and deletes the rows no
    /// game needs. Runs inside the batch's transaction, after its writes.
    pub fn maintain(&mut self, conn: &Connection) -> rusqlite::Result<()> {
        let span = self.next_seq.saturating_sub(self.trimmed_below);
        if span < self.trim_step || self.next_seq < self.next_look {
            return Ok(());
        }
        self.next_look = self.next_seq.saturating_add(self.trim_step / 4);
        let bound = self.min_rows.max(
            i64::try_from(self.held())
                .unwrap_or(i64::MAX)
                .saturating_mul(2),
        );
        if span > bound {
            self.relog_before(conn, self.next_seq.saturating_sub(bound / 2))?;
        }
        let needed = self.games.values().map(|g| g.first_seq).min();
        let keep_from = needed.unwrap_or(self.next_seq);
        if keep_from.saturating_sub(self.trimmed_below) >= self.trim_step {
            let sql = format!(
                "DELETE FROM move_log WHERE seq < ?1 AND {}",
                not_damaged(&self.damaged)
            );
            conn.prepare_cached(&sql)?.execute(params![keep_from])?;
            self.trimmed_below = keep_from;
        }
        Ok(())
    }

    /// Logs again, at the head, every game whose rows start before `seq`.
    fn relog_before(&mut self, conn: &Connection, seq: i64) -> rusqlite::Result<()> {
        let lagging: Vec<GameId> = (self.games.iter())
            .filter(|(_, g)| g.first_seq < seq)
            .map(|(id, _)| *id)
            .collect();
        for game in lagging {
            let Some(logged) = self.games.get_mut(&game) else {
                continue;
            };
            let first_seq = self.next_seq;
            for (ply, held) in (1u32..).zip(&logged.moves) {
                let ms = held.ms.map(u64::from);
                insert_row(conn, self.next_seq, game, ply, held.mv, ms)?;
                self.next_seq = self.next_seq.saturating_add(1);
            }
            let old = std::mem::replace(&mut logged.first_seq, first_seq);
            self.undo.push(Undo::Relogged {
                game,
                first_seq: old,
            });
        }
        Ok(())
    }

    /// Smaller bounds, so that tests reach them.
    #[cfg(test)]
    pub fn set_bounds(&mut self, min_rows: i64, trim_step: i64) {
        (self.min_rows, self.trim_step) = (min_rows, trim_step);
    }

    /// The moves held for every game in play that has any, by game.
    pub fn all_held(&self) -> HashMap<GameId, Vec<StoredMove>> {
        (self.games.iter())
            .map(|(&game, logged)| (game, stored(logged)))
            .collect()
    }

    /// The moves held for `game`, if it is in play and has any.
    pub fn held_moves(&self, game: GameId) -> Option<Vec<StoredMove>> {
        self.games.get(&game).map(stored)
    }

    /// The moves held for `game` as `HISTORY` tells them: an error for a
    /// damaged game rather than no moves.
    pub fn moves_to_tell(&self, game: GameId) -> Result<Option<Vec<StoredMove>>, String> {
        match self.damaged.iter().find(|d| d.game == game) {
            Some(damaged) => Err(format!(
                "the stored moves of game {game} do not read back ({})",
                damaged.why
            )),
            None => Ok(self.held_moves(game)),
        }
    }

    /// Moves held over all games (a pass over them: for the occasional look
    /// of [`MoveLog::maintain`]).
    pub fn held(&self) -> usize {
        self.games.values().map(|g| g.moves.len()).sum()
    }
}

/// The columns of `move_log`, in the order [`read`] selects them.
const LOG_COLUMNS: [&str; 5] = ["seq", "game", "ply", "move", "ms"];

/// What [`read`] found: the games whose rows read back, and for each game
/// whose rows do not, the first row that does not (its `seq`) and why.
struct Read {
    games: Vec<(GameId, LoggedGame)>,
    damaged: Vec<(GameId, i64, rusqlite::Error)>,
}

/// The last row read for a ply: its `seq`, and its move (`None`: taken back).
type LoggedPly = (i64, Option<Held>);

/// The logged moves of the games open or in play (or of `game` alone), in ply
/// order: the last row of each ply wins, and a game's moves stop at the first
/// missing ply. A game with a row that does not read back (a move that does
/// not parse, a ply or time that is not a number) is damaged and left out.
fn read(conn: &Connection, game: Option<GameId>) -> rusqlite::Result<Read> {
    let mut statement = conn.prepare_cached(
        "SELECT seq, game, ply, move, ms FROM move_log \
         WHERE (?1 IS NULL OR game = ?1) \
         AND game IN (SELECT id FROM games WHERE status IN ('open', 'playing')) \
         ORDER BY seq",
    )?;
    let mut rows = statement.query(params![game])?;
    let mut plies: HashMap<GameId, Vec<Option<LoggedPly>>> = HashMap::new();
    let mut damaged: Vec<(GameId, i64, rusqlite::Error)> = Vec::new();
    while let Some(row) = rows.next()? {
        let seq: i64 = row.get(0)?;
        let game: GameId = row.get(1)?;
        if damaged.iter().any(|(g, _, _)| *g == game) {
            continue;
        }
        let (ply, held) = match logged_move(row) {
            Ok(read) => read,
            Err(error) => {
                plies.remove(&game);
                damaged.push((game, seq, error));
                continue;
            }
        };
        let index = usize::try_from(ply).ok().and_then(|p| p.checked_sub(1));
        let Some(index) = index.filter(|&i| i < MOST_PLIES) else {
            continue;
        };
        let slots = plies.entry(game).or_default();
        if slots.len() <= index {
            slots.resize(index + 1, None);
        }
        if let Some(slot) = slots.get_mut(index) {
            *slot = Some((seq, held));
        }
    }
    let mut games: Vec<(GameId, LoggedGame)> = (plies.into_iter())
        .map(|(game, slots)| {
            let kept: Vec<(i64, Held)> = (slots.into_iter())
                .map_while(|slot| slot.and_then(|(seq, held)| Some((seq, held?))))
                .collect();
            let first_seq = kept.iter().map(|(seq, _)| *seq).min().unwrap_or(i64::MAX);
            let moves = kept.into_iter().map(|(_, held)| held).collect();
            (game, LoggedGame { first_seq, moves })
        })
        .collect();
    games.sort_by_key(|(game, _)| *game);
    Ok(Read { games, damaged })
}

/// The ply and move of a `move_log` row; no move for a ply taken back.
fn logged_move(row: &rusqlite::Row<'_>) -> rusqlite::Result<(u32, Option<Held>)> {
    let ply: u32 = row.get(2)?;
    let mv = super::row::parsed(row, 3, |text| match text {
        TAKEN_BACK => Some(None),
        text => text.parse().ok().map(Some),
    })?;
    let ms: Option<u64> = row.get(4)?;
    let ms = ms.map(|ms| u32::try_from(ms).unwrap_or(u32::MAX));
    Ok((ply, mv.map(|mv| Held { mv, ms })))
}

fn damage(game: GameId, seq: i64, error: &rusqlite::Error) -> Damaged {
    Damaged {
        game,
        why: format!("move_log row {seq}: {}", unreadable(error, &LOG_COLUMNS)),
    }
}

/// SQL that is true for the rows of games not in `damaged`.
fn not_damaged(damaged: &[Damaged]) -> String {
    let games: Vec<String> = damaged.iter().map(|d| d.game.to_string()).collect();
    format!("game NOT IN ({})", games.join(", "))
}

/// The moves of the games open or in play, by game, and those damaged (for
/// `flip export`).
pub fn logged_moves(conn: &Connection) -> rusqlite::Result<Logged> {
    let read = read(conn, None)?;
    Ok(Logged {
        moves: (read.games.iter())
            .map(|(game, logged)| (*game, stored(logged)))
            .collect(),
        damaged: (read.damaged.iter())
            .map(|(game, seq, error)| damage(*game, *seq, error))
            .collect(),
    })
}

/// The logged moves of one game open or in play (for `HISTORY`), or why
/// they do not read back. Reads the whole log: the log has no index, which
/// is what keeps moves cheap.
pub fn logged_moves_of(conn: &Connection, game: GameId) -> rusqlite::Result<Vec<StoredMove>> {
    let read = read(conn, Some(game))?;
    if let Some((_, _, error)) = read.damaged.into_iter().next() {
        return Err(error);
    }
    Ok(read
        .games
        .first()
        .map(|(_, logged)| stored(logged))
        .unwrap_or_default())
}

fn stored(logged: &LoggedGame) -> Vec<StoredMove> {
    logged.moves.iter().map(|held| held.stored()).collect()
}

fn in_play(conn: &Connection, game: GameId) -> rusqlite::Result<bool> {
    conn.prepare_cached(
        "SELECT count(*) FROM games WHERE id = ?1 AND status IN ('open', 'playing')",
    )?
    .query_row(params![game], |r| r.get::<_, i64>(0))
    .map(|count| count > 0)
}

fn insert_row(
    conn: &Connection,
    seq: i64,
    game: GameId,
    ply: u32,
    mv: Move,
    ms: Option<u64>,
) -> rusqlite::Result<()> {
    insert_text_row(conn, seq, game, ply, MoveText::of(mv).as_str(), ms)
}

fn insert_text_row(
    conn: &Connection,
    seq: i64,
    game: GameId,
    ply: u32,
    text: &str,
    ms: Option<u64>,
) -> rusqlite::Result<()> {
    conn.prepare_cached(
        "INSERT INTO move_log (seq, game, ply, move, ms) VALUES (?1, ?2, ?3, ?4, ?5)",
    )?
    .execute(params![seq, game, ply, text, ms])
    .map(|_| ())
}

fn insert_moves(conn: &Connection, game: GameId, moves: &[Held]) -> rusqlite::Result<usize> {
    let mut statement =
        conn.prepare_cached("INSERT INTO moves (game, ply, move, ms) VALUES (?1, ?2, ?3, ?4)")?;
    for (ply, held) in (1u32..).zip(moves) {
        statement.execute(params![game, ply, MoveText::of(held.mv).as_str(), held.ms])?;
    }
    Ok(moves.len())
}

/// A move's text (`f5`, `j10`, `pass`) on the stack: the writer stores one
/// for every move.
struct MoveText {
    bytes: [u8; 8],
    len: usize,
}

impl MoveText {
    fn of(mv: Move) -> MoveText {
        use std::fmt::Write;
        let mut text = MoveText {
            bytes: [0; 8],
            len: 0,
        };
        // Every square's text fits: the longest is `[255]256`.
        if write!(text, "{mv}").is_err() {
            text.len = 0;
        }
        text
    }

    fn as_str(&self) -> &str {
        let bytes = self.bytes.get(..self.len).unwrap_or_default();
        std::str::from_utf8(bytes).unwrap_or_default()
    }
}

impl std::fmt::Write for MoveText {
    fn write_str(&mut self, text: &str) -> std::fmt::Result {
        let end = self.len + text.len();
        let slot = self.bytes.get_mut(self.len..end).ok_or(std::fmt::Error)?;
        slot.copy_from_slice(text.as_bytes());
        self.len = end;
        Ok(())
    }
}

/// A write the store refuses, as SQLite reports a broken constraint.
fn refused(why: String) -> rusqlite::Error {
    rusqlite::Error::SqliteFailure(
        rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_CONSTRAINT),
        Some(why),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use flipline::Square;

    #[test]
    fn a_damaged_ply_in_the_log_is_ignored() {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(
            "CREATE TABLE games (id INTEGER PRIMARY KEY, status TEXT);
             CREATE TABLE move_log (seq INTEGER PRIMARY KEY, game, ply, move, ms);
             INSERT INTO games VALUES (1, 'playing');
             INSERT INTO move_log VALUES (1, 1, 1, 'f5', 10), (2, 1, 4000000000, 'd6', 10),
                                         (3, 1, 0, 'c3', 10), (4, 1, 2, 'd6', 20);",
        )
        .unwrap();
        let log = MoveLog::load(&conn).unwrap();
        let moves = log.held_moves(1).unwrap();
        let text: Vec<String> = moves.iter().map(|m| m.mv.to_string()).collect();
        assert_eq!(text, ["f5", "d6"]);
        assert_eq!(log.held(), 2);
    }

    #[test]
    fn a_damaged_game_is_not_held_and_its_rows_outlive_every_trim() {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(
            "CREATE TABLE games (id INTEGER PRIMARY KEY, status TEXT);
             CREATE TABLE move_log (seq INTEGER PRIMARY KEY, game, ply, move, ms);
             CREATE TABLE moves (game, ply, move, ms);
             INSERT INTO games VALUES (1, 'playing'), (2, 'playing'), (3, 'playing');
             INSERT INTO move_log VALUES (1, 2, 1, 'f5', 10), (2, 2, 2, 'zz', 10),
                                         (3, 2, 3, 'c3', 10);",
        )
        .unwrap();
        let mut log = MoveLog::load(&conn).unwrap();
        log.set_bounds(16, 4);
        let [damaged] = log.damaged() else {
            panic!("{:?}", log.damaged())
        };
        assert_eq!(damaged.game, 2);
        assert!(damaged.why.contains("row 2"), "{}", damaged.why);
        assert!(damaged.why.contains("move column"), "{}", damaged.why);
        assert!(damaged.why.contains("\"zz\""), "{}", damaged.why);
        assert_eq!(log.held_moves(2), None);
        assert!(
            log.moves_to_tell(2).is_err(),
            "HISTORY is told it is damaged"
        );
        let f5: Move = "f5".parse().unwrap();
        // Game 3 is played and ends, then game 1 is played: the trims behind
        // game 1 delete game 3's rows, and never game 2's.
        for (game, plies) in [(3, 50), (1, 100)] {
            for ply in 1..=plies {
                log.begin();
                log.append(&conn, game, ply, f5, Some(10)).unwrap();
                log.maintain(&conn).unwrap();
                log.commit();
            }
            if game == 3 {
                log.begin();
                log.finish(&conn, 3).unwrap();
                log.commit();
            }
        }
        let rows_of = |game: GameId| -> i64 {
            conn.query_row(
                "SELECT count(*) FROM move_log WHERE game = ?1",
                params![game],
                |r| r.get(0),
            )
            .unwrap()
        };
        assert_eq!(rows_of(3), 0, "the ended game's rows were trimmed");
        assert_eq!(rows_of(2), 3, "the damaged game's rows are all kept");
        assert_eq!(log.held_moves(1).map(|m| m.len()), Some(100));
        let reloaded = MoveLog::load(&conn).unwrap();
        assert_eq!(reloaded.damaged(), log.damaged());
        assert_eq!(reloaded.held_moves(1), log.held_moves(1));
    }

    fn log_with_game_one() -> (Connection, MoveLog) {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(
            "CREATE TABLE games (id INTEGER PRIMARY KEY, status TEXT);
             CREATE TABLE move_log (seq INTEGER PRIMARY KEY, game, ply, move, ms);
             CREATE TABLE moves (game, ply, move, ms);
             INSERT INTO games VALUES (1, 'playing');",
        )
        .unwrap();
        let log = MoveLog::load(&conn).unwrap();
        (conn, log)
    }

    fn play(conn: &Connection, log: &mut MoveLog, ply: u32, mv: &str) {
        log.begin();
        log.append(conn, 1, ply, mv.parse().unwrap(), Some(u64::from(ply)))
            .unwrap();
        log.maintain(conn).unwrap();
        log.commit();
    }

    fn texts(moves: Option<Vec<StoredMove>>) -> Vec<String> {
        moves
            .unwrap_or_default()
            .iter()
            .map(|m| m.mv.to_string())
            .collect()
    }

    #[test]
    fn taken_back_moves_stay_taken_back_and_moves_played_again_replace_them() {
        let (conn, mut log) = log_with_game_one();
        for (ply, mv) in (1..).zip(["f5", "d6", "c3", "d3"]) {
            play(&conn, &mut log, ply, mv);
        }
        log.begin();
        assert_eq!(log.take_back(&conn, 1, 1, 4).unwrap(), 3);
        log.commit();
        assert_eq!(texts(log.held_moves(1)), ["f5"]);
        let reloaded = MoveLog::load(&conn).unwrap();
        assert_eq!(texts(reloaded.held_moves(1)), ["f5"]);
        // One ply played again: the old third and fourth stay taken back.
        play(&conn, &mut log, 2, "f6");
        assert_eq!(texts(log.held_moves(1)), ["f5", "f6"]);
        let reloaded = MoveLog::load(&conn).unwrap();
        assert_eq!(reloaded.held_moves(1), log.held_moves(1));
        assert_eq!(
            logged_moves_of(&conn, 1).unwrap(),
            log.held_moves(1).unwrap()
        );
    }

    #[test]
    fn a_take_back_that_does_not_fit_is_refused_and_a_rolled_back_one_is_undone() {
        let (conn, mut log) = log_with_game_one();
        for (ply, mv) in (1..).zip(["f5", "d6"]) {
            play(&conn, &mut log, ply, mv);
        }
        log.begin();
        assert!(log.take_back(&conn, 1, 1, 3).is_err(), "the game moved on");
        assert!(
            log.take_back(&conn, 1, 2, 2).is_err(),
            "nothing to take back"
        );
        assert!(log.take_back(&conn, 2, 0, 1).is_err(), "no such game");
        assert_eq!(log.take_back(&conn, 1, 0, 2).unwrap(), 2);
        log.rollback();
        assert_eq!(texts(log.held_moves(1)), ["f5", "d6"]);
    }

    #[test]
    fn a_game_taken_back_and_logged_again_reads_back_after_trims() {
        let (conn, mut log) = log_with_game_one();
        log.set_bounds(16, 4);
        for (ply, mv) in (1..).zip(["f5", "d6", "c3", "d3"]) {
            play(&conn, &mut log, ply, mv);
        }
        log.begin();
        log.take_back(&conn, 1, 2, 4).unwrap();
        log.commit();
        // Other games played and ended push game 1 behind the head: it is
        // logged again, and the rows before it are trimmed.
        let f5: Move = "f5".parse().unwrap();
        for game in 2..=6 {
            conn.execute("INSERT INTO games VALUES (?1, 'playing')", [game])
                .unwrap();
            for ply in 1..=30 {
                log.begin();
                log.append(&conn, game, ply, f5, Some(1)).unwrap();
                log.maintain(&conn).unwrap();
                log.commit();
            }
            log.begin();
            log.finish(&conn, game).unwrap();
            log.commit();
        }
        let first: i64 = conn
            .query_row("SELECT min(seq) FROM move_log", [], |r| r.get(0))
            .unwrap();
        assert!(first > 6, "game 1's first rows and markers were trimmed");
        let reloaded = MoveLog::load(&conn).unwrap();
        assert_eq!(texts(reloaded.held_moves(1)), ["f5", "d6"]);
        play(&conn, &mut log, 3, "e6");
        let reloaded = MoveLog::load(&conn).unwrap();
        assert_eq!(texts(reloaded.held_moves(1)), ["f5", "d6", "e6"]);
    }

    #[test]
    fn move_text_is_the_move_as_displayed() {
        let mut moves = vec![Move::Pass, Move::Place(Square { row: 255, col: 255 })];
        for row in 0..12 {
            for col in 0..12 {
                moves.push(Move::Place(Square { row, col }));
            }
        }
        for mv in moves {
            assert_eq!(MoveText::of(mv).as_str(), mv.to_string());
        }
    }
}
