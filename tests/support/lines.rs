//! The daemon's lines as a test reads them: which lines are final replies
//! ([`is_final`]), events and replies typed by the rules crate's protocol
//! module ([`event`], [`reply_to`], [`reply_game`]), what tests need of `START`
//! and `OVER` ([`Start`], [`Over`]), and the rules a whole game's lines keep
//! ([`check_transcript`]). These only read strings, with no connection, so both
//! the client and the game driver build on them.

use flipline::protocol::{CommandKind, EndReason, Event, Reply, ServerLine};
use flipline::{Color, Variant};

/// Whether a server line is a final reply.
pub fn is_final(line: &str) -> bool {
    line == "OK" || line.starts_with("OK ") || line.starts_with("ERR ")
}

/// A line as an event; fails on anything else.
pub fn event(line: &str) -> Event {
    match ServerLine::parse(line) {
        ServerLine::Event(event) => event,
        other => panic!("not an event: {line:?} ({other:?})"),
    }
}

/// The final reply `reply` to `command` (the line sent), typed; fails on an
/// `ERR` line, an unknown command, or a line that is no reply to the command.
pub fn reply_to(command: &str, reply: &str) -> Reply {
    let Some(kind) = CommandKind::of_line(command) else {
        panic!("no command in {command:?}");
    };
    Reply::parse(kind, reply).unwrap_or_else(|e| panic!("{command} -> {reply}: {e}"))
}

/// The game in the reply to `command`: `OK <game>` (`NEW`, `SEEK`, `WATCH`,
/// `REMATCH`) or `OK <game> <X|O>` (`JOIN`).
pub fn reply_game(command: &str, reply: &str) -> u64 {
    match reply_to(command, reply) {
        Reply::Game(game) | Reply::Joined(game, _) => game,
        other => panic!("{command} -> {reply}: no game in {other:?}"),
    }
}

/// What a test needs of a `START` line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Start {
    /// The game.
    pub game: u64,
    /// Its variant.
    pub variant: Variant,
    /// Black's name.
    pub black: String,
    /// White's name.
    pub white: String,
}

/// The side to move in a `TURN` line and a command for it: `MOVE` with the
/// first legal square, or `PASS`.
pub fn first_move(turn: &str) -> (Color, String) {
    match event(turn) {
        Event::Turn { side, moves, .. } => {
            let command = moves
                .first()
                .map_or_else(|| "PASS".to_string(), |s| format!("MOVE {s}"));
            (side, command)
        }
        other => panic!("expected TURN, got {other:?}"),
    }
}

/// Reads a `START` line.
pub fn parse_start(line: &str) -> Start {
    match event(line) {
        Event::Start {
            game,
            variant,
            black,
            white,
            ..
        } => Start {
            game,
            variant,
            black,
            white,
        },
        other => panic!("expected START, got {other:?}"),
    }
}

/// How a game ended, from its `OVER` line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Over {
    /// The winner, `None` for a draw.
    pub winner: Option<Color>,
    /// Black's score.
    pub black: u32,
    /// White's score.
    pub white: u32,
    /// Why it ended.
    pub reason: EndReason,
}

/// Reads an `OVER` line.
pub fn parse_over(line: &str) -> Over {
    match event(line) {
        Event::Over {
            winner,
            black,
            white,
            reason,
            ..
        } => Over {
            winner,
            black,
            white,
            reason,
        },
        other => panic!("expected OVER, got {other:?}"),
    }
}

/// X and O in a BOARD line's cells.
pub fn count_cells(cells: &str) -> (u32, u32) {
    let count = |c: char| u32::try_from(cells.chars().filter(|&x| x == c).count()).unwrap_or(0);
    (count('X'), count('O'))
}

/// Checks the shape of a whole game's lines (from the first BOARD to OVER): each
/// MOVED is followed by a BOARD whose X and O counts are its disc counts; TURN
/// follows a BOARD whose side it names; the game ends with a BOARD with side `-`
/// and then OVER, whose scores sum to the squares of the board; nothing of the
/// game comes after OVER.
pub fn check_transcript(lines: &[String], variant: Variant) {
    let events: Vec<Event> = lines.iter().map(|l| event(l)).collect();
    for (i, pair) in events.windows(2).enumerate() {
        match pair {
            [
                Event::Moved { black, white, .. },
                Event::Board { cells, .. },
            ] => {
                assert_eq!(count_cells(cells), (*black, *white), "line {i}: {lines:?}");
            }
            [Event::Moved { .. }, other] => panic!("MOVED then {other:?}"),
            [Event::Board { to_move, .. }, Event::Turn { side, .. }] => {
                assert_eq!(*to_move, Some(*side), "line {i}");
            }
            [other, Event::Turn { .. }] => panic!("TURN after {other:?}, not BOARD"),
            _ => {}
        }
    }
    let n = events.len();
    let (Some(Event::Board { to_move, .. }), Some(Event::Over { black, white, .. })) =
        (n.checked_sub(2).and_then(|i| events.get(i)), events.last())
    else {
        panic!("the game does not end with BOARD then OVER: {lines:?}");
    };
    assert_eq!(*to_move, None, "the last BOARD still names a side");
    assert_eq!(black + white, variant.squares(), "OVER scores");
    let overs = events
        .iter()
        .filter(|e| matches!(e, Event::Over { .. }))
        .count();
    assert_eq!(overs, 1, "one OVER");
}
