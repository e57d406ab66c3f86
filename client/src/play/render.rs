//! ASCII boards and status lines for people: pure functions from a position to
//! text, with ANSI colour only when asked for.

use std::time::Duration;

use flipline::{Color, Game, Move, Square};

/// What to draw besides the discs.
#[derive(Clone, Debug, Default)]
pub struct BoardView {
    /// The last square played, drawn in brackets.
    pub last: Option<Square>,
    /// Whether to mark the legal squares of the side to move.
    pub show_legal: bool,
    /// Whether to use ANSI colours.
    pub color: bool,
}

const RESET: &str = "\x1b[0m";
const BLACK_STYLE: &str = "\x1b[1m";
const WHITE_STYLE: &str = "\x1b[1;33m";
const LEGAL_STYLE: &str = "\x1b[2;32m";
const LOW_STYLE: &str = "\x1b[1;31m";

/// The board of `game`: column letters above and below, row numbers on both
/// sides, `X`/`O` discs, `.` empty squares, `*` legal squares, and the last move
/// in brackets. Three columns per square: 10x10 needs 38 columns.
pub fn board(game: &Game, view: &BoardView) -> Vec<String> {
    let size = game.size();
    let legal = if view.show_legal {
        Some(game.legal_moves())
    } else {
        None
    };
    let letters: String = (0..size)
        .map(|c| format!(" {} ", char::from(b'a' + c)))
        .collect();
    let edge = format!("    {letters}");
    let mut lines = vec![edge.trim_end().to_string()];
    for row in 0..size {
        let mut line = format!("{:>3} ", row + 1);
        for col in 0..size {
            let square = Square { row, col };
            let (mark, style) = match game.cell(square) {
                Some(Color::Black) => ('X', BLACK_STYLE),
                Some(Color::White) => ('O', WHITE_STYLE),
                None if legal.is_some_and(|l| l.contains(square)) => ('*', LEGAL_STYLE),
                None => ('.', ""),
            };
            let (open, close) = if view.last == Some(square) {
                ('[', ']')
            } else {
                (' ', ' ')
            };
            line.push(open);
            if view.color && !style.is_empty() {
                line.push_str(style);
                line.push(mark);
                line.push_str(RESET);
            } else {
                line.push(mark);
            }
            line.push(close);
        }
        line.push_str(&format!(" {}", row + 1));
        lines.push(line);
    }
    lines.push(edge.trim_end().to_string());
    lines
}

/// Milliseconds as `m:ss.t` (or `h:mm:ss` from an hour up).
pub fn clock(ms: u64) -> String {
    let tenths = ms / 100;
    let (seconds, tenth) = (tenths / 10, tenths % 10);
    let (minutes, second) = (seconds / 60, seconds % 60);
    if minutes >= 60 {
        format!("{}:{:02}:{second:02}", minutes / 60, minutes % 60)
    } else {
        format!("{minutes}:{second:02}.{tenth}")
    }
}

/// Below this much time left a clock is shown with a warning.
pub const LOW_TIME_MS: u64 = 10_000;

/// The clocks (black's, white's milliseconds) `elapsed` after they were
/// `last` (a `MOVED`'s times, or the base times at the start), with the
/// clock of `running` (the side to move; `None` once nothing runs)
/// counting down to 0.
pub fn running_clocks(last: (u64, u64), running: Option<Color>, elapsed: Duration) -> (u64, u64) {
    let spent = u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX);
    let (black, white) = last;
    match running {
        Some(Color::Black) => (black.saturating_sub(spent), white),
        Some(Color::White) => (black, white.saturating_sub(spent)),
        None => (black, white),
    }
}

/// Both clocks in a template of fixed width (so that a prompt drawn again
/// with other times takes the same columns): `X 4:59.9  O 5:00.0 `, a `!`
/// after a clock under [`LOW_TIME_MS`] (in red too where colour is on),
/// the running clock's side letter bracketed: `[X] 0:09.3! O 5:00.0 `.
pub fn clock_bar(clocks: (u64, u64), running: Option<Color>, color: bool) -> String {
    let one = |side: Color, ms: u64| {
        let letter = if running == Some(side) {
            format!("[{}]", side.letter())
        } else {
            format!(" {} ", side.letter())
        };
        let low = ms < LOW_TIME_MS;
        let time = format!("{:>7}", clock(ms));
        let time = if low && color {
            format!("{LOW_STYLE}{time}{RESET}")
        } else {
            time
        };
        format!("{letter}{time}{}", if low { "!" } else { " " })
    };
    format!(
        "{}{} ",
        one(Color::Black, clocks.0),
        one(Color::White, clocks.1)
    )
}

/// The columns [`clock_bar`] takes, whatever the times.
pub const CLOCK_BAR_WIDTH: usize = 2 * (3 + 7 + 1) + 1;

/// The widest a line of text may be: an 80-column terminal, less one so
/// that no line makes it wrap.
pub const COLUMNS: usize = 79;

/// A game's moves numbered by pairs, black's then white's, passes as
/// `pass`, the last one marked `*` (`1. f5 d6  2. c3 d3*`), cut between
/// pairs into lines of at most [`COLUMNS`].
pub fn move_list(moves: &[Move]) -> Vec<String> {
    move_list_marked(moves, moves.len().checked_sub(1))
}

/// [`move_list`] with the move at index `marked` (0 the first) marked
/// instead of the last, or none: a reviewed game's current move.
pub fn move_list_marked(moves: &[Move], marked: Option<usize>) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    for (number, pair) in moves.chunks(2).enumerate() {
        let plies: Vec<String> = (pair.iter().enumerate())
            .map(|(i, m)| {
                let mark = if Some(number * 2 + i) == marked {
                    "*"
                } else {
                    ""
                };
                format!("{m}{mark}")
            })
            .collect();
        let pair = format!("{}. {}", number + 1, plies.join(" "));
        if !line.is_empty() && line.len() + 2 + pair.len() > COLUMNS {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push_str("  ");
        }
        line.push_str(&pair);
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use flipline::Variant;
    use flipline::notation::parse_board;

    #[test]
    fn the_start_position_renders_with_legal_squares_marked() {
        let game = Game::new(Variant::Othello);
        let view = BoardView {
            last: None,
            show_legal: true,
            color: false,
        };
        let expect = [
            "     a  b  c  d  e  f  g  h",
            "  1  .  .  .  .  .  .  .  .  1",
            "  2  .  .  .  .  .  .  .  .  2",
            "  3  .  .  .  *  .  .  .  .  3",
            "  4  .  .  *  O  X  .  .  .  4",
            "  5  .  .  .  X  O  *  .  .  5",
            "  6  .  .  .  .  *  .  .  .  6",
            "  7  .  .  .  .  .  .  .  .  7",
            "  8  .  .  .  .  .  .  .  .  8",
            "     a  b  c  d  e  f  g  h",
        ];
        assert_eq!(board(&game, &view), expect);
    }

    #[test]
    fn the_last_move_is_bracketed_and_small_boards_render() {
        let game = parse_board("X---O---- X", Variant::TicTacToe).unwrap();
        let view = BoardView {
            last: "b2".parse().ok(),
            show_legal: false,
            color: false,
        };
        let expect = [
            "     a  b  c",
            "  1  X  .  .  1",
            "  2  . [O] .  2",
            "  3  .  .  .  3",
            "     a  b  c",
        ];
        assert_eq!(board(&game, &view), expect);
    }

    #[test]
    fn ten_by_ten_fits_in_80_columns_and_colour_is_optional() {
        let game = Game::new(Variant::Othello10);
        let plain = board(
            &game,
            &BoardView {
                last: None,
                show_legal: true,
                color: false,
            },
        );
        assert_eq!(plain.len(), 12);
        assert!(plain.iter().all(|l| l.len() <= 80), "{plain:?}");
        assert!(plain.get(10).is_some_and(|l| l.starts_with(" 10 ")));
        let coloured = board(
            &game,
            &BoardView {
                last: None,
                show_legal: true,
                color: true,
            },
        );
        assert!(coloured.iter().any(|l| l.contains("\x1b[")));
        assert!(plain.iter().all(|l| !l.contains('\x1b')));
    }

    #[test]
    fn clocks_read_naturally() {
        assert_eq!(clock(299_950), "4:59.9");
        assert_eq!(clock(5_000), "0:05.0");
        assert_eq!(clock(3_723_000), "1:02:03");
    }

    #[test]
    fn a_move_list_is_numbered_by_pairs_and_marks_the_last() {
        let moves = |text: &str| -> Vec<Move> {
            text.split(' ')
                .map(|m| m.parse().unwrap_or_else(|e| panic!("{m}: {e:?}")))
                .collect()
        };
        assert_eq!(move_list(&[]), Vec::<String>::new());
        assert_eq!(move_list(&moves("f5")), ["1. f5*"]);
        assert_eq!(move_list(&moves("f5 d6 c3 d3")), ["1. f5 d6  2. c3 d3*"]);
        assert_eq!(
            move_list(&moves("f5 d6 c3 pass e6")),
            ["1. f5 d6  2. c3 pass  3. e6*"]
        );
        // A whole game: every line within 79 columns, cut between pairs.
        let long = moves(&["f5 d6 c3 d3"; 16].join(" "));
        let lines = move_list(&long);
        assert!(lines.len() > 1, "{lines:?}");
        assert!(lines.iter().all(|l| l.len() <= COLUMNS), "{lines:#?}");
        assert!(
            lines
                .iter()
                .all(|l| !l.starts_with(' ') && !l.ends_with(' '))
        );
        assert!(
            (lines.iter().flat_map(|l| l.split("  "))).all(|p| p.split(' ').count() == 3),
            "{lines:#?}"
        );
        assert_eq!(lines.last().map(|l| l.ends_with("32. c3 d3*")), Some(true));
        assert_eq!(lines.concat().matches('*').count(), 1);
    }

    #[test]
    fn the_running_clock_counts_down_from_the_last_times_and_stops_at_zero() {
        let last = (60_000, 30_000);
        let after = |side, ms| running_clocks(last, side, Duration::from_millis(ms));
        assert_eq!(after(Some(Color::Black), 1_500), (58_500, 30_000));
        assert_eq!(after(Some(Color::White), 1_500), (60_000, 28_500));
        assert_eq!(after(Some(Color::White), 90_000), (60_000, 0));
        assert_eq!(after(None, 90_000), last);
    }

    #[test]
    fn the_clock_bar_keeps_its_width_and_warns_at_low_time() {
        let bar = clock_bar((299_950, 300_000), Some(Color::Black), false);
        assert_eq!(bar, "[X] 4:59.9  O  5:00.0  ");
        assert_eq!(bar.len(), CLOCK_BAR_WIDTH);
        let low = clock_bar((9_300, 3_723_000), Some(Color::White), false);
        assert_eq!(low, " X  0:09.3![O]1:02:03  ");
        assert_eq!(low.len(), CLOCK_BAR_WIDTH);
        assert_eq!(
            clock_bar((0, 600_000), None, false),
            " X  0:00.0! O 10:00.0  "
        );
        let red = clock_bar((9_300, 5_000), None, true);
        assert!(red.contains("\x1b[1;31m 0:09.3\x1b[0m!"), "{red:?}");
        assert!(!clock_bar((60_000, 60_000), None, true).contains('\x1b'));
    }
}
