//! Bitboards of any size: the `Bits` trait over `u64` (boards up to 8x8) and `u128`
//! (10x10), each board's direction masks, and the size-independent rules.
//!
//! Bit `row * size + col` is the square at (row, col); `a1` is bit 0. A shift by one
//! direction is done on the squares that have a neighbour that way, so it never wraps
//! around an edge nor leaves the board. The 8x8 hot path lives in [`crate::board8`];
//! the generic code here is for the other sizes and for rules that are not Othello's.

use std::fmt::Debug;
use std::ops::{BitAnd, BitAndAssign, BitOr, BitOrAssign, BitXor, Not, Shl, Shr};

/// A set of squares as the bits of an unsigned integer.
pub trait Bits:
    Copy
    + 'static
    + Eq
    + Debug
    + BitAnd<Output = Self>
    + BitOr<Output = Self>
    + BitXor<Output = Self>
    + Not<Output = Self>
    + BitAndAssign
    + BitOrAssign
    + Shl<u32, Output = Self>
    + Shr<u32, Output = Self>
    + Into<u128>
{
    /// The empty set.
    const ZERO: Self;
    /// The set of the one square `index`, or the empty set when it is out of range.
    fn bit(index: u32) -> Self;
    /// Squares in the set.
    fn count(self) -> u32;
    /// The lowest square in the set (the bit width when it is empty).
    fn first(self) -> u32;
    /// The direction masks of a `size` x `size` board held in this type, if it fits.
    fn geometry(size: u8) -> Option<&'static Geometry<Self>>;
    /// The squares where the side `p` may play a move that flips (Othello's rule).
    fn flip_moves(geometry: &Geometry<Self>, p: Self, o: Self) -> Self {
        geometry.flip_moves(p, o)
    }
    /// The discs of `o` that a disc of `p` placed on `mv` would flip.
    fn flips(geometry: &Geometry<Self>, mv: Self, p: Self, o: Self) -> Self {
        geometry.flips(mv, p, o)
    }
    /// Whether the set is empty.
    fn is_empty(self) -> bool {
        self == Self::ZERO
    }
}

/// One of the eight directions on a board of a given size.
#[derive(Clone, Copy, Debug)]
pub struct Direction<B> {
    /// How far a bit moves.
    pub shift: u32,
    /// Whether it moves towards higher indices (a left shift).
    pub up: bool,
    /// The squares that have a neighbour in this direction.
    pub from: B,
}

/// The masks of one board size.
#[derive(Clone, Copy, Debug)]
pub struct Geometry<B> {
    /// Squares on a side.
    pub size: u8,
    /// Every square of the board.
    pub full: B,
    /// E, W, S, N, then the four diagonals: the first four are the orthogonal ones.
    pub directions: [Direction<B>; 8],
}

/// (row, column) steps of the directions, orthogonal first.
const STEPS: [(i32, i32); 8] = [
    (0, 1),
    (0, -1),
    (1, 0),
    (-1, 0),
    (1, 1),
    (1, -1),
    (-1, 1),
    (-1, -1),
];

macro_rules! geometry_builder {
    ($name:ident, $t:ty) => {
        /// The masks of a `n` x `n` board (evaluated at compile time).
        const fn $name(n: u8) -> Geometry<$t> {
            let n = n as i32;
            let mut directions = [Direction {
                shift: 0,
                up: true,
                from: 0,
            }; 8];
            let mut full: $t = 0;
            let mut d = 0;
            while d < 8 {
                let (dr, dc) = STEPS[d];
                let mut from: $t = 0;
                let mut square = 0;
                while square < n * n {
                    let (r, c) = (square / n + dr, square % n + dc);
                    if r >= 0 && r < n && c >= 0 && c < n {
                        from |= 1 << square;
                    }
                    full |= 1 << square;
                    square += 1;
                }
                let delta = dr * n + dc;
                directions[d] = Direction {
                    shift: delta.unsigned_abs(),
                    up: delta > 0,
                    from,
                };
                d += 1;
            }
            Geometry {
                size: n as u8,
                full,
                directions,
            }
        }
    };
}

geometry_builder!(geometry_u64, u64);
geometry_builder!(geometry_u128, u128);

static GEOMETRY_3: Geometry<u64> = geometry_u64(3);
static GEOMETRY_6: Geometry<u64> = geometry_u64(6);
static GEOMETRY_8: Geometry<u64> = geometry_u64(8);
static GEOMETRY_10: Geometry<u128> = geometry_u128(10);

impl Bits for u64 {
    const ZERO: u64 = 0;

    fn bit(index: u32) -> u64 {
        1u64.checked_shl(index).unwrap_or(0)
    }

    fn count(self) -> u32 {
        self.count_ones()
    }

    fn first(self) -> u32 {
        self.trailing_zeros()
    }

    fn geometry(size: u8) -> Option<&'static Geometry<u64>> {
        match size {
            3 => Some(&GEOMETRY_3),
            6 => Some(&GEOMETRY_6),
            8 => Some(&GEOMETRY_8),
            _ => None,
        }
    }

    fn flip_moves(geometry: &Geometry<u64>, p: u64, o: u64) -> u64 {
        if geometry.size == 8 {
            crate::board8::moves(p, o)
        } else {
            geometry.flip_moves(p, o)
        }
    }

    fn flips(geometry: &Geometry<u64>, mv: u64, p: u64, o: u64) -> u64 {
        if geometry.size == 8 && mv != 0 {
            crate::board8::flips(mv.trailing_zeros(), p, o)
        } else {
            geometry.flips(mv, p, o)
        }
    }
}

impl Bits for u128 {
    const ZERO: u128 = 0;

    fn bit(index: u32) -> u128 {
        1u128.checked_shl(index).unwrap_or(0)
    }

    fn count(self) -> u32 {
        self.count_ones()
    }

    fn first(self) -> u32 {
        self.trailing_zeros()
    }

    fn geometry(size: u8) -> Option<&'static Geometry<u128>> {
        (size == 10).then_some(&GEOMETRY_10)
    }
}

impl<B: Bits> Geometry<B> {
    /// Every square of `x` moved one step in `direction`; squares that would leave the
    /// board are dropped.
    pub fn step(&self, x: B, direction: &Direction<B>) -> B {
        let x = x & direction.from;
        if direction.up {
            x << direction.shift
        } else {
            x >> direction.shift
        }
    }

    /// Empty squares where `p` closes a line of `o` discs (Othello's legal moves).
    pub fn flip_moves(&self, p: B, o: B) -> B {
        let empty = self.full & !(p | o);
        let longest_run = u32::from(self.size).saturating_sub(2);
        let mut moves = B::ZERO;
        for direction in &self.directions {
            let mut run = self.step(p, direction) & o;
            for _ in 1..longest_run {
                run |= self.step(run, direction) & o;
            }
            moves |= self.step(run, direction) & empty;
        }
        moves
    }

    /// Empty squares with an occupied orthogonal neighbour (the free-placement rule).
    pub fn adjacent_empties(&self, occupied: B) -> B {
        let mut near = B::ZERO;
        for direction in self.directions.iter().take(4) {
            near |= self.step(occupied, direction);
        }
        near & self.full & !occupied
    }

    /// The `o` discs flipped by a `p` disc placed on the single square `mv`: in each
    /// direction, the run of `o` discs that a `p` disc closes. Only lines through the
    /// new disc count: flipped discs flip nothing further.
    pub fn flips(&self, mv: B, p: B, o: B) -> B {
        let mut flipped = B::ZERO;
        for direction in &self.directions {
            let mut run = B::ZERO;
            let mut x = self.step(mv, direction);
            while !(x & o).is_empty() {
                run |= x;
                x = self.step(x, direction);
            }
            if !(x & p).is_empty() {
                flipped |= run;
            }
        }
        flipped
    }
}

/// The squares of a set, lowest first.
#[derive(Clone, Copy, Debug)]
pub struct BitIter<B>(pub B);

impl<B: Bits> Iterator for BitIter<B> {
    type Item = u32;

    fn next(&mut self) -> Option<u32> {
        if self.0.is_empty() {
            return None;
        }
        let index = self.0.first();
        self.0 = self.0 ^ B::bit(index);
        Some(index)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shifts_never_wrap_or_leave_the_board() {
        let g = u64::geometry(6).unwrap();
        let east = &g.directions[0];
        // f1 (index 5) has no east neighbour on 6x6.
        assert_eq!(g.step(1 << 5, east), 0);
        let south = &g.directions[2];
        // a6 (index 30) has no south neighbour.
        assert_eq!(g.step(1 << 30, south), 0);
        assert_eq!(g.full.count_ones(), 36);
        assert_eq!(u128::geometry(10).unwrap().full.count_ones(), 100);
    }

    #[test]
    fn generic_code_agrees_with_the_8x8_fast_path_at_the_start() {
        let g = u64::geometry(8).unwrap();
        let (black, white) = (0x0000_0008_1000_0000u64, 0x0000_0010_0800_0000u64);
        assert_eq!(
            g.flip_moves(black, white),
            crate::board8::moves(black, white)
        );
    }
}
