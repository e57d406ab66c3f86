//! SIGHUP to the real `flipd` binary: it reads its configuration file again,
//! applies the settings a running daemon can change (limits, the log filter),
//! names the ones that wait for a restart, keeps serving through a file that
//! cannot be read, and still stops cleanly on SIGTERM.

use std::time::Duration;

use flipline_tests::*;

/// How long the daemon may take to log a reload: a guard against a hang.
const RELOAD_WITHIN: Duration = HANG_GUARD;

/// Sends `count` PINGs in one write and counts the replies: (`OK pong`,
/// `ERR 429`), and the whole seconds from the write to the last reply.
fn pings(client: &mut Client, count: usize) -> (usize, usize, usize) {
    let sent = std::time::Instant::now();
    client.send_bytes("PING\n".repeat(count).as_bytes());
    let (mut pong, mut limited) = (0, 0);
    for _ in 0..count {
        let (data, reply) = client.final_reply("PING");
        assert!(data.is_empty(), "{data:?}");
        match reply.as_str() {
            "OK pong" => pong += 1,
            r if r.starts_with("ERR 429 ") => limited += 1,
            other => panic!("PING -> {other}"),
        }
    }
    let seconds = usize::try_from(sent.elapsed().as_secs()).unwrap_or(usize::MAX);
    (pong, limited, seconds)
}

#[test]
fn sighup_applies_new_limits_and_log_filter_and_the_daemon_serves_on() {
    let dir = temp_dir("sighup");
    let config = write_config(&dir, "rate_limit: (per_second: 1000, burst: 1000),");
    let mut daemon = ChildDaemon::start_filtered_by_file(&config);
    let mut early = Client::connect(daemon.addr);
    assert_eq!(pings(&mut early, 20).0, 20, "the first limit lets 20 by");
    assert_serves(daemon.addr);
    assert!(
        daemon.log_lines_with(": connected").is_empty(),
        "log_filter info hides the debug lines"
    );

    write_config(
        &dir,
        "rate_limit: (per_second: 1, burst: 5), max_line_bytes: 100, \
         log_filter: \"info,flipd=debug\", grace_secs: 5,",
    );
    daemon.hangup();
    let reloaded = daemon.wait_for_log("reloaded the configuration", 1, RELOAD_WITHIN);
    let line = &reloaded[0];
    assert!(
        line.contains("applied max_line_bytes, rate_limit, log_filter"),
        "{line}"
    );
    assert!(line.contains("kept until a restart: grace_secs"), "{line}");
    assert_serves(daemon.addr);
    daemon.wait_for_log(": connected", 1, RELOAD_WITHIN);
    // The connection made before the reload has the new rate limit: its
    // bucket holds no more than the new burst of 5 (not the old 1000), and
    // earns a token a second, so no more pass than 5 and the seconds the
    // daemon had (within those the test saw, however long a loaded machine
    // makes them); at least the burst passes.
    let (pong, limited, seconds) = pings(&mut early, 20);
    assert!(
        (5..=5 + seconds).contains(&pong),
        "{pong} answered, {limited} limited in {seconds} s"
    );
    assert_eq!(pong + limited, 20);
    // A new connection has the new longest line.
    let mut late = Client::connect(daemon.addr);
    let refused = late.err(&format!("SAY {}", "x".repeat(150)), 413);
    assert!(refused.contains("at most 100 bytes"), "{refused}");

    // A file that does not parse: the daemon says so and goes on as it was.
    std::fs::write(&config, "(rate_limit: (per_second: ")
        .unwrap_or_else(|e| panic!("cannot write {}: {e}", config.display()));
    daemon.hangup();
    let refused = daemon.wait_for_log("cannot reload the configuration", 1, RELOAD_WITHIN);
    assert!(refused[0].contains("flipd.ron"), "{}", refused[0]);
    assert_serves(daemon.addr);
    let (pong, limited, seconds) = pings(&mut early, 20);
    assert!(
        pong <= 5 + seconds,
        "the reloaded limit stays: {pong} answered, {limited} limited in {seconds} s"
    );

    daemon.terminate();
    assert_eq!(daemon.wait_exit(HANG_GUARD), Some(0));
    daemon.wait_for_log("store closed", 1, RELOAD_WITHIN);
    remove_temp_dir(&dir);
}
