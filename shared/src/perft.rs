//! Perft: the number of leaves of the game tree below a position.
//!
//! Convention (shared/data/perft.txt): a pass is one ply, and a game that ends before
//! the last ply counts as one leaf.

use crate::game::Game;
use crate::square::Move;
use crate::variant::MoveRule;

/// Leaves `depth` plies below `game`. 8x8 games under Othello's rule take the
/// bitboard fast path; the others are walked through [`Game::apply`].
pub fn perft(game: &Game, depth: u32) -> u64 {
    if game.variant().move_rule() == MoveRule::MustFlip
        && !game.is_over()
        && let Some((p, o)) = game.board8()
    {
        return crate::board8::perft(p, o, depth);
    }
    perft_generic(game, depth)
}

fn perft_generic(game: &Game, depth: u32) -> u64 {
    if depth == 0 || game.is_over() {
        return 1;
    }
    let legal = game.legal_moves();
    if depth == 1 {
        return legal.len().max(1) as u64;
    }
    if legal.is_empty() {
        return child_leaves(game, Move::Pass, depth);
    }
    legal
        .iter()
        .map(|square| child_leaves(game, Move::Place(square), depth))
        .sum()
}

fn child_leaves(game: &Game, mv: Move, depth: u32) -> u64 {
    let mut child = *game;
    match child.apply(mv) {
        Ok(_) => perft_generic(&child, depth - 1),
        // Unreachable for moves taken from `legal_moves`; count nothing rather than panic.
        Err(_) => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::variant::Variant;

    #[test]
    fn fast_and_generic_paths_agree_on_8x8() {
        let game = Game::new(Variant::Othello);
        for depth in 0..=6 {
            assert_eq!(
                perft(&game, depth),
                perft_generic(&game, depth),
                "depth {depth}"
            );
        }
    }
}
