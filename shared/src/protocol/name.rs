//! Which names a player may log in with. A name is printed as one field of
//! lines that also carry `-` for an open seat and that start with a keyword,
//! so a name must never read as either, nor as one of the daemon's bots:
//! `check_name` refuses those, and says which rule a name breaks.

use std::fmt;

use super::command_kind::CommandKind;
use super::event::Event;
use super::server_line::REPLY_KEYWORDS;

/// Longest name a player may log in with.
pub const MAX_NAME_LEN: usize = 20;

/// What the names of the daemon's bots start with (`bot:3`); no person may
/// take such a name, so that a seat named so is always the engine.
pub const BOT_NAME_PREFIX: &str = "bot:";

/// Why a name may not be logged in with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NameError {
    /// Empty, longer than [`MAX_NAME_LEN`], or with a character other than an
    /// ASCII letter, a digit, `_` or `-`.
    Shape,
    /// Only dashes: `-` is what lines print for an open seat.
    Dashes,
    /// A keyword a protocol line starts with, in any case (`OK`, `move`).
    Keyword,
    /// Starts with [`BOT_NAME_PREFIX`].
    Bot,
}

impl fmt::Display for NameError {
    /// The rule the name breaks, for people.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            NameError::Shape => "1-20 letters, digits, _ or -",
            NameError::Dashes => "a name of dashes only reads as an open seat",
            NameError::Keyword => "a protocol keyword is not a name",
            NameError::Bot => "names starting bot: are the daemon's bots",
        })
    }
}

/// Whether `name` may be logged in with, and if not, which rule it breaks.
pub fn check_name(name: &str) -> Result<(), NameError> {
    // The bot prefix is checked first: its `:` breaks the shape too, but the
    // more telling reason is the one to report.
    if has_bot_prefix(name) {
        return Err(NameError::Bot);
    }
    if !has_name_shape(name) {
        return Err(NameError::Shape);
    }
    if name.bytes().all(|b| b == b'-') {
        return Err(NameError::Dashes);
    }
    if is_line_keyword(name) || is_field_word(name) {
        return Err(NameError::Keyword);
    }
    Ok(())
}

/// Whether `name` may be logged in with (see [`check_name`]).
pub fn valid_name(name: &str) -> bool {
    check_name(name).is_ok()
}

/// Whether `word`, in any case, is a word a protocol line starts with: a
/// command's keyword, an event's, or `HELLO`, `OK`, `ERR`.
pub fn is_line_keyword(word: &str) -> bool {
    CommandKind::from_keyword(word).is_some()
        || Event::KEYWORDS
            .iter()
            .chain(REPLY_KEYWORDS.iter())
            .any(|keyword| keyword.eq_ignore_ascii_case(word))
}

/// Words a line writes where a name would stand: `TOURNEY <t> over draw`
/// has no winner, so no winner may be called so.
const FIELD_WORDS: [&str; 1] = ["draw"];

fn is_field_word(name: &str) -> bool {
    FIELD_WORDS.iter().any(|w| w.eq_ignore_ascii_case(name))
}

fn has_bot_prefix(name: &str) -> bool {
    name.get(..BOT_NAME_PREFIX.len())
        .is_some_and(|start| start.eq_ignore_ascii_case(BOT_NAME_PREFIX))
}

fn has_name_shape(name: &str) -> bool {
    (1..=MAX_NAME_LEN).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_rule_refuses_its_names_and_says_why() {
        for (name, rule) in [
            ("", NameError::Shape),
            ("x!", NameError::Shape),
            ("a".repeat(MAX_NAME_LEN + 1).as_str(), NameError::Shape),
            ("-", NameError::Dashes),
            ("---", NameError::Dashes),
            ("OK", NameError::Keyword),
            ("ok", NameError::Keyword),
            ("Err", NameError::Keyword),
            ("hello", NameError::Keyword),
            ("moved", NameError::Keyword),
            ("Player", NameError::Keyword),
            ("login", NameError::Keyword),
            ("Draw", NameError::Keyword),
            ("tourney", NameError::Keyword),
            ("bot:3", NameError::Bot),
            ("BOT:x", NameError::Bot),
        ] {
            assert_eq!(check_name(name), Err(rule), "{name:?}");
        }
        for name in [
            "ann",
            "bot-7",
            "-x-",
            "_",
            "OKAY",
            "bot",
            "a".repeat(20).as_str(),
        ] {
            assert_eq!(check_name(name), Ok(()), "{name:?}");
        }
    }

    #[test]
    fn every_keyword_of_every_list_is_refused() {
        let commands = CommandKind::ALL.map(CommandKind::keyword);
        for keyword in commands
            .iter()
            .chain(&Event::KEYWORDS)
            .chain(&REPLY_KEYWORDS)
        {
            assert_eq!(check_name(keyword), Err(NameError::Keyword), "{keyword}");
            let lower = keyword.to_ascii_lowercase();
            assert_eq!(check_name(&lower), Err(NameError::Keyword), "{lower}");
        }
    }
}
