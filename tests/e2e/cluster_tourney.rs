//! A tournament on a cluster's node whose player logs in again on another
//! node (its client reconnecting elsewhere): its rounds' games are made on
//! the tournament's node with that player's seat held there, taken out on
//! its own node first, and it plays them and hears the tournament's news
//! from where it is. Real processes on loopback, a NATS server and a
//! PostgreSQL server of the tests'.

use std::time::{Duration, Instant};

use flipline_tests::*;

use crate::challenges::member;
use crate::cluster_play::Nodes;
use crate::tourneys::{all_games, play_tourney, winner_heard};

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

#[test]
fn a_tournament_s_player_on_another_node_plays_its_rounds_from_there() {
    let Some(cluster) = Nodes::start("cluster_tourney", &["a", "b"]) else {
        return;
    };
    let addrs = cluster.addrs();
    let mut amy = member(addrs[0], "tamy", "pw-tamy-tourney");
    let mut bo = member(addrs[0], "tbo", "pw-tbo-tourney");
    let (_, ok) = amy.ok("TOURNEY NEW roundrobin");
    let id: u64 = ok
        .strip_prefix("OK ")
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("TOURNEY NEW -> {ok}"));
    amy.ok(&format!("TOURNEY JOIN {id}"));
    bo.ok(&format!("TOURNEY JOIN {id}"));

    // bo's client goes, and comes back on node b.
    drop(bo);
    let bo = member_again(addrs[1], "tbo", "pw-tbo-tourney");
    amy.ok(&format!("TOURNEY START {id}"));
    let players = [amy, bo].map(|c| std::thread::spawn(move || play_tourney(c, id, None)));
    let mut seen: Vec<_> = (players.into_iter())
        .map(|t| {
            t.join()
                .unwrap_or_else(|_| panic!("a player's thread failed"))
        })
        .collect();
    // (bo, seated from b, may see its first board after amy's first move.)
    let mut games: Vec<_> = (all_games(&seen).into_iter())
        .map(|(game, black, white, _)| (game, black, white))
        .collect();
    games.dedup();
    assert_eq!(games.len(), 2, "one pair, twice: {games:?}");
    assert_ne!(games[0].1, games[1].1, "each plays black once");
    for s in &seen {
        assert_eq!(s.games.len(), 2, "{} played both games", s.client.name);
        let over = s.lines.last().map(|line| event(line));
        assert!(
            matches!(over, Some(flipline::protocol::Event::TourneyNews { id: t, .. }) if t == id),
            "{} heard the end: {:?}",
            s.client.name,
            s.lines.last()
        );
    }
    let winners: Vec<_> = seen.iter().map(|s| winner_heard(s, id)).collect();
    assert_eq!(winners[0], winners[1], "both heard the same end");
    // Both games are stored, whole, where the tournament is.
    let amy = &mut seen[0].client;
    for (game, ..) in &games {
        let (lines, _) = amy.ok(&format!("HISTORY {game}"));
        assert!(!lines.is_empty(), "game {game} kept on node a");
    }
}
