//! OBF lines, the format of the FFO endgame test suite: a board string, the side to
//! move, then optionally the legal moves with their exact final disc difference.
//! Black is `X` or `*`, white `O`, in the cells and as the side to move.
//!
//! ```text
//! O--OOOOX-OOOOOOXOOXXOOOXOOXOOOXXOOOOOOXX---OOOOX----O--X-------- X; A2:+38; C7:+36;
//! ```
//!
//! Lines starting with `%` are comments and blank lines are skipped. No input makes
//! the parser panic; an error says what was wrong and quotes the offending text.

use std::fmt;

use crate::game::Game;
use crate::notation::parse_board;
use crate::square::Move;
use crate::variant::Variant;

/// One position of an OBF file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ObfPosition {
    /// The position (Othello rules), side to move included.
    pub game: Game,
    /// The moves the line lists with their exact scores, in the line's order
    /// (best first in the FFO files); empty when the line gives none.
    pub moves: Vec<(Move, i32)>,
}

impl ObfPosition {
    /// The best listed score, if the line lists any.
    pub fn best_score(&self) -> Option<i32> {
        self.moves.iter().map(|&(_, score)| score).max()
    }

    /// The listed score of `mv`, if listed.
    pub fn score_of(&self, mv: Move) -> Option<i32> {
        self.moves
            .iter()
            .find(|&&(listed, _)| listed == mv)
            .map(|&(_, s)| s)
    }
}

/// Why an OBF line could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ObfError {
    /// What is wrong, with the offending text quoted.
    pub message: String,
}

impl fmt::Display for ObfError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ObfError {}

/// Longest piece of a line quoted in an error.
const MAX_QUOTED: usize = 40;

fn quote(text: &str) -> String {
    match text.char_indices().nth(MAX_QUOTED) {
        Some((cut, _)) => format!("'{}...'", &text[..cut]),
        None => format!("'{text}'"),
    }
}

/// Reads one line: `Ok(None)` for a comment or a blank line.
pub fn parse_line(line: &str) -> Result<Option<ObfPosition>, ObfError> {
    let line = line.trim();
    if line.is_empty() || line.starts_with('%') {
        return Ok(None);
    }
    let (board, rest) = line.split_once(';').unwrap_or((line, ""));
    let game = parse_board(board, Variant::Othello).map_err(|e| ObfError {
        message: e.to_string(),
    })?;
    let moves = rest
        .split(';')
        .map(str::trim)
        .filter(|entry| !entry.is_empty())
        .map(parse_entry)
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Some(ObfPosition { game, moves }))
}

/// One `move:score` entry (`A2:+38`, `pass:-4`).
fn parse_entry(entry: &str) -> Result<(Move, i32), ObfError> {
    let bad = |why: &str| ObfError {
        message: format!("bad move entry {} ({why})", quote(entry)),
    };
    let (mv, score) = entry
        .split_once(':')
        .ok_or_else(|| bad("expected <move>:<score>"))?;
    let mv: Move = mv.trim().parse().map_err(|_| bad("not a square"))?;
    if let Move::Place(square) = mv
        && !square.fits(8)
    {
        return Err(bad("not a square of an 8x8 board"));
    }
    let score = score.trim();
    let score: i32 = score
        .strip_prefix('+')
        .unwrap_or(score)
        .parse()
        .map_err(|_| bad("the score is not a whole number"))?;
    if !(-64..=64).contains(&score) {
        return Err(bad("the score is beyond -64..64"));
    }
    Ok((mv, score))
}

#[cfg(test)]
mod tests {
    use super::*;

    const CELLS: &str = "O--OOOOX-OOOOOOXOOXXOOOXOOXOOOXXOOOOOOXX---OOOOX----O--X--------";

    #[test]
    fn a_line_with_moves_reads_every_entry() {
        let line = format!("{CELLS} X; A2:+38; C7:+36; D8:-2;");
        let pos = parse_line(&line).unwrap().unwrap();
        assert_eq!(pos.moves.len(), 3);
        assert_eq!(pos.best_score(), Some(38));
        assert_eq!(pos.score_of("d8".parse().unwrap()), Some(-2));
        assert_eq!(pos.game.counts().black + pos.game.counts().white, 64 - 20);
    }

    #[test]
    fn bare_boards_comments_and_blanks() {
        let pos = parse_line(&format!("{CELLS} O;")).unwrap().unwrap();
        assert!(pos.moves.is_empty() && pos.best_score().is_none());
        assert!(parse_line(&format!("{CELLS} O")).unwrap().is_some());
        assert_eq!(parse_line("% a comment"), Ok(None));
        assert_eq!(parse_line("   "), Ok(None));
    }

    #[test]
    fn star_and_o_read_as_the_sides_and_discs() {
        let starred = CELLS.replace('X', "*");
        let pos = parse_line(&format!("{starred} *; A2:+38;"))
            .unwrap()
            .unwrap();
        let plain = parse_line(&format!("{CELLS} X; A2:+38;")).unwrap().unwrap();
        assert_eq!(pos, plain);
        let white = parse_line(&format!("{starred} O;")).unwrap().unwrap();
        assert_eq!(white.game.to_move(), crate::Color::White);
    }

    #[test]
    fn errors_quote_the_bad_part() {
        let err = parse_line(&format!("{CELLS} X; A2+38;")).unwrap_err();
        assert!(err.message.contains("'A2+38'"), "{err}");
        let err = parse_line(&format!("{CELLS} X; Z9:+2;")).unwrap_err();
        assert!(err.message.contains("'Z9:+2'"), "{err}");
        let err = parse_line(&format!("{CELLS} X; A1:+99;")).unwrap_err();
        assert!(err.message.contains("beyond"), "{err}");
        assert!(parse_line("XO- X;").is_err());
        assert!(parse_line(&format!("{CELLS} Q;")).is_err());
    }
}
