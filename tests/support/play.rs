//! The game driver: [`play_game`] plays a game to `OVER` from its `TURN` lines,
//! for any mix of clients and the daemon's bots, and checks every line against
//! a local copy of the game in the rules crate. Kept apart from the client
//! because only the driver needs that copy and the reading of a turn's lines
//! from several clients at once.

use std::time::Duration;

use flipline::notation::cells_string;
use flipline::protocol::{EndReason, Event};
use flipline::{Color, Game, Move, Square};

use crate::client::Client;
use crate::lines::{Over, Start, check_transcript, event, parse_over};

/// A game played to its end by [`play_game`].
#[derive(Debug)]
pub struct Finished {
    /// Every line of the game, from the first BOARD to OVER, as the first client saw it.
    pub lines: Vec<String>,
    /// Passes played.
    pub passes: usize,
    /// Plies played (passes included).
    pub plies: usize,
    /// The end.
    pub over: Over,
}

/// Who plays a side in [`play_game`]: a client (by index) or the daemon's bot.
pub type SeatOf = [Option<usize>; 2];

/// The seats of a game from its START line: each side's client by name, `None`
/// where no client has that name (a bot).
pub fn seats_of(start: &Start, clients: &[&mut Client]) -> SeatOf {
    let find = |name: &str| clients.iter().position(|c| c.name == name);
    [find(&start.black), find(&start.white)]
}

fn slot(color: Color) -> usize {
    match color {
        Color::Black => 0,
        Color::White => 1,
    }
}

/// Plays a game to `OVER`. Every client must have read the game's `START` line
/// and nothing after it. On each `TURN` the client in that seat answers: `PASS`
/// when the moves are `pass`, otherwise `MOVE` with `choose(moves)`; a bot's
/// turn is waited out. Every client must see the same lines; each `TURN`,
/// `BOARD`, `MOVED` and `OVER` is checked against a local [`Game`].
pub fn play_game(
    clients: &mut [&mut Client],
    start: &Start,
    choose: &mut dyn FnMut(&[Square]) -> Square,
) -> Finished {
    play_game_from(clients, start, Game::new(start.variant), choose)
}

/// [`play_game`] for a game that began at `position` (`NEW ... from`).
pub fn play_game_from(
    clients: &mut [&mut Client],
    start: &Start,
    position: Game,
    choose: &mut dyn FnMut(&[Square]) -> Square,
) -> Finished {
    let seats = seats_of(start, clients);
    let mut mirror = Mirror {
        game: position,
        plies: 0,
    };
    let (mut lines, mut passes) = (Vec::new(), 0);
    for _ in 0..1000 {
        let segment = read_segment(clients, start.game);
        segment.iter().for_each(|line| mirror.check(line));
        lines.extend(segment.iter().cloned());
        let last = segment.last().map(String::as_str).unwrap_or_default();
        if last.starts_with("OVER ") {
            return finish(clients, start, lines, passes, mirror.plies);
        }
        let Event::Turn { side, moves, .. } = event(last) else {
            panic!("expected TURN, got {last:?}");
        };
        // A bot's turn: its move comes with the next segment.
        let Some(mover) = seats[slot(side)] else {
            continue;
        };
        passes += usize::from(moves.is_empty());
        let command = match moves.as_slice() {
            [] => "PASS".to_string(),
            moves => format!("MOVE {}", choose(moves)),
        };
        let client = clients
            .get_mut(mover)
            .unwrap_or_else(|| panic!("no client {mover}"));
        assert_eq!(
            client.command(&command),
            (vec![], "OK".to_string()),
            "{command}"
        );
    }
    panic!("game {} did not end in 1000 turns", start.game)
}

/// The end of [`play_game_from`]: checks the whole game's lines and that nothing
/// of the game (no stray TURN) follows OVER.
fn finish(
    clients: &mut [&mut Client],
    start: &Start,
    lines: Vec<String>,
    passes: usize,
    plies: usize,
) -> Finished {
    check_transcript(&lines, start.variant);
    for client in clients.iter_mut() {
        client.expect_silence(Duration::from_millis(30));
    }
    let over = parse_over(lines.last().map(String::as_str).unwrap_or_default());
    Finished {
        lines,
        passes,
        plies,
        over,
    }
}

/// Reads each client's lines up to the next TURN or OVER of `game` and checks
/// that they all saw the same lines.
fn read_segment(clients: &mut [&mut Client], game: u64) -> Vec<String> {
    let turn = format!("TURN {game} ");
    let over = format!("OVER {game} ");
    let mut first: Option<Vec<String>> = None;
    for client in clients.iter_mut() {
        let mut segment = Vec::new();
        loop {
            let line = client.line();
            let done = line.starts_with(&turn) || line.starts_with(&over);
            segment.push(line);
            if done {
                break;
            }
            assert!(segment.len() < 100, "no TURN or OVER in {segment:?}");
        }
        match &first {
            Some(seen) => assert_eq!(&segment, seen, "{} saw other lines", client.name),
            None => first = Some(segment),
        }
    }
    first.unwrap_or_default()
}

/// The game as the rules crate plays it, checked against the daemon's lines.
struct Mirror {
    game: Game,
    plies: usize,
}

impl Mirror {
    fn check(&mut self, line: &str) {
        match event(line) {
            Event::Board { cells, to_move, .. } => {
                assert_eq!(cells, cells_string(&self.game), "{line}");
                let expected = (!self.game.is_over()).then(|| self.game.to_move());
                assert_eq!(to_move, expected, "{line}");
            }
            Event::Turn { side, moves, .. } => {
                assert_eq!(side, self.game.to_move(), "{line}");
                let legal: Vec<Square> = self.game.legal_moves().iter().collect();
                assert_eq!(moves, legal, "{line}");
            }
            Event::Moved {
                side,
                played,
                black,
                white,
                ..
            } => self.moved(line, side, played, (black, white)),
            Event::Over {
                winner,
                black,
                white,
                reason: EndReason::Normal,
                ..
            } => {
                let score = self.game.score();
                assert!(self.game.is_over(), "{line} before the end");
                assert_eq!(
                    (winner, black, white),
                    (score.winner, score.black, score.white)
                );
            }
            _ => {}
        }
    }

    fn moved(&mut self, line: &str, side: Color, played: Move, discs: (u32, u32)) {
        assert_eq!(side, self.game.to_move(), "{line}");
        if let Err(e) = self.game.apply(played) {
            panic!("{line}: the rules refuse it: {e}");
        }
        self.plies += 1;
        let counts = self.game.counts();
        assert_eq!(discs, (counts.black, counts.white), "{line}");
    }
}
