//! The cluster's bus logs in: a node refuses a NATS server that lets anyone
//! in (whoever can publish on the cluster's subjects could seat any
//! player) unless told `nats_insecure`, and logs in with the credentials
//! its settings give. Real flipd processes, a NATS server of the test's
//! own and the tests' PostgreSQL server.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use flipline_test_servers::ScratchDatabase;
use flipline_tests::*;

use crate::cluster::node_config_with;

/// Runs flipd on `config` until it stops by itself (at most a minute):
/// its exit and what it logged.
fn run_to_its_end(config: &Path) -> std::process::Output {
    let child = Command::new(workspace_binary("flipd", "flipd"))
        .arg("--config")
        .arg(config)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run flipd: {e}"));
    wait_bounded(child, Duration::from_secs(60))
}

/// `config` with `line` added to its cluster group.
fn with_cluster_setting(config: &Path, line: &str) {
    let shown = config.display();
    let text = std::fs::read_to_string(config).unwrap_or_else(|e| panic!("{shown}: {e}"));
    let text = text.replacen("cluster: (", &format!("cluster: ({line}, "), 1);
    std::fs::write(config, text).unwrap_or_else(|e| panic!("{shown}: {e}"));
}

#[test]
fn a_node_refuses_a_nats_server_that_lets_anyone_in_unless_told_insecure() {
    if nats_server().is_none() {
        return;
    }
    let Some(db) = ScratchDatabase::new("bus_open_server") else {
        return;
    };
    let dir = temp_dir("cluster-bus-open");
    let nats_dir = dir.join("nats").display().to_string();
    let open = nats_tool(&["start", &nats_dir, "24222", "open"]);
    // Credentials the server does not ask for are no protection.
    let with_user = open.replacen("nats://", "nats://flipd:unasked@", 1);
    let config = node_config_with(&dir, "a", &db.url, &with_user);
    let refused = run_to_its_end(&config);
    let log = String::from_utf8_lossy(&refused.stderr);
    assert!(!refused.status.success(), "{log}");
    assert!(log.contains("lets anyone connect"), "{log}");
    assert!(
        !log.contains("unasked"),
        "the password is never shown: {log}"
    );

    // Told that the network is closed, it starts and serves.
    let config = node_config_with(&dir, "b", &db.url, &open);
    with_cluster_setting(&config, "nats_insecure: true");
    let node = ChildDaemon::start_with(&config);
    let mut ann = Client::login_as(node.addr, "ann");
    ann.ok_game("NEW othello vs bot:1 as X");
    drop(node);
    nats_tool(&["stop", &nats_dir]);
    remove_temp_dir(&dir);
}

#[test]
fn a_node_logs_in_to_nats_with_a_password_from_a_file() {
    let Some(nats) = nats_server() else {
        return;
    };
    let Some(db) = ScratchDatabase::new("bus_password_file") else {
        return;
    };
    // The tests' server asks for the user flipd and its password: the URL
    // names the user, the file holds the password.
    let Some((user_part, host)) = nats.trim_start_matches("nats://").split_once('@') else {
        panic!("the tests' NATS URL carries no user: {nats}")
    };
    let Some((user, password)) = user_part.split_once(':') else {
        panic!("the tests' NATS URL carries no password")
    };
    let dir = temp_dir("cluster-bus-password-file");
    let file = dir.join("nats-password");
    std::fs::create_dir_all(&dir)
        .and_then(|()| std::fs::write(&file, format!("{password}\n")))
        .unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    let nodes: Vec<ChildDaemon> = ["a", "b"]
        .iter()
        .map(|node| {
            let config = node_config_with(&dir, node, &db.url, &format!("nats://{user}@{host}"));
            with_cluster_setting(&config, &format!("nats_password_file: {file:?}"));
            ChildDaemon::start_with(&config)
        })
        .collect();
    // A game on a is watched from b: the bus carries it.
    let mut ann = Client::login_as(nodes[0].addr, "ann");
    let game = ann.ok_game("NEW othello vs bot:1 as X");
    let mut bob = Client::login_as(nodes[1].addr, "bob");
    let (_, watched) = bob.ok(&format!("WATCH {game}"));
    assert_eq!(watched, format!("OK {game}"));
    drop(nodes);
    remove_temp_dir(&dir);
}
