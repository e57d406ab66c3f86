//! `flip-bench selfplay`: games of the engine against itself, for the
//! evaluation's training set. Each game starts from a balanced random opening
//! (the engine's `random:N` starts) and is played by `engine::choose` at a
//! level, with depth limits only, so a game is fixed by its seed: every line
//! records the seed it was played from, and the same flags write the same file.
//!
//! Lines are in the format of Logistello's book (`+d3-c3...: +04`, black's
//! moves `+`, the result for black), so `flip-bench dataset --games` reads them
//! as it reads the book.

use std::io::Write;
use std::path::PathBuf;

use clap::Args;
use flipline::engine::{self, random_start::random_start};
use flipline::game::mix64;
use flipline::{Color, Game, Move, Variant};

#[derive(Args, Debug)]
pub struct SelfPlayArgs {
    /// Games to play.
    #[arg(long, default_value_t = 100)]
    games: u64,
    /// The level of both sides (1-10).
    #[arg(long, default_value_t = 6)]
    level: u8,
    /// Random moves before the engine plays (a balanced start).
    #[arg(long, default_value_t = 8)]
    random_plies: usize,
    /// The seed every game's seed is drawn from.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Where to write the games (outside the repository).
    #[arg(long)]
    out: PathBuf,
}

pub fn run(args: &SelfPlayArgs) -> Result<(), String> {
    let file =
        std::fs::File::create(&args.out).map_err(|e| format!("{}: {e}", args.out.display()))?;
    let mut w = std::io::BufWriter::new(file);
    for i in 0..args.games {
        let seed = mix64(args.seed ^ mix64(i));
        let line = play(args, seed)?;
        writeln!(w, "{line}").map_err(|e| format!("{}: {e}", args.out.display()))?;
    }
    w.flush()
        .map_err(|e| format!("{}: {e}", args.out.display()))?;
    println!("{} games written to {}", args.games, args.out.display());
    Ok(())
}

/// One game from `seed`, as a book line with its seed.
fn play(args: &SelfPlayArgs, seed: u64) -> Result<String, String> {
    let mut game = Game::new(Variant::Othello);
    let mut line = String::new();
    let opening = random_start(Variant::Othello, args.random_plies, seed)
        .ok_or("no random start of that length")?;
    for mv in opening {
        apply(&mut game, mv, &mut line)?;
    }
    let mut ply = 0u64;
    while !game.is_over() {
        let mut never = || false;
        let choice = engine::choose(&game, args.level, seed ^ ply, &mut never)
            .ok_or("the engine found no move in a game not over")?;
        apply(&mut game, choice.mv, &mut line)?;
        ply += 1;
    }
    Ok(format!("{line}: {:+03} seed {seed}", black_margin(&game)))
}

/// Plays `mv`, writing it to `line` as the book does (passes are implicit).
fn apply(game: &mut Game, mv: Move, line: &mut String) -> Result<(), String> {
    let sign = if game.to_move() == Color::Black {
        '+'
    } else {
        '-'
    };
    game.apply(mv).map_err(|e| format!("{mv:?}: {e:?}"))?;
    if let Move::Place(square) = mv {
        let x = square.index(8);
        let (col, row) = (b'a' + (x % 8) as u8, x / 8 + 1);
        line.push(sign);
        line.push(col as char);
        line.push_str(&row.to_string());
    }
    Ok(())
}

/// The final disc difference for black, the empties to the winner.
fn black_margin(game: &Game) -> i32 {
    let counts = game.counts();
    let (b, w) = (counts.black as i32, counts.white as i32);
    let empties = 64 - b - w;
    (b - w).signum() * empties + b - w
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::{logbook_line, replay};

    #[test]
    fn a_seed_gives_one_game_that_the_dataset_reads_back() {
        let args = SelfPlayArgs {
            games: 1,
            level: 2,
            random_plies: 6,
            seed: 3,
            out: PathBuf::new(),
        };
        let line = play(&args, 42).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(play(&args, 42).ok(), Some(line.clone()));
        assert_ne!(play(&args, 43).ok(), Some(line.clone()));
        assert!(line.ends_with("seed 42"), "{line}");
        let squares = logbook_line(&line).unwrap_or_default();
        let positions = replay(&squares);
        assert!(positions.len() >= 50, "{} positions", positions.len());
        // The result written is the replayed game's, for black who moved first.
        let written: i32 = line
            .split(':')
            .nth(1)
            .and_then(|r| r.split_whitespace().next())
            .and_then(|r| r.parse().ok())
            .unwrap_or(99);
        assert_eq!(positions.first().map(|l| i32::from(l.label)), Some(written));
    }
}
