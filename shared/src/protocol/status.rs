//! The status words of data lines: a game's in `GAME` (`LIST`) and `HISTORY`
//! lines, a player's in `PLAYER` (`WHO`) lines. Typed, so that the daemon
//! cannot write a word the clients do not read, and the clients compare
//! values instead of strings.

use std::fmt;

use super::GameId;

/// Where a game stands, as `GAME` and `HISTORY` lines say it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GameStatus {
    /// `open`: made with a free seat; nobody has joined yet.
    Open,
    /// `playing`: both seats filled, being played.
    Playing,
    /// `over`: finished (`LIST` shows such a game while someone still sits in
    /// it).
    Over,
    /// `cancelled`: closed while still open, its creator gone before anyone
    /// joined. Only `HISTORY` says it: `LIST` no longer shows such a game.
    Cancelled,
}

impl GameStatus {
    /// Every status, in the order a game may go through them.
    pub const ALL: [GameStatus; 4] = [
        GameStatus::Open,
        GameStatus::Playing,
        GameStatus::Over,
        GameStatus::Cancelled,
    ];

    /// The word on the wire.
    pub fn word(self) -> &'static str {
        match self {
            GameStatus::Open => "open",
            GameStatus::Playing => "playing",
            GameStatus::Over => "over",
            GameStatus::Cancelled => "cancelled",
        }
    }

    /// The status for a word on the wire; `None` for any other text.
    pub fn parse(word: &str) -> Option<GameStatus> {
        GameStatus::ALL.into_iter().find(|s| s.word() == word)
    }
}

impl fmt::Display for GameStatus {
    /// The word, as [`GameStatus::parse`] reads it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.word())
    }
}

/// What `WHO` says of a logged-in name, in its `PLAYER` line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PlayerStatus {
    /// `idle`: neither seated nor seeking.
    Idle,
    /// `seeking`: waiting to be paired.
    Seeking,
    /// `playing <game>`: seated in a game that is open or in play (a game made
    /// with `NEW` and waiting for an opponent counts).
    Playing(GameId),
}

impl PlayerStatus {
    /// Reads what `Display` writes: `idle`, `seeking` or `playing <game>`;
    /// `None` for any other text.
    pub fn parse(text: &str) -> Option<PlayerStatus> {
        match text.split_once(' ') {
            None if text == "idle" => Some(PlayerStatus::Idle),
            None if text == "seeking" => Some(PlayerStatus::Seeking),
            Some(("playing", game)) => game.parse().ok().map(PlayerStatus::Playing),
            _ => None,
        }
    }
}

impl fmt::Display for PlayerStatus {
    /// The status as a `PLAYER` line ends: `idle`, `seeking`, `playing 7`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PlayerStatus::Idle => f.write_str("idle"),
            PlayerStatus::Seeking => f.write_str("seeking"),
            PlayerStatus::Playing(game) => write!(f, "playing {game}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_are_the_words_of_the_protocol() {
        let words: Vec<String> = GameStatus::ALL.iter().map(|s| s.to_string()).collect();
        assert_eq!(words, ["open", "playing", "over", "cancelled"]);
        for status in GameStatus::ALL {
            assert_eq!(GameStatus::parse(status.word()), Some(status));
        }
        for (status, text) in [
            (PlayerStatus::Idle, "idle"),
            (PlayerStatus::Seeking, "seeking"),
            (PlayerStatus::Playing(7), "playing 7"),
        ] {
            assert_eq!(status.to_string(), text);
            assert_eq!(PlayerStatus::parse(text), Some(status));
        }
        for bad in ["", "Open", "open ", "play", "cancelled 3"] {
            assert_eq!(GameStatus::parse(bad), None, "{bad:?}");
        }
        for bad in [
            "",
            "playing",
            "playing ",
            "playing x",
            "idle 3",
            "Seeking",
            "watching 2",
        ] {
            assert_eq!(PlayerStatus::parse(bad), None, "{bad:?}");
        }
    }
}
