//! The PostgreSQL store's tables: what makes a database flipline's, the
//! migrations that build its tables, and the checks made before the daemon
//! trusts it.
//!
//! A database is flipline's store when it holds `flipline_schema`, whose one
//! row names the application and the number of migrations applied. An empty
//! database (no tables in its schema) is set up; one holding other tables,
//! or a newer flipline's, is refused with an error and left as it is. The
//! migrations run in one transaction each, under an advisory lock, so that
//! two daemons starting at once cannot both apply one.

use tokio_postgres::Client;

use super::db::Db;

/// The schema, one migration per version: `MIGRATIONS[n]` takes a database
/// from version `n` to `n + 1`. The tables are those of the SQLite store, in
/// PostgreSQL's types: times are `timestamptz`, flags `boolean`, names are
/// unique without regard to case (an index on `lower(name)`).
const MIGRATIONS: [&str; 6] = [
    r"
CREATE TABLE flipline_schema (
    application text NOT NULL CHECK (application = 'flipline'),
    version     integer NOT NULL
);
CREATE TABLE players (
    name          text PRIMARY KEY,          -- the login name, as registered
    password_hash text NOT NULL,             -- argon2id in PHC form; never the password
    created_at    timestamptz NOT NULL,
    bot           boolean NOT NULL DEFAULT false  -- ACCOUNT bot
);
CREATE UNIQUE INDEX players_by_folded_name ON players (lower(name));
CREATE TABLE games (
    id            bigint PRIMARY KEY,        -- the game number of the protocol
    variant       text NOT NULL,
    black         text,                      -- a name, bot:N, or NULL while open
    white         text,
    clock         text,                      -- M+S, or NULL for no clock
    status        text NOT NULL CHECK (status IN ('open', 'playing', 'over', 'cancelled')),
    result        text CHECK (result IN ('X', 'O', 'draw')),
    black_score   integer,
    white_score   integer,
    reason        text CHECK (reason IN ('normal', 'resign', 'time', 'abandon')),
    started_at    timestamptz NOT NULL,
    ended_at      timestamptz,
    black_secret  text,                      -- a guest's secret, in play only
    white_secret  text,
    rated         boolean NOT NULL DEFAULT false,
    tourney       bigint,                    -- made for this tournament
    tourney_round integer                    -- in this round of it
);
CREATE INDEX games_in_play ON games (status) WHERE status IN ('open', 'playing');
CREATE INDEX games_by_tourney ON games (tourney) WHERE tourney IS NOT NULL;
CREATE INDEX games_by_end ON games (ended_at, id) WHERE status = 'over';
CREATE TABLE moves (
    game bigint NOT NULL REFERENCES games (id),
    ply  integer NOT NULL CHECK (ply >= 1),  -- 1 for the first move; passes count
    move text NOT NULL,                      -- a square (f5) or pass
    ms   bigint,                             -- NULL for moves given by NEW ... from
    PRIMARY KEY (game, ply)
);
CREATE TABLE ratings (
    name       text NOT NULL,                -- a registered name
    variant    text NOT NULL,
    rating     double precision NOT NULL,
    rd         double precision NOT NULL,
    volatility double precision NOT NULL,
    games      integer NOT NULL,
    rated_at   timestamptz NOT NULL          -- the end of the last rated game
);
CREATE UNIQUE INDEX ratings_by_folded_name ON ratings (lower(name), variant);
CREATE SEQUENCE rating_change_order;
CREATE TABLE rating_changes (
    game   bigint NOT NULL REFERENCES games (id),
    name   text NOT NULL,
    before double precision NOT NULL,
    after  double precision NOT NULL,
    seq    bigint NOT NULL DEFAULT nextval('rating_change_order'),
    PRIMARY KEY (game, name)
);
CREATE TABLE tourneys (
    id         bigint PRIMARY KEY,
    creator    text NOT NULL,
    spec       text NOT NULL,                -- as TOURNEY NEW takes it
    round      integer NOT NULL DEFAULT 0,   -- rounds begun; 0: open
    over       boolean NOT NULL DEFAULT false,
    winner     text,
    created_at timestamptz NOT NULL,
    ended_at   timestamptz
);
CREATE TABLE tourney_players (
    tourney bigint NOT NULL REFERENCES tourneys (id),
    seq     integer NOT NULL,                -- the order of joining
    name    text NOT NULL,
    PRIMARY KEY (tourney, seq)
);
CREATE SEQUENCE tourney_forfeit_order;
CREATE TABLE tourney_forfeits (
    tourney bigint NOT NULL REFERENCES tourneys (id),
    round   integer NOT NULL,
    black   text NOT NULL,
    white   text NOT NULL,
    absent  text NOT NULL,                   -- X, O or both
    seq     bigint NOT NULL DEFAULT nextval('tourney_forfeit_order'),
    PRIMARY KEY (tourney, round, black, white)
);
CREATE TABLE tourney_starts (
    tourney     bigint NOT NULL REFERENCES tourneys (id),
    start_group integer NOT NULL,
    moves       text NOT NULL,
    PRIMARY KEY (tourney, start_group)
);
-- The last batch each writer committed: a commit whose answer was lost
-- with its connection is known to have happened, or not, by this row.
CREATE TABLE writer_commits (
    writer text PRIMARY KEY,
    run    bigint NOT NULL,                  -- the writer's start
    batch  bigint NOT NULL                   -- its last batch committed
);
INSERT INTO flipline_schema (application, version) VALUES ('flipline', 0);
",
    r"
-- The nodes of a cluster, one row per start of a node (an incarnation).
-- A live node renews its lease every second; the lease is judged by the
-- database's clock, never a node's. A node whose lease passed is declared
-- dead by another (state 'dead'), whose games the live nodes then take.
CREATE SEQUENCE node_incarnations;
CREATE TABLE nodes (
    incarnation bigint PRIMARY KEY,
    node        text NOT NULL,
    started_at  timestamptz NOT NULL,
    lease_until timestamptz NOT NULL,
    state       text NOT NULL CHECK (state IN ('live', 'dead'))
);
CREATE UNIQUE INDEX nodes_one_live_each ON nodes (node) WHERE state = 'live';
-- The incarnation that owns a game open or in play; NULL for a single
-- daemon's. Every write of a clustered game is conditional on it.
ALTER TABLE games ADD COLUMN owner bigint REFERENCES nodes (incarnation);
CREATE INDEX games_by_owner ON games (owner) WHERE status IN ('open', 'playing');
-- Where the next block of game numbers starts: a cluster's nodes each take
-- blocks of it and number their games from their own block.
CREATE TABLE number_blocks (
    kind text PRIMARY KEY CHECK (kind IN ('game', 'tourney')),
    next bigint NOT NULL
);
INSERT INTO number_blocks (kind, next) VALUES ('game', 1), ('tourney', 1);
-- The cluster's number, drawn once: its nodes' subjects on NATS carry it,
-- so that two clusters sharing a NATS server never hear each other.
CREATE TABLE cluster_identity (id text NOT NULL);
INSERT INTO cluster_identity (id) SELECT md5(random()::text || clock_timestamp()::text);
",
    r"
-- The names logged in on a cluster's nodes: one connection holds a name
-- in the whole cluster, as on one daemon. A row of a node that is dead, or
-- whose lease passed (it acknowledges nothing then), no longer holds its
-- name: another node's login takes the row over.
CREATE TABLE names_online (
    folded      text PRIMARY KEY,            -- lower(name)
    name        text NOT NULL,               -- as the lobby spells it
    incarnation bigint NOT NULL REFERENCES nodes (incarnation),
    since       timestamptz NOT NULL
);
CREATE INDEX names_online_by_node ON names_online (incarnation);
-- A login finds the seat its name keeps in a game in play on another node.
CREATE INDEX games_playing_by_black ON games (lower(black)) WHERE status = 'playing';
CREATE INDEX games_playing_by_white ON games (lower(white)) WHERE status = 'playing';
",
    r"
-- The lobby's leader: the one node that pairs every node's seeks. A node
-- takes the row over only once its holder is no longer live by its lease,
-- and each taking bumps the epoch, which the leader's orders carry: a
-- node ignores orders of an epoch older than the one it has read.
CREATE TABLE leaders (
    role        text PRIMARY KEY CHECK (role IN ('lobby')),
    incarnation bigint NOT NULL REFERENCES nodes (incarnation),
    epoch       bigint NOT NULL
);
",
    r"
-- The incarnation that runs a tournament; NULL for a single daemon's.
-- Every later write of a clustered tournament is conditional on it, and
-- the live nodes take over those of a node declared dead, as its games.
ALTER TABLE tourneys ADD COLUMN owner bigint REFERENCES nodes (incarnation);
CREATE INDEX tourneys_running_by_owner ON tourneys (owner) WHERE NOT over;
",
    r"
-- Each node's link to the cluster's bus (NATS) as its last renewal
-- reported it: up or down (NULL: no bus), and since when by the
-- database's clock. A node cut off from the bus while others hear each
-- other lets its lease pass; a leader cut off loses the lobby's lead.
ALTER TABLE nodes ADD COLUMN bus_up boolean;
ALTER TABLE nodes ADD COLUMN bus_changed timestamptz;
",
];

/// The schema version this build writes.
pub const SCHEMA_VERSION: i32 = MIGRATIONS.len() as i32;

/// The advisory lock key under which migrations run ("FLIP" and 1).
const MIGRATION_LOCK: i64 = 0x464C_4950_0000_0001;

/// What the database holds before it is trusted.
#[derive(Debug, PartialEq, Eq)]
enum Found {
    /// No table at all in its schema: set it up.
    Empty,
    /// flipline's store at this version.
    Flipline(i32),
    /// Tables of another program.
    Foreign(i64),
}

async fn identify(client: &Client) -> Result<Found, String> {
    let tables: i64 = client
        .query_one(
            "SELECT count(*) FROM pg_catalog.pg_tables WHERE schemaname = current_schema()",
            &[],
        )
        .await
        .map_err(|e| super::describe(&e))?
        .get(0);
    if tables == 0 {
        return Ok(Found::Empty);
    }
    let ours = client
        .query_opt(
            "SELECT 1 FROM pg_catalog.pg_tables WHERE schemaname = current_schema() \
             AND tablename = 'flipline_schema'",
            &[],
        )
        .await
        .map_err(|e| super::describe(&e))?;
    if ours.is_none() {
        return Ok(Found::Foreign(tables));
    }
    let row = client
        .query_opt(
            "SELECT application, version FROM flipline_schema LIMIT 1",
            &[],
        )
        .await
        .map_err(|e| super::describe(&e))?;
    match row {
        Some(row) if row.get::<_, String>(0) == "flipline" => Ok(Found::Flipline(row.get(1))),
        _ => Ok(Found::Foreign(tables)),
    }
}

/// Checks that the database is flipline's store (or empty) and brings its
/// schema up to date; the error says why not, in words.
pub async fn prepare(client: &mut Client) -> Result<(), String> {
    client
        .query_one("SELECT pg_advisory_lock($1)", &[&MIGRATION_LOCK])
        .await
        .map_err(|e| super::describe(&e))?;
    let result = migrate_if_ours(client).await;
    let unlock = client
        .query_one("SELECT pg_advisory_unlock($1)", &[&MIGRATION_LOCK])
        .await;
    result?;
    unlock.map(|_| ()).map_err(|e| super::describe(&e))
}

/// Sets up an empty database (refusing any other) for a copy of a store.
pub async fn prepare_empty(client: &mut Client) -> Result<(), String> {
    match identify(client).await? {
        Found::Empty => prepare(client).await,
        Found::Flipline(_) => Err("the database already holds a flipline store: a copy goes \
             into an empty database only, never over a store"
            .into()),
        Found::Foreign(tables) => Err(format!(
            "the database holds {tables} tables of another program: a copy goes into an \
             empty database only"
        )),
    }
}

async fn migrate_if_ours(client: &mut Client) -> Result<(), String> {
    let from = match identify(client).await? {
        Found::Empty => 0,
        Found::Flipline(version) if version > SCHEMA_VERSION => {
            return Err(format!(
                "written by a newer flipd (schema version {version}, this one knows up to \
                 {SCHEMA_VERSION})"
            ));
        }
        Found::Flipline(version) => version,
        Found::Foreign(tables) => {
            return Err(format!(
                "not a flipline store: the database holds {tables} tables of another \
                 program (give flipd a database of its own)"
            ));
        }
    };
    migrate(client, from).await.map_err(|e| super::describe(&e))
}

/// Checks, for a reader that must not change the database, that it is
/// flipline's store at exactly this build's version.
pub async fn check_reader(db: &Db) -> Result<(), String> {
    match identify(db.reader()).await? {
        Found::Flipline(version) if version == SCHEMA_VERSION => Ok(()),
        Found::Flipline(version) if version > SCHEMA_VERSION => Err(format!(
            "written by a newer flipd (schema version {version}, this one knows up to \
             {SCHEMA_VERSION})"
        )),
        Found::Flipline(version) => Err(format!(
            "written by an older flipd (schema version {version}): start this flipd on it \
             once to upgrade it"
        )),
        Found::Empty => Err("not a flipline store: the database is empty".into()),
        Found::Foreign(tables) => Err(format!(
            "not a flipline store: the database holds {tables} tables of another program"
        )),
    }
}

/// Applies the migrations after `from`, each in its own transaction with its
/// version number, so that a failure leaves the database at a known version.
async fn migrate(client: &mut Client, from: i32) -> Result<(), tokio_postgres::Error> {
    let start = usize::try_from(from).unwrap_or(0);
    for (index, sql) in MIGRATIONS.iter().enumerate().skip(start) {
        let tx = client.transaction().await?;
        tx.batch_execute(sql).await?;
        let version = i32::try_from(index + 1).unwrap_or(i32::MAX);
        tx.execute("UPDATE flipline_schema SET version = $1", &[&version])
            .await?;
        tx.commit().await?;
    }
    Ok(())
}
