//! What a bot keeps of its game for an external engine, which is told the
//! game from its start (GTP has no way to set up a position): the moves as
//! `MOVED` lines announce them and the clocks they carry. A bot that joins
//! its game again after a reconnect has missed moves; its record then reads
//! as not known until `HISTORY` fills it in.

use std::time::Duration;

use flipline::protocol::{ClockSpec, Event, GameId};
use flipline::{Color, Game, Move, Variant};

/// One game's moves and clocks, as the server told them.
#[derive(Clone, Debug)]
pub struct Record {
    game: GameId,
    start: Game,
    moves: Vec<Move>,
    clock: Option<ClockSpec>,
    /// The clocks (black, white) after the last move, in milliseconds.
    clocks: Option<(u64, u64)>,
    /// Whether `moves` is every move from the start.
    known: bool,
    /// The side whose turn waits for `HISTORY`.
    waiting: Option<Color>,
}

impl Record {
    /// The record of a game that has just started (or been joined again).
    pub fn new(game: GameId, variant: Variant, clock: Option<ClockSpec>) -> Record {
        Record {
            game,
            start: Game::new(variant),
            moves: Vec::new(),
            clock,
            clocks: None,
            known: true,
            waiting: None,
        }
    }

    /// Takes in a line of the server's about this game.
    pub fn observe(&mut self, event: &Event) {
        match event {
            Event::Moved {
                game,
                played,
                clocks,
                ..
            } if *game == self.game => {
                self.moves.push(*played);
                self.clocks = *clocks;
            }
            Event::History(summary) if summary.game == self.game => {
                self.moves.clone_from(&summary.moves);
                self.known = true;
            }
            _ => {}
        }
    }

    /// Checks the record against the position the server shows (`BOARD`):
    /// one that differs, as after a reconnect, is no longer known.
    pub fn check(&mut self, position: &Game) {
        if self.position() != Some(*position) {
            self.known = false;
        }
    }

    /// The position the moves lead to; `None` when they do not replay.
    fn position(&self) -> Option<Game> {
        let mut game = self.start;
        for &mv in &self.moves {
            game.apply(mv).ok()?;
        }
        Some(game)
    }

    /// The start and the moves, when every move is known.
    pub fn moves(&self) -> Option<(Game, &[Move])> {
        self.known.then_some((self.start, self.moves.as_slice()))
    }

    /// Notes that `side`'s turn waits for `HISTORY`.
    pub fn wait_for_history(&mut self, side: Color) {
        self.waiting = Some(side);
    }

    /// The side whose turn can now be taken, once `HISTORY` has come.
    pub fn take_waiting(&mut self) -> Option<Color> {
        if self.known {
            self.waiting.take()
        } else {
            None
        }
    }

    /// The game's clock and the time `side` has left on it: as of the last
    /// move, or the base time before any.
    pub fn time_left(&self, side: Color) -> Option<(ClockSpec, Duration)> {
        let spec = self.clock?;
        let ms = match (self.clocks, side) {
            (Some((black, _)), Color::Black) => black,
            (Some((_, white)), Color::White) => white,
            (None, _) => spec.base_ms,
        };
        Some((spec, Duration::from_millis(ms)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flipline::protocol::{GameStatus, GameSummary};

    fn moved(game: GameId, square: &str, clocks: Option<(u64, u64)>) -> Event {
        Event::Moved {
            game,
            side: Color::Black,
            played: square.parse().unwrap(),
            black: 0,
            white: 0,
            clocks,
        }
    }

    #[test]
    fn moves_and_clocks_are_followed_and_a_gap_is_filled_by_history() {
        let clock = ClockSpec::parse("1+2").ok();
        let mut record = Record::new(3, Variant::Othello, clock);
        assert_eq!(
            record.time_left(Color::White).unwrap().1,
            Duration::from_secs(60)
        );
        record.observe(&moved(3, "f5", Some((61_000, 60_000))));
        record.observe(&moved(4, "d3", None));
        let (_, moves) = record.moves().unwrap();
        assert_eq!(moves.len(), 1);
        assert_eq!(
            record.time_left(Color::Black).unwrap().1,
            Duration::from_secs(61)
        );

        let mut after = Game::new(Variant::Othello);
        for mv in ["f5", "d6"] {
            after.apply(mv.parse().unwrap()).unwrap();
        }
        record.check(&after);
        assert!(record.moves().is_none());
        record.wait_for_history(Color::Black);
        assert_eq!(record.take_waiting(), None);
        record.observe(&Event::History(GameSummary {
            game: 3,
            variant: Variant::Othello,
            black: None,
            white: None,
            clock,
            status: GameStatus::Playing,
            result: None,
            moves: vec!["f5".parse().unwrap(), "d6".parse().unwrap()],
        }));
        assert_eq!(record.moves().unwrap().1.len(), 2);
        assert_eq!(record.take_waiting(), Some(Color::Black));
        record.check(&after);
        assert!(record.moves().is_some());
    }
}
