//! The metrics listener: `/metrics` in Prometheus's text format, every line
//! checked against the format's grammar, counters moving as games are
//! played; `/healthz` 503 while the store refuses writes.

use std::net::SocketAddr;

use flipd::store::Faults;
use flipline_tests::*;

fn is_metric_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == ':')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':')
}

fn is_value(value: &str) -> bool {
    matches!(value, "+Inf" | "-Inf" | "NaN") || value.parse::<f64>().is_ok()
}

/// Whether `labels` (between the braces) is `name="value",...`.
fn are_labels(labels: &str) -> bool {
    labels.split(',').filter(|l| !l.is_empty()).all(|label| {
        label.split_once('=').is_some_and(|(name, value)| {
            is_metric_name(name)
                && value.len() >= 2
                && value.starts_with('"')
                && value.ends_with('"')
        })
    })
}

/// Checks one line of the text format (version 0.0.4); returns the sample's
/// name, labels and value when it is one.
fn check_line(line: &str) -> Option<(String, String, f64)> {
    if let Some(comment) = line.strip_prefix("# ") {
        let mut words = comment.splitn(3, ' ');
        let (kind, name) = (words.next().unwrap_or(""), words.next().unwrap_or(""));
        if kind == "TYPE" {
            let metric_type = words.next().unwrap_or("");
            assert!(is_metric_name(name), "{line}");
            assert!(
                ["counter", "gauge", "histogram", "summary", "untyped"].contains(&metric_type),
                "{line}"
            );
        } else if kind == "HELP" {
            assert!(is_metric_name(name), "{line}");
        }
        return None;
    }
    let (series, value) = line
        .rsplit_once(' ')
        .unwrap_or_else(|| panic!("no value: {line}"));
    assert!(is_value(value), "bad value: {line}");
    let (name, labels) = match series.split_once('{') {
        Some((name, rest)) => (
            name,
            rest.strip_suffix('}').unwrap_or_else(|| panic!("{line}")),
        ),
        None => (series, ""),
    };
    assert!(is_metric_name(name), "bad name: {line}");
    assert!(are_labels(labels), "bad labels: {line}");
    Some((
        name.to_string(),
        labels.to_string(),
        value.parse().unwrap_or(f64::NAN),
    ))
}

/// A scrape, checked line by line: its samples.
fn scrape(addr: SocketAddr) -> Vec<(String, String, f64)> {
    let (status, body) = http_get(addr, "/metrics");
    assert_eq!(status, 200, "{body}");
    assert!(body.ends_with('\n'));
    body.lines().filter_map(check_line).collect()
}

fn sample(samples: &[(String, String, f64)], name: &str, labels: &str) -> f64 {
    samples
        .iter()
        .find(|(n, l, _)| n == name && l == labels)
        .map(|(_, _, v)| *v)
        .unwrap_or_else(|| panic!("no {name}{{{labels}}}"))
}

#[test]
fn metrics_follow_the_games_in_the_text_format() {
    let mut config = test_config();
    config.metrics.listen = "127.0.0.1:0".to_string();
    let daemon = start(config);
    let metrics = daemon
        .metrics
        .unwrap_or_else(|| panic!("no metrics listener"));
    let before = scrape(metrics);
    let mut ann = Client::login_as(daemon.addr, "ann");
    let g = ann.ok_game("NEW othello hotseat");
    ann.lines_through(&format!("TURN {g} X"));
    for mv in ["f5", "d6", "c3"] {
        ann.ok(&format!("MOVE {mv}"));
    }
    ann.err("MOVE a1", 422);
    let during = scrape(metrics);
    let moved =
        sample(&during, "flipline_moves_total", "") - sample(&before, "flipline_moves_total", "");
    assert!(moved >= 3.0, "{moved}");
    let illegal = r#"code="422""#;
    let refused = sample(&during, "flipline_errors_total", illegal)
        - sample(&before, "flipline_errors_total", illegal);
    assert!(refused >= 1.0, "{refused}");
    assert!(sample(&during, "flipline_connections", "") >= 1.0);
    assert!(sample(&during, "flipline_games_in_play", "") >= 1.0);
    let count = sample(&during, "flipline_move_seconds_count", "");
    assert_eq!(
        sample(&during, "flipline_move_seconds_bucket", r#"le="+Inf""#),
        count
    );
    // The writer times a batch after it has answered it: the last commit's
    // time may come a moment after its OK.
    wait_until(
        "a commit time for a game and three moves",
        HANG_GUARD,
        || sample(&scrape(metrics), "flipline_commit_seconds_count", "") >= 4.0,
    );
    let (status, _) = http_get(metrics, "/nothing");
    assert_eq!(status, 404);
}

#[test]
fn healthz_is_503_while_the_store_refuses_writes() {
    let faults = Faults::new();
    let mut config = test_config();
    config.metrics.listen = "127.0.0.1:0".to_string();
    config.store.faults = Some(faults.clone());
    let daemon = start(config);
    let metrics = daemon
        .metrics
        .unwrap_or_else(|| panic!("no metrics listener"));
    assert_eq!(http_get(metrics, "/healthz"), (200, "ok\n".to_string()));
    let mut ann = Client::login_as(daemon.addr, "ann");
    let g = ann.ok_game("NEW othello hotseat");
    ann.lines_through(&format!("TURN {g} X"));
    faults.fail_writes();
    ann.err("MOVE f5", 503);
    let (status, body) = http_get(metrics, "/healthz");
    assert_eq!((status, body.as_str()), (503, "the store refuses writes\n"));
    faults.heal();
    assert_eq!(ann.ok("MOVE f5").1, "OK");
    assert_eq!(http_get(metrics, "/healthz").0, 200);
}
