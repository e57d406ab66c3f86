//! `flip`: flipline's line client and engine tools. Flags are parsed here; each
//! subcommand lives in a module of its own.

mod perft_cmd;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// flipline's client: play Othello and its cousins, and measure the engine.
#[derive(Parser, Debug)]
#[command(name = "flip", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Count the leaves of the game tree DEPTH plies deep (passes are plies).
    Perft(perft_cmd::PerftArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Perft(args) => perft_cmd::run(&args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("flip: {message}");
            ExitCode::FAILURE
        }
    }
}
