//! The words several commands' arguments share: a variant, a seat
//! (`as X|O|random`), and the bound on a random start (`random:N`). A leaf
//! below the parsers and the event lines, so that none of them imports
//! another back for these.

use super::error::{ProtocolError, one_line};
use crate::variant::Variant;

/// The longest random start (`from random:N`): enough for program matches
/// (GGS's random starts, XOT openings are 8 to 12 plies), short enough that
/// drawing one stays cheap.
pub const MAX_RANDOM_START: u8 = 20;

/// Which colour the creator of a game takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum SeatChoice {
    /// Black.
    Black,
    /// White.
    White,
    /// Either, at random.
    #[default]
    Random,
}

impl SeatChoice {
    /// The word a `CHALLENGE` line writes: `X`, `O` or `random`.
    pub fn word(self) -> &'static str {
        match self {
            SeatChoice::Black => "X",
            SeatChoice::White => "O",
            SeatChoice::Random => "random",
        }
    }

    /// Reads the word [`SeatChoice::word`] writes, exactly.
    pub fn from_word(word: &str) -> Option<SeatChoice> {
        [SeatChoice::Black, SeatChoice::White, SeatChoice::Random]
            .into_iter()
            .find(|s| s.word() == word)
    }
}

pub(super) fn parse_variant(token: &str) -> Result<Variant, ProtocolError> {
    token
        .parse()
        .map_err(|e: crate::ParseError| ProtocolError::bad(e.to_string()))
}

pub(super) fn parse_seat(token: Option<&str>) -> Result<SeatChoice, ProtocolError> {
    match token.map(str::to_ascii_lowercase).as_deref() {
        Some("x" | "black") => Ok(SeatChoice::Black),
        Some("o" | "white") => Ok(SeatChoice::White),
        Some("random") => Ok(SeatChoice::Random),
        other => Err(ProtocolError::bad(format!(
            "bad seat '{}' (expected X, O or random)",
            one_line(other.unwrap_or(""))
        ))),
    }
}
