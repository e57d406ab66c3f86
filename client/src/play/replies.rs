//! Reading the server's answers: every command sent waits, in order, for
//! its final reply, with what the client must remember to read it (what a
//! `LOGIN` showed, whether a `NEW` leaves a seat open, a `TOP`'s variant).

use std::collections::VecDeque;

use flipline::Variant;
use flipline::protocol::CommandKind;

use crate::play::password::Password;
use crate::play::secret::GuestSecret;

/// The commands awaiting their answers, oldest first.
#[derive(Debug, Default)]
pub struct Replies {
    /// Commands sent and not yet answered, oldest first (`None` for a keyword
    /// that names no command: the server refuses it, and that answer is
    /// waited for too).
    pub pending: VecDeque<Option<CommandKind>>,
    /// Whether the last reply was `OK`.
    pub last_ok: bool,
    /// Whether the last reply was `OK asked` (an `UNDO` waiting for the
    /// other player: nothing follows it).
    pub last_asked: bool,
    /// What each `LOGIN` among `pending` showed, oldest first.
    pub(super) logins: VecDeque<LoginSent>,
    /// For each `NEW` among `pending`, oldest first: whether it leaves a
    /// seat open (no bot, not hotseat).
    pub(super) news: VecDeque<bool>,
    /// For each `TOP` among `pending`, oldest first: its variant.
    pub(super) tops: VecDeque<Variant>,
    /// `RATING` lines since the last final reply: a `TOP`'s table when a
    /// `TOP` answers next (none at all is said in words).
    pub(super) top_lines: usize,
}

/// A `LOGIN` sent and not yet answered.
#[derive(Clone, Debug, Default)]
pub(super) struct LoginSent {
    /// The name it logs in with (empty when the line has none).
    pub(super) name: String,
    /// The secret it showed.
    pub(super) secret: Option<GuestSecret>,
    /// The password it showed.
    pub(super) password: Option<Password>,
    /// Whether the client added the secret (or the password) to a plain `LOGIN name`, so that
    /// a refusal is answered with that plain `LOGIN`.
    pub(super) added: bool,
}
