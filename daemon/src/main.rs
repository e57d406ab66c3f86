//! `flipd`: flags, logging, then the daemon (all in the library); on SIGHUP
//! the configuration is read again the way it was read at start.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, ValueEnum};
use flipd::config::{ConfigError, RESERVED_DESCRIPTORS};
use flipd::reload::Reload;
use flipd::{Config, serve_reloading, server::termination_signal};

mod logging;
mod manual_page;
use tracing_subscriber::EnvFilter;

/// jemalloc keeps each size class in slabs of its own, so the short-lived
/// allocations of many clients arriving at once leave no holes between the
/// long-lived ones of sessions and games: 3.7 KiB an idle game at 100,000
/// games against 4.4 with glibc's malloc (BENCHMARKS.md). Its options are
/// built in (`JEMALLOC_SYS_WITH_MALLOC_CONF` in .cargo/config.toml).
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// flipline's game daemon: Othello and its cousins over a line protocol.
///
/// Settings come from the configuration file (RON; the embedded default,
/// config/default.ron, lists every one), then from FLIPD_<NAME> variables
/// (FLIPD_LISTEN, FLIPD_STORE_PATH, ...), then from the flags. SIGHUP reads
/// them again and applies what can change while flipd runs; SIGINT and
/// SIGTERM stop it after the games in flight are stored. Players and bots
/// connect over TCP and speak the line protocol of PROTOCOL.md.
#[derive(Parser, Debug)]
#[command(name = "flipd", version)]
struct Flags {
    /// Configuration file (RON); without it, the embedded config/default.ron.
    #[arg(long)]
    config: Option<PathBuf>,
    /// Address to listen on, overriding the configuration (e.g. 127.0.0.1:0).
    #[arg(long)]
    listen: Option<String>,
    /// Log line format. The RUST_LOG variable, when set, filters instead of
    /// the configuration's `log_filter`.
    #[arg(long, value_enum, default_value_t = LogFormat::Text)]
    log_format: LogFormat,
    /// Print the settings as they resolve (the file, then FLIPD_...
    /// variables, then flags) in the file's format, and exit: 0 if they
    /// are sound, 1 with the reason if not.
    #[arg(long)]
    check_config: bool,
    /// Rebuild every rating from the rated games in the store (flipd must
    /// not be running on it), say how many games were rated, and exit.
    #[arg(long)]
    recompute_ratings: bool,
    /// Copy the SQLite store (`store.path`; flipd must not be running on
    /// it) into the empty PostgreSQL database at URL, check the copy, say
    /// what it holds, and exit. Then set `store.url` to URL.
    #[arg(long, value_name = "URL")]
    copy_store_to: Option<String>,
    #[command(subcommand)]
    command: Option<Extra>,
}

/// What flipd prints instead of serving.
#[derive(clap::Subcommand, Debug, Clone)]
enum Extra {
    /// Print a completion script for SHELL (e.g. `flipd completions bash >
    /// /usr/share/bash-completion/completions/flipd`).
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
    /// Print the manual page (roff; dist/flipd.1 is this output).
    Manual,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum LogFormat {
    Text,
    Json,
}

fn main() -> ExitCode {
    let flags = Flags::parse();
    if let Some(extra) = &flags.command {
        return print_extra(extra);
    }
    let mut config = match read_config(&flags) {
        Ok(config) => config,
        Err(e) => {
            eprintln!("flipd: {e}");
            return ExitCode::FAILURE;
        }
    };
    if flags.check_config {
        return print_settings(&config);
    }
    if flags.recompute_ratings {
        return match flipd::store::recompute_ratings(&config.store) {
            Ok(games) => {
                println!("recomputed the ratings from {games} rated games");
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("flipd: {e}");
                ExitCode::FAILURE
            }
        };
    }
    if let Some(url) = &flags.copy_store_to {
        return copy_store(&config, url);
    }
    // Held to the end of `main`: dropping it writes out the queued lines.
    let log = logging::start(flags.log_format, &config.log_filter);
    let filter = log.filter.clone();
    let source = flags.config.as_ref().map(|p| p.display().to_string());
    let source = source.unwrap_or_else(|| "the embedded default".to_string());
    tracing::info!(config = %source, "configuration from {source}");
    let limit = raise_open_file_limit(config.max_connections);
    config.descriptor_tables = config.resolved(limit);
    tell_capacity(&config, limit);
    let reload = Reload {
        load: Box::new(move || {
            let mut config = read_config(&flags)?;
            // Resolved as at start: the limit is the one raised then.
            config.descriptor_tables = config.resolved(limit);
            Ok(config)
        }),
        set_log_filter: Box::new(move |text| {
            let parsed = EnvFilter::try_new(text).map_err(|e| e.to_string())?;
            filter.reload(parsed).map_err(|e| e.to_string())
        }),
    };
    let served = serve_reloading(config, termination_signal, |_| {}, reload);
    // The log's last lines before the error (which goes straight to
    // standard error) and the exit.
    drop(log);
    match served {
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

/// Logs where the descriptor tables leave `max_connections`. Only at info: a
/// cap far above what the server will see matters to nobody; the listener
/// warns once connections are refused for it.
fn tell_capacity(config: &Config, limit: u64) {
    let tables = config.descriptor_tables;
    let capacity = config.connection_capacity(tables, limit);
    let max_connections = config.max_connections;
    if capacity < u64::try_from(max_connections).unwrap_or(u64::MAX) {
        tracing::info!(
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

/// `completions` and `manual`, made from the flags' definitions.
fn print_extra(extra: &Extra) -> ExitCode {
    use clap::CommandFactory;
    use std::io::Write;
    let mut command = Flags::command();
    // Made whole first, then written: a reader that stops early (`| head`)
    // ends it quietly.
    let mut text = Vec::new();
    let made = match extra {
        Extra::Completions { shell } => {
            clap_complete::generate(*shell, &mut command, "flipd", &mut text);
            Ok(())
        }
        Extra::Manual => manual_page::page(command).map(|page| text = page),
    };
    let written = made.and_then(|()| std::io::stdout().write_all(&text));
    match written {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("flipd: {e}");
            ExitCode::FAILURE
        }
    }
}

/// `--copy-store-to URL`: the SQLite store copied into PostgreSQL.
fn copy_store(config: &Config, url: &str) -> ExitCode {
    let mut store = config.store.clone();
    store.url = flipd::config::StoreUrl::new(url);
    if let Err(why) = store.url.check() {
        eprintln!("flipd: --copy-store-to: {why}");
        return ExitCode::FAILURE;
    }
    match flipd::store::postgres::copy_store(&store) {
        Ok(copied) => {
            println!(
                "copied {} into {} and checked the copy: {copied}",
                store.path.display(),
                store.url
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("flipd: {e}");
            ExitCode::FAILURE
        }
    }
}

/// `--check-config`: the settings as a file would give them.
fn print_settings(config: &Config) -> ExitCode {
    match config.to_ron() {
        Ok(text) => {
            println!("{text}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("flipd: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The configuration file (or the embedded default) with the environment's
/// `FLIPD_...` variables, then the flags and RUST_LOG over it: at start, and
/// again on each SIGHUP. A `log_filter` that is not a filter is an error in
/// the file; an unusable RUST_LOG is ignored, as it always was, with a word
/// on stderr.
fn read_config(flags: &Flags) -> Result<Config, ConfigError> {
    let (config, source) = match &flags.config {
        Some(path) => (Config::load(path)?, path.display().to_string()),
        None => (Config::embedded()?, "<embedded default>".to_string()),
    };
    // Names and values that are not Unicode cannot be settings: left out.
    let variables: Vec<(String, String)> = std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
        .collect();
    let mut config = config.with_environment(&variables)?;
    if let Some(listen) = &flags.listen {
        config.listen = listen.clone();
    }
    if let Err(e) = EnvFilter::try_new(&config.log_filter) {
        // Blamed on where the filter came from: the variable, if it set it.
        let from_variable = variables.iter().any(|(k, _)| k == "FLIPD_LOG_FILTER");
        return Err(ConfigError {
            source_name: match from_variable {
                true => "FLIPD_LOG_FILTER".to_string(),
                false => source,
            },
            message: format!("log_filter '{}': {e}", config.log_filter),
        });
    }
    match std::env::var("RUST_LOG") {
        Ok(env) if EnvFilter::try_new(&env).is_ok() => config.log_filter = env,
        Ok(env) => eprintln!("flipd: RUST_LOG '{env}' is not a filter; log_filter applies"),
        Err(_) => {}
    }
    Ok(config)
}
