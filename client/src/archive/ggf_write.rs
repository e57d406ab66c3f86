//! Writing GGF, the one writer: a position as `BO` holds it, and the moves
//! as `B[..]`/`W[..]` (passes as `PA`, the seconds a move took after two
//! slashes). `flip export` writes whole games with it, the import compares
//! a game's board with what it writes, and the NBoard protocol hands
//! engines their game through it.

use flipline::notation::cells_string;
use flipline::{Color, Game, Move};

/// How a board's rows are laid out in `BO`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rows {
    /// A space between rows (`8 -------- ... *`), as GGS's archives do.
    Apart,
    /// All the cells in one run, as NBoard writes boards.
    Together,
}

/// The size, the rows (`*` black, `O` white, `-` empty) and the side to move.
pub fn board(game: &Game, rows: Rows) -> String {
    let size = usize::from(game.size());
    let cells: Vec<char> = cells_string(game)
        .chars()
        .map(|c| if c == 'X' { '*' } else { c })
        .collect();
    let cells: String = match rows {
        Rows::Together => cells.iter().collect(),
        Rows::Apart => (cells.chunks(size.max(1)))
            .map(|row| row.iter().collect::<String>())
            .collect::<Vec<_>>()
            .join(" "),
    };
    format!("{size} {cells} {}", side(game.to_move()))
}

fn side(color: Color) -> char {
    match color {
        Color::Black => '*',
        Color::White => 'O',
    }
}

/// A move as GGF and NBoard write it: `F5`, or `PA` for a pass.
pub fn move_text(mv: Move) -> String {
    match mv {
        Move::Pass => "PA".to_string(),
        Move::Place(square) => square.to_string().to_ascii_uppercase(),
    }
}

/// The moves from `start`, each with the milliseconds it took if known
/// (`B[F5//4.09]`, else `B[F5]`), tagged by the side that made it; `None`
/// at a move that is not legal there.
pub fn moves(start: Game, moves: impl IntoIterator<Item = (Move, Option<u64>)>) -> Option<String> {
    let mut game = start;
    let mut text = String::new();
    for (mv, ms) in moves {
        let tag = match game.to_move() {
            Color::Black => 'B',
            Color::White => 'W',
        };
        game.apply(mv).ok()?;
        let square = move_text(mv);
        match ms {
            Some(ms) => text.push_str(&format!(
                "{tag}[{square}//{}.{:02}]",
                ms / 1000,
                ms % 1000 / 10
            )),
            None => text.push_str(&format!("{tag}[{square}]")),
        }
    }
    Some(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use flipline::Variant;

    #[test]
    fn a_board_and_moves_read_as_ggf_writes_them() {
        let start = Game::new(Variant::Othello);
        let apart = board(&start, Rows::Apart);
        assert!(
            apart.starts_with("8 -------- -------- -------- ---O*--- "),
            "{apart}"
        );
        assert!(apart.ends_with(" *"));
        let together = board(&start, Rows::Together);
        assert_eq!(together.len(), "8  *".len() + 64);
        let f5 = Move::Place(flipline::Square::new(4, 5).unwrap_or_else(|| panic!("f5")));
        assert_eq!(
            moves(start, [(f5, Some(4090))]).as_deref(),
            Some("B[F5//4.09]")
        );
        assert_eq!(moves(start, [(f5, None)]).as_deref(), Some("B[F5]"));
        assert_eq!(
            moves(start, [(Move::Pass, None)]),
            None,
            "not legal at the start"
        );
    }
}
