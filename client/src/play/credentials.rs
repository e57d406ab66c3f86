//! How the client logs in again: the guest's secret or the password a
//! name logged in with, what became of kept secrets, and how the last
//! `LOGIN` ended. Never shown; the reconnect and the secret file read it.

use flipline::protocol::{ErrorCode, GameId};

use crate::play::password::Password;
use crate::play::secret::GuestSecret;

/// A change to the secrets kept for a server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SecretChange {
    /// The name's secret is now this one.
    Keep(String, GuestSecret),
    /// The name has no secret (refused, or a registered name).
    Forget(String),
}

/// The credentials of the name logged in, and the state of its logins.
#[derive(Debug, Default)]
pub struct Credentials {
    /// The secret the server gave `name`, a guest's: what takes the name
    /// (and a seat kept through a disconnect) back. Never shown.
    pub secret: Option<GuestSecret>,
    /// The password `name` logged in with, a registered name's: what a
    /// reconnect logs in with again. Never shown.
    pub password: Option<Password>,
    /// The name a plain `LOGIN` was refused for as registered, whose
    /// password the person may be asked for (interactive.rs takes it).
    pub password_wanted: Option<String>,
    /// What became of kept secrets, oldest first, for the link to write to
    /// the secret file.
    pub secret_changes: Vec<SecretChange>,
    /// How the last `LOGIN` ended: `Some(true)` logged in, `Some(false)`
    /// refused; `None` while it is unanswered or a retry is queued. Whoever
    /// waits for a login sets it to `None` first.
    pub login_answer: Option<bool>,
    /// The last `LOGIN` was refused for a reason that passes by itself:
    /// the name still held by a connection the server has not seen go
    /// (`409`; on a cluster, one to a node that died), or the server busy
    /// (`503`). A reconnect tries again rather than going on logged out.
    pub login_passing: Option<ErrorCode>,
    /// The game in play whose seat the last login said is kept for the
    /// name (`OK ann seat 24`), until whoever takes it back takes it.
    pub kept_seat: Option<GameId>,
    /// Whether the client takes a kept seat back by itself (at the
    /// terminal) rather than saying how: only the words differ.
    pub takes_seats_back: bool,
}
