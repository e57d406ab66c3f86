//! Reason words: the stable word a line ends in where a program has to act on
//! more than its code or keyword (`ERR 401 'ann' is registered: LOGIN ann
//! <password> [password-needed]`, `INFO closing: no LOGIN within 30 s
//! [login-deadline]`). The text before it is for people and may change; the
//! word does not. Appended, so that what the lines said before is still there
//! for programs written before the words; written and read here only, so that
//! the daemon and the client cannot disagree on them.

/// A reason word (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Reason {
    /// `ERR 401` to a `LOGIN` without a password: the name is registered,
    /// and its password logs in.
    PasswordNeeded,
    /// `INFO` before the connection closes: it neither logged in nor began
    /// watching a game within `login_deadline_secs`.
    LoginDeadline,
    /// `ERR 403` to a `LOGIN` with a password on the plain port of a server
    /// that takes passwords only over TLS (`tls.plain_passwords`).
    TlsRequired,
}

impl Reason {
    /// Every reason word.
    pub const ALL: [Reason; 3] = [
        Reason::PasswordNeeded,
        Reason::LoginDeadline,
        Reason::TlsRequired,
    ];

    /// The word, as written between the brackets.
    pub fn word(self) -> &'static str {
        match self {
            Reason::PasswordNeeded => "password-needed",
            Reason::LoginDeadline => "login-deadline",
            Reason::TlsRequired => "tls-required",
        }
    }

    /// Reads the word [`Reason::word`] writes, exactly.
    pub fn from_word(word: &str) -> Option<Reason> {
        Reason::ALL.into_iter().find(|r| r.word() == word)
    }

    /// `text` (an `ERR` message, an `INFO` text) ending in this reason.
    pub fn append_to(self, text: &str) -> String {
        format!("{text} [{}]", self.word())
    }

    /// The reason `text` (an `ERR` message, an `INFO` text) ends in, if it
    /// ends in one this build knows.
    pub fn of(text: &str) -> Option<Reason> {
        let last = text.split_whitespace().next_back()?;
        Reason::from_word(last.strip_prefix('[')?.strip_suffix(']')?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{ErrorCode, Event, ProtocolError, ServerLine};

    #[test]
    fn a_reason_reads_back_from_the_line_it_ends() {
        for reason in Reason::ALL {
            assert_eq!(Reason::from_word(reason.word()), Some(reason));
            let error = ProtocolError::new(ErrorCode::Unauthorized, reason.append_to("why"));
            let ServerLine::Err(read) = ServerLine::parse(&error.to_string()) else {
                panic!("{error}");
            };
            assert_eq!(
                (read.code, Reason::of(&read.message)),
                (error.code, Some(reason))
            );
            let info = format!("INFO {}", reason.append_to("closing"));
            let ServerLine::Event(Event::Info(text)) = ServerLine::parse(&info) else {
                panic!("{info}");
            };
            assert_eq!(Reason::of(&text), Some(reason));
        }
    }

    #[test]
    fn only_a_last_bracketed_word_known_is_a_reason() {
        assert_eq!(Reason::of("closing: no LOGIN within 30 s"), None);
        assert_eq!(Reason::of("login-deadline"), None);
        assert_eq!(Reason::of("[login-deadline] closing"), None);
        assert_eq!(Reason::of("closing [Login-Deadline]"), None);
        assert_eq!(Reason::of("closing [some-later-word]"), None);
        assert_eq!(Reason::of(""), None);
        assert_eq!(
            Reason::of("closing [login-deadline] "),
            Some(Reason::LoginDeadline)
        );
    }
}
