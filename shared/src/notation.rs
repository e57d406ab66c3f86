//! Text forms: board strings (OBF), move transcripts, and the typed error every
//! parser in the crate returns.
//!
//! A board string is `<cells> <side>`: the cells row by row from a1 (`X` black, `O`
//! white, `-` empty; `x`, `o`, `*` and `.` are read too), then the side to move. A
//! transcript is moves run together (`f5d6c3`), optionally separated by spaces or
//! commas, with passes written `pass` or `PA`.

use std::fmt;
use std::str::FromStr;

use crate::game::{Game, MoveError};
use crate::square::{Move, Square, parse_square_prefix};
use crate::variant::{Color, Variant};

/// What a parser was reading when it failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ParseErrorKind {
    /// A square name (`d3`).
    Square,
    /// A move (a square or a pass).
    Move,
    /// A variant name.
    Variant,
    /// The cells of a board string.
    Board(String),
    /// The side-to-move field of a board string.
    Side,
    /// A transcript move that is not legal where it stands.
    IllegalMove {
        /// 1-based ply of the move.
        ply: usize,
        /// Why it is illegal.
        error: MoveError,
    },
}

/// A parse failure that names the offending token.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    /// What was being read.
    pub kind: ParseErrorKind,
    /// The offending token, shortened if long.
    pub token: String,
}

/// Longest token quoted in an error message: input can be arbitrarily long.
const MAX_QUOTED: usize = 40;

impl ParseError {
    /// An error about `token`.
    pub fn new(kind: ParseErrorKind, token: &str) -> ParseError {
        let token = match token.char_indices().nth(MAX_QUOTED) {
            Some((cut, _)) => format!("{}...", &token[..cut]),
            None => token.to_string(),
        };
        ParseError { kind, token }
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let token = &self.token;
        match &self.kind {
            ParseErrorKind::Square => write!(
                f,
                "bad square '{token}' (expected a1..h8, a1..j10 on 10x10)"
            ),
            ParseErrorKind::Move => write!(f, "bad move '{token}' (expected a square or pass)"),
            ParseErrorKind::Variant => {
                let names: Vec<&str> = Variant::ALL.iter().map(|v| v.name()).collect();
                write!(
                    f,
                    "unknown variant '{token}' (expected one of {})",
                    names.join(", ")
                )
            }
            ParseErrorKind::Board(why) => write!(f, "bad board '{token}': {why}"),
            ParseErrorKind::Side => write!(f, "bad side to move '{token}' (expected X or O)"),
            ParseErrorKind::IllegalMove { ply, error } => {
                write!(f, "illegal move '{token}' at ply {ply}: {error}")
            }
        }
    }
}

impl std::error::Error for ParseError {}

// The text forms of squares, moves and variants are read here, beside the
// error they give, so that those types' own modules need nothing of this
// one (which reads boards of them).

impl FromStr for Square {
    type Err = ParseError;

    fn from_str(s: &str) -> Result<Square, ParseError> {
        match parse_square_prefix(s) {
            Some((square, "")) => Ok(square),
            _ => Err(ParseError::new(ParseErrorKind::Square, s)),
        }
    }
}

impl FromStr for Move {
    type Err = ParseError;

    /// A square (`d3`), or `pass` / `pa` in any case.
    fn from_str(s: &str) -> Result<Move, ParseError> {
        if s.eq_ignore_ascii_case("pass") || s.eq_ignore_ascii_case("pa") {
            return Ok(Move::Pass);
        }
        s.parse()
            .map(Move::Place)
            .map_err(|_| ParseError::new(ParseErrorKind::Move, s))
    }
}

impl FromStr for Variant {
    type Err = ParseError;

    fn from_str(s: &str) -> Result<Variant, ParseError> {
        Variant::ALL
            .into_iter()
            .find(|v| v.name().eq_ignore_ascii_case(s))
            .ok_or_else(|| ParseError::new(ParseErrorKind::Variant, s))
    }
}

/// Reads a board string of `variant` (`<cells> <side>`).
pub fn parse_board(text: &str, variant: Variant) -> Result<Game, ParseError> {
    let mut fields = text.split_whitespace();
    let (Some(cells), Some(side), None) = (fields.next(), fields.next(), fields.next()) else {
        let why = "expected '<cells> <side>'".to_string();
        return Err(ParseError::new(ParseErrorKind::Board(why), text));
    };
    let (black, white) = parse_cells(cells, variant)?;
    let to_move = parse_side(side).ok_or_else(|| ParseError::new(ParseErrorKind::Side, side))?;
    Ok(Game::from_bits(variant, black, white, to_move))
}

/// The side to move: `X` or `O` in either case, or `*` for black as OBF
/// files also write it; the `;` that ends an OBF line's board may follow.
fn parse_side(token: &str) -> Option<Color> {
    match token.strip_suffix(';').unwrap_or(token) {
        "*" => Some(Color::Black),
        side => Color::from_letter(side),
    }
}

/// Reads the cells of a board string into black and white bit sets.
pub fn parse_cells(cells: &str, variant: Variant) -> Result<(u128, u128), ParseError> {
    let squares = variant.squares() as usize;
    let count = cells.chars().count();
    if count != squares {
        let why = format!("{variant} has {squares} cells, found {count}");
        return Err(ParseError::new(ParseErrorKind::Board(why), cells));
    }
    let (mut black, mut white) = (0u128, 0u128);
    for (index, cell) in cells.chars().enumerate() {
        match cell {
            'X' | 'x' | '*' => black |= 1 << index,
            'O' | 'o' => white |= 1 << index,
            '-' | '.' => {}
            other => {
                let why = format!("cell {} is '{other}' (expected X, O or -)", index + 1);
                return Err(ParseError::new(ParseErrorKind::Board(why), cells));
            }
        }
    }
    Ok((black, white))
}

/// The cells of `game`, row by row from a1, in the OBF alphabet.
pub fn cells_string(game: &Game) -> String {
    let (black, white) = game.bits();
    // Every BOARD line has this: bytes, and a step per disc rather than a
    // 128-bit shift per cell.
    let mut cells = vec![b'-'; game.variant().squares() as usize];
    for (discs, letter) in [(white, b'O'), (black, b'X')] {
        let mut rest = discs;
        while rest != 0 {
            if let Some(cell) = cells.get_mut(rest.trailing_zeros() as usize) {
                *cell = letter;
            }
            rest &= rest - 1;
        }
    }
    String::from_utf8(cells).unwrap_or_default()
}

/// The board string of `game`: cells, a space, the side to move.
pub fn board_string(game: &Game) -> String {
    format!("{} {}", cells_string(game), game.to_move().letter())
}

/// Reads a transcript into moves; it does not check that they are legal.
pub fn parse_transcript(text: &str) -> Result<Vec<Move>, ParseError> {
    let mut moves = Vec::new();
    let mut rest = text.trim_start_matches(is_separator);
    while !rest.is_empty() {
        let (mv, after) = parse_move_prefix(rest).ok_or_else(|| {
            let token = rest.split(is_separator).next().unwrap_or(rest);
            ParseError::new(ParseErrorKind::Move, token)
        })?;
        moves.push(mv);
        rest = after.trim_start_matches(is_separator);
    }
    Ok(moves)
}

fn is_separator(c: char) -> bool {
    c.is_whitespace() || c == ','
}

fn parse_move_prefix(text: &str) -> Option<(Move, &str)> {
    for pass in ["pass", "pa"] {
        if let Some(head) = text.get(..pass.len())
            && head.eq_ignore_ascii_case(pass)
        {
            return Some((Move::Pass, text.get(pass.len()..)?));
        }
    }
    parse_square_prefix(text).map(|(square, rest)| (Move::Place(square), rest))
}

/// Moves run together (`f5d6c3pass`), the form [`parse_transcript`] reads.
pub fn transcript_string(moves: &[Move]) -> String {
    moves.iter().map(Move::to_string).collect()
}

/// Plays a transcript from the start of `variant`. A square where the side to move
/// has no move implies the pass that many transcripts leave out.
pub fn replay(variant: Variant, moves: &[Move]) -> Result<Game, ParseError> {
    replay_with_passes(variant, moves).map(|(game, _)| game)
}

/// [`replay`], also returning the moves with every pass written out.
pub fn replay_with_passes(
    variant: Variant,
    moves: &[Move],
) -> Result<(Game, Vec<Move>), ParseError> {
    let mut game = Game::new(variant);
    let mut played = Vec::with_capacity(moves.len());
    for (i, &mv) in moves.iter().enumerate() {
        if matches!(mv, Move::Place(_)) && game.must_pass() {
            // Cannot fail: the side to move has no move.
            let _ = game.apply(Move::Pass);
            played.push(Move::Pass);
        }
        game.apply(mv).map_err(|error| {
            let kind = ParseErrorKind::IllegalMove { ply: i + 1, error };
            ParseError::new(kind, &mv.to_string())
        })?;
        played.push(mv);
    }
    Ok((game, played))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_start_position_prints_as_obf() {
        let game = Game::new(Variant::Othello);
        let expect = "---------------------------OX------XO--------------------------- X";
        assert_eq!(board_string(&game), expect);
        assert_eq!(parse_board(expect, Variant::Othello).unwrap(), game);
    }

    #[test]
    fn obf_boards_take_star_for_black_and_the_closing_semicolon() {
        let x = "---------------------------OX------XO--------------------------- X";
        let star = "---------------------------O*------*O--------------------------- *;";
        assert_eq!(
            parse_board(star, Variant::Othello),
            parse_board(x, Variant::Othello)
        );
        let white = parse_board(&x.replace(" X", " O;"), Variant::Othello).unwrap();
        assert_eq!(white.to_move(), Color::White);
        assert!(parse_board(&x.replace(" X", " ;"), Variant::Othello).is_err());
        assert!(parse_board(&x.replace(" X", " X;;"), Variant::Othello).is_err());
    }

    #[test]
    fn transcripts_accept_separators_and_both_pass_spellings() {
        let moves = parse_transcript("F5 d6,c3PAd3 pass").unwrap();
        assert_eq!(transcript_string(&moves), "f5d6c3passd3pass");
        assert_eq!(parse_transcript("a10b3").unwrap().len(), 2);
    }

    #[test]
    fn bad_input_names_the_offending_token() {
        let err = parse_transcript("f5d6 z9c3").unwrap_err();
        assert!(err.to_string().contains("'z9c3'"), "{err}");
        let err = parse_board("--- Q", Variant::TicTacToe).unwrap_err();
        assert!(err.to_string().contains("'---'"), "{err}");
        let err = parse_board("--------- Q", Variant::TicTacToe).unwrap_err();
        assert!(err.to_string().contains("'Q'"), "{err}");
        let err = replay(Variant::Othello, &parse_transcript("f5f5").unwrap()).unwrap_err();
        assert!(err.to_string().contains("'f5' at ply 2"), "{err}");
    }
}
