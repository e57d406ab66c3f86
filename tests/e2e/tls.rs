//! The TLS port: real handshakes on loopback with a certificate authority
//! each test makes for itself. The protocol inside is the plain port's; a
//! certificate is verified by every client and renewed without a restart;
//! whatever is not a good handshake ends alone, within the login deadline
//! and the per-address cap; passwords can be kept off the plain port.

use std::net::{Ipv4Addr, SocketAddr};
use std::process::{Command, Stdio};

use flipline_tests::*;

/// Another machine, as the daemon counts peers (the tests talk only to
/// loopback, from its other addresses).
const ELSEWHERE: Ipv4Addr = Ipv4Addr::new(127, 0, 0, 10);
const FLOOD: Ipv4Addr = Ipv4Addr::new(127, 0, 0, 9);

/// A daemon with a TLS port whose certificate `ca` signs for 127.0.0.1,
/// its files in a directory of its own; `change` adjusts the settings.
fn tls_daemon(ca: &TestCa, change: impl FnOnce(&mut Config)) -> (TestDaemon, TlsFiles) {
    let dir = temp_dir("tls");
    let files = TlsFiles::write(&dir, ca, &["127.0.0.1", "localhost"]);
    let mut config = test_config();
    config.tls.listen = "127.0.0.1:0".to_string();
    config.tls.certificate = files.certificate.clone();
    config.tls.key = files.key.clone();
    config.metrics.listen = "127.0.0.1:0".to_string();
    change(&mut config);
    (start(config), files)
}

fn tls_port(daemon: &TestDaemon) -> SocketAddr {
    daemon
        .tls
        .unwrap_or_else(|| panic!("the daemon has no TLS port"))
}

/// A sample of the daemon's metrics: `name{labels}`'s value.
fn metric(daemon: &TestDaemon, series: &str) -> f64 {
    let metrics = daemon.metrics.unwrap_or_else(|| panic!("no metrics"));
    let (status, text) = http_get(metrics, "/metrics");
    assert_eq!(status, 200);
    let found = text.lines().find_map(|line| {
        let (name, value) = line.rsplit_once(' ')?;
        (name == series)
            .then(|| value.parse::<f64>().ok())
            .flatten()
    });
    found.unwrap_or_else(|| panic!("no {series} in\n{text}"))
}

#[test]
fn two_players_play_a_game_over_tls_as_on_the_plain_port() {
    let ca = TestCa::new();
    let (daemon, _files) = tls_daemon(&ca, |_| {});
    let port = tls_port(&daemon);
    let mut ann = Client::connect_tls(port, ca.client_config());
    let mut bob = Client::connect_tls(port, ca.client_config());
    ann.login("ann");
    bob.login("bob");
    let game = ann.ok_game("NEW tictactoe");
    assert_eq!(bob.ok_game(&format!("JOIN {game}")), game);
    let start = parse_start(&ann.expect_event("START "));
    assert_eq!(parse_start(&bob.expect_event("START ")).game, game);
    let mut rng = Rng::random();
    let finished = play_game(&mut [&mut ann, &mut bob], &start, &mut |moves| {
        rng.pick(moves)
    });
    assert!(finished.plies > 0);
    // A plain client sees the same daemon: the game the TLS players made.
    let mut plain = Client::connect(daemon.addr);
    let (listed, _) = plain.ok("LIST over");
    assert!(
        listed.iter().any(|l| l.contains(&game.to_string())),
        "{listed:?}"
    );
    assert_eq!(
        metric(
            &daemon,
            "flipline_connections_accepted_total{listener=\"tls\"}"
        ),
        2.0
    );
    assert!(
        metric(
            &daemon,
            "flipline_connections_accepted_total{listener=\"plain\"}"
        ) >= 1.0
    );
}

#[test]
fn flip_bot_and_the_example_bot_play_each_other_over_tls_with_the_ca_given() {
    let ca = TestCa::new();
    let (daemon, files) = tls_daemon(&ca, |_| {});
    let server = format!("tls://{}", tls_port(&daemon));
    let ca_file = files.ca.display().to_string();
    let flip = Command::new(workspace_binary("flip", "flip"))
        .args([
            "bot", "--server", &server, "--ca", &ca_file, "--name", "flipbot",
        ])
        .args(["--variant", "tictactoe", "--rounds", "1", "--level", "1"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run flip bot: {e}"));
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/random_bot.py");
    let address = tls_port(&daemon).to_string();
    let python = Command::new("python3")
        .arg(&script)
        .args([
            address.as_str(),
            "pybot",
            "1",
            "tictactoe",
            "--tls",
            "--ca",
            &ca_file,
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run python3: {e}"));
    let python = wait_bounded(python, HANG_GUARD);
    let said = String::from_utf8_lossy(&python.stdout);
    let complained = String::from_utf8_lossy(&python.stderr);
    assert!(python.status.success(), "{said}{complained}");
    assert!(said.lines().any(|l| l.starts_with("game ")), "{said}");
    let flip = wait_bounded(flip, HANG_GUARD);
    let complained = String::from_utf8_lossy(&flip.stderr);
    assert!(flip.status.success(), "flip bot: {complained}");
    assert_eq!(
        metric(
            &daemon,
            "flipline_connections_accepted_total{listener=\"tls\"}"
        ),
        2.0,
        "both came in on the TLS port"
    );
}

#[test]
fn a_certificate_for_another_name_or_from_another_authority_is_refused() {
    let ca = TestCa::new();
    let (daemon, files) = tls_daemon(&ca, |_| {});
    let port = tls_port(&daemon);
    // The right authority, the wrong name.
    let wrong_name = Client::try_connect_tls(port, "play.example.org", ca.client_config());
    let why = wrong_name.err().map(|e| e.to_string()).unwrap_or_default();
    assert!(why.contains("not valid for name"), "{why}");
    // The right name, an authority the client does not know.
    let stranger = TestCa::new();
    let unknown = Client::try_connect_tls(port, "127.0.0.1", stranger.client_config());
    let why = unknown.err().map(|e| e.to_string()).unwrap_or_default();
    assert!(why.contains("UnknownIssuer"), "{why}");
    // flip says so and does not connect (no fallback to the plain port).
    let other_ca = files.ca.with_file_name("other-ca.pem");
    std::fs::write(&other_ca, &stranger.pem).unwrap_or_else(|e| panic!("{e}"));
    let server = format!("tls://{port}");
    let other_ca = other_ca.display().to_string();
    let refused = run_flip(&["--server", &server, "--ca", &other_ca, "--name", "ann"]);
    let told = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(2), "{told}");
    assert!(told.contains("does not verify"), "{told}");
    let told = String::from_utf8_lossy(&refused.stdout);
    assert!(!told.contains("logged in"), "{told}");
    // So does flip bot, which stops rather than try the same certificate
    // again.
    let bot = run_flip(&[
        "bot", "--server", &server, "--ca", &other_ca, "--rounds", "1",
    ]);
    let told = String::from_utf8_lossy(&bot.stderr);
    assert!(!bot.status.success(), "{told}");
    assert!(told.contains("does not verify"), "{told}");
    // The daemon counted the refusals and serves on.
    assert!(
        metric(
            &daemon,
            "flipline_tls_handshake_failures_total{why=\"refused\"}"
        ) >= 3.0
    );
    let mut ann = Client::connect_tls(port, ca.client_config());
    assert_eq!(ann.command("PING").1, "OK pong");
}

#[test]
fn plain_text_to_the_tls_port_and_tls_to_the_plain_port_end_alone() {
    let ca = TestCa::new();
    let (daemon, _files) = tls_daemon(&ca, |_| {});
    let port = tls_port(&daemon);
    let mut player = Client::connect_tls(port, ca.client_config());
    player.login("pat");
    // A line client on the TLS port: no greeting, and closed.
    let mut typed = Client::connect_raw(port);
    typed.send("LOGIN eve");
    let said = typed.expect_closed(HANG_GUARD);
    assert!(said.is_empty(), "{said:?}");
    // A TLS client on the plain port: its handshake fails (the greeting is
    // not TLS), and the daemon's side of it is only a confused connection.
    let confused = Client::try_connect_tls(daemon.addr, "127.0.0.1", ca.client_config());
    assert!(
        confused.is_err(),
        "a handshake with the plain port succeeded"
    );
    assert_eq!(player.command("PING").1, "OK pong");
    assert_eq!(
        Client::login_as(daemon.addr, "sam").command("PING").1,
        "OK pong"
    );
    assert!(
        metric(
            &daemon,
            "flipline_tls_handshake_failures_total{why=\"refused\"}"
        ) >= 1.0
    );
}

#[test]
fn stalled_handshakes_count_against_the_per_address_cap_and_the_login_deadline() {
    let ca = TestCa::new();
    let (daemon, _files) = tls_daemon(&ca, |config| {
        config.max_connections_per_address = 3;
        // Room for a player's handshake and LOGIN on a loaded machine.
        config.login_deadline_secs = 3;
    });
    let port = tls_port(&daemon);
    // Three sockets that never say a word take the address's three places.
    let mut stalled: Vec<Client> = (0..3)
        .map(|_| Client::connect_raw_from(port, FLOOD))
        .collect();
    let held = |daemon: &TestDaemon| metric(daemon, "flipline_connections");
    wait_until("the three stalled sockets are held", HANG_GUARD, || {
        held(&daemon) >= 3.0
    });
    // A fourth from the same address is closed at once, a TLS client from
    // another gets in and plays.
    let mut fourth = Client::connect_raw_from(port, FLOOD);
    assert!(fourth.expect_closed(HANG_GUARD).is_empty());
    let mut ann = Client::connect_tls(port, ca.client_config());
    ann.login("ann");
    // The stalled ones are closed at the login deadline, counted as late
    // (just after each is closed, on its own thread).
    for socket in &mut stalled {
        assert!(socket.expect_closed(HANG_GUARD).is_empty());
    }
    let late = "flipline_tls_handshake_failures_total{why=\"late\"}";
    wait_until("the three are counted late", HANG_GUARD, || {
        metric(&daemon, late) >= 3.0
    });
    assert_eq!(metric(&daemon, late), 3.0);
    // Their places are given back: the address gets in again.
    let _again = Client::connect_raw_from(port, FLOOD);
    wait_until("the address's place is given back", HANG_GUARD, || {
        held(&daemon) >= 2.0
    });
    assert_eq!(
        ann.command("PING").1,
        "OK pong",
        "a player is not disturbed"
    );
}

#[test]
fn a_password_on_the_plain_port_is_refused_from_elsewhere_and_taken_from_loopback() {
    let ca = TestCa::new();
    let (daemon, _files) = tls_daemon(&ca, |config| {
        config.tls.plain_passwords = flipd::config::PlainPasswords::Loopback;
    });
    let port = tls_port(&daemon);
    let mut far = Client::connect_from(daemon.addr, ELSEWHERE);
    let refused = far.err("LOGIN ann tiger-tiger", 403);
    assert!(refused.ends_with("[tls-required]"), "{refused}");
    assert!(
        refused.contains(&format!("port {}", port.port())),
        "{refused}"
    );
    // A guest plays there all the same.
    far.login("gus");
    // Over TLS from anywhere, and on the plain port from loopback, the
    // password is taken (it registers the name, then logs in with it).
    let mut secure = Client::connect_tls(port, ca.client_config());
    let (_, ok) = secure.ok("LOGIN ann tiger-tiger");
    assert!(ok.starts_with("OK ann"), "{ok}");
    drop(secure);
    let mut local = Client::connect(daemon.addr);
    login_line_soon(&mut local, "LOGIN ann tiger-tiger", "OK ann");
}

#[test]
fn a_certificate_file_that_cannot_be_used_stops_the_start_naming_it() {
    let dir = temp_dir("tls-bad");
    let mut config = test_config();
    config.tls.listen = "127.0.0.1:0".to_string();
    config.tls.certificate = dir.join("missing.pem");
    config.tls.key = dir.join("missing-key.pem");
    let store = config.store.path.clone();
    let started = DaemonThread::start(config);
    let why = started.err().map(|e| e.to_string()).unwrap_or_default();
    assert!(
        why.contains("tls.certificate") && why.contains("missing.pem"),
        "{why}"
    );
    remove_temp_dir(&dir);
    if let Some(store) = store.parent() {
        remove_temp_dir(store);
    }
}

#[test]
fn a_renewed_certificate_is_read_on_sighup_and_connections_stay_up() {
    let dir = temp_dir("tls-renew");
    let (first, second) = (TestCa::new(), TestCa::new());
    let files = TlsFiles::write(&dir, &first, &["127.0.0.1"]);
    let config = write_config(&dir, &files.settings("127.0.0.1:0"));
    let mut daemon = ChildDaemon::start_with(&config);
    let port = daemon
        .tls_addr()
        .unwrap_or_else(|| panic!("no TLS port in the log"));
    let mut early = Client::connect_tls(port, first.client_config());
    early.login("ann");
    // Renewed by another authority, so that which one a client meets shows.
    files.renew(&second, &["127.0.0.1"]);
    daemon.hangup();
    daemon.wait_for_log("read the TLS certificate and key again", 1, HANG_GUARD);
    assert_eq!(
        early.command("PING").1,
        "OK pong",
        "the old connection stays"
    );
    let stale = Client::try_connect_tls(port, "127.0.0.1", first.client_config());
    assert!(
        stale.is_err(),
        "a new connection still met the old certificate"
    );
    let mut late = Client::connect_tls(port, second.client_config());
    late.login("bob");
    // A renewal gone wrong: a warning, and the certificate in use stays.
    std::fs::write(&files.certificate, "not a certificate").unwrap_or_else(|e| panic!("{e}"));
    daemon.hangup();
    daemon.wait_for_log("the TLS certificate in use stays", 1, HANG_GUARD);
    let mut later = Client::connect_tls(port, second.client_config());
    assert_eq!(later.command("PING").1, "OK pong");
    daemon.terminate();
    assert_eq!(daemon.wait_exit(HANG_GUARD), Some(0));
    remove_temp_dir(&dir);
}

#[test]
fn the_plain_port_can_be_turned_off() {
    let ca = TestCa::new();
    let (daemon, _files) = tls_daemon(&ca, |config| config.listen = String::new());
    let port = tls_port(&daemon);
    assert_eq!(daemon.addr, port, "the TLS port is the daemon's only one");
    let mut ann = Client::connect_tls(port, ca.client_config());
    ann.login("ann");
    let neither = Config::parse("(listen: \"\")", "flipd.ron").err();
    let why = neither.map(|e| e.to_string()).unwrap_or_default();
    assert!(why.contains("players would have no port"), "{why}");
}
