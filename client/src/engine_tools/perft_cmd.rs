//! `flip perft`: leaf counts with their speed, the benchmark of the move generator.

use std::time::Instant;

use clap::Args;
use flipline::notation::parse_board;
use flipline::{Game, Variant};

#[derive(Args, Debug)]
pub struct PerftArgs {
    /// Plies to search.
    depth: u32,
    /// The game whose rules apply.
    #[arg(long, default_value = "othello")]
    variant: Variant,
    /// Start from this position instead: `"<cells> <X|O>"` (OBF; a leading
    /// `-` is an empty square, not a flag).
    #[arg(long, allow_hyphen_values = true)]
    board: Option<String>,
}

/// Prints the count, the seconds it took and the leaves per second.
pub fn run(args: &PerftArgs) -> Result<(), String> {
    let game = match &args.board {
        Some(text) => parse_board(text, args.variant).map_err(|e| e.to_string())?,
        None => Game::new(args.variant),
    };
    let start = Instant::now();
    let leaves = flipline::perft::perft(&game, args.depth);
    let seconds = start.elapsed().as_secs_f64();
    let rate = if seconds > 0.0 {
        leaves as f64 / seconds
    } else {
        0.0
    };
    crate::say!("perft {} {}: {leaves} leaves", args.variant, args.depth);
    crate::say!("seconds {seconds:.3}");
    crate::say!("leaves/s {rate:.0}");
    Ok(())
}
