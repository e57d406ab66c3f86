//! `from random:N` starts: N random legal moves from the start position,
//! drawn so that the position they reach is roughly balanced (the engine
//! judges it within [`BALANCE_DISCS`] discs either way), the way program
//! matches keep two deterministic programs from replaying one game. The
//! same seed gives the same moves, so both games of a pair can share them.

use crate::game::Game;
use crate::square::Move;
use crate::variant::Variant;

use super::{WIN_FACTOR, choose};

/// How far from even, in discs, the engine may judge a start.
pub const BALANCE_DISCS: i32 = 4;

/// The level that judges a start: a fixed depth and no clock, so that a seed
/// always gives the same start on any machine.
const JUDGE_LEVEL: u8 = 4;

/// Random walks tried before the most balanced one found is taken.
const TRIES: u64 = 200;

/// A start of `plies` random legal moves for `variant`, from `seed`: the
/// first walk the engine judges balanced, else the most balanced of the
/// walks tried. `None` if no walk of that length exists (the game ends first).
pub fn random_start(variant: Variant, plies: usize, seed: u64) -> Option<Vec<Move>> {
    let mut best: Option<(i32, Vec<Move>)> = None;
    for attempt in 0..TRIES {
        let Some((game, moves)) = walk(variant, plies, splitmix(seed ^ splitmix(attempt))) else {
            continue;
        };
        let off = imbalance(&game, seed);
        if off <= BALANCE_DISCS * 100 {
            return Some(moves);
        }
        if best.as_ref().is_none_or(|(b, _)| off < *b) {
            best = Some((off, moves));
        }
    }
    best.map(|(_, moves)| moves)
}

/// `plies` random legal moves (passes where forced) from the start, with the
/// position they reach; `None` if the game ends first.
fn walk(variant: Variant, plies: usize, mut state: u64) -> Option<(Game, Vec<Move>)> {
    let mut game = Game::new(variant);
    let mut moves = Vec::with_capacity(plies);
    while moves.len() < plies {
        if game.is_over() {
            return None;
        }
        let legal = game.legal_moves();
        let mv = if legal.is_empty() {
            Move::Pass
        } else {
            state = splitmix(state);
            let pick = usize::try_from(state % legal.len() as u64).unwrap_or(0);
            Move::Place(legal.iter().nth(pick)?)
        };
        game.apply(mv).ok()?;
        moves.push(mv);
    }
    (!game.is_over()).then_some((game, moves))
}

/// How far from even the engine judges `game`, in hundredths of a disc.
fn imbalance(game: &Game, seed: u64) -> i32 {
    match choose(game, JUDGE_LEVEL, seed, &mut || false) {
        Some(choice) if choice.exact => (choice.score / WIN_FACTOR).saturating_mul(100).abs(),
        Some(choice) => choice.score.abs(),
        None => i32::MAX,
    }
}

/// SplitMix64: a good spread of a seed into the next state.
fn splitmix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::notation::replay_with_passes;
    use proptest::prelude::*;

    #[test]
    fn a_seed_gives_one_start_and_seeds_give_many() {
        let first = random_start(Variant::Othello, 8, 42).unwrap();
        assert_eq!(random_start(Variant::Othello, 8, 42).unwrap(), first);
        let others: std::collections::HashSet<Vec<Move>> = (0..10)
            .filter_map(|seed| random_start(Variant::Othello, 8, seed))
            .collect();
        assert!(others.len() >= 8, "{} distinct starts of 10", others.len());
        assert_eq!(
            random_start(Variant::TicTacToe, 9, 1),
            None,
            "the game ends first"
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(16))]
        #[test]
        fn a_start_is_legal_of_its_length_and_judged_balanced(seed in any::<u64>(), plies in 0usize..12) {
            let moves = random_start(Variant::Othello, plies, seed).unwrap();
            prop_assert_eq!(moves.len(), plies);
            let (game, _) = replay_with_passes(Variant::Othello, &moves).unwrap();
            prop_assert!(!game.is_over());
            prop_assert!(imbalance(&game, seed) <= BALANCE_DISCS * 100, "{:?}", moves);
        }
    }
}
