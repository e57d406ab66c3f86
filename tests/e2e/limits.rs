//! Bad input and the daemon's limits: unknown commands, long lines, bad bytes,
//! empty lines, floods, the connection cap, clients that never read, idle
//! connections. After each, the daemon still serves a new connection.

use std::io::ErrorKind;
use std::time::{Duration, Instant};

use flipline_tests::*;

#[test]
fn unknown_commands_and_bad_arguments_are_400_and_the_connection_stays() {
    let daemon = start(test_config());
    let mut c = Client::connect(daemon.addr);
    let err = c.err("FROB 1 2", 400);
    assert_eq!(err, "ERR 400 unknown command 'FROB'");
    for line in [
        "NEW chess",
        "NEW vs bot:11",
        "SEEK clock 5",
        "PING now",
        "SAY",
        "WATCH x",
    ] {
        c.err(line, 400);
    }
    // Keywords are case-insensitive, CRLF is accepted.
    c.send_bytes(b"pInG\r\n");
    assert_eq!(c.line(), "OK pong");
    assert_serves(daemon.addr);
}

#[test]
fn an_over_long_line_is_413_and_the_connection_still_answers() {
    let mut config = test_config();
    config.max_line_bytes = 64;
    let daemon = start(config);
    let mut c = Client::connect(daemon.addr);
    let long = format!("SAY {}", "x".repeat(200));
    let err = c.err(&long, 413);
    assert_eq!(err, "ERR 413 line too long (at most 64 bytes)");
    // Longer than any read buffer, sent in pieces: still one 413.
    let huge = "y".repeat(100_000);
    c.send_bytes(huge.as_bytes());
    c.send_bytes(b"\nPING\n");
    assert!(c.line().starts_with("ERR 413 "));
    assert_eq!(c.line(), "OK pong");
    // Exactly the limit is fine.
    let fits = format!("LOGIN {}", "a".repeat(14));
    let at_limit = format!("{fits}{}", " ".repeat(64 - fits.len()));
    assert_eq!(at_limit.len(), 64);
    let reply = c.ok(&at_limit).1;
    assert_eq!(c.logged_in(&reply), Some("a".repeat(14)), "{reply}");
    assert_serves(daemon.addr);
}

#[test]
fn invalid_utf8_is_400_and_the_connection_stays() {
    let daemon = start(test_config());
    let mut c = Client::connect(daemon.addr);
    c.send_bytes(b"SAY \xff\xfe hello\n");
    assert_eq!(c.line(), "ERR 400 line is not UTF-8");
    c.send_bytes(b"\xc3\n");
    assert_eq!(c.line(), "ERR 400 line is not UTF-8");
    assert_eq!(c.ok("PING").1, "OK pong");
    assert_serves(daemon.addr);
}

#[test]
fn empty_lines_get_no_reply_and_do_not_count_against_the_rate_limit() {
    let mut config = test_config();
    config.rate_limit.per_second = 1;
    config.rate_limit.burst = 1;
    let daemon = start(config);
    let mut c = Client::connect(daemon.addr);
    c.send_bytes(b"\n\r\n   \n\t\n");
    c.send_bytes("\n".repeat(50).as_bytes());
    c.expect_silence(Duration::from_millis(200));
    // The next command's reply is the first line, and it is within the limit.
    assert_eq!(c.command("PING"), (vec![], "OK pong".to_string()));
    assert_serves(daemon.addr);
}

#[test]
fn a_quit_after_a_flood_is_carried_out_whatever_the_rate() {
    let mut config = test_config();
    config.rate_limit.per_second = 1;
    config.rate_limit.burst = 5;
    let daemon = start(config);
    let mut c = Client::connect(daemon.addr);
    c.send_bytes(format!("{}QUIT\n", "PING\n".repeat(20)).as_bytes());
    let lines = c.expect_closed(HANG_GUARD);
    assert_eq!(
        lines.last().map(String::as_str),
        Some("OK bye"),
        "{lines:?}"
    );
    assert_eq!(lines.len(), 21, "one reply each, then closed: {lines:?}");
}

#[test]
fn a_flood_gets_429_and_each_command_still_gets_one_reply() {
    let mut config = test_config();
    config.rate_limit.per_second = 1;
    config.rate_limit.burst = 5;
    let daemon = start(config);
    let mut c = Client::connect(daemon.addr);
    let sent = Instant::now();
    c.send_bytes("PING\n".repeat(20).as_bytes());
    let replies: Vec<String> = (0..20).map(|_| c.line()).collect();
    let window = sent.elapsed();
    let pongs = replies.iter().filter(|r| *r == "OK pong").count();
    let slow = replies
        .iter()
        .filter(|r| r.starts_with("ERR 429 too many commands, slow down: wait "))
        .count();
    assert_eq!(pongs + slow, 20, "{replies:?}");
    // The burst passes whole...
    assert!(
        replies[..5].iter().all(|r| r == "OK pong"),
        "burst of 5: {replies:?}"
    );
    // ...and past it a command passes only on a token earned since, at one
    // a second: no more than the seconds the daemon had (which lie within
    // the test's window, however long a loaded machine makes it). The
    // bucket's arithmetic itself is the daemon's unit test.
    let earned = usize::try_from(window.as_secs()).unwrap_or(usize::MAX);
    assert!(
        pongs <= 5 + earned,
        "{pongs} passed in {window:?}: {replies:?}"
    );
    // At 1 token a second, the wait told is at most a second and not nothing.
    let waits: Vec<f64> = replies
        .iter()
        .filter_map(|r| r.strip_prefix("ERR 429 too many commands, slow down: wait "))
        .map(|wait| wait.trim_end_matches(" s").parse().unwrap())
        .collect();
    assert!(waits.iter().all(|w| *w > 0.0 && *w <= 1.0), "{replies:?}");
    // The bucket refills: a second later a command goes through again.
    std::thread::sleep(Duration::from_millis(1100));
    assert_eq!(c.command("PING").1, "OK pong");
    assert_serves(daemon.addr);
}

#[test]
fn past_max_connections_a_connection_gets_503_and_is_closed() {
    let mut config = test_config();
    config.max_connections = 2;
    let daemon = start(config);
    let mut first = Client::connect(daemon.addr);
    let mut second = Client::connect(daemon.addr);
    let mut third = Client::connect_raw(daemon.addr);
    assert_eq!(third.line(), "ERR 503 server full");
    third.expect_closed(HANG_GUARD);
    // The two inside are unaffected.
    assert_eq!(first.command("PING").1, "OK pong");
    assert_eq!(second.command("PING").1, "OK pong");
    // Once one leaves, a newcomer gets in (as soon as the daemon sees it go).
    first.ok("QUIT");
    first.expect_closed(HANG_GUARD);
    let mut newcomer = connect_when_there_is_room(daemon.addr);
    assert_eq!(newcomer.command("PING").1, "OK pong");
}

/// Connects until the daemon greets instead of answering `503` (as soon as it
/// has seen a connection go), up to the hang guard.
fn connect_when_there_is_room(addr: std::net::SocketAddr) -> Client {
    let deadline = Instant::now() + HANG_GUARD;
    loop {
        let mut c = Client::connect_raw(addr);
        let line = c.line();
        if line == "HELLO flipline 1" {
            return c;
        }
        assert_eq!(line, "ERR 503 server full");
        assert!(
            Instant::now() < deadline,
            "hang guard: the place was never freed"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Past what its descriptor table holds (the open-file limit, 100 here, less
/// 64 kept for other files) a connection is told `503` at once rather than
/// left waiting in the listening socket's queue; one that leaves makes room.
#[test]
fn past_what_the_descriptor_table_holds_a_connection_gets_503() {
    let dir = temp_dir("table-cap");
    let config = write_config(&dir, "descriptor_tables: shared,");
    let daemon = ChildDaemon::start_limited(&config, 100);
    let mut inside: Vec<Client> = (0..36).map(|_| Client::connect(daemon.addr)).collect();
    for _ in 0..3 {
        let mut refused = Client::connect_raw(daemon.addr);
        assert_eq!(refused.line(), "ERR 503 server full");
        refused.expect_closed(HANG_GUARD);
    }
    assert_eq!(inside[0].command("PING").1, "OK pong");
    inside[0].ok("QUIT");
    inside[0].expect_closed(HANG_GUARD);
    connect_when_there_is_room(daemon.addr);
    drop(inside);
    drop(daemon);
    remove_temp_dir(&dir);
}

/// With a table per worker each table is capped by itself: two workers under
/// a limit of 100 hold at most 36 connections each, and the rest hear `503`.
#[test]
fn with_a_table_per_worker_each_table_caps_its_own_connections() {
    let dir = temp_dir("worker-table-cap");
    let config = write_config(&dir, "descriptor_tables: per_worker,");
    let daemon = ChildDaemon::start_limited(&config, 100);
    let mut held = Vec::new();
    let mut refused = 0;
    for _ in 0..100 {
        let mut c = Client::connect_raw(daemon.addr);
        match c.line().as_str() {
            "HELLO flipline 1" => held.push(c),
            "ERR 503 server full" => refused += 1,
            other => panic!("unexpected greeting {other:?}"),
        }
    }
    assert!(
        held.len() > 36,
        "more than one table's worth: {}",
        held.len()
    );
    assert!(
        held.len() <= 72,
        "at most two tables' worth: {}",
        held.len()
    );
    assert_eq!(held.len() + refused, 100);
    assert_eq!(held[0].command("PING").1, "OK pong");
    drop(held);
    drop(daemon);
    remove_temp_dir(&dir);
}

/// Sockets that share a port (`SO_REUSEPORT`, a table per worker) would share
/// it with a second such daemon too, splitting the connections between them:
/// the second is told the port is in use and exits, the first serves on.
#[test]
fn a_second_daemon_with_tables_per_worker_is_refused_the_port() {
    let dir = temp_dir("port-twice");
    let first_config = write_config(&dir, "descriptor_tables: per_worker,");
    let first = ChildDaemon::start_with(&first_config);
    let second_config = dir.join("second.ron");
    let text = format!(
        "(listen: \"{}\", workers: 2, descriptor_tables: per_worker, store: (path: {:?}))",
        first.addr,
        dir.join("second.db").display().to_string()
    );
    std::fs::write(&second_config, text).unwrap_or_else(|e| panic!("{e}"));
    let second = std::process::Command::new(workspace_binary("flipd", "flipd"))
        .arg("--config")
        .arg(&second_config)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run flipd: {e}"));
    let output = wait_bounded(second, HANG_GUARD);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "{stderr}");
    assert!(stderr.contains("cannot listen on"), "{stderr}");
    assert_serves(first.addr);
    drop(first);
    remove_temp_dir(&dir);
}

#[test]
fn a_client_that_never_reads_is_disconnected_and_others_carry_on() {
    let mut config = test_config();
    config.outbound_queue_lines = 16;
    config.rate_limit.per_second = 1_000_000;
    config.rate_limit.burst = 1_000_000;
    let daemon = start(config);
    let (mut a, mut b, start) = new_and_join(daemon.addr, "othello", ["qa", "qb"]);
    let g = start.game;
    let mut stuck = Client::connect(daemon.addr);
    // Each HELP answers with 20 lines; the socket buffers fill, then the queue.
    let burst = "HELP\n".repeat(1000);
    let began = Instant::now();
    let mut sent = 0;
    let refused = loop {
        match stuck.try_send_bytes(burst.as_bytes()) {
            Ok(()) => sent += 1000,
            Err(e) => break e,
        }
        assert!(
            began.elapsed() < HANG_GUARD,
            "hang guard: never disconnected after {sent} HELPs"
        );
    };
    // The server closed the socket (reset or broken pipe); a write timeout
    // would mean it had merely stopped reading.
    assert!(
        !matches!(refused.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut),
        "{refused}"
    );
    let read = stuck.drain_until_closed(HANG_GUARD);
    eprintln!(
        "disconnected after {sent} HELPs sent, {read} bytes read back, {:?}",
        began.elapsed()
    );
    // The game next door did not notice.
    a.lines_through(&format!("TURN {g} X"));
    b.lines_through(&format!("TURN {g} X"));
    assert_eq!(a.ok("MOVE d3").1, "OK");
    assert!(b.line().starts_with(&format!("MOVED {g} X d3 ")));
    assert_serves(daemon.addr);
}

#[test]
fn an_idle_connection_is_closed_and_a_talking_one_is_not() {
    let mut config = test_config();
    // Long beside a round trip of the talker's, so that only a silence of
    // seconds (not a busy machine) would close it.
    config.idle_timeout_secs = 3;
    let daemon = start(config);
    let mut quiet = Client::connect(daemon.addr);
    let mut talker = Client::connect(daemon.addr);
    let began = Instant::now();
    let quiet_closed = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let closed = std::sync::Arc::clone(&quiet_closed);
    // The talker talks until the quiet one has been closed.
    let talking = std::thread::spawn(move || {
        let mut pings = 0;
        while !closed.load(std::sync::atomic::Ordering::Acquire) {
            assert_eq!(talker.command("PING").1, "OK pong");
            pings += 1;
            std::thread::sleep(Duration::from_millis(50));
        }
        (talker, pings)
    });
    let lines = quiet.expect_closed(HANG_GUARD);
    let waited = began.elapsed();
    quiet_closed.store(true, std::sync::atomic::Ordering::Release);
    assert_eq!(lines, ["INFO closing an idle connection"]);
    assert!(
        waited >= Duration::from_millis(2900),
        "closed after {waited:?}, before the timeout"
    );
    // The talker outlived the timeout by talking.
    let (mut talker, pings) = talking.join().unwrap();
    assert!(pings >= 1, "the talker never talked");
    assert_eq!(talker.command("PING").1, "OK pong");
    assert_serves(daemon.addr);
}

#[test]
fn a_client_that_pipelines_many_commands_and_reads_is_not_disconnected() {
    let mut config = test_config();
    config.outbound_queue_lines = 16;
    config.rate_limit.per_second = 1_000_000;
    config.rate_limit.burst = 1_000_000;
    let daemon = start(config);
    let mut c = Client::connect(daemon.addr);
    let n = 5000;
    c.send_bytes("PING\n".repeat(n).as_bytes());
    for i in 0..n {
        assert_eq!(c.line(), "OK pong", "reply {i}");
    }
    c.send_bytes("HELP\n".repeat(200).as_bytes());
    for _ in 0..200 {
        let (help, ok) = c.final_reply("HELP");
        assert_eq!(ok, "OK");
        for (usage, _) in flipline::protocol::COMMAND_HELP {
            assert!(help.iter().any(|l| l.contains(usage)), "{usage}: {help:?}");
        }
    }
}

#[test]
fn pipelined_commands_that_wait_for_answers_are_answered_in_order() {
    let daemon = start(test_config());
    let mut c = Client::connect(daemon.addr);
    // One write: each HISTORY waits for the store before the next line is read.
    c.send_bytes(b"LOGIN pipe\nHISTORY 999\nPING\nHISTORY 998\r\nPING\nNOPE\nPING");
    let mut replies = Vec::new();
    for _ in 0..6 {
        replies.push(c.line());
    }
    // The last line has no line ending yet: it waits for one.
    c.expect_silence(Duration::from_millis(200));
    assert!(replies[0].starts_with("OK"), "{replies:?}");
    assert!(replies[1].starts_with("ERR 404"), "{replies:?}");
    assert_eq!(replies[2], "OK pong", "{replies:?}");
    assert!(replies[3].starts_with("ERR 404"), "{replies:?}");
    assert_eq!(replies[4], "OK pong", "{replies:?}");
    assert!(replies[5].starts_with("ERR 400"), "{replies:?}");
    c.send_bytes(b"\n");
    assert_eq!(c.line(), "OK pong");
}

#[test]
fn a_line_sent_a_byte_at_a_time_or_cut_by_the_end_of_input_is_still_read() {
    let daemon = start(test_config());
    let mut c = Client::connect(daemon.addr);
    for byte in b"PING\n" {
        c.send_bytes(&[*byte]);
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(c.line(), "OK pong");
    // The last line needs no line feed when the client closes its side.
    c.send_bytes(b"PING\nPI");
    c.send_bytes(b"NG");
    c.finish_sending();
    assert_eq!(c.line(), "OK pong");
    assert_eq!(c.line(), "OK pong");
    c.expect_closed(HANG_GUARD);
    assert_serves(daemon.addr);
}

#[test]
fn a_last_line_that_waits_for_an_answer_is_answered_before_the_close() {
    let daemon = start(test_config());
    let mut c = Client::connect(daemon.addr);
    // HISTORY waits for the store; the client has already closed its side.
    c.send_bytes(b"LOGIN last\nHISTORY 999");
    c.finish_sending();
    assert!(c.line().starts_with("OK"));
    let reply = c.line();
    assert!(reply.starts_with("ERR 404"), "{reply}");
    c.expect_closed(HANG_GUARD);
}

/// `count` games open (each waiting for an opponent), one client holding each:
/// an open game closes with its creator's connection.
fn open_games(addr: std::net::SocketAddr, count: usize) -> Vec<Client> {
    let mut creators: Vec<Client> = (0..count)
        .map(|i| {
            let mut c = Client::connect(addr);
            c.send(&format!("LOGIN open{i}"));
            c.send("NEW");
            c
        })
        .collect();
    for (i, c) in creators.iter_mut().enumerate() {
        let reply = c.line();
        assert_eq!(c.logged_in(&reply), Some(format!("open{i}")), "{reply}");
        assert!(c.line().starts_with("OK "), "NEW of open{i}");
    }
    creators
}

/// The resident set of this process (the in-process daemon's) in KiB, for the
/// log of the flood test; 0 where /proc is not there.
fn resident_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

#[test]
fn a_client_that_floods_list_without_reading_is_disconnected_by_the_byte_bound() {
    let games = 300;
    let mut config = test_config();
    // The line bound is out of reach: only the byte bound can end this.
    config.outbound_queue_lines = 10_000_000;
    config.outbound_queue_bytes = 64 * 1024;
    config.rate_limit.per_second = 1_000_000;
    config.rate_limit.burst = 1_000_000;
    let daemon = start(config);
    let _creators = open_games(daemon.addr, games);
    let before = resident_kib();
    let addr = daemon.addr;
    // Served while the flood goes on: every LIST whole (its first page of
    // 100 games and the line naming the rest).
    let lister = std::thread::spawn(move || {
        let mut c = Client::connect(addr);
        for _ in 0..20 {
            let (lines, ok) = c.command("LIST");
            assert_eq!((lines.len(), ok.as_str()), (101, "OK 100"));
            assert_eq!(
                lines.last().map(String::as_str),
                Some("INFO more: LIST from 101")
            );
        }
    });
    let mut stuck = Client::connect(daemon.addr);
    let burst = "LIST\n".repeat(100);
    let began = Instant::now();
    let mut sent = 0;
    let refused = loop {
        match stuck.try_send_bytes(burst.as_bytes()) {
            Ok(()) => sent += 100,
            Err(e) => break e,
        }
        assert!(
            began.elapsed() < HANG_GUARD,
            "hang guard: never disconnected after {sent} LISTs"
        );
    };
    assert!(
        !matches!(refused.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut),
        "{refused}"
    );
    let peak = resident_kib();
    let read = stuck.drain_until_closed(HANG_GUARD);
    eprintln!(
        "disconnected after {sent} LISTs of {games} games, {read} bytes read back, \
         {:?}; resident {before} KiB before, {peak} KiB at the close",
        began.elapsed()
    );
    lister.join().unwrap();
    assert_serves(daemon.addr);
}

/// The `GAME` or `PLAYER` lines of an answer and its `INFO more:` hint.
fn paged(client: &mut Client, line: &str) -> (Vec<String>, Option<String>, String) {
    let (data, ok) = client.ok(line);
    let (more, listed): (Vec<String>, Vec<String>) =
        data.into_iter().partition(|l| l.starts_with("INFO more: "));
    let hint = more
        .first()
        .map(|l| l.trim_start_matches("INFO more: ").to_string());
    (listed, hint, ok)
}

#[test]
fn long_lists_come_in_pages_that_say_how_to_get_the_rest() {
    let daemon = start(test_config());
    let mut players: Vec<Client> = (0..105)
        .map(|i| Client::login_as(daemon.addr, &format!("p{i:03}")))
        .collect();
    let mut made = Vec::new();
    for (i, p) in players.iter_mut().enumerate() {
        let opponent = if i % 5 == 0 { "as X" } else { "hotseat" };
        made.push(p.ok_game(&format!("NEW othello {opponent}")));
    }
    let mut reader = Client::connect(daemon.addr);
    let (first, hint, ok) = paged(&mut reader, "LIST");
    assert_eq!((first.len(), ok.as_str()), (100, "OK 100"));
    let hint = hint.expect("a long list says how to get the rest");
    let (rest, none, _) = paged(&mut reader, &hint);
    assert_eq!(none, None, "the last page says nothing more");
    let listed: Vec<u64> = first
        .iter()
        .chain(&rest)
        .map(|l| {
            l.split(' ')
                .nth(1)
                .and_then(|g| g.parse().ok())
                .unwrap_or(0)
        })
        .collect();
    assert_eq!(listed, made, "every game once, in order");
    let (open, none, _) = paged(&mut reader, "LIST open");
    assert_eq!((open.len(), none), (21, None));
    assert!(open.iter().all(|l| l.contains(" open ")), "{open:?}");
    let (first, hint, _) = paged(&mut reader, "WHO");
    assert_eq!(first.len(), 100);
    let hint = hint.expect("a long WHO says how to get the rest");
    assert!(hint.starts_with("WHO from p"), "{hint}");
    let (rest, none, ok) = paged(&mut reader, &hint);
    assert_eq!((rest.len(), none, ok.as_str()), (5, None, "OK 5"));
    reader.err("LIST cancelled", 400);
}
