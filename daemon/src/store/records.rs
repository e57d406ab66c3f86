//! What the store keeps, as Rust values, and the statements that write and read
//! it. Every function here takes a connection and does its work at once: the
//! threads that own the connections are in the parent module.

use std::str::FromStr;

use flipline::protocol::{
    ClockSpec, EndReason, GameId, GameResult, GameStatus, GameSummary, TourneyId,
};
use flipline::{Color, Move, Variant};
use rusqlite::types::Type;
use rusqlite::{Connection, OptionalExtension, Row, params};

use super::move_log::{self, Logged, MoveLog};
pub use super::row::StoredMove;
use super::row::{Damaged, parsed, unreadable};
use super::schema::NOW;
use super::tourneys::TourneyWrite;
use crate::rules::registered::RegisteredNames;

/// Where a game stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// Created with a free seat; nobody has joined yet.
    Open,
    /// Both seats filled, being played.
    Playing,
    /// Finished, with a result.
    Over,
    /// Closed while still open (its creator left before anyone joined).
    Cancelled,
}

impl Status {
    /// The word in the `status` column (and in `HISTORY` lines).
    pub fn word(self) -> &'static str {
        match self {
            Status::Open => "open",
            Status::Playing => "playing",
            Status::Over => "over",
            Status::Cancelled => "cancelled",
        }
    }

    pub(crate) fn from_word(word: &str) -> Option<Status> {
        [
            Status::Open,
            Status::Playing,
            Status::Over,
            Status::Cancelled,
        ]
        .into_iter()
        .find(|s| s.word() == word)
    }
}

/// A game as the store has it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GameRecord {
    /// The game's number.
    pub id: GameId,
    /// Its variant.
    pub variant: Variant,
    /// Black: a name, `bot:N`, or `None` while the seat is open.
    pub black: Option<String>,
    /// White, likewise.
    pub white: Option<String>,
    /// The clock, if any.
    pub clock: Option<ClockSpec>,
    /// Where it stands.
    pub status: Status,
    /// The result, once over.
    pub result: Option<GameResult>,
    /// When it was created (UTC, ISO 8601).
    pub started_at: String,
    /// When it ended or was cancelled.
    pub ended_at: Option<String>,
    /// The secrets of the guests in its seats while in play (see
    /// [`Write::NewGame`]).
    pub secrets: [Option<String>; 2],
    /// Whether it counts for the ratings.
    pub rated: bool,
    /// The tournament it was made for, if any.
    pub tourney: Option<flipline::protocol::TourneyId>,
    /// Every move from the start, in order, passes written out.
    pub moves: Vec<StoredMove>,
}

impl GameRecord {
    /// The moves alone.
    pub fn transcript(&self) -> Vec<Move> {
        self.moves.iter().map(|m| m.mv).collect()
    }

    /// The game as the protocol states it (`HISTORY`, transcript lines):
    /// without the times of the game and of each move, which only the store
    /// and GGF keep.
    pub fn summary(&self) -> GameSummary {
        GameSummary {
            game: self.id,
            variant: self.variant,
            black: self.black.clone(),
            white: self.white.clone(),
            clock: self.clock,
            status: match self.status {
                Status::Open => GameStatus::Open,
                Status::Playing => GameStatus::Playing,
                Status::Over => GameStatus::Over,
                Status::Cancelled => GameStatus::Cancelled,
            },
            result: self.result,
            moves: self.transcript(),
        }
    }
}

/// A change to the store. Each is one or a few statements inside the batch's
/// transaction. Not `Debug`: a registration carries a password hash, which
/// stays out of logs ([`Write::summary`] describes a write).
#[derive(Clone, PartialEq, Eq)]
pub enum Write {
    /// A game was created, with the moves it starts from (`NEW ... from`).
    NewGame {
        /// Its number.
        id: GameId,
        /// Its variant.
        variant: Variant,
        /// Black's seat.
        black: Option<String>,
        /// White's seat.
        white: Option<String>,
        /// The secrets of guests in black's and white's seats (32 hex
        /// digits), which alone take a seat back after a restart.
        secrets: [Option<String>; 2],
        /// Its clock.
        clock: Option<ClockSpec>,
        /// `Open` or `Playing`.
        status: Status,
        /// Moves it starts from.
        start: Vec<Move>,
        /// Whether it counts for the ratings.
        rated: bool,
        /// The tournament and round it is played for, if any.
        tourney: Option<(TourneyId, u32)>,
    },
    /// A tournament's rows change.
    Tourney(TourneyWrite),
    /// A registered name is marked a program's (`ACCOUNT bot`); 0 rows if
    /// it is not registered.
    MarkBot {
        /// The name, in any case.
        name: String,
    },
    /// The open seat was taken: the game is played from now on.
    Seats {
        /// The game.
        game: GameId,
        /// Black's seat.
        black: Option<String>,
        /// White's seat.
        white: Option<String>,
        /// The guests' secrets, as in [`Write::NewGame`].
        secrets: [Option<String>; 2],
    },
    /// A move was played.
    Move {
        /// The game.
        game: GameId,
        /// 1 for the first move of the game.
        ply: u32,
        /// The move.
        mv: Move,
        /// Milliseconds the mover took.
        ms: u64,
    },
    /// The moves of a game in play after its first `keep` are taken back
    /// (`UNDO`); refused unless it holds `plies` moves.
    TakeBack {
        /// The game.
        game: GameId,
        /// Moves kept.
        keep: u32,
        /// Moves it holds now.
        plies: u32,
    },
    /// The game ended.
    End {
        /// The game.
        game: GameId,
        /// How.
        result: GameResult,
    },
    /// An open game closed before anyone joined.
    Cancel {
        /// The game.
        game: GameId,
    },
    /// A name is registered with a password hash, unless it already is (then
    /// nothing changes and the write counts 0 rows).
    Register {
        /// The name.
        name: String,
        /// The argon2 hash in PHC form.
        hash: String,
    },
}

impl Write {
    /// What the write is, for logs (without a password hash).
    pub fn summary(&self) -> String {
        match self {
            Write::NewGame { id, .. } => format!("creation of game {id}"),
            Write::Seats { game, .. } => format!("seats of game {game}"),
            Write::Move { game, ply, .. } => format!("move {ply} of game {game}"),
            Write::TakeBack { game, keep, .. } => {
                format!("taking game {game} back to move {keep}")
            }
            Write::End { game, .. } => format!("end of game {game}"),
            Write::Cancel { game } => format!("cancellation of game {game}"),
            Write::Register { name, .. } => format!("registration of {name}"),
            Write::MarkBot { name } => format!("marking {name} a program"),
            Write::Tourney(write) => write.summary(),
        }
    }

    /// The game the write is about, if it is about one.
    pub fn game(&self) -> Option<GameId> {
        match self {
            Write::NewGame { id: game, .. }
            | Write::Seats { game, .. }
            | Write::Move { game, .. }
            | Write::TakeBack { game, .. }
            | Write::End { game, .. }
            | Write::Cancel { game } => Some(*game),
            Write::Register { .. } | Write::MarkBot { .. } | Write::Tourney(_) => None,
        }
    }

    /// Runs the write on `conn` (inside the caller's transaction, which `log`
    /// follows); returns the rows it changed.
    /// `rating_period_days` is the store's rating period, for a rated end.
    pub fn apply(
        &self,
        conn: &Connection,
        log: &mut MoveLog,
        rating_period_days: u32,
    ) -> rusqlite::Result<usize> {
        match self {
            Write::NewGame {
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
            } => {
                let sql = format!(
                    "INSERT INTO games (id, variant, black, white, clock, status, started_at, \
                     black_secret, white_secret, rated, tourney, tourney_round) \
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, {NOW}, ?7, ?8, ?9, ?10, ?11)"
                );
                let clock = clock.map(|c| c.to_string());
                let row = params![
                    id,
                    variant.name(),
                    black,
                    white,
                    clock,
                    status.word(),
                    black_secret,
                    white_secret,
                    rated,
                    tourney.map(|t| t.0),
                    tourney.map(|t| t.1)
                ];
                let mut changed = conn.prepare_cached(&sql)?.execute(row)?;
                for (ply, mv) in (1u32..).zip(start) {
                    changed += log.append(conn, *id, ply, *mv, None)?;
                }
                Ok(changed)
            }
            Write::Seats {
                game,
                black,
                white,
                secrets: [black_secret, white_secret],
            } => conn
                .prepare_cached(
                    "UPDATE games SET black = ?2, white = ?3, status = 'playing', \
                     black_secret = ?4, white_secret = ?5 WHERE id = ?1",
                )?
                .execute(params![game, black, white, black_secret, white_secret]),
            Write::Move { game, ply, mv, ms } => log.append(conn, *game, *ply, *mv, Some(*ms)),
            Write::TakeBack { game, keep, plies } => log.take_back(conn, *game, *keep, *plies),
            Write::End { game, result } => {
                let changed = end_game(conn, *game, result)?;
                log.finish(conn, *game)?;
                super::ratings::rate_if_rated(conn, *game, rating_period_days)?;
                Ok(changed)
            }
            Write::Tourney(write) => super::tourneys::apply(write, conn),
            Write::MarkBot { name } => conn
                .prepare_cached("UPDATE players SET bot = 1 WHERE name = ?1 COLLATE NOCASE")?
                .execute(params![name]),
            Write::Cancel { game } => {
                let sql = format!(
                    "UPDATE games SET status = 'cancelled', ended_at = {NOW}, \
                     black_secret = NULL, white_secret = NULL WHERE id = ?1 AND status = 'open'"
                );
                let changed = conn.prepare_cached(&sql)?.execute(params![game])?;
                if changed > 0 {
                    log.finish(conn, *game)?;
                }
                Ok(changed)
            }
            Write::Register { name, hash } => {
                let sql = format!(
                    "INSERT INTO players (name, password_hash, created_at) SELECT ?1, ?2, {NOW} \
                     WHERE NOT EXISTS (SELECT 1 FROM players WHERE name = ?1 COLLATE NOCASE) \
                     ON CONFLICT (name) DO NOTHING"
                );
                conn.prepare_cached(&sql)?.execute(params![name, hash])
            }
        }
    }
}

fn end_game(conn: &Connection, game: GameId, result: &GameResult) -> rusqlite::Result<usize> {
    let sql = format!(
        "UPDATE games SET status = 'over', result = ?2, black_score = ?3, white_score = ?4, \
         reason = ?5, ended_at = {NOW}, black_secret = NULL, white_secret = NULL WHERE id = ?1"
    );
    let winner = result
        .winner
        .map_or_else(|| "draw".to_string(), |c| c.letter().to_string());
    conn.prepare_cached(&sql)?.execute(params![
        game,
        winner,
        result.black,
        result.white,
        result.reason.word()
    ])
}

/// The columns [`game_from_row`] reads, in its order.
const GAME_COLUMNS: [&str; 16] = [
    "id",
    "variant",
    "black",
    "white",
    "clock",
    "status",
    "result",
    "black_score",
    "white_score",
    "reason",
    "started_at",
    "ended_at",
    "black_secret",
    "white_secret",
    "rated",
    "tourney",
];

fn from_str<T: FromStr>(text: &str) -> Option<T> {
    text.parse().ok()
}

fn game_from_row(row: &Row<'_>) -> rusqlite::Result<GameRecord> {
    let clock: Option<String> = row.get(4)?;
    let clock = match clock {
        Some(text) => Some(ClockSpec::parse(&text).map_err(|e| {
            rusqlite::Error::FromSqlConversionFailure(4, Type::Text, e.message.into())
        })?),
        None => None,
    };
    let winner: Option<String> = row.get(6)?;
    let result = match winner {
        Some(_) => Some(GameResult {
            winner: parsed(row, 6, |w| match w {
                "draw" => Some(None),
                letter => Color::from_letter(letter).map(Some),
            })?,
            black: row.get(7)?,
            white: row.get(8)?,
            reason: parsed(row, 9, EndReason::from_word)?,
        }),
        None => None,
    };
    Ok(GameRecord {
        id: row.get(0)?,
        variant: parsed(row, 1, from_str)?,
        black: row.get(2)?,
        white: row.get(3)?,
        clock,
        status: parsed(row, 5, Status::from_word)?,
        result,
        started_at: row.get(10)?,
        ended_at: row.get(11)?,
        secrets: [row.get(12)?, row.get(13)?],
        rated: row.get::<_, i64>(14)? != 0,
        tourney: row.get(15)?,
        moves: Vec::new(),
    })
}

fn moves_of(conn: &Connection, game: GameId) -> rusqlite::Result<Vec<StoredMove>> {
    let mut statement =
        conn.prepare_cached("SELECT move, ms FROM moves WHERE game = ?1 ORDER BY ply")?;
    let rows = statement.query_map(params![game], |row| {
        Ok(StoredMove {
            mv: parsed(row, 0, from_str)?,
            ms: row.get(1)?,
        })
    })?;
    rows.collect()
}

/// The statement that reads the games matching `filter`, by number.
fn select_games(filter: &str) -> String {
    let columns = GAME_COLUMNS.join(", ");
    format!("SELECT {columns} FROM games WHERE {filter} ORDER BY id")
}

/// Games matching `filter` (SQL after `WHERE`, with `args`), by number, without
/// their moves.
fn games_where(
    conn: &Connection,
    filter: &str,
    args: &[&dyn rusqlite::ToSql],
) -> rusqlite::Result<Vec<GameRecord>> {
    let mut statement = conn.prepare(&select_games(filter))?;
    statement.query_map(args, game_from_row)?.collect()
}

/// Games matching `filter`, as [`games_where`], each row read on its own: a
/// row that does not read back is damaged and left out, not an error.
fn each_game_where(
    conn: &Connection,
    filter: &str,
) -> rusqlite::Result<(Vec<GameRecord>, Vec<Damaged>)> {
    let mut statement = conn.prepare(&select_games(filter))?;
    let mut rows = statement.query([])?;
    let (mut games, mut damaged) = (Vec::new(), Vec::new());
    while let Some(row) = rows.next()? {
        match game_from_row(row) {
            Ok(game) => games.push(game),
            Err(error) => damaged.push(Damaged {
                game: row.get(0)?,
                why: format!("its games row: {}", unreadable(&error, &GAME_COLUMNS)),
            }),
        }
    }
    Ok((games, damaged))
}

/// Whether a game's moves are in the log (open or in play) or in `moves`.
fn logged(status: Status) -> bool {
    matches!(status, Status::Open | Status::Playing)
}

/// One game with its moves, read in one transaction (a game that ends
/// meanwhile moves its moves from the log to `moves`); the moves of a game
/// open or in play are read from the log (for [`super::Archive`], which reads
/// a store without its writer).
pub fn game(conn: &Connection, id: GameId) -> rusqlite::Result<Option<GameRecord>> {
    game_with(conn, id, |snapshot| move_log::logged_moves_of(snapshot, id))
}

/// One game, with `in_play` giving the moves if it is open or in play.
pub fn game_with(
    conn: &Connection,
    id: GameId,
    in_play: impl FnOnce(&Connection) -> rusqlite::Result<Vec<StoredMove>>,
) -> rusqlite::Result<Option<GameRecord>> {
    let snapshot = conn.unchecked_transaction()?;
    let Some(mut game) = games_where(&snapshot, "id = ?1", &[&id])?
        .into_iter()
        .next()
    else {
        return Ok(None);
    };
    game.moves = if logged(game.status) {
        in_play(&snapshot)?
    } else {
        moves_of(&snapshot, id)?
    };
    Ok(Some(game))
}

/// The games in play, and those left out because their rows do not read
/// back.
#[derive(Debug, Default)]
pub struct InPlay {
    /// The games, with their moves.
    pub games: Vec<GameRecord>,
    /// The games in play left out.
    pub damaged: Vec<Damaged>,
}

/// The games being played (for recovery at start), with their moves from
/// `logged` (the moves of every game open or in play, by game). A game
/// whose row or logged moves do not read back is left out (in
/// [`InPlay::damaged`]): one damaged game does not keep the others from
/// being recovered.
pub fn playing(
    conn: &Connection,
    logged: impl FnOnce(&Connection) -> rusqlite::Result<Logged>,
) -> rusqlite::Result<InPlay> {
    let snapshot = conn.unchecked_transaction()?;
    let (mut games, mut damaged) = each_game_where(&snapshot, "status = 'playing'")?;
    let Logged {
        mut moves,
        damaged: unreadable_moves,
    } = logged(&snapshot)?;
    for unreadable in unreadable_moves {
        if let Some(at) = games.iter().position(|g| g.id == unreadable.game) {
            games.remove(at);
            damaged.push(unreadable);
        }
    }
    for game in &mut games {
        game.moves = moves.remove(&game.id).unwrap_or_default();
    }
    damaged.sort_by_key(|d| d.game);
    Ok(InPlay { games, damaged })
}

/// Finished games, optionally only those `player` sat in and those that ended
/// at or after `since` (a date or time in the stored form, compared as text).
pub fn finished(
    conn: &Connection,
    player: Option<&str>,
    since: Option<&str>,
    tourney: Option<TourneyId>,
) -> rusqlite::Result<Vec<GameRecord>> {
    let snapshot = conn.unchecked_transaction()?;
    let mut games = games_where(
        &snapshot,
        "status = 'over' AND (?1 IS NULL OR black = ?1 OR white = ?1) \
         AND (?2 IS NULL OR ended_at >= ?2) AND (?3 IS NULL OR tourney = ?3)",
        &[&player, &since, &tourney],
    )?;
    for game in &mut games {
        game.moves = moves_of(&snapshot, game.id)?;
    }
    Ok(games)
}

/// Games still open when the daemon stopped: their creators are gone with the
/// old connections, as after a disconnect, so they are to be cancelled.
pub fn open_games(conn: &Connection) -> rusqlite::Result<Vec<GameId>> {
    let mut statement = conn.prepare("SELECT id FROM games WHERE status = 'open' ORDER BY id")?;
    statement.query_map([], |r| r.get(0))?.collect()
}

/// The number the next game gets: one past the largest ever stored, or
/// reserved by an older build (which handed numbers out before their game
/// was stored, and may have given those).
pub fn next_game_id(conn: &Connection) -> rusqlite::Result<GameId> {
    let sql = "SELECT MAX((SELECT COALESCE(MAX(id), 0) FROM games), \
               (SELECT COALESCE(MAX(reserved), 0) FROM game_numbers))";
    let last: GameId = conn.query_row(sql, [], |r| r.get(0))?;
    Ok(last.saturating_add(1))
}

/// Every registered name, as registered, read one row at a time into the
/// daemon's set (which folds their case as the lookups here do): the set
/// is what answers a guest's `LOGIN`, so that it reads no store.
pub fn registered_names(conn: &Connection) -> rusqlite::Result<RegisteredNames> {
    let mut names = RegisteredNames::new();
    let mut statement = conn.prepare("SELECT name FROM players")?;
    let mut rows = statement.query([])?;
    while let Some(row) = rows.next()? {
        names.insert(row.get_ref(0)?.as_str()?);
    }
    Ok(names)
}

/// A registered name, found without regard to case: its spelling as
/// registered and its password hash. Of two spellings registered before
/// names were caseless, the exact one is found first.
pub fn registration(conn: &Connection, name: &str) -> rusqlite::Result<Option<Registration>> {
    let sql = "SELECT p.name, p.password_hash, p.bot, r.rating FROM players p \
               LEFT JOIN ratings r ON r.name = p.name COLLATE NOCASE AND r.variant = 'othello' \
               WHERE p.name = ?1 COLLATE NOCASE ORDER BY p.name = ?1 DESC LIMIT 1";
    conn.prepare_cached(sql)?
        .query_row(params![name], |r| {
            Ok(Registration {
                name: r.get(0)?,
                hash: r.get(1)?,
                bot: r.get::<_, i64>(2)? != 0,
                othello_rating: r.get(3)?,
            })
        })
        .optional()
}

/// A registered name as the store keeps it.
#[derive(Clone, Debug, PartialEq)]
pub struct Registration {
    /// The name as it was registered.
    pub name: String,
    /// Its password's argon2 hash, in PHC form.
    pub hash: String,
    /// Whether it is marked a program's (`ACCOUNT bot`).
    pub bot: bool,
    /// Its othello rating, once rated (what `WHO` shows).
    pub othello_rating: Option<f64>,
}
