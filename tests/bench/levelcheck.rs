//! `flip-bench levelcheck`: a level of the engine, as `flip` and the bots call
//! it (`engine::choose`), against the truth on exactly solved positions: how
//! far its score lies from the exact one, and how often its move is a best
//! move (one whose exact value is the position's).

use std::path::PathBuf;
use std::time::Instant;

use clap::Args;
use flipline::Move;
use flipline::board8::flips;
use flipline::engine::{self, Choice, Solver, Tt, WIN_FACTOR};

#[derive(Args, Debug)]
pub struct LevelCheckArgs {
    /// OBF lines with exact scores and a best move (`flip-bench heldout`).
    #[arg(long)]
    set: PathBuf,
    /// The engine level (1-10).
    #[arg(long, default_value_t = 10)]
    level: u8,
}

/// The totals over positions with the same number of empties.
#[derive(Default)]
struct Tally {
    positions: u32,
    error: f64,
    best: u32,
    exact: u32,
}

impl Tally {
    fn add(&mut self, error: f64, best: bool, exact: bool) {
        self.positions += 1;
        self.error += error;
        self.best += u32::from(best);
        self.exact += u32::from(exact);
    }

    fn line(&self, label: &str) -> String {
        let n = f64::from(self.positions.max(1));
        format!(
            "{label}: {} positions, mean absolute error {:.2} discs, best move {:.1} % ({} of them solved exactly by the level)",
            self.positions,
            self.error / n,
            100.0 * f64::from(self.best) / n,
            self.exact
        )
    }
}

pub fn run(args: &LevelCheckArgs) -> Result<(), String> {
    let text =
        std::fs::read_to_string(&args.set).map_err(|e| format!("{}: {e}", args.set.display()))?;
    let mut by_empties = std::collections::BTreeMap::<u32, Tally>::new();
    let mut all = Tally::default();
    let start = Instant::now();
    for line in text.lines() {
        let Some(pos) = flipline::obf::parse_line(line).map_err(|e| e.message)? else {
            continue;
        };
        let (Some(truth), Some((p, o))) = (pos.best_score(), pos.game.board8()) else {
            continue;
        };
        let mut never = || false;
        let choice = engine::choose(&pos.game, args.level, 1, &mut never)
            .ok_or("a position of the set is a finished game")?;
        let best = pos.score_of(choice.mv) == Some(truth) || value_is(p, o, choice.mv, truth)?;
        let error = (score_in_discs(&choice) - f64::from(truth)).abs();
        by_empties
            .entry(64 - (p | o).count_ones())
            .or_default()
            .add(error, best, choice.exact);
        all.add(error, best, choice.exact);
    }
    for (empties, tally) in &by_empties {
        println!("{}", tally.line(&format!("{empties} empties")));
    }
    println!("{}", all.line(&format!("level {}, all", args.level)));
    eprintln!("{:.1} s", start.elapsed().as_secs_f64());
    Ok(())
}

/// A choice's score in discs for the side to move.
fn score_in_discs(choice: &Choice) -> f64 {
    let per_disc = if choice.exact { WIN_FACTOR } else { 100 };
    f64::from(choice.score) / f64::from(per_disc)
}

/// Whether `mv` reaches `truth`, the position's exact value: a null-window
/// solve of the position after it (its value can only be lower).
fn value_is(p: u64, o: u64, mv: Move, truth: i32) -> Result<bool, String> {
    let Move::Place(square) = mv else {
        return Ok(false);
    };
    let x = square.index(8);
    let flipped = flips(x, p, o);
    if flipped == 0 {
        return Err(format!("the engine chose an illegal move, square {x}"));
    }
    let (np, no) = (o ^ flipped, p ^ flipped ^ 1 << x);
    let mut tt = Tt::new(20);
    let mut never = || false;
    let mut solver = Solver::<false>::new(&mut tt, &mut never);
    // The child's value for its side to move is at least -truth; the move is a
    // best one when it is not above it.
    let child = solver
        .solve_window(np, no, -truth, -truth + 1)
        .ok_or("the solver stopped")?;
    Ok(child.score <= -truth)
}
