//! Engine scores as people read them: `flip analyze`, `flip analyze --game`,
//! and the client's `hint`, in review and in play: one unit everywhere.

use flipline::Variant;
use flipline::engine::WIN_FACTOR;

/// Whether the engine's heuristic scores in `variant` are in hundredths of
/// a disc: the bitboard engine's are (8x8 boards); the generic one's (other
/// boards, and freeplace) are in units of its own.
pub fn in_hundredths(variant: Variant) -> bool {
    variant.size() == 8 && variant != Variant::Freeplace
}

/// What a score of `variant` counts, for the words beside it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Units {
    /// Discs: proven margins, and 8x8 estimates in hundredths of a disc.
    Discs,
    /// Tic-tac-toe: only the result with best play means anything.
    Outcome,
    /// The generic engine's estimates (other boards, freeplace): its own
    /// units, not discs; proven scores are disc margins still.
    Heuristic,
}

impl Units {
    /// The units of `variant`'s scores.
    pub fn of(variant: Variant) -> Units {
        match variant {
            Variant::TicTacToe => Units::Outcome,
            v if in_hundredths(v) => Units::Discs,
            _ => Units::Heuristic,
        }
    }
}

/// A score as a person reads it, with its unit, the same in every place a
/// score is shown in words (a hint live and in review): `+1.25 discs`,
/// `+12 discs, exact`, `+0 discs, exact` (a proven draw), `a win with best
/// play` (tic-tac-toe), `+37 (the engine's own units, not discs)`.
pub fn score_phrase(score: i32, exact: bool, variant: Variant) -> String {
    let units = Units::of(variant);
    match (exact, units) {
        (true, Units::Outcome) => match score.signum() {
            1 => "a win with best play".to_string(),
            -1 => "a loss with best play".to_string(),
            _ => "a draw with best play".to_string(),
        },
        (true, _) => format!("{} discs, exact", score_text(score, true, false)),
        (false, Units::Discs) => format!("{} discs", score_text(score, false, true)),
        (false, _) => format!(
            "{} (the engine's own units, not discs)",
            score_text(score, false, false)
        ),
    }
}

/// The line that says what `flip analyze`'s and `flip analyze --game`'s
/// score columns count for `variant`.
pub fn units_note(variant: Variant) -> &'static str {
    match Units::of(variant) {
        Units::Discs => "scores: discs for the side to move (exact: the margin with best play)",
        Units::Outcome => "scores: with best play, positive a win, 0 a draw, negative a loss",
        Units::Heuristic => {
            "scores: the engine's own units, not discs, until exact (then the disc margin)"
        }
    }
}

/// An engine score as a person reads it (`flip analyze`, and the client's
/// `hint`): an exact one as a disc margin (`+12`), a heuristic one in discs
/// to two places (`+1.25`) when it is in hundredths of a disc, else as it is.
pub fn score_text(score: i32, exact: bool, hundredths: bool) -> String {
    if exact {
        return format!("{:+}", score / WIN_FACTOR);
    }
    if hundredths {
        format!("{:+.2}", f64::from(score) / 100.0)
    } else {
        format!("{score:+}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_score_says_its_unit_and_whether_it_is_proven() {
        let phrase = |score, exact, variant| score_phrase(score, exact, variant);
        assert_eq!(phrase(125, false, Variant::Othello), "+1.25 discs");
        assert_eq!(phrase(-70, false, Variant::Reversi), "-0.70 discs");
        assert_eq!(
            phrase(12 * WIN_FACTOR, true, Variant::Othello),
            "+12 discs, exact"
        );
        assert_eq!(phrase(0, true, Variant::Othello), "+0 discs, exact");
        assert_eq!(
            phrase(-4 * WIN_FACTOR, true, Variant::Anti),
            "-4 discs, exact"
        );
        assert_eq!(
            phrase(37, false, Variant::Freeplace),
            "+37 (the engine's own units, not discs)"
        );
        assert_eq!(
            phrase(WIN_FACTOR, true, Variant::TicTacToe),
            "a win with best play"
        );
        assert_eq!(phrase(0, true, Variant::TicTacToe), "a draw with best play");
        assert_eq!(
            phrase(-WIN_FACTOR, true, Variant::TicTacToe),
            "a loss with best play"
        );
    }

    proptest::proptest! {
        #[test]
        fn a_disc_figure_has_a_sign_and_at_most_two_decimals(score in -9999i32..=9999, exact: bool) {
            let score = if exact { score * WIN_FACTOR / 100 } else { score };
            let phrase = score_phrase(score, exact, Variant::Othello);
            let number = phrase.split(' ').next().unwrap_or_default();
            proptest::prop_assert!(number.starts_with(['+', '-']), "{}", phrase);
            let decimals = number.split('.').nth(1).map_or(0, str::len);
            proptest::prop_assert!(decimals <= 2, "{}", phrase);
        }
    }
}
