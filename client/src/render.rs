//! ASCII boards and status lines for people: pure functions from a position to
//! text, with ANSI colour only when asked for.

use flipline::{Color, Game, Square};

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
}
