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

#[test]
fn wrong_passwords_are_answered_ever_slower_without_holding_anyone_else() {
    let mut config = test_config();
    config.passwords.failure_delay_ms = 200;
    config.passwords.failure_delay_max_ms = 800;
    let daemon = start(config);
    assert_eq!(login(daemon.addr, "LOGIN cid right"), "OK cid registered");
    let mut thief = Client::connect(daemon.addr);
    let mut waits = Vec::new();
    for _ in 0..3 {
        let began = Instant::now();
        assert_eq!(
            thief.command("LOGIN cid wrong").1,
            "ERR 401 wrong password for 'cid'"
        );
        waits.push(began.elapsed());
    }
    assert!(waits[0] >= Duration::from_millis(200), "{waits:?}");
    assert!(waits[1] >= Duration::from_millis(400), "{waits:?}");
    assert!(waits[2] >= Duration::from_millis(800), "{waits:?}");
    // The fourth failure waits the maximum; meanwhile others are served.
    thief.send("LOGIN cid wrong");
    let began = Instant::now();
    let mut other = Client::connect(daemon.addr);
    assert_eq!(other.command("PING").1, "OK pong");
    assert!(other.command("LOGIN dan").1.starts_with("OK dan secret "));
    let other_took = began.elapsed();
    assert!(other_took < Duration::from_millis(600), "{other_took:?}");
    assert!(thief.final_reply("LOGIN").1.starts_with("ERR 401 "));
    assert!(began.elapsed() >= Duration::from_millis(800));
    assert!(began.elapsed() < Duration::from_millis(2500), "capped");
    // The right password still works (after the last delay) and resets the
    // count: the next failure waits the first delay again.
    assert_eq!(thief.command("LOGIN cid right").1, "OK cid");
    let mut again = Client::connect(daemon.addr);
    let began = Instant::now();
    assert!(again.command("LOGIN cid nope").1.starts_with("ERR 401 "));
    let took = began.elapsed();
    assert!(took >= Duration::from_millis(200), "{took:?}");
    assert!(took < Duration::from_millis(700), "{took:?}");
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
