//! Messages between the actors: plain data, and recipients instead of the
//! actor types of their senders, so that this module sits at the bottom of
//! the daemon's imports (the game knows no session or lobby type, the lobby
//! no session type). Sessions ask (`send`) and wait for replies; games and
//! the lobby only tell sessions (`do_send`), so no two actors ever wait on
//! each other.
//!
//! A session reaches a game only through its route ([`GameHandle`]), which
//! the lobby, the one directory of games, hands out with the seat or on
//! `WATCH`; the route's recipient is what a game on another machine would
//! replace.

use std::sync::Arc;
use std::sync::atomic::AtomicU32;

use actix::{ArbiterHandle, Message, Recipient, WeakRecipient};
use flipline::protocol::{ClockSpec, Event, GameId, NewGame, ProtocolError};
use flipline::{Color, Square, Variant};

use crate::outbox::Text;
use crate::rules::lobby::{Left, Order};

pub use crate::rules::{ConnId, Name};

/// A successful reply: data lines sent before it (each ending in LF, often none)
/// and the text after `OK` (may be empty).
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Answer {
    /// Data lines, each ending in LF.
    pub data: String,
    /// What follows `OK`.
    pub ok: String,
}

impl Answer {
    /// `OK <text>` with no data lines.
    pub fn ok(text: impl Into<String>) -> Answer {
        Answer {
            data: String::new(),
            ok: text.into(),
        }
    }
}

/// The final reply to a command.
pub type Reply = Result<Answer, ProtocolError>;

// ---- to sessions ----

/// What games and the lobby tell a session.
#[derive(Message)]
#[rtype(result = "()")]
pub enum ToSession {
    /// Lines to write to the client.
    Deliver(Text),
    /// The session now holds a seat in this game (another player's command
    /// put it there: a pairing or a rematch).
    Seated(SeatRef),
    /// The lobby's periodic call: close if idle too long.
    IdleCheck,
    /// The daemon is stopping: say so and close.
    Shutdown,
}

/// A connection as games and the lobby keep it: weak, so that a connection
/// that has gone is not kept alive by a game, and boxed to one pointer, so
/// that a seat stays small (a recipient is two).
#[derive(Clone, Debug)]
pub struct SessionRef(Box<WeakRecipient<ToSession>>);

impl SessionRef {
    /// A weak reference to a session's mailbox.
    pub fn new(recipient: WeakRecipient<ToSession>) -> SessionRef {
        SessionRef(Box::new(recipient))
    }

    /// Tells the session `msg`, if it is still there.
    pub fn tell(&self, msg: ToSession) {
        if let Some(session) = self.0.upgrade() {
            session.do_send(msg);
        }
    }

    /// Whether the session is gone.
    pub fn is_gone(&self) -> bool {
        self.0.upgrade().is_none_or(|r| !r.connected())
    }
}

/// A running game as the lobby, its players' sessions and the game itself hold
/// it: one allocation per game, shared. It is the route to the game: the
/// lobby hands it out, sessions keep it for their seat and what they watch.
#[derive(Debug)]
pub struct GameHandle {
    /// The game.
    pub game: GameId,
    /// Its mailbox.
    pub tx: Recipient<ToGame>,
    /// Plies committed: written by the game on every move, read by the lobby
    /// for `LIST`, so that a move needs no message to the lobby.
    pub ply: AtomicU32,
}

/// A game and its actor, as a session keeps it.
pub type SeatRef = Arc<GameHandle>;

// ---- to games ----

/// What a seated player asks of their game.
#[derive(Clone, Debug)]
pub enum Action {
    /// `MOVE`.
    Move(Square),
    /// `PASS`.
    Pass,
    /// `END`.
    Resign,
    /// `BOARD`.
    Board,
    /// `SAY`.
    Say(String),
}

/// Everything a game is told or asked. One message type, so that a route
/// is one recipient.
#[derive(Message)]
#[rtype(result = "Reply")]
pub enum ToGame {
    /// A player's action (`MOVE`, `PASS`, `END`, `BOARD`, `SAY`).
    Play {
        /// Who asks.
        name: Name,
        /// What they ask.
        action: Action,
    },
    /// `HINT`: answered once the engine has thought.
    Hint {
        /// Who asks.
        name: Name,
    },
    /// `WATCH`: follow the game.
    Watch {
        /// The spectator's connection number.
        id: ConnId,
        /// Its mailbox.
        session: SessionRef,
    },
    /// A spectator leaves (by `LEAVE` or by disconnecting); not answered.
    Unwatch {
        /// The spectator's connection number.
        id: ConnId,
    },
    /// What the lobby decided about who sits at the game (see
    /// [`crate::rules::lobby::Order`]); `None` where the connection is
    /// already gone. Not answered.
    Seating(Order<Option<SessionRef>>),
}

/// What a game tells the lobby.
#[derive(Message)]
#[rtype(result = "()")]
pub enum FromGame {
    /// The game ended: sent before the reply to the command that ended it
    /// and before anyone hears `OVER`.
    Ended(GameId),
    /// The game's actor stopped.
    Closed(GameId),
}

// ---- to the lobby ----

/// A connection opened.
#[derive(Message)]
#[rtype(result = "()")]
pub struct Connected {
    /// The connection's number.
    pub id: ConnId,
    /// Its mailbox.
    pub session: SessionRef,
    /// Its worker thread: games one of its players starts run there.
    pub worker: ArbiterHandle,
}

/// A connection closed.
#[derive(Message)]
#[rtype(result = "()")]
pub struct Gone {
    /// The connection's number.
    pub id: ConnId,
    /// The name it was logged in with.
    pub name: Option<Name>,
}

/// `LOGIN`, once the password is checked.
#[derive(Message)]
#[rtype(result = "Result<(), ProtocolError>")]
pub struct Login {
    /// The name.
    pub name: Name,
    /// The connection.
    pub id: ConnId,
}

/// `NEW`: the seat in the new game.
#[derive(Message)]
#[rtype(result = "Result<SeatRef, ProtocolError>")]
pub struct Create {
    /// The creator.
    pub name: Name,
    /// The arguments of `NEW`.
    pub spec: NewGame,
}

/// `SEEK`: a seat in a new game at once, or `None` while waiting.
#[derive(Message)]
#[rtype(result = "Result<Option<SeatRef>, ProtocolError>")]
pub struct Seek {
    /// The seeker.
    pub name: Name,
    /// The game wanted.
    pub variant: Variant,
    /// The clock wanted.
    pub clock: Option<ClockSpec>,
}

/// `JOIN`: the open seat, or one's own seat again; the seat and its colour.
#[derive(Message)]
#[rtype(result = "Result<(SeatRef, Color), ProtocolError>")]
pub struct Join {
    /// Who.
    pub name: Name,
    /// The game.
    pub game: GameId,
}

/// `LEAVE`: what was left.
#[derive(Message)]
#[rtype(result = "Result<Left, ProtocolError>")]
pub struct Leave {
    /// Who.
    pub name: Name,
    /// Whether the connection watches games (left after a seat, before a seek).
    pub watching: bool,
}

/// `REMATCH`: the seat in the new game, or `None` while others have not asked.
#[derive(Message)]
#[rtype(result = "Result<Option<SeatRef>, ProtocolError>")]
pub struct Rematch {
    /// Who.
    pub name: Name,
}

/// Games that were in play when the daemon last stopped: the lobby starts their
/// actors again (answers how many it started).
#[derive(Message)]
#[rtype(result = "usize")]
pub struct Recover(pub Vec<crate::store::GameRecord>);

/// The route to a game, for `WATCH`.
#[derive(Message)]
#[rtype(result = "Option<SeatRef>")]
pub struct Find(pub GameId);

/// `LIST`: one `GAME` line per game.
#[derive(Message)]
#[rtype(result = "Vec<Event>")]
pub struct ListGames;

/// `WHO`: one `PLAYER` line per logged-in name.
#[derive(Message)]
#[rtype(result = "Vec<Event>")]
pub struct ListPlayers;

/// Tell every connection that the daemon is stopping.
#[derive(Message)]
#[rtype(result = "usize")]
pub struct BroadcastShutdown;
