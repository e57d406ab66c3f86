//! `flip-bench load` at tiny scale against a real daemon: games finish, nothing
//! errs, and the report has the figures it promises; and, with a descriptor
//! table per worker thread, more connections than the open-file limit lets one
//! table hold.

use std::process::{Command, Stdio};
use std::time::Duration;

use flipline_tests::{
    ChildDaemon, HANG_GUARD, remove_temp_dir, start, temp_dir, test_config, wait_bounded,
    with_open_file_limit, workspace_binary, write_config,
};

/// Runs `flip-bench load` with `args` (bounded in time) and returns its report.
fn load_report(args: &[&str]) -> String {
    let binary = workspace_binary("flipline-tests", "flip-bench");
    let mut command = Command::new(&binary);
    command.arg("load").args(args);
    run_report(command)
}

/// As [`load_report`], with the open-file limit (soft and hard) at `open_files`.
fn load_report_limited(open_files: u32, args: &[&str]) -> String {
    let mut command = with_open_file_limit(
        open_files,
        &workspace_binary("flipline-tests", "flip-bench"),
    );
    command.arg("load").args(args);
    run_report(command)
}

fn run_report(mut command: Command) -> String {
    let child = command
        .stdout(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start flip-bench load: {e}"));
    let output = wait_bounded(child, Duration::from_secs(60));
    assert!(
        output.status.success(),
        "flip-bench load failed: {output:?}"
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// The number after `name ` on its line of the report.
fn figure(report: &str, name: &str) -> f64 {
    report
        .lines()
        .find_map(|line| line.strip_prefix(name)?.strip_prefix(' '))
        .and_then(|rest| rest.split_whitespace().next()?.parse().ok())
        .unwrap_or_else(|| panic!("no '{name}' in the report:\n{report}"))
}

/// The longest a window with `--rounds` may stay open: far more than the
/// games take, and less than the bound on the whole run.
const ROUNDS_CAP: &str = "40";

#[test]
fn twenty_games_each_finished_once_without_errors() {
    let daemon = start(test_config());
    let pid = std::process::id().to_string();
    let server = daemon.addr.to_string();
    let report = load_report(&[
        "--server",
        &server,
        "--games",
        "20",
        "--rounds",
        "1",
        "--duration",
        ROUNDS_CAP,
        "--think-ms",
        "20",
        "--variant",
        "tictactoe",
        "--pid",
        &pid,
    ]);
    assert_eq!(figure(&report, "connections"), 40.0, "{report}");
    assert_eq!(figure(&report, "rounds done"), 40.0, "{report}");
    assert!(figure(&report, "games") >= 1.0, "{report}");
    assert!(figure(&report, "moves/s") > 0.0, "{report}");
    assert_eq!(figure(&report, "errors"), 0.0, "{report}");
    assert!(
        figure(&report, "latency p99") >= figure(&report, "latency p50"),
        "{report}"
    );
    assert!(figure(&report, "rss after") > 0.0, "{report}");
}

#[test]
fn the_json_report_is_one_object_with_the_same_figures() {
    let daemon = start(test_config());
    let server = daemon.addr.to_string();
    let report = load_report(&[
        "--server",
        &server,
        "--games",
        "4",
        "--rounds",
        "1",
        "--duration",
        ROUNDS_CAP,
        "--think-ms",
        "20",
        "--variant",
        "tictactoe",
        "--json",
    ]);
    let line = report.trim();
    assert!(line.starts_with('{') && line.ends_with('}'), "{report}");
    assert_eq!(report.lines().count(), 1, "{report}");
    for key in [
        "\"connections\":8",
        "\"moves_per_s\":",
        "\"latency_ms\":{\"p50\":",
        "\"errors\":{\"total\":0",
        "\"rounds\":{\"asked\":1,\"done\":8}",
    ] {
        assert!(line.contains(key), "{key} missing in {line}");
    }
}

/// The open-file limit caps each descriptor table: flipd, limited to 200, holds
/// 200 connections at once (one table could hold 136 of them) over two
/// workers' tables, plays games on all of them
/// (the games and sessions on different threads wake each other across the
/// tables) and still stops cleanly on SIGTERM (the signal may land on any thread).
#[test]
fn a_table_per_worker_holds_more_connections_than_the_open_file_limit() {
    let dir = temp_dir("tables");
    let config = write_config(
        &dir,
        "descriptor_tables: per_worker, rate_limit: (per_second: 100000, burst: 100000),",
    );
    let mut daemon = ChildDaemon::start_limited(&config, 200);
    let limits =
        std::fs::read_to_string(format!("/proc/{}/limits", daemon.child.id())).unwrap_or_default();
    let open_files = limits
        .lines()
        .find(|line| line.starts_with("Max open files"))
        .map(|line| line.split_whitespace().skip(3).take(2).collect::<Vec<_>>());
    assert_eq!(open_files, Some(vec!["200", "200"]), "{limits}");
    let server = daemon.addr.to_string();
    let report = load_report(&[
        "--server",
        &server,
        "--games",
        "100",
        "--rounds",
        "1",
        "--duration",
        ROUNDS_CAP,
        "--think-ms",
        "5",
        "--variant",
        "tictactoe",
    ]);
    assert_eq!(figure(&report, "connections"), 200.0, "{report}");
    assert_eq!(figure(&report, "rounds done"), 200.0, "{report}");
    assert_eq!(figure(&report, "errors"), 0.0, "{report}");
    daemon.terminate();
    assert_eq!(daemon.wait_exit(HANG_GUARD), Some(0));
    remove_temp_dir(&dir);
}

/// More connections than one process of `flip-bench load` may open: it runs as
/// several processes, lines up their windows and reports their sum.
#[test]
fn more_games_than_one_load_process_can_hold_are_spread_over_several() {
    let mut config = test_config();
    config.rate_limit.per_second = 100_000;
    config.rate_limit.burst = 100_000;
    let daemon = start(config);
    let server = daemon.addr.to_string();
    let report = load_report_limited(
        100,
        &[
            "--server",
            &server,
            "--games",
            "60",
            "--rounds",
            "1",
            "--duration",
            ROUNDS_CAP,
            "--think-ms",
            "5",
            "--variant",
            "tictactoe",
        ],
    );
    assert!(
        report.contains("note one process holds at most 36 connections"),
        "{report}"
    );
    assert!(report.contains("note 4 load processes"), "{report}");
    assert_eq!(figure(&report, "connections"), 120.0, "{report}");
    assert_eq!(figure(&report, "rounds done"), 120.0, "{report}");
    assert!(figure(&report, "games") >= 1.0, "{report}");
    assert!(figure(&report, "moves/s") > 0.0, "{report}");
    assert_eq!(figure(&report, "errors"), 0.0, "{report}");
}
