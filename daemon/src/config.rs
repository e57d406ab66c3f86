//! The daemon's settings: RON, with every setting commented in config/default.ron,
//! which is embedded in the binary as the default.

use std::fmt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

pub use crate::rules::table::Hints;

pub use crate::config_default::DEFAULT_RON;

/// How errors name the embedded default.
const EMBEDDED: &str = "<embedded default>";

/// Every setting of the daemon. See config/default.ron for what each one means.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Address to listen on.
    pub listen: String,
    /// Threads for connections and games (0: one per core).
    pub workers: usize,
    /// Threads for engine work.
    pub engine_threads: usize,
    /// Longest a bot move or hint may think, in milliseconds.
    pub engine_move_ms: u64,
    /// Connections held at once.
    pub max_connections: usize,
    /// Connections from one address (IPv4, or an IPv6 /64) at once.
    pub max_connections_per_address: u32,
    /// The share of `max_connections`, in per cent, that connections which
    /// have not logged in may not take unless they come from a player's
    /// address.
    pub reserved_for_players_percent: u8,
    /// Seconds a connection may stay without logging in (or watching a game).
    pub login_deadline_secs: u64,
    /// Whether each worker thread keeps its connections in a descriptor table
    /// of its own.
    pub descriptor_tables: DescriptorTables,
    /// Longest command line in bytes.
    pub max_line_bytes: usize,
    /// Lines queued for a client before it is disconnected.
    pub outbound_queue_lines: usize,
    /// Bytes queued for a client before it is disconnected.
    pub outbound_queue_bytes: usize,
    /// Per-connection command rate limit.
    pub rate_limit: RateLimit,
    /// Seconds of silence before a connection is closed.
    pub idle_timeout_secs: u64,
    /// Seconds a disconnected player's seat is kept.
    pub grace_secs: u64,
    /// Seconds a challenge waits for its answer.
    pub challenge_timeout_secs: u64,
    /// Where `HINT` is allowed.
    pub hints: Hints,
    /// Milliseconds allowed for shutting down.
    pub shutdown_drain_ms: u64,
    /// The game store (SQLite).
    pub store: StoreConfig,
    /// Whether names without a password may play.
    pub guests: bool,
    /// Password hashing and the slow-down after wrong passwords.
    pub passwords: Passwords,
    /// What the log shows: a `tracing` filter (`info`, `flipd=debug`).
    pub log_filter: String,
    /// The longest a command waits for the store before `ERR 503`, in ms.
    pub store_deadline_ms: u64,
    /// The metrics listener (Prometheus's text format over HTTP).
    pub metrics: MetricsConfig,
}

/// Where `GET /metrics` and `GET /healthz` are served.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct MetricsConfig {
    /// An address to listen on; empty: no metrics listener.
    pub listen: String,
}

/// Where and how games, moves and accounts are kept.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct StoreConfig {
    /// The SQLite file, created on first start (its directory too).
    pub path: PathBuf,
    /// How hard each commit is pushed to the disk.
    pub synchronous: Synchronous,
    /// The most writes committed in one transaction.
    pub batch_max: usize,
    /// The writer's page cache, in MiB (filled only as pages are used).
    pub cache_mb: u32,
    /// Days in a rating period: a player's rating deviation grows by one
    /// period's worth for each such span without a rated game.
    pub rating_period_days: u32,
    /// Faults switched on by failure tests; never read from a file.
    #[serde(skip)]
    pub faults: Option<crate::faults::Faults>,
}

/// SQLite's `synchronous` setting for the store, as it applies in WAL mode.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Synchronous {
    /// Every commit is on the disk (fsync) before it is acknowledged: survives a
    /// crash of the machine.
    Full,
    /// Commits survive a crash of the daemon, not of the machine; faster.
    Normal,
}

/// Where the worker threads keep their connections' file descriptors.
///
/// The open-file limit is a limit on each descriptor table, not on the process:
/// with a table of its own, each worker thread holds up to the limit by itself.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum DescriptorTables {
    /// `per_worker` where the open-file limit would cap `max_connections`,
    /// `shared` otherwise (decided by `flipd` at start, see [`Config::resolved`]).
    Auto,
    /// One table for the whole process, one listening socket.
    Shared,
    /// A table and a listening socket (`SO_REUSEPORT`) per worker thread. Linux only.
    PerWorker,
}

/// Descriptors a table keeps for other things than connections: listening
/// sockets, the runtime's, the store's, the log's.
pub const RESERVED_DESCRIPTORS: u64 = 64;

/// Connections one descriptor table holds under `open_file_limit`.
pub fn table_capacity(open_file_limit: u64) -> u64 {
    open_file_limit.saturating_sub(RESERVED_DESCRIPTORS)
}

/// Accounts: hashing threads and their queue, the back-off after wrong
/// passwords, the budgets of failures, registrations per address.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Passwords {
    /// Threads that hash and check passwords (argon2 is slow by design).
    pub hash_threads: usize,
    /// Checks waiting for a hash thread, at most.
    pub hash_queue: usize,
    /// The back-off after the first failure past a budget, in ms; it doubles
    /// with each further failure.
    pub failure_delay_ms: u64,
    /// The longest such back-off, in ms.
    pub failure_delay_max_ms: u64,
    /// Wrong passwords one address has free, over every name.
    pub failures_per_address: u32,
    /// Wrong passwords one name has free, over every address.
    pub failures_per_name: u32,
    /// Names one address may register an hour.
    pub registrations_per_hour: u32,
}

/// A token bucket: `burst` commands at once, refilled at `per_second`.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct RateLimit {
    /// Tokens added per second.
    pub per_second: u32,
    /// Bucket size.
    pub burst: u32,
}

/// A configuration that could not be read, naming the file and the place in it.
#[derive(Debug)]
pub struct ConfigError {
    /// The file, or `<embedded default>`.
    pub source_name: String,
    /// What went wrong, with line:column where the parser gives one.
    pub message: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.source_name, self.message)
    }
}

impl std::error::Error for ConfigError {}

impl Config {
    /// The embedded default.
    pub fn embedded() -> Result<Config, ConfigError> {
        Config::parse(DEFAULT_RON, EMBEDDED)
    }

    /// The address the embedded default listens on, as a client on this
    /// machine reaches it (`0.0.0.0` becomes loopback): what `flip` and
    /// `flip-bench` connect to unless told otherwise.
    pub fn default_server() -> String {
        let listen = Config::embedded().map_or_else(|_| "127.0.0.1:7341".to_string(), |c| c.listen);
        listen.replace("0.0.0.0", "127.0.0.1")
    }

    /// Reads a file. Settings it leaves out keep their defaults.
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|e| ConfigError {
            source_name: path.display().to_string(),
            message: e.to_string(),
        })?;
        Config::parse(&text, &path.display().to_string())
    }

    /// Parses RON text over the defaults: the text is read as a partial config
    /// (every field optional) and laid over the embedded file's values.
    pub fn parse(text: &str, source_name: &str) -> Result<Config, ConfigError> {
        if source_name == EMBEDDED {
            return Config::parse_partial(text, source_name, None);
        }
        Config::parse_over(text, source_name, Config::embedded()?)
    }

    /// Parses RON text over `base`: what the text leaves out keeps `base`'s
    /// value (the environment's settings go over the file's so).
    pub fn parse_over(text: &str, source_name: &str, base: Config) -> Result<Config, ConfigError> {
        Config::parse_partial(text, source_name, Some(base))
    }

    fn parse_partial(
        text: &str,
        source_name: &str,
        base: Option<Config>,
    ) -> Result<Config, ConfigError> {
        let config = Config::lay_over(text, source_name, base)?;
        config.validate().map_err(|message| ConfigError {
            source_name: source_name.to_string(),
            message,
        })?;
        Ok(config)
    }

    /// `text`'s settings over `base`, not checked together yet (the
    /// environment's variables are laid one by one, then checked once).
    fn lay_over(
        text: &str,
        source_name: &str,
        base: Option<Config>,
    ) -> Result<Config, ConfigError> {
        let error = |message: String| ConfigError {
            source_name: source_name.to_string(),
            message,
        };
        // Settings are written bare (`grace_secs: 5`), not as `Some(5)`.
        let options = ron::Options::default()
            .with_default_extension(ron::extensions::Extensions::IMPLICIT_SOME);
        let partial: PartialConfig = if crate::config_errors::is_blank(text) {
            PartialConfig::default()
        } else {
            (options.from_str(text)).map_err(|e| error(crate::config_errors::explain(text, &e)))?
        };
        partial
            .over(base)
            .ok_or_else(|| error("the embedded default must name every setting".to_string()))
    }

    /// Every setting as a configuration file writes it (what `flipd
    /// --check-config` prints): reading it back gives these settings.
    pub fn to_ron(&self) -> Result<String, ConfigError> {
        let pretty = ron::ser::PrettyConfig::new();
        ron::ser::to_string_pretty(self, pretty).map_err(|e| ConfigError {
            source_name: "the settings".to_string(),
            message: e.to_string(),
        })
    }

    /// These settings with the environment's `FLIPD_...` variables over them
    /// (see [`crate::config_env`]); an error names the variable.
    pub fn with_environment(self, variables: &[(String, String)]) -> Result<Config, ConfigError> {
        let given = crate::config_env::overrides(variables).map_err(|message| ConfigError {
            source_name: "the environment".to_string(),
            message,
        })?;
        let mut config = self;
        for (variable, text) in given {
            config = Config::lay_over(&text, &variable, Some(config)).map_err(|mut e| {
                // A place in the one-line text made for the variable means
                // nothing to the person who set it.
                if let Some((_, message)) = e.message.split_once(": ") {
                    e.message = message.to_string();
                }
                e
            })?;
        }
        // Checked once all are laid: two variables may only agree together
        // (a delay and its maximum, both raised).
        config.validate().map_err(|message| ConfigError {
            source_name: "the environment".to_string(),
            message,
        })?;
        Ok(config)
    }

    fn validate(&self) -> Result<(), String> {
        let checks = [
            (
                self.max_line_bytes >= 64,
                "max_line_bytes must be at least 64",
            ),
            (
                self.outbound_queue_lines >= 16,
                "outbound_queue_lines must be at least 16",
            ),
            (
                self.outbound_queue_bytes >= 4096,
                "outbound_queue_bytes must be at least 4096",
            ),
            (
                self.max_connections >= 1,
                "max_connections must be at least 1",
            ),
            (
                self.max_connections_per_address >= 1,
                "max_connections_per_address must be at least 1",
            ),
            (
                self.reserved_for_players_percent <= 90,
                "reserved_for_players_percent must be at most 90",
            ),
            (
                self.login_deadline_secs >= 1,
                "login_deadline_secs must be at least 1",
            ),
            (
                self.engine_threads >= 1,
                "engine_threads must be at least 1",
            ),
            (
                self.rate_limit.burst >= 1,
                "rate_limit.burst must be at least 1",
            ),
            (
                self.idle_timeout_secs >= 1,
                "idle_timeout_secs must be at least 1",
            ),
            (
                !self.store.path.as_os_str().is_empty(),
                "store.path must name a file",
            ),
            (
                self.store.batch_max >= 1,
                "store.batch_max must be at least 1",
            ),
            (
                self.store.cache_mb >= 1,
                "store.cache_mb must be at least 1",
            ),
            (
                self.store_deadline_ms >= 1,
                "store_deadline_ms must be at least 1",
            ),
            (
                self.metrics.listen.is_empty()
                    || self.metrics.listen.parse::<std::net::SocketAddr>().is_ok(),
                "metrics.listen must be empty (no metrics) or an address such as 127.0.0.1:9341",
            ),
            (
                self.passwords.hash_threads >= 1,
                "passwords.hash_threads must be at least 1",
            ),
            (
                self.passwords.hash_queue >= 1,
                "passwords.hash_queue must be at least 1",
            ),
            (
                self.passwords.failure_delay_ms >= 1,
                "passwords.failure_delay_ms must be at least 1",
            ),
            (
                self.passwords.failure_delay_max_ms >= self.passwords.failure_delay_ms,
                "passwords.failure_delay_max_ms must be at least failure_delay_ms",
            ),
            (
                self.passwords.failures_per_address >= 1,
                "passwords.failures_per_address must be at least 1",
            ),
            (
                self.passwords.failures_per_name >= 1,
                "passwords.failures_per_name must be at least 1",
            ),
            (
                self.passwords.registrations_per_hour >= 1,
                "passwords.registrations_per_hour must be at least 1",
            ),
        ];
        match checks.iter().find(|(ok, _)| !ok) {
            Some((_, why)) => Err((*why).to_string()),
            None => Ok(()),
        }
    }

    /// `Auto` decided for a process whose tables hold `open_file_limit`
    /// descriptors each: a table per worker where one shared table would cap
    /// `max_connections` and the system has them, shared otherwise.
    pub fn resolved(&self, open_file_limit: u64) -> DescriptorTables {
        let wanted = u64::try_from(self.max_connections)
            .unwrap_or(u64::MAX)
            .saturating_add(RESERVED_DESCRIPTORS);
        match self.descriptor_tables {
            DescriptorTables::Auto if wanted > open_file_limit && cfg!(target_os = "linux") => {
                DescriptorTables::PerWorker
            }
            DescriptorTables::Auto => DescriptorTables::Shared,
            chosen => chosen,
        }
    }

    /// Connections that fit in the descriptor tables with `open_file_limit`
    /// descriptors each (`tables` resolved), at most `max_connections`.
    pub fn connection_capacity(&self, tables: DescriptorTables, open_file_limit: u64) -> u64 {
        let per_table = table_capacity(open_file_limit);
        let tables_held = match tables {
            DescriptorTables::PerWorker => self.worker_count() as u64,
            DescriptorTables::Auto | DescriptorTables::Shared => 1,
        };
        per_table
            .saturating_mul(tables_held)
            .min(u64::try_from(self.max_connections).unwrap_or(u64::MAX))
    }

    /// Worker threads to start: the setting, or one per core when it is 0.
    pub fn worker_count(&self) -> usize {
        match self.workers {
            0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
            n => n,
        }
    }
}

/// [`Config`] with every field optional, for files that change a few settings.
#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct PartialConfig {
    listen: Option<String>,
    workers: Option<usize>,
    engine_threads: Option<usize>,
    engine_move_ms: Option<u64>,
    max_connections: Option<usize>,
    max_connections_per_address: Option<u32>,
    reserved_for_players_percent: Option<u8>,
    login_deadline_secs: Option<u64>,
    descriptor_tables: Option<DescriptorTables>,
    max_line_bytes: Option<usize>,
    outbound_queue_lines: Option<usize>,
    outbound_queue_bytes: Option<usize>,
    rate_limit: Option<RateLimit>,
    idle_timeout_secs: Option<u64>,
    grace_secs: Option<u64>,
    challenge_timeout_secs: Option<u64>,
    hints: Option<Hints>,
    shutdown_drain_ms: Option<u64>,
    store: Option<PartialStore>,
    guests: Option<bool>,
    passwords: Option<PartialPasswords>,
    log_filter: Option<String>,
    store_deadline_ms: Option<u64>,
    metrics: Option<MetricsConfig>,
}

/// [`StoreConfig`] with every field optional: `store: (path: "x.db")` alone is
/// enough to move the file.
#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct PartialStore {
    path: Option<PathBuf>,
    synchronous: Option<Synchronous>,
    batch_max: Option<usize>,
    cache_mb: Option<u32>,
    rating_period_days: Option<u32>,
}

/// [`Passwords`] with every field optional.
#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct PartialPasswords {
    hash_threads: Option<usize>,
    hash_queue: Option<usize>,
    failure_delay_ms: Option<u64>,
    failure_delay_max_ms: Option<u64>,
    failures_per_address: Option<u32>,
    failures_per_name: Option<u32>,
    registrations_per_hour: Option<u32>,
}

impl PartialStore {
    fn over(self, base: Option<&StoreConfig>) -> Option<StoreConfig> {
        Some(StoreConfig {
            path: self.path.or_else(|| base.map(|b| b.path.clone()))?,
            synchronous: self.synchronous.or(base.map(|b| b.synchronous))?,
            batch_max: self.batch_max.or(base.map(|b| b.batch_max))?,
            cache_mb: self.cache_mb.or(base.map(|b| b.cache_mb))?,
            rating_period_days: self
                .rating_period_days
                .or(base.map(|b| b.rating_period_days))?,
            faults: base.and_then(|b| b.faults.clone()),
        })
    }
}

impl PartialPasswords {
    fn over(self, base: Option<&Passwords>) -> Option<Passwords> {
        Some(Passwords {
            hash_threads: self.hash_threads.or(base.map(|b| b.hash_threads))?,
            hash_queue: self.hash_queue.or(base.map(|b| b.hash_queue))?,
            failure_delay_ms: self.failure_delay_ms.or(base.map(|b| b.failure_delay_ms))?,
            failure_delay_max_ms: self
                .failure_delay_max_ms
                .or(base.map(|b| b.failure_delay_max_ms))?,
            failures_per_address: self
                .failures_per_address
                .or(base.map(|b| b.failures_per_address))?,
            failures_per_name: self
                .failures_per_name
                .or(base.map(|b| b.failures_per_name))?,
            registrations_per_hour: self
                .registrations_per_hour
                .or(base.map(|b| b.registrations_per_hour))?,
        })
    }
}

impl PartialConfig {
    /// These settings over `base`; with no base every setting must be present.
    fn over(self, base: Option<Config>) -> Option<Config> {
        macro_rules! pick {
            ($field:ident) => {
                match (self.$field, &base) {
                    (Some(value), _) => value,
                    (None, Some(base)) => base.$field.clone(),
                    (None, None) => return None,
                }
            };
        }
        Some(Config {
            listen: pick!(listen),
            workers: pick!(workers),
            engine_threads: pick!(engine_threads),
            engine_move_ms: pick!(engine_move_ms),
            max_connections: pick!(max_connections),
            max_connections_per_address: pick!(max_connections_per_address),
            reserved_for_players_percent: pick!(reserved_for_players_percent),
            login_deadline_secs: pick!(login_deadline_secs),
            descriptor_tables: pick!(descriptor_tables),
            max_line_bytes: pick!(max_line_bytes),
            outbound_queue_lines: pick!(outbound_queue_lines),
            outbound_queue_bytes: pick!(outbound_queue_bytes),
            rate_limit: pick!(rate_limit),
            idle_timeout_secs: pick!(idle_timeout_secs),
            grace_secs: pick!(grace_secs),
            challenge_timeout_secs: pick!(challenge_timeout_secs),
            hints: pick!(hints),
            shutdown_drain_ms: pick!(shutdown_drain_ms),
            guests: pick!(guests),
            log_filter: pick!(log_filter),
            store_deadline_ms: pick!(store_deadline_ms),
            metrics: pick!(metrics),
            store: self
                .store
                .unwrap_or_default()
                .over(base.as_ref().map(|b| &b.store))?,
            passwords: self
                .passwords
                .unwrap_or_default()
                .over(base.as_ref().map(|b| &b.passwords))?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_settings_written_out_read_back_the_same() {
        let mut config = Config::embedded().unwrap();
        config.grace_secs = 7;
        config.store.path = "/tmp/a \"b\".db".into();
        let text = config.to_ron().unwrap();
        assert_eq!(Config::parse(&text, "printed").unwrap(), config, "{text}");
    }

    #[test]
    fn the_embedded_default_parses() {
        let config = Config::embedded().unwrap();
        assert_eq!(config.listen, "127.0.0.1:7341");
        assert!(config.hints.bot_games);
    }

    #[test]
    fn auto_takes_a_table_per_worker_only_where_one_table_would_cap_connections() {
        let mut config = Config::embedded().unwrap();
        assert_eq!(config.descriptor_tables, DescriptorTables::Auto);
        config.workers = 2;
        config.max_connections = 30_000;
        let expected = if cfg!(target_os = "linux") {
            DescriptorTables::PerWorker
        } else {
            DescriptorTables::Shared
        };
        assert_eq!(config.resolved(20_000), expected);
        assert_eq!(config.resolved(30_064), DescriptorTables::Shared);
        assert_eq!(config.resolved(30_063), expected);
        config.descriptor_tables = DescriptorTables::Shared;
        assert_eq!(config.resolved(20_000), DescriptorTables::Shared);
        config.descriptor_tables = DescriptorTables::PerWorker;
        assert_eq!(config.resolved(1_000_000), DescriptorTables::PerWorker);
    }

    #[test]
    fn capacity_counts_one_table_or_one_per_worker_up_to_max_connections() {
        let mut config = Config::embedded().unwrap();
        config.workers = 3;
        config.max_connections = 50_000;
        assert_eq!(
            config.connection_capacity(DescriptorTables::Shared, 20_000),
            19_936
        );
        assert_eq!(
            config.connection_capacity(DescriptorTables::PerWorker, 20_000),
            50_000
        );
        assert_eq!(
            config.connection_capacity(DescriptorTables::PerWorker, 10_000),
            29_808
        );
        assert_eq!(config.connection_capacity(DescriptorTables::Shared, 10), 0);
    }

    #[test]
    fn descriptor_tables_read_in_snake_case_and_refuse_other_words() {
        let config = Config::parse("(descriptor_tables: per_worker)", "t.ron").unwrap();
        assert_eq!(config.descriptor_tables, DescriptorTables::PerWorker);
        let refused = Config::parse("(descriptor_tables: perworker)", "t.ron");
        assert!(refused.is_err());
    }

    #[test]
    fn a_file_may_change_a_few_settings() {
        let config = Config::parse("(grace_secs: 5, listen: \"127.0.0.1:0\")", "f.ron").unwrap();
        assert_eq!(config.grace_secs, 5);
        assert_eq!(config.listen, "127.0.0.1:0");
        assert_eq!(
            config.max_line_bytes,
            Config::embedded().unwrap().max_line_bytes
        );
    }

    #[test]
    fn unknown_keys_and_wrong_types_name_the_place() {
        let err = Config::parse("(\n  grace_secs: 5,\n  colour: 3,\n)", "f.ron").unwrap_err();
        let text = err.to_string();
        assert!(text.starts_with("f.ron: 3:"), "{text}");
        assert!(text.contains("colour"), "{text}");
        let err = Config::parse("(grace_secs: \"soon\")", "f.ron").unwrap_err();
        assert!(err.to_string().contains("1:"), "{err}");
        let err = Config::parse("(max_line_bytes: 3)", "f.ron").unwrap_err();
        assert!(err.to_string().contains("max_line_bytes"), "{err}");
    }

    #[test]
    fn the_connection_caps_are_checked() {
        let embedded = Config::embedded().unwrap();
        assert_eq!(embedded.max_connections_per_address, 50);
        assert_eq!(embedded.reserved_for_players_percent, 10);
        assert_eq!(embedded.login_deadline_secs, 30);
        for (file, setting) in [
            (
                "(max_connections_per_address: 0)",
                "max_connections_per_address",
            ),
            (
                "(reserved_for_players_percent: 91)",
                "reserved_for_players_percent",
            ),
            ("(login_deadline_secs: 0)", "login_deadline_secs"),
        ] {
            let err = Config::parse(file, "f.ron").unwrap_err();
            assert!(err.to_string().contains(setting), "{err}");
        }
        let config = Config::parse("(reserved_for_players_percent: 90)", "f.ron");
        assert_eq!(config.unwrap().reserved_for_players_percent, 90);
    }

    #[test]
    fn the_login_limits_are_checked() {
        let passwords = Config::embedded().unwrap().passwords;
        assert_eq!(
            (
                passwords.hash_queue,
                passwords.failures_per_address,
                passwords.failures_per_name,
                passwords.registrations_per_hour
            ),
            (64, 10, 20, 10)
        );
        for (file, setting) in [
            ("(passwords: (hash_queue: 0))", "hash_queue"),
            ("(passwords: (failure_delay_ms: 0))", "failure_delay_ms"),
            (
                "(passwords: (failure_delay_max_ms: 100))",
                "failure_delay_max_ms",
            ),
            (
                "(passwords: (failures_per_address: 0))",
                "failures_per_address",
            ),
            ("(passwords: (failures_per_name: 0))", "failures_per_name"),
            (
                "(passwords: (registrations_per_hour: 0))",
                "registrations_per_hour",
            ),
        ] {
            let err = Config::parse(file, "f.ron").unwrap_err();
            assert!(err.to_string().contains(setting), "{file}: {err}");
        }
    }

    #[test]
    fn nested_settings_may_be_given_in_part() {
        let embedded = Config::embedded().unwrap();
        assert_eq!(embedded.store.path, PathBuf::from("data/flipline.db"));
        assert_eq!(embedded.store.synchronous, Synchronous::Full);
        assert!(embedded.guests);
        let config = Config::parse(
            "(store: (path: \"/tmp/x.db\"), passwords: (failure_delay_ms: 7))",
            "f.ron",
        )
        .unwrap();
        assert_eq!(config.store.path, PathBuf::from("/tmp/x.db"));
        assert_eq!(config.store.batch_max, embedded.store.batch_max);
        assert_eq!(config.passwords.failure_delay_ms, 7);
        assert_eq!(
            config.passwords.hash_threads,
            embedded.passwords.hash_threads
        );
        let config = Config::parse("(store: (synchronous: normal), guests: false)", "f.ron");
        let config = config.unwrap();
        assert_eq!(config.store.synchronous, Synchronous::Normal);
        assert!(!config.guests);
        let err = Config::parse("(store: (colour: 1))", "f.ron").unwrap_err();
        assert!(err.to_string().contains("colour"), "{err}");
        let err = Config::parse("(store: (batch_max: 0))", "f.ron").unwrap_err();
        assert!(err.to_string().contains("batch_max"), "{err}");
        assert_eq!(embedded.store.cache_mb, 64);
        let err = Config::parse("(store: (cache_mb: 0))", "f.ron").unwrap_err();
        assert!(err.to_string().contains("cache_mb"), "{err}");
    }
}
