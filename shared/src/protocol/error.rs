//! The refusal side of the protocol: `ERR <code> <message>`. The codes are
//! what bots act on, so they live in one enum with their numbers; the message
//! is for people and is kept to one line, so that text from one client cannot
//! forge lines for another.

use std::fmt;

/// The error codes of `ERR` replies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ErrorCode {
    /// 400: unknown command or bad arguments.
    BadRequest,
    /// 401: not logged in, or wrong password.
    Unauthorized,
    /// 403: not allowed (not your game, not your turn, hints off).
    Forbidden,
    /// 404: no such game or player.
    NotFound,
    /// 409: conflict (seat taken, name in use, game over).
    Conflict,
    /// 413: line too long.
    TooLong,
    /// 422: illegal move.
    IllegalMove,
    /// 429: too many commands.
    TooMany,
    /// 503: server full or shutting down.
    Unavailable,
}

impl ErrorCode {
    /// Every code, in numeric order.
    pub const ALL: [ErrorCode; 9] = [
        ErrorCode::BadRequest,
        ErrorCode::Unauthorized,
        ErrorCode::Forbidden,
        ErrorCode::NotFound,
        ErrorCode::Conflict,
        ErrorCode::TooLong,
        ErrorCode::IllegalMove,
        ErrorCode::TooMany,
        ErrorCode::Unavailable,
    ];

    /// The number on the wire.
    pub fn number(self) -> u16 {
        match self {
            ErrorCode::BadRequest => 400,
            ErrorCode::Unauthorized => 401,
            ErrorCode::Forbidden => 403,
            ErrorCode::NotFound => 404,
            ErrorCode::Conflict => 409,
            ErrorCode::TooLong => 413,
            ErrorCode::IllegalMove => 422,
            ErrorCode::TooMany => 429,
            ErrorCode::Unavailable => 503,
        }
    }

    /// What the code means, in a few words (PROTOCOL.md's error table and
    /// the generated protocol reference say it so).
    pub fn meaning(self) -> &'static str {
        match self {
            ErrorCode::BadRequest => "unknown command or bad arguments",
            ErrorCode::Unauthorized => "not logged in, or wrong password",
            ErrorCode::Forbidden => "not allowed (not your game, not your turn, hints off)",
            ErrorCode::NotFound => "no such game or player",
            ErrorCode::Conflict => "conflict (seat taken, name in use, game over)",
            ErrorCode::TooLong => "line too long (dropped; the connection stays)",
            ErrorCode::IllegalMove => "illegal move (the message names the legal moves)",
            ErrorCode::TooMany => "too many commands: slow down",
            ErrorCode::Unavailable => "server full, shutting down, or the write not stored",
        }
    }

    /// The code for a number on the wire.
    pub fn from_number(number: u16) -> Option<ErrorCode> {
        ErrorCode::ALL.into_iter().find(|c| c.number() == number)
    }
}

/// A refused command: the code and a message for people.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProtocolError {
    /// What kind of refusal.
    pub code: ErrorCode,
    /// Why, in words (one line).
    pub message: String,
}

impl ProtocolError {
    /// An error with `code` and `message` (line breaks are replaced by spaces).
    pub fn new(code: ErrorCode, message: impl Into<String>) -> ProtocolError {
        let message = one_line(&message.into());
        ProtocolError { code, message }
    }

    /// A 400 error.
    pub fn bad(message: impl Into<String>) -> ProtocolError {
        ProtocolError::new(ErrorCode::BadRequest, message)
    }
}

impl fmt::Display for ProtocolError {
    /// The reply line without its line feed: `ERR <code> <message>`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ERR {} {}", self.code.number(), self.message)
    }
}

impl std::error::Error for ProtocolError {}

/// Replaces by spaces the characters that could make text from one client
/// forge lines for another, or hide what it says: control characters (`LF`,
/// `CR`, `NEL` among them), the line and paragraph separators U+2028 and
/// U+2029 (which Python's `str.splitlines()` and JavaScript split lines at),
/// and the format characters (bidi overrides that show text reversed,
/// zero-width characters that hide it). See [`is_unsafe_in_a_line`].
pub fn one_line(text: &str) -> String {
    text.chars()
        .map(|c| if is_unsafe_in_a_line(c) { ' ' } else { c })
        .collect()
}

/// Whether [`one_line`] replaces `c`: a control character (general category
/// Cc), a line or paragraph separator (Zl, Zp) or a format character (Cf).
pub fn is_unsafe_in_a_line(c: char) -> bool {
    if c.is_ascii() {
        return c.is_ascii_control();
    }
    c.is_control() || matches!(c, '\u{2028}' | '\u{2029}') || is_format_character(c)
}

/// The format characters, general category Cf of Unicode 17.0, as inclusive
/// ranges. std tells control characters apart (`char::is_control`) but not
/// this category, and the set is small and rarely grows, so it is written
/// out rather than taken from a crate.
const FORMAT_CHARACTERS: [(char, char); 21] = [
    ('\u{00AD}', '\u{00AD}'),   // soft hyphen
    ('\u{0600}', '\u{0605}'),   // Arabic number signs
    ('\u{061C}', '\u{061C}'),   // Arabic letter mark (bidi)
    ('\u{06DD}', '\u{06DD}'),   // Arabic end of ayah
    ('\u{070F}', '\u{070F}'),   // Syriac abbreviation mark
    ('\u{0890}', '\u{0891}'),   // Arabic pound and piastre marks above
    ('\u{08E2}', '\u{08E2}'),   // Arabic disputed end of ayah
    ('\u{180E}', '\u{180E}'),   // Mongolian vowel separator
    ('\u{200B}', '\u{200F}'),   // zero-width space, joiners, LRM, RLM
    ('\u{202A}', '\u{202E}'),   // bidi embeddings and overrides
    ('\u{2060}', '\u{2064}'),   // word joiner, invisible operators
    ('\u{2066}', '\u{206F}'),   // bidi isolates, deprecated format controls
    ('\u{FEFF}', '\u{FEFF}'),   // zero-width no-break space (BOM)
    ('\u{FFF9}', '\u{FFFB}'),   // interlinear annotation
    ('\u{110BD}', '\u{110BD}'), // Kaithi number sign
    ('\u{110CD}', '\u{110CD}'), // Kaithi number sign above
    ('\u{13430}', '\u{1343F}'), // Egyptian hieroglyph format controls
    ('\u{1BCA0}', '\u{1BCA3}'), // shorthand format controls
    ('\u{1D173}', '\u{1D17A}'), // musical symbol beam and phrase controls
    ('\u{E0001}', '\u{E0001}'), // language tag
    ('\u{E0020}', '\u{E007F}'), // tag characters
];

fn is_format_character(c: char) -> bool {
    FORMAT_CHARACTERS
        .iter()
        .any(|&(first, last)| (first..=last).contains(&c))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_breaks_and_format_characters_become_spaces() {
        let text = "a\nb\rc\u{85}d\u{2028}e\u{2029}f\u{202E}g\u{200B}h\u{FEFF}i\u{2066}j\u{E0041}k";
        assert_eq!(one_line(text), "a b c d e f g h i j k");
        // Text that is only text stays as it is, accents, emoji and spaces too.
        let plain = "gg, b\u{E9}ll\u{E9} partie \u{1F600}\u{A0}!";
        assert_eq!(one_line(plain), plain);
    }

    #[test]
    fn the_format_ranges_are_ordered_and_apart() {
        for pair in FORMAT_CHARACTERS.windows(2) {
            let [(first, last), (next, _)] = pair else {
                unreachable!("windows(2) yields pairs")
            };
            assert!(first <= last && last < next, "{pair:?}");
        }
        assert!(!is_format_character('\u{2065}'), "unassigned, not Cf");
    }
}
