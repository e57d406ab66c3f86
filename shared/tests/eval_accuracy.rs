//! The trained pattern evaluation against the hand-made heuristic on the FFO
//! positions (shared/tests/data/ffo, 20-36 empties, exact scores): the patterns
//! must miss the exact scores by less on average. Deterministic: the evaluation
//! alone, no search, no clock.

use flipline::engine::eval::{Evaluate, Heuristic};
use flipline::engine::pattern_eval::trained;
use flipline::obf;

/// The mean absolute error, in discs, of `eval` on every position of `texts`.
fn mean_error<E: Evaluate>(eval: &E, texts: &[&str]) -> f64 {
    let mut errors = Vec::new();
    for line in texts.iter().flat_map(|t| t.lines()) {
        let Ok(Some(position)) = obf::parse_line(line) else {
            continue;
        };
        let (Some((p, o)), Some(truth)) = (position.game.board8(), position.best_score()) else {
            continue;
        };
        errors.push((f64::from(eval.evaluate(p, o)) / 100.0 - f64::from(truth)).abs());
    }
    assert_eq!(errors.len(), 59, "every FFO position reads");
    errors.iter().sum::<f64>() / errors.len() as f64
}

#[test]
fn the_patterns_miss_exact_scores_by_less_than_the_heuristic() {
    let texts = [
        include_str!("data/ffo/fforum-1-19.obf"),
        include_str!("data/ffo/fforum-20-39.obf"),
        include_str!("data/ffo/fforum-40-59.obf"),
    ];
    let (old, new) = (
        mean_error(&Heuristic, &texts),
        mean_error(trained(), &texts),
    );
    assert!(new < old, "patterns {new:.2} discs, heuristic {old:.2}");
}
