//! The exact solver against the FFO endgame suite (shared/tests/data/ffo): every
//! position of 1-19 and 20-39 must get the file's best score, by a move the file
//! gives that score. Positions 40-59 are the benchmark (`flip solve`), not a test.

use flipline::engine::{self, Tt};
use flipline::obf;
use flipline::{Move, Square};

/// Solves every position of an OBF text; returns what disagrees with the file.
fn disagreements(text: &str, first: usize) -> Vec<String> {
    let mut tt = Tt::new(20);
    let mut wrong = Vec::new();
    let lines = text.lines().filter(|line| !line.trim().is_empty());
    for (number, line) in (first..).zip(lines) {
        let position = match obf::parse_line(line) {
            Ok(Some(position)) => position,
            other => {
                wrong.push(format!("#{number}: unreadable ({other:?})"));
                continue;
            }
        };
        tt.clear();
        let (Some((solution, _)), Some(best)) = (
            engine::solve(&position.game, &mut tt, &mut || false),
            position.best_score(),
        ) else {
            wrong.push(format!("#{number}: no solution or no score in the file"));
            continue;
        };
        let mv = solution
            .best
            .map_or(Move::Pass, |x| Move::Place(Square::from_index(x, 8)));
        if solution.score != best || position.score_of(mv) != Some(best) {
            wrong.push(format!(
                "#{number}: {mv} {:+}, the file says {best:+}",
                solution.score
            ));
        }
    }
    wrong
}

#[test]
fn the_solver_agrees_with_ffo_1_to_19() {
    let wrong = disagreements(include_str!("data/ffo/fforum-1-19.obf"), 1);
    assert!(wrong.is_empty(), "{wrong:?}");
}

#[test]
fn the_solver_agrees_with_ffo_20_to_39() {
    let wrong = disagreements(include_str!("data/ffo/fforum-20-39.obf"), 20);
    assert!(wrong.is_empty(), "{wrong:?}");
}
