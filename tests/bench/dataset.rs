//! `flip-bench dataset`: the evaluation's training set, and `flip-bench
//! heldout`: positions kept apart from it and solved exactly, to measure
//! evaluations against the truth.
//!
//! The training set is every position of the WTHOR games and Logistello's
//! logbook (the held-out year's games excepted), each stored once whichever way
//! up it was played (the eight symmetries give the same value), labelled with
//! the mean final disc difference, for the side to move, of the games that went
//! through it. A record is 17 bytes: the side to move's discs and the other
//! side's (u64 LE each), then the label (i8).

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use clap::Args;
use flipline::engine::symmetry::canonical;
use flipline::engine::{Solver, Tt};
use flipline::game::mix64;

use crate::games::{Labelled, read_logbook, read_wthor, replay, replay_sides};
use crate::relabel::Relabeller;

/// A training record's length.
pub const RECORD: usize = 17;

#[derive(Args, Debug)]
pub struct DatasetArgs {
    /// The real-data folder (`wthor/`, `logistello/`).
    #[arg(long, default_value = "../shared/data/real")]
    data: PathBuf,
    /// The year whose WTHOR games are held out for `heldout`.
    #[arg(long, default_value_t = 2020)]
    holdout_year: u32,
    /// Label positions with at most this many empties with their exact score,
    /// and a game's earlier positions with its first such position's (0: the
    /// games' results only). 14 costs about seven minutes on one thread; each
    /// two more empties cost about five times as much.
    #[arg(long, default_value_t = 14)]
    exact_empties: u32,
    /// More games in the book's format (`flip-bench selfplay` writes them),
    /// added to the real ones.
    #[arg(long)]
    games: Vec<PathBuf>,
    /// At most this many games, spread over the whole set (all when absent):
    /// to measure what a setting costs.
    #[arg(long)]
    max_games: Option<usize>,
    /// Where to write the training set (outside the repository).
    #[arg(long)]
    out: PathBuf,
}

#[derive(Args, Debug)]
pub struct HeldoutArgs {
    /// The real-data folder.
    #[arg(long, default_value = "../shared/data/real")]
    data: PathBuf,
    /// The held-out year (its games are not in the training set).
    #[arg(long, default_value_t = 2020)]
    holdout_year: u32,
    /// Positions to solve.
    #[arg(long, default_value_t = 300)]
    count: usize,
    /// Fewest empties of a position.
    #[arg(long, default_value_t = 20)]
    min_empties: u32,
    /// Most empties of a position.
    #[arg(long, default_value_t = 24)]
    max_empties: u32,
    /// Seed of the choice of positions.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Where to write the OBF lines (outside the repository).
    #[arg(long)]
    out: PathBuf,
}

/// Writes the training set and says how many positions it holds.
pub fn run(args: &DatasetArgs) -> Result<(), String> {
    let mut games = Vec::new();
    for path in wthor_files(&args.data, |year| year != args.holdout_year)? {
        games.extend(read_wthor(&path)?);
    }
    let wthor_games = games.len();
    games.extend(read_logbook(&args.data.join("logistello/logbook.gam.gz"))?);
    for path in &args.games {
        games.extend(read_logbook(path)?);
    }
    if let Some(max) = args.max_games {
        // Every n-th game, so that a sample holds both sources.
        let step = games.len().div_ceil(max.max(1)).max(1);
        games = games.into_iter().step_by(step).collect();
    }
    let start = std::time::Instant::now();
    let mut relabeller = (args.exact_empties > 0).then(|| Relabeller::new(args.exact_empties));
    let mut sums: HashMap<(u64, u64), (i32, u32)> = HashMap::new();
    let (mut finished, mut positions) = (0usize, 0usize);
    for game in &games {
        let mut replayed = replay_sides(game);
        if let Some(relabeller) = relabeller.as_mut() {
            relabeller.relabel(&mut replayed)?;
        }
        finished += usize::from(!replayed.is_empty());
        positions += replayed.len();
        for (Labelled { p, o, label }, _) in replayed {
            let entry = sums.entry(canonical(p, o)).or_default();
            entry.0 += i32::from(label);
            entry.1 += 1;
        }
    }
    let mut records: Vec<_> = sums.into_iter().collect();
    records.sort_unstable_by_key(|&(key, _)| key);
    write_records(&args.out, &records)?;
    println!(
        "{} games ({wthor_games} WTHOR), {finished} replayed to their end, {positions} positions, {} distinct written to {}",
        games.len(),
        records.len(),
        args.out.display()
    );
    if let Some(r) = relabeller {
        let t = &r.totals;
        println!(
            "exact labels at <= {} empties: {} positions solved ({} nodes), {} earlier ones given their game's first exact score; results moved {:.2} discs on average; {:.1} s",
            args.exact_empties,
            t.solved,
            t.nodes,
            t.carried,
            t.moved as f64 / t.solved.max(1) as f64,
            start.elapsed().as_secs_f64()
        );
    }
    Ok(())
}

/// The `.wtb` files of the years `keep` accepts, in name order.
pub fn wthor_files(data: &Path, keep: impl Fn(u32) -> bool) -> Result<Vec<PathBuf>, String> {
    let dir = data.join("wthor");
    let entries = std::fs::read_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|path| wthor_year(path).is_some_and(&keep))
        .collect();
    files.sort();
    Ok(files)
}

/// The year of `WTH_YYYY.wtb`.
fn wthor_year(path: &Path) -> Option<u32> {
    let name = path.file_name()?.to_str()?;
    name.strip_prefix("WTH_")?
        .strip_suffix(".wtb")?
        .parse()
        .ok()
}

/// A position (side to move's discs, other side's) with the sum of its
/// games' labels and how many games went through it.
type Tally = ((u64, u64), (i32, u32));

fn write_records(out: &Path, records: &[Tally]) -> Result<(), String> {
    let file = std::fs::File::create(out).map_err(|e| format!("{}: {e}", out.display()))?;
    let mut w = std::io::BufWriter::new(file);
    for &((p, o), (sum, count)) in records {
        let mean = (f64::from(sum) / f64::from(count.max(1))).round() as i8;
        let mut bytes = [0u8; RECORD];
        bytes[..8].copy_from_slice(&p.to_le_bytes());
        bytes[8..16].copy_from_slice(&o.to_le_bytes());
        bytes[16] = mean as u8;
        w.write_all(&bytes)
            .map_err(|e| format!("{}: {e}", out.display()))?;
    }
    w.flush().map_err(|e| format!("{}: {e}", out.display()))
}

/// Solves held-out positions and writes them as OBF lines with the best move
/// and its exact score.
pub fn run_heldout(args: &HeldoutArgs) -> Result<(), String> {
    let in_range = |l: &Labelled| {
        let empties = 64 - (l.p | l.o).count_ones();
        (args.min_empties..=args.max_empties).contains(&empties)
    };
    // One position a game, chosen by the seed, so that the set spans many games.
    let mut candidates = Vec::new();
    for path in wthor_files(&args.data, |year| year == args.holdout_year)? {
        for game in read_wthor(&path)? {
            let eligible: Vec<Labelled> = replay(&game).into_iter().filter(in_range).collect();
            let pick = mix64(args.seed ^ mix64(candidates.len() as u64 ^ game.len() as u64));
            if let Some(&l) = eligible.get(pick as usize % eligible.len().max(1)) {
                candidates.push(l);
            }
        }
    }
    candidates.sort_by_key(|l| mix64(l.p ^ mix64(l.o ^ args.seed)));
    let mut lines = Vec::new();
    let mut tt = Tt::new(22);
    for l in candidates.iter().take(args.count) {
        let mut never = || false;
        let mut solver = Solver::<false>::new(&mut tt, &mut never);
        let solved = solver.solve(l.p, l.o).ok_or("the solver stopped")?;
        lines.push(obf_line(l.p, l.o, solved.best, solved.score));
    }
    std::fs::write(&args.out, lines.join("\n") + "\n")
        .map_err(|e| format!("{}: {e}", args.out.display()))?;
    println!(
        "{} positions solved, written to {}",
        lines.len(),
        args.out.display()
    );
    Ok(())
}

/// An OBF line: the board (a1 to h8), the side to move, the best move and
/// its exact score. The side to move is written as X: colours do not change
/// a position's value, and the game's colours are not kept.
fn obf_line(p: u64, o: u64, best: Option<u32>, score: i32) -> String {
    let (mine, theirs) = ('X', 'O');
    let board: String = (0..64)
        .map(|sq| match (p >> sq & 1, o >> sq & 1) {
            (1, _) => mine,
            (_, 1) => theirs,
            _ => '-',
        })
        .collect();
    let best = best.map_or_else(String::new, |sq| {
        let (col, row) = (b'A' + (sq % 8) as u8, sq / 8 + 1);
        format!(" {}{row}:{score:+};", col as char)
    });
    format!("{board} {mine};{best}")
}
