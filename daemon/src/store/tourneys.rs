//! Tournaments in the store: the facts a tournament's standing follows
//! from (who joined, the rounds begun, the games lost by abandon, the
//! starts drawn; its games carry it in their own rows), written as they
//! happen and read back at start so that a tournament goes on where it
//! stood.

use flipline::notation::{parse_transcript, transcript_string};
use flipline::protocol::{TourneyId, TourneySpec};
use flipline::{Color, Move};

pub use crate::rules::tourney_facts::{
    StoredForfeit, StoredTourney, StoredTourneyGame, TourneyWrite,
};
use rusqlite::{Connection, params};

use super::schema::NOW;

/// Runs `write` on `conn`, inside the caller's transaction.
pub fn apply(write: &TourneyWrite, conn: &Connection) -> rusqlite::Result<usize> {
    match write {
        TourneyWrite::New { id, creator, spec } => {
            let sql = format!(
                "INSERT INTO tourneys (id, creator, spec, created_at) VALUES (?1, ?2, ?3, {NOW})"
            );
            conn.prepare_cached(&sql)?
                .execute(params![id, creator, spec.to_string()])
        }
        TourneyWrite::Join { id, name } => conn
            .prepare_cached(
                "INSERT INTO tourney_players (tourney, seq, name) \
                     SELECT ?1, (SELECT COALESCE(MAX(seq), 0) + 1 FROM tourney_players \
                     WHERE tourney = ?1), ?2 WHERE NOT EXISTS (SELECT 1 FROM tourney_players \
                     WHERE tourney = ?1 AND name = ?2 COLLATE NOCASE)",
            )?
            .execute(params![id, name]),
        TourneyWrite::Leave { id, name } => conn
            .prepare_cached(
                "DELETE FROM tourney_players WHERE tourney = ?1 AND name = ?2 COLLATE NOCASE",
            )?
            .execute(params![id, name]),
        TourneyWrite::Round {
            id,
            round,
            forfeits,
        } => {
            let mut changed = conn
                .prepare_cached("UPDATE tourneys SET round = MAX(round, ?2) WHERE id = ?1")?
                .execute(params![id, round])?;
            for forfeit in forfeits {
                changed += store_forfeit(conn, *id, forfeit)?;
            }
            Ok(changed)
        }
        TourneyWrite::Forfeit { id, forfeit } => store_forfeit(conn, *id, forfeit),
        TourneyWrite::Start { id, group, moves } => conn
            .prepare_cached(
                "INSERT OR REPLACE INTO tourney_starts (tourney, start_group, moves) \
                     VALUES (?1, ?2, ?3)",
            )?
            .execute(params![id, group, transcript_string(moves)]),
        TourneyWrite::Over { id, winner } => {
            let sql = format!(
                "UPDATE tourneys SET over = 1, winner = ?2, ended_at = {NOW} WHERE id = ?1"
            );
            conn.prepare_cached(&sql)?.execute(params![id, winner])
        }
    }
}

fn store_forfeit(conn: &Connection, id: TourneyId, f: &StoredForfeit) -> rusqlite::Result<usize> {
    conn.prepare_cached(
        "INSERT OR REPLACE INTO tourney_forfeits (tourney, round, black, white, absent) \
         VALUES (?1, ?2, ?3, ?4, ?5)",
    )?
    .execute(params![
        id,
        f.round,
        f.black,
        f.white,
        absent_word(f.absent)
    ])
}

pub(super) fn absent_word(absent: [bool; 2]) -> &'static str {
    match absent {
        [true, false] => "X",
        [false, true] => "O",
        _ => "both",
    }
}

pub(super) fn absent_of(word: &str) -> [bool; 2] {
    match word {
        "X" => [true, false],
        "O" => [false, true],
        _ => [true, true],
    }
}

/// The over tournaments read back at start besides those still running: a
/// `TOURNEY LIST`'s worth.
pub const OVER_KEPT: u32 = 100;

/// The tournaments not over, and the last [`OVER_KEPT`] over, by number. A
/// row whose terms do not read (another build's) is left out with a log
/// line.
pub fn load(conn: &Connection) -> rusqlite::Result<Vec<StoredTourney>> {
    let snapshot = conn.unchecked_transaction()?;
    let mut statement = snapshot.prepare(
        "SELECT id, creator, spec, round, over FROM tourneys \
         WHERE over = 0 OR id IN (SELECT id FROM tourneys WHERE over = 1 ORDER BY id DESC LIMIT ?1) \
         ORDER BY id",
    )?;
    let rows = statement.query_map(params![OVER_KEPT], |r| {
        Ok((
            r.get::<_, TourneyId>(0)?,
            r.get::<_, String>(1)?,
            r.get::<_, String>(2)?,
            r.get::<_, u32>(3)?,
            r.get::<_, bool>(4)?,
        ))
    })?;
    let mut tourneys = Vec::new();
    for row in rows {
        let (id, creator, spec, round, over) = row?;
        let Ok(spec) = spec.parse::<TourneySpec>() else {
            tracing::error!(
                tourney = id,
                spec,
                "a stored tournament's terms do not read"
            );
            continue;
        };
        tourneys.push(StoredTourney {
            id,
            creator,
            spec,
            players: players_of(&snapshot, id)?,
            round,
            over,
            games: games_of(&snapshot, id)?,
            forfeits: forfeits_of(&snapshot, id)?,
            starts: starts_of(&snapshot, id)?,
        });
    }
    Ok(tourneys)
}

/// The number for the next tournament.
pub fn next_id(conn: &Connection) -> rusqlite::Result<TourneyId> {
    let last: TourneyId = conn.query_row("SELECT COALESCE(MAX(id), 0) FROM tourneys", [], |r| {
        r.get(0)
    })?;
    Ok(last.saturating_add(1))
}

fn players_of(conn: &Connection, id: TourneyId) -> rusqlite::Result<Vec<String>> {
    let mut statement =
        conn.prepare_cached("SELECT name FROM tourney_players WHERE tourney = ?1 ORDER BY seq")?;
    statement.query_map(params![id], |r| r.get(0))?.collect()
}

fn games_of(conn: &Connection, id: TourneyId) -> rusqlite::Result<Vec<StoredTourneyGame>> {
    let mut statement = conn.prepare_cached(
        "SELECT id, tourney_round, black, white, status, result, black_score, white_score \
         FROM games WHERE tourney = ?1 ORDER BY id",
    )?;
    let rows = statement.query_map(params![id], |r| {
        let number = |column: usize| r.get::<_, Option<u32>>(column);
        Ok(stored_game(
            r.get(0)?,
            r.get(1)?,
            [r.get(2)?, r.get(3)?],
            r.get::<_, String>(4)? == "over",
            r.get(5)?,
            (number(6)?, number(7)?),
        ))
    })?;
    rows.collect()
}

/// A tournament's game from its row: a result only once over with scores.
pub(super) fn stored_game(
    game: flipline::protocol::GameId,
    round: u32,
    [black, white]: [Option<String>; 2],
    over: bool,
    winner: Option<String>,
    scores: (Option<u32>, Option<u32>),
) -> StoredTourneyGame {
    let result = match (over, scores) {
        (true, (Some(black), Some(white))) => {
            let winner = winner.as_deref().and_then(Color::from_letter);
            Some((winner, (black, white)))
        }
        _ => None,
    };
    StoredTourneyGame {
        game,
        round,
        black: black.unwrap_or_default(),
        white: white.unwrap_or_default(),
        result,
    }
}

fn forfeits_of(conn: &Connection, id: TourneyId) -> rusqlite::Result<Vec<StoredForfeit>> {
    let mut statement = conn.prepare_cached(
        "SELECT round, black, white, absent FROM tourney_forfeits WHERE tourney = ?1 \
         ORDER BY round, rowid",
    )?;
    let rows = statement.query_map(params![id], |r| {
        Ok(StoredForfeit {
            round: r.get(0)?,
            black: r.get(1)?,
            white: r.get(2)?,
            absent: absent_of(&r.get::<_, String>(3)?),
        })
    })?;
    rows.collect()
}

fn starts_of(conn: &Connection, id: TourneyId) -> rusqlite::Result<Vec<(u32, Vec<Move>)>> {
    let mut statement = conn.prepare_cached(
        "SELECT start_group, moves FROM tourney_starts WHERE tourney = ?1 ORDER BY start_group",
    )?;
    let rows = statement.query_map(params![id], |r| {
        Ok((r.get::<_, u32>(0)?, r.get::<_, String>(1)?))
    })?;
    let mut starts = Vec::new();
    for row in rows {
        let (group, moves) = row?;
        match parse_transcript(&moves) {
            Ok(moves) => starts.push((group, moves)),
            Err(error) => {
                tracing::error!(tourney = id, group, %error, "a stored start does not read");
            }
        }
    }
    Ok(starts)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::test_support::{block_on, config, new_game, temp_path};
    use crate::store::{Store, Write};
    use flipline::protocol::{EndReason, GameResult, TourneyKind};

    fn tourney(write: TourneyWrite) -> Write {
        Write::Tourney(write)
    }

    #[test]
    fn a_tournaments_facts_are_read_back_as_written_after_a_restart() {
        let path = temp_path("tourneys");
        let spec: TourneySpec = "swiss rounds 2 anti rated start random:6".parse().unwrap();
        let opened = Store::open(&config(&path)).unwrap();
        let store = opened.store;
        let id = opened.next_tourney;
        assert_eq!(id, 1);
        let creator = "ann".to_string();
        let writes = [
            tourney(TourneyWrite::New { id, creator, spec }),
            tourney(TourneyWrite::Join {
                id,
                name: "ann".into(),
            }),
            tourney(TourneyWrite::Join {
                id,
                name: "bob".into(),
            }),
            tourney(TourneyWrite::Join {
                id,
                name: "BOB".into(),
            }),
            tourney(TourneyWrite::Join {
                id,
                name: "cy".into(),
            }),
            tourney(TourneyWrite::Join {
                id,
                name: "dee".into(),
            }),
            tourney(TourneyWrite::Leave {
                id,
                name: "Cy".into(),
            }),
            tourney(TourneyWrite::Round {
                id,
                round: 1,
                forfeits: vec![StoredForfeit {
                    round: 1,
                    black: "bob".into(),
                    white: "ann".into(),
                    absent: [true, true],
                }],
            }),
            tourney(TourneyWrite::Start {
                id,
                group: 64,
                moves: parse_transcript("f5d6").unwrap(),
            }),
            tourney(TourneyWrite::Forfeit {
                id,
                forfeit: StoredForfeit {
                    round: 1,
                    black: "dee".into(),
                    white: "bob".into(),
                    absent: [true, false],
                },
            }),
        ];
        for write in writes {
            block_on(store.commit(write)).unwrap();
        }
        let Write::NewGame {
            id: game,
            variant,
            clock,
            start,
            ..
        } = new_game(5, Some("bob"), "f5d6")
        else {
            unreachable!()
        };
        let made = Write::NewGame {
            id: game,
            variant,
            black: Some("ann".into()),
            white: Some("bob".into()),
            secrets: [None, None],
            clock,
            status: crate::store::Status::Playing,
            start,
            rated: true,
            tourney: Some((id, 1)),
        };
        block_on(store.commit(made)).unwrap();
        let result = GameResult {
            winner: Some(Color::White),
            black: 23,
            white: 41,
            reason: EndReason::Normal,
        };
        block_on(store.commit(Write::End { game, result })).unwrap();
        opened.threads.close();

        let again = Store::open(&config(&path)).unwrap();
        assert_eq!(again.next_tourney, 2);
        let [stored] = again.tourneys.as_slice() else {
            panic!("{:?}", again.tourneys)
        };
        assert_eq!(stored.spec.kind, TourneyKind::Swiss);
        assert_eq!(stored.spec, spec);
        assert_eq!(
            stored.players,
            ["ann", "bob", "dee"],
            "joined once, cy gone"
        );
        assert_eq!((stored.round, stored.over), (1, false));
        assert_eq!(stored.starts, [(64, parse_transcript("f5d6").unwrap())]);
        let forfeit = |black: &str, white: &str, absent| StoredForfeit {
            round: 1,
            black: black.into(),
            white: white.into(),
            absent,
        };
        let both = [
            forfeit("bob", "ann", [true, true]),
            forfeit("dee", "bob", [true, false]),
        ];
        assert_eq!(stored.forfeits, both, "at the round's start, then later");
        let played = StoredTourneyGame {
            round: 1,
            game,
            black: "ann".into(),
            white: "bob".into(),
            result: Some((Some(Color::White), (23, 41))),
        };
        assert_eq!(stored.games, [played]);
        let over = TourneyWrite::Over {
            id,
            winner: Some("bob".into()),
        };
        block_on(again.store.commit(Write::Tourney(over))).unwrap();
        again.threads.close();
        let last = Store::open(&config(&path)).unwrap();
        assert!(
            last.tourneys.iter().all(|t| t.over),
            "over, and still listed"
        );
        assert_eq!(last.tourneys.len(), 1);
        last.threads.close();
    }
}
