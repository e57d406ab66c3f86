//! `flip solve`: exact solves of every position of an OBF file (the FFO endgame
//! suite's format), with per-position figures and a check against the scores the
//! file gives. The benchmark of the endgame solver.
//!
//! With `--threads N`, N positions are solved at once, each on one thread with a
//! table of its own; every figure printed is still one position on one thread.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::Instant;

use clap::Args;
use flipline::engine::{self, Tt};
use flipline::obf::{self, ObfPosition};
use flipline::{Move, Square};

#[derive(Args, Debug)]
pub struct SolveArgs {
    /// The OBF file: one position a line, `%` comments.
    file: PathBuf,
    /// Positions solved at once, one thread each.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=256))]
    threads: u16,
    /// Transposition table per thread, in megabytes.
    #[arg(long, default_value_t = 256)]
    hash_mb: usize,
    /// The number of the file's first position (default: A for `fforum-A-B.obf`,
    /// else 1).
    #[arg(long)]
    first: Option<usize>,
    /// The most empty squares a position may have. An exact solve takes
    /// about three times as long for each empty square more: the FFO
    /// suite's hardest (34) take minutes, the start of a game (60) would
    /// take longer than anyone waits.
    #[arg(long, default_value_t = DEFAULT_MAX_EMPTIES)]
    max_empties: u32,
}

/// The most empties solved without asking: the FFO suite's positions have
/// at most 34.
const DEFAULT_MAX_EMPTIES: u32 = 36;

/// One position to solve: its number and what the file says.
struct Task {
    number: usize,
    position: ObfPosition,
}

/// One position solved.
struct Solved {
    best: Option<u32>,
    score: i32,
    nodes: u64,
    seconds: f64,
}

/// Solves the file; an error when it cannot be read, a line is malformed, or a
/// computed score disagrees with the file.
pub fn run(args: &SolveArgs) -> Result<(), String> {
    let tasks = read_tasks(&args.file, args.first)?;
    check_empties(&tasks, args.max_empties)?;
    crate::say!(
        "{:>4} {:>7} {:>5} {:>6} {:>14} {:>9} {:>14}",
        "#",
        "empties",
        "move",
        "score",
        "nodes",
        "seconds",
        "nodes/s"
    );
    let mut printer = Printer::default();
    solve_all(&tasks, args, |index, solved| {
        printer.add(&tasks, index, solved)
    });
    printer.finish()
}

/// Reads and checks every line before anything is solved.
fn read_tasks(path: &Path, first: Option<usize>) -> Result<Vec<Task>, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let mut number = first.unwrap_or_else(|| first_number(path));
    let mut tasks = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let parsed =
            obf::parse_line(line).map_err(|e| format!("{}:{}: {e}", path.display(), index + 1))?;
        if let Some(position) = parsed {
            if position.game.board8().is_none() {
                return Err(format!(
                    "{}:{}: not an 8x8 position",
                    path.display(),
                    index + 1
                ));
            }
            tasks.push(Task { number, position });
            number += 1;
        }
    }
    if tasks.is_empty() {
        return Err(format!("{}: no positions", path.display()));
    }
    Ok(tasks)
}

/// Refuses, before any work, a file with a position past `max` empties.
fn check_empties(tasks: &[Task], max: u32) -> Result<(), String> {
    match tasks.iter().find(|t| empties(t) > max) {
        Some(task) => Err(format!(
            "position {} has {} empty squares: an exact solve past {max} could run for              days (--max-empties {} to try anyway)",
            task.number,
            empties(task),
            empties(task)
        )),
        None => Ok(()),
    }
}

/// The empty squares of a task's position.
fn empties(task: &Task) -> u32 {
    let counts = task.position.game.counts();
    64u32.saturating_sub(counts.black + counts.white)
}

/// The first position's number from an FFO file name (`fforum-40-59.obf` → 40).
fn first_number(path: &Path) -> usize {
    let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("");
    stem.strip_prefix("fforum-")
        .and_then(|rest| rest.split('-').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(1)
}

/// Solves every task on `args.threads` threads, handing each result (by task
/// index) to `report` on the calling thread as it arrives.
fn solve_all(tasks: &[Task], args: &SolveArgs, mut report: impl FnMut(usize, Solved)) {
    let next = AtomicUsize::new(0);
    let (tx, rx) = mpsc::channel();
    std::thread::scope(|scope| {
        for _ in 0..args.threads {
            let tx = tx.clone();
            let next = &next;
            scope.spawn(move || {
                let mut tt = Tt::with_megabytes(args.hash_mb);
                loop {
                    let index = next.fetch_add(1, Ordering::Relaxed);
                    let Some(task) = tasks.get(index) else { break };
                    tt.clear();
                    if tx.send((index, solve_one(task, &mut tt))).is_err() {
                        break;
                    }
                }
            });
        }
        drop(tx);
        for (index, solved) in rx {
            report(index, solved);
        }
    });
}

fn solve_one(task: &Task, tt: &mut Tt) -> Solved {
    let start = Instant::now();
    let (solution, nodes) = engine::solve(&task.position.game, tt, &mut || false).unwrap_or((
        engine::Solution {
            best: None,
            score: 0,
        },
        0,
    ));
    Solved {
        best: solution.best,
        score: solution.score,
        nodes,
        seconds: start.elapsed().as_secs_f64(),
    }
}

/// Prints results in file order as they arrive, and the totals.
#[derive(Default)]
struct Printer {
    waiting: BTreeMap<usize, Solved>,
    printed: usize,
    nodes: u64,
    seconds: f64,
    disagreements: Vec<usize>,
}

impl Printer {
    fn add(&mut self, tasks: &[Task], index: usize, solved: Solved) {
        self.waiting.insert(index, solved);
        while let Some(solved) = self.waiting.remove(&self.printed) {
            if let Some(task) = tasks.get(self.printed) {
                self.print(task, &solved);
            }
            self.printed += 1;
        }
    }

    fn print(&mut self, task: &Task, solved: &Solved) {
        let game = &task.position.game;
        let empties = empties(task);
        let mv = solved
            .best
            .map_or(Move::Pass, |x| Move::Place(Square::from_index(x, 8)));
        let verdict = verdict(&task.position, mv, solved.score);
        // A finished game has no move at all; a blocked side has its pass.
        let shown = if game.is_over() {
            "--".to_string()
        } else {
            mv.to_string()
        };
        if verdict.is_some() {
            self.disagreements.push(task.number);
        }
        crate::say!(
            "{:>4} {:>7} {:>5} {:>+6} {:>14} {:>9.3} {:>14.0} {}",
            task.number,
            empties,
            shown,
            solved.score,
            solved.nodes,
            solved.seconds,
            rate(solved.nodes, solved.seconds),
            verdict.unwrap_or_default()
        );
        self.nodes += solved.nodes;
        self.seconds += solved.seconds;
    }

    fn finish(self) -> Result<(), String> {
        crate::say!(
            "total: {} positions, {} nodes, {:.3} s, {:.0} nodes/s",
            self.printed,
            self.nodes,
            self.seconds,
            rate(self.nodes, self.seconds)
        );
        if self.disagreements.is_empty() {
            return Ok(());
        }
        let numbers: Vec<String> = self.disagreements.iter().map(ToString::to_string).collect();
        Err(format!(
            "positions {} disagree with the file",
            numbers.join(", ")
        ))
    }
}

/// What is wrong with a result, by the file's scores: a different best score, or
/// a move the file scores lower than the solver does.
fn verdict(position: &ObfPosition, mv: Move, score: i32) -> Option<String> {
    let best = position.best_score()?;
    if score != best {
        return Some(format!("WRONG: the file's best score is {best:+}"));
    }
    match position.score_of(mv) {
        Some(listed) if listed != score => Some(format!("WRONG: the file scores {mv} {listed:+}")),
        _ => None,
    }
}

fn rate(nodes: u64, seconds: f64) -> f64 {
    if seconds > 0.0 {
        nodes as f64 / seconds
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tasks_of(text: &str) -> Vec<Task> {
        let path = std::env::temp_dir().join(format!("flip-solve-{}.obf", std::process::id()));
        std::fs::write(&path, text).unwrap();
        let tasks = read_tasks(&path, None).unwrap();
        let _ = std::fs::remove_file(&path);
        tasks
    }

    #[test]
    fn a_position_past_the_limit_is_refused_before_any_work() {
        let start = "---------------------------XO------OX--------------------------- X;";
        let tasks = tasks_of(&format!("{start}\n"));
        let refused = check_empties(&tasks, DEFAULT_MAX_EMPTIES).unwrap_err();
        assert!(refused.contains("60 empty squares"), "{refused}");
        assert!(refused.contains("--max-empties 60"), "{refused}");
        assert!(check_empties(&tasks, 60).is_ok(), "raised by the flag");
    }
}
