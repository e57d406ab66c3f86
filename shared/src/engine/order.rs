//! Move lists with sort keys, and the shallow evaluation searches that deep nodes
//! sort their moves by.

use super::board::{Squares, after};
use super::eval::{EVAL_LIMIT, Evaluate};
use crate::board8::{flips, moves};

/// What one unit of evaluation (a hundredth of a disc) weighs in a sort key, next
/// to `1 << 15` for each opponent reply: a disc of evaluation is worth about one
/// reply (tuned on node counts of the FFO positions).
pub const EVAL_WEIGHT: i32 = 300;

/// The depth of the evaluation search that sorts the moves of a node with
/// `empties` empty squares, or `None` for none: deeper nodes are fewer and each
/// mistake in their order costs more, so they afford a deeper look.
#[inline]
pub fn eval_sort_depth(empties: u32) -> Option<u32> {
    match empties {
        0..=11 => None,
        12..=15 => Some(0),
        16..=19 => Some(1),
        _ => Some(2),
    }
}

/// Up to 64 moves with a sort key each, taken best first. A move with its key is
/// packed into one `u64` (the key's bits above the square's), so that a list of
/// them is cheap to set up at every node.
pub struct MoveList {
    entries: [u64; 64],
    len: usize,
}

impl MoveList {
    /// An empty list.
    #[inline(always)]
    pub fn new() -> MoveList {
        MoveList {
            entries: [0; 64],
            len: 0,
        }
    }

    /// Adds `square` with `key` (higher is tried first).
    #[inline(always)]
    pub fn push(&mut self, square: u32, key: i32) {
        if let Some(slot) = self.entries.get_mut(self.len) {
            let biased = (i64::from(key) - i64::from(i32::MIN)) as u64;
            *slot = biased << 8 | u64::from(square & 63);
            self.len += 1;
        }
    }

    /// Removes and returns the move with the highest key. Selection rather than a
    /// full sort: most nodes cut off after their first move or two.
    #[inline(always)]
    pub fn pop_best(&mut self) -> Option<u32> {
        let live = self.entries.get(..self.len)?;
        let (at, &best) = live.iter().enumerate().max_by_key(|&(_, &e)| e)?;
        self.len -= 1;
        self.entries.swap(at, self.len);
        Some((best & 63) as u32)
    }
}

impl Default for MoveList {
    fn default() -> Self {
        MoveList::new()
    }
}

/// A fail-soft alpha-beta search of `depth` plies with the evaluation at the
/// leaves, for move ordering: no table, no node count of its own. Game ends score
/// their final disc difference in the evaluation's units.
pub fn shallow_value<const ANTI: bool, E: Evaluate>(eval: &E, p: u64, o: u64, depth: u32) -> i32 {
    shallow(eval, p, o, depth, -EVAL_LIMIT * 2, EVAL_LIMIT * 2, ANTI)
}

fn shallow<E: Evaluate>(
    eval: &E,
    p: u64,
    o: u64,
    depth: u32,
    mut alpha: i32,
    beta: i32,
    anti: bool,
) -> i32 {
    if depth == 0 {
        return eval.evaluate(p, o);
    }
    let legal = moves(p, o);
    if legal == 0 {
        if moves(o, p) == 0 {
            let score = super::board::final_score::<false>(p, o);
            return 100 * if anti { -score } else { score };
        }
        return -shallow(eval, o, p, depth - 1, -beta, -alpha, anti);
    }
    let mut best = -EVAL_LIMIT * 2;
    for x in Squares(legal) {
        let (np, no) = after(x, flips(x, p, o), p, o);
        let v = -shallow(eval, np, no, depth - 1, -beta, -alpha, anti);
        if v > best {
            best = v;
            if v >= beta {
                break;
            }
            alpha = alpha.max(v);
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn moves_come_out_by_key_then_the_list_is_empty() {
        let mut list = MoveList::new();
        for (square, key) in [(3, -5), (9, 100), (63, 0), (0, i32::MIN), (1, i32::MAX)] {
            list.push(square, key);
        }
        let order: Vec<u32> = std::iter::from_fn(|| list.pop_best()).collect();
        assert_eq!(order, [1, 9, 63, 3, 0]);
        assert_eq!(list.pop_best(), None);
    }
}
