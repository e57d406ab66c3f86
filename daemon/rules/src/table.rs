//! The table core: one game and the people at it. Pure: the caller passes the
//! time in and carries out the [`Effect`]s each call returns, in order.
//!
//! The table knows the board (a `flipline::Game`), the seats and whether each
//! person is connected, the phase, the clocks, grace periods, and the events
//! every change produces. Who may sit here at all is the lobby's business
//! (`rules::lobby`): the table is told who joined, came back, left or lost
//! their connection, and trusts it.
//!
//! A move is two steps, because it must be stored before anyone hears of it:
//! [`Table::play`] checks and applies it and hands back a [`MoveCommit`];
//! once the store has it, [`Table::committed`] announces it, and if the
//! store refused it [`Table::rolled_back`] puts everything back.
//!
//! An ending is stored before anyone hears of it too ([`Effect::CommitEnd`]).
//! What the store's refusal means depends on who ended the game: a player's
//! resignation is taken back ([`Table::end_refused`]: the game goes on and
//! the player is told to try again); an ending nobody asked for (a flag, an
//! abandonment, the last move) is a fact, and its commit is tried again
//! until it is stored ([`end_retry_delay`]). Either way, once it is stored
//! [`Table::end_stored`] settles the table.

use std::time::Duration;

use flipline::notation::cells_string;
use flipline::protocol::{ClockSpec, EndReason, Event, GameId, GameResult};
use flipline::{Color, Game, Move, MoveError, Outcome};

use super::{COLORS, ConnId, Name, Phase, Sitter, bot_name, slot};
use crate::clock::{Clocks, Moment, millis};
use crate::refusal::Refusal;

mod take_back;
pub use take_back::{TakeBack, UndoStep};

/// How long a bot waits before trying again when its move could not be stored.
pub const BOT_RETRY: Duration = Duration::from_secs(1);

/// The longest wait between two commits of an ending the store refused.
pub const END_RETRY_MAX: Duration = Duration::from_secs(1);

/// How long to wait before the `attempt`-th new commit (from 1) of an ending
/// the store refused: 100 ms, doubled each time, at most [`END_RETRY_MAX`].
/// Quick after a passing failure, and no busier than once a second against
/// a store that stays down.
pub fn end_retry_delay(attempt: u32) -> Duration {
    let doublings = attempt.saturating_sub(1).min(16);
    Duration::from_millis(100u64 << doublings).min(END_RETRY_MAX)
}

/// What the shell does when the store refuses an ending.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IfRefused {
    /// Call [`Table::end_refused`]: the game goes on as if the ending had
    /// not been asked for (a resignation; the player hears `ERR 503`). The
    /// shell holds the game meanwhile, as for a move's commit.
    TakeBack,
    /// Commit it again after [`end_retry_delay`], until it is stored: the
    /// ending is a fact (a flag, an abandonment, the last move). The game
    /// takes no move meanwhile (it is over) and does not stop.
    Retry,
}

/// A timer a table asks for. Scheduling one replaces the table's earlier
/// timer of the same kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Timer {
    /// The running clock reaches zero.
    Flag,
    /// The grace period of the person in this seat runs out.
    Grace(Color),
    /// A bot tries again after its move could not be stored.
    Bot,
}

/// What the shell does for the table, in the order given. A
/// [`Effect::CommitEnd`] is always the last of its list: what follows it is
/// inside it.
#[derive(Debug, PartialEq)]
pub enum Effect<C> {
    /// Events to everyone in the game: the seated people who are connected
    /// (once, though hotseat gives one person both seats), then spectators.
    Broadcast(Vec<Event>),
    /// Events to one connection.
    Tell(C, Vec<Event>),
    /// Call [`Table::timer_fired`] with this timer after this long.
    Schedule(Timer, Duration),
    /// Forget the timer of this kind, if one is set.
    Unschedule(Timer),
    /// Ask the engine for a move of the bot at `level`, for turn `turn`; the
    /// answer goes to [`Table::bot_answer`].
    Think {
        /// The bot's level.
        level: u8,
        /// The turn the move is for: an answer for another is dropped.
        turn: Turn,
    },
    /// Store the end of the game, wait for it, then carry out `then` (given
    /// to [`Table::end_stored`] first).
    CommitEnd {
        /// The result to store.
        result: GameResult,
        /// What follows once it is stored.
        then: Vec<Effect<C>>,
        /// What to do if the store refuses it.
        refused: IfRefused,
    },
    /// Tell the lobby that the game is over: before the reply to the command
    /// that ended it and before anyone hears `OVER`, so that whatever a player
    /// does next finds the lobby knowing. For a resignation it follows the
    /// commit (inside the `CommitEnd`), which may take it back.
    Ended(GameResult),
    /// Nobody is left at a game that is not in play: stop its actor.
    Stop,
}

type Effects<C> = Vec<Effect<C>>;

/// Where `UNDO` stands at a table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum UndoState {
    /// Nothing asked, nothing under way.
    Idle,
    /// This player asked to take moves back, until the other agrees or a
    /// move is played (between two people only).
    Asked(Color),
    /// A take-back is under way (its moves being read or stored): a bot's
    /// answer meanwhile is held back, since the position may go back under
    /// it.
    Running,
    /// As `Running`, and a bot's answer was held back: the bot is asked
    /// again if the take-back does not happen.
    RunningBotWaiting,
}

/// A turn of the game, as a bot's move is asked for it: the ply, and how
/// many times moves were taken back before it, since after `UNDO` a ply
/// comes round again with another position.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Turn {
    /// Plies played before it.
    pub ply: u32,
    /// Take-backs before it.
    pub takebacks: u8,
}

/// Whether a person at the table is connected.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Presence<C> {
    /// Connected through this connection.
    Here(C),
    /// Lost their connection while the game was in play, at this moment: the
    /// seat is kept for the grace period.
    Away(Moment),
    /// Gone from a game that is not in play.
    Left,
}

#[derive(Clone, Debug)]
struct Person<C> {
    name: Name,
    presence: Presence<C>,
}

#[derive(Clone, Debug)]
enum Seat<C> {
    Open,
    Bot(u8),
    Person(Person<C>),
}

impl<C> Seat<C> {
    fn name(&self) -> Option<Name> {
        match self {
            Seat::Open => None,
            Seat::Bot(level) => Some(bot_name(*level)),
            Seat::Person(p) => Some(Name::clone(&p.name)),
        }
    }

    fn person(&self, name: &str) -> Option<&Person<C>> {
        match self {
            Seat::Person(p) if *p.name == *name => Some(p),
            _ => None,
        }
    }

    /// The connected person here: their name and connection.
    fn connected(&self) -> Option<(&Name, &C)> {
        match self {
            Seat::Person(Person {
                name,
                presence: Presence::Here(c),
            }) => Some((name, c)),
            _ => None,
        }
    }
}

/// A move applied and waiting for the store: its ply, how long it took, and
/// what to put back should the store refuse it.
#[derive(Debug)]
pub struct MoveCommit {
    /// Who moved.
    pub side: Color,
    /// What was played.
    pub mv: Move,
    /// The ply it is (the first move is 1).
    pub ply: u32,
    /// Milliseconds the mover took.
    pub ms: u64,
    undo: Undo,
}

#[derive(Debug)]
struct Undo {
    game: Game,
    clocks: Option<Clocks>,
    turn_started: Moment,
    last: LastMove,
}

/// The last move played and its side, in one byte, since every game's
/// actor holds it: bit 7 set for white, then the square's row times 10
/// plus its column (boards are at most 10 by 10), 100 for a pass; 127 for
/// none (and for what no board has).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct LastMove(u8);

impl LastMove {
    const NONE: LastMove = LastMove(127);

    fn of(side: Color, mv: Move) -> LastMove {
        let low = match mv {
            Move::Place(square) if square.row < 10 && square.col < 10 => {
                square.row * 10 + square.col
            }
            Move::Place(_) => return LastMove::NONE,
            Move::Pass => 100,
        };
        let high = match side {
            Color::Black => 0,
            Color::White => 0x80,
        };
        LastMove(high | low)
    }
}

/// What a move sent again is (see [`Table::resent`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Resent {
    /// Not played yet: play it.
    Play,
    /// Played and stored: answer it as played.
    Played,
    /// The game is at `plies` now, past the move.
    MovedOn { plies: u32 },
}

/// Which games allow `HINT`: the table's hint policy, set by the operator
/// (the configuration's `hints`).
#[derive(Clone, Copy, Debug, serde::Deserialize, serde::Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Hints {
    /// Games against a bot.
    pub bot_games: bool,
    /// Hotseat games.
    pub hotseat_games: bool,
    /// Games between two connections.
    pub human_games: bool,
}

/// The answer to a move: store it, or why not (and what that caused: a flag
/// found fallen ends the game).
#[derive(Debug)]
pub enum Played<C> {
    /// Applied: store it, then [`Table::committed`] or [`Table::rolled_back`].
    Commit(MoveCommit),
    /// Refused.
    Refused(Refusal, Effects<C>),
}

/// What most games lack, boxed apart: the clocks and the spectators.
#[derive(Debug)]
struct Extras<C> {
    clocks: Option<Clocks>,
    /// The connections watching, by number.
    spectators: Vec<(ConnId, C)>,
}

/// One game (see the module docs). `C` is how the caller reaches a
/// connection; connections are told apart by name (seats) and by number
/// (spectators), so `C` needs no equality.
#[derive(Debug)]
pub struct Table<C> {
    id: GameId,
    game: Game,
    /// Black's seat, then white's.
    seats: [Seat<C>; 2],
    /// One pointer while a game has no clock and no spectator: every idle
    /// game's actor is kept within one allocation size.
    extras: Option<Box<Extras<C>>>,
    phase: Phase,
    /// Plies played, a move being stored included (16 bits: no game
    /// comes near, and every game's actor holds it).
    ply: u16,
    /// When the side to move began its turn (what a move's stored time counts).
    turn_started: Moment,
    /// Times moves were taken back (see [`Turn`]).
    takebacks: u8,
    /// Whether the game counts for the ratings (no take-backs then).
    rated: bool,
    /// Where `UNDO` stands (see `take_back.rs`).
    undo: UndoState,
    /// The last move played (a move being stored included), and its side: what
    /// tells a move sent again, its first answer lost with the game's last
    /// node, from one still to play ([`Table::resent`]).
    last: LastMove,
}

impl<C: Clone> Table<C> {
    /// A table for game `id` with these seats, the `start` moves already
    /// played (each with the time it took, charged to its side's clock; moves
    /// that are not legal are left out: the lobby checks them). It waits, in
    /// phase `Open`, until [`Table::open`].
    pub fn new(
        id: GameId,
        variant: flipline::Variant,
        clock: Option<ClockSpec>,
        seats: [Sitter<C>; 2],
        start: &[(Move, Option<u64>)],
        rated: bool,
        now: Moment,
    ) -> Table<C> {
        let (game, clocks, ply, last) = replay(variant, clock, start);
        let [black, white] = seats.map(|s| match s {
            Sitter::Open => Seat::Open,
            Sitter::Bot(level) => Seat::Bot(level),
            Sitter::Person(name, conn) => Seat::Person(Person {
                name,
                presence: conn.map_or(Presence::Left, Presence::Here),
            }),
        });
        let extras = clocks.map(|clocks| {
            Box::new(Extras {
                clocks: Some(clocks),
                spectators: Vec::new(),
            })
        });
        Table {
            id,
            game,
            seats: [black, white],
            extras,
            phase: Phase::Open,
            ply: narrow(ply),
            turn_started: now,
            takebacks: 0,
            rated,
            undo: UndoState::Idle,
            last,
        }
    }

    /// Whether the game counts for the ratings.
    pub fn rated(&self) -> bool {
        self.rated
    }

    /// `RATED` for each `(name, before, after)` a rated game's end changed,
    /// to everyone in the game.
    pub fn rated_changes(&self, changes: impl Iterator<Item = (String, i32, i32)>) -> Effects<C> {
        let events: Vec<Event> = changes
            .map(|(name, before, after)| Event::Rated {
                game: self.id,
                name,
                before,
                after,
            })
            .collect();
        if events.is_empty() {
            return Vec::new();
        }
        vec![Effect::Broadcast(events)]
    }

    /// The turn now (what a bot's move is asked for).
    fn turn(&self) -> Turn {
        Turn {
            ply: u32::from(self.ply),
            takebacks: self.takebacks,
        }
    }

    /// The game's number.
    pub fn id(&self) -> GameId {
        self.id
    }

    fn clocks(&self) -> Option<&Clocks> {
        self.extras.as_ref().and_then(|e| e.clocks.as_ref())
    }

    fn clocks_mut(&mut self) -> Option<&mut Clocks> {
        self.extras.as_mut().and_then(|e| e.clocks.as_mut())
    }

    /// Where the game stands.
    pub fn phase(&self) -> Phase {
        self.phase
    }

    /// Plies played, a move being stored included.
    pub fn plies(&self) -> u32 {
        u32::from(self.ply)
    }

    /// Who sits in each seat, black first (`bot:N` for a bot).
    pub fn names(&self) -> [Option<Name>; 2] {
        [self.seats[0].name(), self.seats[1].name()]
    }

    /// The position, for the engine.
    pub fn position(&self) -> Game {
        self.game
    }

    /// The first call: a game whose seats are all taken begins. A `recovered`
    /// game's people are not connected yet: each seat waits `grace` for them.
    pub fn open(&mut self, recovered: bool, grace: Duration, now: Moment) -> Effects<C> {
        let mut effects = Vec::new();
        if self.seats.iter().all(|s| !matches!(s, Seat::Open)) {
            self.begin(now, &mut effects);
        }
        if recovered && self.phase == Phase::Playing {
            let mut waited: Vec<Name> = Vec::new();
            for color in COLORS {
                let seat = &mut self.seats[slot(color)];
                if let Seat::Person(p) = seat {
                    p.presence = Presence::Away(now);
                    if !waited.contains(&p.name) {
                        waited.push(Name::clone(&p.name));
                        effects.push(Effect::Schedule(Timer::Grace(color), grace));
                    }
                }
            }
        }
        effects
    }

    /// The lobby seated `name` in the open seat `color` (from `conn`, `None`
    /// if that connection is already gone: the lobby says so next): the game
    /// begins.
    pub fn fill(&mut self, color: Color, name: Name, conn: Option<C>, now: Moment) -> Effects<C> {
        let mut effects = Vec::new();
        if self.phase != Phase::Open || !matches!(self.seats[slot(color)], Seat::Open) {
            return effects;
        }
        self.seats[slot(color)] = Seat::Person(Person {
            name,
            presence: conn.map_or(Presence::Left, Presence::Here),
        });
        self.begin(now, &mut effects);
        effects
    }

    /// The game begins: the first turn starts, then everyone hears the whole
    /// state (its `CLOCK` with the first clock running).
    fn begin(&mut self, now: Moment, effects: &mut Effects<C>) {
        self.phase = Phase::Playing;
        let mut turn = Vec::new();
        self.next_turn(now, &mut turn);
        effects.push(Effect::Broadcast(self.snapshot(now)));
        effects.extend(turn);
    }

    /// Starts the clock of the side to move and lets a bot think.
    fn next_turn(&mut self, now: Moment, effects: &mut Effects<C>) {
        let side = self.game.to_move();
        self.turn_started = now;
        if let Some(clocks) = self.clocks_mut() {
            clocks.start(side, now);
            effects.push(self.flag_timer(now));
        }
        if let Seat::Bot(level) = self.seat(side) {
            effects.push(Effect::Think {
                level: *level,
                turn: self.turn(),
            });
        }
    }

    /// The timer that wakes the game when the running clock would reach zero.
    fn flag_timer(&self, now: Moment) -> Effect<C> {
        let left = self
            .clocks()
            .map_or(0, |c| c.left(self.game.to_move(), now));
        Effect::Schedule(Timer::Flag, Duration::from_millis(left.saturating_add(1)))
    }

    fn seat(&self, color: Color) -> &Seat<C> {
        &self.seats[slot(color)]
    }

    /// The colours `name` plays (both in a hotseat game).
    fn colors_of(&self, name: &str) -> Vec<Color> {
        COLORS
            .into_iter()
            .filter(|&c| self.seat(c).person(name).is_some())
            .collect()
    }

    fn no_seat(&self) -> Refusal {
        Refusal::NoSeat(self.id)
    }

    /// The colour `name` may move for now, or why not. (On every move: no
    /// list of colours is built.)
    fn mover(&self, name: &str) -> Result<Color, Refusal> {
        let seated = |c: Color| self.seat(c).person(name).is_some();
        if !COLORS.into_iter().any(seated) {
            return Err(self.no_seat());
        }
        match self.phase {
            Phase::Open => return Err(Refusal::NotStarted(self.id)),
            Phase::Over => return Err(Refusal::GameOver(self.id)),
            Phase::Playing => {}
        }
        let to_move = self.game.to_move();
        if seated(to_move) {
            Ok(to_move)
        } else {
            Err(Refusal::NotYourTurn)
        }
    }

    /// `MOVE` or `PASS` (`mv`) from `name`, sent again at ply `at` (the
    /// plies its player had heard of): its first sending's answer was lost
    /// with the node that owned the game. To play if the game is still at
    /// `at`; already played if the move stored after `at` is this one, by
    /// `name`'s side; else the game moved on. So a move sent twice is
    /// never played twice.
    pub fn resent(&self, name: &str, at: u32, mv: Move) -> Resent {
        let plies = self.plies();
        if plies == at {
            return Resent::Play;
        }
        let played = plies == at.saturating_add(1)
            && self.last != LastMove::NONE
            && COLORS.into_iter().any(|side| {
                self.last == LastMove::of(side, mv) && self.seat(side).person(name).is_some()
            });
        match played {
            true => Resent::Played,
            false => Resent::MovedOn { plies },
        }
    }

    /// `UNDO` sent again at ply `at`, as [`Table::resent`] a move: carried
    /// out only if the game is still at `at`. A take-back the dead node
    /// stored left fewer plies, any move since more: either way this
    /// asking is not carried out (the snapshot shows the game).
    pub fn undo_resent(&self, at: u32) -> Resent {
        match self.plies() {
            plies if plies == at => Resent::Play,
            plies => Resent::MovedOn { plies },
        }
    }

    /// `MOVE` or `PASS` from `name`.
    pub fn play(&mut self, name: &str, mv: Move, now: Moment) -> Played<C> {
        match self.mover(name) {
            Ok(side) => self.apply(side, mv, now),
            Err(e) => Played::Refused(e, Vec::new()),
        }
    }

    /// The engine's answer for the bot to move at `turn` (`None`: the engine
    /// had none; the first legal move is played rather than stall the game).
    /// `None` when the game has moved on meanwhile.
    pub fn bot_answer(&mut self, turn: Turn, mv: Option<Move>, now: Moment) -> Option<Played<C>> {
        let side = self.game.to_move();
        if self.phase != Phase::Playing
            || self.turn() != turn
            || !matches!(self.seat(side), Seat::Bot(_))
        {
            return None;
        }
        if matches!(self.undo, UndoState::Running | UndoState::RunningBotWaiting) {
            // Asked again once the take-back is settled, if it is not done.
            self.undo = UndoState::RunningBotWaiting;
            return None;
        }
        let mv = mv.unwrap_or_else(|| {
            self.game
                .legal_moves()
                .iter()
                .next()
                .map_or(Move::Pass, Move::Place)
        });
        Some(self.apply(side, mv, now))
    }

    /// Checks `mv`, stops the mover's clock (it stands still while the move is
    /// stored) and applies it. A flag that fell ends the game instead.
    fn apply(&mut self, side: Color, mv: Move, now: Moment) -> Played<C> {
        let mut next = self.game;
        if let Err(e) = next.apply(mv) {
            return Played::Refused(self.illegal(e), Vec::new());
        }
        let undo = Undo {
            game: self.game,
            clocks: self.clocks().cloned(),
            turn_started: self.turn_started,
            last: self.last,
        };
        if let Some(clocks) = self.clocks_mut()
            && let Err(flagged) = clocks.stop(now)
        {
            let effects = self.finish(EndReason::Time, Some(flagged.opponent()), IfRefused::Retry);
            return Played::Refused(Refusal::TimeRanOut, effects);
        }
        let ms = millis(now.saturating_duration_since(self.turn_started));
        self.game = next;
        self.ply = self.ply.saturating_add(1);
        self.last = LastMove::of(side, mv);
        Played::Commit(MoveCommit {
            side,
            mv,
            ply: u32::from(self.ply),
            ms,
            undo,
        })
    }

    /// The move is stored: everyone hears of it, then the game ends or the
    /// next turn begins.
    pub fn committed(&mut self, commit: &MoveCommit, now: Moment) -> Effects<C> {
        // A move answers an offer to take moves back: it is not taken up.
        if let UndoState::Asked(_) = self.undo {
            self.undo = UndoState::Idle;
        }
        let counts = self.game.counts();
        let moved = Event::Moved {
            game: self.id,
            side: commit.side,
            played: commit.mv,
            black: counts.black,
            white: counts.white,
            clocks: self.clocks().map(|c| c.both(now)),
        };
        if self.game.is_over() {
            let mut effects = vec![Effect::Broadcast(vec![moved])];
            effects.extend(self.finish(EndReason::Normal, None, IfRefused::Retry));
            return effects;
        }
        // Room for all three events and for the turn's timer or bot: a
        // vector grown on every move is an allocation more.
        let mut events = Vec::with_capacity(3);
        events.push(moved);
        events.push(self.board_event());
        events.extend(self.turn_event());
        let mut effects = Vec::with_capacity(2);
        effects.push(Effect::Broadcast(events));
        self.next_turn(now, &mut effects);
        effects
    }

    /// The store refused the move: the game is as it was before it, the same
    /// side to move, its clock running from when its turn began. A bot tries
    /// again a little later.
    pub fn rolled_back(&mut self, commit: MoveCommit, now: Moment) -> Effects<C> {
        self.game = commit.undo.game;
        self.last = commit.undo.last;
        if let (Some(clocks), Some(before)) = (self.clocks_mut(), commit.undo.clocks) {
            *clocks = before;
        }
        self.turn_started = commit.undo.turn_started;
        self.ply = self.ply.saturating_sub(1);
        let mut effects = Vec::new();
        if self.clocks().is_some() {
            effects.push(self.flag_timer(now));
        }
        if matches!(self.seat(commit.side), Seat::Bot(_)) {
            effects.push(Effect::Schedule(Timer::Bot, BOT_RETRY));
        }
        effects
    }

    fn illegal(&self, error: MoveError) -> Refusal {
        let legal = self.game.legal_moves();
        let legal = if legal.is_empty() {
            "pass".to_string()
        } else {
            legal.to_string()
        };
        match error {
            MoveError::GameOver => Refusal::GameOver(self.id),
            error => Refusal::Illegal { error, legal },
        }
    }

    /// A timer this table asked for went off.
    pub fn timer_fired(&mut self, timer: Timer, now: Moment) -> Effects<C> {
        if self.phase != Phase::Playing {
            return Vec::new();
        }
        match timer {
            Timer::Flag => {
                let flagged = self.clocks().and_then(|c| c.flagged(now));
                match flagged {
                    Some(side) => {
                        self.finish(EndReason::Time, Some(side.opponent()), IfRefused::Retry)
                    }
                    // Woken a little early: wait for the rest.
                    None if self.clocks().is_some() => vec![self.flag_timer(now)],
                    None => Vec::new(),
                }
            }
            Timer::Grace(color) => self.abandon(color),
            Timer::Bot => match self.seat(self.game.to_move()) {
                Seat::Bot(level) => vec![Effect::Think {
                    level: *level,
                    turn: self.turn(),
                }],
                _ => Vec::new(),
            },
        }
    }

    /// The grace period of the person in `color`'s seat ran out: if they are
    /// still away, they lose. Whoever has been away longer loses; both away
    /// since the same moment (a recovered game nobody came back to), or one
    /// person in both seats, is a draw.
    fn abandon(&mut self, color: Color) -> Effects<C> {
        let Seat::Person(p) = self.seat(color) else {
            return Vec::new();
        };
        let Presence::Away(since) = p.presence else {
            return Vec::new();
        };
        let colors = self.colors_of(&p.name);
        let winner = match colors.as_slice() {
            [only] => match self.seat(only.opponent()) {
                Seat::Person(Person {
                    presence: Presence::Away(other),
                    ..
                }) if *other <= since => None,
                _ => Some(only.opponent()),
            },
            _ => None,
        };
        self.finish(EndReason::Abandon, winner, IfRefused::Retry)
    }

    /// Ends the game: the lobby is told, the result is stored, then everyone
    /// hears `BOARD` (no side to move) and `OVER`. Stored first, so that a
    /// crash cannot bring back in play a game its players were told is over:
    /// a resignation, a flag or an abandonment is not in the moves. Until it
    /// is stored the table is over (it takes no move) and nothing else of the
    /// end is done: its timers stand and its clocks run, so that a refused
    /// resignation is taken back whole by putting the phase back, and
    /// [`Table::end_stored`] settles the rest.
    fn finish(
        &mut self,
        reason: EndReason,
        winner: Option<Color>,
        refused: IfRefused,
    ) -> Effects<C> {
        self.phase = Phase::Over;
        let mut then = vec![
            Effect::Unschedule(Timer::Flag),
            Effect::Unschedule(Timer::Bot),
        ];
        for color in COLORS {
            if let Seat::Person(Person {
                presence: Presence::Away(_),
                ..
            }) = self.seat(color)
            {
                then.push(Effect::Unschedule(Timer::Grace(color)));
            }
        }
        let score = match reason {
            EndReason::Normal => self.game.score(),
            _ => forced_score(&self.game, winner),
        };
        let result = GameResult {
            winner: score.winner,
            black: score.black,
            white: score.white,
            reason,
        };
        let over = Event::Over {
            game: self.id,
            winner: score.winner,
            black: score.black,
            white: score.white,
            reason,
        };
        let mut effects = Vec::new();
        match refused {
            IfRefused::TakeBack => then.push(Effect::Ended(result)),
            IfRefused::Retry => effects.push(Effect::Ended(result)),
        }
        then.push(Effect::Broadcast(vec![self.board_event(), over]));
        if self.deserted() {
            then.push(Effect::Stop);
        }
        effects.push(Effect::CommitEnd {
            result,
            then,
            refused,
        });
        effects
    }

    /// The end is stored: the clocks stop and whoever was away has left. Gives
    /// back `then` (what the [`Effect::CommitEnd`] held) with the stop decided
    /// now, as people may have come back or gone while the commit was tried
    /// again.
    pub fn end_stored(&mut self, then: Effects<C>, now: Moment) -> Effects<C> {
        if let Some(clocks) = self.clocks_mut() {
            // A flag that fell is recorded as zero; otherwise the time stops as is.
            let _ = clocks.stop(now);
        }
        for seat in &mut self.seats {
            if let Seat::Person(p) = seat
                && let Presence::Away(_) = p.presence
            {
                p.presence = Presence::Left;
            }
        }
        let mut then: Effects<C> = then
            .into_iter()
            .filter(|effect| !matches!(effect, Effect::Stop))
            .collect();
        if self.deserted() {
            then.push(Effect::Stop);
        }
        then
    }

    /// The store refused the end of a resignation ([`IfRefused::TakeBack`]):
    /// the game is in play again, as it was. Nothing that followed the end was
    /// carried out and the shell held the game meanwhile, so the phase is all
    /// there is to put back: the clocks ran on, the timers stand.
    pub fn end_refused(&mut self) {
        if self.phase == Phase::Over {
            self.phase = Phase::Playing;
        }
    }

    /// Nobody is connected at a table that is not in play.
    fn deserted(&self) -> bool {
        self.phase != Phase::Playing && !self.seats.iter().any(|s| s.connected().is_some())
    }

    /// A game that is not in play and has nobody connected at it stops.
    fn stop_if_deserted(&self, effects: &mut Effects<C>) {
        if self.deserted() {
            effects.push(Effect::Stop);
        }
    }

    /// `END` from `name`: they resign (in a hotseat game, the side to move
    /// does). Nothing of it is timed before it is stored: the clocks stop
    /// in [`Table::end_stored`].
    pub fn resign(&mut self, name: &str) -> Result<Effects<C>, Refusal> {
        let colors = self.colors_of(name);
        let Some(&mine) = colors.first() else {
            return Err(self.no_seat());
        };
        if self.phase != Phase::Playing {
            return Err(Refusal::NotInPlay(self.id));
        }
        let loser = if colors.len() == 2 {
            self.game.to_move()
        } else {
            mine
        };
        Ok(self.finish(
            EndReason::Resign,
            Some(loser.opponent()),
            IfRefused::TakeBack,
        ))
    }

    /// `SAY` from `name`: chat to everyone in the game, seated people only.
    pub fn say(&self, name: &str, text: String) -> Result<Effects<C>, Refusal> {
        if self.colors_of(name).is_empty() {
            return Err(self.no_seat());
        }
        Ok(vec![Effect::Broadcast(vec![Event::Chat {
            game: self.id,
            name: name.to_string(),
            text,
        }])])
    }

    /// `HINT` from `name`: the position to think about, if `hints` allows
    /// hints in this game and it is `name`'s turn.
    pub fn hint(&self, name: &str, hints: &Hints) -> Result<Game, Refusal> {
        self.mover(name)?;
        let bot = self.seats.iter().any(|s| matches!(s, Seat::Bot(_)));
        let [black, white] = &self.seats;
        let hotseat = matches!((black.name(), white.name()), (Some(a), Some(b)) if a == b);
        let allowed = (bot && hints.bot_games)
            || (hotseat && hints.hotseat_games)
            || (!bot && !hotseat && hints.human_games);
        if allowed {
            Ok(self.game)
        } else {
            Err(Refusal::HintsOff)
        }
    }

    /// `BOARD`: the position, while the game goes on the legal moves, and
    /// the clocks at `now`.
    pub fn board(&self, now: Moment) -> Vec<Event> {
        let mut events = vec![self.board_event()];
        events.extend(self.turn_event());
        events.extend(self.clock_event(now));
        events
    }

    /// `CLOCK`: the time left at `now` and whose clock runs, in a game with
    /// clocks.
    fn clock_event(&self, now: Moment) -> Option<Event> {
        self.clocks().map(|clocks| {
            let (black_ms, white_ms) = clocks.both(now);
            Event::Clock {
                game: self.id,
                black_ms,
                white_ms,
                running: clocks.running(),
            }
        })
    }

    /// `name` (seated here, the lobby has checked) is back, or again, on
    /// `conn` at `now`: their grace period ends and they get the whole state.
    pub fn attach(&mut self, name: &str, conn: C, now: Moment) -> Effects<C> {
        let mut effects = Vec::new();
        for color in COLORS {
            if let Seat::Person(p) = &mut self.seats[slot(color)]
                && *p.name == *name
            {
                if let Presence::Away(_) = p.presence {
                    effects.push(Effect::Unschedule(Timer::Grace(color)));
                }
                p.presence = Presence::Here(conn.clone());
            }
        }
        if !self.colors_of(name).is_empty() {
            effects.push(Effect::Tell(conn, self.snapshot(now)));
        }
        effects
    }

    /// `name` lost their connection. In play the seat is kept for `grace` and
    /// the others are told; otherwise they have left the table.
    pub fn disconnected(&mut self, name: &str, grace: Duration, now: Moment) -> Effects<C> {
        let colors = self.colors_of(name);
        let mut effects = Vec::new();
        let Some(&first) = colors.first() else {
            return effects;
        };
        if self.phase != Phase::Playing {
            return self.detach(name, false);
        }
        for &color in &colors {
            if let Seat::Person(p) = &mut self.seats[slot(color)] {
                p.presence = Presence::Away(now);
            }
        }
        effects.push(Effect::Schedule(Timer::Grace(first), grace));
        let text = format!(
            "{name} disconnected: the seat is kept for {}s",
            grace.as_secs()
        );
        effects.push(Effect::Broadcast(vec![Event::Info(text)]));
        effects
    }

    /// What `name`, quitting, is told of its seat: kept for `grace` while the
    /// game is in play (what [`Table::disconnected`] is about to do), and how
    /// to take it back; nothing for a spectator or a table not in play.
    pub fn seat_kept_on_quit(&self, name: &str, grace: Duration) -> Option<String> {
        let seated = !self.colors_of(name).is_empty();
        (seated && self.phase == Phase::Playing).then(|| {
            format!(
                "your seat in game {id} is kept for {secs}s: log in as {name} and JOIN {id} to take it back",
                id = self.id,
                secs = grace.as_secs()
            )
        })
    }

    /// `name` leaves a table that is not in play (`LEAVE`, a rematch, a lost
    /// connection); unless `quiet`, whoever is still here is told. The last
    /// one out stops it.
    pub fn detach(&mut self, name: &str, quiet: bool) -> Effects<C> {
        let mut effects = Vec::new();
        if self.phase == Phase::Playing {
            return effects;
        }
        let mut was_here = false;
        for seat in &mut self.seats {
            if let Seat::Person(p) = seat
                && *p.name == *name
            {
                was_here |= matches!(p.presence, Presence::Here(_));
                p.presence = Presence::Left;
            }
        }
        let others_here = self.seats.iter().any(|s| s.connected().is_some());
        if was_here && !quiet && others_here {
            let text = format!("{name} left game {}", self.id);
            effects.push(Effect::Broadcast(vec![Event::Info(text)]));
        }
        self.stop_if_deserted(&mut effects);
        effects
    }

    /// The lobby closed this game before anyone joined it.
    pub fn cancel(&mut self) -> Effects<C> {
        if self.phase != Phase::Open {
            return Vec::new();
        }
        self.phase = Phase::Over;
        vec![Effect::Stop]
    }

    /// `name` offers a rematch (the lobby counts the votes).
    pub fn offer_rematch(&self, name: &str) -> Effects<C> {
        let text = format!(
            "{name} offers a rematch in game {}: REMATCH accepts",
            self.id
        );
        vec![Effect::Broadcast(vec![Event::Info(text)])]
    }

    /// The rematch of this game began as `next`: its spectators hear the
    /// number (its players get the new game's `START`, which says it).
    pub fn rematched(&self, next: GameId) -> Effects<C> {
        let text = format!(
            "game {} is rematched as game {next}: WATCH {next} follows it",
            self.id
        );
        let spectators = self.extras.iter().flat_map(|e| e.spectators.iter());
        spectators
            .map(|(_, conn)| Effect::Tell(conn.clone(), vec![Event::Info(text.clone())]))
            .collect()
    }

    /// `WATCH` from connection `id`, reached by `conn`: it follows the game
    /// from `now`, starting with the whole state.
    pub fn watch(&mut self, id: ConnId, conn: C, now: Moment) -> Effects<C> {
        let extras = self.extras.get_or_insert_with(|| {
            Box::new(Extras {
                clocks: None,
                spectators: Vec::new(),
            })
        });
        if !extras.spectators.iter().any(|(s, _)| *s == id) {
            extras.spectators.push((id, conn.clone()));
        }
        vec![Effect::Tell(conn, self.snapshot(now))]
    }

    /// Connection `id` stops watching.
    pub fn unwatch(&mut self, id: ConnId) {
        if let Some(extras) = &mut self.extras {
            extras.spectators.retain(|(s, _)| *s != id);
            if extras.clocks.is_none() && extras.spectators.is_empty() {
                self.extras = None;
            }
        }
    }

    /// Everyone who hears the game's events: the seated people who are
    /// connected (once, though hotseat gives one person both seats), then the
    /// spectators.
    pub fn audience(&self) -> impl Iterator<Item = &C> {
        let [black, white] = &self.seats;
        let black = black.connected();
        let white = white
            .connected()
            .filter(|(name, _)| black.is_none_or(|(b, _)| b != *name));
        let spectators = self.extras.iter().flat_map(|e| e.spectators.iter());
        black
            .into_iter()
            .chain(white)
            .map(|(_, c)| c)
            .chain(spectators.map(|(_, c)| c))
    }

    /// START, BOARD, TURN and CLOCK: the whole state at `now`, for a
    /// newcomer.
    pub fn snapshot(&self, now: Moment) -> Vec<Event> {
        let name = |c: Color| {
            self.seat(c)
                .name()
                .map_or_else(|| "-".to_string(), |n| n.to_string())
        };
        let mut events = vec![Event::Start {
            game: self.id,
            variant: self.game.variant(),
            black: name(Color::Black),
            white: name(Color::White),
            clock: self.clocks().map(|c| c.spec()),
        }];
        events.extend(self.board(now));
        events
    }

    fn board_event(&self) -> Event {
        let to_move = (self.phase == Phase::Playing).then(|| self.game.to_move());
        Event::Board {
            game: self.id,
            cells: cells_string(&self.game),
            to_move,
        }
    }

    fn turn_event(&self) -> Option<Event> {
        (self.phase == Phase::Playing).then(|| {
            let legal = self.game.legal_moves();
            let mut moves = Vec::with_capacity(legal.len());
            moves.extend(legal.iter());
            Event::Turn {
                game: self.id,
                side: self.game.to_move(),
                moves,
            }
        })
    }

    /// How long a bot may think: `engine_ms`, and under a clock a share of
    /// what is left.
    pub fn think_budget(&self, engine_ms: u64, now: Moment) -> Duration {
        let mut ms = engine_ms;
        if let Some(clocks) = self.clocks() {
            let left = clocks.left(self.game.to_move(), now);
            ms = ms.min(left / 20 + clocks.spec().increment_ms / 2).max(5);
        }
        Duration::from_millis(ms)
    }
}

/// The position, clocks and plies after `moves` from the start of `variant`
/// (each with the time it took, charged to its side's clock; moves that are
/// not legal are left out).
fn replay(
    variant: flipline::Variant,
    clock: Option<ClockSpec>,
    moves: &[(Move, Option<u64>)],
) -> (Game, Option<Clocks>, u32, LastMove) {
    let mut game = Game::new(variant);
    let mut clocks = clock.map(Clocks::new);
    let mut ply = 0u32;
    let mut last = LastMove::NONE;
    for &(mv, ms) in moves {
        let side = game.to_move();
        if game.apply(mv).is_err() {
            continue;
        }
        ply = ply.saturating_add(1);
        last = LastMove::of(side, mv);
        if let (Some(clocks), Some(ms)) = (&mut clocks, ms) {
            let _ = clocks.charge(side, ms);
        }
    }
    (game, clocks, ply, last)
}

/// Plies as the table keeps them.
fn narrow(plies: u32) -> u16 {
    u16::try_from(plies).unwrap_or(u16::MAX)
}

/// The score of a game that ended early: discs as they stand, the empties to the
/// winner (split on a draw).
fn forced_score(game: &Game, winner: Option<Color>) -> Outcome {
    let counts = game.counts();
    let empties = game.variant().squares() - counts.black - counts.white;
    let (black, white) = match winner {
        Some(Color::Black) => (counts.black + empties, counts.white),
        Some(Color::White) => (counts.black, counts.white + empties),
        None => (
            counts.black + empties / 2,
            counts.white + empties - empties / 2,
        ),
    };
    Outcome {
        winner,
        black,
        white,
    }
}
