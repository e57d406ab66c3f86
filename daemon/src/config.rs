//! The daemon's settings: RON, with every setting commented in
//! config/default.ron for operators. Each setting is declared once, in the
//! table below: its name, type, default, meaning, whether SIGHUP applies it
//! and the rules its value keeps; `settings!` (in `config_table.rs`) makes
//! from it the structs, the merge of a file over the defaults, the checks,
//! the environment's variables and a reload's differences. A test
//! (`config_tests.rs`) holds config/default.ron equal to the table.

use std::fmt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

pub use crate::rules::table::Hints;

pub use crate::config_default::DEFAULT_RON;
use crate::config_table::{Setting, Value, at_least, at_most, must, settings, variable, whole};
use crate::faults::Faults;
pub use crate::nats_url::NatsUrl;
pub use crate::store_url::StoreUrl;

settings! {
    /// Every setting of the daemon. See config/default.ron for what each one
    /// means at length.
    pub struct Config, partial PartialConfig {
        /// Address of the plain port; empty: none (only the TLS port).
        listen: String = "127.0.0.1:7341".into(), restart;
        /// The TLS port: the same protocol, encrypted, and what the plain
        /// port may carry.
        tls: TlsConfig = TlsConfig::declared(), restart;
        /// Threads for connections and games (0: one per core).
        workers: usize = 0, restart;
        /// Threads for engine work.
        engine_threads: usize = 1, restart, at_least(1);
        /// Longest a bot move or hint may think, in milliseconds.
        engine_move_ms: u64 = 1000, restart;
        /// Connections held at once.
        max_connections: usize = 100_000, live, at_least(1);
        /// Connections from one address (IPv4, or an IPv6 /64) at once.
        max_connections_per_address: u32 = 50, live, at_least(1);
        /// The share of `max_connections`, in per cent, that connections which
        /// have not logged in may not take unless they come from a player's
        /// address.
        reserved_for_players_percent: u8 = 10, live, at_most(90);
        /// Seconds a connection may stay without logging in (or watching a game).
        login_deadline_secs: u64 = 30, live, at_least(1);
        /// Whether each worker thread keeps its connections in a descriptor table
        /// of its own.
        descriptor_tables: DescriptorTables = DescriptorTables::Auto, restart;
        /// Longest command line in bytes (for connections made after a reload).
        max_line_bytes: usize = 1024, live, at_least(64);
        /// Lines queued for a client before it is disconnected.
        outbound_queue_lines: usize = 512, live, at_least(16);
        /// Bytes queued for a client before it is disconnected.
        outbound_queue_bytes: usize = 262_144, live, at_least(4096);
        /// Per-connection command rate limit.
        rate_limit: RateLimit = RateLimit { per_second: 100, burst: 200 }, live;
        /// Seconds of silence before a connection is closed.
        idle_timeout_secs: u64 = 900, live, at_least(1);
        /// Seconds a disconnected player's seat is kept.
        grace_secs: u64 = 60, restart;
        /// Seconds a challenge waits for its answer.
        challenge_timeout_secs: u64 = 60, restart;
        /// Where `HINT` is allowed.
        hints: Hints = Hints { bot_games: true, hotseat_games: true, human_games: false },
            restart;
        /// Milliseconds allowed for shutting down.
        shutdown_drain_ms: u64 = 2000, restart;
        /// The game store (SQLite, or PostgreSQL).
        store: StoreConfig = StoreConfig::declared(), restart;
        /// Whether names without a password may play.
        guests: bool = true, restart;
        /// Password hashing and the slow-down after wrong passwords.
        passwords: Passwords = Passwords::declared(), restart;
        /// What the log shows: a `tracing` filter (`info`, `flipd=debug`).
        log_filter: String = "info".into(), live;
        /// The longest a command waits for the store before `ERR 503`, in ms.
        store_deadline_ms: u64 = 5000, live, at_least(1);
        /// The metrics listener (Prometheus's text format over HTTP).
        metrics: MetricsConfig = MetricsConfig::declared(), restart;
        /// This daemon as a node of a cluster that shares the PostgreSQL store.
        cluster: ClusterConfig = ClusterConfig::declared(), restart;
    }
    together: must(
        |c: &Config| c.cluster.node.is_empty() || !c.store.url.is_empty(),
        "cluster.node needs store.url: the nodes of a cluster share a PostgreSQL store"
    ), must(
        |c: &Config| !c.listen.is_empty() || !c.tls.listen.is_empty(),
        "listen and tls.listen are both empty: players would have no port"
    );
}

settings! {
    /// The players' TLS port: the line protocol inside TLS, so that a
    /// password never crosses the network in the clear.
    pub struct TlsConfig, partial PartialTls {
        /// Address of the TLS port; empty: none.
        listen: String = String::new(), restart;
        /// The file of the server's certificate chain (PEM, its own
        /// certificate first), whose contents SIGHUP reads again.
        certificate: PathBuf = PathBuf::new(), restart;
        /// The file of the certificate's private key (PEM), whose contents
        /// SIGHUP reads again.
        key: PathBuf = PathBuf::new(), restart;
        /// Where the plain port takes passwords (`LOGIN name password`,
        /// registrations): `anywhere`, or from `loopback` (127.0.0.1, ::1) only.
        plain_passwords: PlainPasswords = PlainPasswords::Anywhere, restart;
    }
    together: must(
        |t: &TlsConfig| {
            t.listen.is_empty()
                || !(t.certificate.as_os_str().is_empty() || t.key.as_os_str().is_empty())
        },
        "tls.listen needs tls.certificate and tls.key"
    );
}

settings! {
    /// A node of a cluster: daemons that share one PostgreSQL store, each
    /// owning some of the games in play and taking over a dead node's.
    pub struct ClusterConfig, partial PartialCluster {
        /// This node's name; empty: a single daemon, no cluster.
        node: String = String::new(), restart, must(
            |node: &String| node.is_empty() || crate::rules::lease::valid_node_name(node),
            "must be empty (no cluster) or 1 to 32 letters, digits, '-' or '_'"
        );
        /// Seconds a node's lease lasts past its last renewal (renewed every
        /// second): how long a dead node's games wait before others take them.
        lease_secs: u64 = 3, restart, at_least(2), at_most(30);
        /// The NATS server the nodes reach each other's games through
        /// (`nats://user:password@host:4222`, `tls://...`, several separated
        /// by commas; a user with no password is a token); empty: each
        /// node serves only its own games. Never shown with its password.
        nats: NatsUrl = NatsUrl::default(), restart,
            must(|nats: &NatsUrl| nats.check().is_ok(),
                "must be empty or a NATS URL such as nats://flipd:secret@127.0.0.1:4222");
        /// A file holding the password of `nats`'s user, read at each
        /// connection; empty: the URL's own.
        nats_password_file: PathBuf = PathBuf::new(), restart;
        /// A file holding a token to log in to NATS with; empty: none.
        nats_token_file: PathBuf = PathBuf::new(), restart;
        /// A NATS credentials file (a user's JWT and NKey seed, as `nsc`
        /// makes it); empty: none.
        nats_credentials: PathBuf = PathBuf::new(), restart;
        /// A PEM file of the certificate authorities that sign the NATS
        /// server's certificate; given, the bus speaks only TLS.
        nats_ca: PathBuf = PathBuf::new(), restart;
        /// Allows a bus without credentials, to a NATS server that lets
        /// anyone publish: whoever can publish on the cluster's subjects
        /// can then seat any player. Only for a closed network.
        nats_insecure: bool = false, restart;
    }
    together: must(
        |c: &ClusterConfig| c.nats.is_empty() || !c.node.is_empty(),
        "nats needs node: only a cluster's nodes use NATS"
    ), must(
        |c: &ClusterConfig| c.nats.is_empty() || c.nats_insecure || c.bus_credentials(),
        "nats names no credentials: give a user and password (in the URL or \
         nats_password_file), nats_token_file or nats_credentials, or set \
         nats_insecure on a closed network"
    );
}

settings! {
    /// Where `GET /metrics` and `GET /healthz` are served.
    pub struct MetricsConfig, partial PartialMetrics {
        /// An address to listen on; empty: no metrics listener.
        listen: String = String::new(), restart, must(
            |listen: &String| listen.is_empty() || listen.parse::<std::net::SocketAddr>().is_ok(),
            "must be empty (no metrics) or an address such as 127.0.0.1:9341"
        );
    }
}

settings! {
    /// Where and how games, moves and accounts are kept.
    pub struct StoreConfig, partial PartialStore {
        /// The SQLite file, created on first start (its directory too).
        path: PathBuf = "data/flipline.db".into(), restart,
            must(|path: &PathBuf| !path.as_os_str().is_empty(), "must name a file");
        /// A PostgreSQL database to keep the store in instead of the file
        /// (`postgres://user@host:port/db`); empty: the SQLite file.
        url: StoreUrl = StoreUrl::default(), restart,
            must(|url: &StoreUrl| url.check().is_ok(),
                "must be empty or a PostgreSQL URL such as postgres://flipd@127.0.0.1:5432/flipline");
        /// A file holding the password of `url`'s user, read at each
        /// connection; empty: none (or the URL's own).
        password_file: PathBuf = PathBuf::new(), restart;
        /// How hard each commit is pushed to the disk.
        synchronous: Synchronous = Synchronous::Full, restart;
        /// The most writes committed in one transaction.
        batch_max: usize = 1024, restart, at_least(1);
        /// The writer's page cache, in MiB (filled only as pages are used).
        cache_mb: u32 = 64, restart, at_least(1);
        /// Days in a rating period: a player's rating deviation grows by one
        /// period's worth for each such span without a rated game.
        rating_period_days: u32 = 1, restart;
    }
    carried:
        /// Faults switched on by failure tests; never read from a file.
        faults: Option<Faults>,
        /// A cluster node's lease, which its deadlines on the server are
        /// cut to (`store::postgres::connect::Deadlines`); set by the node
        /// as it opens the store, never read from a file.
        lease: Option<std::time::Duration>;
}

settings! {
    /// Accounts: hashing threads and their queue, the back-off after wrong
    /// passwords, the budgets of failures, registrations per address.
    pub struct Passwords, partial PartialPasswords {
        /// Threads that hash and check passwords (argon2 is slow by design).
        hash_threads: usize = 1, restart, at_least(1);
        /// Checks waiting for a hash thread, at most.
        hash_queue: usize = 64, restart, at_least(1);
        /// The back-off after the first failure past a budget, in ms; it doubles
        /// with each further failure.
        failure_delay_ms: u64 = 250, restart, at_least(1);
        /// The longest such back-off, in ms.
        failure_delay_max_ms: u64 = 8000, restart;
        /// Wrong passwords one address has free, over every name.
        failures_per_address: u32 = 10, restart, at_least(1);
        /// Wrong passwords one name has free, over every address.
        failures_per_name: u32 = 20, restart, at_least(1);
        /// Names one address may register an hour.
        registrations_per_hour: u32 = 10, restart, at_least(1);
    }
    together: must(
        |p: &Passwords| p.failure_delay_max_ms >= p.failure_delay_ms,
        "failure_delay_max_ms must be at least failure_delay_ms"
    );
}

// Values a file gives whole: a word, or a group of fields all given.
whole!(Synchronous, DescriptorTables, Hints, PlainPasswords);

/// Given whole (`rate_limit: (per_second: 5)` is refused), and its burst has
/// a rule of its own.
impl Value for RateLimit {
    type Partial = Option<RateLimit>;

    fn over(partial: Option<RateLimit>, base: &RateLimit) -> RateLimit {
        partial.unwrap_or(*base)
    }

    #[cfg(test)]
    fn missing(partial: &Option<RateLimit>, name: &str) -> Vec<String> {
        partial
            .is_none()
            .then(|| name.to_string())
            .into_iter()
            .collect()
    }

    fn check(&self, name: &str) -> Result<(), String> {
        at_least(1)(&self.burst).map_err(|why| format!("{name}.burst {why}"))
    }

    fn environment(&self, name: &str, out: &mut Vec<(String, String)>) {
        out.push((name.to_string(), self.bare()));
    }
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

/// Where the plain port takes passwords.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum PlainPasswords {
    /// From anywhere, as before there was a TLS port.
    Anywhere,
    /// From this machine only (a program beside the daemon, a TLS proxy in
    /// front of it); others are told to use the TLS port.
    Loopback,
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
    /// The embedded default: every setting as declared (config/default.ron
    /// says the same, with comments; a test holds them equal).
    pub fn embedded() -> Result<Config, ConfigError> {
        Ok(Config::declared())
    }

    /// Every setting, groups' members after their group, in the order
    /// declared: what the environment's variables and the tests are made of.
    pub fn settings() -> Vec<Setting> {
        <Config as Value>::members("")
    }

    /// The address the embedded default listens on, as a client on this
    /// machine reaches it (`0.0.0.0` becomes loopback): what `flip` and
    /// `flip-bench` connect to unless told otherwise.
    pub fn default_server() -> String {
        Config::declared().listen.replace("0.0.0.0", "127.0.0.1")
    }

    /// Reads a file. Settings it leaves out keep their defaults.
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|e| ConfigError {
            source_name: path.display().to_string(),
            message: e.to_string(),
        })?;
        Config::parse(&text, &path.display().to_string())
    }

    /// Parses RON text over the defaults: what the text leaves out keeps its
    /// declared default.
    pub fn parse(text: &str, source_name: &str) -> Result<Config, ConfigError> {
        Config::parse_over(text, source_name, Config::declared())
    }

    /// Parses RON text over `base`: what the text leaves out keeps `base`'s
    /// value (the environment's settings go over the file's so).
    pub fn parse_over(text: &str, source_name: &str, base: Config) -> Result<Config, ConfigError> {
        let config = Config::lay_over(text, source_name, &base)?;
        config.validate().map_err(|message| ConfigError {
            source_name: source_name.to_string(),
            message,
        })?;
        Ok(config)
    }

    /// `text`'s settings over `base`, not checked together yet (the
    /// environment's variables are laid one by one, then checked once).
    pub(crate) fn lay_over(
        text: &str,
        source_name: &str,
        base: &Config,
    ) -> Result<Config, ConfigError> {
        if crate::config_errors::is_blank(text) {
            return Ok(base.clone());
        }
        // Settings are written bare (`grace_secs: 5`), not as `Some(5)`.
        let options = ron::Options::default()
            .with_default_extension(ron::extensions::Extensions::IMPLICIT_SOME);
        let partial: PartialConfig = options.from_str(text).map_err(|e| ConfigError {
            source_name: source_name.to_string(),
            message: crate::config_errors::explain(text, &e),
        })?;
        Ok(Config::over(partial, base))
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

    /// Every setting as the environment's variables give it
    /// (`FLIPD_STORE_PATH=data/flipline.db`): laid over the defaults by
    /// [`Config::with_environment`], they give these settings back.
    pub fn to_environment(&self) -> Vec<(String, String)> {
        let mut named = Vec::new();
        Value::environment(self, "", &mut named);
        let variables = named
            .into_iter()
            .map(|(name, value)| (variable(&name), value));
        variables.collect()
    }

    /// These settings with the environment's `FLIPD_...` variables over them
    /// (see `config_env`); an error names the variable.
    pub fn with_environment(self, variables: &[(String, String)]) -> Result<Config, ConfigError> {
        let config = self.lay_environment(variables)?;
        // Checked once all are laid: two variables may only agree together
        // (a delay and its maximum, both raised).
        config.validate().map_err(|message| ConfigError {
            source_name: "the environment".to_string(),
            message,
        })?;
        Ok(config)
    }

    /// The variables laid over these settings one by one, not checked.
    pub(crate) fn lay_environment(
        self,
        variables: &[(String, String)],
    ) -> Result<Config, ConfigError> {
        let settings = Config::settings();
        let given =
            crate::config_env::overrides(&settings, variables).map_err(|message| ConfigError {
                source_name: "the environment".to_string(),
                message,
            })?;
        let mut config = self;
        for (variable, text) in given {
            config = Config::lay_over(&text, &variable, &config).map_err(|mut e| {
                // A place in the one-line text made for the variable means
                // nothing to the person who set it.
                if let Some((_, message)) = e.message.split_once(": ") {
                    e.message = message.to_string();
                }
                e
            })?;
        }
        Ok(config)
    }

    /// Every setting's rules, in the order declared: the first broken, in
    /// the file's words (`store.batch_max must be at least 1`).
    fn validate(&self) -> Result<(), String> {
        self.check("")
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

impl ClusterConfig {
    /// Whether the bus logs in to NATS with credentials of some kind.
    pub fn bus_credentials(&self) -> bool {
        self.nats.has_credentials()
            || [&self.nats_token_file, &self.nats_credentials]
                .iter()
                .any(|path| !path.as_os_str().is_empty())
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
