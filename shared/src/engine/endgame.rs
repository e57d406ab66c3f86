//! The exact endgame solver: the final disc difference under perfect play.
//!
//! Almost every node of an endgame search is a null-window test ("is the score
//! above alpha?"), and almost all of them lie within a few plies of the end, so the
//! solver is layered by the number of empty squares, each layer as cheap as its
//! depth allows:
//! - 1 to 4 empties (`last.rs`): no move list, the empty squares of odd
//!   quadrants first, the last move only counts its flips.
//! - up to [`SHALLOW_MAX`]: no table, moves in parity order (`Solver::nws_shallow`).
//! - above, below [`TABLE_MIN`]: still no table, but moves sorted fastest first
//!   (fewest replies for the opponent, then parity): the sort saves more
//!   nodes than it costs, a table probe (most often a cache miss) does not.
//! - from [`TABLE_MIN`]: the transposition table, stability cut-offs, moves
//!   sorted fastest first with corner and potential-mobility terms, from
//!   [`ETC_MIN`] enhanced transposition cut-offs, and higher up a sort by
//!   shallow searches of the evaluation (`Solver::nws_table`).
//!
//! Move order is worth more than anything else here, and the best source of it is
//! the table's move from an earlier search of the same position. So a position
//! with many empties is first searched selectively: ProbCut drops nodes whose
//! shallow evaluation lies far outside the window, with a margin that widens pass
//! after pass, and each pass leaves its best moves in the table for the next. Only
//! the last pass is exact, and only its bounds count as proven: a table entry
//! records the selectivity it was found at (see `Solver::draft`).
//!
//! Principal-variation nodes (`Solver::pvs`) are few and use the deep ordering.
//! `ANTI` reverses the final score for anti, where the fewest discs win.

use super::board::{
    CORNERS, NEIGHBOURS, SCORE_INF, Squares, after, bit, final_score, neighbours, parity_of,
    quadrant_bit, quadrant_mask,
};
use super::eval::Heuristic;
use super::flip::flips;
use super::order::{self, MoveList};
use super::stability::{corner_neighbours_held, stable_count};
use super::tt::Tt;
use crate::board8::moves;

/// Above this many empties, null-window nodes sort their moves.
pub const SHALLOW_MAX: u32 = 6;
/// From this many empties on, null-window nodes also use the table. Measured on
/// FFO #40-#49: sorting from 7 empties and the table from 9 visit 8 % fewer
/// nodes than both from 8, and take about 8 % less time.
pub const TABLE_MIN: u32 = 9;
/// From this many empties on, a node first looks its children up in the table
/// (enhanced transposition cut-off).
pub const ETC_MIN: u32 = 12;
/// From this many empties on, null-window nodes also sort by the evaluation.
pub const EVAL_SORT_MIN: u32 = 14;
/// Selective passes run before the exact one from this many empties on; below,
/// the exact search is cheap enough that they cost more than they save.
pub const SELECTIVE_MIN: u32 = 20;
/// ProbCut is tried from this many empties on.
const PROBCUT_MIN: u32 = 10;
/// The ProbCut margins of the selective passes, in discs: a node is cut when its
/// shallow evaluation lies this far beyond the window (the evaluation misses exact
/// scores by about 11 discs, root mean square). Tuned on node counts of FFO
/// #40-#49: the set matters less than having passes at all.
const PASSES: [i32; 3] = [7, 12, 18];
/// The selectivity of the exact pass (the passes above are 0, 1, 2).
pub const EXACT: u32 = 3;
/// Added to every table depth the solver writes: a midgame search sharing the
/// table writes depths in plies, always below it, so neither takes the other's
/// bounds for its own (the moves are welcome both ways).
pub const DRAFT_BASE: u32 = 256;
/// Nodes between two polls of `stop`.
const POLL_INTERVAL: u64 = 1 << 16;

/// X-squares (diagonally next to a corner): tried last in the parity order, since
/// they tend to give a corner away.
const X_SQUARES: u64 = 0x0042_0000_0000_4200;
/// Everything but corners and X-squares.
const MIDDLE: u64 = !(CORNERS | X_SQUARES);

/// The stability cut-off is tried only when alpha is at least this (by empties):
/// below it, the opponent would need more stable discs than such positions have.
const STABILITY_THRESHOLD: [i32; 65] = {
    let mut t = [99; 65];
    let mut n = 4;
    while n <= 64 {
        let e = n as i32;
        let v = if e < 10 {
            2 * e - 2
        } else if e <= 24 {
            2 * e
        } else {
            48 + 2 * ((e - 24) / 2)
        };
        t[n] = if v > 64 { 64 } else { v };
        n += 1;
    }
    t
};

/// A solved position: the best move (`None` for a pass or the end) and the exact
/// final disc difference for the side to move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Solution {
    /// The best move's square (`row * 8 + col`), or `None` for a pass or an ended game.
    pub best: Option<u32>,
    /// The final disc difference for the side to move under perfect play.
    pub score: i32,
}

/// One exact search: the table it fills, the stop request and the node count.
pub struct Solver<'a, const ANTI: bool> {
    tt: &'a mut Tt,
    stop: &'a mut dyn FnMut() -> bool,
    /// Positions visited (the positions the evaluation looks at while sorting
    /// deep nodes included).
    pub nodes: u64,
    next_poll: u64,
    stopped: bool,
    /// The current pass's selectivity: below [`EXACT`], ProbCut may cut.
    level: u32,
    /// The current pass's ProbCut margin, in discs.
    margin: i32,
}

impl<'a, const ANTI: bool> Solver<'a, ANTI> {
    /// A solver that fills `tt` and polls `stop` every few tens of thousands of
    /// nodes.
    pub fn new(tt: &'a mut Tt, stop: &'a mut dyn FnMut() -> bool) -> Self {
        tt.new_search();
        Solver {
            tt,
            stop,
            nodes: 0,
            next_poll: POLL_INTERVAL,
            stopped: false,
            level: EXACT,
            margin: 0,
        }
    }

    /// Whether `stop` ended the search: the last answer is then meaningless.
    pub fn stopped(&self) -> bool {
        self.stopped
    }

    /// The exact value and a best move of the position, `p` to move; `None` when
    /// stopped. Selective passes come first on large positions, each one's
    /// score the next one's first guess.
    pub fn solve(&mut self, p: u64, o: u64) -> Option<Solution> {
        let n = 64 - (p | o).count_ones();
        let mut guess = order::shallow_value::<ANTI, Heuristic>(&Heuristic, p, o, 2) / 100;
        if n >= SELECTIVE_MIN {
            for (level, &margin) in (0..).zip(PASSES.iter()) {
                (self.level, self.margin) = (level, margin);
                guess = self.aspiration(p, o, guess)?.score;
            }
        }
        (self.level, self.margin) = (EXACT, 0);
        self.aspiration(p, o, guess)
    }

    /// An estimate of the position's value and a move, from the selective
    /// passes alone (searched to the end, ProbCut cutting where the shallow
    /// evaluation lies far outside the window): a fraction of the exact
    /// solve's time, and far closer to the exact value than a midgame search
    /// of the same position. `None` when stopped.
    pub fn estimate(&mut self, p: u64, o: u64) -> Option<Solution> {
        let mut found = None;
        let mut guess = order::shallow_value::<ANTI, Heuristic>(&Heuristic, p, o, 2) / 100;
        for (level, &margin) in (0..).zip(PASSES.iter()) {
            (self.level, self.margin) = (level, margin);
            let pass = self.aspiration(p, o, guess)?;
            guess = pass.score;
            found = Some(pass);
        }
        (self.level, self.margin) = (EXACT, 0);
        found
    }

    /// The score from a narrow window around `guess`, widened on a miss: a
    /// narrow window cuts far more, and a good guess rarely misses by much.
    fn aspiration(&mut self, p: u64, o: u64, guess: i32) -> Option<Solution> {
        // Final scores are even: the window (g - 3, g + 3) decides g - 2, g, g + 2.
        let guess = guess.clamp(-64, 64) & !1;
        let (mut alpha, mut beta) = (guess - 3, guess + 3);
        let mut delta = 4;
        loop {
            let found = self.solve_window(p, o, alpha, beta)?;
            let v = found.score;
            if v <= alpha && alpha > -SCORE_INF {
                (alpha, beta) = ((v - delta).max(-SCORE_INF), v + 1);
            } else if v >= beta && beta < SCORE_INF {
                (alpha, beta) = (v - 1, (v + delta).min(SCORE_INF));
            } else {
                return Some(found);
            }
            delta *= 2;
        }
    }

    /// One pass at the current selectivity, exact only inside `alpha..beta`: a
    /// score at or below alpha (at or above beta) is only an upper (a lower) bound.
    pub fn solve_window(&mut self, p: u64, o: u64, alpha: i32, beta: i32) -> Option<Solution> {
        let n = 64 - (p | o).count_ones();
        let parity = parity_of(!(p | o));
        let legal = moves(p, o);
        let (best, score) = if legal != 0 {
            self.pvs_moves(p, o, alpha, beta, n, parity, legal, true)
        } else if moves(o, p) != 0 {
            (None, -self.pvs(o, p, -beta, -alpha, n, parity))
        } else {
            (None, final_score::<ANTI>(p, o))
        };
        (!self.stopped).then_some(Solution { best, score })
    }

    /// The table depth of a node: its empties and the pass's selectivity, so that
    /// an exact entry outranks a selective one and only counts as proven in an
    /// exact pass.
    #[inline(always)]
    fn draft(&self, n: u32) -> u32 {
        DRAFT_BASE + n * 4 + self.level
    }

    // ----------------------------------------------------------------------------
    // Principal-variation nodes.
    // ----------------------------------------------------------------------------

    /// The score within (`alpha`, `beta`), fail-soft.
    fn pvs(&mut self, p: u64, o: u64, alpha: i32, beta: i32, n: u32, parity: u32) -> i32 {
        if n <= 4 {
            return self.solve_few(p, o, alpha, beta, n, parity);
        }
        let legal = moves(p, o);
        if legal == 0 {
            self.nodes += 1;
            if moves(o, p) == 0 {
                return final_score::<ANTI>(p, o);
            }
            return -self.pvs(o, p, -beta, -alpha, n, parity);
        }
        self.pvs_moves(p, o, alpha, beta, n, parity, legal, false).1
    }

    /// A PVS node with moves: the first move with the full window, the others
    /// with a null window first and again with the full one if they beat alpha.
    /// At the root the table only orders moves: its bounds could end the search
    /// with a move that was never proven best.
    #[allow(clippy::too_many_arguments)]
    fn pvs_moves(
        &mut self,
        p: u64,
        o: u64,
        mut alpha: i32,
        beta: i32,
        n: u32,
        parity: u32,
        legal: u64,
        root: bool,
    ) -> (Option<u32>, i32) {
        self.nodes += 1;
        let hit = self.tt.probe(p, o);
        if let Some(hit) = hit.filter(|h| !root && h.depth >= self.draft(n)) {
            if hit.lower >= beta || hit.lower == hit.upper {
                return (hit.best, hit.lower);
            }
            if hit.upper <= alpha {
                return (hit.best, hit.upper);
            }
        }
        let first_alpha = alpha;
        let mut list = MoveList::new();
        self.sort_moves(
            &mut list,
            p,
            o,
            legal,
            n,
            parity,
            hit.and_then(|h| h.best),
            true,
        );
        let (mut best, mut best_move) = (-SCORE_INF, None);
        while let Some(x) = list.pop_best() {
            let (np, no) = after(x, flips(x, p, o), p, o);
            let child_parity = parity ^ quadrant_bit(x);
            let v = if best_move.is_none() {
                -self.pvs(np, no, -beta, -alpha, n - 1, child_parity)
            } else {
                let mut v = -self.nws(np, no, -alpha - 1, n - 1, child_parity);
                if v > alpha && v < beta && !self.stopped {
                    v = -self.pvs(np, no, -beta, -v, n - 1, child_parity);
                }
                v
            };
            if self.stopped {
                return (best_move, best);
            }
            if v > best {
                (best, best_move) = (v, Some(x));
                alpha = alpha.max(v);
                if v >= beta {
                    break;
                }
            }
        }
        self.store(p, o, n, first_alpha, beta, best, best_move);
        (best_move, best)
    }

    /// Records a node's result as bounds for the window it was searched with. A
    /// node that failed low proved no move best, so it keeps the table's move.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    fn store(
        &mut self,
        p: u64,
        o: u64,
        n: u32,
        alpha: i32,
        beta: i32,
        best: i32,
        best_move: Option<u32>,
    ) {
        let draft = self.draft(n);
        if best >= beta {
            self.tt.store(p, o, draft, best, SCORE_INF, best_move);
        } else if best > alpha {
            self.tt.store(p, o, draft, best, best, best_move);
        } else {
            self.tt.store(p, o, draft, -SCORE_INF, best, None);
        }
    }

    // ----------------------------------------------------------------------------
    // Null-window nodes.
    // ----------------------------------------------------------------------------

    /// Whether the score beats `alpha`: returns a value above alpha (a lower bound)
    /// or at most alpha (an upper bound). Dispatches on the number of empties.
    #[inline]
    fn nws(&mut self, p: u64, o: u64, alpha: i32, n: u32, parity: u32) -> i32 {
        if n > SHALLOW_MAX {
            self.nws_table(p, o, alpha, n, parity)
        } else if n > 4 {
            self.nws_shallow(p, o, alpha, n, parity)
        } else {
            self.solve_few(p, o, alpha, alpha + 1, n, parity)
        }
    }

    /// The bound the opponent's stable discs put on our score, when it is at most
    /// alpha (then the node fails low without a search).
    #[inline]
    pub(super) fn stability_cutoff(&self, p: u64, o: u64, alpha: i32, n: u32) -> Option<i32> {
        if alpha < STABILITY_THRESHOLD[n as usize & 63] {
            return None;
        }
        // Normal rules: the opponent keeps its stable discs. Anti: we keep ours,
        // and every disc we keep counts against us.
        let (keeper, other) = if ANTI { (p, o) } else { (o, p) };
        // Even if every disc of the keeper were stable the bound would miss:
        // no need to count them.
        if 64 - 2 * keeper.count_ones() as i32 > alpha {
            return None;
        }
        let stable = stable_count(keeper, other);
        let bound = 64 - 2 * stable as i32;
        (bound <= alpha).then_some(bound)
    }

    /// ProbCut, in selective passes: a verdict when the shallow evaluation lies
    /// beyond the window by the pass's margin.
    #[inline]
    fn probcut(&mut self, p: u64, o: u64, alpha: i32, n: u32) -> Option<i32> {
        if self.level >= EXACT || n < PROBCUT_MIN {
            return None;
        }
        // Depth 2 costs more than the small subtrees below 14 empties are worth.
        let depth = if n < 14 { 1 } else { 2 };
        let value = order::shallow_value::<ANTI, Heuristic>(&Heuristic, p, o, depth);
        let discs = (value + value.signum() * 50) / 100;
        if discs - self.margin > alpha {
            Some(alpha + 1)
        } else if discs + self.margin <= alpha {
            Some(alpha)
        } else {
            None
        }
    }

    /// A null-window node with sorted moves, stability cut-offs and, from
    /// [`TABLE_MIN`] empties, the table.
    fn nws_table(&mut self, p: u64, o: u64, alpha: i32, n: u32, parity: u32) -> i32 {
        self.nodes += 1;
        if self.nodes >= self.next_poll {
            self.poll();
        }
        if self.stopped {
            return alpha;
        }
        if let Some(bound) = self.stability_cutoff(p, o, alpha, n) {
            return bound;
        }
        let legal = moves(p, o);
        if legal & legal.wrapping_sub(1) == 0 {
            // A pass or a single move: nothing to sort, and the table would
            // cost a memory access to save a child that is searched at once.
            return self.nws_forced(p, o, alpha, n, parity, legal);
        }
        let hit = if n >= TABLE_MIN {
            self.tt.probe(p, o)
        } else {
            None
        };
        if let Some(hit) = hit.filter(|h| h.depth >= self.draft(n)) {
            if hit.lower > alpha {
                return hit.lower;
            }
            if hit.upper <= alpha {
                return hit.upper;
            }
        }
        if let Some(verdict) = self.probcut(p, o, alpha, n) {
            return verdict;
        }
        if n >= ETC_MIN
            && let Some(cut) = self.etc(p, o, alpha, legal, n)
        {
            return cut;
        }
        let mut list = MoveList::new();
        let tt_move = hit.and_then(|h| h.best);
        self.sort_moves(&mut list, p, o, legal, n, parity, tt_move, false);
        let (mut best, mut best_move) = (-SCORE_INF, None);
        while let Some(x) = list.pop_best() {
            let (np, no) = after(x, flips(x, p, o), p, o);
            let v = -self.nws(np, no, -alpha - 1, n - 1, parity ^ quadrant_bit(x));
            if self.stopped {
                return alpha;
            }
            if v > best {
                (best, best_move) = (v, Some(x));
                if v > alpha {
                    break;
                }
            }
        }
        if n >= TABLE_MIN {
            self.store(p, o, n, alpha, alpha + 1, best, best_move);
        }
        best
    }

    /// A null-window node with at most one move (`legal`): the move, a pass, or
    /// the end of the game.
    #[inline]
    fn nws_forced(&mut self, p: u64, o: u64, alpha: i32, n: u32, parity: u32, legal: u64) -> i32 {
        if legal != 0 {
            let x = legal.trailing_zeros();
            let (np, no) = after(x, flips(x, p, o), p, o);
            return -self.nws(np, no, -alpha - 1, n - 1, parity ^ quadrant_bit(x));
        }
        if moves(o, p) == 0 {
            return final_score::<ANTI>(p, o);
        }
        -self.nws_table(o, p, -alpha - 1, n, parity)
    }

    /// Enhanced transposition cut-off: a child whose stored upper bound already
    /// proves that the move beats alpha settles the node before any search.
    fn etc(&mut self, p: u64, o: u64, alpha: i32, legal: u64, n: u32) -> Option<i32> {
        let draft = self.draft(n - 1);
        for x in Squares(legal) {
            let (np, no) = after(x, flips(x, p, o), p, o);
            if let Some(hit) = self.tt.probe(np, no)
                && hit.depth >= draft
                && -hit.upper > alpha
            {
                self.tt
                    .store(p, o, self.draft(n), -hit.upper, SCORE_INF, Some(x));
                return Some(-hit.upper);
            }
        }
        None
    }

    /// Scores the moves of a node for [`MoveList::pop_best`]: the table's move
    /// first, then fastest first (fewest opponent replies, corners counting
    /// double), then corner stability, the opponent's potential mobility and
    /// quadrant parity (below [`TABLE_MIN`] empties only the replies and
    /// parity); deep and principal-variation nodes add a shallow search of the
    /// evaluation.
    #[allow(clippy::too_many_arguments)]
    fn sort_moves(
        &mut self,
        list: &mut MoveList,
        p: u64,
        o: u64,
        legal: u64,
        n: u32,
        parity: u32,
        tt_move: Option<u32>,
        pv: bool,
    ) {
        let odd = quadrant_mask(parity);
        let eval_depth = if pv || n >= EVAL_SORT_MIN {
            order::eval_sort_depth(n)
        } else {
            None
        };
        for x in Squares(legal) {
            if Some(x) == tt_move {
                list.push(x, i32::MAX);
                continue;
            }
            let (np, no) = after(x, flips(x, p, o), p, o);
            if np == 0 {
                // A wipe-out: nothing beats it.
                list.push(x, i32::MAX - 1);
                continue;
            }
            let replies = moves(np, no);
            let mobility = (replies.count_ones() + (replies & CORNERS).count_ones()) as i32;
            if n < TABLE_MIN {
                // Close to the end the replies alone order well enough.
                let parity_bonus = if odd & bit(x) != 0 { 1 << 3 } else { 0 };
                list.push(x, ((36 - mobility) << 15) + parity_bonus);
                continue;
            }
            let potential = (!(np | no) & neighbours(no)).count_ones().min(36) as i32;
            let mut key = (36 - mobility) << 15;
            key += (corner_neighbours_held(no) as i32) << 11;
            key += (36 - potential) << 5;
            if odd & bit(x) != 0 {
                key += 1 << 3;
            }
            if let Some(depth) = eval_depth {
                let value = order::shallow_value::<ANTI, Heuristic>(&Heuristic, np, no, depth);
                key -= value * order::EVAL_WEIGHT;
                self.nodes += 1;
            }
            list.push(x, key);
        }
    }

    // ----------------------------------------------------------------------------
    // Shallow null-window nodes: no table, moves in parity order.
    // ----------------------------------------------------------------------------

    /// A null-window node of 5..=[`SHALLOW_MAX`] empties. The empty squares are
    /// walked (fewer than a move generation costs), odd quadrants first, corners
    /// first and X-squares last within each.
    fn nws_shallow(&mut self, p: u64, o: u64, alpha: i32, n: u32, parity: u32) -> i32 {
        self.nodes += 1;
        if let Some(bound) = self.stability_cutoff(p, o, alpha, n) {
            return bound;
        }
        let empty = !(p | o);
        let odd = quadrant_mask(parity);
        let mut best = -SCORE_INF;
        for class in [
            empty & odd & CORNERS,
            empty & odd & MIDDLE,
            empty & odd & X_SQUARES,
            empty & !odd & CORNERS,
            empty & !odd & MIDDLE,
            empty & !odd & X_SQUARES,
        ] {
            for x in Squares(class) {
                if NEIGHBOURS[x as usize & 63] & o == 0 {
                    continue;
                }
                let f = flips(x, p, o);
                if f == 0 {
                    continue;
                }
                let (np, no) = after(x, f, p, o);
                let child_parity = parity ^ quadrant_bit(x);
                let v = if n == 5 {
                    -self.solve4(np, no, -alpha - 1, -alpha, child_parity)
                } else {
                    -self.nws_shallow(np, no, -alpha - 1, n - 1, child_parity)
                };
                if v > best {
                    best = v;
                    if v > alpha {
                        return v;
                    }
                }
            }
        }
        if best > -SCORE_INF {
            return best;
        }
        if moves(o, p) == 0 {
            return final_score::<ANTI>(p, o);
        }
        -self.nws_shallow(o, p, -alpha - 1, n, parity)
    }

    /// Polls `stop`.
    #[cold]
    fn poll(&mut self) {
        self.next_poll = self.nodes + POLL_INTERVAL;
        if (self.stop)() {
            self.stopped = true;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Plain negamax to the end: the reference for small positions.
    fn minimax<const ANTI: bool>(p: u64, o: u64) -> i32 {
        let legal = moves(p, o);
        if legal == 0 {
            if moves(o, p) == 0 {
                return final_score::<ANTI>(p, o);
            }
            return -minimax::<ANTI>(o, p);
        }
        Squares(legal)
            .map(|x| {
                let (np, no) = after(x, flips(x, p, o), p, o);
                -minimax::<ANTI>(np, no)
            })
            .max()
            .unwrap_or(0)
    }

    /// Positions `empties` from the end of random games.
    pub(crate) fn random_endgames(count: usize, empties: u32, seed: u64) -> Vec<(u64, u64)> {
        let mut state = seed;
        let mut next = move || {
            state = crate::game::mix64(state.wrapping_add(0x9E37_79B9_7F4A_7C15));
            state
        };
        let mut found = Vec::new();
        while found.len() < count {
            let (mut p, mut o) = (0x0000_0008_1000_0000u64, 0x0000_0010_0800_0000u64);
            loop {
                let legal = moves(p, o);
                if 64 - (p | o).count_ones() == empties {
                    found.push((p, o));
                    break;
                }
                if legal == 0 {
                    if moves(o, p) == 0 {
                        break;
                    }
                    (p, o) = (o, p);
                    continue;
                }
                let k = (next() % u64::from(legal.count_ones())) as usize;
                let x = Squares(legal).nth(k).unwrap_or(0);
                (p, o) = after(x, flips(x, p, o), p, o);
            }
        }
        found
    }

    /// Negamax to the end through the rules' own move generator and flips:
    /// the slow, obvious reference for the layers near the end.
    fn reference<const ANTI: bool>(p: u64, o: u64) -> i32 {
        let legal = moves(p, o);
        if legal == 0 {
            if moves(o, p) == 0 {
                return final_score::<ANTI>(p, o);
            }
            return -reference::<ANTI>(o, p);
        }
        let mut best = -SCORE_INF;
        for x in Squares(legal) {
            let f = crate::board8::flips(x, p, o);
            best = best.max(-reference::<ANTI>(o & !f, p | f | bit(x)));
        }
        best
    }

    /// A position with `empties` empty squares: either from a random game
    /// (`dense` false) or any board, discs placed at random, so that passes
    /// and early ends are common.
    fn near_end(seed: u64, empties: u32, dense: bool) -> (u64, u64) {
        if !dense {
            return random_endgames(1, empties, seed)[0];
        }
        let mut state = seed;
        let mut empty = 0u64;
        while empty.count_ones() < empties {
            state = crate::game::mix64(state.wrapping_add(0x9E37_79B9_7F4A_7C15));
            empty |= bit((state >> 58) as u32);
        }
        let p = crate::game::mix64(state) & !empty;
        (p, !p & !empty)
    }

    /// Whether `v`, found with the window (`alpha`, `beta`), is right about
    /// `exact` in the fail-soft sense.
    fn fails_soft(v: i32, exact: i32, alpha: i32, beta: i32) -> bool {
        if v <= alpha {
            exact <= v
        } else if v >= beta {
            exact >= v
        } else {
            exact == v
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(400))]
        /// The specialised code of the last empties (`solve_few` up to 4,
        /// `nws` from 5) against the reference, for any window.
        #[test]
        fn the_last_empties_agree_with_the_reference(
            seed in proptest::prelude::any::<u64>(),
            empties in 0u32..=6,
            dense in proptest::prelude::any::<bool>(),
            alpha in -SCORE_INF..SCORE_INF,
            width in 1i32..=20,
        ) {
            let (p, o) = near_end(seed, empties, dense);
            let beta = (alpha + width).min(SCORE_INF);
            let parity = parity_of(!(p | o));
            let mut tt = Tt::new(8);
            let mut stop = || false;
            let mut solver = Solver::<false>::new(&mut tt, &mut stop);
            let exact = reference::<false>(p, o);
            if empties <= 4 {
                let v = solver.solve_few(p, o, alpha, beta, empties, parity);
                proptest::prop_assert!(fails_soft(v, exact, alpha, beta), "{v} {exact} {p:#x} {o:#x}");
            }
            let v = solver.nws(p, o, alpha, empties, parity);
            proptest::prop_assert!(fails_soft(v, exact, alpha, alpha + 1), "nws {v} {exact} {p:#x} {o:#x}");
            let mut stop = || false;
            let mut anti = Solver::<true>::new(&mut tt, &mut stop);
            let exact = reference::<true>(p, o);
            let v = anti.nws(p, o, alpha, empties, parity);
            proptest::prop_assert!(fails_soft(v, exact, alpha, alpha + 1), "anti {v} {exact} {p:#x} {o:#x}");
        }
    }

    fn solve<const ANTI: bool>(p: u64, o: u64) -> Solution {
        let mut tt = Tt::new(12);
        let mut stop = || false;
        Solver::<ANTI>::new(&mut tt, &mut stop).solve(p, o).unwrap()
    }

    #[test]
    fn the_solver_agrees_with_minimax_near_the_end() {
        for empties in 0..=9 {
            for (p, o) in random_endgames(12, empties, u64::from(empties)) {
                let want = minimax::<false>(p, o);
                let got = solve::<false>(p, o);
                assert_eq!(got.score, want, "{p:#x} {o:#x}");
                let anti = minimax::<true>(p, o);
                assert_eq!(solve::<true>(p, o).score, anti, "anti {p:#x} {o:#x}");
                if let Some(x) = got.best {
                    let (np, no) = after(x, flips(x, p, o), p, o);
                    assert_eq!(-minimax::<false>(np, no), want, "best move {x}");
                }
            }
        }
    }

    #[test]
    fn narrow_windows_give_bounds_on_the_right_side() {
        for (p, o) in random_endgames(20, 10, 99) {
            let exact = minimax::<false>(p, o);
            let mut tt = Tt::new(12);
            let mut stop = || false;
            let mut solver = Solver::<false>::new(&mut tt, &mut stop);
            let v = solver.solve_window(p, o, -1, 1).unwrap().score;
            assert_eq!(v.signum(), exact.signum(), "{v} vs {exact}");
        }
    }

    #[test]
    fn selective_passes_leave_the_exact_answer_unchanged() {
        // Large enough for the selective passes, small enough to check against a
        // single exact pass.
        for (p, o) in random_endgames(2, SELECTIVE_MIN, 7) {
            let mut tt = Tt::new(18);
            let mut stop = || false;
            let full = Solver::<false>::new(&mut tt, &mut stop)
                .solve(p, o)
                .unwrap();
            let mut tt = Tt::new(18);
            let mut stop = || false;
            let single = Solver::<false>::new(&mut tt, &mut stop)
                .solve_window(p, o, -SCORE_INF, SCORE_INF)
                .unwrap();
            assert_eq!(full.score, single.score, "{p:#x} {o:#x}");
        }
    }

    #[test]
    fn an_estimate_is_exact_where_probcut_never_cuts() {
        for (p, o) in random_endgames(12, PROBCUT_MIN - 1, 21) {
            let mut tt = Tt::new(12);
            let mut stop = || false;
            let estimate = Solver::<false>::new(&mut tt, &mut stop)
                .estimate(p, o)
                .unwrap();
            assert_eq!(estimate.score, minimax::<false>(p, o), "{p:#x} {o:#x}");
        }
    }

    #[test]
    fn a_stop_request_ends_the_search() {
        let (p, o) = random_endgames(1, 24, 5)[0];
        let mut tt = Tt::new(12);
        let mut stop = || true;
        let mut solver = Solver::<false>::new(&mut tt, &mut stop);
        assert_eq!(solver.solve(p, o), None);
        assert!(solver.nodes < 10 * POLL_INTERVAL, "{}", solver.nodes);
    }
}
