//! `flip`: flipline's line client and engine tools. Flags are parsed here; each
//! subcommand lives in a module of its own.

mod archive;
mod bot;
mod engine_tools;
mod manual;
mod out;
mod paths;
mod play;
mod untrusted;

use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};

use crate::play::reader::{Failure, PlayOptions};

/// flipline's client: play Othello and its cousins on a flipd server or offline,
/// run the engine as a bot, measure the engine.
#[derive(Parser, Debug)]
#[command(name = "flip", version)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    play: PlayArgs,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Play on a server (the default when no subcommand is given).
    Play(PlayArgs),
    /// Run the built-in engine, or another program's (--engine), as a network bot.
    Bot(bot::BotArgs),
    /// Answer NBoard's or GTP's protocol on standard input with the built-in engine.
    Engine(engine_tools::engine_cmd::EngineArgs),
    /// Count the leaves of the game tree DEPTH plies deep (passes are plies).
    Perft(engine_tools::perft_cmd::PerftArgs),
    /// Solve every position of an OBF file exactly (the FFO endgame benchmark).
    Solve(engine_tools::solve_cmd::SolveArgs),
    /// List the legal moves of a position with the engine's scores, best first,
    /// or what each move of a game cost.
    Analyze(engine_tools::analyze_cmd::AnalyzeArgs),
    /// Write the finished games of a store file as GGF, transcript lines or WTHOR.
    Export(archive::export::ExportArgs),
    /// Add the finished games of GGF or WTHOR files to a store file.
    Import(archive::import::ImportArgs),
    /// Copy a store while flipd runs on it (an online backup), checked.
    Backup(archive::backup_cmd::BackupArgs),
    /// Print a completion script for SHELL.
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
    /// Print the manual page (roff; dist/flip.1 is this output).
    Manual,
}

#[derive(Args, Debug, Clone)]
struct PlayArgs {
    // `--help` shows this text, where `[:PORT]` is the usual notation for
    // what may be left out, not a link.
    #[allow(rustdoc::broken_intra_doc_links)]
    /// The daemon's address, HOST or HOST:PORT (default: the one in
    /// config/default.ron; the port, 7341), or tls://HOST[:PORT] for its TLS
    /// port (the port, 7342; the certificate verified, the host name
    /// checked); several, separated by commas (a cluster's nodes), are tried
    /// in turn, and so by a reconnect.
    #[arg(long, value_parser = play::link::server_addresses)]
    server: Option<String>,
    /// A PEM file of the certificate authorities to verify a TLS port's
    /// certificate with, instead of the system's. Else FLIP_CA, if set.
    #[arg(long, value_name = "FILE")]
    ca: Option<std::path::PathBuf>,
    /// Log in with this name at once (with --local, the default is $USER,
    /// else $LOGNAME, else "me").
    #[arg(long)]
    name: Option<String>,
    /// The password for --name's login: the file's first line (a file only
    /// its owner may read). Else FLIP_PASSWORD, if set.
    #[arg(long, value_name = "FILE", requires = "name")]
    password_file: Option<std::path::PathBuf>,
    /// Play offline against an embedded daemon (bot or hotseat games).
    #[arg(long, conflicts_with = "server")]
    local: bool,
    /// Show server lines as they are instead of boards and sentences.
    #[arg(long)]
    raw: bool,
    /// When the connection drops, reconnect and take the seat back: at a
    /// terminal the default (for as long as you wait), in a script for a
    /// minute.
    #[arg(long, conflicts_with = "no_reconnect")]
    reconnect: bool,
    /// When the connection drops, end (status 2) rather than reconnect.
    #[arg(long)]
    no_reconnect: bool,
}

/// The exit status of a command line flip cannot read (sysexits' EX_USAGE),
/// apart from 2, which says the connection was refused or lost.
const USAGE: u8 = 64;

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() {
                ExitCode::from(USAGE)
            } else {
                ExitCode::SUCCESS
            };
        }
    };
    let result = match cli.command {
        Some(Command::Perft(args)) => engine_tools::perft_cmd::run(&args).map_err(Failure::failed),
        Some(Command::Solve(args)) => engine_tools::solve_cmd::run(&args).map_err(Failure::failed),
        Some(Command::Analyze(args)) => {
            engine_tools::analyze_cmd::run(&args).map_err(Failure::failed)
        }
        Some(Command::Bot(args)) => bot::run(&args).map_err(Failure::failed),
        Some(Command::Engine(args)) => {
            engine_tools::engine_cmd::run(&args).map_err(Failure::failed)
        }
        Some(Command::Export(args)) => archive::export::run(&args).map_err(Failure::failed),
        Some(Command::Import(args)) => archive::import::run(&args).map_err(Failure::failed),
        Some(Command::Backup(args)) => archive::backup_cmd::run(&args).map_err(Failure::failed),
        Some(Command::Completions { shell }) => {
            print_made(|out| {
                let mut command = <Cli as clap::CommandFactory>::command();
                clap_complete::generate(shell, &mut command, "flip", out);
                Ok(())
            });
            Ok(())
        }
        Some(Command::Manual) => {
            let command = <Cli as clap::CommandFactory>::command();
            print_made(|out| {
                out.extend(manual::page(command)?);
                Ok(())
            });
            Ok(())
        }
        Some(Command::Play(args)) => run_play(&args),
        None => run_play(&cli.play),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => {
            eprintln!("flip: {}", failure.message);
            ExitCode::from(u8::try_from(failure.status).unwrap_or(1))
        }
    }
}

/// Writes what `make` writes, whole, to standard output (quietly if the
/// reader has gone).
fn print_made(make: impl FnOnce(&mut Vec<u8>) -> std::io::Result<()>) {
    let mut text = Vec::new();
    match make(&mut text) {
        Ok(()) => out::write_text(&String::from_utf8_lossy(&text)),
        Err(e) => eprintln!("flip: {e}"),
    }
}

fn run_play(args: &PlayArgs) -> Result<(), Failure> {
    // First, before any thread starts: every thread inherits the signal mask.
    play::terminal::handle_signals_and_panics();
    if args.local {
        return run_local(args);
    }
    let server = (args.server.clone()).unwrap_or_else(flipd::Config::default_server);
    let password = match &args.name {
        Some(_) => play::password::given(args.password_file.as_deref()).map_err(Failure::failed)?,
        None => None,
    };
    let options = PlayOptions {
        secrets_key: Some(server.clone()),
        server,
        ca: play::tls::ca_file(args.ca.as_deref()),
        name: args.name.clone(),
        password,
        raw: args.raw,
        reconnect: match (args.reconnect, args.no_reconnect) {
            (true, _) => Some(true),
            (_, true) => Some(false),
            _ => None,
        },
        on_update: None,
    };
    play::run(&options, Vec::new())
}

/// `flip --local` (see local.rs).
fn run_local(args: &PlayArgs) -> Result<(), Failure> {
    let name = args.name.clone().unwrap_or_else(local_name);
    play::local::run(name, args.raw)
}

/// The login name for local play: the user's name (`$USER`, else
/// `$LOGNAME`) if it is a valid one, else [`LOCAL_NAME`].
fn local_name() -> String {
    local_name_from(&[std::env::var("USER").ok(), std::env::var("LOGNAME").ok()])
}

/// The name local play takes where the environment gives none that is valid
/// (containers, cron, scripts): a name, not a protocol word.
const LOCAL_NAME: &str = "me";

/// The first of `candidates` that is a valid name, else [`LOCAL_NAME`].
fn local_name_from(candidates: &[Option<String>]) -> String {
    (candidates.iter().flatten())
        .find(|n| flipline::protocol::valid_name(n))
        .cloned()
        .unwrap_or_else(|| LOCAL_NAME.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_play_takes_a_valid_name_from_the_environment_or_its_own() {
        assert!(
            flipline::protocol::valid_name(LOCAL_NAME),
            "the fallback logs in"
        );
        let some = |n: &str| Some(n.to_string());
        assert_eq!(local_name_from(&[some("ann"), some("bob")]), "ann");
        assert_eq!(local_name_from(&[None, some("bob")]), "bob", "$LOGNAME");
        assert_eq!(
            local_name_from(&[some("player"), None]),
            LOCAL_NAME,
            "a keyword"
        );
        assert_eq!(local_name_from(&[None, None]), LOCAL_NAME);
    }
}
