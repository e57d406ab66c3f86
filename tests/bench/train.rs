//! `flip-bench train`: fits the pattern evaluation's weights to a training set
//! (see `dataset`) by least squares and writes `weights.bin`.
//!
//! Each phase is fitted on its own, on the positions within its empties and
//! `--overlap` more each side (so neighbouring phases agree where they meet),
//! by conjugate gradient on the normal equations with a ridge term: a
//! configuration seen n times moves n / (n + ridge) of the way to what its
//! positions say, so rare configurations stay near their prior instead of
//! fitting noise. The prior is 0 for the coarse fit (`--coarse` phases); when
//! `--phases` asks for more, each fine phase is then fitted around the coarse
//! phase it lies in (`--smooth` is that ridge), so a configuration the narrow
//! window seldom sees keeps the coarse phase's weight. Deterministic for a
//! given set, seed and flags, whatever `--threads`.

use std::path::{Path, PathBuf};

use clap::Args;
use flipline::engine::pattern::{INSTANCES, patterns};
use flipline::engine::pattern_eval::{
    MAX_PHASES, encode, phase, phase_empties, shared_offsets, values_per_phase,
};
use flipline::game::mix64;

use crate::dataset::RECORD;
use crate::games::Labelled;

#[derive(Args, Debug)]
pub struct TrainArgs {
    /// The training set `flip-bench dataset` wrote.
    #[arg(long)]
    set: PathBuf,
    /// Where to write the weights.
    #[arg(long, default_value = "shared/src/engine/weights.bin")]
    out: PathBuf,
    /// Phases of the weights written (1 to 60; the empties are split evenly).
    #[arg(long, default_value_t = 30)]
    phases: usize,
    /// Phases of the coarse fit the finer phases shrink towards (0 or equal
    /// to `--phases`: none, each phase shrinks towards 0).
    #[arg(long, default_value_t = 6)]
    coarse: usize,
    /// Empties each side of a phase whose positions it is also fitted on.
    #[arg(long, default_value_t = 2)]
    overlap: u32,
    /// Most positions a phase is fitted on (a seeded sample when there are more).
    #[arg(long, default_value_t = 3_000_000)]
    max_per_phase: usize,
    /// Conjugate-gradient iterations a phase.
    #[arg(long, default_value_t = 100)]
    iterations: usize,
    /// The ridge term (in positions' worth of pull towards 0).
    #[arg(long, default_value_t = 20.0)]
    ridge: f64,
    /// The finer phases' ridge (in positions' worth of pull towards the
    /// coarse phase's weight).
    #[arg(long, default_value_t = 60.0)]
    smooth: f64,
    /// Huber's loss from this error on (discs; 0: least squares).
    #[arg(long, default_value_t = 0.0)]
    huber: f64,
    /// Phases fitted at once, one thread each (the result does not depend on it).
    #[arg(long, default_value_t = 1)]
    threads: usize,
    /// Seed of the sample.
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

/// A phase's design matrix: per position, the value numbers it reads (the
/// constant last), and its label.
struct Design {
    rows: Vec<[u32; INSTANCES + 1]>,
    labels: Vec<f64>,
    columns: usize,
}

pub fn run(args: &TrainArgs) -> Result<(), String> {
    if !(1..=MAX_PHASES).contains(&args.phases) || args.coarse > MAX_PHASES {
        return Err(format!("phases must be 1 to {MAX_PHASES}"));
    }
    let set = read_records(&args.set)?;
    let per_phase = values_per_phase(patterns());
    let coarse = if args.coarse == 0 || args.coarse == args.phases {
        None
    } else {
        println!("coarse fit, {} phases:", args.coarse);
        Some(fit_phases(&set, args, args.coarse, args.ridge, |_| None))
    };
    if coarse.is_some() {
        println!("fine fit, {} phases:", args.phases);
    }
    let ridge = if coarse.is_some() {
        args.smooth
    } else {
        args.ridge
    };
    let fitted = fit_phases(&set, args, args.phases, ridge, |ph| {
        let (first, last) = phase_empties(ph, args.phases);
        let middle = (first + last) / 2;
        let c = coarse.as_ref()?;
        c.get(phase(middle, args.coarse)).map(Vec::as_slice)
    });
    let mut values = Vec::with_capacity(args.phases * per_phase);
    for weights in &fitted {
        values.extend(
            weights
                .iter()
                .map(|w| (w * 100.0).round().clamp(-32767.0, 32767.0) as i16),
        );
    }
    std::fs::write(&args.out, encode(&values, args.phases))
        .map_err(|e| format!("{}: {e}", args.out.display()))?;
    println!("weights written to {}", args.out.display());
    Ok(())
}

/// Every phase of `phases` fitted with `ridge` towards its prior (0 when
/// `prior` gives none), `args.threads` phases at a time.
fn fit_phases<'a>(
    set: &[Labelled],
    args: &TrainArgs,
    phases: usize,
    ridge: f64,
    prior: impl Fn(usize) -> Option<&'a [f64]> + Sync,
) -> Vec<Vec<f64>> {
    let threads = args.threads.clamp(1, phases);
    let mut fitted: Vec<(usize, Vec<f64>, String)> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|t| {
                let prior = &prior;
                scope.spawn(move || {
                    (t..phases)
                        .step_by(threads)
                        .map(|ph| {
                            let design = design(set, ph, phases, args);
                            let weights =
                                fit(&design, args.iterations, ridge, prior(ph), args.huber);
                            let (rmse, mae) = errors(&design, &weights);
                            let (first, last) = phase_empties(ph, phases);
                            let line = format!(
                                "phase {ph} ({first}-{last} empties): {} positions, training error {rmse:.2} discs rms, {mae:.2} mean absolute",
                                design.rows.len()
                            );
                            (ph, weights, line)
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().unwrap_or_default())
            .collect()
    });
    fitted.sort_by_key(|(ph, _, _)| *ph);
    for (_, _, line) in &fitted {
        println!("{line}");
    }
    fitted.into_iter().map(|(_, w, _)| w).collect()
}

/// The positions of phase `ph`'s window, sampled, as rows of value numbers.
fn design(set: &[Labelled], ph: usize, phases: usize, args: &TrainArgs) -> Design {
    let pats = patterns();
    let offsets = shared_offsets(pats);
    let columns = values_per_phase(pats);
    let (first, last) = phase_empties(ph, phases);
    let low = first.saturating_sub(args.overlap);
    // The last phase also holds the positions above 59 empties.
    let high = if ph + 1 == phases {
        64
    } else {
        last + args.overlap
    };
    let mut chosen: Vec<&Labelled> = set
        .iter()
        .filter(|l| (low..=high).contains(&(64 - (l.p | l.o).count_ones())))
        .collect();
    if chosen.len() > args.max_per_phase {
        chosen.sort_by_key(|l| mix64(l.p ^ mix64(l.o ^ args.seed)));
        chosen.truncate(args.max_per_phase);
    }
    let rows = chosen
        .iter()
        .map(|l| {
            let mut row = [columns as u32 - 1; INSTANCES + 1];
            let indices = pats.indices(l.p, l.o);
            for ((slot, inst), index) in row.iter_mut().zip(pats.instances()).zip(indices) {
                *slot = (offsets[inst.kind] as u32) + pats.rank(inst.kind, index as usize);
            }
            row
        })
        .collect();
    let labels = chosen.iter().map(|l| f64::from(l.label)).collect();
    Design {
        rows,
        labels,
        columns,
    }
}

/// A x: each row's sum of the values it reads.
fn times(design: &Design, x: &[f64]) -> Vec<f64> {
    design
        .rows
        .iter()
        .map(|row| {
            row.iter()
                .map(|&c| x.get(c as usize).copied().unwrap_or(0.0))
                .sum()
        })
        .collect()
}

/// A^T v: each value's sum over the rows that read it.
fn transposed_times(design: &Design, v: &[f64]) -> Vec<f64> {
    let mut out = vec![0.0; design.columns];
    for (row, &vi) in design.rows.iter().zip(v) {
        for &c in row {
            if let Some(slot) = out.get_mut(c as usize) {
                *slot += vi;
            }
        }
    }
    out
}

/// (A^T W A + ridge I) x, the constant left out of the ridge; W is the rows'
/// weights (1 each when there are none).
fn normal_times(design: &Design, x: &[f64], ridge: f64, weights: Option<&[f64]>) -> Vec<f64> {
    let mut ax = times(design, x);
    if let Some(w) = weights {
        for (v, wi) in ax.iter_mut().zip(w) {
            *v *= wi;
        }
    }
    let mut out = transposed_times(design, &ax);
    let constant = design.columns - 1;
    for (i, (o, xi)) in out.iter_mut().zip(x).enumerate() {
        if i != constant {
            *o += ridge * xi;
        }
    }
    out
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// The weights that minimise the squared errors plus `ridge` times the
/// squared distance of every weight but the constant from `prior` (0 when
/// there is none), by conjugate gradient. With `huber` > 0 (discs), then
/// `HUBER_ROUNDS` rounds of reweighting: a position whose error exceeds
/// `huber` counts `huber / error` as much, so that the fit follows Huber's
/// loss (squares near the fit, absolute values far from it) and a label far
/// off, a blunder in the game, pulls less.
fn fit(
    design: &Design,
    iterations: usize,
    ridge: f64,
    prior: Option<&[f64]>,
    huber: f64,
) -> Vec<f64> {
    let prior: Vec<f64> = match prior {
        Some(p) if p.len() == design.columns => p.to_vec(),
        _ => vec![0.0; design.columns],
    };
    let mut x = prior.clone();
    let rounds = if huber > 0.0 { 1 + HUBER_ROUNDS } else { 1 };
    for round in 0..rounds {
        // Solve for the step from x: the labels less what x says, and the
        // ridge's pull back towards the prior.
        let predicted = times(design, &x);
        let residuals: Vec<f64> = design
            .labels
            .iter()
            .zip(&predicted)
            .map(|(y, p)| y - p)
            .collect();
        let weights: Option<Vec<f64>> = (round > 0).then(|| {
            residuals
                .iter()
                .map(|r| {
                    if r.abs() <= huber {
                        1.0
                    } else {
                        huber / r.abs()
                    }
                })
                .collect()
        });
        let weighted: Vec<f64> = match &weights {
            Some(w) => residuals.iter().zip(w).map(|(r, wi)| r * wi).collect(),
            None => residuals,
        };
        let mut rhs = transposed_times(design, &weighted);
        let constant = design.columns - 1;
        for (i, (b, (xi, pi))) in rhs.iter_mut().zip(x.iter().zip(&prior)).enumerate() {
            if i != constant {
                *b -= ridge * (xi - pi);
            }
        }
        let steps = if round == 0 {
            iterations
        } else {
            iterations.div_ceil(3)
        };
        let step = conjugate_gradient(design, rhs, steps, ridge, weights.as_deref());
        for (xi, si) in x.iter_mut().zip(&step) {
            *xi += si;
        }
    }
    x
}

/// Reweighting rounds after the least-squares fit when `--huber` is on.
const HUBER_ROUNDS: usize = 2;

/// Conjugate gradient from 0 on (A^T W A + ridge I) x = `rhs`.
fn conjugate_gradient(
    design: &Design,
    rhs: Vec<f64>,
    iterations: usize,
    ridge: f64,
    weights: Option<&[f64]>,
) -> Vec<f64> {
    let mut x = vec![0.0; design.columns];
    let mut r = rhs;
    let mut d = r.clone();
    let mut rr = dot(&r, &r);
    for _ in 0..iterations {
        if rr <= f64::EPSILON {
            break;
        }
        let q = normal_times(design, &d, ridge, weights);
        let alpha = rr / dot(&d, &q);
        for ((xi, ri), (di, qi)) in x.iter_mut().zip(r.iter_mut()).zip(d.iter().zip(&q)) {
            *xi += alpha * di;
            *ri -= alpha * qi;
        }
        let next = dot(&r, &r);
        let beta = next / rr;
        rr = next;
        for (di, ri) in d.iter_mut().zip(&r) {
            *di = ri + beta * *di;
        }
    }
    x
}

/// The fit's root mean square and mean absolute error on its own positions.
fn errors(design: &Design, x: &[f64]) -> (f64, f64) {
    let predicted = times(design, x);
    let n = design.labels.len().max(1) as f64;
    let residuals = predicted.iter().zip(&design.labels).map(|(p, y)| p - y);
    let (sq, abs) = residuals.fold((0.0, 0.0), |(s, a), e| (s + e * e, a + e.abs()));
    ((sq / n).sqrt(), abs / n)
}

/// Reads a training set: (p, o, label) triples.
pub fn read_records(path: &Path) -> Result<Vec<Labelled>, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    if bytes.len() % RECORD != 0 {
        return Err(format!(
            "{}: not a whole number of {RECORD}-byte records",
            path.display()
        ));
    }
    Ok(bytes
        .chunks_exact(RECORD)
        .filter_map(|r| {
            let p = u64::from_le_bytes(r.get(..8)?.try_into().ok()?);
            let o = u64::from_le_bytes(r.get(8..16)?.try_into().ok()?);
            let label = *r.get(16)? as i8;
            Some(Labelled { p, o, label })
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A design whose rows read one of two values (every slot but the last)
    /// and the constant (column 2).
    fn two_kinds(labels: &[(usize, f64)]) -> Design {
        let rows = labels
            .iter()
            .map(|&(kind, _)| {
                let mut row = [kind as u32; INSTANCES + 1];
                row[INSTANCES] = 2;
                row
            })
            .collect();
        Design {
            rows,
            labels: labels.iter().map(|&(_, y)| y).collect(),
            columns: 3,
        }
    }

    fn predict(design: &Design, x: &[f64], row: usize) -> f64 {
        times(design, x)[row]
    }

    #[test]
    fn a_strong_ridge_keeps_the_prior_and_a_weak_one_follows_the_labels() {
        let labels: Vec<(usize, f64)> = (0..20)
            .map(|i| (i % 2, if i % 2 == 0 { 30.0 } else { -10.0 }))
            .collect();
        let design = two_kinds(&labels);
        let prior = [0.5, -0.25, 0.0];
        let held = fit(&design, 50, 1e9, Some(&prior), 0.0);
        assert!(
            (held[0] - 0.5).abs() < 1e-3 && (held[1] + 0.25).abs() < 1e-3,
            "{held:?}"
        );
        let free = fit(&design, 50, 1e-6, Some(&prior), 0.0);
        assert!((predict(&design, &free, 0) - 30.0).abs() < 1e-3, "{free:?}");
        assert!((predict(&design, &free, 1) + 10.0).abs() < 1e-3, "{free:?}");
        // Without a prior a strong ridge holds the values at 0 and the
        // constant takes the mean.
        let zero = fit(&design, 50, 1e9, None, 0.0);
        assert!(
            zero[0].abs() < 1e-3 && (zero[2] - 10.0).abs() < 1e-3,
            "{zero:?}"
        );
    }

    #[test]
    fn huber_s_loss_lets_a_blunder_pull_less() {
        // Nine labels of 1 and one of 100, all reading the constant alone.
        let labels: Vec<(usize, f64)> = (0..10)
            .map(|i| (2, if i == 0 { 100.0 } else { 1.0 }))
            .collect();
        let design = two_kinds(&labels);
        let squares = predict(&design, &fit(&design, 20, 1.0, None, 0.0), 0);
        let huber = predict(&design, &fit(&design, 20, 1.0, None, 1.0), 0);
        assert!((squares - 10.9).abs() < 1e-6, "{squares}");
        assert!(huber < 2.0 && huber > 1.0, "{huber}");
    }
}
