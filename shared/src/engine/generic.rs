//! The search for every variant through [`Game`]'s public API: the path for the
//! boards the bitboard engine does not cover (6x6, 10x10, free placement) and for
//! tic-tac-toe, which it solves to the end.
//!
//! Levels 1 and 2 do not search (a seeded random move; the greediest move).
//! Levels 3 and up run negamax with alpha-beta, deepening one ply at a time so that
//! a `stop` request still leaves the answer of the last finished depth. Only the
//! [`Evaluator`] knows one variant from another.

use super::{Choice, MAX_LEVEL, MIN_LEVEL, SplitMix64, WIN_FACTOR};
use crate::game::Game;
use crate::square::{Move, Square};
use crate::variant::{Color, Variant};

/// Beyond every score: the largest margin is 100 discs, i.e. 1,000,000.
const INFINITY: i32 = 1 << 30;
/// Nodes between two calls of `stop`: often enough to answer promptly, rarely
/// enough that a slow callback costs nothing.
const POLL_INTERVAL: u64 = 4096;

/// Scores a position that has not ended, from the side to move's point of view.
/// Results are clamped to less than one disc of final margin.
pub trait Evaluator {
    /// The heuristic value of `game` for `game.to_move()`; higher is better.
    fn evaluate(&self, game: &Game) -> i32;
}

/// The built-in evaluation: mobility, corners, X-squares and discs for the Othello
/// family (signs turned for anti), discs and corners for freeplace, 0 for tic-tac-toe
/// (which is always searched to the end).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DefaultEvaluator;

/// Per move of mobility advantage: having moves is what keeps a side out of trouble.
const MOBILITY: i32 = 10;
/// Per corner: a corner disc can never be flipped.
const CORNER: i32 = 100;
/// Per disc on a square diagonally next to an empty corner: it hands the corner over.
const X_SQUARE: i32 = 40;
/// Per disc: counts only at the end, so it weighs little before.
const DISC: i32 = 1;
/// Freeplace has no mobility to speak of (any square beside a disc is legal): discs
/// and stable corners are what is left to judge.
const FREE_DISC: i32 = 4;
/// Per freeplace corner.
const FREE_CORNER: i32 = 30;

impl Evaluator for DefaultEvaluator {
    fn evaluate(&self, game: &Game) -> i32 {
        let board = Board::of(game);
        match game.variant() {
            Variant::TicTacToe => 0,
            Variant::Freeplace => FREE_DISC * board.discs() + FREE_CORNER * board.corners(),
            Variant::Anti => {
                MOBILITY * mobility(game)
                    - CORNER * board.corners()
                    - X_SQUARE * board.x_squares()
                    - DISC * board.discs()
            }
            Variant::Othello | Variant::Reversi | Variant::Othello6 | Variant::Othello10 => {
                MOBILITY * mobility(game) + CORNER * board.corners() - X_SQUARE * board.x_squares()
                    + DISC * board.discs()
            }
        }
    }
}

/// The side to move's discs against the other side's, with the board's geometry.
struct Board {
    own: u128,
    other: u128,
    size: u32,
}

impl Board {
    fn of(game: &Game) -> Board {
        let (black, white) = game.bits();
        let (own, other) = match game.to_move() {
            Color::Black => (black, white),
            Color::White => (white, black),
        };
        let size = u32::from(game.size());
        Board { own, other, size }
    }

    fn discs(&self) -> i32 {
        count(self.own) - count(self.other)
    }

    fn corners(&self) -> i32 {
        let corners = self
            .corner_pairs()
            .into_iter()
            .fold(0, |acc, (c, _)| acc | c);
        count(self.own & corners) - count(self.other & corners)
    }

    /// Discs on X-squares whose corner is empty, own minus other.
    fn x_squares(&self) -> i32 {
        let empty = !(self.own | self.other);
        self.corner_pairs()
            .into_iter()
            .filter(|&(corner, _)| empty & corner != 0)
            .map(|(_, x)| count(self.own & x) - count(self.other & x))
            .sum()
    }

    /// Each corner with its X-square, as single bits.
    fn corner_pairs(&self) -> [(u128, u128); 4] {
        let last = self.size.saturating_sub(1);
        let inner = last.saturating_sub(1);
        let at = |row: u32, col: u32| bit(row * self.size + col);
        [
            (at(0, 0), at(1, 1)),
            (at(0, last), at(1, inner)),
            (at(last, 0), at(inner, 1)),
            (at(last, last), at(inner, inner)),
        ]
    }
}

/// The bit of square `index`, or none beyond 128 (no board is that large).
fn bit(index: u32) -> u128 {
    1u128.checked_shl(index).unwrap_or(0)
}

fn count(bits: u128) -> i32 {
    // At most 128: always fits.
    bits.count_ones() as i32
}

/// The side to move's legal moves minus the other side's.
fn mobility(game: &Game) -> i32 {
    let (black, white) = game.bits();
    let other = Game::from_bits(game.variant(), black, white, game.to_move().opponent());
    len(game) - len(&other)
}

fn len(game: &Game) -> i32 {
    // At most 100 squares: always fits.
    game.legal_moves().len() as i32
}

/// Whether `square` is a corner of a board `size` squares wide.
fn is_corner(square: Square, size: u8) -> bool {
    let last = size.saturating_sub(1);
    (square.row == 0 || square.row == last) && (square.col == 0 || square.col == last)
}

/// Chooses a move for the side to move (see [`super::choose`]). `seed` drives level 1's random pick and
/// breaks ties so bots vary (same seed, same answer). `stop` is polled every few
/// thousand nodes; when it returns true the search ends and the best move of the last
/// completed iteration is returned (at least depth 1 is always completed, so a move
/// is always returned). Returns None only when the game is over. When the side to
/// move must pass, returns Move::Pass at once.
///
/// Tic-tac-toe at level 3 and up is always solved to the end (and `stop` is not
/// consulted: the whole tree is a few thousand nodes), so it never loses.
pub fn choose(game: &Game, level: u8, seed: u64, stop: &mut dyn FnMut() -> bool) -> Option<Choice> {
    if game.is_over() {
        return None;
    }
    if game.must_pass() {
        let score = leaf_score(&DefaultEvaluator, game);
        let choice = Choice {
            mv: Move::Pass,
            score,
            depth: 0,
            nodes: 0,
            exact: false,
        };
        return Some(choice);
    }
    let mut rng = SplitMix64(seed ^ game.hash());
    match level.clamp(MIN_LEVEL, MAX_LEVEL) {
        1 => random_move(game, &mut rng),
        2 => greedy_move(game, &mut rng),
        level => {
            let mut search = Search::new(&DefaultEvaluator, game, stop);
            search.best_move(game, max_depth(game, level), &mut rng)
        }
    }
}

/// Scores every legal move (for analysis / hints), best first, searched to the depth
/// of `level` (levels 1 and 2 look one ply). Each score is exact for that depth, not
/// a bound. Moves of equal score are in board order (a1, b1, ... h8). A forced pass
/// gives the single pass; a finished game, nothing. `stop` works as in [`choose`].
pub fn rank_moves(game: &Game, level: u8, stop: &mut dyn FnMut() -> bool) -> Vec<Choice> {
    if game.is_over() {
        return Vec::new();
    }
    if game.must_pass() {
        return choose(game, level, 0, stop).into_iter().collect();
    }
    let depth = max_depth(game, level.clamp(MIN_LEVEL, MAX_LEVEL)).max(1);
    let mut search = Search::new(&DefaultEvaluator, game, stop);
    let mut ranked = search.rank(game, depth);
    ranked.sort_by_key(|choice| (std::cmp::Reverse(choice.score), square_of(choice.mv)));
    ranked
}

/// The deepest iteration for `level` (3..=10): `level - 1`, or the whole game in
/// tic-tac-toe, whose tree is small enough to solve.
fn max_depth(game: &Game, level: u8) -> u32 {
    if game.variant() == Variant::TicTacToe && level >= 3 {
        game.variant().squares()
    } else {
        u32::from(level.saturating_sub(1))
    }
}

/// The value of a position no search goes below: exact once the game is over.
fn leaf_score(evaluator: &dyn Evaluator, game: &Game) -> i32 {
    if game.is_over() {
        return final_score(game);
    }
    let limit = WIN_FACTOR - 1;
    evaluator.evaluate(game).clamp(-limit, limit)
}

/// The final margin for the side to move, signed by the winner rather than by the
/// score difference: in anti the winner's own score is the lower one, and a drawn
/// tic-tac-toe grid still splits 5-4; a draw is 0 everywhere.
fn final_score(game: &Game) -> i32 {
    let outcome = game.score();
    let margin = outcome.black.abs_diff(outcome.white).max(1);
    // At most 100 (the largest board): always fits.
    let margin = WIN_FACTOR * margin as i32;
    match outcome.winner {
        None => 0,
        Some(winner) if winner == game.to_move() => margin,
        Some(_) => -margin,
    }
}

fn square_of(mv: Move) -> Option<Square> {
    match mv {
        Move::Place(square) => Some(square),
        Move::Pass => None,
    }
}

/// `game` after `mv`, or `None` if it is illegal.
fn play(game: &Game, mv: Move) -> Option<Game> {
    let mut child = *game;
    child.apply(mv).ok().map(|_| child)
}

/// Level 1: any legal move.
fn random_move(game: &Game, rng: &mut SplitMix64) -> Option<Choice> {
    let moves = game.legal_moves();
    let square = moves.iter().nth(rng.below(moves.len()))?;
    one_ply_choice(game, Move::Place(square), 0, 1)
}

/// Level 2: the move that flips the most discs (the fewest in anti), ties drawn by
/// lot.
fn greedy_move(game: &Game, rng: &mut SplitMix64) -> Option<Choice> {
    let sign = if game.variant().fewest_wins() { -1 } else { 1 };
    let flips: Vec<(Square, i64)> = game
        .legal_moves()
        .iter()
        .filter_map(|square| {
            let mut child = *game;
            let flipped = child.apply(Move::Place(square)).ok()?;
            Some((square, sign * flipped.len() as i64))
        })
        .collect();
    let best = flips.iter().map(|&(_, n)| n).max()?;
    let ties: Vec<Square> = flips
        .iter()
        .filter(|&&(_, n)| n == best)
        .map(|&(square, _)| square)
        .collect();
    let square = ties.get(rng.below(ties.len())).copied()?;
    one_ply_choice(game, Move::Place(square), 1, flips.len() as u64)
}

/// A choice scored by the position it leads to.
fn one_ply_choice(game: &Game, mv: Move, depth: u32, nodes: u64) -> Option<Choice> {
    let child = play(game, mv)?;
    let score = -leaf_score(&DefaultEvaluator, &child);
    Some(Choice {
        mv,
        score,
        depth,
        nodes,
        exact: child.is_over(),
    })
}

/// One move of a node's move list, with the position it leads to.
#[derive(Clone, Copy)]
struct Child {
    mv: Move,
    game: Game,
}

/// The legal placements of `game`, most promising first: corners (last in anti,
/// where a corner is a disc that can never be got rid of), then the moves that leave
/// the opponent fewest replies (when `by_mobility`: it costs a move generation per
/// child, worth it only above the last ply).
fn ordered_children(game: &Game, by_mobility: bool, rng: Option<&mut SplitMix64>) -> Vec<Child> {
    let size = game.size();
    let anti = game.variant().fewest_wins();
    let mut keyed: Vec<(bool, usize, Child)> = game
        .legal_moves()
        .iter()
        .filter_map(|square| {
            let mv = Move::Place(square);
            let child = play(game, mv)?;
            let replies = if by_mobility {
                child.legal_moves().len()
            } else {
                0
            };
            let later = is_corner(square, size) == anti;
            Some((later, replies, Child { mv, game: child }))
        })
        .collect();
    if let Some(rng) = rng {
        rng.shuffle(&mut keyed);
    }
    keyed.sort_by_key(|&(later, replies, _)| (later, replies));
    keyed.into_iter().map(|(_, _, child)| child).collect()
}

/// One search: the node count, the stop request and what the last iteration saw.
struct Search<'a> {
    evaluator: &'a dyn Evaluator,
    stop: &'a mut dyn FnMut() -> bool,
    nodes: u64,
    /// Whether `stop` is being polled: not while depth 1 runs, so that there is
    /// always a move to return.
    polling: bool,
    stopped: bool,
    /// Whether a node was cut off by depth rather than by the end of the game: if
    /// not, the iteration solved the game and deeper ones would change nothing.
    horizon: bool,
    /// Tic-tac-toe is solved whatever `stop` says: perfect play is promised, and
    /// the whole tree is a few tens of thousands of nodes.
    ignore_stop: bool,
}

impl<'a> Search<'a> {
    fn new(evaluator: &'a dyn Evaluator, game: &Game, stop: &'a mut dyn FnMut() -> bool) -> Self {
        Search {
            evaluator,
            stop,
            nodes: 0,
            polling: false,
            stopped: false,
            horizon: false,
            ignore_stop: game.variant() == Variant::TicTacToe,
        }
    }

    /// Iterative deepening at the root: the best move of the deepest completed depth.
    fn best_move(&mut self, game: &Game, max_depth: u32, rng: &mut SplitMix64) -> Option<Choice> {
        let mut children = ordered_children(game, true, Some(rng));
        let mut best = None;
        for depth in 1..=max_depth.max(1) {
            if !self.begin_iteration(depth) {
                break;
            }
            let Some((index, score)) = self.root(&children, depth) else {
                break;
            };
            // The best move so far is searched first next time: it most often stays
            // best, and a strong first move gives the most cut-offs.
            let child = children.remove(index);
            children.insert(0, child);
            best = Some(Choice {
                mv: child.mv,
                score,
                depth,
                nodes: self.nodes,
                exact: !self.horizon,
            });
            if !self.horizon {
                break;
            }
        }
        best.map(|choice| Choice {
            nodes: self.nodes,
            ..choice
        })
    }

    /// Exact scores of every root move at each depth, kept from the deepest
    /// completed depth.
    fn rank(&mut self, game: &Game, max_depth: u32) -> Vec<Choice> {
        let children = ordered_children(game, false, None);
        let mut ranked = Vec::new();
        for depth in 1..=max_depth {
            if !self.begin_iteration(depth) {
                break;
            }
            let Some(scores) = self.score_all(&children, depth) else {
                break;
            };
            ranked = scores;
            if !self.horizon {
                break;
            }
        }
        ranked
    }

    /// Readies an iteration; false when `stop` asks to end before it starts.
    fn begin_iteration(&mut self, depth: u32) -> bool {
        self.horizon = false;
        self.polling = depth > 1 && !self.ignore_stop;
        !(self.polling && (self.stop)())
    }

    /// The index and score of the best root move, or `None` if stopped.
    fn root(&mut self, children: &[Child], depth: u32) -> Option<(usize, i32)> {
        let mut alpha = -INFINITY;
        let mut best = None;
        for (index, child) in children.iter().enumerate() {
            let score = -self.negamax(&child.game, depth - 1, -INFINITY, -alpha);
            if self.stopped {
                return None;
            }
            // Strictly better only: among equal moves the first searched stays,
            // and the seeded shuffle decided which that is.
            if score > alpha {
                alpha = score;
                best = Some((index, score));
            }
        }
        best
    }

    /// Every root move with its exact score at `depth`, or `None` if stopped.
    fn score_all(&mut self, children: &[Child], depth: u32) -> Option<Vec<Choice>> {
        let mut scores = Vec::with_capacity(children.len());
        for child in children {
            let before = self.nodes;
            let score = -self.negamax(&child.game, depth - 1, -INFINITY, INFINITY);
            if self.stopped {
                return None;
            }
            let nodes = self.nodes - before;
            scores.push(Choice {
                mv: child.mv,
                score,
                depth,
                nodes,
                exact: false,
            });
        }
        // Known only now: whether any line of any move reached the depth limit.
        let exact = !self.horizon;
        scores.iter_mut().for_each(|choice| choice.exact = exact);
        Some(scores)
    }

    /// The value of `game` for its side to move, searched `depth` plies, within the
    /// window (`alpha`, `beta`): fail-soft negamax.
    fn negamax(&mut self, game: &Game, depth: u32, mut alpha: i32, beta: i32) -> i32 {
        if self.tick() {
            return 0;
        }
        if game.is_over() {
            return final_score(game);
        }
        if depth == 0 {
            self.horizon = true;
            return leaf_score(self.evaluator, game);
        }
        let children = ordered_children(game, depth > 1, None);
        if children.is_empty() {
            // A pass is a ply of its own: the opponent moves next from here.
            return match play(game, Move::Pass) {
                Some(child) => -self.negamax(&child, depth - 1, -beta, -alpha),
                None => leaf_score(self.evaluator, game),
            };
        }
        let mut best = -INFINITY;
        for child in &children {
            let score = -self.negamax(&child.game, depth - 1, -beta, -alpha);
            best = best.max(score);
            alpha = alpha.max(score);
            if alpha >= beta || self.stopped {
                break;
            }
        }
        best
    }

    /// Counts a node and polls `stop` now and then; true once the search must end.
    fn tick(&mut self) -> bool {
        self.nodes += 1;
        if self.polling && self.nodes.is_multiple_of(POLL_INTERVAL) && (self.stop)() {
            self.stopped = true;
        }
        self.stopped
    }
}

#[cfg(test)]
mod tests {
    use std::collections::{HashMap, HashSet};

    use super::*;
    use crate::notation::parse_board;

    fn never() -> impl FnMut() -> bool {
        || false
    }

    fn is_legal(game: &Game, mv: Move) -> bool {
        play(game, mv).is_some()
    }

    /// A stop that lets a search run about `polls` times [`POLL_INTERVAL`] nodes.
    fn budget(mut polls: u32) -> impl FnMut() -> bool {
        move || {
            polls = polls.saturating_sub(1);
            polls == 0
        }
    }

    /// Game-theoretic value for the side to move: 1 win, 0 draw, -1 loss.
    fn solve(game: &Game, memo: &mut HashMap<Game, i32>) -> i32 {
        if let Some(&value) = memo.get(game) {
            return value;
        }
        let value = if game.is_over() {
            match game.score().winner {
                None => 0,
                Some(winner) if winner == game.to_move() => 1,
                Some(_) => -1,
            }
        } else if game.must_pass() {
            -solve(&play(game, Move::Pass).unwrap(), memo)
        } else {
            let moves = game.legal_moves().iter().map(Move::Place);
            let values: Vec<i32> = moves
                .map(|mv| -solve(&play(game, mv).unwrap(), memo))
                .collect();
            values.into_iter().max().unwrap()
        };
        memo.insert(*game, value);
        value
    }

    fn flips(game: &Game, mv: Move) -> usize {
        let mut child = *game;
        child.apply(mv).unwrap().len()
    }

    #[test]
    fn level_one_varies_with_the_seed_and_stays_legal() {
        let game = Game::new(Variant::Othello);
        let picks: HashSet<Move> = (0..8)
            .map(|seed| choose(&game, 1, seed, &mut never()).unwrap().mv)
            .collect();
        assert!(picks.len() >= 2, "eight seeds all picked {picks:?}");
        assert!(picks.iter().all(|&mv| is_legal(&game, mv)));
        let again = choose(&game, 1, 3, &mut never()).unwrap();
        assert_eq!(choose(&game, 1, 3, &mut never()).unwrap(), again);
    }

    #[test]
    fn every_level_plays_a_legal_move_in_every_variant() {
        for variant in Variant::ALL {
            let game = Game::new(variant);
            // Out-of-range levels are clamped; the budget keeps freeplace's wide
            // tree at level 10 from dominating the test run.
            for level in MIN_LEVEL - 1..=MAX_LEVEL + 1 {
                let choice = choose(&game, level, 7, &mut budget(20)).unwrap();
                assert!(
                    is_legal(&game, choice.mv),
                    "{variant} level {level}: {choice:?}"
                );
            }
        }
    }

    #[test]
    fn level_two_flips_the_most_discs() {
        let cells = "XOOOO-------------------OX------XO------------------------------";
        let game = parse_board(&format!("{cells} X"), Variant::Othello).unwrap();
        let f1 = Move::Place("f1".parse().unwrap());
        let others = game
            .legal_moves()
            .iter()
            .map(Move::Place)
            .filter(|&mv| mv != f1);
        assert!(
            others
                .map(|mv| flips(&game, mv))
                .all(|n| n < flips(&game, f1))
        );
        for seed in 0..4 {
            assert_eq!(choose(&game, 2, seed, &mut never()).unwrap().mv, f1);
        }
    }

    #[test]
    fn level_two_in_anti_flips_the_fewest() {
        let cells = "XOOOO-------------------OX------XO------------------------------";
        let game = parse_board(&format!("{cells} X"), Variant::Anti).unwrap();
        let choice = choose(&game, 2, 0, &mut never()).unwrap();
        assert_eq!(flips(&game, choice.mv), 1, "{choice:?}");
    }

    #[test]
    fn tictactoe_levels_three_and_up_play_perfectly_from_every_position() {
        let mut memo = HashMap::new();
        let mut seen = HashSet::new();
        let mut stack = vec![Game::new(Variant::TicTacToe)];
        let mut wins = 0;
        while let Some(game) = stack.pop() {
            if game.is_over() || !seen.insert(game) {
                continue;
            }
            let value = solve(&game, &mut memo);
            wins += usize::from(value == 1);
            // Through the public entry point, as bots call it; a stop that
            // says "now" at once must not matter.
            for (level, seed) in [(3, 0), (3, 1), (6, 2), (10, 3)] {
                let choice = super::super::choose(&game, level, seed, &mut || true).unwrap();
                let after = play(&game, choice.mv).expect("legal");
                // Never worse than the position's value: a forced win is won, a
                // draw is never lost.
                assert_eq!(-solve(&after, &mut memo), value, "{game:?} {choice:?}");
            }
            stack.extend(
                game.legal_moves()
                    .iter()
                    .filter_map(|s| play(&game, Move::Place(s))),
            );
        }
        assert_eq!(seen.len(), 4520, "non-final positions of tic-tac-toe");
        assert!(wins > 1000, "forced wins checked: {wins}");
    }

    /// Every legal move with its solved value, for a position near the end.
    fn solved_moves(game: &Game) -> Vec<(Move, i32)> {
        let mut memo = HashMap::new();
        let moves = game.legal_moves().iter().map(Move::Place);
        moves
            .map(|mv| (mv, -solve(&play(game, mv).unwrap(), &mut memo)))
            .collect()
    }

    fn assert_finds_only_win(cells: &str, winning: &str, level: u8) {
        let game = parse_board(&format!("{cells} X"), Variant::Othello).unwrap();
        let winning = Move::Place(winning.parse().unwrap());
        for (mv, value) in solved_moves(&game) {
            assert_eq!(value == 1, mv == winning, "premise: {mv} has value {value}");
        }
        for seed in 0..4 {
            let choice = choose(&game, level, seed, &mut never()).unwrap();
            assert_eq!(choice.mv, winning, "level {level}: {choice:?}");
            assert!(choice.score >= WIN_FACTOR, "a solved win: {choice:?}");
        }
    }

    #[test]
    fn alpha_beta_takes_the_winning_corner() {
        let cells = "XXXXXXO-OOOOOOO-OOXXOXOOXXXOXXOOXXOOXOOOXXXOXOOOXXXOOO-OOOOOOOO-";
        assert_finds_only_win(cells, "h1", 5);
    }

    #[test]
    fn alpha_beta_sees_past_a_losing_corner_to_the_winning_move() {
        let cells = "-OXXXXXO--XXXXOOOOOOOOOOOOXXOOO-OXOXXXOXXXOXOXOXXOXXXOOXXXXXXOOO";
        assert_finds_only_win(cells, "h4", 10);
    }

    /// The generic search itself, on a board the public entry point would give
    /// to the bitboard engine too (engine/mod.rs tests that entry point).
    #[test]
    fn the_generic_search_stopped_at_once_still_returns_a_legal_move() {
        let othello = play(&Game::new(Variant::Othello), "f5".parse().unwrap());
        for game in [Game::new(Variant::Othello10), othello.unwrap()] {
            let mut calls = 0;
            let choice = choose(&game, MAX_LEVEL, 1, &mut || {
                calls += 1;
                true
            })
            .unwrap();
            assert!(is_legal(&game, choice.mv), "{choice:?}");
            assert_eq!(choice.depth, 1, "{choice:?}");
            assert_eq!(calls, 1, "polled once, before depth 2");
        }
    }

    #[test]
    fn a_forced_pass_is_answered_at_once_and_an_ended_game_not_at_all() {
        // X's only disc, b1, is O's to take from a1; X can take nothing.
        let cells = format!("-X{}", "O".repeat(62));
        let game = parse_board(&format!("{cells} X"), Variant::Othello).unwrap();
        assert!(game.must_pass());
        let choice = choose(&game, MAX_LEVEL, 0, &mut never()).unwrap();
        assert_eq!((choice.mv, choice.nodes), (Move::Pass, 0));
        let mut over = game;
        over.apply(Move::Pass).unwrap();
        over.apply(Move::Place("a1".parse().unwrap())).unwrap();
        assert!(over.is_over());
        assert_eq!(choose(&over, 5, 0, &mut never()), None);
        assert!(rank_moves(&over, 5, &mut never()).is_empty());
    }

    #[test]
    fn rank_moves_lists_each_legal_move_once_best_first() {
        let start = Game::new(Variant::Othello);
        let game = ["f5", "d6", "c3", "d3", "c4"]
            .iter()
            .fold(start, |game, mv| play(&game, mv.parse().unwrap()).unwrap());
        for level in [1, 4, 6] {
            let ranked = rank_moves(&game, level, &mut never());
            let moves: HashSet<Move> = ranked.iter().map(|c| c.mv).collect();
            let legal: HashSet<Move> = game.legal_moves().iter().map(Move::Place).collect();
            assert_eq!((moves, ranked.len()), (legal.clone(), legal.len()));
            assert!(
                ranked.windows(2).all(|w| w[0].score >= w[1].score),
                "{ranked:?}"
            );
            let ties = ranked.iter().take_while(|c| c.score == ranked[0].score);
            let firsts: Vec<_> = ties.map(|c| square_of(c.mv)).collect();
            assert!(firsts.is_sorted(), "ties in board order: {ranked:?}");
            if level >= 3 {
                // Alpha-beta's root value is the best move's exact score.
                let best = choose(&game, level, 0, &mut never()).unwrap();
                assert_eq!(best.score, ranked[0].score, "level {level}");
            }
        }
    }

    #[test]
    fn final_scores_follow_the_winner_in_anti_and_tictactoe() {
        // Anti: black has fewer discs and wins, though its counted score is lower.
        let cells = format!("X{}", "O".repeat(63));
        let game = parse_board(&format!("{cells} X"), Variant::Anti).unwrap();
        assert!(game.is_over());
        assert_eq!(final_score(&game), 62 * WIN_FACTOR);
        // A full tic-tac-toe grid with no line is a draw, not a 5-4 win.
        let draw = parse_board("XOXXOOOXX O", Variant::TicTacToe).unwrap();
        assert!(draw.is_over());
        assert_eq!(final_score(&draw), 0);
    }
}
