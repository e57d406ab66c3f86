//! Who gets a connection place: one address cannot take them all, sockets
//! that never log in cannot take the places kept for players, and a
//! connection that neither logs in nor watches gives its place back at the
//! login deadline. The clients bind other loopback addresses (127.0.0.9,
//! 127.0.0.10, ...) to be other peers.

use std::net::{Ipv4Addr, SocketAddr};
use std::time::Instant;

use flipline::protocol::{Event, Reason, ServerLine};
use flipline_tests::*;

const FLOOD: Ipv4Addr = Ipv4Addr::new(127, 0, 0, 9);
const PLAYER: Ipv4Addr = Ipv4Addr::new(127, 0, 0, 10);
const STRANGER: Ipv4Addr = Ipv4Addr::new(127, 0, 0, 11);

/// The first line a connection from `source` gets: `HELLO` or the refusal.
fn greeting(addr: SocketAddr, source: Ipv4Addr) -> (Client, String) {
    let mut client = Client::connect_raw_from(addr, source);
    let line = client.line();
    (client, line)
}

#[test]
fn silent_sockets_from_one_address_cannot_keep_another_out() {
    let mut config = test_config();
    config.max_connections = 200;
    config.max_connections_per_address = 100;
    let daemon = start(config);
    let refusal = "ERR 503 too many connections from your address (at most 100)";
    let mut held = Vec::new();
    for _ in 0..300 {
        match greeting(daemon.addr, FLOOD) {
            (c, hello) if hello == "HELLO flipline 1" => held.push(c),
            (mut c, line) => {
                assert_eq!(line, refusal);
                c.expect_closed(HANG_GUARD);
            }
        }
    }
    assert_eq!(held.len(), 100, "the address's share, no more");
    let mut ann = Client::connect_from(daemon.addr, PLAYER);
    ann.login("ann");
    assert_eq!(ann.command("PING").1, "OK pong");
    // A place given back is the address's again, once the daemon sees it go.
    held.pop();
    let deadline = Instant::now() + HANG_GUARD;
    loop {
        let (_c, line) = greeting(daemon.addr, FLOOD);
        if line == "HELLO flipline 1" {
            break;
        }
        assert_eq!(line, refusal);
        assert!(Instant::now() < deadline, "the place was never given back");
    }
    assert_eq!(held[0].command("PING").1, "OK pong");
}

#[test]
fn a_player_gets_in_when_anonymous_sockets_hold_the_places_not_kept() {
    let mut config = test_config();
    config.max_connections = 20;
    // Ten places for connections that have not logged in, ten kept.
    config.reserved_for_players_percent = 50;
    let daemon = start(config);
    let mut pat = Client::connect_from(daemon.addr, PLAYER);
    pat.login("pat");
    let silent: Vec<Client> = (0..10)
        .map(|_| Client::connect_from(daemon.addr, FLOOD))
        .collect();
    let kept = "ERR 503 server full: the places left are kept for players";
    for source in [FLOOD, STRANGER] {
        let (mut c, line) = greeting(daemon.addr, source);
        assert_eq!(line, kept, "from {source}");
        c.expect_closed(HANG_GUARD);
    }
    // The player's address gets in: a second player there, say.
    let mut sam = Client::connect_from(daemon.addr, PLAYER);
    sam.login("sam");
    // Both leave; a reconnect from their address within the grace period
    // still finds a place.
    pat.ok("QUIT");
    sam.ok("QUIT");
    pat.expect_closed(HANG_GUARD);
    sam.expect_closed(HANG_GUARD);
    let mut back = Client::connect_from(daemon.addr, PLAYER);
    login_soon(&mut back, "pat");
    let (_c, line) = greeting(daemon.addr, STRANGER);
    assert_eq!(line, kept, "strangers are still kept out");
    assert_eq!(silent.len(), 10);
}

#[test]
fn a_connection_that_neither_logs_in_nor_watches_is_closed_at_the_deadline() {
    let mut config = test_config();
    // Long beside the round trips the player and the spectator take to log
    // in and to watch, which must come before it on a loaded machine too.
    config.login_deadline_secs = 3;
    // One thread: its queue holds every connection in the order they came,
    // so when the last one is closed every earlier deadline has passed.
    config.workers = 1;
    let daemon = start(config);
    let mut player = Client::connect(daemon.addr);
    player.login("host");
    let game = player.ok_game("NEW tictactoe hotseat");
    let mut spectator = Client::connect(daemon.addr);
    spectator.ok(&format!("WATCH {game}"));
    let mut browser = Client::connect(daemon.addr);
    browser.ok("LIST");
    let lines = browser.expect_closed(HANG_GUARD);
    // One line, which says why by its reason word (the text is for people).
    let [closing] = lines.as_slice() else {
        panic!("{lines:?}");
    };
    let ServerLine::Event(Event::Info(text)) = ServerLine::parse(closing) else {
        panic!("{closing}");
    };
    assert_eq!(Reason::of(&text), Some(Reason::LoginDeadline), "{closing}");
    // The player and the spectator came earlier and are still served.
    assert_eq!(player.command("PING").1, "OK pong");
    assert_eq!(spectator.command("PING").1, "OK pong");
    assert_serves(daemon.addr);
}
