//! A tournament on a cluster's node, seen, joined and shown from another
//! node, with a player that logs in again on another node (its client
//! reconnecting elsewhere): its rounds' games are made on the tournament's
//! node with the seats of players elsewhere held there (each taken out on
//! its own node first), and they play them and hear the tournament's news
//! from where they are. Real processes on loopback, a NATS server and a
//! PostgreSQL server of the tests'.

use std::time::{Duration, Instant};

use flipline_tests::*;

use crate::challenges::member;
use crate::cluster_play::Nodes;
use crate::tourneys::{Seen, all_games, play_tourney, winner_heard};

/// `name` (password `password`) logged in on `addr`, once its last
/// connection elsewhere has given the name back (a moment after it went).
fn member_again(addr: std::net::SocketAddr, name: &str, password: &str) -> Client {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let mut client = Client::connect(addr);
        let (_, reply) = client.command(&format!("LOGIN {name} {password}"));
        if reply.starts_with("OK ") {
            client.name = name.to_string();
            return client;
        }
        assert!(reply.contains("in use on node"), "{reply}");
        assert!(Instant::now() < deadline, "{name} still held: {reply}");
        std::thread::yield_now();
    }
}

/// The tournament `spec` that `creator` makes: its number.
fn new_tourney(creator: &mut Client, spec: &str) -> u64 {
    let (_, ok) = creator.ok(&format!("TOURNEY NEW {spec}"));
    ok.strip_prefix("OK ")
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("TOURNEY NEW -> {ok}"))
}

/// Until `client`'s node lists tournament `id` (a node asks the others
/// once it has read them from the database).
fn until_listed(client: &mut Client, id: u64) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !(client.ok("TOURNEY LIST").0.iter()).any(|l| l.starts_with(&format!("TOURNEY {id} "))) {
        assert!(Instant::now() < deadline, "tournament {id} never listed");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Plays tournament `id` for each of `players` on a thread of its own
/// until it is over, doing `meanwhile` to the cluster once they play; what
/// each saw (the nodes' warnings printed first if a thread failed).
fn played_out<const N: usize>(
    cluster: &mut Nodes,
    players: [Client; N],
    id: u64,
    meanwhile: impl FnOnce(&mut Nodes),
) -> Vec<Seen> {
    let threads = players.map(|c| std::thread::spawn(move || play_tourney(c, id, None)));
    meanwhile(cluster);
    (threads.into_iter())
        .map(|t| {
            t.join().unwrap_or_else(|_| {
                for node in &cluster.nodes {
                    for line in node.log_lines_with("WARN") {
                        eprintln!("{line}");
                    }
                }
                panic!("a player's thread failed")
            })
        })
        .collect()
}

/// Three nodes for `test`, the one that leads the lobby and the addresses
/// of the two others; `None` where the cluster tests do not run.
fn three_with_leader(test: &str) -> Option<(Nodes, usize, [std::net::SocketAddr; 2])> {
    let names = ["a", "b", "c"];
    let cluster = Nodes::start(test, &names)?;
    let addrs = cluster.addrs();
    let (leader, others) = crate::cluster_seek::leader_of(&cluster, &names);
    let others = [addrs[others[0]], addrs[others[1]]];
    Some((cluster, leader, others))
}

/// Every game the players saw, once each: (game, black, white); and how
/// many pairings, colours counted, those were.
fn games_and_pairings(seen: &[Seen]) -> (Vec<(u64, String, String)>, usize) {
    let mut games: Vec<_> = (all_games(seen).into_iter())
        .map(|(game, black, white, _)| (game, black, white))
        .collect();
    games.dedup();
    let pairings: std::collections::BTreeSet<_> = games
        .iter()
        .map(|(_, black, white)| (black, white))
        .collect();
    let count = pairings.len();
    (games, count)
}

#[test]
fn a_tournament_is_joined_and_played_from_any_node() {
    let Some(mut cluster) = Nodes::start("cluster_tourney", &["a", "b"]) else {
        return;
    };
    let addrs = cluster.addrs();
    let mut amy = member(addrs[0], "tamy", "pw-tamy-tourney");
    let mut bo = member(addrs[0], "tbo", "pw-tbo-tourney");
    let id = new_tourney(&mut amy, "roundrobin");
    amy.ok(&format!("TOURNEY JOIN {id}"));
    bo.ok(&format!("TOURNEY JOIN {id}"));

    // bo's client goes, and comes back on node b.
    drop(bo);
    let bo = member_again(addrs[1], "tbo", "pw-tbo-tourney");
    // cyd, on node b, sees the tournament there and joins it from there.
    let mut cyd = member(addrs[1], "tcyd", "pw-tcyd-tourney");
    let (listed, _) = cyd.ok("TOURNEY LIST");
    assert!(
        listed
            .iter()
            .any(|l| l.starts_with(&format!("TOURNEY {id} "))),
        "{listed:?}"
    );
    cyd.ok(&format!("TOURNEY JOIN {id}"));
    let (table, _) = cyd.ok(&format!("TOURNEY SHOW {id}"));
    assert_eq!(table.len(), 3, "three players: {table:?}");
    assert!(
        cyd.err("TOURNEY JOIN 987654321", 404)
            .contains("no tournament")
    );
    amy.ok(&format!("TOURNEY START {id}"));
    let mut seen = played_out(&mut cluster, [amy, bo, cyd], id, |_| {});
    // (bo, seated from b, may see its first board after amy's first move.)
    let (games, colours) = games_and_pairings(&seen);
    assert_eq!(games.len(), 6, "three pairs, twice each: {games:?}");
    assert_eq!(colours, 6, "each pair once each way round");
    for s in &seen {
        // (A player seated from another node reads a game's snapshot again
        // after a gap in its lines: its START may come twice.)
        let mine: std::collections::BTreeSet<u64> = s.games.iter().map(|g| g.0).collect();
        assert_eq!(mine.len(), 4, "{} played its four games", s.client.name);
        let over = s.lines.last().map(|line| event(line));
        assert!(
            matches!(over, Some(flipline::protocol::Event::TourneyNews { id: t, .. }) if t == id),
            "{} heard the end: {:?}",
            s.client.name,
            s.lines.last()
        );
    }
    let winners: Vec<_> = seen.iter().map(|s| winner_heard(s, id)).collect();
    assert!(
        winners.iter().all(|w| *w == winners[0]),
        "one end: {winners:?}"
    );
    // Both games are stored, whole, where the tournament is.
    let amy = &mut seen[0].client;
    for (game, ..) in &games {
        let (lines, _) = amy.ok(&format!("HISTORY {game}"));
        assert!(!lines.is_empty(), "game {game} kept on node a");
    }
}

#[test]
fn a_tournament_goes_on_to_its_end_when_the_lobby_s_leader_dies() {
    let Some((mut cluster, leader, [x, y])) = three_with_leader("cluster_tourney_leader") else {
        return;
    };
    let mut dee = member(x, "ldee", "pw-ldee-tourney");
    let mut eli = member(x, "leli", "pw-leli-tourney");
    let mut fay = member(y, "lfay", "pw-lfay-tourney");
    let id = new_tourney(&mut dee, "roundrobin");
    until_listed(&mut fay, id);
    for player in [&mut dee, &mut eli, &mut fay] {
        player.ok(&format!("TOURNEY JOIN {id}"));
    }
    dee.ok(&format!("TOURNEY START {id}"));
    let kill = |cluster: &mut Nodes| cluster.nodes[leader].kill();
    let seen = played_out(&mut cluster, [dee, eli, fay], id, kill);
    let (games, pairings) = games_and_pairings(&seen);
    assert_eq!(
        (games.len(), pairings),
        (6, 6),
        "every pairing played once: {games:?}"
    );
}

/// The node that runs a tournament (the lobby's leader too) is killed
/// while a game of its first round is in play, its players on the two
/// other nodes: a live node takes the tournament over with its games, and
/// it goes on to its end with every pairing played once.
#[test]
fn a_tournament_goes_on_from_another_node_when_its_own_dies() {
    let Some((mut cluster, leader, [x, y])) = three_with_leader("cluster_tourney_owner") else {
        return;
    };
    // The creator runs it from the leader and does not play.
    let mut kit = member(cluster.nodes[leader].addr, "okit", "pw-okit-tourney");
    let mut dee = member(x, "odee", "pw-odee-tourney");
    let mut eli = member(x, "oeli", "pw-oeli-tourney");
    let mut fay = member(y, "ofay", "pw-ofay-tourney");
    let id = new_tourney(&mut kit, "roundrobin");
    until_listed(&mut dee, id);
    until_listed(&mut fay, id);
    for player in [&mut dee, &mut eli, &mut fay] {
        player.ok(&format!("TOURNEY JOIN {id}"));
    }
    kit.ok(&format!("TOURNEY START {id}"));
    // Killed once a game of the tournament is in play on it.
    let kill = |cluster: &mut Nodes| {
        let deadline = Instant::now() + Duration::from_secs(60);
        while !(kit.ok("LIST").0.iter()).any(|l| l.contains(" playing ")) {
            assert!(Instant::now() < deadline, "no game of {id} in play");
            std::thread::yield_now();
        }
        cluster.nodes[leader].kill();
    };
    let seen = played_out(&mut cluster, [dee, eli, fay], id, kill);
    let (games, pairings) = games_and_pairings(&seen);
    assert_eq!(
        (games.len(), pairings),
        (6, 6),
        "every pairing played once: {games:?}"
    );
    let winners: Vec<_> = seen.iter().map(|s| winner_heard(s, id)).collect();
    assert!(
        winners.iter().all(|w| *w == winners[0]),
        "one end: {winners:?}"
    );
    let took = cluster
        .nodes
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != leader);
    let took: Vec<_> = took
        .filter(|(_, node)| !node.log_lines_with("took over 1 tournaments").is_empty())
        .collect();
    assert_eq!(took.len(), 1, "one node took it over");
}
