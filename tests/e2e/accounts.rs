//! Accounts: `LOGIN name password` registers a name, later logins need the
//! password, wrong ones are answered ever slower (and only for that session),
//! and guests play where the configuration lets them, on names nobody owns.

use std::time::{Duration, Instant};

use flipline::protocol::{ErrorCode, Reason, ServerLine};
use flipline_tests::*;

/// Logs in on a new connection; returns the final reply line.
fn login(addr: std::net::SocketAddr, line: &str) -> String {
    let mut client = Client::connect(addr);
    client.command(line).1
}

#[test]
fn a_password_registers_the_name_and_is_needed_from_then_on() {
    let daemon = start(test_config());
    let addr = daemon.addr;
    let mut ann = Client::connect(addr);
    assert_eq!(ann.command("LOGIN ann s3cret-tiger").1, "OK ann registered");
    ann.ok("QUIT");
    let guest = login(addr, "LOGIN ann");
    let ServerLine::Err(registered) = ServerLine::parse(&guest) else {
        panic!("{guest}");
    };
    assert_eq!(
        (registered.code, Reason::of(&registered.message)),
        (ErrorCode::Unauthorized, Some(Reason::PasswordNeeded)),
        "{guest}"
    );
    let wrong = login(addr, "LOGIN ann S3cret-tiger");
    assert_eq!(wrong, "ERR 401 wrong password for 'ann'");
    let mut ann = Client::connect(addr);
    login_line_soon(&mut ann, "LOGIN ann s3cret-tiger", "OK ann");
    // A guest name nobody owns still plays.
    let bob = login(addr, "LOGIN bob");
    assert!(bob.starts_with("OK bob secret "), "{bob}");
    let config = daemon.config.clone();
    daemon
        .stop_keeping_store()
        .unwrap_or_else(|e| panic!("stop: {e}"));
    if on_postgres() {
        let sql = "SELECT password_hash FROM players WHERE name = 'ann'";
        let hash = store_query(&config, sql).unwrap_or_default();
        assert!(hash.starts_with("$argon2id$"), "no hash: {hash}");
        assert!(
            !hash.contains("s3cret-tiger"),
            "the password is in the store"
        );
    } else {
        let files = store_bytes(&config.store.path);
        assert!(
            !files.windows(12).any(|w| w == b"s3cret-tiger"),
            "the password is in the store"
        );
        assert!(files.windows(10).any(|w| w == b"$argon2id$"), "no hash");
    }
    // The name stays registered across a restart.
    let daemon = start(config);
    assert!(login(daemon.addr, "LOGIN ann").starts_with("ERR 401 "));
    assert_eq!(login(daemon.addr, "LOGIN ann s3cret-tiger"), "OK ann");
}

/// The store file and its write-ahead log, as bytes.
fn store_bytes(path: &std::path::Path) -> Vec<u8> {
    let mut bytes = std::fs::read(path).unwrap_or_default();
    let mut wal = path.as_os_str().to_owned();
    wal.push("-wal");
    bytes.extend(std::fs::read(wal).unwrap_or_default());
    bytes
}

/// The back-offs the daemon logged for wrong passwords, in order, once it
/// has logged `count` of them (its own words, rather than a time measured
/// from outside, which a loaded machine stretches).
fn delays_logged(daemon: &ChildDaemon, count: usize) -> Vec<u64> {
    daemon
        .wait_for_log("wrong password", count, HANG_GUARD)
        .iter()
        .map(|line| {
            let digits: String = line
                .split("delay_ms=")
                .nth(1)
                .unwrap_or_else(|| panic!("no delay_ms in {line}"))
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            digits.parse().unwrap_or_else(|e| panic!("{line}: {e}"))
        })
        .collect()
}

#[test]
fn wrong_passwords_are_answered_ever_slower_without_holding_anyone_else() {
    let dir = temp_dir("backoff");
    let config = write_config(
        &dir,
        "passwords: (failure_delay_ms: 200, failure_delay_max_ms: 800),",
    );
    let daemon = ChildDaemon::start_with(&config);
    assert_eq!(login(daemon.addr, "LOGIN cid right"), "OK cid registered");
    let mut thief = Client::connect(daemon.addr);
    let mut waits = Vec::new();
    for _ in 0..4 {
        let began = Instant::now();
        assert_eq!(
            thief.command("LOGIN cid wrong").1,
            "ERR 401 wrong password for 'cid'"
        );
        waits.push(began.elapsed());
    }
    // Each failure is answered no sooner than its back-off...
    for (wait, least) in waits.iter().zip([200, 400, 800, 800]) {
        assert!(*wait >= Duration::from_millis(least), "{waits:?}");
    }
    // ...which doubles, and the fourth is capped at the maximum.
    assert_eq!(delays_logged(&daemon, 4), [200, 400, 800, 800], "capped");
    // The right password still works (after the last delay) and resets the
    // count: the next failure waits the first delay again.
    assert_eq!(thief.command("LOGIN cid right").1, "OK cid");
    let mut again = Client::connect(daemon.addr);
    let began = Instant::now();
    assert!(again.command("LOGIN cid nope").1.starts_with("ERR 401 "));
    let took = began.elapsed();
    assert!(took >= Duration::from_millis(200), "{took:?}");
    assert_eq!(delays_logged(&daemon, 5)[4], 200, "the count was reset");
    drop(daemon);
    remove_temp_dir(&dir);

    // While a wrong password waits out its back-off, others are served: a
    // guest from the same address and the owner from another. The back-off
    // is a minute, far longer than these take, so that the owner's answer
    // coming first is the daemon's order, not a race.
    let dir = temp_dir("backoff-others");
    let config = write_config(
        &dir,
        "passwords: (failure_delay_ms: 60000, failure_delay_max_ms: 60000),",
    );
    let daemon = ChildDaemon::start_with(&config);
    assert_eq!(login(daemon.addr, "LOGIN cid right"), "OK cid registered");
    let mut thief = Client::connect(daemon.addr);
    thief.send("LOGIN cid wrong");
    assert_eq!(
        delays_logged(&daemon, 1),
        [60_000],
        "the back-off has begun"
    );
    let mut other = Client::connect(daemon.addr);
    assert_eq!(other.command("PING").1, "OK pong");
    assert!(other.command("LOGIN dan").1.starts_with("OK dan secret "));
    let mut owner = Client::connect_from(daemon.addr, std::net::Ipv4Addr::new(127, 0, 0, 9));
    assert_eq!(owner.command("LOGIN cid right").1, "OK cid");
    thief.expect_silence(Duration::from_millis(100));
    drop(daemon);
    remove_temp_dir(&dir);
}

#[test]
fn without_guests_a_name_needs_a_password() {
    let mut config = test_config();
    config.guests = false;
    let daemon = start(config);
    let refused = login(daemon.addr, "LOGIN eve");
    assert!(
        refused.starts_with("ERR 401 guests may not play"),
        "{refused}"
    );
    let mut eve = Client::connect(daemon.addr);
    assert_eq!(eve.command("LOGIN eve apple").1, "OK eve registered");
    eve.ok("NEW tictactoe hotseat");
    // Commands that need a name are still refused before LOGIN.
    let mut anon = Client::connect(daemon.addr);
    assert!(anon.command("SEEK").1.starts_with("ERR 401 LOGIN first"));
}
