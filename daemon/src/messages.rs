//! Messages between the actors. Sessions ask (`send`) and wait for replies;
//! games and the lobby only tell sessions (`do_send`), so no two actors ever
//! wait on each other.

use std::sync::Arc;
use std::sync::atomic::AtomicU32;

use actix::{Addr, ArbiterHandle, Message, WeakAddr};
use flipline::protocol::{ClockSpec, Event, GameId, NewGame, ProtocolError};
use flipline::{Color, Square, Variant};

use crate::game::GameActor;
use crate::outbox::Text;
use crate::rules::lobby::{Left, Order};
use crate::session::Session;

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

/// Lines to write to the client.
#[derive(Message)]
#[rtype(result = "()")]
pub struct Deliver(pub Text);

/// The session now holds a seat in this game (after a pairing or a rematch).
#[derive(Message)]
#[rtype(result = "()")]
pub struct Seated(pub SeatRef);

/// The daemon is stopping: say so and close.
#[derive(Message)]
#[rtype(result = "()")]
pub struct ShutdownNotice;

/// A running game as the lobby, its players' sessions and the game itself hold
/// it: one allocation per game, shared, since every copy of an actix `Addr`
/// costs two allocations and an idle game should be small. It is the route to
/// the game: the lobby hands it out, sessions keep it for their seat.
#[derive(Debug)]
pub struct GameHandle {
    /// The game.
    pub game: GameId,
    /// Its actor.
    pub addr: Addr<GameActor>,
    /// Plies committed: written by the game on every move, read by the lobby
    /// for `LIST`, so that a move needs no message to the lobby.
    pub ply: AtomicU32,
}

/// A game and its actor, as a session keeps it.
pub type SeatRef = Arc<GameHandle>;

/// A connection as a game keeps it: weak, since a strong actix address costs
/// two allocations for as long as it is kept, and upgraded for each message
/// (which costs them only while it is sent).
pub type SessionRef = WeakAddr<Session>;

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

/// A player's action in a game.
#[derive(Message)]
#[rtype(result = "Reply")]
pub struct Play {
    /// Who asks.
    pub name: Name,
    /// What they ask.
    pub action: Action,
}

/// `HINT`: answered once the engine has thought.
#[derive(Message)]
#[rtype(result = "Reply")]
pub struct Hint {
    /// Who asks.
    pub name: Name,
}

/// `WATCH`: follow the game.
#[derive(Message)]
#[rtype(result = "Reply")]
pub struct Watch {
    /// The spectator's connection.
    pub session: Addr<Session>,
}

/// A spectator leaves (by `LEAVE` or by disconnecting).
#[derive(Message)]
#[rtype(result = "()")]
pub struct Unwatch {
    /// The spectator's connection.
    pub session: Addr<Session>,
}

/// What the lobby decided about who sits at a game (see
/// [`crate::rules::lobby::Order`]); `None` where the connection is already gone.
#[derive(Message)]
#[rtype(result = "()")]
pub struct Seating(pub Order<Option<SessionRef>>);

// ---- to the lobby ----

/// A connection opened.
#[derive(Message)]
#[rtype(result = "()")]
pub struct Connected {
    /// The connection's number.
    pub id: ConnId,
    /// Its actor.
    pub session: Addr<Session>,
    /// Its worker thread: games one of its players starts run there.
    pub worker: ArbiterHandle,
}

/// The lobby's periodic call to every connection: close if idle too long.
#[derive(Message)]
#[rtype(result = "()")]
pub struct IdleCheck;

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

/// The actor of a game, for `WATCH`.
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

/// A game ended: sent by the game before anyone hears `OVER`.
#[derive(Message)]
#[rtype(result = "()")]
pub struct GameEnded(pub GameId);

/// A game's actor stopped.
#[derive(Message)]
#[rtype(result = "()")]
pub struct GameClosed(pub GameId);

/// Tell every connection that the daemon is stopping.
#[derive(Message)]
#[rtype(result = "usize")]
pub struct BroadcastShutdown;
