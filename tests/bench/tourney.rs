//! `flip-bench tourney`: a round robin between engine levels, to measure that
//! each level is stronger than the one below. Each pairing plays `--games` games
//! from random openings, every opening twice with the colours swapped, so that
//! neither side profits from a lopsided opening or from moving first.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use clap::Args;
use flipline::engine::{self, MAX_LEVEL, MIN_LEVEL};
use flipline::game::mix64;
use flipline::{Color, Game, Move, Variant};

#[derive(Args, Debug)]
pub struct TourneyArgs {
    /// Levels to play: a range (`1-6`) or a list (`2,4,6`).
    #[arg(long, default_value = "1-6", value_parser = parse_levels)]
    levels: LevelList,
    /// Games per pairing (an even number plays every opening with both colours).
    #[arg(long, default_value_t = 100)]
    games: u32,
    /// Random moves that open each game.
    #[arg(long, default_value_t = 6)]
    opening_plies: u32,
    /// The game to play.
    #[arg(long, default_value = "othello")]
    variant: Variant,
    /// Games played at once, one thread each.
    #[arg(long, default_value_t = 2)]
    threads: usize,
    /// Seed of the openings and of the engines' tie-breaks.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Ignore the levels' time budgets (depth limits only: reproducible, and
    /// independent of the machine's load).
    #[arg(long)]
    no_time: bool,
    /// Pair only neighbouring levels (1-2, 2-3, ...) instead of every two.
    #[arg(long)]
    adjacent: bool,
    /// Exit with status 1 when a higher level did not win more than half
    /// of its games against a lower one (a check for scripts; a close
    /// result is otherwise just a result).
    #[arg(long)]
    require_stronger: bool,
}

/// The levels of a tourney, in increasing order.
#[derive(Clone, Debug)]
pub struct LevelList(Vec<u8>);

fn parse_levels(text: &str) -> Result<LevelList, String> {
    let bad = || format!("bad levels '{text}' (expected e.g. 1-6 or 2,4,6 within 1..10)");
    let mut levels: Vec<u8> = match text.split_once('-') {
        Some((a, b)) => {
            let (a, b): (u8, u8) = (
                a.trim().parse().map_err(|_| bad())?,
                b.trim().parse().map_err(|_| bad())?,
            );
            (a..=b).collect()
        }
        None => text
            .split(',')
            .map(|l| l.trim().parse::<u8>().map_err(|_| bad()))
            .collect::<Result<_, _>>()?,
    };
    levels.sort_unstable();
    levels.dedup();
    if levels.len() < 2 || levels.iter().any(|l| !(MIN_LEVEL..=MAX_LEVEL).contains(l)) {
        return Err(bad());
    }
    Ok(LevelList(levels))
}

/// One game to play: the two levels (the first plays black when `swap` is
/// false) and the opening's number.
#[derive(Clone, Copy)]
struct Job {
    pairing: (u8, u8),
    opening: u64,
    swap: bool,
}

/// Results of a pairing from the stronger (second) level's side.
#[derive(Clone, Copy, Default)]
struct Tally {
    wins: u32,
    draws: u32,
    losses: u32,
    plies: u64,
    seconds: f64,
}

impl Tally {
    fn games(&self) -> u32 {
        self.wins + self.draws + self.losses
    }

    /// Points per game for the stronger level, in percent (a draw is half).
    fn percent(&self) -> f64 {
        let points = f64::from(self.wins) + f64::from(self.draws) / 2.0;
        100.0 * points / f64::from(self.games().max(1))
    }
}

/// Plays every pairing and prints the table, and which higher levels did not
/// win more than half against a lower one: an error with
/// `--require-stronger`, a note otherwise.
pub fn run(args: &TourneyArgs) -> Result<(), String> {
    let jobs = jobs(args);
    let tallies = Mutex::new(BTreeMap::<(u8, u8), Tally>::new());
    let next = AtomicUsize::new(0);
    let start = Instant::now();
    std::thread::scope(|scope| {
        for _ in 0..args.threads.max(1) {
            scope.spawn(|| {
                while let Some(job) = jobs.get(next.fetch_add(1, Ordering::Relaxed)) {
                    let game_start = Instant::now();
                    let (winner, plies) = play(args, job);
                    let seconds = game_start.elapsed().as_secs_f64();
                    let mut tallies = tallies.lock().unwrap_or_else(|e| e.into_inner());
                    let tally = tallies.entry(job.pairing).or_default();
                    record(tally, job, winner, plies, seconds);
                    if tally.games() == args.games {
                        let (low, high) = job.pairing;
                        eprintln!(
                            "level {high} vs {low}: {} ({:.0} s so far)",
                            summary(tally),
                            start.elapsed().as_secs_f64()
                        );
                    }
                }
            });
        }
    });
    let tallies = tallies.into_inner().unwrap_or_else(|e| e.into_inner());
    print_table(args, &tallies);
    let weaker: Vec<String> = tallies
        .iter()
        .filter(|(_, t)| t.percent() <= 50.0)
        .map(|((low, high), _)| format!("{high} vs {low}"))
        .collect();
    if weaker.is_empty() {
        return Ok(());
    }
    let message = format!("the higher level did not win: {}", weaker.join(", "));
    if args.require_stronger {
        return Err(message);
    }
    eprintln!("note: {message}");
    Ok(())
}

/// Every game of the tourney, pairings in order, the colours alternating.
fn jobs(args: &TourneyArgs) -> Vec<Job> {
    let levels = &args.levels.0;
    let mut pairings = Vec::new();
    for (i, &low) in levels.iter().enumerate() {
        for &high in &levels[i + 1..] {
            if !args.adjacent || levels.get(i + 1) == Some(&high) {
                pairings.push((low, high));
            }
        }
    }
    pairings
        .into_iter()
        .flat_map(|pairing| {
            (0..args.games).map(move |g| Job {
                pairing,
                opening: u64::from(g / 2),
                swap: g % 2 == 1,
            })
        })
        .collect()
}

fn record(tally: &mut Tally, job: &Job, winner: Option<Color>, plies: u64, seconds: f64) {
    // The stronger level is white unless the colours are swapped.
    let strong = if job.swap { Color::Black } else { Color::White };
    match winner {
        None => tally.draws += 1,
        Some(color) if color == strong => tally.wins += 1,
        Some(_) => tally.losses += 1,
    }
    tally.plies += plies;
    tally.seconds += seconds;
}

/// Plays one game; returns the winner and the plies played.
fn play(args: &TourneyArgs, job: &Job) -> (Option<Color>, u64) {
    let mut game = opening(
        args.variant,
        args.opening_plies,
        mix64(args.seed ^ job.opening),
    );
    let (black, white) = if job.swap {
        (job.pairing.1, job.pairing.0)
    } else {
        job.pairing
    };
    let mut plies = 0u64;
    while !game.is_over() {
        let level = if game.to_move() == Color::Black {
            black
        } else {
            white
        };
        let seed = mix64(args.seed.wrapping_add(plies) ^ job.opening << 8);
        let deadline = Instant::now() + engine::level(level).time_budget();
        let mut stop = || !args.no_time && Instant::now() >= deadline;
        let mv = engine::choose(&game, level, seed, &mut stop).map_or(Move::Pass, |c| c.mv);
        if game.apply(mv).is_err() {
            break;
        }
        plies += 1;
    }
    (game.outcome().and_then(|o| o.winner), plies)
}

/// A random opening of `plies` moves that leaves the game going.
fn opening(variant: Variant, plies: u32, seed: u64) -> Game {
    let mut state = seed;
    'retry: loop {
        let mut game = Game::new(variant);
        for _ in 0..plies {
            let moves: Vec<_> = game.legal_moves().iter().collect();
            state = mix64(state.wrapping_add(0x9E37_79B9_7F4A_7C15));
            let mv = match moves.len() {
                0 => Move::Pass,
                n => Move::Place(moves[(state % n as u64) as usize]),
            };
            if game.apply(mv).is_err() || game.is_over() {
                continue 'retry;
            }
        }
        return game;
    }
}

fn summary(t: &Tally) -> String {
    format!(
        "+{} ={} -{} ({:.1}%)",
        t.wins,
        t.draws,
        t.losses,
        t.percent()
    )
}

fn print_table(args: &TourneyArgs, tallies: &BTreeMap<(u8, u8), Tally>) {
    println!(
        "{} games a pairing, {}-ply random openings played with both colours, {}",
        args.games,
        args.opening_plies,
        if args.no_time {
            "depth limits only"
        } else {
            "depth and time budgets"
        }
    );
    println!("| higher | lower | wins | draws | losses | score | s/game |");
    println!("|---|---|---|---|---|---|---|");
    for (&(low, high), t) in tallies.iter().rev() {
        println!(
            "| {high} | {low} | {} | {} | {} | {:.1}% | {:.2} |",
            t.wins,
            t.draws,
            t.losses,
            t.percent(),
            t.seconds / f64::from(t.games().max(1))
        );
    }
}
