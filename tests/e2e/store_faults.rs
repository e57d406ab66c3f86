//! The store on a sick disk: a second flipd reaching a running one's store
//! through a link, a volume that fills up (a small tmpfs, so these tests run
//! as root and fail, never skip, without it), the WAL file removed under a
//! running daemon, and a damaged row at a restart.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use flipline_tests::*;

/// A configuration file for the `flipd` binary with its store at `store`.
fn config_for_store(dir: &Path, store: &Path) -> PathBuf {
    let text = format!(
        "(\n    listen: \"127.0.0.1:0\",\n    workers: 1,\n    store: (path: {:?}),\n)\n",
        store.display().to_string()
    );
    let path = dir.join("flipd.ron");
    std::fs::write(&path, text).unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
    path
}

/// Runs the `flipd` binary with `config` (bounded in time) and returns its log,
/// asserting that it exited with an error.
fn refused_binary(config: &Path) -> String {
    let child = Command::new(workspace_binary("flipd", "flipd"))
        .arg("--config")
        .arg(config)
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run flipd: {e}"));
    let output = wait_bounded(child, Duration::from_secs(20));
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(!output.status.success(), "a second flipd ran: {stderr}");
    stderr
}

#[test]
fn a_second_flipd_on_a_link_to_a_running_ones_store_is_refused() {
    let daemon = start(test_config());
    let store = daemon.config.store.path.clone();
    let links = temp_dir("links");
    let symlink = links.join("symlink.db");
    let hard_link = links.join("hard-link.db");
    std::os::unix::fs::symlink(&store, &symlink).unwrap_or_else(|e| panic!("symlink: {e}"));
    std::fs::hard_link(&store, &hard_link).unwrap_or_else(|e| panic!("hard link: {e}"));
    for link in [&symlink, &hard_link] {
        // In this process, as a second in-process daemon would start.
        let mut config = daemon.config.clone();
        config.store.path = link.clone();
        let error = DaemonThread::start(config)
            .err()
            .unwrap_or_else(|| panic!("a second daemon started on {}", link.display()))
            .to_string();
        assert!(error.contains("in use by another flipd"), "{error}");
        assert!(error.contains(&link.display().to_string()), "{error}");
        // And the binary, another process.
        let dir = temp_dir("second-flipd");
        let log = refused_binary(&config_for_store(&dir, link));
        assert!(log.contains("in use by another flipd"), "{log}");
        assert!(log.contains(&link.display().to_string()), "{log}");
        remove_temp_dir(&dir);
    }
    // The first daemon plays on, its store its own.
    let mut c = Client::login_as(daemon.addr, "first");
    let g = c.ok_game("NEW othello hotseat");
    assert_eq!(c.ok("MOVE f5").1, "OK");
    let (history, _) = c.ok(&format!("HISTORY {g}"));
    assert!(
        history.last().is_some_and(|l| l.ends_with(" playing - f5")),
        "{history:?}"
    );
    drop(daemon);
    remove_temp_dir(&links);
}
