//! The declarations against what is said of them elsewhere: the commented
//! config/default.ron operators read, the environment's variables, and the
//! text a variable's value goes through.

use std::collections::BTreeSet;

use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::TestRunner;

use crate::config::{
    ClusterConfig, Config, DEFAULT_RON, DescriptorTables, Hints, MetricsConfig, PartialConfig,
    Passwords, PlainPasswords, RateLimit, StoreConfig, Synchronous, TlsConfig,
};
use crate::config_table::Value;
use crate::nats_url::NatsUrl;
use crate::store_url::StoreUrl;

fn vars(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// config/default.ron read strictly: a setting it names that is not
/// declared is an error here.
fn default_file() -> PartialConfig {
    let options =
        ron::Options::default().with_default_extension(ron::extensions::Extensions::IMPLICIT_SOME);
    options
        .from_str(DEFAULT_RON)
        .unwrap_or_else(|e| panic!("config/default.ron: {e}"))
}

#[test]
fn the_default_file_names_every_declared_setting_and_nothing_else() {
    let file = default_file();
    assert_eq!(
        <Config as Value>::missing(&file, ""),
        Vec::<String>::new(),
        "declared, not in config/default.ron"
    );
    let declared = Config::declared();
    let from_file = <Config as Value>::over(file, &declared);
    assert_eq!(
        declared.differences(&from_file),
        Vec::<&str>::new(),
        "config/default.ron gives these other values than their declarations"
    );
    assert_eq!(from_file, declared);
}

/// The lines of config/default.ron at the top of its settings, indented by
/// four spaces.
fn top_level_lines() -> Vec<(usize, &'static str)> {
    DEFAULT_RON
        .lines()
        .enumerate()
        .filter(|(_, line)| line.starts_with("    ") && !line.starts_with("     "))
        .collect()
}

#[test]
fn each_setting_of_the_default_file_has_its_comment() {
    let lines: Vec<&str> = DEFAULT_RON.lines().collect();
    let top = top_level_lines();
    for setting in Config::settings() {
        if setting.name.contains('.') {
            continue; // a member: its group's comment or its own
        }
        let opening = format!("    {}:", setting.name);
        let at = top.iter().find(|(_, line)| line.starts_with(&opening));
        let Some((at, _)) = at else {
            panic!("{} is not at the top of config/default.ron", setting.name);
        };
        let above = at.checked_sub(1).and_then(|i| lines.get(i));
        let commented = above.is_some_and(|line| line.trim_start().starts_with("//"));
        assert!(commented, "{} has no comment above it", setting.name);
        assert!(!setting.meaning.is_empty(), "{} has no doc", setting.name);
    }
}

#[test]
fn the_default_file_names_the_settings_sighup_applies() {
    let header: String = DEFAULT_RON
        .lines()
        .take_while(|line| line.starts_with("//"))
        .collect::<Vec<_>>()
        .join(" ");
    let start = header.find("SIGHUP re-reads the file:").unwrap_or(0);
    let end = header.find("apply at once").unwrap_or(header.len());
    let sentence = header.get(start..end).unwrap_or_default();
    let words: BTreeSet<&str> = sentence
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .collect();
    let settings = Config::settings();
    let named: BTreeSet<&str> = settings
        .iter()
        .map(|s| s.name.as_str())
        .filter(|name| words.contains(name))
        .collect();
    let live: BTreeSet<&str> = settings
        .iter()
        .filter(|s| s.live)
        .map(|s| s.name.as_str())
        .collect();
    assert_eq!(named, live, "the header's SIGHUP sentence: {sentence}");
}

#[test]
fn every_setting_has_a_variable_of_its_own() {
    let names: Vec<String> = Config::settings().iter().map(|s| s.variable()).collect();
    for name in [
        "FLIPD_LISTEN",
        "FLIPD_GRACE_SECS",
        "FLIPD_RATE_LIMIT",
        "FLIPD_STORE",
        "FLIPD_STORE_PATH",
        "FLIPD_STORE_SYNCHRONOUS",
        "FLIPD_PASSWORDS_HASH_THREADS",
        "FLIPD_METRICS_LISTEN",
        "FLIPD_LOG_FILTER",
    ] {
        assert!(names.contains(&name.to_string()), "{name} in {names:?}");
    }
    assert!(!names.contains(&"FLIPD_RATE_LIMIT_BURST".to_string()));
    let unique: BTreeSet<&String> = names.iter().collect();
    assert_eq!(unique.len(), names.len(), "one variable, one setting");
}

#[test]
fn values_are_written_as_in_the_file_text_without_quotes() {
    let given = vars(&[
        ("HOME", "/root"),
        ("FLIPD_STORE_PATH", "/var/lib/flip \"x\".db"),
        ("FLIPD_GRACE_SECS", "5"),
        ("FLIPD_STORE_SYNCHRONOUS", "normal"),
    ]);
    let config = Config::declared().with_environment(&given).unwrap();
    assert_eq!(config.grace_secs, 5);
    let path = std::path::Path::new("/var/lib/flip \"x\".db");
    assert_eq!(config.store.path, path);
    assert_eq!(config.store.synchronous, Synchronous::Normal);
    assert_eq!(config.store.batch_max, Config::declared().store.batch_max);
}

#[test]
fn a_group_variable_sets_the_members_it_names() {
    let given = vars(&[("FLIPD_STORE", "(batch_max: 7)")]);
    let config = Config::declared().with_environment(&given).unwrap();
    let mut expected = Config::declared();
    expected.store.batch_max = 7;
    assert_eq!(config, expected);
}

#[test]
fn settings_that_agree_only_together_are_checked_together() {
    let both = vars(&[
        ("FLIPD_PASSWORDS_FAILURE_DELAY_MS", "10000"),
        ("FLIPD_PASSWORDS_FAILURE_DELAY_MAX_MS", "20000"),
    ]);
    let config = Config::declared().with_environment(&both).unwrap();
    assert_eq!(config.passwords.failure_delay_ms, 10_000);
    let alone = vars(&[("FLIPD_PASSWORDS_FAILURE_DELAY_MS", "10000")]);
    let refused = Config::declared().with_environment(&alone).unwrap_err();
    assert_eq!(refused.source_name, "the environment");
    assert_eq!(
        refused.message,
        "passwords.failure_delay_max_ms must be at least failure_delay_ms"
    );
}

#[test]
fn a_cluster_node_needs_the_shared_store_and_nats_needs_a_node() {
    let node_alone = vars(&[("FLIPD_CLUSTER_NODE", "a")]);
    let refused = Config::declared()
        .with_environment(&node_alone)
        .unwrap_err();
    assert!(
        refused.message.contains("cluster.node needs store.url"),
        "{}",
        refused.message
    );
    let shared = vars(&[
        ("FLIPD_CLUSTER_NODE", "a"),
        ("FLIPD_STORE_URL", "postgres://flipd@127.0.0.1/flipline"),
        ("FLIPD_CLUSTER_NATS", "nats://flipd:pw@127.0.0.1:4222"),
    ]);
    let config = Config::declared().with_environment(&shared).unwrap();
    assert_eq!(
        config.cluster.nats,
        NatsUrl::new("nats://flipd:pw@127.0.0.1:4222")
    );
    let nats_alone = vars(&[("FLIPD_CLUSTER_NATS", "nats://flipd:pw@127.0.0.1:4222")]);
    let refused = Config::declared()
        .with_environment(&nats_alone)
        .unwrap_err();
    assert!(
        refused.message.contains("nats needs node"),
        "{}",
        refused.message
    );
    for bad in ["a b", "", "x".repeat(33).as_str()] {
        let named = vars(&[
            ("FLIPD_CLUSTER_NODE", bad),
            ("FLIPD_STORE_URL", "postgres://flipd@127.0.0.1/flipline"),
        ]);
        let checked = Config::declared().with_environment(&named);
        assert_eq!(checked.is_ok(), bad.is_empty(), "{bad:?}");
    }
}

#[test]
fn a_bus_without_credentials_is_refused_unless_insecure_and_its_secret_never_shown() {
    let node = [
        ("FLIPD_CLUSTER_NODE", "a"),
        ("FLIPD_STORE_URL", "postgres://flipd@127.0.0.1/flipline"),
    ];
    let open = vars(&[
        node[0],
        node[1],
        ("FLIPD_CLUSTER_NATS", "nats://127.0.0.1:4222"),
    ]);
    let refused = Config::declared().with_environment(&open).unwrap_err();
    assert!(
        refused.message.contains("nats names no credentials"),
        "{}",
        refused.message
    );
    let insecure = vars(&[
        node[0],
        node[1],
        ("FLIPD_CLUSTER_NATS", "nats://127.0.0.1:4222"),
        ("FLIPD_CLUSTER_NATS_INSECURE", "true"),
    ]);
    assert!(Config::declared().with_environment(&insecure).is_ok());
    let token_file = vars(&[
        node[0],
        node[1],
        ("FLIPD_CLUSTER_NATS", "nats://127.0.0.1:4222"),
        ("FLIPD_CLUSTER_NATS_TOKEN_FILE", "/etc/flipd/nats-token"),
    ]);
    assert!(Config::declared().with_environment(&token_file).is_ok());
    let secret = vars(&[
        node[0],
        node[1],
        (
            "FLIPD_CLUSTER_NATS",
            "nats://flipd:Sup3rSecret@127.0.0.1:4222",
        ),
    ]);
    let config = Config::declared().with_environment(&secret).unwrap();
    let shown = format!("{} {:?}", config.to_ron().unwrap(), config.to_environment());
    assert!(!shown.contains("Sup3rSecret"), "{shown}");
    assert!(shown.contains("nats://flipd:***@127.0.0.1:4222"), "{shown}");
}

#[test]
fn a_variable_that_is_not_its_settings_value_is_refused_by_name() {
    let wrong = vars(&[("FLIPD_GRACE_SECS", "soon")]);
    let refused = Config::declared().with_environment(&wrong).unwrap_err();
    assert_eq!(
        refused.to_string(),
        "FLIPD_GRACE_SECS: grace_secs: expected a whole number (0 or more)"
    );
}

// A configuration file's mistakes, as config_errors.rs words them.

fn refusal(text: &str) -> String {
    match Config::parse(text, "f.ron") {
        Ok(_) => panic!("{text} was taken"),
        Err(e) => e.message,
    }
}

#[test]
fn mistakes_name_the_setting_as_the_file_does() {
    let unknown = refusal("(foo: 1)");
    assert!(
        unknown.starts_with("1:2: `foo` is not a setting; there are listen, "),
        "{unknown}"
    );
    assert!(!unknown.contains("Partial"), "{unknown}");
    let nested = refusal("(store: (sync: full))");
    assert!(
        nested.contains(
            "`store.sync` is not a setting; there are path, url, password_file, synchronous"
        ),
        "{nested}"
    );
    let variant = refusal("(store: (synchronous: fsync))");
    assert!(
        variant.ends_with("store.synchronous: `fsync` is not one of full or normal"),
        "{variant}"
    );
    let kind = refusal("(\n    grace_secs: \"x\",\n)");
    assert!(kind.starts_with("2:"), "{kind}");
    assert!(
        kind.ends_with(": grace_secs: expected a whole number (0 or more)"),
        "{kind}"
    );
    let letters = refusal("(grace_secs: abc)");
    assert_eq!(
        letters, "1:14: grace_secs: expected a whole number (0 or more)",
        "letters for a number, as a file's mistake"
    );
    let from_variable = Config::embedded()
        .and_then(|c| c.with_environment(&[("FLIPD_GRACE_SECS".into(), "abc".into())]))
        .map(|_| ())
        .unwrap_err();
    assert_eq!(
        (
            from_variable.source_name.as_str(),
            from_variable.message.as_str()
        ),
        (
            "FLIPD_GRACE_SECS",
            "grace_secs: expected a whole number (0 or more)"
        ),
        "worded as the file's, naming the variable"
    );
    let missing = refusal("(rate_limit: (per_second: 5))");
    assert!(
        missing.ends_with("rate_limit needs burst too (a group is given whole)"),
        "{missing}"
    );
    let text = refusal("(listen: 5)");
    assert!(text.ends_with("listen: expected a quoted string"), "{text}");
    for message in [unknown, nested, variant, kind, missing, text] {
        for internal in ["Partial", "Synchronous", "RateLimit", "StoreConfig"] {
            assert!(!message.contains(internal), "{message}");
        }
    }
}

#[test]
fn a_file_of_comments_only_is_every_default() {
    let empty = Config::parse("// only a comment\n", "f.ron").unwrap();
    assert_eq!(empty, Config::embedded().unwrap());
}

fn text() -> impl Strategy<Value = String> {
    any::<String>()
}

prop_compose! {
    fn arb_store()(
        path in text(),
        normal in any::<bool>(),
        batch_max in any::<usize>(),
        cache_mb in any::<u32>(),
        rating_period_days in any::<u32>(),
        url in "(postgres://[a-z]{1,8}@[a-z]{1,8}:[1-9][0-9]{0,3}/[a-z]{1,8})?",
        password_file in text(),
    ) -> StoreConfig {
        let synchronous = if normal { Synchronous::Normal } else { Synchronous::Full };
        let url = StoreUrl::new(url);
        StoreConfig {
            path: path.into(), url, password_file: password_file.into(), synchronous, batch_max,
            cache_mb, rating_period_days, faults: None, lease: None,
        }
    }
}

prop_compose! {
    fn arb_passwords()(
        hash_threads in any::<usize>(),
        hash_queue in any::<usize>(),
        failure_delay_ms in any::<u64>(),
        failure_delay_max_ms in any::<u64>(),
        failures_per_address in any::<u32>(),
        failures_per_name in any::<u32>(),
        registrations_per_hour in any::<u32>(),
    ) -> Passwords {
        Passwords {
            hash_threads, hash_queue, failure_delay_ms, failure_delay_max_ms,
            failures_per_address, failures_per_name, registrations_per_hour,
        }
    }
}

fn arb_tables() -> impl Strategy<Value = DescriptorTables> {
    prop_oneof![
        Just(DescriptorTables::Auto),
        Just(DescriptorTables::Shared),
        Just(DescriptorTables::PerWorker),
    ]
}

prop_compose! {
    fn arb_connections()(
        max_connections in any::<usize>(),
        max_connections_per_address in any::<u32>(),
        reserved_for_players_percent in any::<u8>(),
        login_deadline_secs in any::<u64>(),
        descriptor_tables in arb_tables(),
        max_line_bytes in any::<usize>(),
        outbound_queue_lines in any::<usize>(),
        outbound_queue_bytes in any::<usize>(),
        rate_limit in (any::<u32>(), any::<u32>()),
        idle_timeout_secs in any::<u64>(),
    ) -> Config {
        let (per_second, burst) = rate_limit;
        Config {
            max_connections, max_connections_per_address, reserved_for_players_percent,
            login_deadline_secs, descriptor_tables, max_line_bytes, outbound_queue_lines,
            outbound_queue_bytes, rate_limit: RateLimit { per_second, burst }, idle_timeout_secs,
            ..Config::declared()
        }
    }
}

prop_compose! {
    /// Any configuration, sound or not: what the environment's text must
    /// carry either way (the rules are checked after).
    fn arb_config()(
        base in arb_connections(),
        (listen, log_filter, metrics) in (text(), text(), text()),
        (workers, engine_threads, engine_move_ms) in (any::<usize>(), any::<usize>(), any::<u64>()),
        (grace_secs, challenge_timeout_secs, shutdown_drain_ms, store_deadline_ms)
            in (any::<u64>(), any::<u64>(), any::<u64>(), any::<u64>()),
        (bot_games, hotseat_games, human_games, guests)
            in (any::<bool>(), any::<bool>(), any::<bool>(), any::<bool>()),
        store in arb_store(),
        passwords in arb_passwords(),
        (node, lease_secs, nats_insecure) in (text(), any::<u64>(), any::<bool>()),
        nats in "(nats://[a-z]{1,8}:[1-9][0-9]{0,3})?",
        (nats_password_file, nats_token_file, nats_credentials, nats_ca)
            in (text(), text(), text(), text()),
        (tls_listen, certificate, key, loopback) in (text(), text(), text(), any::<bool>()),
    ) -> Config {
        let plain_passwords = match loopback {
            true => PlainPasswords::Loopback,
            false => PlainPasswords::Anywhere,
        };
        Config {
            listen, workers, engine_threads, engine_move_ms, grace_secs, challenge_timeout_secs,
            hints: Hints { bot_games, hotseat_games, human_games },
            shutdown_drain_ms, store, guests, passwords, log_filter, store_deadline_ms,
            metrics: MetricsConfig { listen: metrics },
            tls: TlsConfig {
                listen: tls_listen, certificate: certificate.into(), key: key.into(), plain_passwords,
            },
            cluster: ClusterConfig {
                node, lease_secs, nats: NatsUrl::new(nats), nats_password_file: nats_password_file.into(),
                nats_token_file: nats_token_file.into(), nats_credentials: nats_credentials.into(),
                nats_ca: nats_ca.into(), nats_insecure,
            },
            ..base
        }
    }
}

/// The variables whose value differs between `a` and `b`.
fn variables_apart(a: &Config, b: &Config) -> BTreeSet<String> {
    let (a, b) = (a.to_environment(), b.to_environment());
    a.into_iter()
        .zip(b)
        .filter(|(x, y)| x != y)
        .map(|(x, _)| x.0)
        .collect()
}

#[test]
fn each_variable_sets_its_declared_setting_and_no_other() {
    let declared = Config::declared();
    let mut runner = TestRunner::deterministic();
    let mut seen = BTreeSet::new();
    for _ in 0..32 {
        let Ok(tree) = arb_config().new_tree(&mut runner) else {
            panic!("no configuration drawn");
        };
        let other = tree.current();
        for (variable, value) in other.to_environment() {
            let given = [(variable.clone(), value)];
            let laid = declared.clone().lay_environment(&given);
            let laid = laid.unwrap_or_else(|e| panic!("{variable}: {e}"));
            let apart = variables_apart(&declared, &laid);
            assert!(
                apart.iter().all(|v| *v == variable),
                "{variable}: {apart:?}"
            );
            seen.extend(apart);
        }
    }
    let leaves: BTreeSet<String> = Config::settings()
        .iter()
        .filter(|s| !s.group)
        .map(|s| s.variable())
        .collect();
    assert_eq!(seen, leaves, "every variable was seen to set its setting");
}

proptest! {
    #[test]
    fn the_environment_of_any_configuration_gives_it_back(config in arb_config()) {
        let given = config.to_environment();
        let laid = Config::declared().lay_environment(&given);
        prop_assert_eq!(laid.ok(), Some(config));
    }

    #[test]
    fn any_configuration_written_out_reads_back_the_same(config in arb_config()) {
        let text = config.to_ron();
        let text = text.unwrap_or_default();
        let read = Config::lay_over(&text, "printed", &Config::declared());
        prop_assert_eq!(read.ok(), Some(config), "{}", text);
    }
}
