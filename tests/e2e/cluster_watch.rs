//! Spectators on other nodes of a cluster (`cluster.nats`): a game played
//! on one node, watched from the same node and from two others, is seen
//! line for line the same by its players and every spectator, in the same
//! order; a spectator that leaves hears no more. Real processes on
//! loopback, a NATS server and a PostgreSQL server of the tests'.

use std::net::SocketAddr;

use flipline_test_servers::ScratchDatabase;
use flipline_tests::*;

use crate::cluster::{
    Back, Seat, counter, metrics_of, node_config_with, reply, secret_of, take_seat_back,
};

fn start_nodes(dir: &std::path::Path, url: &str, nats: &str) -> Vec<ChildDaemon> {
    ["a", "b", "c"]
        .iter()
        .map(|node| ChildDaemon::start_with(&node_config_with(dir, node, url, nats)))
        .collect()
}

/// A spectator of `game` from `addr`, having read the snapshot's `START`,
/// and that line.
fn spectator(addr: SocketAddr, name: &str, game: u64) -> (Client, String) {
    let mut client = Client::login_as(addr, name);
    let (data, ok) = client.ok(&format!("WATCH {game}"));
    assert!(data.is_empty(), "{data:?}");
    assert_eq!(ok, format!("OK {game}"));
    let start = client.line();
    assert!(
        start.starts_with(&format!("START {game} ")),
        "{name}: {start}"
    );
    (client, start)
}

#[test]
fn spectators_on_other_nodes_see_every_line_the_players_see() {
    let Some(nats) = nats_server() else {
        return;
    };
    let Some(db) = ScratchDatabase::new("cluster_watch") else {
        return;
    };
    let dir = temp_dir("cluster-watch");
    let nodes = start_nodes(&dir, &db.url, &nats);
    let (mut black, mut white, start) = new_and_join(nodes[0].addr, "othello", ["wa", "wb"]);
    let (mut here, start_here) = spectator(nodes[0].addr, "w_here", start.game);
    let (mut on_b, start_b) = spectator(nodes[1].addr, "w_b", start.game);
    let (mut on_c, start_c) = spectator(nodes[2].addr, "w_c", start.game);
    assert_eq!((&start_b, &start_c), (&start_here, &start_here));

    let mut clients = [&mut black, &mut white, &mut here, &mut on_b, &mut on_c];
    let finished = play_game(&mut clients, &start, &mut |moves| moves[0]);
    assert!(finished.plies > 50, "{} plies", finished.plies);

    // The node that owns the game answered the two others' requests.
    let served = counter(
        metrics_of(&nodes[0]),
        "flipline_remote_requests_served_total",
    );
    let sent = counter(metrics_of(&nodes[1]), "flipline_remote_requests_sent_total");
    assert_eq!((served, sent), (2, 1));
    // The game is over; LEAVE ends the watching there too.
    assert_eq!(on_b.ok("LEAVE").1, "OK");
    let missing = on_b.err(&format!("WATCH {}", start.game + 100_000), 404);
    assert!(missing.contains("no game"), "{missing}");
    drop(nodes);
    drop(db);
    remove_temp_dir(&dir);
}

#[test]
fn a_full_game_elsewhere_is_watched_from_here() {
    let Some(nats) = nats_server() else {
        return;
    };
    let Some(db) = ScratchDatabase::new("cluster_watch_play") else {
        return;
    };
    let dir = temp_dir("cluster-watch-play");
    let nodes = start_nodes(&dir, &db.url, &nats);
    let mut owner = Client::login_as(nodes[0].addr, "own");
    let game = owner.ok_game("NEW othello hotseat");
    let mut far = Client::login_as(nodes[1].addr, "far");
    // A hotseat game has no seat free, wherever it is asked.
    let refused = far.err(&format!("JOIN {game}"), 409);
    assert!(refused.contains(&format!("{game}")), "{refused}");
    let nowhere = far.err(&format!("JOIN {}", game + 100_000), 404);
    assert!(nowhere.contains("no game"), "{nowhere}");
    assert_eq!(far.ok(&format!("WATCH {game}")).1, format!("OK {game}"));
    let lines = far.lines_through(&format!("TURN {game} "));
    assert!(lines[0].starts_with(&format!("START {game} ")), "{lines:?}");
    // A move on the owner reaches the spectator elsewhere.
    owner.lines_through(&format!("TURN {game} "));
    assert_eq!(owner.ok("MOVE f5").1, "OK");
    assert!(far.expect_event(&format!("MOVED {game} ")).contains("f5"));
    far.lines_through(&format!("TURN {game} "));
    owner.lines_through(&format!("TURN {game} "));
    // BOARD from there reads the owner's board, as from here.
    let (board_far, _) = far.ok("BOARD");
    assert_eq!(board_far, owner.ok("BOARD").0);
    assert!(
        board_far[0].starts_with(&format!("BOARD {game} ")),
        "{board_far:?}"
    );
    // A spectator without a seat moves nowhere, there as here.
    far.err("MOVE d6", 403);
    drop(nodes);
    drop(db);
    remove_temp_dir(&dir);
}

/// Plays the hotseat game's next move from its last `TURN` line (read
/// here); the `BOARD` line that followed it.
fn play_next(owner: &mut Client, game: u64) -> String {
    let lines = owner.lines_through(&format!("TURN {game} "));
    let turn = lines.last().cloned().unwrap_or_default();
    let (_, command) = first_move(&turn);
    assert_eq!(owner.ok(&command).1, "OK");
    owner.expect_event(&format!("BOARD {game} "))
}

#[test]
fn a_spectator_elsewhere_catches_up_after_the_bus_restarts() {
    let Some(db) = ScratchDatabase::new("cluster_bus_restart") else {
        return;
    };
    if nats_server().is_none() {
        return;
    }
    let dir = temp_dir("cluster-bus-restart");
    let nats_dir = dir.join("nats").display().to_string();
    let nats = nats_tool(&["start", &nats_dir]);
    let a = ChildDaemon::start_with(&node_config_with(&dir, "a", &db.url, &nats));
    let b = ChildDaemon::start_with(&node_config_with(&dir, "b", &db.url, &nats));
    let mut owner = Client::login_as(a.addr, "bus_owner");
    let game = owner.ok_game("NEW othello hotseat");
    let mut far = Client::login_as(b.addr, "bus_far");
    assert_eq!(far.ok(&format!("WATCH {game}")).1, format!("OK {game}"));
    let board = play_next(&mut owner, game);
    assert_eq!(far.expect_event(&board), board);

    nats_tool(&["restart", &nats_dir]);
    // The owner's players do not need the bus: their moves go on. The
    // spectator elsewhere sees the latest position once the bus is back,
    // its missed lines made good by a snapshot: a move at a time until it
    // does.
    let mut caught_up = false;
    for _ in 0..40 {
        let board = play_next(&mut owner, game);
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(1);
        while let Received::Line(line) = far.read_until(deadline) {
            if line == board {
                caught_up = true;
                break;
            }
        }
        if caught_up {
            break;
        }
    }
    assert!(
        caught_up,
        "the spectator never saw the latest position again"
    );
    drop((far, owner, a, b, db));
    nats_tool(&["stop", &nats_dir]);
    remove_temp_dir(&dir);
}

#[test]
fn a_spectator_elsewhere_follows_a_game_taken_over_from_its_dead_node() {
    let Some(nats) = nats_server() else {
        return;
    };
    let Some(db) = ScratchDatabase::new("cluster_watch_takeover") else {
        return;
    };
    let dir = temp_dir("cluster-watch-takeover");
    let mut nodes = start_nodes(&dir, &db.url, &nats);
    let mut player = Client::connect(nodes[2].addr);
    let secret = secret_of(&reply(&mut player, "LOGIN follow").unwrap_or_default());
    player.name = "follow".into();
    let game = player.ok_game("NEW othello hotseat");
    let mut far = Client::login_as(nodes[0].addr, "follower");
    assert_eq!(far.ok(&format!("WATCH {game}")).1, format!("OK {game}"));
    far.lines_through(&format!("TURN {game} "));
    let board = play_next(&mut player, game);
    assert_eq!(far.expect_event(&board), board);

    nodes[2].kill();
    let seat = Seat {
        name: "follow".into(),
        secret,
        game,
    };
    let others = [nodes[0].addr, nodes[1].addr];
    let Back::Seated(mut back, stored) = take_seat_back(&others, &seat) else {
        panic!("game {game} over")
    };
    assert_eq!(stored.len(), 1);
    // The spectator elsewhere follows the game to its new node: the move
    // made there reaches it, as its MOVED or, when the spectator's watch
    // reached the new node after the move, in the snapshot it sent.
    let board = play_next(&mut back, game);
    let lines = far.lines_through(&board);
    let from_there = |l: &String| {
        l.starts_with(&format!("MOVED {game} ")) || l.starts_with(&format!("START {game} "))
    };
    assert!(lines.iter().any(from_there), "{lines:?}");
    drop((far, back, player, nodes, db));
    remove_temp_dir(&dir);
}

/// `LIST` and `WHO` on any node answer for every live node: each game and
/// each name once (a player seated at another node's game is known to
/// both), in order, as one node would answer.
#[test]
fn list_and_who_on_any_node_show_every_node_s_games_and_names() {
    let Some(nats) = nats_server() else {
        return;
    };
    let Some(db) = ScratchDatabase::new("cluster_list") else {
        return;
    };
    let dir = temp_dir("cluster-list");
    let nodes = start_nodes(&dir, &db.url, &nats);
    let (a, b, c) = (nodes[0].addr, nodes[1].addr, nodes[2].addr);
    let mut on_a = Client::login_as(a, "la");
    let mut on_b = Client::login_as(b, "lb");
    let in_play = on_a.ok_game("NEW othello as X");
    let open = on_b.ok_game("NEW reversi as X");
    let mut far = Client::login_as(c, "lc");
    assert_eq!(
        far.ok(&format!("JOIN {in_play}")).1,
        format!("OK {in_play} O")
    );
    let mut on_c = Client::login_as(c, "lw");

    // The nodes learn of each other from the database within a second or
    // so of their start: until then a node lists what it holds.
    let (data, ok) = answer_once_complete(&mut on_c, "LIST", 2);
    let listed: Vec<u64> = data.iter().filter_map(|l| game_of(l)).collect();
    let mut both = vec![in_play, open];
    both.sort_unstable();
    assert_eq!(listed, both, "LIST on c");
    assert_eq!(ok, "OK 2");
    let (playing, ok) = on_c.ok("LIST playing");
    assert_eq!(ok, "OK 1", "{playing:?}");
    assert_eq!(game_of(&playing[0]), Some(in_play));

    let (who, ok) = answer_once_complete(&mut on_b, "WHO", 4);
    let names: Vec<&str> = (who.iter())
        .filter_map(|l| l.strip_prefix("PLAYER "))
        .filter_map(|l| l.split(' ').next())
        .collect();
    assert_eq!(names, ["la", "lb", "lc", "lw"], "{who:?}");
    assert_eq!(ok, "OK 4");
    let lc = format!("PLAYER lc playing {in_play}");
    assert!(who.iter().any(|l| l.starts_with(&lc)), "{who:?}");
    drop((on_a, on_b, far, on_c, nodes, db));
    remove_temp_dir(&dir);
}

/// `command`'s answer once it lists `count` games or names (the node knows
/// every other node), polled within the hang guard.
fn answer_once_complete(client: &mut Client, command: &str, count: usize) -> (Vec<String>, String) {
    let began = std::time::Instant::now();
    loop {
        let (data, ok) = client.ok(command);
        let listed = data.iter().filter(|l| !l.starts_with("INFO ")).count();
        if listed >= count || began.elapsed() > HANG_GUARD {
            return (data, ok);
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// The game of a `GAME` line.
fn game_of(line: &str) -> Option<u64> {
    line.strip_prefix("GAME ")?.split(' ').next()?.parse().ok()
}
