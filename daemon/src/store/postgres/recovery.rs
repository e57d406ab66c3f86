//! What a start reads from PostgreSQL before the daemon serves anyone: the
//! games left open cancelled (their creators left with the old
//! connections), the games in play with their moves, the numbers for the
//! next game and tournament, the tournaments, the registered names.

use std::collections::HashMap;

use flipline::Move;
use flipline::protocol::{GameId, TourneyId};

use super::db::Db;
use super::games::{game_from_row, game_select};
use super::{describe, tourneys};
use crate::rules::registered::RegisteredNames;
use crate::store::{GameRecord, StoredMove, StoredTourney};

/// What a start needs.
pub struct Recovered {
    pub playing: Vec<GameRecord>,
    pub next_game: GameId,
    /// A cluster node's first block of game numbers.
    pub game_block: Option<std::ops::Range<GameId>>,
    pub tourneys: Vec<StoredTourney>,
    pub next_tourney: TourneyId,
    pub registered: RegisteredNames,
    /// A cluster node's membership.
    pub joined: Option<super::Joined>,
}

/// Reads it all, cancelling the games left open first.
pub async fn recover(db: &mut Db) -> Result<Recovered, String> {
    cancel_open_games(db).await?;
    let playing = games_in_play(db).await?;
    let next_game = next_game(db).await?;
    let tourneys = tourneys::load(db).await.map_err(|e| describe(&e))?;
    let next_tourney = tourneys::next_id(db).await.map_err(|e| describe(&e))?;
    let registered = super::games::registered_names(db)
        .await
        .map_err(|e| describe(&e))?;
    Ok(Recovered {
        playing,
        next_game,
        game_block: None,
        tourneys,
        next_tourney,
        registered,
        joined: None,
    })
}

/// What a cluster node reads at start: it joins (a new incarnation), takes
/// a block of game numbers and one of tournament numbers. Its games come
/// from claims (the writer's, once it holds this membership), never from
/// reading every game in play: the other nodes' are theirs. Tournaments
/// stay with the node that runs them.
pub async fn join(db: &mut Db, joining: &super::Joining) -> Result<Recovered, String> {
    let taken = std::time::Instant::now();
    let incarnation = super::nodes::join(db, &joining.node, joining.lease).await?;
    tracing::info!(
        node = incarnation.node,
        incarnation = incarnation.number,
        "joined the cluster as node {} (incarnation {})",
        incarnation.node,
        incarnation.number
    );
    let block = crate::rules::numbers::BLOCK;
    let game_block = super::nodes::number_block(db, "game", block).await?;
    let tourney_block = super::nodes::number_block(db, "tourney", block).await?;
    let registered = super::games::registered_names(db)
        .await
        .map_err(|e| describe(&e))?;
    let cluster = super::nodes::cluster_identity(db).await?;
    Ok(Recovered {
        playing: Vec::new(),
        next_game: game_block.start,
        game_block: Some(game_block),
        tourneys: Vec::new(),
        next_tourney: tourney_block.start,
        registered,
        joined: Some(super::Joined {
            member: super::nodes::Member {
                incarnation,
                state: std::sync::Arc::default(),
            },
            cluster,
            lease: joining.lease,
            taken,
        }),
    })
}

async fn cancel_open_games(db: &mut Db) -> Result<(), String> {
    const SQL: &str = "UPDATE games SET status = 'cancelled', ended_at = clock_timestamp(), \
         black_secret = NULL, white_secret = NULL WHERE status = 'open'";
    let cancelled = db.execute(SQL, &[]).await.map_err(|e| describe(&e))?;
    if cancelled > 0 {
        tracing::info!(cancelled, "cancelled games left open at the last stop");
    }
    Ok(())
}

/// The games in play with their moves; a game whose rows do not read back
/// is left out with an error in the log, so that one damaged game does
/// not keep the others from being recovered.
async fn games_in_play(db: &mut Db) -> Result<Vec<GameRecord>, String> {
    const GAMES: &str = game_select!("status = 'playing' ORDER BY id");
    const MOVES: &str = "SELECT m.game, m.ply, m.move, m.ms FROM moves m \
         JOIN games g ON g.id = m.game WHERE g.status = 'playing' ORDER BY m.game, m.ply";
    let rows = db.query(GAMES, &[]).await.map_err(|e| describe(&e))?;
    let moves = db.query(MOVES, &[]).await.map_err(|e| describe(&e))?;
    Ok(records(&rows, moves))
}

/// The games in play among `ids` with their moves, read as at start (a
/// node taking over another's games).
pub async fn games_among(
    db: &mut Db,
    ids: &[i64],
) -> Result<Vec<GameRecord>, tokio_postgres::Error> {
    const GAMES: &str = game_select!("id = ANY($1) AND status = 'playing' ORDER BY id");
    const MOVES: &str =
        "SELECT game, ply, move, ms FROM moves WHERE game = ANY($1) ORDER BY game, ply";
    let rows = db.query(GAMES, &[&ids]).await?;
    let moves = db.query(MOVES, &[&ids]).await?;
    Ok(records(&rows, moves))
}

/// Games from their rows and their moves' rows.
fn records(rows: &[tokio_postgres::Row], moves: Vec<tokio_postgres::Row>) -> Vec<GameRecord> {
    let mut moves = moves_by_game(moves);
    let mut games = Vec::new();
    for row in rows {
        let id: i64 = row.get(0);
        let read = game_from_row(row).and_then(|mut game| {
            game.moves = moves.remove(&id).unwrap_or(Ok(Vec::new()))?;
            Ok(game)
        });
        match read {
            Ok(game) => games.push(game),
            Err(why) => left_out(id, &why),
        }
    }
    games
}

/// Each game's moves, which must be its plies 1, 2, ... in order.
fn moves_by_game(rows: Vec<tokio_postgres::Row>) -> HashMap<i64, Result<Vec<StoredMove>, String>> {
    let mut games: HashMap<i64, Result<Vec<StoredMove>, String>> = HashMap::new();
    for row in rows {
        let (game, ply, text, ms): (i64, i32, String, Option<i64>) =
            (row.get(0), row.get(1), row.get(2), row.get(3));
        let entry = games.entry(game).or_insert_with(|| Ok(Vec::new()));
        let Ok(moves) = entry else {
            continue;
        };
        let expected = moves.len() + 1;
        match text.parse::<Move>() {
            Ok(mv) if usize::try_from(ply).ok() == Some(expected) => moves.push(StoredMove {
                mv,
                ms: ms.and_then(|ms| u64::try_from(ms).ok()),
            }),
            Ok(_) => *entry = Err(format!("its move {ply} follows {} moves", expected - 1)),
            Err(_) => *entry = Err(format!("its move {ply} ({text:?}) is not a move")),
        }
    }
    games
}

fn left_out(game: i64, why: &str) {
    tracing::error!(
        game,
        why,
        "game {game} is left out at this start, its stored rows do not read back ({why}); \
         the other games are recovered. Its rows are kept as they are: repair them (psql) \
         and restart to bring it back"
    );
}

async fn next_game(db: &mut Db) -> Result<GameId, String> {
    let rows = db
        .query("SELECT COALESCE(MAX(id), 0) FROM games", &[])
        .await
        .map_err(|e| describe(&e))?;
    let last: i64 = rows.first().map_or(0, |r| r.get(0));
    Ok(u64::try_from(last).unwrap_or(0).saturating_add(1))
}
