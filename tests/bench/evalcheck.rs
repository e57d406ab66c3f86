//! `flip-bench accuracy` and `flip-bench evalmatch`: the trained pattern
//! evaluation measured against the hand-made heuristic, by its error on
//! exactly solved positions and by games between the two at equal depth.

use std::path::{Path, PathBuf};

use clap::Args;
use flipline::board8::{flips, moves};
use flipline::engine::Tt;
use flipline::engine::eval::{Evaluate, Heuristic};
use flipline::engine::pattern_eval::PatternEval;
use flipline::engine::search::{Options, Search};
use flipline::game::mix64;

use crate::games::START;

#[derive(Args, Debug)]
pub struct AccuracyArgs {
    /// OBF lines with exact scores (`flip-bench heldout` writes them).
    #[arg(long)]
    set: PathBuf,
    /// Weights to measure instead of the compiled-in ones.
    #[arg(long)]
    weights: Option<PathBuf>,
    /// Search depth (0: the evaluation alone).
    #[arg(long, default_value_t = 0)]
    depth: u32,
}

#[derive(Args, Debug)]
pub struct MatchArgs {
    /// Games (each opening is played twice, colours swapped).
    #[arg(long, default_value_t = 400)]
    games: usize,
    /// Search depth of both sides.
    #[arg(long, default_value_t = 4)]
    depth: u32,
    /// Openings, one line of moves each (`f5d6c4...`).
    #[arg(long, default_value = "../shared/data/real/xot/openingslarge.txt")]
    openings: PathBuf,
    /// Weights to play instead of the compiled-in ones.
    #[arg(long)]
    weights: Option<PathBuf>,
    /// Seed of the choice of openings.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// The pattern side searches with ProbCut, as the engine plays (the
    /// heuristic side stays full width, as the engine before it played).
    #[arg(long)]
    probcut: bool,
}

fn pattern_eval(weights: Option<&Path>) -> Result<PatternEval, String> {
    match weights {
        Some(path) => {
            let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
            PatternEval::from_bytes(&bytes).map_err(|e| format!("{}: {e}", path.display()))
        }
        None => PatternEval::from_bytes(&encode_trained()).map_err(|e| e.to_string()),
    }
}

/// The compiled-in weights, through the same reader as a file's.
fn encode_trained() -> Vec<u8> {
    flipline::engine::pattern_eval::compiled_bytes().to_vec()
}

/// The value at `depth` (0: the evaluation) for the side to move, in discs.
fn value<E: Evaluate>(eval: &E, p: u64, o: u64, depth: u32) -> f64 {
    if depth == 0 {
        return f64::from(eval.evaluate(p, o)) / 100.0;
    }
    let mut tt = Tt::new(18);
    let mut never = || false;
    let mut search = Search::<E, false>::new(eval, &mut tt, &mut never);
    let order: Vec<u32> = (0..64).collect();
    f64::from(search.iterate(p, o, depth, &order).score) / 100.0
}

pub fn run_accuracy(args: &AccuracyArgs) -> Result<(), String> {
    let text =
        std::fs::read_to_string(&args.set).map_err(|e| format!("{}: {e}", args.set.display()))?;
    let pattern = pattern_eval(args.weights.as_deref())?;
    let (mut old, mut new, mut n) = (0.0, 0.0, 0usize);
    for line in text.lines() {
        let Some(pos) = flipline::obf::parse_line(line).map_err(|e| e.message)? else {
            continue;
        };
        let (Some(truth), Some((p, o))) = (pos.best_score(), pos.game.board8()) else {
            continue;
        };
        let truth = f64::from(truth);
        old += (value(&Heuristic, p, o, args.depth) - truth).abs();
        new += (value(&pattern, p, o, args.depth) - truth).abs();
        n += 1;
    }
    let n_f = n.max(1) as f64;
    println!(
        "{n} positions, depth {}: mean absolute error heuristic {:.2} discs, patterns {:.2} discs",
        args.depth,
        old / n_f,
        new / n_f
    );
    Ok(())
}

/// The position after an opening's moves, `None` when a move is not legal.
fn opening(line: &str) -> Option<(u64, u64)> {
    let (mut p, mut o) = START;
    for m in line.trim().as_bytes().chunks(2) {
        let [col @ b'a'..=b'h', row @ b'1'..=b'8'] = *m else {
            return None;
        };
        let square = u32::from((row - b'1') * 8 + (col - b'a'));
        if moves(p, o) == 0 {
            (p, o) = (o, p);
        }
        let flipped = flips(square, p, o);
        if flipped == 0 || (p | o) >> square & 1 != 0 {
            return None;
        }
        (p, o) = (o ^ flipped, p ^ flipped ^ 1 << square);
    }
    Some((p, o))
}

/// One move at `depth`, `None` for a pass.
fn best<E: Evaluate>(eval: &E, options: Options, p: u64, o: u64, depth: u32) -> Option<u32> {
    let mut tt = Tt::new(16);
    let mut never = || false;
    let mut search = Search::<E, false>::with_options(eval, &mut tt, &mut never, options);
    let order: Vec<u32> = (0..64).filter(|&s| moves(p, o) >> s & 1 != 0).collect();
    search.iterate(p, o, depth, &order).best
}

/// Plays out a game from (p, o), the pattern side moving first when
/// `pattern_first`; the final disc difference for the pattern side.
fn play(
    (pattern, options): (&PatternEval, Options),
    (mut p, mut o): (u64, u64),
    pattern_first: bool,
    depth: u32,
) -> i32 {
    let mut pattern_to_move = pattern_first;
    while moves(p, o) != 0 || moves(o, p) != 0 {
        let choice = if pattern_to_move {
            best(pattern, options, p, o, depth)
        } else {
            best(&Heuristic, Options::default(), p, o, depth)
        };
        if let Some(square) = choice.filter(|&s| moves(p, o) >> s & 1 != 0) {
            let flipped = flips(square, p, o);
            (p, o) = (p ^ flipped ^ 1 << square, o ^ flipped);
        }
        (p, o) = (o, p);
        pattern_to_move = !pattern_to_move;
    }
    let (a, b) = (p.count_ones() as i32, o.count_ones() as i32);
    let margin = (a - b).signum() * (64 - a - b) + a - b;
    if pattern_to_move { margin } else { -margin }
}

/// The positions after the openings of the file at `path` that replay, in
/// an order drawn from `seed`.
pub fn openings(path: &Path, seed: u64) -> Result<Vec<(u64, u64)>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut lines: Vec<&str> = text.lines().filter(|l| opening(l).is_some()).collect();
    lines.sort_by_key(|l| mix64(seed ^ mix64(l.len() as u64 ^ hash(l))));
    Ok(lines.into_iter().filter_map(opening).collect())
}

pub fn run_match(args: &MatchArgs) -> Result<(), String> {
    let starts = openings(&args.openings, args.seed)?;
    let pattern = pattern_eval(args.weights.as_deref())?;
    let options = Options {
        probcut: args.probcut,
        ..Options::default()
    };
    let (mut wins, mut draws, mut losses, mut discs) = (0u32, 0u32, 0u32, 0i64);
    for &start in starts.iter().take(args.games.div_ceil(2)) {
        for pattern_first in [true, false] {
            let margin = play((&pattern, options), start, pattern_first, args.depth);
            discs += i64::from(margin);
            match margin.signum() {
                1 => wins += 1,
                0 => draws += 1,
                _ => losses += 1,
            }
        }
    }
    report("patterns vs heuristic", wins, draws, losses, discs);
    Ok(())
}

fn hash(text: &str) -> u64 {
    text.bytes().fold(0, |h, b| mix64(h ^ u64::from(b)))
}

/// Wins, draws and losses of the first side named in `label`, its score and
/// the Elo difference with a 95 % interval (from the games' variance).
pub fn report(label: &str, wins: u32, draws: u32, losses: u32, discs: i64) {
    let n = f64::from(wins + draws + losses).max(1.0);
    let score = (f64::from(wins) + 0.5 * f64::from(draws)) / n;
    let var = (f64::from(wins) * (1.0 - score).powi(2)
        + f64::from(draws) * (0.5 - score).powi(2)
        + f64::from(losses) * score.powi(2))
        / n;
    let margin = 1.96 * (var / n).sqrt();
    let elo = |s: f64| -400.0 * (1.0 / s.clamp(0.001, 0.999) - 1.0).log10();
    println!(
        "{label}: +{wins} ={draws} -{losses} ({:.1} %), {:+.1} discs a game, Elo {:+.0} [{:+.0}, {:+.0}]",
        100.0 * score,
        discs as f64 / n,
        elo(score),
        elo(score - margin),
        elo(score + margin)
    );
}
