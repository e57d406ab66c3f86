//! Borrowed identities: a guest's seat held through a disconnect goes back
//! only to the secret its login was given, and names are one name whatever
//! their case, spelled as first taken.

use std::net::SocketAddr;

use flipline::protocol::{CommandKind, Reply};
use flipline_tests::*;

/// A guest's login: its name and secret.
fn guest(client: &mut Client, name: &str) -> String {
    let reply = client.ok(&format!("LOGIN {name}")).1;
    match Reply::parse(CommandKind::Login, &reply) {
        Ok(Reply::Login(login)) if login.name == name => match login.secret {
            Some(secret) => secret,
            None => panic!("LOGIN {name}: {reply} gave no secret"),
        },
        other => panic!("LOGIN {name}: {reply} ({other:?})"),
    }
}

/// Guest `ann` (whose secret is returned) sits in game `g` against `bob`,
/// and has just lost her connection: `bob` has been told, so the lobby holds
/// her seat.
fn ann_away(addr: SocketAddr) -> (Client, u64, String) {
    let mut ann = Client::connect(addr);
    let secret = guest(&mut ann, "ann");
    let g = ann.ok_game("NEW othello as X");
    let mut bob = Client::login_as(addr, "bob");
    assert_eq!(bob.ok(&format!("JOIN {g}")).1, format!("OK {g} O"));
    ann.lines_through(&format!("TURN {g} X"));
    drop(ann);
    let info = bob.expect_event("INFO ");
    assert!(info.starts_with("INFO ann disconnected"), "{info}");
    (bob, g, secret)
}

#[test]
fn a_guests_held_seat_goes_back_only_to_its_secret() {
    let daemon = start(test_config());
    let (mut bob, g, secret) = ann_away(daemon.addr);
    let mut stranger = Client::connect(daemon.addr);
    let refused = stranger.err("LOGIN ann", 409);
    assert!(refused.contains("LOGIN ann secret"), "{refused}");
    let guess = format!("LOGIN ann secret {}", "0".repeat(32));
    assert!(stranger.err(&guess, 409).contains("not the secret"));
    assert!(stranger.err("LOGIN ANN", 409).contains("held"), "any case");
    let registering = stranger.err("LOGIN ann pa55word", 409);
    assert!(registering.contains("held"), "{registering}");
    stranger.err(&format!("JOIN {g}"), 401);
    stranger.err("MOVE d3", 401);

    let mut ann = Client::connect(daemon.addr);
    let back = ann.ok(&format!("LOGIN ann secret {secret}")).1;
    assert_eq!(
        back,
        format!("OK ann secret {secret} seat {g}"),
        "the same secret, and the seat kept named"
    );
    assert_eq!(ann.ok(&format!("JOIN {g}")).1, format!("OK {g} X"));
    ann.lines_through(&format!("TURN {g} X"));
    assert_eq!(ann.ok("MOVE d3").1, "OK");
    bob.lines_through(&format!("MOVED {g} X d3"));
    // The name was never registered by the stranger's try.
    drop(ann);
    bob.expect_event("INFO ann disconnected");
    let mut ann = Client::connect(daemon.addr);
    assert!(
        ann.ok(&format!("LOGIN ann secret {secret}"))
            .1
            .starts_with("OK ann secret ")
    );
}

#[test]
fn after_a_restart_too_only_the_guests_secret_takes_its_seat_back() {
    let mut config = test_config();
    config.grace_secs = 60;
    let daemon = start(config);
    let (bob, g, secret) = ann_away(daemon.addr);
    drop(bob);
    let bob_secret = guest_secret(daemon.addr, "bob").unwrap_or_default();
    let config = daemon.config.clone();
    daemon
        .stop_keeping_store()
        .unwrap_or_else(|e| panic!("stop: {e}"));
    let daemon = start(config);
    let mut stranger = Client::connect(daemon.addr);
    let refused = stranger.err("LOGIN ann", 409);
    assert!(refused.contains("held for its guest's seat"), "{refused}");
    let mut ann = Client::connect(daemon.addr);
    let back = ann.ok(&format!("LOGIN ann secret {secret}")).1;
    assert_eq!(back, format!("OK ann secret {secret} seat {g}"));
    assert_eq!(ann.ok(&format!("JOIN {g}")).1, format!("OK {g} X"));
    // Bob, a guest too, is held for his own secret.
    let mut bob = Client::connect(daemon.addr);
    stranger.err("LOGIN bob", 409);
    let back = bob.ok(&format!("LOGIN bob secret {bob_secret}")).1;
    assert_eq!(back, format!("OK bob secret {bob_secret} seat {g}"));
    assert_eq!(bob.ok(&format!("JOIN {g}")).1, format!("OK {g} O"));
}

#[test]
fn names_are_one_whatever_their_case_and_keep_their_first_spelling() {
    let daemon = start(test_config());
    let addr = daemon.addr;
    let mut vic = Client::connect(addr);
    assert_eq!(vic.ok("LOGIN Vic tiger-tiger").1, "OK Vic registered");
    let mut other = Client::connect(addr);
    let registered = other.err("LOGIN vic", 401);
    assert!(registered.contains("'Vic' is registered"), "{registered}");
    other.err("LOGIN VIC other-password", 401);
    other.err("LOGIN vic tiger-tiger", 409);
    drop(vic);
    let mut vic = Client::connect(addr);
    login_line_soon(&mut vic, "LOGIN vIC tiger-tiger", "OK Vic");
    let mut ann = Client::connect(addr);
    assert!(ann.ok("LOGIN Ann").1.starts_with("OK Ann secret "));
    let taken = other.err("LOGIN ann", 409);
    assert_eq!(taken, "ERR 409 name 'Ann' is in use");
    other.err("LOGIN ANN pa55word", 409);
    let (players, count) = other.ok("WHO");
    assert_eq!(players, ["PLAYER Ann idle -", "PLAYER Vic idle -"]);
    assert_eq!(count, "OK 2");
    // Ann's own LOGIN in another case is no change.
    assert_eq!(ann.ok("LOGIN ANN").1, "OK Ann");
}

#[test]
fn a_registration_refused_gives_the_name_back_and_the_connection_keeps_its_next() {
    let mut config = test_config();
    config.passwords.registrations_per_hour = 1;
    let daemon = start(config);
    let mut first = Client::connect(daemon.addr);
    assert_eq!(first.ok("LOGIN reg1 pa55word").1, "OK reg1 registered");
    let mut again = Client::connect(daemon.addr);
    let refused = again.err("LOGIN reg2 pa55word", 429);
    assert!(refused.contains("registrations"), "{refused}");
    // The name reg2 is free again, and this connection is still the
    // lobby's: the guest name it takes next is held by it.
    let secret = guest(&mut again, "ann2");
    assert!(!secret.is_empty());
    let mut other = Client::connect(daemon.addr);
    assert_eq!(
        other.err("LOGIN ann2", 409),
        "ERR 409 name 'ann2' is in use"
    );
    assert!(
        other.ok("LOGIN reg2").1.starts_with("OK reg2 secret "),
        "reg2 was given back"
    );
    let g = again.ok_game("NEW othello as X vs bot:1");
    again.lines_through(&format!("TURN {g} X"));
}
