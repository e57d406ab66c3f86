//! Challenges over the protocol: accepted (the game starts for both, with
//! the terms asked), declined with each reason, withdrawn, lapsed, to a name
//! not online or busy, to one that goes offline, and rated ones refused to
//! guests.

use std::time::{Duration, Instant};

use flipline::protocol::{DeclineReason, Event};
use flipline_tests::*;

/// The challenge number of a `CHALLENGE`'s `OK`.
fn challenge_id(ok: &str) -> u64 {
    ok.strip_prefix("OK ")
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("not a challenge number: {ok}"))
}

/// `ann` challenges `bob` with `terms`; bob has read the `CHALLENGE` line.
fn challenged(ann: &mut Client, bob: &mut Client, terms: &str) -> (u64, String) {
    let (_, ok) = ann.ok(&format!("CHALLENGE bob {terms}"));
    let id = challenge_id(&ok);
    let line = bob.expect_event(&format!("CHALLENGE {id} "));
    (id, line)
}

#[test]
fn an_accepted_challenge_starts_its_game_for_both_on_its_terms() {
    let daemon = start(test_config());
    let mut ann = Client::login_as(daemon.addr, "ann");
    let mut bob = Client::login_as(daemon.addr, "bob");
    let (id, line) = challenged(&mut ann, &mut bob, "reversi as O clock 1+2");
    assert_eq!(line, format!("CHALLENGE {id} ann reversi O 1+2 casual"));
    let (_, ok) = bob.ok(&format!("ACCEPT {id}"));
    let game = reply_game("ACCEPT", &ok);
    let start = format!("START {game} reversi bob ann 1+2");
    assert_eq!(bob.line(), start);
    assert_eq!(ann.expect_event("START "), start);
    // The challenge is spent.
    assert!(
        bob.err(&format!("ACCEPT {id}"), 404)
            .contains("no challenge")
    );
}

#[test]
fn a_challenge_from_moves_or_a_random_start_begins_there() {
    let daemon = start(test_config());
    let mut ann = Client::login_as(daemon.addr, "ann");
    let mut bob = Client::login_as(daemon.addr, "bob");
    for (terms, plies) in [("from f5d6c3", 3), ("from random:6", 6)] {
        let (id, _) = challenged(&mut ann, &mut bob, terms);
        let (_, ok) = bob.ok(&format!("ACCEPT {id}"));
        let game = reply_game("ACCEPT", &ok);
        bob.lines_through(&format!("TURN {game} "));
        let (data, _) = bob.ok(&format!("HISTORY {game}"));
        let moves = data.iter().find_map(|l| match event(l) {
            Event::History(summary) => Some(summary.moves),
            _ => None,
        });
        assert_eq!(moves.map(|m| m.len()), Some(plies), "{terms}: {data:?}");
        bob.ok("END");
        ann.lines_through(&format!("OVER {game} "));
        for client in [&mut ann, &mut bob] {
            client.ok("LEAVE");
        }
    }
    assert!(
        ann.err("CHALLENGE bob from random:99", 400)
            .contains("random:")
    );
    assert!(ann.err("CHALLENGE bob from c4c4", 400).contains("from"));
}

#[test]
fn a_declined_challenge_tells_the_challenger_why() {
    let daemon = start(test_config());
    let mut ann = Client::login_as(daemon.addr, "ann");
    let mut bob = Client::login_as(daemon.addr, "bob");
    for reason in DeclineReason::ALL.into_iter().filter(|r| r.is_a_players()) {
        let (id, _) = challenged(&mut ann, &mut bob, "");
        bob.ok(&format!("DECLINE {id} {reason}"));
        assert_eq!(
            ann.expect_event("DECLINED "),
            format!("DECLINED {id} bob {reason}")
        );
    }
    // No reason is `generic`; the daemon's own reasons are not a player's.
    let (id, _) = challenged(&mut ann, &mut bob, "");
    bob.err(&format!("DECLINE {id} timeout"), 400);
    bob.ok(&format!("DECLINE {id}"));
    assert_eq!(
        ann.expect_event("DECLINED "),
        format!("DECLINED {id} bob generic")
    );
    // Only the challenged answers; only the challenger withdraws.
    let (id, _) = challenged(&mut ann, &mut bob, "");
    ann.err(&format!("ACCEPT {id}"), 403);
    bob.err(&format!("CANCEL {id}"), 403);
    ann.ok(&format!("CANCEL {id}"));
    assert_eq!(
        bob.expect_event("DECLINED "),
        format!("DECLINED {id} ann cancelled")
    );
    bob.err(&format!("ACCEPT {id}"), 404);
}

#[test]
fn an_unanswered_challenge_lapses_for_both() {
    let mut config = test_config();
    config.challenge_timeout_secs = 1;
    let daemon = start(config);
    let mut ann = Client::login_as(daemon.addr, "ann");
    let mut bob = Client::login_as(daemon.addr, "bob");
    let made = Instant::now();
    let (id, _) = challenged(&mut ann, &mut bob, "");
    assert_eq!(
        ann.expect_event("DECLINED "),
        format!("DECLINED {id} bob timeout")
    );
    assert!(made.elapsed() >= Duration::from_millis(900), "lapsed early");
    assert_eq!(
        bob.expect_event("DECLINED "),
        format!("DECLINED {id} ann timeout")
    );
    bob.err(&format!("ACCEPT {id}"), 404);
}

#[test]
fn names_not_online_busy_or_gone_are_not_challenged() {
    let daemon = start(test_config());
    let mut ann = Client::login_as(daemon.addr, "ann");
    assert!(ann.err("CHALLENGE nobody", 404).contains("not online"));
    ann.err("CHALLENGE ann", 400);
    // Refused before any random start is drawn for them.
    assert!(
        ann.err("CHALLENGE nobody from random:8", 404)
            .contains("not online")
    );
    ann.err("CHALLENGE ann from random:8", 400);
    let mut bob = Client::login_as(daemon.addr, "bob");
    let g = bob.ok_game("NEW othello hotseat");
    assert!(
        ann.err("CHALLENGE bob", 409)
            .contains(&format!("playing game {g}"))
    );
    bob.ok("END");
    bob.lines_through(&format!("OVER {g} "));
    // A challenged name that goes offline refuses it by going.
    let (id, _) = challenged(&mut ann, &mut bob, "");
    drop(bob);
    assert_eq!(
        ann.expect_event("DECLINED "),
        format!("DECLINED {id} bob offline")
    );
    // And a challenger that goes withdraws its challenges.
    let mut bob = Client::connect(daemon.addr);
    login_soon(&mut bob, "bob");
    let (id, _) = challenged(&mut ann, &mut bob, "");
    drop(ann);
    assert_eq!(
        bob.expect_event("DECLINED "),
        format!("DECLINED {id} ann cancelled")
    );
}

/// Logs `name` in with `password` (registering the name the first time).
pub fn member(addr: std::net::SocketAddr, name: &str, password: &str) -> Client {
    let mut client = Client::connect(addr);
    let (_, ok) = client.command(&format!("LOGIN {name} {password}"));
    // After a restart a member in a game in play is told its kept seat.
    let known = |rest: &str| {
        let rest = rest.strip_prefix(" registered").unwrap_or(rest);
        let seat = rest.strip_prefix(" seat ");
        rest.is_empty() || seat.is_some_and(|n| n.parse::<u64>().is_ok())
    };
    let rest = ok.strip_prefix(&format!("OK {name}"));
    assert!(rest.is_some_and(known), "{ok}");
    client.name = name.to_string();
    client
}

#[test]
fn rated_challenges_are_for_registered_names_only() {
    let daemon = start(test_config());
    let mut guest = Client::login_as(daemon.addr, "guest");
    let mut ann = member(daemon.addr, "ann", "tiger-ann");
    let mut bob = member(daemon.addr, "bob", "tiger-bob");
    assert!(guest.err("CHALLENGE bob rated", 403).contains("registered"));
    assert!(ann.err("CHALLENGE guest rated", 403).contains("registered"));
    let (_, ok) = ann.ok("CHALLENGE guest");
    assert!(ok.starts_with("OK "), "casual is for anyone");
    let (id, line) = challenged(&mut ann, &mut bob, "rated");
    assert!(line.ends_with(" rated"), "{line}");
    let (_, ok) = bob.ok(&format!("ACCEPT {id}"));
    let game = reply_game("ACCEPT", &ok);
    bob.lines_through(&format!("TURN {game} "));
    assert!(bob.err("UNDO", 403).contains("rated"));
}
