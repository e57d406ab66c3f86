//! `flipd --copy-store-to URL`: a SQLite store copied into an empty
//! PostgreSQL database, then checked, so that an operator moves to
//! PostgreSQL without losing a name, a password hash, a game, a move, a
//! rating or a tournament.
//!
//! The file is locked as a daemon locks it (so flipd must be stopped) and
//! read in one snapshot; the database must be empty (a copy never merges
//! into a store in use), gets this build's tables, and is written in one
//! transaction: a copy that fails leaves it as empty as it was. Each
//! table is copied whole, column by column, a few thousand rows a
//! statement; the moves of games in play come from the file's move log.
//! The check then reads back, from the database, the number of rows of
//! every table and every game's moves, and compares them with the file's.

use std::collections::HashMap;
use std::fmt::Write as _;

use rusqlite::types::ValueRef;
use tokio_postgres::types::ToSql;

use super::db::Db;
use super::{describe, refuse, runtime, schema, writer_session};
use crate::config::StoreConfig;
use crate::store::{StoreError, StoredMove};

/// A column's type, as both stores keep it.
#[derive(Clone, Copy)]
enum Kind {
    Text,
    Int,
    Real,
    /// 0 or 1 in SQLite.
    Bool,
    /// ISO 8601 text in SQLite, `timestamptz` in PostgreSQL.
    Time,
}

/// A table copied as it is: its columns and the order its rows are read.
struct Table {
    name: &'static str,
    columns: &'static [(&'static str, Kind)],
    order: &'static str,
}

use Kind::{Bool, Int, Real, Text, Time};

/// Every table but `moves` (see [`copy_moves`]), parents first.
const TABLES: [Table; 8] = [
    Table {
        name: "players",
        columns: &[
            ("name", Text),
            ("password_hash", Text),
            ("created_at", Time),
            ("bot", Bool),
        ],
        order: "rowid",
    },
    Table {
        name: "games",
        columns: &[
            ("id", Int),
            ("variant", Text),
            ("black", Text),
            ("white", Text),
            ("clock", Text),
            ("status", Text),
            ("result", Text),
            ("black_score", Int),
            ("white_score", Int),
            ("reason", Text),
            ("started_at", Time),
            ("ended_at", Time),
            ("black_secret", Text),
            ("white_secret", Text),
            ("rated", Bool),
            ("tourney", Int),
            ("tourney_round", Int),
        ],
        order: "id",
    },
    Table {
        name: "ratings",
        columns: &[
            ("name", Text),
            ("variant", Text),
            ("rating", Real),
            ("rd", Real),
            ("volatility", Real),
            ("games", Int),
            ("rated_at", Time),
        ],
        order: "name, variant",
    },
    Table {
        name: "rating_changes",
        columns: &[
            ("game", Int),
            ("name", Text),
            ("before", Real),
            ("after", Real),
        ],
        order: "rowid",
    },
    Table {
        name: "tourneys",
        columns: &[
            ("id", Int),
            ("creator", Text),
            ("spec", Text),
            ("round", Int),
            ("over", Bool),
            ("winner", Text),
            ("created_at", Time),
            ("ended_at", Time),
        ],
        order: "id",
    },
    Table {
        name: "tourney_players",
        columns: &[("tourney", Int), ("seq", Int), ("name", Text)],
        order: "tourney, seq",
    },
    Table {
        name: "tourney_forfeits",
        columns: &[
            ("tourney", Int),
            ("round", Int),
            ("black", Text),
            ("white", Text),
            ("absent", Text),
        ],
        order: "rowid",
    },
    Table {
        name: "tourney_starts",
        columns: &[("tourney", Int), ("start_group", Int), ("moves", Text)],
        order: "tourney, start_group",
    },
];

/// Rows a statement carries.
const CHUNK: usize = 5000;

/// One column's values, as PostgreSQL takes an array of them.
enum Column {
    Text(Vec<Option<String>>),
    Int(Vec<Option<i64>>),
    Real(Vec<Option<f64>>),
    Bool(Vec<Option<bool>>),
}

impl Column {
    fn new(kind: Kind) -> Column {
        match kind {
            Text | Time => Column::Text(Vec::new()),
            Int => Column::Int(Vec::new()),
            Real => Column::Real(Vec::new()),
            Bool => Column::Bool(Vec::new()),
        }
    }

    fn push(&mut self, value: ValueRef<'_>) -> Result<(), String> {
        let null = matches!(value, ValueRef::Null);
        match self {
            Column::Text(values) => values.push(match value {
                ValueRef::Text(text) => Some(String::from_utf8_lossy(text).into_owned()),
                ValueRef::Null => None,
                other => return Err(format!("text expected, found {:?}", other.data_type())),
            }),
            Column::Int(values) => values.push(
                (!null)
                    .then(|| value.as_i64())
                    .transpose()
                    .map_err(|e| e.to_string())?,
            ),
            Column::Real(values) => values.push(
                (!null)
                    .then(|| value.as_f64())
                    .transpose()
                    .map_err(|e| e.to_string())?,
            ),
            Column::Bool(values) => values.push(
                (!null)
                    .then(|| value.as_i64().map(|v| v != 0))
                    .transpose()
                    .map_err(|e| e.to_string())?,
            ),
        }
        Ok(())
    }

    fn param(&self) -> &(dyn ToSql + Sync) {
        match self {
            Column::Text(values) => values,
            Column::Int(values) => values,
            Column::Real(values) => values,
            Column::Bool(values) => values,
        }
    }
}

fn array_type(kind: Kind) -> &'static str {
    match kind {
        Text | Time => "text[]",
        Int => "bigint[]",
        Real => "double precision[]",
        Bool => "boolean[]",
    }
}

/// `INSERT INTO t (a, b) SELECT u.a, u.b::timestamptz FROM unnest($1::text[], ...) AS u(a, b)`.
fn insert_sql(table: &Table) -> String {
    let names: Vec<&str> = table.columns.iter().map(|(name, _)| *name).collect();
    let mut select = Vec::new();
    let mut arrays = Vec::new();
    for (i, (name, kind)) in table.columns.iter().enumerate() {
        let cast = if matches!(kind, Time) {
            "::timestamptz"
        } else {
            ""
        };
        select.push(format!("u.{name}{cast}"));
        arrays.push(format!("${}::{}", i + 1, array_type(*kind)));
    }
    format!(
        "INSERT INTO {} ({}) SELECT {} FROM unnest({}) AS u({})",
        table.name,
        names.join(", "),
        select.join(", "),
        arrays.join(", "),
        names.join(", ")
    )
}

/// What was copied: rows by table.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Copied {
    pub rows: Vec<(&'static str, u64)>,
}

impl std::fmt::Display for Copied {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut text = String::new();
        for (table, rows) in &self.rows {
            let _ = write!(
                text,
                "{}{table} {rows}",
                if text.is_empty() { "" } else { ", " }
            );
        }
        f.write_str(&text)
    }
}

/// Copies the SQLite store of `config.path` into the empty database at
/// `config.url`, and checks the copy.
pub fn copy_store(config: &StoreConfig) -> Result<Copied, StoreError> {
    let path = config.path.as_path();
    let sqlite =
        |e: rusqlite::Error| crate::store::schema::refuse(path, crate::store::schema::describe(&e));
    let _lock = crate::store::lock::lock(path)?;
    let archive = crate::store::Archive::open(path)?;
    let conn = archive.connection()?;
    let snapshot = conn.unchecked_transaction().map_err(sqlite)?;
    let logged = crate::store::move_log::logged_moves(&snapshot).map_err(sqlite)?;
    if let Some(damaged) = logged.damaged.first() {
        return Err(crate::store::schema::refuse(
            path,
            format!(
                "game {} does not read back ({}): repair it first",
                damaged.game, damaged.why
            ),
        ));
    }
    let runtime = runtime(config)?;
    let copied = runtime.block_on(async {
        let mut db = writer_session::connect_writer(config, false, None).await?;
        schema::prepare_empty(db.client()).await?;
        let sql = |e: tokio_postgres::Error| describe(&e);
        db.batch("BEGIN").await.map_err(sql)?;
        let mut copied = Copied::default();
        for table in &TABLES {
            let rows = copy_table(&snapshot, &mut db, table).await?;
            copied.rows.push((table.name, rows));
            if table.name == "games" {
                let moves = copy_moves(&snapshot, &mut db, &logged.moves).await?;
                copied.rows.push(("moves", moves));
            }
        }
        db.batch("COMMIT").await.map_err(sql)?;
        check(&snapshot, &mut db, &logged.moves, &copied).await?;
        Ok::<_, String>(copied)
    });
    copied.map_err(|why| refuse(config, why))
}

/// Copies one table; its rows.
async fn copy_table(
    conn: &rusqlite::Connection,
    db: &mut Db,
    table: &Table,
) -> Result<u64, String> {
    let names: Vec<&str> = table.columns.iter().map(|(name, _)| *name).collect();
    let select = format!(
        "SELECT {} FROM {} ORDER BY {}",
        names.join(", "),
        table.name,
        table.order
    );
    let insert = insert_sql(table);
    let mut statement = conn
        .prepare(&select)
        .map_err(|e| format!("{}: {e}", table.name))?;
    let mut rows = statement
        .query([])
        .map_err(|e| format!("{}: {e}", table.name))?;
    let fresh = || {
        table
            .columns
            .iter()
            .map(|(_, kind)| Column::new(*kind))
            .collect::<Vec<_>>()
    };
    let (mut columns, mut pending, mut total) = (fresh(), 0, 0);
    while let Some(row) = rows.next().map_err(|e| format!("{}: {e}", table.name))? {
        for (i, column) in columns.iter_mut().enumerate() {
            let value = row.get_ref(i).map_err(|e| format!("{}: {e}", table.name))?;
            column
                .push(value)
                .map_err(|e| format!("{}.{}: {e}", table.name, names[i]))?;
        }
        pending += 1;
        if pending == CHUNK {
            total += insert_chunk(db, &insert, &columns).await?;
            (columns, pending) = (fresh(), 0);
        }
    }
    if pending > 0 {
        total += insert_chunk(db, &insert, &columns).await?;
    }
    Ok(total)
}

async fn insert_chunk(db: &mut Db, insert: &str, columns: &[Column]) -> Result<u64, String> {
    let params: Vec<&(dyn ToSql + Sync)> = columns.iter().map(Column::param).collect();
    db.client()
        .execute(insert, &params)
        .await
        .map_err(|e| describe(&e))
}

/// Every game's moves: from `moves` for games over, from the log for the
/// games open or in play; how many.
async fn copy_moves(
    conn: &rusqlite::Connection,
    db: &mut Db,
    logged: &HashMap<u64, Vec<StoredMove>>,
) -> Result<u64, String> {
    let table = Table {
        name: "moves",
        columns: &[("game", Int), ("ply", Int), ("move", Text), ("ms", Int)],
        order: "game, ply",
    };
    let mut total = copy_table(conn, db, &table).await?;
    let insert = insert_sql(&table);
    let mut games: Vec<&u64> = logged.keys().collect();
    games.sort_unstable();
    for game in games {
        let moves = &logged[game];
        let mut columns: Vec<Column> = table
            .columns
            .iter()
            .map(|(_, kind)| Column::new(*kind))
            .collect();
        for (ply, stored) in (1i64..).zip(moves) {
            let values = [
                ValueRef::Integer(i64::try_from(*game).unwrap_or(i64::MAX)),
                ValueRef::Integer(ply),
            ];
            columns[0].push(values[0])?;
            columns[1].push(values[1])?;
            let text = stored.mv.to_string();
            columns[2].push(ValueRef::Text(text.as_bytes()))?;
            let ms = stored.ms.map(|ms| i64::try_from(ms).unwrap_or(i64::MAX));
            columns[3].push(ms.map_or(ValueRef::Null, ValueRef::Integer))?;
        }
        total += insert_chunk(db, &insert, &columns).await?;
    }
    Ok(total)
}

/// Reads back every table's count and every game's moves from the
/// database and compares them with the file's.
async fn check(
    conn: &rusqlite::Connection,
    db: &mut Db,
    logged: &HashMap<u64, Vec<StoredMove>>,
    copied: &Copied,
) -> Result<(), String> {
    for (table, rows) in &copied.rows {
        let count = format!("SELECT count(*) FROM {table}");
        let found: i64 = db
            .client()
            .query_one(&count, &[])
            .await
            .map_err(|e| describe(&e))?
            .get(0);
        if u64::try_from(found).ok() != Some(*rows) {
            return Err(format!("the copy's {table} holds {found} rows, not {rows}"));
        }
    }
    let in_file = transcripts_in_file(conn, logged).map_err(|e| e.to_string())?;
    let rows = db
        .client()
        .query(
            "SELECT game, string_agg(move, ' ' ORDER BY ply) FROM moves GROUP BY game",
            &[],
        )
        .await
        .map_err(|e| describe(&e))?;
    let in_database: HashMap<u64, String> = rows
        .iter()
        .map(|r| (u64::try_from(r.get::<_, i64>(0)).unwrap_or(0), r.get(1)))
        .collect();
    match in_file == in_database {
        true => Ok(()),
        false => Err("the copy's moves differ from the file's".into()),
    }
}

fn transcripts_in_file(
    conn: &rusqlite::Connection,
    logged: &HashMap<u64, Vec<StoredMove>>,
) -> rusqlite::Result<HashMap<u64, String>> {
    let mut games: HashMap<u64, String> = HashMap::new();
    let mut statement = conn.prepare("SELECT game, move FROM moves ORDER BY game, ply")?;
    let mut rows = statement.query([])?;
    while let Some(row) = rows.next()? {
        let entry = games.entry(row.get(0)?).or_default();
        if !entry.is_empty() {
            entry.push(' ');
        }
        entry.push_str(row.get_ref(1)?.as_str()?);
    }
    for (game, moves) in logged {
        let text: Vec<String> = moves.iter().map(|m| m.mv.to_string()).collect();
        if !text.is_empty() {
            games.insert(*game, text.join(" "));
        }
    }
    Ok(games)
}
