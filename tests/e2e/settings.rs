//! Settings as an operator gives them: the file, then `FLIPD_...`
//! variables, then the flags, each over the one before; `--check-config`
//! prints what they come to.

use std::process::{Command, Output};

use flipline_tests::*;

/// `flipd --config FILE --check-config` with `variables` and `flags`.
fn check_config(config: &std::path::Path, variables: &[(&str, &str)], flags: &[&str]) -> Output {
    let mut command = Command::new(workspace_binary("flipd", "flipd"));
    command
        .arg("--config")
        .arg(config)
        .arg("--check-config")
        .args(flags)
        .envs(variables.iter().copied());
    command
        .output()
        .unwrap_or_else(|e| panic!("cannot run flipd: {e}"))
}

fn settings_of(output: &Output) -> Config {
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{text} {}",
        String::from_utf8_lossy(&output.stderr)
    );
    Config::parse(&text, "--check-config").unwrap_or_else(|e| panic!("{e}\n{text}"))
}

#[test]
fn the_environment_goes_over_the_file_and_the_flags_over_both() {
    let dir = temp_dir("settings");
    let config = write_config(&dir, "grace_secs: 5, idle_timeout_secs: 60,");
    let file = settings_of(&check_config(&config, &[], &[]));
    assert_eq!((file.grace_secs, file.listen.as_str()), (5, "127.0.0.1:0"));
    let variables = [
        ("FLIPD_GRACE_SECS", "9"),
        ("FLIPD_LISTEN", "127.0.0.1:7999"),
        ("FLIPD_STORE_SYNCHRONOUS", "normal"),
    ];
    let both = settings_of(&check_config(&config, &variables, &[]));
    assert_eq!(both.grace_secs, 9);
    assert_eq!(both.listen, "127.0.0.1:7999");
    assert_eq!(both.store.synchronous, flipd::config::Synchronous::Normal);
    assert_eq!(
        both.store.path, file.store.path,
        "the rest of the group stays"
    );
    assert_eq!(both.idle_timeout_secs, 60, "what no variable names stays");
    let flagged = settings_of(&check_config(
        &config,
        &variables,
        &["--listen", "127.0.0.1:7998"],
    ));
    assert_eq!(flagged.listen, "127.0.0.1:7998");
    remove_temp_dir(&dir);
}

#[test]
fn the_store_url_from_the_environment_is_printed_without_its_password() {
    let dir = temp_dir("settings-url");
    let config = write_config(&dir, "");
    let url = "postgres://flipd:Not-To-Be-Shown@db.example:5432/flipline?sslmode=verify-full";
    let output = check_config(&config, &[("FLIPD_STORE_URL", url)], &[]);
    let printed = String::from_utf8_lossy(&output.stdout).to_string();
    assert!(!printed.contains("Not-To-Be-Shown"), "{printed}");
    let settings = settings_of(&output);
    assert_eq!(
        settings.store.url.expose(),
        "postgres://flipd:***@db.example:5432/flipline?sslmode=verify-full"
    );
    let bad = check_config(
        &config,
        &[("FLIPD_STORE_URL", "postgres://flipd:pw@h:port/x")],
        &[],
    );
    let said = String::from_utf8_lossy(&bad.stderr).to_string();
    assert!(
        !bad.status.success() && said.contains("store.url must be"),
        "{said}"
    );
    assert!(!said.contains(":pw@"), "{said}");
    remove_temp_dir(&dir);
}

#[test]
fn a_variable_that_is_no_setting_or_not_a_value_is_refused_by_name() {
    let dir = temp_dir("settings-bad");
    let config = write_config(&dir, "");
    let typo = check_config(&config, &[("FLIPD_GRACE", "9")], &[]);
    assert_eq!(typo.status.code(), Some(1));
    let said = String::from_utf8_lossy(&typo.stderr);
    assert!(said.contains("FLIPD_GRACE is not a setting"), "{said}");
    let wrong = check_config(&config, &[("FLIPD_GRACE_SECS", "soon")], &[]);
    assert_eq!(wrong.status.code(), Some(1));
    let said = String::from_utf8_lossy(&wrong.stderr);
    assert!(
        said.contains("FLIPD_GRACE_SECS: grace_secs: expected a whole number"),
        "{said}"
    );
    // Letters where digits go read as the file's mistake would, not as the
    // parser's words.
    let letters = check_config(&config, &[("FLIPD_GRACE_SECS", "abc")], &[]);
    let said = String::from_utf8_lossy(&letters.stderr);
    assert!(
        said.contains("FLIPD_GRACE_SECS: grace_secs: expected a whole number"),
        "{said}"
    );
    // A log filter that is no filter is blamed on the variable that gave it.
    let filter = check_config(&config, &[("FLIPD_LOG_FILTER", "=[bad")], &[]);
    assert_eq!(filter.status.code(), Some(1));
    let said = String::from_utf8_lossy(&filter.stderr);
    assert!(
        said.contains("FLIPD_LOG_FILTER: log_filter '=[bad'"),
        "{said}"
    );
    remove_temp_dir(&dir);
}

#[test]
fn flipd_listens_where_flipd_listen_says() {
    let dir = temp_dir("settings-listen");
    // The file's port is one nobody would pick; the variable's is any free one.
    let config = write_config(&dir, "");
    let text = std::fs::read_to_string(&config).unwrap_or_default();
    std::fs::write(&config, text.replace("127.0.0.1:0", "127.0.0.1:9"))
        .unwrap_or_else(|e| panic!("{e}"));
    let daemon = ChildDaemon::start_with_env(&config, &[("FLIPD_LISTEN", "127.0.0.2:0")]);
    assert_eq!(daemon.addr.ip().to_string(), "127.0.0.2");
    assert_serves(daemon.addr);
    drop(daemon);
    remove_temp_dir(&dir);
}

/// What `flipd ARGS` prints, which must succeed.
fn flipd_prints(args: &[&str]) -> String {
    let output = Command::new(workspace_binary("flipd", "flipd"))
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run flipd: {e}"));
    assert!(output.status.success(), "flipd {args:?}: {output:?}");
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn the_manual_in_dist_is_the_one_flipd_prints() {
    let dist = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../dist/flipd.1");
    let kept = std::fs::read_to_string(&dist).unwrap_or_else(|e| panic!("{}: {e}", dist.display()));
    let printed = flipd_prints(&["manual"]);
    assert!(printed.contains("check\\-config"), "the flags are in it");
    assert_eq!(
        kept, printed,
        "dist/flipd.1 is stale: flipd manual > dist/flipd.1"
    );
    assert_eq!(
        pages_named(&printed),
        ["flip(1)"],
        "no page that is not installed"
    );
    for section in [
        "ENVIRONMENT",
        "SIGNALS",
        "FILES",
        "EXIT STATUS",
        "SUBCOMMANDS",
    ] {
        assert!(printed.contains(&format!(".SH {section}\n")), "{section}");
    }
    for setting in flipd::Config::settings().iter().filter(|s| !s.group) {
        let variable = setting.variable().replace('-', "\\-");
        assert!(
            printed.contains(&format!("\\fB{variable}\\fR")),
            "{variable}"
        );
    }
}

/// The other manual pages a page names (`flip(1)`), in order, each once.
pub fn pages_named(page: &str) -> Vec<String> {
    let mut named: Vec<String> = Vec::new();
    let words = page.split(|c: char| c.is_whitespace() || c == ',');
    for word in words.filter(|w| w.ends_with("(1)") || w.ends_with("(8)")) {
        if !named.iter().any(|n| n == word) {
            named.push(word.to_string());
        }
    }
    named
}

#[test]
fn completions_are_made_for_each_shell_from_the_flags() {
    for (shell, mark) in [
        ("bash", "_flipd()"),
        ("zsh", "#compdef flipd"),
        ("fish", "complete -c flipd"),
    ] {
        let script = flipd_prints(&["completions", shell]);
        assert!(script.contains(mark), "{shell}: {script}");
        assert!(script.contains("check-config"), "{shell}");
    }
}
