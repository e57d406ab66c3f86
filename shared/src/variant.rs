//! The games flipline hosts, and the two sides.

use std::fmt;

/// A side: black (`X`, first in Othello) or white (`O`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Color {
    /// `X`.
    Black,
    /// `O`.
    White,
}

impl Color {
    /// The other side.
    pub fn opponent(self) -> Color {
        match self {
            Color::Black => Color::White,
            Color::White => Color::Black,
        }
    }

    /// `X` for black, `O` for white (the OBF alphabet).
    pub fn letter(self) -> char {
        match self {
            Color::Black => 'X',
            Color::White => 'O',
        }
    }

    /// The side for an OBF letter (`X`/`O`, any case).
    pub fn from_letter(letter: &str) -> Option<Color> {
        match letter {
            "X" | "x" => Some(Color::Black),
            "O" | "o" => Some(Color::White),
            _ => None,
        }
    }
}

impl fmt::Display for Color {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.letter())
    }
}

/// How the squares a side may play are found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MoveRule {
    /// A move must flip at least one disc (Othello, Reversi, anti, other sizes).
    MustFlip,
    /// Any empty square with an occupied orthogonal neighbour; flips what it closes.
    Adjacent,
    /// Any empty square; nothing flips; three in a row wins (tic-tac-toe).
    Mark,
}

/// A game flipline knows the rules of.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Variant {
    /// 8x8, black first, most discs wins.
    Othello,
    /// 8x8, white first, most discs wins.
    Reversi,
    /// 8x8, any empty square beside a disc (N, E, S, W); ends when the board is full.
    Freeplace,
    /// 8x8 Othello where the fewest discs win.
    Anti,
    /// Othello on 6x6.
    Othello6,
    /// Othello on 10x10.
    Othello10,
    /// 3x3 noughts and crosses, X first.
    TicTacToe,
}

impl Variant {
    /// Every variant, in the order `LIST` and `--help` show them.
    pub const ALL: [Variant; 7] = [
        Variant::Othello,
        Variant::Reversi,
        Variant::Freeplace,
        Variant::Anti,
        Variant::Othello6,
        Variant::Othello10,
        Variant::TicTacToe,
    ];

    /// The protocol name (`othello`, `tictactoe`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Variant::Othello => "othello",
            Variant::Reversi => "reversi",
            Variant::Freeplace => "freeplace",
            Variant::Anti => "anti",
            Variant::Othello6 => "othello6",
            Variant::Othello10 => "othello10",
            Variant::TicTacToe => "tictactoe",
        }
    }

    /// Squares on a side of the board.
    pub fn size(self) -> u8 {
        match self {
            Variant::Othello6 => 6,
            Variant::Othello10 => 10,
            Variant::TicTacToe => 3,
            _ => 8,
        }
    }

    /// Squares on the board.
    pub fn squares(self) -> u32 {
        u32::from(self.size()) * u32::from(self.size())
    }

    /// The side that moves first.
    pub fn first_player(self) -> Color {
        match self {
            Variant::Reversi => Color::White,
            _ => Color::Black,
        }
    }

    /// How legal squares are found.
    pub fn move_rule(self) -> MoveRule {
        match self {
            Variant::Freeplace => MoveRule::Adjacent,
            Variant::TicTacToe => MoveRule::Mark,
            _ => MoveRule::MustFlip,
        }
    }

    /// Whether the side with fewer discs wins.
    pub fn fewest_wins(self) -> bool {
        self == Variant::Anti
    }

    /// Whether the game starts with the four centre discs (all but tic-tac-toe).
    pub fn has_centre_start(self) -> bool {
        self != Variant::TicTacToe
    }
}

impl fmt::Display for Variant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_case_insensitively() {
        for v in Variant::ALL {
            assert_eq!(v.name().to_uppercase().parse::<Variant>().unwrap(), v);
        }
        let err = "chess".parse::<Variant>().unwrap_err();
        assert!(err.to_string().contains("'chess'"), "{err}");
    }
}
