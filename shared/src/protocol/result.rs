//! How a game ended: the reason word of `OVER` and the one-token result of
//! `HISTORY` and the archives (`X:40-24:normal`), read and written here so that
//! the store, the daemon and the client agree on them.

use std::fmt;

use crate::variant::Color;

/// Why a game ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EndReason {
    /// Neither side could move (or the board filled, or three in a row).
    Normal,
    /// A player resigned (`END`).
    Resign,
    /// A clock ran out.
    Time,
    /// A player left and did not come back within the grace period.
    Abandon,
}

impl EndReason {
    /// The word on the wire.
    pub fn word(self) -> &'static str {
        match self {
            EndReason::Normal => "normal",
            EndReason::Resign => "resign",
            EndReason::Time => "time",
            EndReason::Abandon => "abandon",
        }
    }

    /// The reason for a word on the wire.
    pub fn from_word(word: &str) -> Option<EndReason> {
        [
            EndReason::Normal,
            EndReason::Resign,
            EndReason::Time,
            EndReason::Abandon,
        ]
        .into_iter()
        .find(|r| r.word() == word)
    }
}

/// How a finished game ended, as one token: `<X|O|draw>:<black>-<white>:<reason>`
/// (`X:40-24:normal`), the form `HISTORY` and the archives use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct GameResult {
    /// The winner, `None` for a draw.
    pub winner: Option<Color>,
    /// Black's score.
    pub black: u32,
    /// White's score.
    pub white: u32,
    /// Why it ended.
    pub reason: EndReason,
}

impl GameResult {
    /// Reads the token [`GameResult`]'s `Display` writes; `None` for anything else.
    pub fn parse(token: &str) -> Option<GameResult> {
        let mut parts = token.split(':');
        let (winner, scores, reason) = (parts.next()?, parts.next()?, parts.next()?);
        if parts.next().is_some() {
            return None;
        }
        let (black, white) = scores.split_once('-')?;
        Some(GameResult {
            winner: optional_word(winner, "draw", Color::from_letter)?,
            black: black.parse().ok()?,
            white: white.parse().ok()?,
            reason: EndReason::from_word(reason)?,
        })
    }
}

impl fmt::Display for GameResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.winner {
            Some(color) => write!(f, "{}", color.letter())?,
            None => f.write_str("draw")?,
        }
        write!(f, ":{}-{}:{}", self.black, self.white, self.reason.word())
    }
}

/// A field that is either the word `none` stands for nothing, or a value
/// `parse` reads; `None` if it is neither.
pub(super) fn optional_word<T>(
    field: &str,
    none: &str,
    parse: impl Fn(&str) -> Option<T>,
) -> Option<Option<T>> {
    if field == none {
        Some(None)
    } else {
        parse(field).map(Some)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_round_trip_as_one_token() {
        let result = GameResult {
            winner: None,
            black: 32,
            white: 32,
            reason: EndReason::Normal,
        };
        assert_eq!(result.to_string(), "draw:32-32:normal");
        assert_eq!(GameResult::parse("draw:32-32:normal"), Some(result));
        let won = GameResult::parse("X:40-24:time").unwrap();
        assert_eq!(won.winner, Some(Color::Black));
        assert_eq!(won.to_string(), "X:40-24:time");
        for bad in [
            "",
            "X",
            "X:40-24",
            "X:40:normal",
            "Y:1-2:normal",
            "X:1-2:nap",
            "X:1-2:normal:",
        ] {
            assert_eq!(GameResult::parse(bad), None, "{bad}");
        }
    }
}
