//! ProbCut for the midgame search: a shallow search predicts a deep one, and a
//! node whose prediction lies far outside the window is cut without the deep
//! search.
//!
//! The deep score `v_d` of a position is close to a linear function of the
//! shallow score `v_s`: `v_d = a * v_s + b + e`, the error `e` roughly normal
//! with a spread `sigma` that depends on the two depths and the game phase. A
//! null-window node at depth `d` (window `beta - 1, beta`) is then cut high when
//! the shallow search proves `a * v_s + b >= beta + t * sigma` and low when it
//! proves `a * v_s + b <= beta - 1 - t * sigma`: each proof is one null-window
//! search of depth `s`, a small fraction of the deep one, and it is wrong only
//! when the error is more than `t` spreads away (about 7 % of the time at
//! `t` = 1.5, on one side).
//!
//! The table below is that regression fitted on real games' positions with the
//! pattern evaluation (`flip-bench probcut`, BENCHMARKS.md "ProbCut in the
//! midgame"): only the evaluation it was fitted with may use it, so anti's
//! search (on the heuristic) has no ProbCut.

/// The fit's game phases: 10 empties each, the last from 50 empties to the
/// start (whatever phases the evaluation's weights have).
pub const PHASES: usize = 6;

/// The fit's phase of a position with `empties` empty squares.
pub fn phase(empties: u32) -> usize {
    (empties.min(59) / 10) as usize
}

/// The shallowest node ProbCut is tried at: below, the shallow search is no
/// cheaper than the node itself.
pub const MIN_DEPTH: u32 = 3;
/// The deepest depth fitted; deeper nodes use its row (the spread grows slowly
/// with depth).
pub const MAX_DEPTH: u32 = 10;
/// How many spreads the prediction must clear the window by.
pub const T: f32 = 1.5;

/// The regression of a deep score on a shallow one, in hundredths of a disc.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Fit {
    /// Slope.
    pub a: f32,
    /// Intercept.
    pub b: f32,
    /// The residuals' standard deviation.
    pub sigma: f32,
}

/// The depth of the shallow search that predicts a search of `depth` plies:
/// about a quarter of it, rounded to even, plus its parity so that both end on
/// the same side to move (evaluations of one side are biased the same way).
pub fn shallow_depth(depth: u32) -> u32 {
    let s = 2 * (depth / 4) + (depth & 1);
    if s == 0 { depth.saturating_sub(2) } else { s }
}

/// The fitted regression for a node of `depth` plies with `empties` empty
/// squares.
pub fn fit(depth: u32, empties: u32) -> Fit {
    let row = depth.clamp(MIN_DEPTH, MAX_DEPTH) - MIN_DEPTH;
    let phase = phase(empties);
    FITS.get(row as usize)
        .and_then(|r| r.get(phase))
        .copied()
        .unwrap_or(WIDE)
}

/// A fit that never cuts (a spread beyond every score).
const WIDE: Fit = Fit {
    a: 1.0,
    b: 0.0,
    sigma: 1.0e6,
};

/// A row entry: slope, intercept and spread (hundredths of a disc).
const fn fit_of(a: f32, b: f32, sigma: f32) -> Fit {
    Fit { a, b, sigma }
}

/// Rows: depth `MIN_DEPTH..=MAX_DEPTH` (the shallow depth is
/// [`shallow_depth`]'s); columns: the fit's phases, 0-9 empties first.
/// 400 positions a phase from WTHOR 2018-2020 (`flip-bench probcut
/// --positions 400 --max-depth 10`). Phase 0 keeps a fit that never cuts: near
/// the end the search is nearly exact and cheap, and a cut there would throw
/// away a proof.
#[rustfmt::skip]
const FITS: [[Fit; PHASES]; (MAX_DEPTH - MIN_DEPTH + 1) as usize] = [
    [WIDE, fit_of(1.007, -25.0, 430.0), fit_of(0.997, -8.0, 376.0), fit_of(0.964, -12.0, 356.0), fit_of(0.909, 31.0, 336.0), fit_of(0.748, 76.0, 451.0)],
    [WIDE, fit_of(1.009, -17.0, 393.0), fit_of(1.002, 14.0, 331.0), fit_of(0.971, 27.0, 304.0), fit_of(0.903, -27.0, 303.0), fit_of(0.778, -18.0, 291.0)],
    [WIDE, fit_of(1.006, -26.0, 383.0), fit_of(1.004, 3.0, 293.0), fit_of(0.976, 45.0, 274.0), fit_of(0.934, 17.0, 260.0), fit_of(0.724, 145.0, 271.0)],
    [WIDE, fit_of(1.029, -16.0, 542.0), fit_of(1.010, 11.0, 425.0), fit_of(0.965, 27.0, 397.0), fit_of(0.846, -54.0, 331.0), fit_of(0.589, 93.0, 348.0)],
    [WIDE, fit_of(1.023, -19.0, 489.0), fit_of(1.012, -8.0, 408.0), fit_of(0.961, 37.0, 345.0), fit_of(0.876, 51.0, 288.0), fit_of(0.622, 127.0, 318.0)],
    [WIDE, fit_of(1.028, 38.0, 488.0), fit_of(1.019, 28.0, 379.0), fit_of(0.967, 10.0, 316.0), fit_of(0.891, -3.0, 248.0), fit_of(0.711, 20.0, 252.0)],
    [WIDE, fit_of(1.023, 4.0, 473.0), fit_of(1.023, -12.0, 344.0), fit_of(0.959, 17.0, 294.0), fit_of(0.897, 40.0, 227.0), fit_of(0.887, -63.0, 170.0)],
    [WIDE, fit_of(1.038, 48.0, 572.0), fit_of(1.025, 44.0, 432.0), fit_of(0.968, 16.0, 368.0), fit_of(0.856, -12.0, 247.0), fit_of(0.707, -55.0, 191.0)],
];

/// The shallow score at or above which a node of window `(beta - 1, beta)` is
/// cut high, and the one at or below which it is cut low.
pub fn bounds(fit: Fit, beta: i32) -> (i32, i32) {
    let margin = T * fit.sigma;
    let a = fit.a.max(0.1);
    let high = ((beta as f32 + margin - fit.b) / a).ceil();
    let low = (((beta - 1) as f32 - margin - fit.b) / a).floor();
    (clamp_score(high), clamp_score(low))
}

/// A float threshold as a score, kept inside `i32` (the search treats those
/// beyond its scores as unreachable).
fn clamp_score(x: f32) -> i32 {
    x.clamp(-1.0e6, 1.0e6) as i32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shallow_searches_are_shallower_with_the_same_parity() {
        for depth in MIN_DEPTH..=30 {
            let s = shallow_depth(depth);
            assert!(s < depth && s >= 1, "{depth} -> {s}");
            assert_eq!(s % 2, depth % 2, "{depth} -> {s}");
        }
    }

    #[test]
    fn the_bounds_lie_outside_the_window_by_the_margin() {
        let fit = Fit {
            a: 1.0,
            b: 0.0,
            sigma: 200.0,
        };
        assert_eq!(bounds(fit, 1), (301, -300));
        assert_eq!(bounds(WIDE, 0).0, 1_000_000);
    }
}
