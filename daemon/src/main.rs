//! `flipd`: flags, logging, then the daemon (all in the library).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, ValueEnum};
use flipd::config::RESERVED_DESCRIPTORS;
use flipd::{Config, serve, server::termination_signal};

/// jemalloc keeps each size class in slabs of its own, so the short-lived
/// allocations of many clients arriving at once leave no holes between the
/// long-lived ones of sessions and games: 3.7 KiB an idle game at 100,000
/// games against 4.4 with glibc's malloc (BENCHMARKS.md).
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// flipline's game daemon: Othello and its cousins over a line protocol.
#[derive(Parser, Debug)]
#[command(name = "flipd", version, about)]
struct Flags {
    /// Configuration file (RON); without it, the embedded config/default.ron.
    #[arg(long)]
    config: Option<PathBuf>,
    /// Address to listen on, overriding the configuration (e.g. 127.0.0.1:0).
    #[arg(long)]
    listen: Option<String>,
    /// Log line format. The RUST_LOG variable filters (default: info).
    #[arg(long, value_enum, default_value_t = LogFormat::Text)]
    log_format: LogFormat,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum LogFormat {
    Text,
    Json,
}

fn main() -> ExitCode {
    let flags = Flags::parse();
    init_logging(flags.log_format);
    let config = match &flags.config {
        Some(path) => Config::load(path),
        None => Config::embedded(),
    };
    let mut config = match config {
        Ok(config) => config,
        Err(e) => {
            eprintln!("flipd: {e}");
            return ExitCode::FAILURE;
        }
    };
    if let Some(listen) = flags.listen {
        config.listen = listen;
    }
    let limit = raise_open_file_limit(config.max_connections);
    config.descriptor_tables = config.resolved(limit);
    tell_capacity(&config, limit);
    match serve(config, termination_signal, |_| {}) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("flipd: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Every connection is an open file: raise the soft limit as far as the hard
/// limit allows. Gives the limit now (each descriptor table's).
fn raise_open_file_limit(max_connections: usize) -> u64 {
    let wanted = u64::try_from(max_connections)
        .unwrap_or(u64::MAX)
        .saturating_add(RESERVED_DESCRIPTORS);
    match rlimit::increase_nofile_limit(wanted) {
        Ok(limit) => limit,
        Err(e) => {
            tracing::warn!(error = %e, "cannot raise the open-file limit");
            rlimit::getrlimit(rlimit::Resource::NOFILE).map_or(wanted, |(soft, _)| soft)
        }
    }
}

/// Logs where the descriptor tables leave `max_connections`, and warns when
/// they cap it.
fn tell_capacity(config: &Config, limit: u64) {
    let tables = config.descriptor_tables;
    let capacity = config.connection_capacity(tables, limit);
    let max_connections = config.max_connections;
    if capacity < u64::try_from(max_connections).unwrap_or(u64::MAX) {
        tracing::warn!(
            limit,
            ?tables,
            max_connections,
            capacity,
            "the open-file limit ({limit} a descriptor table) caps connections at about {capacity}"
        );
    } else {
        tracing::debug!(limit, ?tables, "open-file limit");
    }
}

fn init_logging(format: LogFormat) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    // Colour codes only for a person at a terminal, never in a log file.
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stderr())
        && std::env::var_os("NO_COLOR").is_none();
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(ansi)
        .with_writer(std::io::stderr);
    match format {
        LogFormat::Text => builder.init(),
        LogFormat::Json => builder.json().init(),
    }
}
