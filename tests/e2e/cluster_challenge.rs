//! Challenges between players of two nodes (`cluster.nats`): made, seen,
//! declined, withdrawn, accepted and played as on one daemon, each player
//! with the challenge's number on its own node; refused where one daemon
//! refuses; dropped when either player or the other node goes. Real processes on loopback,
//! a NATS server and a PostgreSQL server of the tests'.

use flipline_tests::*;

use crate::cluster_play::Nodes;

/// The challenge number of a `CHALLENGE`'s `OK`.
fn challenge_id(ok: &str) -> u64 {
    ok.strip_prefix("OK ")
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("not a challenge number: {ok}"))
}

/// `from` challenges `to` (another node's) on `terms`: its number for
/// `from`, and the `CHALLENGE` line `to` reads, with `to`'s number.
fn challenged(from: &mut Client, to: &mut Client, terms: &str) -> (u64, u64, String) {
    let (_, ok) = from.ok(&format!("CHALLENGE {} {terms}", to.name));
    let mine = challenge_id(&ok);
    let line = to.expect_event("CHALLENGE ");
    let theirs = line.split(' ').nth(1).and_then(|n| n.parse().ok());
    let theirs = theirs.unwrap_or_else(|| panic!("no number in {line}"));
    (mine, theirs, line)
}

#[test]
fn a_challenge_to_a_player_of_another_node_is_declined_withdrawn_or_played_as_on_one_node() {
    let Some(cluster) = Nodes::start("cluster_challenge", &["a", "b"]) else {
        return;
    };
    let addrs = cluster.addrs();
    let mut ann = Client::login_as(addrs[0], "cann");
    let mut bob = Client::login_as(addrs[1], "cbob");

    // Declined there: heard here.
    let (mine, theirs, line) = challenged(&mut ann, &mut bob, "reversi as O clock 1+2");
    assert_eq!(
        line,
        format!("CHALLENGE {theirs} cann reversi O 1+2 casual")
    );
    bob.ok(&format!("DECLINE {theirs} later"));
    assert_eq!(
        ann.expect_event("DECLINED "),
        format!("DECLINED {mine} cbob later")
    );

    // Withdrawn here: heard there; the spent numbers refuse on both sides.
    let (mine, theirs, _) = challenged(&mut ann, &mut bob, "othello");
    ann.ok(&format!("CANCEL {mine}"));
    assert_eq!(
        bob.expect_event("DECLINED "),
        format!("DECLINED {theirs} cann cancelled")
    );
    assert!(
        bob.err(&format!("ACCEPT {theirs}"), 404)
            .contains("no challenge")
    );
    assert!(
        ann.err(&format!("CANCEL {mine}"), 404)
            .contains("no challenge")
    );

    // One challenge between them at a time, as on one node.
    let (_, theirs, _) = challenged(&mut ann, &mut bob, "othello as X");
    assert!(ann.err("CHALLENGE cbob", 409).contains("already"));

    // Accepted there: the game starts for both, on its terms, and is played.
    let (_, ok) = bob.ok(&format!("ACCEPT {theirs}"));
    let game = reply_game("ACCEPT", &ok);
    let start = format!("START {game} othello cann cbob -");
    assert_eq!(bob.line(), start);
    assert_eq!(ann.expect_event("START "), start);
    let start = parse_start(&start);
    let finished = play_game(&mut [&mut ann, &mut bob], &start, &mut |moves| moves[0]);
    assert!(finished.plies > 20, "{} plies", finished.plies);
    assert!(
        bob.err(&format!("ACCEPT {theirs}"), 404)
            .contains("no challenge")
    );
}

#[test]
fn challenges_across_nodes_are_refused_as_on_one_node_and_dropped_when_a_player_goes() {
    let Some(mut cluster) = Nodes::start("cluster_challenge_refused", &["a", "b"]) else {
        return;
    };
    let addrs = cluster.addrs();
    let mut ann = Client::login_as(addrs[0], "rann");
    let mut bob = Client::login_as(addrs[1], "rbob");
    assert!(ann.err("CHALLENGE nobody_here", 404).contains("not online"));
    // Guests: a rated challenge is refused, on either node's side.
    assert_eq!(
        ann.command("CHALLENGE rbob rated").1.split(' ').nth(1),
        Some("403")
    );

    // The challenged goes offline: the challenger hears it.
    let (mine, _, _) = challenged(&mut ann, &mut bob, "othello");
    drop(bob);
    assert_eq!(
        ann.expect_event("DECLINED "),
        format!("DECLINED {mine} rbob offline")
    );
    // The challenger goes offline: the challenged hears it.
    let mut bob = Client::login_as(addrs[1], "rbob");
    let (_, theirs, _) = challenged(&mut ann, &mut bob, "othello");
    drop(ann);
    assert_eq!(
        bob.expect_event("DECLINED "),
        format!("DECLINED {theirs} rann cancelled")
    );

    // A challenger in a game in play on its node: the accept is refused and
    // the challenge stays open.
    let mut ann = Client::login_as(addrs[0], "rann");
    let mut cy = Client::login_as(addrs[0], "rcy");
    let (mine, theirs, _) = challenged(&mut ann, &mut bob, "othello");
    let game = cy.ok_game("NEW othello");
    ann.ok(&format!("JOIN {game}"));
    assert!(bob.err(&format!("ACCEPT {theirs}"), 409).contains("rann"));
    ann.ok("END");
    ann.expect_event(&format!("OVER {game} "));
    ann.ok("LEAVE");
    let (_, ok) = bob.ok(&format!("ACCEPT {theirs}"));
    let started = reply_game("ACCEPT", &ok);
    assert_eq!(ann.expect_event("START "), bob.line());
    assert!(
        ann.err(&format!("CANCEL {mine}"), 404)
            .contains("no challenge")
    );
    assert_ne!(started, game);

    // The challenged's node dies: once it is declared dead, the challenger
    // hears that its challenge will not be played.
    let mut dee = Client::login_as(addrs[0], "rdee");
    let mut eve = Client::login_as(addrs[1], "reve");
    let (mine, _, _) = challenged(&mut dee, &mut eve, "othello");
    cluster.nodes[1].kill();
    assert_eq!(
        dee.expect_event("DECLINED "),
        format!("DECLINED {mine} reve offline")
    );
}
