//! WTHOR records as flipline's games and back (the byte layout is
//! `wthor`'s): `flip import` of a `.wtb` and `flip export --format wtb`.
//!
//! What WTHOR cannot say, and what flipline makes of it:
//! - Only the year of a game: imported games start on January 1st of it
//!   (UTC), and a file's year is that of its earliest game.
//! - No passes: they are put back where the mover has no move.
//! - Not how a game ended: a game whose moves end it ended normally (its
//!   score is the rules', as WTHOR counts it: the empties to the winner); a
//!   game that stops earlier is taken as resigned, with black's disc count
//!   from the file and the rest white's.
//! - No clocks and no move times.
//! - Only Othello on 8x8 from the standard start: other games are left out
//!   of an export, counted by variant.
//! - The theoretical score: flipline writes the game's own score there
//!   (it does not solve the endings), and reads nothing from it.
//! - Tournaments: flipline has none to store; an export names one,
//!   `flipline`, and an import reads the `.trn` only to check it.

use std::collections::{BTreeMap, HashMap};

use flipd::store::{GameRecord, Status, StoredMove};
use flipline::protocol::{EndReason, GameResult};
use flipline::{Color, Game, Move, Variant};

use crate::archive::civil::Civil;
use crate::archive::ggf_game::field_name;
use crate::archive::wthor::{
    Header, MOVES, PLAYER_LEN, Record, TOURNAMENT_LEN, header_made, square_code, write_games,
    write_names,
};

/// When a file's games started: January 1st of the header's year.
pub fn started_at(header: &Header) -> Result<String, String> {
    Civil::new(i64::from(header.game_year), 1, 1, 0, 0, 0)
        .map(Civil::iso)
        .ok_or_else(|| {
            format!(
                "the games' year {} (header bytes 10-11) is no year",
                header.game_year
            )
        })
}

/// The name of player `number`: from the `.jou` if there is one and it
/// names the player, else the number itself.
fn player(number: u16, players: Option<&[String]>) -> String {
    players
        .and_then(|names| names.get(usize::from(number)))
        .and_then(|name| field_name(name))
        .unwrap_or_else(|| number.to_string())
}

/// The finished game of one record, replayed through the rules; the error
/// names the move.
pub fn record(
    wthor: &Record,
    started_at: &str,
    players: Option<&[String]>,
) -> Result<GameRecord, String> {
    let squares = wthor.squares()?;
    let mut game = Game::new(Variant::Othello);
    let mut moves = Vec::with_capacity(squares.len() + 4);
    for (i, square) in squares.iter().enumerate() {
        if game.must_pass() && !game.is_over() {
            let _ = game.apply(Move::Pass);
            moves.push(StoredMove {
                mv: Move::Pass,
                ms: None,
            });
        }
        game.apply(Move::Place(*square))
            .map_err(|e| format!("move {} ({square}): {e}", i + 1))?;
        moves.push(StoredMove {
            mv: Move::Place(*square),
            ms: None,
        });
    }
    let result = result(&game, wthor.black_discs)?;
    Ok(GameRecord {
        id: 0,
        variant: Variant::Othello,
        black: Some(player(wthor.black, players)),
        white: Some(player(wthor.white, players)),
        clock: None,
        status: Status::Over,
        result: Some(result),
        started_at: started_at.to_string(),
        ended_at: Some(started_at.to_string()),
        secrets: [None, None],
        rated: false,
        tourney: None,
        moves,
    })
}

fn result(game: &Game, black_discs: u8) -> Result<GameResult, String> {
    if game.is_over() {
        let score = game.score();
        return Ok(GameResult {
            winner: score.winner,
            black: score.black,
            white: score.white,
            reason: EndReason::Normal,
        });
    }
    let squares = game.variant().squares();
    let black = u32::from(black_discs);
    if black > squares {
        return Err(format!(
            "black's disc count {black} is past the board's {squares} squares"
        ));
    }
    let white = squares - black;
    let winner = match black.cmp(&white) {
        std::cmp::Ordering::Greater => Some(Color::Black),
        std::cmp::Ordering::Less => Some(Color::White),
        std::cmp::Ordering::Equal => None,
    };
    Ok(GameResult {
        winner,
        black,
        white,
        reason: EndReason::Resign,
    })
}

/// A `.wtb` and the `.jou` and `.trn` that name its players and tournament.
pub struct Files {
    /// The games.
    pub wtb: Vec<u8>,
    /// The players, numbered in the order they first play.
    pub jou: Vec<u8>,
    /// The one tournament, `flipline`.
    pub trn: Vec<u8>,
    /// The games written.
    pub written: usize,
    /// The games left out, by variant (WTHOR holds 8x8 Othello only).
    pub left_out: BTreeMap<&'static str, usize>,
    /// The years of the games written, if more than one (a file holds one).
    pub years: Vec<u16>,
}

/// The games WTHOR can hold, as its three files made on `created` (year,
/// month, day).
pub fn export(games: &[GameRecord], created: (i64, u32, u32)) -> Files {
    let mut players: Vec<String> = Vec::new();
    let mut numbers: HashMap<String, u16> = HashMap::new();
    let mut number = |name: &Option<String>| -> Option<u16> {
        let name = name.clone().unwrap_or_default();
        if let Some(&n) = numbers.get(&name) {
            return Some(n);
        }
        let n = u16::try_from(players.len()).ok()?;
        players.push(name.clone());
        numbers.insert(name, n);
        Some(n)
    };
    let mut records = Vec::new();
    let mut left_out: BTreeMap<&'static str, usize> = BTreeMap::new();
    let mut years: Vec<u16> = Vec::new();
    for game in games {
        let wthor = match (game.variant, game.result) {
            (Variant::Othello, Some(result)) => number(&game.black)
                .zip(number(&game.white))
                .and_then(|(black, white)| encode(game, result, black, white)),
            _ => None,
        };
        let Some(wthor) = wthor else {
            *left_out.entry(game.variant.name()).or_default() += 1;
            continue;
        };
        let year = Civil::parse_iso(&game.started_at).and_then(|c| u16::try_from(c.year).ok());
        if let Some(year) = year.filter(|y| !years.contains(y)) {
            years.push(year);
        }
        records.push(wthor);
    }
    years.sort_unstable();
    let base = header_made(created);
    let games_header = Header {
        game_year: years.first().copied().unwrap_or(0),
        board_size: 8,
        ..base
    };
    Files {
        wtb: write_games(games_header, &records),
        jou: write_names(base, &players, PLAYER_LEN),
        trn: write_names(base, &["flipline".to_string()], TOURNAMENT_LEN),
        written: records.len(),
        left_out,
        years: if years.len() > 1 { years } else { Vec::new() },
    }
}

/// One game as a record: its squares (passes left out) as codes.
fn encode(game: &GameRecord, result: GameResult, black: u16, white: u16) -> Option<Record> {
    let mut moves = [0; MOVES];
    let squares = game.moves.iter().filter_map(|m| match m.mv {
        Move::Place(square) => Some(square),
        Move::Pass => None,
    });
    for (slot, square) in moves.iter_mut().zip(squares) {
        *slot = square_code(square)?;
    }
    let discs = u8::try_from(result.black).ok()?;
    Some(Record {
        tournament: 0,
        black,
        white,
        black_discs: discs,
        theoretical: discs,
        moves,
    })
}
