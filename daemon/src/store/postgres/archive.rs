//! A PostgreSQL store read without a daemon (`flip export --db postgres://...`):
//! checked like the daemon's, never migrated; each read in one snapshot.

use std::collections::HashMap;

use flipline::protocol::{GameId, TourneyId};
use tokio::runtime::Runtime;

use super::db::Db;
use super::games::{game_from_row, game_select, stored_move};
use super::{describe, to_i64};
use crate::config::{StoreConfig, StoreUrl};
use crate::store::{GameRecord, StoreError, StoredMove};

/// A connection for reading, on a runtime of its own.
pub struct PgArchive {
    runtime: Runtime,
    db: Db,
}

fn refused(url: &StoreUrl, why: impl Into<String>) -> StoreError {
    StoreError::Database {
        url: url.redacted(),
        why: why.into(),
    }
}

impl PgArchive {
    /// Connects to the store at `url` and checks it is flipline's, at this
    /// build's version.
    pub fn open(url: &str) -> Result<PgArchive, StoreError> {
        let url = StoreUrl::new(url);
        let mut config = crate::config::Config::declared().store;
        config.url = url.clone();
        let runtime = super::runtime(&config)?;
        let db = runtime
            .block_on(connect_reader(&config))
            .map_err(|why| refused(&url, why))?;
        Ok(PgArchive { runtime, db })
    }

    /// Finished games, by number, as [`crate::store::Archive::finished_games`].
    pub fn finished_games(
        &mut self,
        player: Option<&str>,
        since: Option<&str>,
        tourney: Option<TourneyId>,
    ) -> Result<Vec<GameRecord>, StoreError> {
        const SQL: &str = game_select!(
            "status = 'over' AND ($1::text IS NULL OR black = $1 OR white = $1) \
             AND ($2::text IS NULL OR ended_at >= $2::timestamptz) \
             AND ($3::bigint IS NULL OR tourney = $3) ORDER BY id"
        );
        let tourney = tourney.map(to_i64);
        let db = &mut self.db;
        let read = self.runtime.block_on(snapshot(db, async |db: &mut Db| {
            let rows = db
                .query(SQL, &[&player, &since, &tourney])
                .await
                .map_err(|e| describe(&e))?;
            let mut games = rows
                .iter()
                .map(game_from_row)
                .collect::<Result<Vec<_>, _>>()?;
            let ids: Vec<i64> = games.iter().map(|g| to_i64(g.id)).collect();
            let mut moves = moves_of_games(db, &ids).await?;
            for game in &mut games {
                game.moves = moves.remove(&game.id).unwrap_or_default();
            }
            Ok(games)
        }));
        read.map_err(StoreError::Failed)
    }

    /// One game, in whatever state (its moves as stored).
    pub fn game(&mut self, id: GameId) -> Result<Option<GameRecord>, StoreError> {
        let db = &mut self.db;
        let read = self.runtime.block_on(super::games::game(db, id, None));
        read.map_err(StoreError::Failed)
    }

    /// Games being played, by number.
    pub fn playing_games(&mut self) -> Result<Vec<GameRecord>, StoreError> {
        const SQL: &str = game_select!("status = 'playing' ORDER BY id");
        let db = &mut self.db;
        let read = self.runtime.block_on(snapshot(db, async |db: &mut Db| {
            let rows = db.query(SQL, &[]).await.map_err(|e| describe(&e))?;
            let mut games = Vec::new();
            for row in &rows {
                // As the daemon does, a game that does not read back is left out.
                if let Ok(mut game) = game_from_row(row) {
                    game.moves = super::games::moves_of(db, game.id).await?;
                    games.push(game);
                }
            }
            Ok(games)
        }));
        read.map_err(StoreError::Failed)
    }
}

/// A reading connection to a flipline store of this build's version.
async fn connect_reader(config: &StoreConfig) -> Result<Db, String> {
    let db = Db::new(super::connect::connect(config).await?);
    super::schema::check_reader(&db).await?;
    Ok(db)
}

/// Runs `read` in one read-only snapshot.
async fn snapshot<T>(
    db: &mut Db,
    read: impl AsyncFnOnce(&mut Db) -> Result<T, String>,
) -> Result<T, String> {
    db.batch("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
        .await
        .map_err(|e| describe(&e))?;
    let result = read(db).await;
    let end = db.batch("COMMIT").await.map_err(|e| describe(&e));
    let value = result?;
    end?;
    Ok(value)
}

/// The moves of `games`, by game.
async fn moves_of_games(
    db: &mut Db,
    games: &[i64],
) -> Result<HashMap<GameId, Vec<StoredMove>>, String> {
    const SQL: &str =
        "SELECT ply, move, ms, game FROM moves WHERE game = ANY($1) ORDER BY game, ply";
    let rows = db.query(SQL, &[&games]).await.map_err(|e| describe(&e))?;
    let mut moves: HashMap<GameId, Vec<StoredMove>> = HashMap::new();
    for row in &rows {
        let game = u64::try_from(row.get::<_, i64>(3)).unwrap_or(0);
        moves.entry(game).or_default().push(stored_move(row)?);
    }
    Ok(moves)
}
