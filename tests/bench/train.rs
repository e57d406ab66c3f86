//! `flip-bench train`: fits the pattern evaluation's weights to a training set
//! (see `dataset`) by least squares and writes `weights.bin`.
//!
//! Each phase is fitted on its own, on the positions within its ten empties
//! and two more each side (so neighbouring phases agree where they meet), by
//! conjugate gradient on the normal equations with a ridge term: a
//! configuration seen n times moves n / (n + ridge) of the way to what its
//! positions say, so rare configurations stay near 0 instead of fitting noise.
//! One thread, deterministic for a given set, seed and flags.

use std::path::{Path, PathBuf};

use clap::Args;
use flipline::engine::pattern::{INSTANCES, patterns};
use flipline::engine::pattern_eval::{PHASES, encode, shared_offsets, values_per_phase};
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
    /// Most positions a phase is fitted on (a seeded sample when there are more).
    #[arg(long, default_value_t = 3_000_000)]
    max_per_phase: usize,
    /// Conjugate-gradient iterations a phase.
    #[arg(long, default_value_t = 100)]
    iterations: usize,
    /// The ridge term (in positions' worth of pull towards 0).
    #[arg(long, default_value_t = 20.0)]
    ridge: f64,
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
    let set = read_records(&args.set)?;
    let per_phase = values_per_phase(patterns());
    let mut values = Vec::with_capacity(PHASES * per_phase);
    for phase in 0..PHASES {
        let design = design(&set, phase, args);
        let weights = fit(&design, args.iterations, args.ridge);
        let (rmse, mae) = errors(&design, &weights);
        println!(
            "phase {phase} ({}-{} empties): {} positions, training error {rmse:.2} discs rms, {mae:.2} mean absolute",
            phase * 10,
            phase * 10 + 9,
            design.rows.len()
        );
        values.extend(
            weights
                .iter()
                .map(|w| (w * 100.0).round().clamp(-32767.0, 32767.0) as i16),
        );
    }
    std::fs::write(&args.out, encode(&values))
        .map_err(|e| format!("{}: {e}", args.out.display()))?;
    println!("weights written to {}", args.out.display());
    Ok(())
}

/// The positions of `phase`'s window, sampled, as rows of value numbers.
fn design(set: &[Labelled], phase: usize, args: &TrainArgs) -> Design {
    let pats = patterns();
    let offsets = shared_offsets(pats);
    let columns = values_per_phase(pats);
    let low = (phase * 10).saturating_sub(2) as u32;
    let high = phase as u32 * 10 + 11;
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

/// (A^T A + ridge I) x, the constant left out of the ridge.
fn normal_times(design: &Design, x: &[f64], ridge: f64) -> Vec<f64> {
    let mut out = transposed_times(design, &times(design, x));
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

/// Conjugate gradient from 0 on the ridge normal equations.
fn fit(design: &Design, iterations: usize, ridge: f64) -> Vec<f64> {
    let mut x = vec![0.0; design.columns];
    let mut r = transposed_times(design, &design.labels);
    let mut d = r.clone();
    let mut rr = dot(&r, &r);
    for _ in 0..iterations {
        if rr <= f64::EPSILON {
            break;
        }
        let q = normal_times(design, &d, ridge);
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
