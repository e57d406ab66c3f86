//! The evaluation of 8x8 positions: an estimate of the final disc difference for
//! the side to move, in hundredths of a disc.
//!
//! It sits behind [`Evaluate`] so that a trained pattern evaluation can replace
//! the hand-made [`Heuristic`] without touching the search. The heuristic weighs
//! what Othello players learn first: mobility (moves now), potential mobility
//! (empty squares next to the opponent's discs: moves later), corners and the
//! squares next to empty corners that give them away, stable discs, frontier
//! discs, and who gets the last move (parity).
//!
//! Its weights depend on the number of empty squares. In the endgame (12 to 24
//! empties) they are a least-squares fit of these features to the exact scores of
//! 4,132 positions solved by the solver itself (`shared/examples/fit_eval.rs`
//! regenerates them; the fit misses by 10.8 discs, root mean square); towards
//! the opening they blend into hand-set weights, since no exact score is known
//! there. The solver sorts deep nodes and decides ProbCut with it, so its
//! accuracy near the end is worth solver speed.

use super::board::{CORNERS, neighbours};
use super::stability::{corner_stability, stable_count};
use crate::board8::moves;

/// Evaluations are clamped to this, below any final disc difference of 64.
pub const EVAL_LIMIT: i32 = 6300;

/// Scores a position the game has not ended in, for the side to move.
pub trait Evaluate {
    /// The value of the position for `p` (to move) against `o`, in hundredths of a
    /// disc, within `-EVAL_LIMIT..=EVAL_LIMIT`.
    fn evaluate(&self, p: u64, o: u64) -> i32;
}

/// The hand-made evaluation for Othello and Reversi (most discs win).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Heuristic;

/// The hand-made evaluation for anti (fewest discs win): mobility still keeps a
/// side out of trouble, but corners, stable discs and discs become burdens, so
/// every term but the mobility ones changes sign.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AntiHeuristic;

/// How many features [`features`] returns.
pub const FEATURES: usize = 12;

/// X-squares (b2, g2, b7, g7) with the corner each one hands over.
const X_SQUARES: [(u64, u64); 4] = [
    (1 << 9, 1 << 0),
    (1 << 14, 1 << 7),
    (1 << 49, 1 << 56),
    (1 << 54, 1 << 63),
];
/// C-squares (next to a corner along an edge) with their corner.
const C_SQUARES: [(u64, u64); 4] = [
    (1 << 1 | 1 << 8, 1 << 0),
    (1 << 6 | 1 << 15, 1 << 7),
    (1 << 48 | 1 << 57, 1 << 56),
    (1 << 55 | 1 << 62, 1 << 63),
];

/// The features of `p` to move against `o`, in this order: own moves, the
/// opponent's moves, corner moves (own minus other), potential mobility, corners,
/// X-squares and C-squares next to an empty corner, stable discs, discs,
/// edge discs anchored to a corner, frontier discs (all own minus other), and 1
/// when the number of empties is odd.
pub fn features(p: u64, o: u64) -> [i32; FEATURES] {
    let empty = !(p | o);
    let (mp, mo) = (moves(p, o), moves(o, p));
    let count = |b: u64| b.count_ones() as i32;
    let near_empty_corner = |squares: &[(u64, u64); 4], side: u64| {
        squares
            .iter()
            .filter(|&&(_, corner)| empty & corner != 0)
            .map(|&(sq, _)| count(side & sq))
            .sum::<i32>()
    };
    let frontier = |side: u64| count(side & neighbours(empty));
    [
        count(mp),
        count(mo),
        count(mp & CORNERS) - count(mo & CORNERS),
        count(empty & neighbours(o)) - count(empty & neighbours(p)),
        count(p & CORNERS) - count(o & CORNERS),
        near_empty_corner(&X_SQUARES, p) - near_empty_corner(&X_SQUARES, o),
        near_empty_corner(&C_SQUARES, p) - near_empty_corner(&C_SQUARES, o),
        stable_count(p, o) as i32 - stable_count(o, p) as i32,
        count(p) - count(o),
        corner_stability(p) as i32 - corner_stability(o) as i32,
        frontier(p) - frontier(o),
        count(empty) & 1,
    ]
}

/// Weights (hundredths of a disc per unit of each feature, then a constant) at
/// 12 and at 24 empties, fitted; linear in between.
const FIT_12: [i32; FEATURES + 1] = [
    207, -125, 388, -48, 381, -51, -149, 128, -8, -14, -76, 145, -470,
];
const FIT_24: [i32; FEATURES + 1] = [
    117, -97, 671, 44, 997, -200, -77, 203, -19, -82, -100, 207, -253,
];
/// Hand-set weights for the opening (from 44 empties on).
const OPENING: [i32; FEATURES + 1] = [
    110, -110, 300, 40, 700, -350, -80, 100, -20, 50, -50, 100, 0,
];

/// The weights for `empties` empty squares: the fit between 12 and 24 (its ends
/// outside), a blend from the fit at 24 to the opening weights up to 44.
fn weights(empties: i32) -> [i32; FEATURES + 1] {
    let blend = |a: &[i32; FEATURES + 1], b: &[i32; FEATURES + 1], t: i32, span: i32| {
        let mut w = [0; FEATURES + 1];
        for (i, slot) in w.iter_mut().enumerate() {
            *slot = (a[i] * (span - t) + b[i] * t) / span;
        }
        w
    };
    match empties {
        ..=12 => FIT_12,
        13..=24 => blend(&FIT_12, &FIT_24, empties - 12, 12),
        25..=43 => blend(&FIT_24, &OPENING, empties - 24, 20),
        _ => OPENING,
    }
}

/// The weighted sum; `sign` turns every term but mobility for anti.
fn weighted(p: u64, o: u64, sign: i32) -> i32 {
    let empties = 64 - (p | o).count_ones() as i32;
    let f = features(p, o);
    let w = weights(empties);
    let mut value = w[FEATURES];
    for (i, (&fi, &wi)) in f.iter().zip(&w).enumerate() {
        // Moves, corner moves and potential mobility keep their sign in anti.
        let s = if matches!(i, 0..=3) { 1 } else { sign };
        value += s * fi * wi;
    }
    value.clamp(-EVAL_LIMIT, EVAL_LIMIT)
}

impl Evaluate for Heuristic {
    #[inline]
    fn evaluate(&self, p: u64, o: u64) -> i32 {
        weighted(p, o, 1)
    }
}

impl Evaluate for AntiHeuristic {
    #[inline]
    fn evaluate(&self, p: u64, o: u64) -> i32 {
        weighted(p, o, -1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const START: (u64, u64) = (0x0000_0008_1000_0000, 0x0000_0010_0800_0000);

    #[test]
    fn the_start_is_level() {
        assert_eq!(Heuristic.evaluate(START.0, START.1), 0);
        assert_eq!(AntiHeuristic.evaluate(START.0, START.1), 0);
    }

    #[test]
    fn a_corner_is_good_in_othello_and_bad_in_anti() {
        // Same position but for who holds a1.
        let (p, o) = (START.0 | 1, START.1);
        let (q, r) = (START.0, START.1 | 1);
        assert!(Heuristic.evaluate(p, o) > Heuristic.evaluate(q, r));
        assert!(AntiHeuristic.evaluate(p, o) < AntiHeuristic.evaluate(q, r));
    }

    #[test]
    fn values_stay_within_the_limit() {
        assert!(Heuristic.evaluate(!0 >> 1, 1 << 63).abs() <= EVAL_LIMIT);
        assert!(Heuristic.evaluate(0xFF, 0).abs() <= EVAL_LIMIT);
        assert!(AntiHeuristic.evaluate(0xFF, 0xFF00).abs() <= EVAL_LIMIT);
    }

    #[test]
    fn weights_are_continuous_across_the_phases() {
        for e in 1..60 {
            let (a, b) = (weights(e), weights(e + 1));
            for i in 0..=FEATURES {
                assert!((a[i] - b[i]).abs() <= 100, "feature {i} at {e} empties");
            }
        }
    }
}
