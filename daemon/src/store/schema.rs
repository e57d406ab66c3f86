//! The store's file: what makes it flipline's, the migrations that build its
//! tables, and the checks made before the daemon trusts it.
//!
//! A file is flipline's store when its SQLite header carries [`APPLICATION_ID`];
//! its `user_version` is the number of migrations applied. A new (empty) file is
//! set up; any other file — not SQLite, damaged, another program's database, or a
//! newer flipline's — is refused with an error naming it, never reset.

pub use super::sql_error::describe;
use std::path::Path;

use rusqlite::Connection;

use super::StoreError;
use crate::config::{StoreConfig, Synchronous};

/// "FLIP" in the SQLite header's application id field.
pub const APPLICATION_ID: i32 = 0x464C_4950;

/// The schema, one migration per version: `MIGRATIONS[n]` takes a file from
/// version `n` to `n + 1`. Plain tables, so that `sqlite3 data/flipline.db`
/// answers an operator's questions; times are UTC in ISO 8601.
const MIGRATIONS: [&str; 6] = [
    r"
CREATE TABLE players (
    name          TEXT PRIMARY KEY,   -- the login name
    password_hash TEXT NOT NULL,      -- argon2id in PHC form; never the password
    created_at    TEXT NOT NULL       -- when the name was registered
);
CREATE TABLE games (
    id          INTEGER PRIMARY KEY,  -- the game number of the protocol
    variant     TEXT NOT NULL,        -- othello, reversi, freeplace, anti, ...
    black       TEXT,                 -- a name, bot:N, or NULL while open
    white       TEXT,
    clock       TEXT,                 -- M+S, or NULL for no clock
    status      TEXT NOT NULL
                CHECK (status IN ('open', 'playing', 'over', 'cancelled')),
    result      TEXT CHECK (result IN ('X', 'O', 'draw')),   -- the winner
    black_score INTEGER,
    white_score INTEGER,
    reason      TEXT CHECK (reason IN ('normal', 'resign', 'time', 'abandon')),
    started_at  TEXT NOT NULL,
    ended_at    TEXT
);
CREATE INDEX games_by_status ON games (status);
CREATE TABLE moves (
    game INTEGER NOT NULL REFERENCES games (id),
    ply  INTEGER NOT NULL CHECK (ply >= 1),  -- 1 for the first move; passes count
    move TEXT NOT NULL,                      -- a square (f5) or pass
    ms   INTEGER,                            -- milliseconds the mover took;
                                             -- NULL for moves given by NEW ... from
    PRIMARY KEY (game, ply)
) WITHOUT ROWID;
",
    // 2: the moves of games open or in play are kept in `move_log`, in the
    // order played, and go into `moves` when their game ends (see
    // store/move_log.rs for why).
    r"
CREATE TABLE move_log (
    seq  INTEGER PRIMARY KEY,   -- order of writing; a ply logged again wins
    game INTEGER NOT NULL,      -- a game open or in play
    ply  INTEGER NOT NULL,
    move TEXT NOT NULL,
    ms   INTEGER
);
INSERT INTO move_log (game, ply, move, ms)
    SELECT game, ply, move, ms FROM moves
    WHERE game IN (SELECT id FROM games WHERE status IN ('open', 'playing'))
    ORDER BY game, ply;
DELETE FROM moves WHERE game IN (SELECT id FROM games WHERE status IN ('open', 'playing'));
",
    // 3: builds that answered before a game's creation was committed
    // reserved numbers here ahead of use, so that a start never hands out a
    // number a killed daemon may already have given. Builds that answer
    // after the commit only read it, to number past what those reserved.
    r"
CREATE TABLE game_numbers (
    id       INTEGER PRIMARY KEY CHECK (id = 1),  -- one row
    reserved INTEGER NOT NULL   -- every game number up to this one may be in use
);
INSERT INTO game_numbers (id, reserved) SELECT 1, COALESCE(MAX(id), 0) FROM games;
",
    // 4: names are one name whatever their case (`Vic` is `vic`): looked up
    // and kept unique without regard to it. Not a UNIQUE index: a file from
    // before may hold two spellings, which keep working (each finds itself
    // first); no new one is added. And a guest's secret is kept with its
    // seat while the game is in play, so that after a restart too only the
    // guest takes the seat back.
    r"
CREATE INDEX players_by_folded_name ON players (name COLLATE NOCASE);
ALTER TABLE games ADD COLUMN black_secret TEXT;  -- a guest's secret, in play only
ALTER TABLE games ADD COLUMN white_secret TEXT;
",
    // 5: rated games and their ratings (Glicko-2, one per registered name
    // and variant, changed in the transaction that stores a rated game's
    // end, and recomputable from the rated games alone), and names marked
    // as programs'.
    r"
ALTER TABLE players ADD COLUMN bot INTEGER NOT NULL DEFAULT 0;  -- ACCOUNT bot
ALTER TABLE games ADD COLUMN rated INTEGER NOT NULL DEFAULT 0;  -- counts for the ratings
CREATE TABLE ratings (
    name       TEXT NOT NULL COLLATE NOCASE,  -- a registered name
    variant    TEXT NOT NULL,
    rating     REAL NOT NULL,                 -- Glicko scale: 1500 to start
    rd         REAL NOT NULL,                 -- its deviation: 350 to start
    volatility REAL NOT NULL,                 -- 0.06 to start
    games      INTEGER NOT NULL,              -- rated games played
    rated_at   TEXT NOT NULL,                 -- the end of the last of them
    PRIMARY KEY (name, variant)
) WITHOUT ROWID;
CREATE TABLE rating_changes (
    game   INTEGER NOT NULL REFERENCES games (id),
    name   TEXT NOT NULL,
    before REAL NOT NULL,   -- the rating before the game
    after  REAL NOT NULL,   -- and after it
    PRIMARY KEY (game, name)
);
",
    // 6: tournaments. Only facts are kept: who joined, which rounds began,
    // which games were made for them (in the game's own row, written with
    // it) and which were lost by abandon before a move; the pairings follow
    // from those again (`rules::tourney::Tourney::resume`).
    r"
CREATE TABLE tourneys (
    id         INTEGER PRIMARY KEY,
    creator    TEXT NOT NULL,
    spec       TEXT NOT NULL,                 -- as TOURNEY NEW takes it
    round      INTEGER NOT NULL DEFAULT 0,    -- rounds begun; 0: open
    over       INTEGER NOT NULL DEFAULT 0,
    winner     TEXT,                          -- once over; NULL for a tie
    created_at TEXT NOT NULL,
    ended_at   TEXT
);
CREATE TABLE tourney_players (
    tourney INTEGER NOT NULL REFERENCES tourneys (id),
    seq     INTEGER NOT NULL,                 -- the order of joining
    name    TEXT NOT NULL,
    PRIMARY KEY (tourney, seq)
);
CREATE TABLE tourney_forfeits (
    tourney INTEGER NOT NULL REFERENCES tourneys (id),
    round   INTEGER NOT NULL,
    black   TEXT NOT NULL,
    white   TEXT NOT NULL,
    absent  TEXT NOT NULL,                    -- X, O or both
    PRIMARY KEY (tourney, round, black, white)
);
CREATE TABLE tourney_starts (
    tourney     INTEGER NOT NULL REFERENCES tourneys (id),
    start_group INTEGER NOT NULL,             -- the games that share it
    moves       TEXT NOT NULL,
    PRIMARY KEY (tourney, start_group)
);
ALTER TABLE games ADD COLUMN tourney INTEGER;        -- made for this tournament
ALTER TABLE games ADD COLUMN tourney_round INTEGER;  -- in this round of it
CREATE INDEX games_by_tourney ON games (tourney) WHERE tourney IS NOT NULL;
",
];

/// The first version's tables, to test upgrades from it.
#[cfg(test)]
pub fn first_schema() -> &'static str {
    MIGRATIONS[0]
}

/// The schema version this build writes.
pub const SCHEMA_VERSION: i32 = MIGRATIONS.len() as i32;

/// The SQL expression for the current time as the store writes it.
pub const NOW: &str = "strftime('%Y-%m-%dT%H:%M:%SZ', 'now')";

/// What a file's header says it is.
struct Identity {
    application_id: i32,
    version: i32,
    objects: i64,
}

fn identify(conn: &Connection) -> rusqlite::Result<Identity> {
    Ok(Identity {
        application_id: conn.pragma_query_value(None, "application_id", |r| r.get(0))?,
        version: conn.pragma_query_value(None, "user_version", |r| r.get(0))?,
        objects: conn.query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get(0))?,
    })
}

/// An error about the file at `path`.
pub fn refuse(path: &Path, why: impl Into<String>) -> StoreError {
    StoreError::Open {
        path: path.to_path_buf(),
        why: why.into(),
    }
}

/// Checks that `conn` is flipline's store (or a new file), sets it up for the
/// writer (WAL and its checkpoints, `synchronous`, foreign keys, its page
/// cache) and brings its schema up to date.
pub fn prepare_writer(conn: &mut Connection, config: &StoreConfig) -> Result<(), StoreError> {
    let path = config.path.as_path();
    let sql = |e: rusqlite::Error| refuse(path, describe(&e));
    let identity = identify(conn).map_err(sql)?;
    let fresh = identity.application_id == 0 && identity.version == 0 && identity.objects == 0;
    if !fresh {
        check_identity(&identity, path, false)?;
        check_integrity(conn, path)?;
    }
    let mode: String = conn
        .pragma_update_and_check(None, "journal_mode", "wal", |r| r.get(0))
        .map_err(sql)?;
    if !mode.eq_ignore_ascii_case("wal") {
        return Err(refuse(path, format!("cannot use WAL mode (got {mode})")));
    }
    set_synchronous(conn, config.synchronous).map_err(sql)?;
    conn.pragma_update(None, "foreign_keys", "ON")
        .map_err(sql)?;
    super::checkpoint::bound_wal(conn).map_err(sql)?;
    set_cache(conn, config.cache_mb).map_err(sql)?;
    migrate(conn, identity.version).map_err(sql)
}

/// Sets how the connection syncs: every connection that writes the file (the
/// writer, the checkpoints beside it) syncs it alike.
pub fn set_synchronous(conn: &Connection, level: Synchronous) -> rusqlite::Result<()> {
    let level = match level {
        Synchronous::Full => "FULL",
        Synchronous::Normal => "NORMAL",
    };
    conn.pragma_update(None, "synchronous", level)
}

/// Sets the connection's page cache to `mb` MiB (SQLite takes a negative size
/// as KiB).
pub fn set_cache(conn: &Connection, mb: u32) -> rusqlite::Result<()> {
    conn.pragma_update(None, "cache_size", -(i64::from(mb) * 1024))
}

/// Checks, for a reader that must not change the file, that it is flipline's
/// store at exactly this build's schema version.
pub fn check_reader(conn: &Connection, path: &Path) -> Result<(), StoreError> {
    let identity = identify(conn).map_err(|e| refuse(path, describe(&e)))?;
    check_identity(&identity, path, true)
}

fn check_identity(identity: &Identity, path: &Path, exact: bool) -> Result<(), StoreError> {
    if identity.application_id != APPLICATION_ID {
        return Err(refuse(
            path,
            format!(
                "not a flipline store: a SQLite database of another program \
                 (application id {:#x}, {} tables and indexes)",
                identity.application_id, identity.objects
            ),
        ));
    }
    if identity.version > SCHEMA_VERSION {
        return Err(refuse(
            path,
            format!(
                "written by a newer flipd (schema version {}, this one knows up to {})",
                identity.version, SCHEMA_VERSION
            ),
        ));
    }
    if exact && identity.version < SCHEMA_VERSION {
        return Err(refuse(
            path,
            format!(
                "written by an older flipd (schema version {}): start this flipd on it once to upgrade it",
                identity.version
            ),
        ));
    }
    Ok(())
}

/// `PRAGMA quick_check`: a damaged file is refused at start rather than found
/// out in the middle of a game.
fn check_integrity(conn: &Connection, path: &Path) -> Result<(), StoreError> {
    let verdict: String = conn
        .query_row("PRAGMA quick_check(1)", [], |r| r.get(0))
        .map_err(|e| refuse(path, describe(&e)))?;
    if verdict == "ok" {
        Ok(())
    } else {
        Err(refuse(path, format!("the database is damaged: {verdict}")))
    }
}

/// Applies the migrations after `from`, each in its own transaction with its
/// version number, so a crash mid-way leaves a file at a known version.
fn migrate(conn: &mut Connection, from: i32) -> rusqlite::Result<()> {
    let start = usize::try_from(from).unwrap_or(0);
    for (index, sql) in MIGRATIONS.iter().enumerate().skip(start) {
        let tx = conn.transaction()?;
        tx.pragma_update(None, "application_id", APPLICATION_ID)?;
        tx.execute_batch(sql)?;
        tx.pragma_update(None, "user_version", index + 1)?;
        tx.commit()?;
    }
    Ok(())
}
