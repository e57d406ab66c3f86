//! `flip-bench searchlabel`: labels from the engine's own search for the
//! positions of a training set above the exact limit.
//!
//! A position earlier than a game's first solved one carries that position's
//! exact score (see `relabel`): the game as played to there, so every mistake
//! the players made in between is in its label. A search of a few plies with
//! the current weights sees those mistakes' alternatives; its score, blended
//! with the carried label, is a label with less of the players' noise. Train,
//! relabel, train again (Logistello's and Edax's sets were labelled by search).
//!
//! Each position is searched on its own (a fresh table), so the labels do not
//! depend on the order of the set or on `--threads`.

use std::path::{Path, PathBuf};
use std::time::Instant;

use clap::Args;
use flipline::board8::moves;
use flipline::engine::Tt;
use flipline::engine::eval::Evaluate;
use flipline::engine::pattern_eval::PatternEval;
use flipline::engine::search::{Options, Search};

use crate::dataset::RECORD;
use crate::games::Labelled;
use crate::train::read_records;

#[derive(Args, Debug)]
pub struct SearchLabelArgs {
    /// The training set to relabel (`flip-bench dataset` wrote it).
    #[arg(long)]
    set: PathBuf,
    /// Where to write the relabelled set (outside the repository).
    #[arg(long)]
    out: PathBuf,
    /// Weights of the search (the compiled-in ones when absent).
    #[arg(long)]
    weights: Option<PathBuf>,
    /// Search depth.
    #[arg(long, default_value_t = 4)]
    depth: u32,
    /// Search with ProbCut, as the engine plays.
    #[arg(long)]
    probcut: bool,
    /// Fewest empties of a relabelled position (those with fewer keep their
    /// labels: exact ones, from `dataset`).
    #[arg(long, default_value_t = 15)]
    min_empties: u32,
    /// Most empties of a relabelled position.
    #[arg(long, default_value_t = 60)]
    max_empties: u32,
    /// The search score's share of the new label (the rest is the old label).
    #[arg(long, default_value_t = 0.5)]
    blend: f64,
    /// Positions searched at once, one thread each.
    #[arg(long, default_value_t = 1)]
    threads: usize,
}

pub fn run(args: &SearchLabelArgs) -> Result<(), String> {
    let mut set = read_records(&args.set)?;
    let eval = load(args.weights.as_deref())?;
    let options = Options {
        probcut: args.probcut,
        eval_order: false,
    };
    let start = Instant::now();
    let range = args.min_empties..=args.max_empties;
    let threads = args.threads.max(1);
    let chunk = set.len().div_ceil(threads).max(1);
    let (moved, searched) = std::thread::scope(|scope| {
        let workers: Vec<_> = set
            .chunks_mut(chunk)
            .map(|part| {
                let (eval, range) = (&eval, range.clone());
                scope.spawn(move || {
                    let (mut moved, mut searched) = (0u64, 0u64);
                    for l in part.iter_mut() {
                        if !range.contains(&(64 - (l.p | l.o).count_ones())) {
                            continue;
                        }
                        let label = relabelled(eval, l, args.depth, options, args.blend);
                        moved += u64::from((label - i32::from(l.label)).unsigned_abs());
                        searched += 1;
                        l.label = label as i8;
                    }
                    (moved, searched)
                })
            })
            .collect();
        workers
            .into_iter()
            .filter_map(|w| w.join().ok())
            .fold((0, 0), |(a, b), (m, s)| (a + m, b + s))
    });
    write(&args.out, &set)?;
    println!(
        "{searched} of {} positions searched to depth {}, labels moved {:.2} discs on average, {:.0} s; written to {}",
        set.len(),
        args.depth,
        moved as f64 / searched.max(1) as f64,
        start.elapsed().as_secs_f64(),
        args.out.display()
    );
    Ok(())
}

/// The blend of `l`'s label and the search's score, in whole discs.
fn relabelled<E: Evaluate>(
    eval: &E,
    l: &Labelled,
    depth: u32,
    options: Options,
    blend: f64,
) -> i32 {
    let legal = moves(l.p, l.o);
    if legal == 0 {
        // A pass or the game's end: the label stays (the searches start from
        // positions with a move, as the games' positions do).
        return i32::from(l.label);
    }
    let mut tt = Tt::new(14);
    let mut never = || false;
    let mut search = Search::<E, false>::with_options(eval, &mut tt, &mut never, options);
    let order: Vec<u32> = (0..64).filter(|&s| legal >> s & 1 != 0).collect();
    let score = f64::from(search.iterate(l.p, l.o, depth, &order).score) / 100.0;
    let mixed = (1.0 - blend) * f64::from(l.label) + blend * score;
    (mixed.round() as i32).clamp(-64, 64)
}

fn load(weights: Option<&Path>) -> Result<PatternEval, String> {
    let bytes = match weights {
        Some(path) => std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?,
        None => flipline::engine::pattern_eval::compiled_bytes().to_vec(),
    };
    PatternEval::from_bytes(&bytes).map_err(|e| format!("weights: {e}"))
}

fn write(out: &Path, set: &[Labelled]) -> Result<(), String> {
    let mut bytes = Vec::with_capacity(set.len() * RECORD);
    for l in set {
        bytes.extend_from_slice(&l.p.to_le_bytes());
        bytes.extend_from_slice(&l.o.to_le_bytes());
        bytes.push(l.label as u8);
    }
    std::fs::write(out, bytes).map_err(|e| format!("{}: {e}", out.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A position with a move: the start.
    const START: Labelled = Labelled {
        p: 0x0000_0008_1000_0000,
        o: 0x0000_0010_0800_0000,
        label: 40,
    };

    #[test]
    fn the_blend_weighs_label_and_search() {
        let eval = PatternEval::from_values(&[], 1);
        let options = Options::default();
        // All-zero weights: every search scores 0 (no game ends within 2 plies).
        assert_eq!(relabelled(&eval, &START, 2, options, 0.0), 40);
        assert_eq!(relabelled(&eval, &START, 2, options, 0.25), 30);
        assert_eq!(relabelled(&eval, &START, 2, options, 1.0), 0);
    }

    #[test]
    fn a_position_without_a_move_keeps_its_label() {
        let eval = PatternEval::from_values(&[], 1);
        let stuck = Labelled {
            p: !0 >> 1,
            o: 1 << 63,
            label: -7,
        };
        assert_eq!(relabelled(&eval, &stuck, 4, Options::default(), 1.0), -7);
    }
}
