//! `UNDO`: moves taken back. Against a bot, in a hotseat game, or between
//! two people once the other agrees.
//!
//! The table keeps no list of moves (an idle game must stay small), so a
//! take-back is four steps: [`Table::undo`] decides whether it may happen
//! and gives a [`TakeBack`]; the shell reads the game's stored moves and
//! asks [`TakeBack::keep`] how many stay (there may be no move of the
//! asker's to take back); [`Table::undo_allowed`] then asks the other
//! player, or says to store it; once it is stored [`Table::taken_back`]
//! puts the position and the clocks back as the kept moves leave them.
//! Nothing is announced before it is stored.
//!
//! What is taken back: the asker's last move that placed a disc and
//! everything after it (a pass is never where to go back to: it would be
//! forced again), but never a move the game was started from (`NEW ...
//! from`). The clocks go back to what they showed then.

use crate::clock::Moment;

use flipline::protocol::Event;
use flipline::{Color, Game, Move};

use super::{COLORS, Effect, Effects, Phase, Seat, Table, Timer, UndoState, replay, slot};
use crate::refusal::Refusal;

/// What `UNDO` does once the moves are known to allow it.
#[derive(Debug, PartialEq)]
pub enum UndoStep<C> {
    /// The other player is asked to agree: nothing is taken back yet.
    Asked(Effects<C>),
    /// Store the take-back, then [`Table::taken_back`].
    Store,
}

/// A take-back the table allowed: whose moves, from how many, and whether
/// the other player must be asked first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TakeBack {
    /// The colours whose last placement is taken back, black first.
    colors: [bool; 2],
    /// Plies played when it was allowed.
    plies: u32,
    /// The position the moves start from.
    start: Game,
    /// Whether the other player is to be asked (nobody has agreed yet).
    ask: bool,
}

impl TakeBack {
    /// Plies played when it was allowed: the stored moves must be as many.
    pub fn plies(&self) -> u32 {
        self.plies
    }

    /// How many of the game's `moves` (each with its time, `None` for a move
    /// it was started from) stay, or why none can be taken back.
    pub fn keep(&self, moves: &[(Move, Option<u64>)]) -> Result<u32, Refusal> {
        if u32::try_from(moves.len()).ok() != Some(self.plies) {
            return Err(Refusal::MovedOn);
        }
        let mut game = self.start;
        let mut last = None;
        for (index, &(mv, ms)) in moves.iter().enumerate() {
            let side = game.to_move();
            let whose = self.colors[slot(side)];
            if whose && ms.is_some() && matches!(mv, Move::Place(_)) {
                last = Some(index);
            }
            if game.apply(mv).is_err() {
                break;
            }
        }
        let index = last.ok_or(Refusal::NothingToTakeBack)?;
        u32::try_from(index).map_err(|_| Refusal::NothingToTakeBack)
    }
}

impl<C: Clone> Table<C> {
    /// `UNDO` from `name`: whose moves it would take back (the other
    /// player's, if they asked and this agrees), or why not. Until it is
    /// settled ([`Table::undo_allowed`] asks, [`Table::taken_back`],
    /// [`Table::undo_failed`]) a bot's answer is held back.
    pub fn undo(&mut self, name: &str) -> Result<TakeBack, Refusal> {
        let colors = self.colors_of(name);
        let Some(&mine) = colors.first() else {
            return Err(self.no_seat());
        };
        if self.phase != Phase::Playing {
            return Err(Refusal::NotInPlay(self.id));
        }
        if self.rated {
            return Err(Refusal::RatedTakeBack);
        }
        let alone = colors.len() == 2 || !matches!(self.seat(mine.opponent()), Seat::Person(_));
        let (whose, ask): (&[Color], bool) = match self.undo {
            _ if alone => (&colors, false),
            UndoState::Asked(asker) if asker == mine => {
                return Err(Refusal::TakeBackAsked);
            }
            UndoState::Asked(asker) => (&[asker], false),
            _ => (&colors, true),
        };
        let colors = COLORS.map(|c| whose.contains(&c));
        self.undo = UndoState::Running;
        Ok(TakeBack {
            colors,
            plies: u32::from(self.ply),
            start: Game::new(self.game.variant()),
            ask,
        })
    }

    /// The stored moves allow `take_back` from `name`: it is stored now, or
    /// the other player is asked first.
    pub fn undo_allowed(&mut self, name: &str, take_back: &TakeBack) -> UndoStep<C> {
        if !take_back.ask {
            return UndoStep::Store;
        }
        let mut effects = self.undo_failed();
        if let Some(&mine) = self.colors_of(name).first() {
            self.undo = UndoState::Asked(mine);
        }
        let asked = Event::UndoAsked {
            game: self.id,
            name: name.to_string(),
        };
        effects.push(Effect::Broadcast(vec![asked]));
        UndoStep::Asked(effects)
    }

    /// A take-back [`Table::undo`] allowed will not happen (nothing to take
    /// back, the store refused it, or the other player is only asked): a
    /// bot whose answer was held back meanwhile is asked again.
    pub fn undo_failed(&mut self) -> Effects<C> {
        let waiting = self.undo == UndoState::RunningBotWaiting;
        self.undo = UndoState::Idle;
        match self.seat(self.game.to_move()) {
            Seat::Bot(level) if waiting && self.phase == Phase::Playing => vec![Effect::Think {
                level: *level,
                turn: self.turn(),
            }],
            _ => Vec::new(),
        }
    }

    /// The take-back is stored: the game goes on after the `kept` moves,
    /// everyone hears of it, and the side to move's turn begins.
    pub fn taken_back(&mut self, kept: &[(Move, Option<u64>)], now: Moment) -> Effects<C> {
        if self.phase != Phase::Playing {
            return self.undo_failed();
        }
        let spec = self.clocks().map(|c| c.spec());
        let (game, clocks, ply, last) = replay(self.game.variant(), spec, kept);
        let taken = self.plies().saturating_sub(ply);
        self.game = game;
        self.last = last;
        if let (Some(now_clocks), Some(clocks)) = (self.clocks_mut(), clocks) {
            *now_clocks = clocks;
        }
        self.ply = super::narrow(ply);
        self.takebacks = self.takebacks.wrapping_add(1);
        self.undo = UndoState::Idle;
        let mut events = vec![
            Event::Undone {
                game: self.id,
                plies: ply,
                taken,
            },
            self.board_event(),
        ];
        events.extend(self.turn_event());
        let mut turn = Vec::new();
        self.next_turn(now, &mut turn);
        events.extend(self.clock_event(now));
        let mut effects = vec![Effect::Unschedule(Timer::Bot), Effect::Broadcast(events)];
        effects.extend(turn);
        effects
    }
}

/// The colour `UNDO` was asked by, for the tests.
#[cfg(test)]
impl<C> Table<C> {
    pub(crate) fn undo_asked_by(&self) -> Option<Color> {
        match self.undo {
            UndoState::Asked(color) => Some(color),
            _ => None,
        }
    }
}
