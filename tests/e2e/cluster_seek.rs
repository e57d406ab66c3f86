//! Seeks across a cluster's nodes (`cluster.nats`): the lobby's leader
//! pairs every node's seeks, the game made on the older seek's node and
//! the other seeker seated there from its own; when the leader dies, the
//! next one pairs the seeks left open (and a challenge open between two
//! nodes, none of the leader's, is played). Real processes on loopback, a
//! NATS server and a PostgreSQL server of the tests'.

use std::time::Duration;

use flipline_test_servers::ScratchDatabase;
use flipline_tests::*;

use crate::cluster::{counter, metrics_of, node_config_with};
use crate::cluster_play::Nodes;

const WITHIN: Duration = Duration::from_secs(60);

/// The `START` both seekers read, the same line for both.
fn both_start(first: &mut Client, second: &mut Client) -> Start {
    let line = first.expect_event("START ");
    assert_eq!(
        second.expect_event("START "),
        line,
        "both see the same START"
    );
    let start = parse_start(&line);
    let mut names = [start.black.as_str(), start.white.as_str()];
    names.sort_unstable();
    let mut seekers = [first.name.as_str(), second.name.as_str()];
    seekers.sort_unstable();
    assert_eq!(names, seekers, "{line}");
    start
}

/// What `WHO` on `client`'s node says `name` is doing.
fn status_of(client: &mut Client, name: &str) -> String {
    let (lines, _) = client.ok("WHO");
    let prefix = format!("PLAYER {name} ");
    let line = lines.iter().find(|l| l.starts_with(&prefix));
    line.unwrap_or_else(|| panic!("{name} not in {lines:?}"))
        .clone()
}

/// Which of `names` leads the lobby, as the first node's log says, and the
/// others.
pub(crate) fn leader_of(cluster: &Nodes, names: &[&str]) -> (usize, Vec<usize>) {
    let said = cluster.nodes[0].wait_for_log("the lobby's leader is node ", 1, WITHIN);
    let rest = said[0].split("the lobby's leader is node ").nth(1);
    let leader = rest.and_then(|r| r.split(' ').next()).unwrap_or_default();
    let leader = names.iter().position(|n| *n == leader);
    let leader = leader.unwrap_or_else(|| panic!("no leader in {said:?}"));
    let others = (0..names.len()).filter(|i| *i != leader).collect();
    (leader, others)
}

#[test]
fn seekers_on_two_nodes_are_paired_by_the_leader_and_play_their_game() {
    let Some(cluster) = Nodes::start("cluster_seek", &["a", "b", "c"]) else {
        return;
    };
    let addrs = cluster.addrs();
    let mut on_b = Client::login_as(addrs[1], "sb");
    let mut on_c = Client::login_as(addrs[2], "sc");
    assert_eq!(on_b.ok("SEEK othello").1, "OK seeking");
    assert_eq!(on_c.ok("SEEK othello").1, "OK seeking");
    let start = both_start(&mut on_b, &mut on_c);
    let finished = play_game(&mut [&mut on_b, &mut on_c], &start, &mut |moves| moves[0]);
    assert!(finished.plies > 20, "{} plies", finished.plies);

    // Two seekers of one node are paired by the leader too, and a seek of
    // another game waits on beside them.
    let mut first = Client::login_as(addrs[0], "sa1");
    let mut other = Client::login_as(addrs[1], "sb_other");
    let mut second = Client::login_as(addrs[0], "sa2");
    assert_eq!(first.ok("SEEK reversi").1, "OK seeking");
    assert_eq!(other.ok("SEEK othello clock 5+0").1, "OK seeking");
    assert_eq!(second.ok("SEEK reversi").1, "OK seeking");
    let start = both_start(&mut first, &mut second);
    assert_eq!(start.variant, flipline::Variant::Reversi);
    assert_eq!(
        status_of(&mut other, "sb_other"),
        "PLAYER sb_other seeking -"
    );
    let paired: u64 = (cluster.nodes.iter())
        .map(|node| counter(metrics_of(node), "flipline_lobby_pairings_total"))
        .sum();
    assert_eq!(paired, 2, "one leader paired each pair once");
}

#[test]
fn when_the_lobby_s_leader_dies_the_next_pairs_the_seeks_left_open() {
    let names = ["a", "b", "c"];
    let Some(mut cluster) = Nodes::start("cluster_seek_failover", &names) else {
        return;
    };
    let addrs = cluster.addrs();
    let (leader, others) = leader_of(&cluster, &names);
    let (x, y) = (addrs[others[0]], addrs[others[1]]);

    // Seeks of two games open on the two other nodes, then the leader dies.
    let mut p1 = Client::login_as(x, "fa");
    let mut p2 = Client::login_as(y, "fb");
    assert_eq!(p1.ok("SEEK othello").1, "OK seeking");
    assert_eq!(p2.ok("SEEK reversi").1, "OK seeking");
    // And a challenge between the two other nodes: none of the leader's.
    let mut p5 = Client::login_as(x, "fe");
    let mut p6 = Client::login_as(y, "ff");
    assert!(p5.ok("CHALLENGE ff othello").1.starts_with("OK "));
    let challenge = p6.expect_event("CHALLENGE ");
    let challenge = challenge.split(' ').nth(1).unwrap_or_default().to_string();
    cluster.nodes[leader].kill();
    let mut p3 = Client::login_as(x, "fc");
    let mut p4 = Client::login_as(y, "fd");
    assert_eq!(p3.ok("SEEK reversi").1, "OK seeking");
    assert_eq!(p4.ok("SEEK othello").1, "OK seeking");

    let othello = both_start(&mut p1, &mut p4);
    let reversi = both_start(&mut p2, &mut p3);
    assert_ne!(othello.game, reversi.game);
    let turns =
        [(&othello, &mut p1, &mut p4), (&reversi, &mut p2, &mut p3)].map(|(start, one, two)| {
            let turn = one.expect_event(&format!("TURN {} ", start.game));
            assert_eq!(two.expect_event(&format!("TURN {} ", start.game)), turn);
            turn
        });
    // Each sits in its one game, wherever it was made.
    for (client, name, game) in [
        (&mut p1, "fa", othello.game),
        (&mut p4, "fd", othello.game),
        (&mut p2, "fb", reversi.game),
        (&mut p3, "fc", reversi.game),
    ] {
        let status = status_of(client, name);
        assert_eq!(status, format!("PLAYER {name} playing {game} -"));
    }
    // The first move of each game, by whoever's turn it is.
    for ((start, one, two), turn) in [(&othello, &mut p1, &mut p4), (&reversi, &mut p2, &mut p3)]
        .into_iter()
        .zip(turns)
    {
        let flipline::protocol::Event::Turn { side, moves, .. } = event(&turn) else {
            panic!("{turn}");
        };
        let seated = match side {
            flipline::Color::Black => &start.black,
            flipline::Color::White => &start.white,
        };
        let mover = if one.name == *seated { one } else { two };
        assert_eq!(mover.ok(&format!("MOVE {}", moves[0])).1, "OK");
    }
    let new_leader = others
        .iter()
        .map(|&i| {
            counter(
                metrics_of(&cluster.nodes[i]),
                "flipline_lobby_pairings_total",
            )
        })
        .sum::<u64>();
    assert_eq!(new_leader, 2, "the next leader paired both");

    // The challenge made before the leader died is played.
    let (_, ok) = p6.ok(&format!("ACCEPT {challenge}"));
    let game = reply_game("ACCEPT", &ok);
    let start = p6.line();
    assert!(
        start.starts_with(&format!("START {game} othello ")),
        "{start}"
    );
    assert_eq!(p5.expect_event("START "), start);
    assert_eq!(
        status_of(&mut p5, "fe"),
        format!("PLAYER fe playing {game} -")
    );
}

/// What a node publishes while the bus is away is sent once it is back
/// (the NATS client keeps it); a message the server itself lost is made
/// good by each node telling its seeks again every few seconds, which the
/// pool tests hold (a seek told again keeps its place).
#[test]
fn seeks_made_while_the_bus_was_away_are_paired_once_it_is_back() {
    let Some(db) = ScratchDatabase::new("cluster_seek_bus") else {
        return;
    };
    if nats_server().is_none() {
        return;
    }
    let dir = temp_dir("cluster-seek-bus");
    let nats_dir = dir.join("nats").display().to_string();
    let nats = nats_tool(&["start", &nats_dir]);
    let a = ChildDaemon::start_with(&node_config_with(&dir, "a", &db.url, &nats));
    let b = ChildDaemon::start_with(&node_config_with(&dir, "b", &db.url, &nats));
    for node in [&a, &b] {
        node.wait_for_log("the lobby's leader is node ", 1, WITHIN);
    }
    nats_tool(&["stop", &nats_dir]);
    let mut on_a = Client::login_as(a.addr, "ba");
    let mut on_b = Client::login_as(b.addr, "bb");
    assert_eq!(on_a.ok("SEEK othello").1, "OK seeking");
    assert_eq!(on_b.ok("SEEK othello").1, "OK seeking");
    nats_tool(&["resume", &nats_dir]);
    let start = both_start(&mut on_a, &mut on_b);
    let finished = play_game(&mut [&mut on_a, &mut on_b], &start, &mut |moves| moves[0]);
    assert!(finished.plies > 20, "{} plies", finished.plies);
    drop((on_a, on_b, a, b, db));
    nats_tool(&["stop", &nats_dir]);
    remove_temp_dir(&dir);
}

/// The game's node of a pairing stops (SIGSTOP) before it makes the game,
/// past its lease: it is declared dead, the other seeker's node puts its
/// seek back, and the next seeker is paired with it; the stopped node,
/// let go on, makes nothing (it stops). Nobody sits in two games.
#[test]
fn a_pairing_whose_game_node_dies_before_making_it_leaves_the_other_seek_to_seek_again() {
    let names = ["a", "b", "c"];
    let Some(mut cluster) = Nodes::start("cluster_seek_maker", &names) else {
        return;
    };
    let addrs = cluster.addrs();
    let (leader, others) = leader_of(&cluster, &names);
    let (maker, asker) = (others[0], others[1]);
    let waiting_at_leader = |cluster: &Nodes| {
        counter(
            metrics_of(&cluster.nodes[leader]),
            "flipline_lobby_seeks_waiting",
        )
    };

    let mut first = Client::login_as(addrs[maker], "ma");
    assert_eq!(first.ok("SEEK othello").1, "OK seeking");
    wait_until("the leader holds the first seek", WITHIN, || {
        waiting_at_leader(&cluster) == 1
    });
    cluster.nodes[maker].pause();
    let mut second = Client::login_as(addrs[asker], "mb");
    assert_eq!(second.ok("SEEK othello").1, "OK seeking");
    wait_until("the leader paired them", WITHIN, || {
        counter(
            metrics_of(&cluster.nodes[leader]),
            "flipline_lobby_pairings_total",
        ) == 1
    });
    // The game's node is declared dead; the second seek waits again.
    wait_until("the second seek back at the leader", WITHIN, || {
        waiting_at_leader(&cluster) == 1
    });
    let mut third = Client::login_as(addrs[leader], "mc");
    assert_eq!(third.ok("SEEK othello").1, "OK seeking");
    let start = both_start(&mut second, &mut third);
    cluster.nodes[maker].resume();
    assert!(
        cluster.nodes[maker].wait_exit(WITHIN).is_some(),
        "the stopped node finds it was declared dead and stops"
    );
    // Asked by a third connection: the players' own have the game's
    // lines to read.
    let mut probe = Client::login_as(addrs[asker], "probe");
    for name in ["mb", "mc"] {
        let status = status_of(&mut probe, name);
        assert_eq!(status, format!("PLAYER {name} playing {} -", start.game));
    }
    let finished = play_game(&mut [&mut second, &mut third], &start, &mut |moves| {
        moves[0]
    });
    assert!(finished.plies > 20, "{} plies", finished.plies);
}
