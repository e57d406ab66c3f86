//! flipd's rules above the board: pure code, no actors, no sockets, no disk,
//! no clock reads and no process-wide state (time, randomness and stored facts
//! come in as arguments). The daemon's actors only feed them messages and
//! timer firings and carry out what they return. This crate depends on
//! `flipline` and plain data crates only, so the compiler keeps it pure:
//! nothing here can reach an actor, a socket or a file.
//!
//! - [`table`]: one game at its table: seats and who is connected, the phase,
//!   the clocks, grace periods and abandonment, hotseat, the hint policy, and
//!   the events each change produces. `GameActor` is its shell.
//! - [`lobby`]: names online, seeks and pairing, open games, rematches, and
//!   the one place that knows where each player sits. `Lobby` is its shell.
//! - [`admission`]: who may take a connection place (the cap, per address,
//!   the places kept for players). The daemon's `admission` is its shell.
//! - [`guesses`]: wrong passwords counted per name from an address, per
//!   address and per name, so that parallel connections do not multiply
//!   guesses and an attack does not hold the owner. The daemon's `accounts` keeps
//!   it; [`bounded`] keeps its maps (and the registrations') within a bound.
//! - [`registrations`]: names registered per address, an allowance that
//!   refills at `registrations_per_hour`.
//! - [`registered`]: the registered names themselves, case-folded, and the
//!   registrations in flight, so that a guest's `LOGIN` reads no store.
//! - [`lease`]: a cluster node's lease as the node judges it (when it must
//!   stop acknowledging); [`numbers`]: game numbers, counted on or taken
//!   in blocks shared by a cluster's nodes.
//! - [`clock`]: chess-clock arithmetic; [`peer`]: an address as the limits
//!   count it.
//!
//! They live beside the daemon rather than in `flipline` because they are the
//! server's policy (grace periods, hints, who may sit where), which neither the
//! client nor the engine needs.

pub mod admission;
pub mod bounded;
pub mod challenges;
pub mod clock;
pub mod glicko;
pub mod guesses;
pub mod lease;
pub mod listing;
pub mod lobby;
pub mod numbers;
pub mod peer;
pub mod ratings;
pub mod refusal;
pub mod registered;
pub mod registrations;
pub mod seek_pool;
pub mod table;
pub mod tourney;
pub mod tourney_desk;
pub mod tourney_facts;
pub mod tourney_pairing;
pub mod tourneys;

#[cfg(test)]
mod guesses_tests;
#[cfg(test)]
mod lobby_across_tests;
#[cfg(test)]
mod lobby_login_tests;
#[cfg(test)]
mod lobby_pool_tests;
#[cfg(test)]
mod lobby_tests;
#[cfg(test)]
mod sim;
#[cfg(test)]
mod table_tests;

use std::sync::Arc;

use flipline::protocol::BOT_NAME_PREFIX;

/// A logged-in name. Shared (`Arc`) by the session, the lobby and the game
/// instead of copied into each: an idle game should be small, and a move
/// should not allocate.
pub type Name = Arc<str>;

/// A connection, as the lobby numbers them.
pub type ConnId = u64;

/// Where a game stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Made with an open seat; nobody has joined yet.
    Open,
    /// Both seats filled, being played.
    Playing,
    /// Finished (or, for a table, closed before it began).
    Over,
}

impl Phase {
    /// The status `LIST` shows.
    pub fn status(self) -> flipline::protocol::GameStatus {
        use flipline::protocol::GameStatus;
        match self {
            Phase::Open => GameStatus::Open,
            Phase::Playing => GameStatus::Playing,
            Phase::Over => GameStatus::Over,
        }
    }
}

/// Who takes a seat when a game is made: `C` is how the maker names a
/// connection (the lobby's numbers, or the game's session addresses).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Sitter<C> {
    /// Free until someone joins.
    Open,
    /// The engine at a level.
    Bot(u8),
    /// A person, connected or not (a recovered game's players come back with
    /// `LOGIN` and `JOIN`).
    Person(Name, Option<C>),
}

impl<C> Sitter<C> {
    /// The name in the seat (`bot:N` for a bot), `None` while open.
    pub fn name(&self) -> Option<Name> {
        match self {
            Sitter::Open => None,
            Sitter::Bot(level) => Some(bot_name(*level)),
            Sitter::Person(name, _) => Some(Name::clone(name)),
        }
    }

    /// The same seat with its connection named another way.
    pub fn map_conn<D>(self, f: impl FnOnce(C) -> Option<D>) -> Sitter<D> {
        match self {
            Sitter::Open => Sitter::Open,
            Sitter::Bot(level) => Sitter::Bot(level),
            Sitter::Person(name, conn) => Sitter::Person(name, conn.and_then(f)),
        }
    }

    /// The seat a stored name stands for: `bot:N` is the engine, any other
    /// name a person (not connected), none an open seat.
    pub fn from_stored(name: Option<&str>) -> Sitter<C> {
        match name {
            None => Sitter::Open,
            Some(name) => match name.strip_prefix(BOT_NAME_PREFIX).map(str::parse::<u8>) {
                Some(Ok(level)) => Sitter::Bot(level),
                _ => Sitter::Person(Name::from(name), None),
            },
        }
    }
}

/// The name a bot plays under: `bot:` and its level (a prefix no person may
/// log in with, see `flipline::protocol::check_name`).
pub fn bot_name(level: u8) -> Name {
    Name::from(format!("{BOT_NAME_PREFIX}{level}"))
}

/// Black's slot, then white's, in a pair of seats.
pub fn slot(color: flipline::Color) -> usize {
    match color {
        flipline::Color::Black => 0,
        flipline::Color::White => 1,
    }
}

/// Both colours, black first.
pub const COLORS: [flipline::Color; 2] = [flipline::Color::Black, flipline::Color::White];
