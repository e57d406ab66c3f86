//! Engine scores as people read them: `flip analyze`, `flip analyze --game`,
//! and the client's `hint`, in review and in play.

use flipline::Variant;
use flipline::engine::WIN_FACTOR;

/// Whether the engine's heuristic scores in `variant` are in hundredths of
/// a disc: the bitboard engine's are (8x8 boards); the generic one's (other
/// boards, and freeplace) are in units of its own.
pub fn in_hundredths(variant: Variant) -> bool {
    variant.size() == 8 && variant != Variant::Freeplace
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
