//! `flip-bench`: flipline's benchmark tools, kept out of the client a player
//! installs (which builds only what playing needs). `load` holds many games
//! against a daemon, `baseline` is the bare relay it is compared with, and
//! `tourney` plays engine levels against each other. Flags are parsed here;
//! each tool lives in a module of its own.

mod dataset;
mod evalcheck;
mod far_moves;
mod games;
mod levelcheck;
mod load;
mod relabel;
mod searchlabel;
mod selective;
mod selfplay;
mod tourney;
mod train;
mod watch;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// flipline's benchmark tools: measure a daemon under load, or the engine's
/// levels against each other.
#[derive(Parser, Debug)]
#[command(name = "flip-bench", version)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Hold many games against a server and measure moves/s and latency.
    Load(load::LoadArgs),
    /// How much later a spectator on another node of a cluster sees a move.
    Watch(watch::WatchArgs),
    /// How much longer a move takes from another node of a cluster.
    Farmove(watch::WatchArgs),
    /// The bare line-relay baseline that `load` is compared against.
    Baseline(load::BaselineArgs),
    /// Play a round robin between engine levels.
    Tourney(tourney::TourneyArgs),
    /// Write the evaluation's training set from WTHOR and Logistello's book.
    Dataset(dataset::DatasetArgs),
    /// Solve held-out positions exactly, for accuracy measurements.
    Heldout(dataset::HeldoutArgs),
    /// Games of the engine against itself from recorded seeds, for `dataset`.
    Selfplay(selfplay::SelfPlayArgs),
    /// Fit the pattern evaluation's weights to a training set.
    Train(train::TrainArgs),
    /// Blend a training set's labels above the exact limit with searches' scores.
    Searchlabel(searchlabel::SearchLabelArgs),
    /// The evaluations' mean absolute error on exactly solved positions.
    Accuracy(evalcheck::AccuracyArgs),
    /// A level's score error and best-move rate on exactly solved positions.
    Levelcheck(levelcheck::LevelCheckArgs),
    /// Games between the pattern evaluation and the heuristic at equal depth.
    Evalmatch(evalcheck::MatchArgs),
    /// Fit ProbCut's error model (deep scores against shallow ones).
    Probcut(selective::FitArgs),
    /// Nodes and time of the midgame search to a fixed depth.
    Searchnodes(selective::NodesArgs),
    /// Games between two forms of the search at equal time per move.
    Selfmatch(selective::SelfMatchArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Load(args) => load::run(&args),
        Command::Watch(args) => watch::run(&args),
        Command::Farmove(args) => far_moves::run(&args),
        Command::Baseline(args) => load::run_baseline(&args),
        Command::Tourney(args) => tourney::run(&args),
        Command::Dataset(args) => dataset::run(&args),
        Command::Heldout(args) => dataset::run_heldout(&args),
        Command::Selfplay(args) => selfplay::run(&args),
        Command::Train(args) => train::run(&args),
        Command::Searchlabel(args) => searchlabel::run(&args),
        Command::Accuracy(args) => evalcheck::run_accuracy(&args),
        Command::Levelcheck(args) => levelcheck::run(&args),
        Command::Evalmatch(args) => evalcheck::run_match(&args),
        Command::Probcut(args) => selective::run_fit(&args),
        Command::Searchnodes(args) => selective::run_nodes(&args),
        Command::Selfmatch(args) => selective::run_match(&args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("flip-bench: {message}");
            ExitCode::FAILURE
        }
    }
}
