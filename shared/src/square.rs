//! Squares and moves, independent of any board size.
//!
//! A square is a (row, column) pair rather than a bit index so that its name (`d3`)
//! means the same thing on every board; a [`crate::Game`] checks that it lies on its
//! own board. `a1` is the top-left corner: columns are letters from the left, rows
//! are numbers from the top.

use std::fmt;

/// The largest board side any variant uses (10x10).
pub const MAX_SIZE: u8 = 10;

/// One square of a board, by row and column (both from 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Square {
    /// Row from the top, 0-based (`a1` is row 0).
    pub row: u8,
    /// Column from the left, 0-based (`a` is column 0).
    pub col: u8,
}

impl Square {
    /// The square at `row`, `col`, or `None` when it lies beyond the largest board.
    pub fn new(row: u8, col: u8) -> Option<Square> {
        (row < MAX_SIZE && col < MAX_SIZE).then_some(Square { row, col })
    }

    /// The square for bit `index` of a board `size` squares wide.
    pub fn from_index(index: u32, size: u8) -> Square {
        let size = u32::from(size.max(1));
        // Truncation cannot occur: a board has at most 100 squares.
        Square {
            row: (index / size) as u8,
            col: (index % size) as u8,
        }
    }

    /// The bit index of this square on a board `size` squares wide.
    pub fn index(self, size: u8) -> u32 {
        u32::from(self.row) * u32::from(size) + u32::from(self.col)
    }

    /// Whether the square lies on a board `size` squares wide.
    pub fn fits(self, size: u8) -> bool {
        self.row < size && self.col < size
    }
}

impl fmt::Display for Square {
    /// `d3`. The fields are public, so a square may lie beyond any board; such a
    /// column prints as its number in brackets (`[200]1`) rather than overflow.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let row = u32::from(self.row) + 1;
        match (self.col, u8::try_from(row)) {
            // Every TURN line names each legal square: written as bytes, not
            // through the formatting machinery.
            (col @ 0..26, Ok(row @ 1..=9)) => write_ascii(f, &[b'a' + col, b'0' + row]),
            (col @ 0..26, Ok(row @ 10..=99)) => {
                write_ascii(f, &[b'a' + col, b'0' + row / 10, b'0' + row % 10])
            }
            (col @ 0..26, _) => write!(f, "{}{row}", char::from(b'a' + col)),
            (col, _) => write!(f, "[{col}]{row}"),
        }
    }
}

fn write_ascii(f: &mut fmt::Formatter<'_>, bytes: &[u8]) -> fmt::Result {
    f.write_str(std::str::from_utf8(bytes).map_err(|_| fmt::Error)?)
}

/// Reads one square from the front of `s` (case-insensitive) and returns it with the
/// rest of the string. Two digits are taken only when they make a row of 10: `a10`
/// is one square, and `a1` followed by `0` is not a square at all.
pub(crate) fn parse_square_prefix(s: &str) -> Option<(Square, &str)> {
    let bytes = s.as_bytes();
    let letter = bytes.first()?.to_ascii_lowercase();
    if !(b'a'..b'a' + MAX_SIZE).contains(&letter) {
        return None;
    }
    let col = letter - b'a';
    let (row, used) = match (bytes.get(1), bytes.get(2)) {
        (Some(b'1'), Some(b'0')) => (10, 3),
        (Some(d @ b'1'..=b'9'), _) => (d - b'0', 2),
        _ => return None,
    };
    Some((Square { row: row - 1, col }, s.get(used..)?))
}

/// One ply: a disc placed on a square, or a pass.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Move {
    /// Place a disc (or a mark, in tic-tac-toe) on the square.
    Place(Square),
    /// Pass the turn; legal only when no placement is.
    Pass,
}

impl fmt::Display for Move {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Move::Place(square) => square.fmt(f),
            Move::Pass => f.write_str("pass"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a1_is_the_top_left_corner_and_index_zero() {
        let a1: Square = "a1".parse().unwrap();
        assert_eq!(a1, Square { row: 0, col: 0 });
        assert_eq!(a1.index(8), 0);
        let h8: Square = "H8".parse().unwrap();
        assert_eq!(h8.index(8), 63);
        let j10: Square = "j10".parse().unwrap();
        assert_eq!(j10.index(10), 99);
    }

    #[test]
    fn every_square_prints_as_column_letter_and_row_number() {
        for row in 0..=u8::MAX {
            for col in 0..=u8::MAX {
                let square = Square { row, col };
                let number = u32::from(row) + 1;
                let expected = match col {
                    0..26 => format!("{}{number}", char::from(b'a' + col)),
                    _ => format!("[{col}]{number}"),
                };
                assert_eq!(square.to_string(), expected);
                if col < 10 && row < 10 {
                    assert_eq!(expected.parse::<Square>(), Ok(square));
                }
            }
        }
    }

    #[test]
    fn bad_squares_name_the_token() {
        for bad in ["", "a", "a0", "k1", "a11", "a1x", "1a", "d 3", "é4"] {
            let err = bad.parse::<Square>().unwrap_err();
            assert!(err.to_string().contains(&format!("'{bad}'")), "{err}");
        }
    }

    #[test]
    fn moves_parse_passes_in_both_spellings() {
        assert_eq!("PA".parse::<Move>().unwrap(), Move::Pass);
        assert_eq!("Pass".parse::<Move>().unwrap(), Move::Pass);
        assert_eq!(
            "d3".parse::<Move>().unwrap(),
            Move::Place(Square { row: 2, col: 3 })
        );
    }
}
