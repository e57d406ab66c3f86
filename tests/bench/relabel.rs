//! Exact labels for the end of real games: a game's result carries every
//! mistake its players made to the end, and most of them are made in the last
//! twenty moves, where the solver can say what perfect play gives instead.
//!
//! Every position with at most `limit` empties is labelled with its exact
//! score, and every earlier position of the game with the exact score of the
//! first of them (for its own side to move): the game as played up to there,
//! then perfect play. This is how Logistello's and Edax's training sets were
//! cleaned; the earlier labels keep the players' midgame choices, which the
//! solver cannot reach, but lose their endgame mistakes.

use flipline::engine::{Solver, Tt};

use crate::games::Labelled;

/// What relabelling a set of games did: positions solved, the solver's nodes,
/// and how far the exact scores lay from the games' results.
#[derive(Debug, Default)]
pub struct Relabelled {
    /// Positions given their exact score.
    pub solved: u64,
    /// Earlier positions given the score of their game's first solved one.
    pub carried: u64,
    /// Nodes of every solve.
    pub nodes: u64,
    /// The sum of |exact score - game result| over the solved positions.
    pub moved: u64,
}

/// The exact solver with its table, kept from game to game (a table entry is
/// exact whatever search wrote it, so keeping it changes nodes, not labels).
pub struct Relabeller {
    tt: Tt,
    limit: u32,
    /// The totals so far.
    pub totals: Relabelled,
}

impl Relabeller {
    /// Relabels positions with at most `limit` empties (see the module).
    pub fn new(limit: u32) -> Relabeller {
        Relabeller {
            tt: Tt::new(20),
            limit,
            totals: Relabelled::default(),
        }
    }

    /// Relabels one replayed game: positions in order, each with whether black
    /// is to move.
    pub fn relabel(&mut self, game: &mut [(Labelled, bool)]) -> Result<(), String> {
        let limit = self.limit;
        let Some(first) = game.iter().position(|(l, _)| empties(l) <= limit) else {
            return Ok(());
        };
        let (earlier, solved) = game.split_at_mut(first);
        for (l, _) in solved.iter_mut() {
            let exact = self.solve(l.p, l.o)?;
            self.totals.moved += u64::from((exact - i32::from(l.label)).unsigned_abs());
            l.label = exact as i8;
            self.totals.solved += 1;
        }
        let Some(&(anchor, anchor_black)) = solved.first() else {
            return Ok(());
        };
        for (l, black) in earlier.iter_mut() {
            l.label = if *black == anchor_black {
                anchor.label
            } else {
                -anchor.label
            };
            self.totals.carried += 1;
        }
        Ok(())
    }

    /// The exact final disc difference for `p` to move.
    fn solve(&mut self, p: u64, o: u64) -> Result<i32, String> {
        let mut never = || false;
        let mut solver = Solver::<false>::new(&mut self.tt, &mut never);
        let solved = solver.solve(p, o).ok_or("the solver stopped")?;
        self.totals.nodes += solver.nodes;
        Ok(solved.score)
    }
}

fn empties(l: &Labelled) -> u32 {
    64 - (l.p | l.o).count_ones()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::replay_sides;

    /// A game of Logistello's book (its result -4 for black), as squares.
    fn game() -> Vec<u8> {
        let line = "d3c3c4e3c2b3d2e1d1c1f4d6e6g4b2f6d7c8e7d8f3f5g5h4h6f2f7h5g6c6c5c7b6b5b4e8h3g3h2e2h7g2b1a1h1a2a3g7f8h8g8a4g1f1a6a5a7a8b8b7";
        line.as_bytes()
            .chunks(2)
            .map(|m| match m {
                [col, row] => (row - b'1') * 8 + (col - b'a'),
                _ => 0,
            })
            .collect()
    }

    #[test]
    fn solved_positions_get_exact_scores_and_earlier_ones_the_first() {
        let mut positions = replay_sides(&game());
        assert_eq!(positions.len(), 60);
        let mut relabeller = Relabeller::new(10);
        assert!(relabeller.relabel(&mut positions).is_ok());
        // The last position (one empty) is the game's end: its exact score is
        // the result for its side to move, so it keeps its label.
        let last = replay_sides(&game()).last().map(|(l, _)| l.label);
        assert_eq!(positions.last().map(|(l, _)| l.label), last);
        let first_solved = positions.iter().position(|(l, _)| empties(l) <= 10);
        assert_eq!(first_solved, Some(50));
        // Every position was given a label from the solver, and those before
        // the first solved one agree with it, sign by side.
        assert_eq!(relabeller.totals.solved + relabeller.totals.carried, 60);
        let Some(&(anchor, anchor_black)) = positions.get(50) else {
            panic!("no position 50");
        };
        for (l, black) in positions.iter().take(50) {
            let expected = if *black == anchor_black {
                anchor.label
            } else {
                -anchor.label
            };
            assert_eq!(l.label, expected);
        }
        // An exact score is at least what the move played leads to, for the
        // same side: the minimax property, which game results do not have.
        let solved: Vec<_> = positions.iter().skip(50).collect();
        for pair in solved.windows(2) {
            let [(here, black), (next, next_black)] = pair else {
                continue;
            };
            let after = if black == next_black {
                next.label
            } else {
                -next.label
            };
            assert!(here.label >= after, "{} < {after}", here.label);
        }
    }
}
