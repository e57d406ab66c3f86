//! `flip bot --engine "CMD ARGS" --protocol nboard|gtp`: another program
//! plays the bot's moves. The bot starts it (no shell: the command line is
//! split into words, `command_line.rs`), tells it the game at each turn in
//! its protocol, and plays what it answers once the rules allow it.
//!
//! An engine that dies, does not answer within its wait (`budget.rs`), or
//! answers nonsense or an illegal move costs the bot that game: it resigns
//! (`END`) and says why on standard error, and the engine is stopped. The
//! next game starts it again, since an engine's failure is often that one
//! position's; three games lost that way in a row, or a command that cannot
//! be started at all, stop the bot with an error instead: such an engine
//! would only resign game after game.
//!
//! Only Othello's rules on 8x8 make sense to these protocols' engines:
//! `othello`, and `reversi` (white first) over NBoard, whose games carry
//! their start; GTP's start is always black's.
//!
//! # Layout
//! - this file: [`EngineSpec`], [`ExternalPlayer`], [`take_turn`] (the bot's
//!   one call), [`EngineFailure`].
//! - `command_line`: the command split into words.
//! - `process`: the child process and its lines, every read with a deadline.
//! - `budget`: the time a move is given and waited for.
//! - `record`: the moves and clocks of the bot's game.
//! - `gtp_player`, `nboard_player`: the two conversations.

mod budget;
mod command_line;
mod gtp_player;
mod nboard_player;
mod process;
mod record;

#[cfg(test)]
mod tests;

use std::fmt;
use std::time::{Duration, Instant};

use flipline::protocol::GameId;
use flipline::{Color, Game, Move, Variant};

pub use record::Record;

use crate::engine_tools::engine_protocols::Protocol;
use crate::untrusted::escape;
use budget::Budget;
use gtp_player::GtpPlayer;
use nboard_player::NboardPlayer;

/// How long an engine may take to start (load its tables and book) before
/// its first answer.
const STARTUP: Duration = Duration::from_secs(10);

/// How long a command that asks for no search (`clear_board`, `play`) may
/// take.
const SETUP: Duration = Duration::from_secs(5);

/// The failed games in a row after which the bot stops.
const FAILURES_IN_A_ROW: u32 = 3;

fn setup_deadline() -> Instant {
    Instant::now() + SETUP
}

/// The engine to run, as `--engine` and `--protocol` give it.
#[derive(Clone, Debug)]
pub struct EngineSpec {
    argv: Vec<String>,
    protocol: Protocol,
}

impl EngineSpec {
    /// The engine `command` (split as a shell splits words), for `variant`.
    pub fn new(command: &str, protocol: Protocol, variant: Variant) -> Result<EngineSpec, String> {
        let argv = command_line::split(command)?;
        check_variant(variant, protocol)?;
        Ok(EngineSpec { argv, protocol })
    }
}

fn check_variant(variant: Variant, protocol: Protocol) -> Result<(), String> {
    match (variant, protocol) {
        (Variant::Othello, _) | (Variant::Reversi, Protocol::Nboard) => Ok(()),
        (Variant::Reversi, Protocol::Gtp) => Err(
            "reversi (white first) cannot be told over GTP, whose games start with black: \
             use --protocol nboard"
                .to_string(),
        ),
        (other, _) => Err(format!(
            "--engine plays 8x8 Othello (othello, reversi), not {other}: \
             NBoard's and GTP's engines play nothing else"
        )),
    }
}

/// Why an engine lost its game.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EngineFailure {
    /// The command could not be run.
    CannotStart(String),
    /// It exited, or closed its input or output.
    Died(String),
    /// It did not answer what it was asked in time.
    TimedOut(String),
    /// It answered something that does not read.
    Nonsense(String),
    /// It refused a command it needs (`boardsize 8`, a `play`).
    Refused(String),
    /// Its move is not legal here.
    Illegal(String),
    /// It gave the game up itself.
    Resigned,
}

impl EngineFailure {
    /// The failure, saying which command it came on.
    fn during(self, command: &str) -> EngineFailure {
        match self {
            EngineFailure::TimedOut(_) => EngineFailure::TimedOut(format!("'{command}'")),
            EngineFailure::Died(how) => EngineFailure::Died(format!("{how}, on '{command}'")),
            other => other,
        }
    }
}

impl fmt::Display for EngineFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EngineFailure::CannotStart(e) => write!(f, "cannot be started: {e}"),
            EngineFailure::Died(how) => write!(f, "died: it {how}"),
            EngineFailure::TimedOut(what) => write!(f, "did not answer {what} in time"),
            EngineFailure::Nonsense(what) => write!(f, "answered nonsense: {what}"),
            EngineFailure::Refused(what) => write!(f, "refused {what}"),
            EngineFailure::Illegal(what) => write!(f, "played an illegal move: {what}"),
            EngineFailure::Resigned => f.write_str("resigned"),
        }
    }
}

/// What a turn tells the engine.
pub struct Turn<'a> {
    /// The game's start.
    pub start: Game,
    /// Every move since.
    pub moves: &'a [Move],
    /// The side to move.
    pub side: Color,
    /// Its time.
    pub budget: Budget,
}

/// One running engine of either protocol.
enum Conversation {
    Gtp(GtpPlayer),
    Nboard(NboardPlayer),
}

impl Conversation {
    fn start(spec: &EngineSpec) -> Result<Conversation, EngineFailure> {
        Ok(match spec.protocol {
            Protocol::Gtp => Conversation::Gtp(GtpPlayer::start(&spec.argv)?),
            Protocol::Nboard => Conversation::Nboard(NboardPlayer::start(&spec.argv)?),
        })
    }

    fn choose(&mut self, turn: &Turn<'_>) -> Result<Move, EngineFailure> {
        match self {
            Conversation::Gtp(player) => player.choose(turn),
            Conversation::Nboard(player) => player.choose(turn),
        }
    }
}

/// A bot connection's external engine: started when first needed, stopped
/// after a failure, started again for the next game.
pub struct ExternalPlayer {
    spec: EngineSpec,
    running: Option<Conversation>,
    failed_this_game: bool,
    failed_in_a_row: u32,
    /// Why the bot should stop, once it should.
    given_up: Option<String>,
}

impl ExternalPlayer {
    /// A player that starts `spec` at its first move.
    pub fn new(spec: EngineSpec) -> ExternalPlayer {
        ExternalPlayer {
            spec,
            running: None,
            failed_this_game: false,
            failed_in_a_row: 0,
            given_up: None,
        }
    }

    /// The engine's move in `position` (the server's), checked against the
    /// rules; on a failure the engine is stopped.
    pub fn choose(&mut self, turn: &Turn<'_>, position: &Game) -> Result<Move, EngineFailure> {
        let chosen = self.ask(turn).and_then(|mv| legal(position, mv));
        if let Err(failure) = &chosen {
            self.running = None;
            self.failed_this_game = true;
            if let EngineFailure::CannotStart(e) = failure {
                self.given_up = Some(format!("the engine cannot be started: {e}"));
            }
        }
        chosen
    }

    fn ask(&mut self, turn: &Turn<'_>) -> Result<Move, EngineFailure> {
        let mut conversation = match self.running.take() {
            Some(conversation) => conversation,
            None => Conversation::start(&self.spec)?,
        };
        let chosen = conversation.choose(turn);
        self.running = Some(conversation);
        chosen
    }

    /// A game is over: counts it if the engine failed in it.
    pub fn game_over(&mut self) {
        if std::mem::take(&mut self.failed_this_game) {
            self.failed_in_a_row += 1;
            if self.failed_in_a_row >= FAILURES_IN_A_ROW && self.given_up.is_none() {
                self.given_up = Some(format!(
                    "the engine failed {FAILURES_IN_A_ROW} games in a row; stopping"
                ));
            }
        } else {
            self.failed_in_a_row = 0;
        }
    }

    /// Why the bot should stop, once it should.
    pub fn given_up(&self) -> Option<&str> {
        self.given_up.as_deref()
    }
}

fn legal(position: &Game, mv: Move) -> Result<Move, EngineFailure> {
    let mut after = *position;
    match after.apply(mv) {
        Ok(_) => Ok(mv),
        Err(e) => Err(EngineFailure::Illegal(format!("{mv}: {e}"))),
    }
}

/// A bot's turn with an external engine: the line to send. `MOVE`/`PASS`
/// with the engine's move; `HISTORY` first when the record misses moves
/// (the turn is taken when it comes); `END` when the engine failed, said
/// on standard error as `<bot>: resigns game <n>: the engine <why>`.
pub fn take_turn(
    player: &mut ExternalPlayer,
    record: &mut Record,
    position: &Game,
    think: Duration,
    who: (&str, GameId),
) -> String {
    let side = position.to_move();
    if position.must_pass() {
        // Nothing to ask: the pass is told to the engine with the game at
        // its next turn.
        return "PASS".to_string();
    }
    let Some((start, moves)) = record.moves() else {
        record.wait_for_history(side);
        return format!("HISTORY {}", who.1);
    };
    let empties = position.variant().squares() - position.counts().black - position.counts().white;
    let turn = Turn {
        start,
        moves,
        side,
        budget: budget::budget(record.time_left(side), empties, think),
    };
    match player.choose(&turn, position) {
        Ok(Move::Pass) => "PASS".to_string(),
        Ok(Move::Place(square)) => format!("MOVE {square}"),
        Err(failure) => {
            eprintln!(
                "{}: resigns game {}: the engine {}",
                who.0,
                who.1,
                escape(&failure.to_string())
            );
            "END".to_string()
        }
    }
}
