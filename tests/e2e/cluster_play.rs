//! Players of one game on different nodes of a cluster (`cluster.nats`):
//! a game made on one node and joined from another is played, seen and
//! rematched as on one node, line for line and in the same order, with
//! spectators on a third; a player away from the game's node keeps the
//! name's one game in play there too, and takes its seat back from any
//! node after a disconnect. Real processes on loopback, a NATS server and
//! a PostgreSQL server of the tests'.

use std::net::SocketAddr;
use std::time::Instant;

use flipline::protocol::{Event, GameStatus, ServerLine};
use flipline::{Color, Game, Move, Variant};
use flipline_test_servers::ScratchDatabase;
use flipline_tests::*;

use crate::cluster::{
    Back, Seat, counter, metrics_of, node_config_with, reply, secret_of, take_seat_back,
};

/// A cluster for one test: its database, its directory and its nodes
/// (named `names`), on the tests' NATS server; `None` where those tests do
/// not run.
pub(crate) struct Nodes {
    pub(crate) nodes: Vec<ChildDaemon>,
    /// Dropped (the database with it) after the nodes stop.
    _db: ScratchDatabase,
    dir: std::path::PathBuf,
}

impl Nodes {
    pub(crate) fn start(test: &str, names: &[&str]) -> Option<Nodes> {
        let nats = nats_server()?;
        let db = ScratchDatabase::new(test)?;
        let dir = temp_dir(test);
        let nodes = (names.iter())
            .map(|node| ChildDaemon::start_with(&node_config_with(&dir, node, &db.url, &nats)))
            .collect();
        Some(Nodes {
            nodes,
            _db: db,
            dir,
        })
    }

    pub(crate) fn addrs(&self) -> Vec<SocketAddr> {
        self.nodes.iter().map(|n| n.addr).collect()
    }
}

impl Drop for Nodes {
    fn drop(&mut self) {
        self.nodes.clear();
        remove_temp_dir(&self.dir);
    }
}

/// `NEW othello as X` by `black` on `home`, `JOIN` by `white` on `away`:
/// both have read the `START` line, which is returned.
fn made_here_joined_there(
    (home, away): (SocketAddr, SocketAddr),
    black: &mut Client,
    white: &mut Client,
) -> Start {
    let game = black.ok_game("NEW othello as X");
    let (data, joined) = white.ok(&format!("JOIN {game}"));
    assert!(data.is_empty(), "{data:?}");
    assert_eq!(
        joined,
        format!("OK {game} O"),
        "JOIN from {away} of a game on {home}"
    );
    let start = white.line();
    assert_eq!(black.line(), start, "both see the same START");
    let parsed = parse_start(&start);
    assert_eq!(
        (parsed.game, parsed.black.as_str()),
        (game, black.name.as_str())
    );
    parsed
}

#[test]
fn players_on_two_nodes_and_spectators_on_a_third_see_the_same_lines() {
    let Some(cluster) = Nodes::start("cluster_play", &["a", "b", "c"]) else {
        return;
    };
    let (nodes, addrs) = (&cluster.nodes, cluster.addrs());
    let (a, b, c) = (addrs[0], addrs[1], addrs[2]);
    let mut black = Client::login_as(a, "pa");
    let mut white = Client::login_as(b, "pb");
    let start = made_here_joined_there((a, b), &mut black, &mut white);
    let game = start.game;
    let mut on_c = Client::login_as(c, "pc_watch");
    assert_eq!(on_c.ok(&format!("WATCH {game}")).1, format!("OK {game}"));
    assert_eq!(on_c.line(), format!("START {game} othello pa pb -"));
    let mut clients = [&mut black, &mut white, &mut on_c];
    let finished = play_game(&mut clients, &start, &mut |moves| moves[moves.len() / 2]);
    assert!(finished.plies > 50, "{} plies", finished.plies);

    // A rematch asked on both nodes: colours swapped, on the same node.
    assert_eq!(white.ok("REMATCH").1, "OK waiting");
    let offer = black.expect_event("INFO ");
    assert!(offer.contains("REMATCH"), "{offer}");
    let (data, rematched) = black.ok("REMATCH");
    assert!(data.is_empty(), "{data:?}");
    let again = reply_game("REMATCH", &rematched);
    let start_black = black.line();
    let start_white = white.expect_event(&format!("START {again} "));
    assert_eq!(start_black, start_white);
    assert_eq!(start_black, format!("START {again} othello pb pa -"));
    let again = parse_start(&start_black);
    let mut clients = [&mut black, &mut white];
    play_game(&mut clients, &again, &mut |moves| moves[0]);

    // The owner served the commands of the player on b, which sent them.
    let served = counter(
        metrics_of(&nodes[0]),
        "flipline_remote_requests_served_total",
    );
    let sent = counter(metrics_of(&nodes[1]), "flipline_remote_requests_sent_total");
    assert!(sent >= 30 && served >= sent, "sent {sent}, served {served}");
    // Over there: LEAVE leaves the seat there, as on one node, and the
    // player is free here again.
    assert_eq!(white.ok("LEAVE").1, "OK");
    let left = black.expect_event("INFO pb left");
    assert_eq!(left, format!("INFO pb left game {}", again.game));
    assert_eq!(white.ok("SEEK othello").1, "OK seeking");
}

#[test]
fn a_player_away_from_the_games_node_takes_its_seat_back_from_any_node() {
    let Some(cluster) = Nodes::start("cluster_play_back", &["a", "b", "c"]) else {
        return;
    };
    let addrs = cluster.addrs();
    let (a, b, c) = (addrs[0], addrs[1], addrs[2]);
    let mut black = Client::login_as(a, "ra");
    let mut white = Client::connect(b);
    let secret = secret_of(&reply(&mut white, "LOGIN rb").unwrap_or_default());
    white.name = "rb".into();
    let start = made_here_joined_there((a, b), &mut black, &mut white);
    let game = start.game;
    black.lines_through(&format!("TURN {game} "));
    white.lines_through(&format!("TURN {game} "));
    // The player on b sits at a game in play: nothing else meanwhile, on
    // its own node either, and WHO there says where it plays; its name is
    // taken on the game's node.
    let refused = white.err("SEEK othello", 409);
    assert!(
        refused.contains(&format!("game {game} is in play")),
        "{refused}"
    );
    let (who, _) = white.ok("WHO");
    let playing = format!("PLAYER rb playing {game} ");
    assert!(who.iter().any(|l| l.starts_with(&playing)), "{who:?}");
    let mut twin = Client::connect(a);
    let taken = reply(&mut twin, "LOGIN rb").unwrap_or_default();
    assert!(taken.starts_with("ERR 409 "), "{taken}");

    assert_eq!(black.ok("MOVE d3").1, "OK");
    white.expect_event(&format!("TURN {game} "));

    // White's connection on b closes: the game's node keeps the seat.
    drop(white);
    let kept = black.expect_event("INFO rb disconnected");
    assert!(kept.contains("the seat is kept"), "{kept}");
    // Back on c, with its secret: the seat and the position.
    let mut back = Client::connect(c);
    let login = reply(&mut back, &format!("LOGIN rb secret {secret}")).unwrap_or_default();
    assert_eq!(login, format!("OK rb secret {secret} seat {game}"));
    // Said kept, the seat holds the name on c too until it is taken back.
    let refused = back.err("SEEK othello", 409);
    assert!(
        refused.contains(&format!("game {game} is in play")),
        "{refused}"
    );
    back.name = "rb".into();
    assert_eq!(back.ok(&format!("JOIN {game}")).1, format!("OK {game} O"));
    let snapshot = back.lines_through(&format!("TURN {game} "));
    assert_eq!(snapshot[0], format!("START {game} othello ra rb -"));
    assert!(
        snapshot
            .iter()
            .any(|l| l.starts_with(&format!("BOARD {game} "))),
        "{snapshot:?}"
    );
    let turn = snapshot.last().cloned().unwrap_or_default();
    assert!(turn.starts_with(&format!("TURN {game} O ")), "{turn}");
    let (_, command) = first_move(&turn);
    assert_eq!(back.ok(&command).1, "OK");
    let moved = black.expect_event(&format!("MOVED {game} O "));
    assert!(
        moved.contains(command.trim_start_matches("MOVE ")),
        "{moved} after {command}"
    );
    // A wrong secret from yet another node is refused there.
    drop(back);
    black.expect_event("INFO rb disconnected");
    // Held for the guest's seat, the name goes to nobody else on any node,
    // as on one daemon.
    // (c gives the name back to the database as its connection goes,
    // which a may say before c has: polled while c still holds it.)
    let mut impostor = Client::connect(b);
    let began = Instant::now();
    let login = loop {
        let login = reply(&mut impostor, "LOGIN rb").unwrap_or_default();
        if !login.contains("is in use on node c") || began.elapsed() > HANG_GUARD {
            break login;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    assert!(
        login.starts_with("ERR 409 name 'rb' is held for its guest's seat"),
        "{login}"
    );
    let forged = "0123456789abcdef0123456789abcdef";
    let login = reply(&mut impostor, &format!("LOGIN rb secret {forged}")).unwrap_or_default();
    assert!(
        login.contains("not the secret its login was given"),
        "{login}"
    );
    // Refused, the impostor holds nothing: another name is free to it.
    let other = reply(&mut impostor, "LOGIN rc").unwrap_or_default();
    assert!(other.starts_with("OK rc "), "{other}");
}

/// A player whose connection to the game's node is lost logs in on another
/// node: the `OK` says the seat kept there, and the name is held there for
/// it (no second game meanwhile) until the game is over, even if the seat
/// is never taken back.
#[test]
fn a_seat_kept_on_another_node_holds_the_name_until_that_game_is_over() {
    let Some(cluster) = Nodes::start("cluster_play_kept", &["a", "b"]) else {
        return;
    };
    let addrs = cluster.addrs();
    let (a, b) = (addrs[0], addrs[1]);
    let mut black = Client::login_as(a, "ka2");
    let mut white = Client::connect(a);
    let secret = secret_of(&reply(&mut white, "LOGIN kb2").unwrap_or_default());
    white.name = "kb2".into();
    let game = black.ok_game("NEW othello as X");
    assert_eq!(white.ok(&format!("JOIN {game}")).1, format!("OK {game} O"));
    assert_eq!(black.ok("MOVE d3").1, "OK");
    drop(white);
    black.expect_event("INFO kb2 disconnected");

    let mut on_b = Client::connect(b);
    let login = reply(&mut on_b, &format!("LOGIN kb2 secret {secret}")).unwrap_or_default();
    assert_eq!(login, format!("OK kb2 secret {secret} seat {game}"));
    on_b.name = "kb2".into();
    for refused in ["SEEK othello", "NEW othello"] {
        let refused = on_b.err(refused, 409);
        assert!(
            refused.contains(&format!("game {game} is in play")),
            "{refused}"
        );
    }
    // The game ends on a without kb2 taking its seat back.
    assert_eq!(black.ok("END").1, "OK");
    black.expect_event(&format!("OVER {game} O "));
    // a tells every node: the name is free on b a moment later.
    let began = Instant::now();
    loop {
        let (_, seeking) = on_b.command("SEEK othello");
        if seeking == "OK seeking" {
            break;
        }
        assert!(
            seeking.contains(&format!("game {game} is in play")) && began.elapsed() < HANG_GUARD,
            "{seeking}"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

#[test]
fn a_player_elsewhere_follows_its_game_when_the_games_node_dies() {
    follows_after_the_owner_dies(&["a", "b", "c"]);
}

/// The same with the player's node the only one left to take the game
/// over: its seat becomes one on its own node.
#[test]
fn a_player_elsewhere_sits_at_its_game_on_its_own_node_once_that_node_takes_it_over() {
    follows_after_the_owner_dies(&["b", "c"]);
}

/// A game owned by the last of `names` (`c`), black there, white on `b`:
/// the owner dies, white's seat follows the game, black takes its seat
/// back on a live node.
fn follows_after_the_owner_dies(names: &[&str]) {
    let test = format!("cluster_play_takeover{}", names.len());
    let Some(mut cluster) = Nodes::start(&test, names) else {
        return;
    };
    let addrs = cluster.addrs();
    let [live @ .., c] = addrs.as_slice() else {
        panic!("no nodes")
    };
    let (b, c) = (live[live.len() - 1], *c);
    let mut black = Client::connect(c);
    let secret = secret_of(&reply(&mut black, "LOGIN ka").unwrap_or_default());
    black.name = "ka".into();
    let mut white = Client::login_as(b, "kb");
    let start = made_here_joined_there((c, b), &mut black, &mut white);
    let game = start.game;
    black.lines_through(&format!("TURN {game} "));
    white.lines_through(&format!("TURN {game} "));
    assert_eq!(black.ok("MOVE d3").1, "OK");
    white.lines_through(&format!("TURN {game} O "));

    if let Some(owner) = cluster.nodes.last_mut() {
        owner.kill();
    }
    // White, on b, does nothing: its seat follows the game to the node that
    // takes it over (b itself or a), whose snapshot it hears.
    let snapshot = white.lines_through(&format!("TURN {game} O "));
    let start_line = format!("START {game} othello ka kb -");
    assert!(snapshot.contains(&start_line), "{snapshot:?}");
    let turn = snapshot.last().cloned().unwrap_or_default();
    let (_, command) = first_move(&turn);
    assert_eq!(white.ok(&command).1, "OK");
    // Black takes its seat back on a live node and sees both moves there.
    let seat = Seat {
        name: "ka".into(),
        secret,
        game,
    };
    let Back::Seated(mut back, stored) = take_seat_back(live, &seat) else {
        panic!("game {game} over")
    };
    assert_eq!(stored.len(), 2, "{stored:?}");
    let lines = back.lines_through(&format!("TURN {game} X "));
    assert!(lines.contains(&start_line), "{lines:?}");
}

/// Two players of a game on node c, black there and white from node b,
/// after black's first move: then c stops before a command of white's
/// reaches it, and is killed, leaving it unanswered.
struct OwnerDying {
    cluster: Nodes,
    addrs: [std::net::SocketAddr; 3],
    /// Connected to the end, so that the game is not abandoned.
    _black: Client,
    white: Client,
    game: u64,
    /// Black's guest secret.
    secret: String,
}

impl OwnerDying {
    fn start(db: &str) -> Option<OwnerDying> {
        let cluster = Nodes::start(db, &["a", "b", "c"])?;
        let addrs = cluster.addrs();
        let (b, c) = (addrs[1], addrs[2]);
        let mut black = Client::connect(c);
        let secret = secret_of(&reply(&mut black, "LOGIN sa").unwrap_or_default());
        black.name = "sa".into();
        let mut white = Client::login_as(b, "sb");
        let game = made_here_joined_there((c, b), &mut black, &mut white).game;
        black.lines_through(&format!("TURN {game} "));
        white.lines_through(&format!("TURN {game} "));
        assert_eq!(black.ok("MOVE d3").1, "OK");
        let addrs = [addrs[0], b, c];
        Some(OwnerDying {
            cluster,
            addrs,
            _black: black,
            white,
            game,
            secret,
        })
    }

    /// White sends `command`, which the game's node never receives.
    fn unanswered(mut self, command: &str) -> OwnerDying {
        let owner = (self.cluster.nodes.last_mut()).unwrap_or_else(|| panic!("no nodes"));
        owner.pause();
        self.white.send(command);
        owner.kill();
        self
    }
}

/// A move sent to a game's node that dies before answering it is sent again
/// to the node that takes the game over, keyed by the plies its player had
/// heard of, and answered from there: played once, not `ERR 503`.
#[test]
fn a_move_its_games_node_died_before_answering_is_played_once_on_the_next() {
    let Some(mut played) = OwnerDying::start("cluster_play_resend") else {
        return;
    };
    let (game, [a, b, _]) = (played.game, played.addrs);
    let turn = played.white.lines_through(&format!("TURN {game} O "));
    let (_, command) = first_move(turn.last().map_or("", String::as_str));
    let OwnerDying {
        cluster,
        mut white,
        secret,
        _black,
        ..
    } = played.unanswered(&command);
    let (_, answered) = white.final_reply(&command);
    assert_eq!(answered, "OK", "{command} after its node died");
    let square = command.trim_start_matches("MOVE ");
    let moved = white.lines_through(&format!("MOVED {game} O "));
    let moved = moved.last().cloned().unwrap_or_default();
    assert!(moved.contains(square), "{moved} after {command}");
    let resent: u64 = (cluster.nodes.iter().take(2))
        .map(|node| counter(metrics_of(node), "flipline_remote_commands_resent_total"))
        .sum();
    assert_eq!(resent, 1, "sent again once, to the node that took the game");

    // Stored once: black, back on a live node, finds both moves.
    let seat = Seat {
        name: "sa".into(),
        secret,
        game,
    };
    let Back::Seated(_, stored) = take_seat_back(&[a, b], &seat) else {
        panic!("game {game} over")
    };
    let played: Vec<String> = stored.iter().map(ToString::to_string).collect();
    assert_eq!(played, ["d3", square], "{stored:?}");
}

/// `END` sent to a game's node that dies before answering it is carried
/// out on the node that takes the game over (a game taken over is in
/// play: the resignation was not stored), and answered `OK`, not `ERR 503`.
#[test]
fn a_resignation_its_games_node_died_before_answering_is_carried_out_on_the_next() {
    let Some(played) = OwnerDying::start("cluster_play_resend_end") else {
        return;
    };
    let game = played.game;
    // The nodes and black's connection are held to the end.
    let OwnerDying {
        mut white,
        cluster: _cluster,
        _black,
        ..
    } = played.unanswered("END");
    let (_, answered) = white.final_reply("END");
    assert_eq!(answered, "OK", "END after its node died");
    let over = white.lines_through(&format!("OVER {game} "));
    let over = over.last().cloned().unwrap_or_default();
    assert!(over.contains("resign"), "{over}");
}

/// The game as its owner's store has it, read from `client` (on that
/// node): its status and moves.
fn stored(client: &mut Client, game: u64) -> (GameStatus, Vec<Move>) {
    let (data, reply) = client.command(&format!("HISTORY {game}"));
    assert_eq!(reply, "OK", "HISTORY {game}");
    let history = data.iter().find_map(|line| match ServerLine::parse(line) {
        ServerLine::Event(Event::History(summary)) => Some(summary),
        _ => None,
    });
    let summary = history.unwrap_or_else(|| panic!("HISTORY {game}: {data:?}"));
    (summary.status, summary.moves)
}

#[test]
fn a_game_between_two_nodes_goes_on_by_itself_after_the_bus_restarts() {
    let Some(db) = ScratchDatabase::new("cluster_play_bus") else {
        return;
    };
    if nats_server().is_none() {
        return;
    }
    let dir = temp_dir("cluster-play-bus");
    let nats_dir = dir.join("nats").display().to_string();
    let nats = nats_tool(&["start", &nats_dir]);
    let a = ChildDaemon::start_with(&node_config_with(&dir, "a", &db.url, &nats));
    let b = ChildDaemon::start_with(&node_config_with(&dir, "b", &db.url, &nats));
    let mut black = Client::login_as(a.addr, "na");
    let mut white = Client::login_as(b.addr, "nb");
    let game = made_here_joined_there((a.addr, b.addr), &mut black, &mut white).game;
    // Each move from the position as stored; a move answered 503 (the bus
    // away: the owner's answer did not come) may or may not have been
    // played, so the next one starts from the store again. Every move
    // acknowledged must be stored at its ply.
    let (mut acked, mut refused, mut restarted) = (Vec::new(), 0, false);
    let began = Instant::now();
    loop {
        assert!(
            began.elapsed() < HANG_GUARD,
            "hang guard: game {game} did not end"
        );
        let (status, moves) = stored(&mut black, game);
        if status == GameStatus::Over {
            for (ply, mv) in &acked {
                assert_eq!(
                    moves.get(*ply),
                    Some(mv),
                    "acknowledged move {ply} of {moves:?}"
                );
            }
            break;
        }
        if moves.len() == 6 && !restarted {
            nats_tool(&["restart", &nats_dir]);
            restarted = true;
        }
        let mut position = Game::new(Variant::Othello);
        for stored_move in &moves {
            let played = position.apply(*stored_move);
            assert!(played.is_ok(), "stored moves do not replay: {moves:?}");
        }
        let mv = position
            .legal_moves()
            .iter()
            .next()
            .map_or(Move::Pass, Move::Place);
        let mover = match position.to_move() {
            Color::Black => &mut black,
            Color::White => &mut white,
        };
        let command = match mv {
            Move::Pass => "PASS".to_string(),
            Move::Place(square) => format!("MOVE {square}"),
        };
        match mover.command(&command).1.as_str() {
            "OK" => acked.push((moves.len(), mv)),
            reply if reply.starts_with("ERR 503 ") => refused += 1,
            // Played after all, its answer lost: the store says so next.
            reply if reply.starts_with("ERR 409 ") => {}
            reply => panic!("{command}: {reply}"),
        }
    }
    assert!(
        acked.len() > 40,
        "{} moves acknowledged, {refused} refused",
        acked.len()
    );
    drop((black, white, a, b, db));
    nats_tool(&["stop", &nats_dir]);
    remove_temp_dir(&dir);
}

#[test]
fn many_games_between_nodes_at_once_are_each_played_to_their_end() {
    let Some(cluster) = Nodes::start("cluster_play_many", &["a", "b", "c"]) else {
        return;
    };
    let addrs = cluster.addrs();
    // Twelve games at once, each made on one node and joined from the next.
    let games: Vec<_> = (0..12)
        .map(|i| {
            let (home, away) = (addrs[i % 3], addrs[(i + 1) % 3]);
            std::thread::spawn(move || {
                let mut black = Client::login_as(home, &format!("m{i}x"));
                let mut white = Client::login_as(away, &format!("m{i}o"));
                let start = made_here_joined_there((home, away), &mut black, &mut white);
                let mut clients = [&mut black, &mut white];
                play_game(&mut clients, &start, &mut |moves| moves[i % moves.len()])
            })
        })
        .collect();
    for (i, game) in games.into_iter().enumerate() {
        let finished = game.join().unwrap_or_else(|_| panic!("game {i} failed"));
        assert!(finished.plies > 40, "game {i}: {} plies", finished.plies);
    }
    let served: u64 = (cluster.nodes.iter())
        .map(|n| counter(metrics_of(n), "flipline_remote_requests_served_total"))
        .sum();
    assert!(served > 12 * 20, "{served} commands served for other nodes");
}
