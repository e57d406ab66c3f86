//! Real games for the evaluation's data: WTHOR's `.wtb` files and Logistello's
//! `logbook.gam`, read as move lists and replayed on bitboards into the
//! positions each game went through, labelled with how it ended.

use std::io::Read;
use std::path::Path;

use flipline::board8::{flips, moves};

// The client's WTHOR layout, shared as a file rather than a crate: the client
// is a binary, and this tool needs only its record decoding.
#[allow(dead_code)]
#[path = "../../client/src/archive/wthor.rs"]
mod wthor;

/// Black's and white's discs at the start, black to move.
pub const START: (u64, u64) = (0x0000_0008_1000_0000, 0x0000_0010_0800_0000);

/// A position before a move, from the side to move, with the game's final disc
/// difference for that side (the empties to the winner).
#[derive(Clone, Copy, Debug)]
pub struct Labelled {
    /// The side to move's discs.
    pub p: u64,
    /// The other side's discs.
    pub o: u64,
    /// The final disc difference for the side to move.
    pub label: i8,
}

/// The games of one `.wtb` file, as squares (`row * 8 + col`).
pub fn read_wthor(path: &Path) -> Result<Vec<Vec<u8>>, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let (_, records) = wthor::read_games(&bytes).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(records
        .iter()
        .filter_map(|r| r.squares().ok())
        .map(|squares| squares.iter().map(|s| s.row * 8 + s.col).collect())
        .collect())
}

/// The games of a `logbook.gam` (gzip'd when its name ends in `.gz`): lines
/// of signed moves (`+d3-c3...`) then `: result`. Unreadable lines are
/// skipped: a game is data, not a must.
pub fn read_logbook(path: &Path) -> Result<Vec<Vec<u8>>, String> {
    let mut file = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut text = String::new();
    let read = if path.extension().is_some_and(|e| e == "gz") {
        flate2::read::GzDecoder::new(file).read_to_string(&mut text)
    } else {
        file.read_to_string(&mut text)
    };
    read.map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(text.lines().filter_map(logbook_line).collect())
}

/// One logbook line's squares, `None` when a move is not a square.
pub fn logbook_line(line: &str) -> Option<Vec<u8>> {
    let moves = line.split(':').next()?.as_bytes();
    moves
        .chunks(3)
        .map(|m| match m {
            [b'+' | b'-', col @ b'a'..=b'h', row @ b'1'..=b'8'] => {
                Some((row - b'1') * 8 + (col - b'a'))
            }
            _ => None,
        })
        .collect()
}

/// The positions of a game with their labels, or nothing when a move is
/// illegal or the game stops before its end. Positions where the side to move
/// must pass are left out (the search never evaluates them).
pub fn replay(squares: &[u8]) -> Vec<Labelled> {
    replay_sides(squares).into_iter().map(|(l, _)| l).collect()
}

/// [`replay`]'s positions, each with whether black is to move: after a pass
/// the side to move no longer alternates, and relabelling a game needs to know
/// which positions share a side.
pub fn replay_sides(squares: &[u8]) -> Vec<(Labelled, bool)> {
    let (mut p, mut o) = START;
    let mut black_to_move = true;
    let mut seen: Vec<(u64, u64, bool)> = Vec::with_capacity(60);
    for &square in squares {
        if moves(p, o) == 0 {
            (p, o, black_to_move) = (o, p, !black_to_move);
        }
        let flipped = flips(u32::from(square), p, o);
        if flipped == 0 || (p | o) >> square & 1 != 0 {
            return Vec::new();
        }
        seen.push((p, o, black_to_move));
        (p, o) = (o ^ flipped, p ^ flipped ^ 1 << square);
        black_to_move = !black_to_move;
    }
    if moves(p, o) != 0 || moves(o, p) != 0 {
        return Vec::new();
    }
    let last_to_move = margin(p, o);
    let black = if black_to_move {
        last_to_move
    } else {
        -last_to_move
    };
    seen.into_iter()
        .map(|(p, o, black_moves)| {
            let label = if black_moves { black } else { -black } as i8;
            (Labelled { p, o, label }, black_moves)
        })
        .collect()
}

/// The final disc difference for `p`, the empties to the winner.
fn margin(p: u64, o: u64) -> i32 {
    let (a, b) = (p.count_ones() as i32, o.count_ones() as i32);
    let empties = 64 - a - b;
    match a - b {
        0 => 0,
        d if d > 0 => d + empties,
        d => d - empties,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_logbook_line_replays_to_its_result() {
        let line = "+d3-c3+c4-e3+c2-b3+d2-e1+d1-c1+f4-d6+e6-g4+b2-f6+d7-c8+e7-d8+f3-f5+g5-h4+h6-f2+f7-h5+g6-c6+c5-c7+b6-b5+b4-e8+h3-g3+h2-e2+h7-g2+b1-a1+h1-a2+a3-g7+f8-h8+g8-a4+g1-f1+a6-a5+a7-a8+b8-b7: -04 10";
        let squares = logbook_line(line).unwrap_or_default();
        assert_eq!(squares.len(), 60);
        let positions = replay(&squares);
        assert_eq!(positions.len(), 60);
        assert_eq!(positions.first().map(|l| l.label), Some(-4));
    }

    #[test]
    fn an_illegal_or_unfinished_game_gives_nothing() {
        assert!(replay(&[0]).is_empty());
        assert!(replay(&[19, 18]).is_empty());
        assert!(logbook_line("+d3-z9: +00").is_none());
    }
}
