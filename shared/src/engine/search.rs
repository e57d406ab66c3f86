//! The midgame search on 8x8 bitboards: negamax alpha-beta with principal-variation
//! search, iterative deepening, a transposition table and move ordering (the
//! table's move, killer moves, history, then fewest opponent replies and corners).
//!
//! Scores are hundredths of a disc for the side to move: the evaluation's estimate
//! at the horizon, 100 times the final disc difference where the game ends inside
//! the tree. `ANTI` reverses final scores for anti.
//!
//! [`Options`] switch on ProbCut (see `probcut`) in null-window nodes, which
//! only fits the evaluation its model was fitted with, and evaluation-ordered
//! moves (measured in BENCHMARKS.md; play leaves them off).

use super::board::{CORNERS, Squares, after, bit, final_score, neighbours};
use super::eval::{EVAL_LIMIT, Evaluate};
use super::order::{self, MoveList};
use super::probcut;
use super::tt::Tt;
use crate::board8::{flips, moves};

/// Beyond every score of this search (the widest final margin is 6400).
pub const INF: i32 = 10_000;
/// Hundredths of a disc in one disc of final margin.
pub const DISC: i32 = 100;
/// Nodes between two polls of `stop`.
const POLL_INTERVAL: u64 = 1 << 12;
/// Plies a search may reach, passes included (a game has at most 60 moves and
/// as many passes again in theory).
const MAX_PLY: usize = 128;
/// From this remaining depth on, moves are sorted by opponent mobility, which
/// costs a move generation per move.
const MOBILITY_SORT_DEPTH: u32 = 2;

/// The result of a completed iteration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Found {
    /// The best move's square, or `None` when the side to move must pass.
    pub best: Option<u32>,
    /// Its score (hundredths of a disc).
    pub score: i32,
    /// The depth of the iteration.
    pub depth: u32,
    /// Whether no line was cut off by the depth limit: the score is then exact
    /// (the whole game tree below was searched).
    pub exact: bool,
}

/// The selective parts of a search; the default is a plain full-width search.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Options {
    /// Cut null-window nodes whose shallow search predicts a fail far outside
    /// the window (`probcut`'s model, fitted on the pattern evaluation).
    pub probcut: bool,
    /// Sort the moves of nodes far from the horizon by the evaluation of the
    /// position each one leads to (a shallow search of it higher up).
    pub eval_order: bool,
}

/// From this remaining depth on, [`Options::eval_order`] sorts by the
/// evaluation; the depths at which it looks one and two plies further.
const EVAL_ORDER_DEPTHS: [u32; 3] = [4, 7, 10];
/// What a hundredth of a disc of that evaluation weighs in a sort key, next to
/// `1 << 15` for each opponent reply.
const EVAL_ORDER_WEIGHT: i32 = 8 * order::EVAL_WEIGHT;

/// The depth of the evaluation search that sorts a node `depth` plies from the
/// horizon, or `None`: nearer the horizon an evaluation per move costs more
/// than the order saves.
fn eval_order_depth(depth: u32) -> Option<u32> {
    EVAL_ORDER_DEPTHS
        .iter()
        .rposition(|&from| depth >= from)
        .map(|i| i as u32)
}

/// One midgame search: evaluation, table, stop request and ordering statistics.
pub struct Search<'a, E: Evaluate, const ANTI: bool> {
    eval: &'a E,
    options: Options,
    tt: &'a mut Tt,
    stop: &'a mut dyn FnMut() -> bool,
    /// Positions visited.
    pub nodes: u64,
    next_poll: u64,
    /// Whether `stop` is polled: not during the first iteration, so that there is
    /// always a move to return.
    polling: bool,
    stopped: bool,
    /// Whether a line ended at the depth limit in the current iteration.
    horizon: bool,
    /// Two moves per ply that recently caused a cut-off there.
    killers: [[u8; 2]; MAX_PLY],
    /// Per square, how often a move there caused a cut-off, weighted by depth.
    history: [i32; 64],
}

impl<'a, E: Evaluate, const ANTI: bool> Search<'a, E, ANTI> {
    /// A plain full-width search with evaluation `eval` that fills `tt`.
    pub fn new(eval: &'a E, tt: &'a mut Tt, stop: &'a mut dyn FnMut() -> bool) -> Self {
        Self::with_options(eval, tt, stop, Options::default())
    }

    /// A search with the selective parts `options` switches on.
    pub fn with_options(
        eval: &'a E,
        tt: &'a mut Tt,
        stop: &'a mut dyn FnMut() -> bool,
        options: Options,
    ) -> Self {
        tt.new_search();
        Search {
            eval,
            options,
            tt,
            stop,
            nodes: 0,
            next_poll: POLL_INTERVAL,
            polling: false,
            stopped: false,
            horizon: false,
            killers: [[64; 2]; MAX_PLY],
            history: [0; 64],
        }
    }

    /// Whether `stop` cut the last search short.
    pub fn stopped(&self) -> bool {
        self.stopped
    }

    /// Iterative deepening from depth 1 to `max_depth` (at least 1): the result of
    /// the deepest completed iteration. `order` is the root's move order to start
    /// from (a seeded shuffle, so that equal moves vary between games); moves not
    /// in it are ignored. Ends early when an iteration solved the game.
    pub fn iterate(&mut self, p: u64, o: u64, max_depth: u32, order: &[u32]) -> Found {
        let legal = moves(p, o);
        let mut root: Vec<(u32, i32)> = order
            .iter()
            .filter(|&&x| legal & bit(x) != 0)
            .map(|&x| (x, 0))
            .collect();
        if root.is_empty() {
            let score = if moves(o, p) == 0 {
                DISC * final_score::<ANTI>(p, o)
            } else {
                -self.eval.evaluate(o, p)
            };
            return Found {
                best: None,
                score,
                depth: 0,
                exact: moves(o, p) == 0,
            };
        }
        let mut found = None;
        for depth in 1..=max_depth.max(1) {
            self.polling = depth > 1;
            if self.polling && self.poll() {
                break;
            }
            let Some(result) = self.root(p, o, depth, &mut root) else {
                break;
            };
            found = Some(result);
            if result.exact {
                break;
            }
        }
        found.unwrap_or(Found {
            best: root.first().map(|&(x, _)| x),
            score: 0,
            depth: 0,
            exact: false,
        })
    }

    /// One iteration at the root; `None` when stopped. Moves are searched in the
    /// order of the last iteration's scores (ties keep their earlier order).
    fn root(&mut self, p: u64, o: u64, depth: u32, root: &mut [(u32, i32)]) -> Option<Found> {
        self.horizon = false;
        let (mut alpha, beta) = (-INF, INF);
        let mut best = None;
        for (i, entry) in root.iter_mut().enumerate() {
            let x = entry.0;
            let (np, no) = after(x, flips(x, p, o), p, o);
            let v = if i == 0 {
                -self.pvs(np, no, depth - 1, -beta, -alpha, 1)
            } else {
                let v = -self.pvs(np, no, depth - 1, -alpha - 1, -alpha, 1);
                if v > alpha && !self.stopped {
                    -self.pvs(np, no, depth - 1, -beta, -v.max(alpha), 1)
                } else {
                    v
                }
            };
            if self.stopped {
                return None;
            }
            // Moves that fail low keep a score below the best, so the next
            // iteration tries them after it.
            entry.1 = v.min(alpha);
            if v > alpha {
                alpha = v;
                best = Some(x);
                entry.1 = v;
            }
        }
        root.sort_by_key(|&(_, score)| std::cmp::Reverse(score));
        self.tt.store(p, o, depth, alpha, alpha, best);
        Some(Found {
            best,
            score: alpha,
            depth,
            exact: !self.horizon,
        })
    }

    /// Every root move with its score from the deepest completed iteration up to
    /// `max_depth`, that depth, and whether the scores are exact.
    pub fn rank(&mut self, p: u64, o: u64, max_depth: u32) -> (Vec<(u32, i32)>, u32, bool) {
        let mut last = (Vec::new(), 0, false);
        for depth in 1..=max_depth.max(1) {
            self.polling = depth > 1;
            if self.polling && self.poll() {
                break;
            }
            let Some(scores) = self.score_moves(p, o, depth) else {
                break;
            };
            let exact = !self.horizon;
            last = (scores, depth, exact);
            if exact {
                break;
            }
        }
        last
    }

    /// The score of every root move, each with a full window, at `depth`: for
    /// analysis, where every move's value is wanted, not only the best. `None`
    /// when stopped.
    pub fn score_moves(&mut self, p: u64, o: u64, depth: u32) -> Option<Vec<(u32, i32)>> {
        self.horizon = false;
        let mut scores = Vec::new();
        for x in Squares(moves(p, o)) {
            let (np, no) = after(x, flips(x, p, o), p, o);
            let v = -self.pvs(np, no, depth.max(1) - 1, -INF, INF, 1);
            if self.stopped {
                return None;
            }
            scores.push((x, v));
        }
        Some(scores)
    }

    /// Whether the last [`Search::score_moves`] or iteration reached the depth
    /// limit anywhere (if not, its scores are exact).
    pub fn reached_horizon(&self) -> bool {
        self.horizon
    }

    /// The score within (`alpha`, `beta`), fail-soft, `depth` plies deep.
    fn pvs(&mut self, p: u64, o: u64, depth: u32, mut alpha: i32, beta: i32, ply: usize) -> i32 {
        self.nodes += 1;
        if self.polling && self.nodes >= self.next_poll && self.poll() {
            return alpha;
        }
        if depth == 0 {
            return self.leaf(p, o);
        }
        let legal = moves(p, o);
        if legal == 0 {
            if moves(o, p) == 0 {
                return DISC * final_score::<ANTI>(p, o);
            }
            return -self.pvs(o, p, depth - 1, -beta, -alpha, ply + 1);
        }
        let hit = self.tt.probe(p, o);
        let mut tt_move = None;
        if let Some(hit) = hit {
            tt_move = hit.best;
            // Entries of the exact solver (which may share the table) have drafts
            // beyond any midgame depth and scores in discs: moves only.
            if hit.depth >= depth && hit.depth < super::endgame::DRAFT_BASE {
                // The entry does not say whether its line met the horizon, so
                // a score taken from it is never counted as proven.
                self.horizon = true;
                if hit.lower >= beta {
                    return hit.lower;
                }
                if hit.upper <= alpha {
                    return hit.upper;
                }
                if hit.lower == hit.upper {
                    return hit.lower;
                }
            }
        }
        let null_window = beta == alpha + 1;
        if null_window
            && self.options.probcut
            && depth >= probcut::MIN_DEPTH
            && let Some(v) = self.probcut(p, o, depth, beta, ply)
        {
            return v;
        }
        let first_alpha = alpha;
        let mut list = MoveList::new();
        self.sort(&mut list, p, o, legal, depth, ply, tt_move);
        let (mut best, mut best_move) = (-INF, None);
        while let Some(x) = list.pop_best() {
            let (np, no) = after(x, flips(x, p, o), p, o);
            let v = if best_move.is_none() || null_window {
                -self.pvs(np, no, depth - 1, -beta, -alpha, ply + 1)
            } else {
                let v = -self.pvs(np, no, depth - 1, -alpha - 1, -alpha, ply + 1);
                if v > alpha && v < beta && !self.stopped {
                    -self.pvs(np, no, depth - 1, -beta, -v, ply + 1)
                } else {
                    v
                }
            };
            if self.stopped {
                return alpha;
            }
            if v > best {
                (best, best_move) = (v, Some(x));
                if v > alpha {
                    alpha = v;
                    if v >= beta {
                        self.reward(x, depth, ply);
                        break;
                    }
                }
            }
        }
        let (lower, upper) = if best >= beta {
            (best, INF)
        } else if best > first_alpha {
            (best, best)
        } else {
            (-INF, best)
        };
        self.tt.store(p, o, depth, lower, upper, best_move);
        best
    }

    /// ProbCut at a null-window node `(beta - 1, beta)`: `beta` when a shallow
    /// search proves the deep one almost surely fails high, `beta - 1` when it
    /// proves a fail low, `None` when neither (the node is then searched in
    /// full). A cut line is an estimate, so the iteration is not exact.
    fn probcut(&mut self, p: u64, o: u64, depth: u32, beta: i32, ply: usize) -> Option<i32> {
        let empties = 64 - (p | o).count_ones();
        let (high, low) = probcut::bounds(probcut::fit(depth, empties), beta);
        let shallow = probcut::shallow_depth(depth);
        if high < INF && self.pvs(p, o, shallow, high - 1, high, ply) >= high {
            self.horizon = true;
            return Some(beta);
        }
        if low > -INF && !self.stopped && self.pvs(p, o, shallow, low, low + 1, ply) <= low {
            self.horizon = true;
            return Some(beta - 1);
        }
        None
    }

    /// The value at the depth limit: exact if the game is over.
    #[inline]
    fn leaf(&mut self, p: u64, o: u64) -> i32 {
        if moves(p, o) == 0 && moves(o, p) == 0 {
            return DISC * final_score::<ANTI>(p, o);
        }
        self.horizon = true;
        self.eval.evaluate(p, o).clamp(-EVAL_LIMIT, EVAL_LIMIT)
    }

    /// Remembers a move that cut off: as a killer of its ply and in the history.
    fn reward(&mut self, x: u32, depth: u32, ply: usize) {
        let square = (x & 63) as u8;
        if let Some(killers) = self.killers.get_mut(ply)
            && killers[0] != square
        {
            killers[1] = killers[0];
            killers[0] = square;
        }
        let entry = &mut self.history[square as usize];
        *entry = entry.saturating_add((depth * depth) as i32);
        if *entry > 1 << 20 {
            // Keep the history a recent one and away from overflow.
            self.history.iter_mut().for_each(|h| *h /= 2);
        }
    }

    /// Sort keys: the table's move, then killers, then (deep enough) fewest
    /// opponent replies with corners counting double, potential mobility and the
    /// history; near the horizon only the history and corners.
    #[allow(clippy::too_many_arguments)]
    fn sort(
        &self,
        list: &mut MoveList,
        p: u64,
        o: u64,
        legal: u64,
        depth: u32,
        ply: usize,
        tt_move: Option<u32>,
    ) {
        let killers = self.killers.get(ply).copied().unwrap_or([64; 2]);
        for x in Squares(legal) {
            let mut key = if Some(x) == tt_move {
                1 << 30
            } else if killers[0] as u32 == x {
                1 << 29
            } else if killers[1] as u32 == x {
                1 << 28
            } else {
                0
            };
            if key == 0 {
                key = self.history[x as usize & 63].min(1 << 20) >> 6;
                if CORNERS & bit(x) != 0 {
                    key += 1 << 20;
                }
                if depth >= MOBILITY_SORT_DEPTH {
                    let (np, no) = after(x, flips(x, p, o), p, o);
                    let replies = moves(np, no);
                    let mobility = (replies.count_ones() + (replies & CORNERS).count_ones()) as i32;
                    let potential = (!(np | no) & neighbours(no)).count_ones() as i32;
                    key += (40 - mobility) << 15;
                    key += (40 - potential.min(40)) << 9;
                    if let Some(d) = eval_order_depth(depth).filter(|_| self.options.eval_order) {
                        let v = -order::shallow_value::<ANTI, E>(self.eval, np, no, d);
                        key += v.clamp(-EVAL_LIMIT, EVAL_LIMIT) * EVAL_ORDER_WEIGHT;
                    }
                }
            }
            list.push(x, key);
        }
    }

    /// Polls `stop`; true once the search must end.
    fn poll(&mut self) -> bool {
        self.next_poll = self.nodes + POLL_INTERVAL;
        if !self.stopped && (self.stop)() {
            self.stopped = true;
        }
        self.stopped
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::eval::Heuristic;

    /// Plain negamax with the same leaves: what alpha-beta must agree with.
    fn minimax(p: u64, o: u64, depth: u32) -> i32 {
        if moves(p, o) == 0 && moves(o, p) == 0 {
            return DISC * final_score::<false>(p, o);
        }
        if depth == 0 {
            return Heuristic.evaluate(p, o);
        }
        let legal = moves(p, o);
        if legal == 0 {
            return -minimax(o, p, depth - 1);
        }
        Squares(legal)
            .map(|x| {
                let (np, no) = after(x, flips(x, p, o), p, o);
                -minimax(np, no, depth - 1)
            })
            .max()
            .unwrap_or(0)
    }

    fn positions() -> Vec<(u64, u64)> {
        let mut state = 77u64;
        let mut out = Vec::new();
        for plies in [4, 9, 16, 25, 40] {
            let (mut p, mut o) = (0x0000_0008_1000_0000u64, 0x0000_0010_0800_0000u64);
            for _ in 0..plies {
                let legal = moves(p, o);
                if legal == 0 {
                    (p, o) = (o, p);
                    continue;
                }
                state = crate::game::mix64(state + 1);
                let x = Squares(legal).nth((state % u64::from(legal.count_ones())) as usize);
                let x = x.unwrap_or(0);
                (p, o) = after(x, flips(x, p, o), p, o);
            }
            out.push((p, o));
        }
        out
    }

    #[test]
    fn iterative_deepening_finds_the_minimax_value() {
        for (p, o) in positions() {
            if moves(p, o) == 0 {
                continue;
            }
            for depth in 1..=4 {
                let mut tt = Tt::new(14);
                let mut stop = || false;
                let mut search = Search::<_, false>::new(&Heuristic, &mut tt, &mut stop);
                let order: Vec<u32> = Squares(moves(p, o)).collect();
                let found = search.iterate(p, o, depth, &order);
                assert_eq!(
                    found.score,
                    minimax(p, o, depth),
                    "depth {depth} {p:#x} {o:#x}"
                );
                let x = found.best.unwrap();
                let (np, no) = after(x, flips(x, p, o), p, o);
                assert_eq!(-minimax(np, no, depth - 1), found.score, "best move");
            }
        }
    }

    /// Move order changes which lines are searched, never the value.
    #[test]
    fn evaluation_ordered_moves_keep_the_minimax_value() {
        let options = Options {
            probcut: false,
            eval_order: true,
        };
        for (p, o) in positions().into_iter().filter(|&(p, o)| moves(p, o) != 0) {
            for depth in [3, 4, 6] {
                let mut tt = Tt::new(14);
                let mut stop = || false;
                let mut search =
                    Search::<_, false>::with_options(&Heuristic, &mut tt, &mut stop, options);
                let order: Vec<u32> = Squares(moves(p, o)).collect();
                let found = search.iterate(p, o, depth, &order);
                assert_eq!(found.score, minimax(p, o, depth), "depth {depth}");
            }
        }
    }

    /// ProbCut prunes: fewer nodes than the full-width search to the same
    /// depth, a legal move, and a score it does not call proven.
    #[test]
    fn probcut_searches_fewer_nodes_and_plays_legal_moves() {
        let eval = crate::engine::pattern_eval::trained();
        let (mut plain, mut cut) = (0, 0);
        for (p, o) in positions().into_iter().filter(|&(p, o)| moves(p, o) != 0) {
            let order: Vec<u32> = Squares(moves(p, o)).collect();
            for (probcut, nodes) in [(false, &mut plain), (true, &mut cut)] {
                let options = Options {
                    probcut,
                    eval_order: false,
                };
                let mut tt = Tt::new(16);
                let mut stop = || false;
                let mut search =
                    Search::<_, false>::with_options(eval, &mut tt, &mut stop, options);
                let found = search.iterate(p, o, 7, &order);
                assert!(found.best.is_some_and(|x| moves(p, o) & bit(x) != 0));
                *nodes += search.nodes;
            }
        }
        assert!(cut < plain, "ProbCut {cut} nodes, full width {plain}");
    }

    #[test]
    fn scores_of_every_move_match_minimax() {
        let (p, o) = positions()[2];
        let mut tt = Tt::new(14);
        let mut stop = || false;
        let mut search = Search::<_, false>::new(&Heuristic, &mut tt, &mut stop);
        for (x, v) in search.score_moves(p, o, 3).unwrap() {
            let (np, no) = after(x, flips(x, p, o), p, o);
            assert_eq!(v, -minimax(np, no, 2), "move {x}");
        }
    }
}
