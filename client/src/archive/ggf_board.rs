//! A position as GGF writes it (`BO[8 ---...--- *]`): the size, the rows
//! (`*` black, `O` white, `-` empty) and the side to move. What the export
//! writes and the import compares a game's board with.

use flipline::notation::cells_string;
use flipline::{Color, Game};

/// The size, the rows (`*` black, `O` white, `-` empty) and the side to move.
pub fn ggf_board(game: &Game) -> String {
    let size = usize::from(game.size());
    let cells: Vec<char> = cells_string(game)
        .chars()
        .map(|c| if c == 'X' { '*' } else { c })
        .collect();
    let rows: Vec<String> = cells
        .chunks(size.max(1))
        .map(|row| row.iter().collect())
        .collect();
    format!("{size} {} {}", rows.join(" "), ggf_side(game.to_move()))
}

fn ggf_side(color: Color) -> char {
    match color {
        Color::Black => '*',
        Color::White => 'O',
    }
}
