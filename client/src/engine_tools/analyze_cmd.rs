//! `flip analyze`: every legal move of a position with its score, best first, as
//! the engine sees it at a level (the move advisor's view, the same as `HINT`).

use std::time::{Duration, Instant};

use clap::Args;
use flipline::Variant;
use flipline::engine::{self, Choice};

use crate::engine_tools::engine_score::{in_hundredths, score_text, units_note};
use flipline::notation::parse_board;

#[derive(Args, Debug)]
pub struct AnalyzeArgs {
    /// The position: `"<cells> <X|O>"` (OBF cells, row by row from a1, `X`
    /// or `*` black; a leading `-` is an empty square, not a flag; an OBF
    /// line's `;` and what follows it are ignored).
    #[arg(allow_hyphen_values = true, required_unless_present = "game")]
    board: Option<String>,
    /// Instead of a position: every move of the game in FILE (a transcript
    /// line, a move string or GGF) with what it cost against the best.
    #[arg(long, value_name = "FILE", conflicts_with = "board")]
    game: Option<std::path::PathBuf>,
    /// Engine level, 1 to 10.
    #[arg(long, default_value_t = 6, value_parser = clap::value_parser!(u8).range(1..=10))]
    level: u8,
    /// The game whose rules apply.
    #[arg(long, default_value = "othello")]
    variant: Variant,
    /// Longest the analysis may think, in milliseconds (default: the level's
    /// time budget).
    #[arg(long)]
    time_ms: Option<u64>,
}

/// Prints one line a move: the move, its score, how it was found.
pub fn run(args: &AnalyzeArgs) -> Result<(), String> {
    let effort = crate::engine_tools::game_analysis::Effort {
        level: args.level,
        time_ms: args.time_ms,
    };
    let board = match (&args.board, &args.game) {
        (_, Some(path)) => return crate::engine_tools::game_analysis::run(path, &effort),
        (Some(board), None) => board.split(';').next().unwrap_or_default(),
        (None, None) => return Err("give a position or --game FILE".to_string()),
    };
    let game = parse_board(board, args.variant).map_err(|e| e.to_string())?;
    if game.is_over() {
        return Err("the game is over: no moves to analyze".to_string());
    }
    let budget = args.time_ms.map_or_else(
        || engine::level(args.level).time_budget(),
        Duration::from_millis,
    );
    let start = Instant::now();
    let deadline = start + budget;
    let ranked = engine::rank_moves(&game, args.level, &mut || Instant::now() >= deadline);
    let seconds = start.elapsed().as_secs_f64();
    let nodes: u64 = ranked.iter().map(|c| c.nodes).max().unwrap_or(0);
    crate::say!(
        "{} to move, level {}: {} moves, {nodes} nodes, {seconds:.3} s",
        game.to_move(),
        args.level,
        ranked.len()
    );
    let hundredths = in_hundredths(args.variant);
    crate::say!("{}", units_note(args.variant));
    for choice in &ranked {
        let score = score_text(choice.score, choice.exact, hundredths);
        crate::say!("{:>5} {:>8}  {}", choice.mv.to_string(), score, how(choice));
    }
    Ok(())
}

fn how(choice: &Choice) -> String {
    if choice.exact {
        "exact".to_string()
    } else {
        format!("depth {}", choice.depth)
    }
}
