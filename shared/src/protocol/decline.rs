//! Why a challenge did not become a game: the reason word of `DECLINE
//! challenge [reason]` and of the `DECLINED <challenge> <name> <reason>`
//! event (the words lichess uses, which bot authors know).

use std::fmt;

/// Why a challenge was declined, withdrawn or dropped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum DeclineReason {
    /// `generic`: no reason given.
    #[default]
    Generic,
    /// `later`: not now.
    Later,
    /// `rated`: only casual games, please.
    Rated,
    /// `casual`: only rated games, please.
    Casual,
    /// `variant`: not this game.
    Variant,
    /// `clock`: not this clock.
    Clock,
    /// `timeout`: nobody answered in time (the daemon's).
    Timeout,
    /// `cancelled`: the challenger withdrew it (the daemon's, for `CANCEL`).
    Cancelled,
    /// `offline`: the challenged is not connected (the daemon's).
    Offline,
}

impl DeclineReason {
    /// Every reason, in the order of the protocol's list.
    pub const ALL: [DeclineReason; 9] = [
        DeclineReason::Generic,
        DeclineReason::Later,
        DeclineReason::Rated,
        DeclineReason::Casual,
        DeclineReason::Variant,
        DeclineReason::Clock,
        DeclineReason::Timeout,
        DeclineReason::Cancelled,
        DeclineReason::Offline,
    ];

    /// The word on the wire.
    pub fn word(self) -> &'static str {
        match self {
            DeclineReason::Generic => "generic",
            DeclineReason::Later => "later",
            DeclineReason::Rated => "rated",
            DeclineReason::Casual => "casual",
            DeclineReason::Variant => "variant",
            DeclineReason::Clock => "clock",
            DeclineReason::Timeout => "timeout",
            DeclineReason::Cancelled => "cancelled",
            DeclineReason::Offline => "offline",
        }
    }

    /// Reads a reason word, in any case.
    pub fn from_word(word: &str) -> Option<DeclineReason> {
        DeclineReason::ALL
            .into_iter()
            .find(|r| r.word().eq_ignore_ascii_case(word))
    }

    /// Whether a player may give it with `DECLINE` (the last three are the
    /// daemon's own).
    pub fn is_a_players(self) -> bool {
        !matches!(
            self,
            DeclineReason::Timeout | DeclineReason::Cancelled | DeclineReason::Offline
        )
    }
}

impl fmt::Display for DeclineReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.word())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_reason_reads_back_from_its_word_in_any_case() {
        for reason in DeclineReason::ALL {
            assert_eq!(DeclineReason::from_word(reason.word()), Some(reason));
            let upper = reason.word().to_ascii_uppercase();
            assert_eq!(DeclineReason::from_word(&upper), Some(reason));
            assert_eq!(reason.to_string(), reason.word());
        }
        assert_eq!(DeclineReason::from_word("busy"), None);
        let players: Vec<&str> = (DeclineReason::ALL.into_iter())
            .filter(|r| r.is_a_players())
            .map(DeclineReason::word)
            .collect();
        assert_eq!(
            players,
            ["generic", "later", "rated", "casual", "variant", "clock"]
        );
    }
}
