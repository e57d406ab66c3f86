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

/// Replaces control characters (line breaks among them) by spaces, so that text
/// from one client cannot forge lines for another.
pub fn one_line(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}
