//! The midgame search's selective parts, fitted and measured:
//! - `flip-bench probcut`: ProbCut's error model, the regression of a deep
//!   search's score on a shallow one's per depth and game phase, on positions
//!   of real games;
//! - `flip-bench searchnodes`: nodes and time to a fixed depth with and
//!   without a part, on the same positions;
//! - `flip-bench selfmatch`: games between the search with a part and without
//!   it at equal time per move (XOT openings, colours swapped, Elo interval).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use clap::{Args, ValueEnum};
use flipline::board8::{flips, moves};
use flipline::engine::Tt;
use flipline::engine::eval::{Evaluate, Heuristic};
use flipline::engine::pattern_eval::{PatternEval, compiled_bytes, trained};
use flipline::engine::probcut::{MAX_DEPTH, MIN_DEPTH, PHASES, phase, shallow_depth};
use flipline::engine::search::{Options, Search};
use flipline::game::mix64;

use crate::dataset::wthor_files;
use crate::evalcheck::{openings, report};
use crate::games::{read_wthor, replay};

#[derive(Args, Debug)]
pub struct FitArgs {
    /// The real-data folder (`wthor/`).
    #[arg(long, default_value = "../shared/data/real")]
    data: PathBuf,
    /// The first WTHOR year whose games are sampled.
    #[arg(long, default_value_t = 2018)]
    from_year: u32,
    /// The last WTHOR year whose games are sampled.
    #[arg(long, default_value_t = 2020)]
    to_year: u32,
    /// Positions per game phase.
    #[arg(long, default_value_t = 300)]
    positions: usize,
    /// The deepest search (at most the model's deepest row).
    #[arg(long, default_value_t = 10)]
    max_depth: u32,
    /// Seed of the choice of positions.
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

/// Which selective parts a side of a comparison searches with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum SearchKind {
    /// The full-width search.
    Plain,
    /// With ProbCut.
    Probcut,
    /// With evaluation-ordered moves.
    Ordered,
    /// With both.
    Both,
    /// The engine before the pattern evaluation: the hand-made heuristic,
    /// full width.
    Heuristic,
}

impl SearchKind {
    fn options(self) -> Options {
        Options {
            probcut: matches!(self, SearchKind::Probcut | SearchKind::Both),
            eval_order: matches!(self, SearchKind::Ordered | SearchKind::Both),
        }
    }
}

#[derive(Args, Debug)]
pub struct NodesArgs {
    /// The search to measure.
    #[arg(long, value_enum)]
    search: SearchKind,
    /// Depth of every search.
    #[arg(long, default_value_t = 10)]
    depth: u32,
    /// Positions (XOT openings, a seeded choice).
    #[arg(long, default_value_t = 100)]
    positions: usize,
    /// Openings, one line of moves each.
    #[arg(long, default_value = "../shared/data/real/xot/openingslarge.txt")]
    openings: PathBuf,
    /// Seed of the choice of openings.
    #[arg(long, default_value_t = 3)]
    seed: u64,
}

#[derive(Args, Debug)]
pub struct SelfMatchArgs {
    /// The side whose result is reported.
    #[arg(long, value_enum)]
    a: SearchKind,
    /// Its opponent.
    #[arg(long, value_enum)]
    b: SearchKind,
    /// Thinking time per move of both sides, in milliseconds (iterative
    /// deepening until it runs out).
    #[arg(long, default_value_t = 50)]
    ms: u64,
    /// Games (each opening is played twice, colours swapped).
    #[arg(long, default_value_t = 400)]
    games: usize,
    /// Games played at once, one thread each.
    #[arg(long, default_value_t = 1)]
    threads: usize,
    /// Openings, one line of moves each.
    #[arg(long, default_value = "../shared/data/real/xot/openingslarge.txt")]
    openings: PathBuf,
    /// Seed of the choice of openings.
    #[arg(long, default_value_t = 5)]
    seed: u64,
    /// Weights of side a's pattern evaluation (the compiled-in ones when absent).
    #[arg(long)]
    a_weights: Option<PathBuf>,
    /// Weights of side b's pattern evaluation (the compiled-in ones when absent).
    #[arg(long)]
    b_weights: Option<PathBuf>,
}

/// Positions sampled from real games: up to `per_phase` in each phase from
/// 10 empties on, one phase's position per game, chosen by the seed.
fn sample(args: &FitArgs) -> Result<Vec<(u64, u64)>, String> {
    let years = args.from_year..=args.to_year;
    let mut by_phase: Vec<Vec<(u64, u64)>> = vec![Vec::new(); PHASES];
    for path in wthor_files(&args.data, |year| years.contains(&year))? {
        for (g, game) in read_wthor(&path)?.iter().enumerate() {
            let positions = replay(game);
            for (ph, bucket) in by_phase.iter_mut().enumerate().skip(1) {
                let eligible: Vec<_> = positions
                    .iter()
                    .filter(|l| phase(64 - (l.p | l.o).count_ones()) == ph)
                    .collect();
                let pick = mix64(args.seed ^ mix64(g as u64 ^ (ph as u64) << 40));
                if let Some(l) = eligible.get(pick as usize % eligible.len().max(1)) {
                    bucket.push((l.p, l.o));
                }
            }
        }
    }
    let mut out = Vec::new();
    for mut bucket in by_phase {
        bucket.sort_by_key(|&(p, o)| mix64(p ^ mix64(o ^ args.seed)));
        out.extend(bucket.into_iter().take(args.positions));
    }
    Ok(out)
}

/// The plain search's score at every depth from 0 (the evaluation) to `max`.
fn scores<E: Evaluate>(eval: &E, p: u64, o: u64, max: u32) -> Vec<f64> {
    let mut tt = Tt::new(18);
    let mut never = || false;
    let mut search = Search::<E, false>::new(eval, &mut tt, &mut never);
    let order: Vec<u32> = (0..64).filter(|&s| moves(p, o) >> s & 1 != 0).collect();
    let mut out = vec![f64::from(eval.evaluate(p, o))];
    for depth in 1..=max {
        out.push(f64::from(search.iterate(p, o, depth, &order).score));
    }
    out
}

/// Least squares of `y` on `x`: slope, intercept and the residuals' spread.
fn regress(pairs: &[(f64, f64)]) -> (f64, f64, f64) {
    let n = pairs.len().max(1) as f64;
    let (mx, my) = pairs
        .iter()
        .fold((0.0, 0.0), |(a, b), (x, y)| (a + x / n, b + y / n));
    let (sxx, sxy) = pairs.iter().fold((0.0, 0.0), |(a, b), (x, y)| {
        (a + (x - mx) * (x - mx), b + (x - mx) * (y - my))
    });
    let a = if sxx > 0.0 { sxy / sxx } else { 1.0 };
    let b = my - a * mx;
    let sse: f64 = pairs.iter().map(|(x, y)| (y - a * x - b).powi(2)).sum();
    (a, b, (sse / (n - 2.0).max(1.0)).sqrt())
}

pub fn run_fit(args: &FitArgs) -> Result<(), String> {
    let max = args.max_depth.clamp(MIN_DEPTH, MAX_DEPTH);
    let positions = sample(args)?;
    let eval = trained();
    let start = Instant::now();
    let mut rows: Vec<(usize, Vec<f64>)> = Vec::new();
    for (i, &(p, o)) in positions.iter().enumerate() {
        rows.push((phase(64 - (p | o).count_ones()), scores(eval, p, o, max)));
        if (i + 1) % 100 == 0 {
            eprintln!(
                "{} positions searched ({:.0} s)",
                i + 1,
                start.elapsed().as_secs_f64()
            );
        }
    }
    println!("| phase (empties) | depth | shallow | positions | a | b | sigma (discs) |");
    println!("|---|---|---|---|---|---|---|");
    let mut table = Vec::new();
    for depth in MIN_DEPTH..=max {
        let s = shallow_depth(depth);
        let mut line = Vec::new();
        for ph in 0..PHASES {
            let pairs: Vec<(f64, f64)> = rows
                .iter()
                .filter(|(rp, _)| *rp == ph)
                .filter_map(|(_, v)| Some((*v.get(s as usize)?, *v.get(depth as usize)?)))
                .collect();
            if pairs.len() < 10 {
                line.push("WIDE".to_string());
                continue;
            }
            let (a, b, sigma) = regress(&pairs);
            println!(
                "| {} ({}-{}) | {depth} | {s} | {} | {a:.3} | {:+.2} | {:.2} |",
                ph,
                ph * 10,
                ph * 10 + 9,
                pairs.len(),
                b / 100.0,
                sigma / 100.0
            );
            line.push(format!("fit({a:.3}, {b:.0}, {sigma:.0})"));
        }
        table.push(format!("    [{}],", line.join(", ")));
    }
    println!("\n{}", table.join("\n"));
    eprintln!(
        "{} positions, {:.0} s",
        positions.len(),
        start.elapsed().as_secs_f64()
    );
    Ok(())
}

pub fn run_nodes(args: &NodesArgs) -> Result<(), String> {
    let starts = openings(&args.openings, args.seed)?;
    let (mut nodes, mut seconds) = (0u64, 0.0);
    for &(p, o) in starts.iter().take(args.positions) {
        let start = Instant::now();
        nodes += match args.search {
            SearchKind::Heuristic => nodes_to(&Heuristic, args.search, p, o, args.depth),
            _ => nodes_to(trained(), args.search, p, o, args.depth),
        };
        seconds += start.elapsed().as_secs_f64();
    }
    println!(
        "{:?} depth {}: {} positions, {nodes} nodes, {seconds:.2} s, {:.2} M nodes/s",
        args.search,
        args.depth,
        starts.len().min(args.positions),
        nodes as f64 / seconds.max(1e-9) / 1e6
    );
    Ok(())
}

/// The nodes of one search of `kind` to `depth`.
fn nodes_to<E: Evaluate>(eval: &E, kind: SearchKind, p: u64, o: u64, depth: u32) -> u64 {
    let mut tt = Tt::new(20);
    let mut never = || false;
    let mut search = Search::<E, false>::with_options(eval, &mut tt, &mut never, kind.options());
    let order: Vec<u32> = (0..64).filter(|&s| moves(p, o) >> s & 1 != 0).collect();
    search.iterate(p, o, depth, &order);
    search.nodes
}

/// One move of `kind` (on `patterns` unless it is the heuristic) by iterative
/// deepening until `ms` run out, `None` for a pass.
fn timed_move(kind: SearchKind, patterns: &PatternEval, p: u64, o: u64, ms: u64) -> Option<u32> {
    match kind {
        SearchKind::Heuristic => timed(&Heuristic, kind.options(), p, o, ms),
        _ => timed(patterns, kind.options(), p, o, ms),
    }
}

/// The pattern evaluation of a side: from `path`, or the compiled-in one.
fn side_eval(path: Option<&std::path::Path>) -> Result<PatternEval, String> {
    let bytes = match path {
        Some(path) => std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?,
        None => compiled_bytes().to_vec(),
    };
    PatternEval::from_bytes(&bytes).map_err(|e| format!("weights: {e}"))
}

fn timed<E: Evaluate>(eval: &E, options: Options, p: u64, o: u64, ms: u64) -> Option<u32> {
    let mut tt = Tt::new(20);
    let deadline = Instant::now() + Duration::from_millis(ms);
    let mut stop = || Instant::now() >= deadline;
    let mut search = Search::<E, false>::with_options(eval, &mut tt, &mut stop, options);
    let order: Vec<u32> = (0..64).filter(|&s| moves(p, o) >> s & 1 != 0).collect();
    search.iterate(p, o, 60, &order).best
}

/// Plays out a game from (p, o), `a` moving first when `a_first`; the final
/// disc difference for `a`.
fn play(
    args: &SelfMatchArgs,
    evals: &[PatternEval; 2],
    (mut p, mut o): (u64, u64),
    a_first: bool,
) -> i32 {
    let mut a_to_move = a_first;
    while moves(p, o) != 0 || moves(o, p) != 0 {
        let (side, eval) = if a_to_move {
            (args.a, &evals[0])
        } else {
            (args.b, &evals[1])
        };
        let choice = timed_move(side, eval, p, o, args.ms);
        if let Some(square) = choice.filter(|&s| moves(p, o) >> s & 1 != 0) {
            let flipped = flips(square, p, o);
            (p, o) = (p ^ flipped ^ 1 << square, o ^ flipped);
        }
        (p, o) = (o, p);
        a_to_move = !a_to_move;
    }
    let (x, y) = (p.count_ones() as i32, o.count_ones() as i32);
    let margin = (x - y).signum() * (64 - x - y) + x - y;
    if a_to_move { margin } else { -margin }
}

pub fn run_match(args: &SelfMatchArgs) -> Result<(), String> {
    let starts = openings(&args.openings, args.seed)?;
    let evals = [
        side_eval(args.a_weights.as_deref())?,
        side_eval(args.b_weights.as_deref())?,
    ];
    let jobs: Vec<((u64, u64), bool)> = starts
        .iter()
        .take(args.games.div_ceil(2))
        .flat_map(|&s| [(s, true), (s, false)])
        .collect();
    let next = std::sync::atomic::AtomicUsize::new(0);
    let margins = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..args.threads.max(1) {
            scope.spawn(|| {
                let order = std::sync::atomic::Ordering::Relaxed;
                while let Some(&(start, a_first)) = jobs.get(next.fetch_add(1, order)) {
                    let margin = play(args, &evals, start, a_first);
                    let mut all = margins.lock().unwrap_or_else(|e| e.into_inner());
                    all.push(margin);
                }
            });
        }
    });
    let margins = margins.into_inner().unwrap_or_else(|e| e.into_inner());
    let count = |f: fn(&i32) -> bool| margins.iter().filter(|m| f(m)).count() as u32;
    let discs: i64 = margins.iter().map(|&m| i64::from(m)).sum();
    let label = format!("{:?} vs {:?} at {} ms a move", args.a, args.b, args.ms);
    report(
        &label,
        count(|m| *m > 0),
        count(|m| *m == 0),
        count(|m| *m < 0),
        discs,
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_is_recovered_with_no_spread_and_noise_gives_its_size() {
        let line: Vec<(f64, f64)> = (0..20)
            .map(|x| (f64::from(x), 2.0 * f64::from(x) - 3.0))
            .collect();
        let (a, b, sigma) = regress(&line);
        assert!((a - 2.0).abs() < 1e-9 && (b + 3.0).abs() < 1e-9 && sigma < 1e-9);
        // Residuals of +1 and -1 in turn: a spread of about 1.
        let noisy: Vec<(f64, f64)> = (0..200)
            .map(|x| {
                (
                    f64::from(x),
                    f64::from(x) + if x % 2 == 0 { 1.0 } else { -1.0 },
                )
            })
            .collect();
        let (a, _, sigma) = regress(&noisy);
        assert!(
            (a - 1.0).abs() < 0.01 && (sigma - 1.0).abs() < 0.02,
            "{a} {sigma}"
        );
    }

    #[test]
    fn the_kinds_switch_on_their_parts() {
        assert_eq!(SearchKind::Plain.options(), Options::default());
        assert!(SearchKind::Probcut.options().probcut);
        assert!(!SearchKind::Probcut.options().eval_order);
        let both = SearchKind::Both.options();
        assert!(both.probcut && both.eval_order);
        assert_eq!(SearchKind::Heuristic.options(), Options::default());
    }
}
