//! `flip analyze --game FILE`: every move of a saved or exported game (a
//! transcript line, a move string or GGF) beside the engine's best, and what
//! it cost: the best move's score less the played move's, in discs, as
//! NBoard's analysis shows it. Each position is ranked with `rank_moves` at
//! the level asked, within its time budget; forced passes cost nothing and
//! are not searched.

use std::path::Path;
use std::time::{Duration, Instant};

use flipline::engine::{self, Choice, WIN_FACTOR};
use flipline::{Game, Move, Variant};

use crate::archive::saved_game::{self, SavedGame};
use crate::engine_tools::engine_score::{in_hundredths, score_text};

/// How long and how deep each position is searched.
pub struct Effort {
    /// Engine level, 1 to 10.
    pub level: u8,
    /// The most each position may take (else the level's budget).
    pub time_ms: Option<u64>,
}

/// Prints a line a move; the error names the file and what did not read.
pub fn run(path: &Path, effort: &Effort) -> Result<(), String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let SavedGame { variant, moves } =
        saved_game::parse(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    crate::say!(
        "{variant}, {} moves, level {}: ply, move, its score, the best and its score, the cost",
        moves.len(),
        effort.level
    );
    crate::say!("{}", crate::engine_tools::engine_score::units_note(variant));
    let mut game = Game::new(variant);
    let mut total = 0.0;
    for (ply, &mv) in (1..).zip(&moves) {
        let mover = game.to_move();
        if mv != Move::Pass {
            let ranked = rank(&game, effort);
            let line = judge(&ranked, mv, variant)
                .ok_or_else(|| format!("{}: move {ply} ({mv}) is not legal", path.display()))?;
            total += line.cost;
            crate::say!("{ply:>3} {} {}", mover.letter(), line.text);
        }
        game.apply(mv)
            .map_err(|e| format!("{}: move {ply} ({mv}): {e}", path.display()))?;
    }
    crate::say!("total cost {total:.2}");
    Ok(())
}

fn rank(game: &Game, effort: &Effort) -> Vec<Choice> {
    let budget = effort.time_ms.map_or_else(
        || engine::level(effort.level).time_budget(),
        Duration::from_millis,
    );
    let deadline = Instant::now() + budget;
    engine::rank_moves(game, effort.level, &mut || Instant::now() >= deadline)
}

/// One move judged: the line to print and its cost.
struct Judged {
    text: String,
    cost: f64,
}

/// The played move against the best of `ranked` (best first); `None` if the
/// move is not among them.
fn judge(ranked: &[Choice], played: Move, variant: Variant) -> Option<Judged> {
    let best = ranked.first()?;
    let mine = ranked.iter().find(|c| c.mv == played)?;
    let hundredths = in_hundredths(variant);
    let cost = (discs(best, hundredths) - discs(mine, hundredths)).max(0.0);
    let text = format!(
        "{:>4} {:>7}   best {:>4} {:>7}   cost {cost:.2}",
        played.to_string(),
        score_text(mine.score, mine.exact, hundredths),
        best.mv.to_string(),
        score_text(best.score, best.exact, hundredths),
    );
    Some(Judged { text, cost })
}

/// A score in discs (exact scores are discs times `WIN_FACTOR`; 8x8
/// estimates hundredths of a disc); other boards' estimates as they are.
fn discs(choice: &Choice, hundredths: bool) -> f64 {
    if choice.exact {
        f64::from(choice.score) / f64::from(WIN_FACTOR)
    } else if hundredths {
        f64::from(choice.score) / 100.0
    } else {
        f64::from(choice.score)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn choice(mv: &str, score: i32, exact: bool) -> Choice {
        Choice {
            mv: mv.parse().unwrap(),
            score,
            depth: 4,
            nodes: 1,
            exact,
        }
    }

    #[test]
    fn the_cost_is_the_best_score_less_the_played_one() {
        let ranked = [choice("d3", 250, false), choice("c4", 100, false)];
        let judged = judge(&ranked, "c4".parse().unwrap(), Variant::Othello).unwrap();
        assert!((judged.cost - 1.5).abs() < 1e-9, "{}", judged.text);
        assert!(judged.text.contains("best   d3"), "{}", judged.text);
        let best = judge(&ranked, "d3".parse().unwrap(), Variant::Othello).unwrap();
        assert_eq!(best.cost, 0.0);
        let exact = [
            choice("a1", 6 * WIN_FACTOR, true),
            choice("b1", -2 * WIN_FACTOR, true),
        ];
        let judged = judge(&exact, "b1".parse().unwrap(), Variant::Othello).unwrap();
        assert!((judged.cost - 8.0).abs() < 1e-9);
        assert!(judge(&exact, "h8".parse().unwrap(), Variant::Othello).is_none());
    }
}
