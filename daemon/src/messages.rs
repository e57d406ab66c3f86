//! Messages between the actors. Sessions ask (`send`) and wait for replies;
//! games and the lobby only tell sessions (`do_send`), so no two actors ever
//! wait on each other.

use std::sync::Arc;
use std::sync::atomic::AtomicU32;

use actix::{Addr, Message};
use flipline::protocol::{ClockSpec, Event, GameId, NewGame, ProtocolError};
use flipline::{Color, Square, Variant};

use crate::game::GameActor;
use crate::outbox::Text;
use crate::session::Session;

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
/// costs two allocations and an idle game should be small.
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

/// A logged-in name. Shared by the session, the lobby and the game instead of
/// copied into each: an idle game should be small, and a move's `Play` should
/// not allocate.
pub type Name = Arc<str>;

/// Someone taking part in a game: a name and its connection.
#[derive(Clone, Debug)]
pub struct Member {
    /// The logged-in name.
    pub name: Name,
    /// The connection.
    pub session: Addr<Session>,
}

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
    /// `LEAVE`.
    Leave,
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

/// `REMATCH`: answered at once while waiting for the opponent, or once the lobby
/// has made the new game.
#[derive(Message)]
#[rtype(result = "Reply")]
pub struct Rematch {
    /// Who asks.
    pub name: Name,
}

/// `HINT`: answered once the engine has thought.
#[derive(Message)]
#[rtype(result = "Reply")]
pub struct Hint {
    /// Who asks.
    pub name: Name,
}

/// `JOIN`: take the free seat, or one's own seat back within the grace period.
#[derive(Message)]
#[rtype(result = "Result<Color, ProtocolError>")]
pub struct Join(pub Member);

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

/// A seated player's connection is gone.
#[derive(Message)]
#[rtype(result = "()")]
pub struct Disconnected {
    /// The player's name.
    pub name: Name,
}

// ---- to the lobby ----

/// A connection opened.
#[derive(Message)]
#[rtype(result = "()")]
pub struct Connected {
    /// The connection's number.
    pub id: u64,
    /// Its actor.
    pub session: Addr<Session>,
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
    pub id: u64,
    /// The name it was logged in with.
    pub name: Option<Name>,
}

/// `LOGIN`.
#[derive(Message)]
#[rtype(result = "Result<(), ProtocolError>")]
pub struct Login(pub Member);

/// The other seat of a game being created.
#[derive(Clone, Debug)]
pub enum SeatSpec {
    /// Free until someone joins.
    Open,
    /// A person.
    Human(Member),
    /// The engine at a level.
    Bot(u8),
    /// A person who is not connected: a game recovered at start, whose players
    /// come back with `LOGIN` and `JOIN` within the grace period.
    Away(Name),
}

impl SeatSpec {
    /// The name in the seat (`bot:N` for a bot), `None` while open.
    pub fn name(&self) -> Option<Name> {
        match self {
            SeatSpec::Open => None,
            SeatSpec::Human(member) => Some(member.name.clone()),
            SeatSpec::Bot(level) => Some(bot_name(*level)),
            SeatSpec::Away(name) => Some(name.clone()),
        }
    }

    /// The seat a stored name stands for: `bot:N` is the engine, any other name
    /// a person (not connected yet), none an open seat.
    pub fn from_stored(name: Option<&str>) -> SeatSpec {
        match name {
            None => SeatSpec::Open,
            Some(name) => match name.strip_prefix("bot:").map(str::parse::<u8>) {
                Some(Ok(level)) => SeatSpec::Bot(level),
                _ => SeatSpec::Away(Name::from(name)),
            },
        }
    }
}

/// The name a bot plays under: `bot:` and its level.
pub fn bot_name(level: u8) -> Name {
    Name::from(format!("bot:{level}"))
}

/// `NEW`.
#[derive(Message)]
#[rtype(result = "Result<SeatRef, ProtocolError>")]
pub struct Create {
    /// The creator.
    pub creator: Member,
    /// The arguments of `NEW`.
    pub spec: NewGame,
    /// The creator's worker thread (see [`Spawn::near`]).
    pub near: actix::ArbiterHandle,
}

/// `SEEK`: a seat in a new game at once, or `None` while waiting.
#[derive(Message)]
#[rtype(result = "Result<Option<SeatRef>, ProtocolError>")]
pub struct Seek {
    /// The seeker.
    pub member: Member,
    /// The game wanted.
    pub variant: Variant,
    /// The clock wanted.
    pub clock: Option<ClockSpec>,
    /// The seeker's worker thread (see [`Spawn::near`]).
    pub near: actix::ArbiterHandle,
}

/// Withdraws a seek; answers whether there was one.
#[derive(Message)]
#[rtype(result = "bool")]
pub struct CancelSeek {
    /// The seeker's name.
    pub name: Name,
}

/// A game played by these seats (used for rematches).
#[derive(Message)]
#[rtype(result = "Result<SeatRef, ProtocolError>")]
pub struct Spawn {
    /// The variant.
    pub variant: Variant,
    /// The clock.
    pub clock: Option<ClockSpec>,
    /// Black's seat.
    pub black: SeatSpec,
    /// White's seat.
    pub white: SeatSpec,
    /// Moves already played (every pass written out), checked to be legal.
    pub start: Vec<flipline::Move>,
    /// The worker thread of one of its players, to start the game on: their
    /// messages to each other then stay on that thread. `None`: any.
    pub near: Option<actix::ArbiterHandle>,
}

/// Games that were in play when the daemon last stopped: the lobby starts their
/// actors again (answers how many it started).
#[derive(Message)]
#[rtype(result = "usize")]
pub struct Recover(pub Vec<crate::store::GameRecord>);

/// The actor of a game, for `JOIN` and `WATCH`.
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

/// A game's seats or status changed.
#[derive(Message)]
#[rtype(result = "()")]
pub struct GameChanged {
    /// The game.
    pub game: GameId,
    /// Black's name.
    pub black: Option<Name>,
    /// White's name.
    pub white: Option<Name>,
    /// Open, playing or over.
    pub status: crate::store::Status,
}

/// A game's actor stopped.
#[derive(Message)]
#[rtype(result = "()")]
pub struct GameClosed(pub GameId);

/// Tell every connection that the daemon is stopping.
#[derive(Message)]
#[rtype(result = "usize")]
pub struct BroadcastShutdown;
