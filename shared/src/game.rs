//! The rules of every variant as one pure state machine: [`Game`].

use std::fmt;

use crate::bits::{BitIter, Bits};
use crate::square::{Move, Square};
use crate::variant::{Color, MoveRule, Variant};

/// A set of squares of one board (legal moves, flipped discs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SquareSet {
    bits: u128,
    size: u8,
}

impl SquareSet {
    /// The squares of bit set `bits` on a board `size` squares wide.
    pub fn from_bits(bits: u128, size: u8) -> SquareSet {
        SquareSet { bits, size }
    }

    /// The set as bits (`row * size + col`).
    pub fn bits(self) -> u128 {
        self.bits
    }

    /// Whether `square` is in the set.
    pub fn contains(self, square: Square) -> bool {
        square.fits(self.size) && self.bits >> square.index(self.size) & 1 == 1
    }

    /// Squares in the set.
    pub fn len(self) -> usize {
        self.bits.count_ones() as usize
    }

    /// Whether the set is empty.
    pub fn is_empty(self) -> bool {
        self.bits == 0
    }

    /// The squares, row by row from a1.
    pub fn iter(self) -> impl Iterator<Item = Square> {
        BitIter(self.bits).map(move |index| Square::from_index(index, self.size))
    }
}

impl fmt::Display for SquareSet {
    /// Comma-separated squares (`d3,c4,f5,e6`), as `TURN` lines carry them.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, square) in self.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{square}")?;
        }
        Ok(())
    }
}

/// Why a move was refused. The game is unchanged after any of these.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MoveError {
    /// The game has ended.
    GameOver,
    /// The square is not on this board.
    OffBoard(Square),
    /// The square already holds a disc.
    Occupied(Square),
    /// The move would flip nothing (Othello's rule).
    FlipsNothing(Square),
    /// The square has no occupied orthogonal neighbour (free placement).
    NotAdjacent(Square),
    /// A pass while these moves are legal.
    MustMove(SquareSet),
}

impl fmt::Display for MoveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MoveError::GameOver => f.write_str("the game is over"),
            MoveError::OffBoard(s) => write!(f, "{s} is not on this board"),
            MoveError::Occupied(s) => write!(f, "{s} is occupied"),
            MoveError::FlipsNothing(s) => write!(f, "{s} flips nothing"),
            MoveError::NotAdjacent(s) => write!(f, "{s} is not next to a disc"),
            MoveError::MustMove(legal) => write!(f, "cannot pass: legal moves are {legal}"),
        }
    }
}

impl std::error::Error for MoveError {}

/// Disc counts of both sides.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Counts {
    /// Black (`X`) discs.
    pub black: u32,
    /// White (`O`) discs.
    pub white: u32,
}

/// How a finished game ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Outcome {
    /// The winner, or `None` for a draw.
    pub winner: Option<Color>,
    /// Black's score: discs, with the empty squares counted for the winner.
    pub black: u32,
    /// White's score; the two scores sum to the number of squares.
    pub white: u32,
}

/// The discs of both sides on a board of one integer width.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct Pair<B> {
    black: B,
    white: B,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Discs {
    /// Boards up to 8x8.
    Small(Pair<u64>),
    /// 10x10.
    Large(Pair<u128>),
}

/// The three-in-a-row lines of tic-tac-toe (bit `row * 3 + col`).
const TICTACTOE_LINES: [u128; 8] = [
    0b000_000_111,
    0b000_111_000,
    0b111_000_000,
    0b001_001_001,
    0b010_010_010,
    0b100_100_100,
    0b100_010_001,
    0b001_010_100,
];

impl<B: Bits> Pair<B> {
    fn of(&self, color: Color) -> B {
        match color {
            Color::Black => self.black,
            Color::White => self.white,
        }
    }

    fn set(&mut self, color: Color, bits: B) {
        match color {
            Color::Black => self.black = bits,
            Color::White => self.white = bits,
        }
    }

    /// Squares `color` may play under the variant's rule, ignoring whether the game
    /// has ended.
    fn legal(&self, variant: Variant, color: Color) -> B {
        let Some(geometry) = B::geometry(variant.size()) else {
            return B::ZERO;
        };
        let (p, o) = (self.of(color), self.of(color.opponent()));
        match variant.move_rule() {
            MoveRule::MustFlip => B::flip_moves(geometry, p, o),
            MoveRule::Adjacent => geometry.adjacent_empties(p | o),
            MoveRule::Mark => geometry.full & !(p | o),
        }
    }

    /// `color` places a disc on `square`; returns the flipped discs.
    fn place(&mut self, variant: Variant, color: Color, square: Square) -> Result<B, MoveError> {
        let size = variant.size();
        let geometry = B::geometry(size).ok_or(MoveError::OffBoard(square))?;
        if !square.fits(size) {
            return Err(MoveError::OffBoard(square));
        }
        let mv = B::bit(square.index(size));
        let (p, o) = (self.of(color), self.of(color.opponent()));
        if !((p | o) & mv).is_empty() {
            return Err(MoveError::Occupied(square));
        }
        let flipped = match variant.move_rule() {
            MoveRule::Mark => B::ZERO,
            MoveRule::MustFlip => B::flips(geometry, mv, p, o),
            MoveRule::Adjacent => geometry.flips(mv, p, o),
        };
        if (self.legal(variant, color) & mv).is_empty() {
            return Err(match variant.move_rule() {
                MoveRule::Adjacent => MoveError::NotAdjacent(square),
                _ => MoveError::FlipsNothing(square),
            });
        }
        self.set(color, p | mv | flipped);
        self.set(color.opponent(), o ^ flipped);
        Ok(flipped)
    }

    fn has_line(&self, color: Color) -> bool {
        let discs: u128 = self.of(color).into();
        TICTACTOE_LINES
            .into_iter()
            .filter(|&line| discs & line == line)
            .count()
            > 0
    }
}

/// A game of any variant: the board, the side to move and whether it has ended.
/// `Copy` and a few dozen bytes, so that search and replay copy it freely.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Game {
    variant: Variant,
    discs: Discs,
    to_move: Color,
    over: bool,
}

/// Applies the same generic method to whichever width the discs are held in.
macro_rules! on_discs {
    ($discs:expr, $pair:ident => $body:expr) => {
        match $discs {
            Discs::Small($pair) => $body,
            Discs::Large($pair) => $body,
        }
    };
}

impl Game {
    /// The start position of `variant`: the four centre discs (d5/e4 black, d4/e5
    /// white on 8x8; the same pattern in the centre of other boards), or an empty
    /// tic-tac-toe grid.
    pub fn new(variant: Variant) -> Game {
        let size = u32::from(variant.size());
        let (mut black, mut white) = (0u128, 0u128);
        if variant.has_centre_start() {
            let (hi, lo) = (size / 2, size / 2 - 1);
            black = 1 << (hi * size + lo) | 1 << (lo * size + hi);
            white = 1 << (lo * size + lo) | 1 << (hi * size + hi);
        }
        Game::from_bits(variant, black, white, variant.first_player())
    }

    /// A position given as bit sets (`row * size + col`). Bits beyond the board
    /// are dropped; a square set in both sets is black's. Whether the game has
    /// ended is worked out from the position.
    pub fn from_bits(variant: Variant, black: u128, white: u128, to_move: Color) -> Game {
        let full = u128::MAX >> (128 - variant.squares());
        let (black, white) = (black & full, white & full & !black);
        let discs = if variant.size() <= 8 {
            // Lossless: `full` keeps at most 64 bits for these boards.
            Discs::Small(Pair {
                black: black as u64,
                white: white as u64,
            })
        } else {
            Discs::Large(Pair { black, white })
        };
        let mut game = Game {
            variant,
            discs,
            to_move,
            over: false,
        };
        game.over = game.has_ended();
        game
    }

    /// The variant being played.
    pub fn variant(&self) -> Variant {
        self.variant
    }

    /// Squares on a side of the board.
    pub fn size(&self) -> u8 {
        self.variant.size()
    }

    /// The side to move (after the end: the side that would have moved next).
    pub fn to_move(&self) -> Color {
        self.to_move
    }

    /// Whether the game has ended.
    pub fn is_over(&self) -> bool {
        self.over
    }

    /// The squares the side to move may play (none once the game is over).
    pub fn legal_moves(&self) -> SquareSet {
        let bits = if self.over {
            0
        } else {
            on_discs!(self.discs, d => widen(d.legal(self.variant, self.to_move)))
        };
        SquareSet::from_bits(bits, self.size())
    }

    /// Whether the side to move has no move and must pass.
    pub fn must_pass(&self) -> bool {
        !self.over && self.legal_moves().is_empty()
    }

    /// Plays `mv` for the side to move. Returns the flipped discs; on error the game
    /// is unchanged.
    pub fn apply(&mut self, mv: Move) -> Result<SquareSet, MoveError> {
        if self.over {
            return Err(MoveError::GameOver);
        }
        let flipped = match mv {
            Move::Pass => {
                let legal = self.legal_moves();
                if !legal.is_empty() {
                    return Err(MoveError::MustMove(legal));
                }
                0
            }
            Move::Place(square) => self.place(square)?,
        };
        self.to_move = self.to_move.opponent();
        self.over = self.has_ended();
        Ok(SquareSet::from_bits(flipped, self.size()))
    }

    fn place(&mut self, square: Square) -> Result<u128, MoveError> {
        let (variant, color) = (self.variant, self.to_move);
        on_discs!(&mut self.discs, d => d.place(variant, color, square).map(widen))
    }

    fn has_ended(&self) -> bool {
        let (variant, side) = (self.variant, self.to_move);
        match variant.move_rule() {
            MoveRule::Mark => {
                let Counts { black, white } = self.counts();
                black + white == variant.squares() || self.line_owner().is_some()
            }
            _ => on_discs!(self.discs, d => {
                d.legal(variant, side).is_empty() && d.legal(variant, side.opponent()).is_empty()
            }),
        }
    }

    /// What stands on `square`: a side's disc, or `None` when it is empty or off the
    /// board.
    pub fn cell(&self, square: Square) -> Option<Color> {
        if !square.fits(self.size()) {
            return None;
        }
        let index = square.index(self.size());
        let (black, white) = self.bits();
        if black >> index & 1 == 1 {
            Some(Color::Black)
        } else if white >> index & 1 == 1 {
            Some(Color::White)
        } else {
            None
        }
    }

    /// Black's and white's discs as bit sets (`row * size + col`).
    pub fn bits(&self) -> (u128, u128) {
        on_discs!(self.discs, d => (widen(d.black), widen(d.white)))
    }

    /// An 8x8 position as (side to move, other side) bitboards for the engine, or
    /// `None` on other board sizes.
    pub fn board8(&self) -> Option<(u64, u64)> {
        match self.discs {
            Discs::Small(d) if self.size() == 8 => Some(match self.to_move {
                Color::Black => (d.black, d.white),
                Color::White => (d.white, d.black),
            }),
            _ => None,
        }
    }

    /// Raw disc counts, empties not counted.
    pub fn counts(&self) -> Counts {
        let (black, white) = self.bits();
        Counts {
            black: black.count_ones(),
            white: white.count_ones(),
        }
    }

    /// The result once the game is over.
    pub fn outcome(&self) -> Option<Outcome> {
        self.over.then(|| self.score())
    }

    /// The score as if the game ended now: the winner takes the empty squares.
    /// In `anti` the fewest discs win, so the empties go to the loser's count,
    /// which widens the winner's margin as they do in Othello.
    pub fn score(&self) -> Outcome {
        let Counts { black, white } = self.counts();
        let empties = self.variant.squares() - black - white;
        let winner = match self.variant.move_rule() {
            MoveRule::Mark => self.line_owner(),
            _ => {
                let more = match black.cmp(&white) {
                    std::cmp::Ordering::Greater => Some(Color::Black),
                    std::cmp::Ordering::Less => Some(Color::White),
                    std::cmp::Ordering::Equal => None,
                };
                if self.variant.fewest_wins() {
                    more.map(Color::opponent)
                } else {
                    more
                }
            }
        };
        let takes_empties = match winner {
            Some(w) if self.variant.fewest_wins() => Some(w.opponent()),
            other => other,
        };
        let (black, white) = match takes_empties {
            Some(Color::Black) => (black + empties, white),
            Some(Color::White) => (black, white + empties),
            None => (black + empties / 2, white + empties - empties / 2),
        };
        Outcome {
            winner,
            black,
            white,
        }
    }

    /// The side with three in a row, in tic-tac-toe.
    fn line_owner(&self) -> Option<Color> {
        [Color::Black, Color::White]
            .into_iter()
            .find(|&c| on_discs!(self.discs, d => d.has_line(c)))
    }

    /// A 64-bit hash of the position: variant, discs and side to move.
    pub fn hash(&self) -> u64 {
        let (black, white) = self.bits();
        let mut h = (self.variant as u64) << 1 | (self.to_move == Color::White) as u64;
        for word in [
            black as u64,
            (black >> 64) as u64,
            white as u64,
            (white >> 64) as u64,
        ] {
            h = mix64(h ^ word).wrapping_add(0x9E37_79B9_7F4A_7C15);
        }
        h
    }
}

/// A bit set of any width as a `u128`.
fn widen<B: Bits>(bits: B) -> u128 {
    bits.into()
}

/// The finaliser of MurmurHash3: every input bit affects every output bit.
pub fn mix64(mut x: u64) -> u64 {
    x ^= x >> 33;
    x = x.wrapping_mul(0xFF51_AFD7_ED55_8CCD);
    x ^= x >> 33;
    x = x.wrapping_mul(0xC4CE_B9FE_1A85_EC53);
    x ^ (x >> 33)
}
