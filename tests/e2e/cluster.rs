//! flipd nodes sharing one PostgreSQL store (`cluster.node`), as real
//! processes on loopback: a node killed under load has its games taken over
//! by the live ones, whose players take their seats back there and finish;
//! a node paused past its lease acknowledges nothing for the games it lost
//! and stops when it runs again. Every acknowledged move is in the store,
//! in order, and nothing else is.
//!
//! They run where the PostgreSQL tests run (see `flipline_test_servers`).

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use flipline::protocol::{Event, GameStatus, ServerLine};
use flipline::{Game, Move, Variant};
use flipline_test_servers::{ScratchDatabase, query_text};
use flipline_tests::*;

/// How long anything the tests wait for may take: far more than a lease
/// (2 s) and a takeover need, so that only a real failure fails.
const WITHIN: Duration = Duration::from_secs(60);

/// The lease of the tests' nodes, in seconds.
pub const LEASE_SECS: u64 = 2;

/// Writes a node's configuration: the shared store, this node's name, a
/// metrics listener.
fn node_config(dir: &Path, node: &str, url: &str) -> PathBuf {
    node_config_with(dir, node, url, "")
}

/// As [`node_config`], reaching the other nodes through the NATS server at
/// `nats` (empty: none).
pub fn node_config_with(dir: &Path, node: &str, url: &str, nats: &str) -> PathBuf {
    let dir = dir.join(node);
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    let text = format!(
        "(\n    listen: \"127.0.0.1:0\",\n    workers: 2,\n    shutdown_drain_ms: 500,\n    \
         max_connections_per_address: 100000,\n    grace_secs: 60,\n    \
         rate_limit: (per_second: 100000, burst: 100000),\n    \
         store: (path: {:?}, url: {url:?}),\n    \
         cluster: (node: {node:?}, lease_secs: {LEASE_SECS}, nats: {nats:?}),\n    \
         metrics: (listen: \"127.0.0.1:0\"),\n)\n",
        dir.join("unused.db").display().to_string()
    );
    let path = dir.join("flipd.ron");
    std::fs::write(&path, text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    path
}

fn start_node(dir: &Path, node: &str, url: &str) -> ChildDaemon {
    ChildDaemon::start_with(&node_config(dir, node, url))
}

/// The command that plays `mv`.
fn command(mv: Move) -> String {
    match mv {
        Move::Pass => "PASS".to_string(),
        Move::Place(square) => format!("MOVE {square}"),
    }
}

/// The first legal move of `game` (or a pass).
fn first_move(game: &Game) -> Move {
    game.legal_moves()
        .iter()
        .next()
        .map_or(Move::Pass, Move::Place)
}

/// A reply to `line`, `None` if the connection closed first.
pub fn reply(client: &mut Client, line: &str) -> Option<String> {
    client.send(line);
    let deadline = Instant::now() + WITHIN;
    loop {
        match client.read_until(deadline) {
            Received::Line(reply) if is_final(&reply) => return Some(reply),
            Received::Line(_) => {}
            Received::Closed => return None,
            Received::TimedOut => panic!("{}: {line}: no reply within {WITHIN:?}", client.name),
        }
    }
}

/// A guest's secret, from its `LOGIN` reply (`OK name secret S`).
pub fn secret_of(reply: &str) -> String {
    reply
        .split(" secret ")
        .nth(1)
        .map(str::to_string)
        .unwrap_or_else(|| panic!("no secret in {reply}"))
}

/// A guest and the game it plays.
pub struct Seat {
    pub name: String,
    pub secret: String,
    pub game: u64,
}

/// A game as its player finds it on a live node after its node died.
pub enum Back {
    /// Its seat taken back (the client there), and the moves stored.
    Seated(Client, Vec<Move>),
    /// Over already (its last move was stored as the node died), with
    /// its moves.
    Over(Vec<Move>),
}

/// The status and moves the store holds for `game` (`HISTORY`, which any
/// node answers from the shared store).
fn history(client: &mut Client, game: u64) -> Option<(GameStatus, Vec<Move>)> {
    let (data, reply) = client.command(&format!("HISTORY {game}"));
    if reply != "OK" {
        return None;
    }
    match data.as_slice() {
        [line] => match ServerLine::parse(line) {
            ServerLine::Event(Event::History(summary)) => Some((summary.status, summary.moves)),
            other => panic!("not a HISTORY line: {other:?}"),
        },
        other => panic!("HISTORY {game}: {other:?}"),
    }
}

/// Logs in on each of `nodes` in turn until one gives `seat`'s game back
/// (`JOIN`: the node that took it over), or finds it over.
pub fn take_seat_back(nodes: &[SocketAddr], seat: &Seat) -> Back {
    let began = Instant::now();
    let mut last = String::new();
    for addr in nodes.iter().cycle() {
        assert!(
            began.elapsed() < WITHIN,
            "game {} was not taken over within {WITHIN:?} (last: {last})",
            seat.game
        );
        let mut client = Client::connect(*addr);
        let login = format!("LOGIN {} secret {}", seat.name, seat.secret);
        let Some(logged_in) = reply(&mut client, &login) else {
            continue;
        };
        last = logged_in.clone();
        if !logged_in.starts_with("OK ") {
            // The name still held there by a connection that just closed.
            std::thread::sleep(Duration::from_millis(50));
            continue;
        }
        client.name = seat.name.clone();
        let Some((status, moves)) = history(&mut client, seat.game) else {
            continue;
        };
        if status == GameStatus::Over {
            return Back::Over(moves);
        }
        let want = [format!("OK {} X", seat.game), format!("OK {} O", seat.game)];
        match reply(&mut client, &format!("JOIN {}", seat.game)) {
            Some(joined) if want.contains(&joined) => return Back::Seated(client, moves),
            // Not this node's game (yet): another node, or a little later.
            other => {
                last = format!("{addr}: {other:?}");
                std::thread::sleep(Duration::from_millis(50));
            }
        }
    }
    unreachable!("cycle ends only by returning")
}

/// Checks what the store holds of a game against what its player was told:
/// every acknowledged move, and at most the one move in flight at the kill
/// (stored, its answer lost with the node).
fn check_stored(game: u64, acked: &[Move], in_flight: Move, stored: &[Move]) {
    assert!(
        stored.starts_with(acked) && stored.len() <= acked.len() + 1,
        "game {game}: stored {stored:?}, acknowledged {acked:?}"
    );
    if stored.len() > acked.len() {
        assert_eq!(stored.last(), Some(&in_flight), "game {game}");
    }
}

/// One hotseat game as its player heard it acknowledged.
struct Played {
    game: u64,
    acked: Vec<Move>,
    /// How long after the kill the seat was taken back on another node.
    rejoined_after: Option<Duration>,
}

/// What a player shares with the test.
#[derive(Clone)]
struct Shared {
    nodes: Arc<Vec<SocketAddr>>,
    stop: Arc<AtomicBool>,
    acked: Arc<AtomicUsize>,
    killed_at: Arc<Mutex<Option<Instant>>>,
    /// Players whose node died and who are done with it: back in their
    /// game on another node, or between games at the kill.
    settled: Arc<AtomicUsize>,
}

/// Plays hotseat games on node `home` until told to stop; if the node dies
/// under it, takes the seat back on another node, finishes that game and
/// stops.
fn player(shared: Shared, home: usize, name: String) -> Vec<Played> {
    let mut client = Client::connect(shared.nodes[home]);
    let logged_in = reply(&mut client, &format!("LOGIN {name}")).unwrap_or_default();
    let secret = secret_of(&logged_in);
    let mut games = Vec::new();
    let mut orphaned = false;
    while !shared.stop.load(Ordering::Relaxed) {
        let Some(created) = reply(&mut client, "NEW othello hotseat") else {
            // The node died between two games: nothing to take back.
            shared.settled.fetch_add(1, Ordering::Relaxed);
            break;
        };
        let game = reply_game("NEW othello hotseat", &created);
        let mut played = Played {
            game,
            acked: Vec::new(),
            rejoined_after: None,
        };
        let mut mirror = Game::new(Variant::Othello);
        while !mirror.is_over() && (orphaned || !shared.stop.load(Ordering::Relaxed)) {
            let mv = first_move(&mirror);
            match reply(&mut client, &command(mv)) {
                Some(ok) if ok == "OK" => {
                    let _ = mirror.apply(mv);
                    played.acked.push(mv);
                    shared.acked.fetch_add(1, Ordering::Relaxed);
                }
                Some(refused) => {
                    assert!(refused.starts_with("ERR 503"), "{name}: {refused}");
                    std::thread::sleep(Duration::from_millis(20));
                }
                None => {
                    // The node died: the game goes on elsewhere.
                    let others: Vec<SocketAddr> = (shared.nodes.iter().enumerate())
                        .filter(|&(i, _)| i != home)
                        .map(|(_, a)| *a)
                        .collect();
                    let seat = Seat {
                        name: name.clone(),
                        secret: secret.clone(),
                        game,
                    };
                    let back = take_seat_back(&others, &seat);
                    let killed = *shared
                        .killed_at
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner);
                    played.rejoined_after = killed.map(|at| at.elapsed());
                    shared.settled.fetch_add(1, Ordering::Relaxed);
                    orphaned = true;
                    let stored = match back {
                        Back::Seated(seated, stored) => {
                            client = seated;
                            stored
                        }
                        Back::Over(stored) => {
                            check_stored(game, &played.acked, mv, &stored);
                            played.acked = stored;
                            break;
                        }
                    };
                    check_stored(game, &played.acked, mv, &stored);
                    mirror = Game::new(Variant::Othello);
                    for &mv in &stored {
                        let _ = mirror.apply(mv);
                    }
                    played.acked = stored;
                }
            }
        }
        games.push(played);
        if orphaned {
            break;
        }
    }
    games
}

/// Waits until `done` holds, or fails saying `what`.
fn until(what: &str, done: impl FnMut() -> bool) {
    wait_until(what, WITHIN, done);
}

/// The moves the store holds for `game`, in ply order; fails unless its
/// plies are 1, 2, ... without a gap.
fn stored_moves(url: &str, game: u64) -> Vec<Move> {
    let sql = format!(
        "SELECT string_agg(ply::text || ':' || move, ' ' ORDER BY ply) FROM moves WHERE game = {game}"
    );
    let text = query_text(url, &sql)
        .unwrap_or_else(|e| panic!("{e}"))
        .unwrap_or_default();
    text.split_whitespace()
        .enumerate()
        .map(|(i, entry)| {
            let (ply, mv) = entry.split_once(':').unwrap_or_default();
            assert_eq!(ply, (i + 1).to_string(), "game {game}: plies {text}");
            mv.parse()
                .unwrap_or_else(|_| panic!("game {game}: {mv} is not a move"))
        })
        .collect()
}

#[test]
fn a_node_killed_under_load_has_its_games_taken_over_and_finished_elsewhere() {
    let Some(db) = ScratchDatabase::new("cluster_kill") else {
        return;
    };
    let dir = temp_dir("cluster-kill");
    let mut nodes: Vec<ChildDaemon> = ["a", "b", "c"]
        .iter()
        .map(|node| start_node(&dir, node, &db.url))
        .collect();
    let shared = Shared {
        nodes: Arc::new(nodes.iter().map(|n| n.addr).collect()),
        stop: Arc::default(),
        acked: Arc::default(),
        killed_at: Arc::default(),
        settled: Arc::default(),
    };
    const PER_NODE: usize = 20;
    let players: Vec<_> = (0..3 * PER_NODE)
        .map(|i| {
            let shared = shared.clone();
            let (home, name) = (i % 3, format!("k{i}"));
            (home, std::thread::spawn(move || player(shared, home, name)))
        })
        .collect();
    until("1500 moves acknowledged", || {
        shared.acked.load(Ordering::Relaxed) >= 1500
    });

    *shared
        .killed_at
        .lock()
        .unwrap_or_else(PoisonError::into_inner) = Some(Instant::now());
    nodes[2].kill();
    until("every player of the dead node back in its game", || {
        shared.settled.load(Ordering::Relaxed) == PER_NODE
    });
    // Every game in play has a live owner now.
    let ownerless = query_text(
        &db.url,
        "SELECT count(*) FROM games g LEFT JOIN nodes n ON n.incarnation = g.owner \
         WHERE g.status = 'playing' AND n.state IS DISTINCT FROM 'live'",
    );
    assert_eq!(ownerless, Ok(Some("0".to_string())));
    shared.stop.store(true, Ordering::Relaxed);
    let mut games = Vec::new();
    let mut slowest = Duration::ZERO;
    for (home, player) in players {
        let played = player
            .join()
            .unwrap_or_else(|_| panic!("a player panicked"));
        if home == 2
            && let Some(after) = played.last().and_then(|last| last.rejoined_after)
        {
            slowest = slowest.max(after);
        }
        games.extend(played);
    }
    eprintln!(
        "{} games, {} moves acknowledged; the dead node's players all back in their games \
         {slowest:?} after the kill (lease {LEASE_SECS} s)",
        games.len(),
        shared.acked.load(Ordering::Relaxed)
    );
    for played in &games {
        assert_eq!(
            stored_moves(&db.url, played.game),
            played.acked,
            "game {}",
            played.game
        );
    }
    drop(nodes);
    drop(db);
    remove_temp_dir(&dir);
}

/// The `CLOCK` line's times for black and white in milliseconds, read from
/// `CLOCK <game> <black-ms> <white-ms>`.
fn clocks_of(line: &str) -> (u64, u64) {
    let fields: Vec<&str> = line.split_whitespace().collect();
    let ms = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse().ok())
            .unwrap_or_else(|| panic!("not a CLOCK line: {line}"))
    };
    (ms(2), ms(3))
}

#[test]
fn a_node_paused_past_its_lease_acknowledges_nothing_for_its_lost_games_and_stops() {
    let Some(db) = ScratchDatabase::new("cluster_fence") else {
        return;
    };
    let dir = temp_dir("cluster-fence");
    let mut a = start_node(&dir, "a", &db.url);
    let b = start_node(&dir, "b", &db.url);

    let mut player = Client::connect(a.addr);
    let secret = secret_of(&reply(&mut player, "LOGIN fen").unwrap_or_default());
    player.name = "fen".into();
    let began = Instant::now();
    let game = player.ok_game("NEW othello hotseat clock 5+0");
    let mut mirror = Game::new(Variant::Othello);
    for _ in 0..4 {
        let mv = first_move(&mirror);
        assert_eq!(reply(&mut player, &command(mv)).as_deref(), Some("OK"));
        let _ = mirror.apply(mv);
    }

    a.pause();
    // A move sent to the paused node: it waits in the socket meanwhile.
    let stale = first_move(&mirror);
    player.send(&command(stale));
    b.wait_for_log("took over 1 games", 1, WITHIN);
    let seat = Seat {
        name: "fen".into(),
        secret,
        game,
    };
    let Back::Seated(mut back, stored) = take_seat_back(&[b.addr], &seat) else {
        panic!("game {game} over")
    };
    assert_eq!(stored.len(), 4, "the moves acknowledged before the pause");
    // Not charged for the time without an owner: that lasted at least the
    // lease less one renewal's interval (the last renewal before the pause
    // was at most that old), and black's clock counts less than the whole
    // game's life by at least as much.
    let clock = back.expect_event(&format!("CLOCK {game} "));
    let lived_ms = u64::try_from(began.elapsed().as_millis()).unwrap_or(u64::MAX);
    let (black_ms, _) = clocks_of(&clock);
    let charged_ms = 300_000u64.saturating_sub(black_ms);
    let ownerless_ms = LEASE_SECS * 1000 - 1000;
    assert!(
        charged_ms + ownerless_ms <= lived_ms,
        "black was charged {charged_ms} ms of a game {lived_ms} ms old: {clock}"
    );
    // A different move at the same ply, on the new owner.
    let legal: Vec<Move> = mirror.legal_moves().iter().map(Move::Place).collect();
    let other = legal
        .iter()
        .copied()
        .find(|&mv| mv != stale)
        .unwrap_or(stale);
    assert_eq!(reply(&mut back, &command(other)).as_deref(), Some("OK"));
    let _ = mirror.apply(other);

    a.resume();
    // The paused node answers the stale move with a refusal or not at all,
    // then stops by itself.
    let deadline = Instant::now() + WITHIN;
    loop {
        match player.read_until(deadline) {
            Received::Line(line) if is_final(&line) => {
                assert!(
                    line.starts_with("ERR"),
                    "the stale move was answered {line}"
                );
            }
            Received::Line(_) => {}
            Received::Closed => break,
            Received::TimedOut => panic!("the paused node kept its connection"),
        }
    }
    let code = a.wait_exit(WITHIN);
    assert_ne!(code, Some(0), "a node declared dead exits with a failure");
    assert!(!a.log_lines_with("declared dead").is_empty());
    let mut expected: Vec<Move> = Vec::new();
    let mut replay = Game::new(Variant::Othello);
    for _ in 0..4 {
        let mv = first_move(&replay);
        expected.push(mv);
        let _ = replay.apply(mv);
    }
    expected.push(other);
    assert_eq!(stored_moves(&db.url, game), expected);
    drop(back);
    drop(b);
    drop(db);
    remove_temp_dir(&dir);
}

/// Where a node serves its metrics, from its log.
pub fn metrics_of(node: &ChildDaemon) -> SocketAddr {
    let line = node
        .wait_for_log("serving metrics on ", 1, WITHIN)
        .remove(0);
    let rest = line.split("serving metrics on ").nth(1).unwrap_or_default();
    let addr: String = rest
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.' || *c == ':')
        .collect();
    addr.parse()
        .unwrap_or_else(|_| panic!("no address in {line}"))
}

/// A counter's value in a scrape of `metrics`.
pub fn counter(metrics: SocketAddr, name: &str) -> u64 {
    let (status, body) = http_get(metrics, "/metrics");
    assert_eq!(status, 200);
    body.lines()
        .find_map(|line| line.strip_prefix(&format!("{name} ")))
        .and_then(|value| value.trim().parse().ok())
        .unwrap_or_else(|| panic!("no {name} in the scrape"))
}

/// Plays the first legal move until one is acknowledged (`ERR 503` while
/// the store or the lease says no); the move.
fn play_until_acknowledged(client: &mut Client, mirror: &mut Game) -> Move {
    let began = Instant::now();
    let mv = first_move(mirror);
    loop {
        match reply(client, &command(mv)).as_deref() {
            Some("OK") => {
                let _ = mirror.apply(mv);
                return mv;
            }
            Some(refused) if refused.starts_with("ERR 503") => {
                assert!(began.elapsed() < WITHIN, "{mv:?} refused for {WITHIN:?}");
                std::thread::sleep(Duration::from_millis(50));
            }
            other => panic!("{mv:?}: {other:?}"),
        }
    }
}

#[test]
fn nodes_that_lose_the_database_stop_acknowledging_and_none_is_declared_dead_after() {
    if !may_start_postgres() {
        return;
    }
    let dir = temp_dir("cluster-lapse");
    let pg_dir = dir.join("postgres").display().to_string();
    // A port range of its own: the outage test starts a server at the same
    // time, from 25432 on.
    let server_url = postgres_tool(&["start", &pg_dir, "26432"]);
    let db = ScratchDatabase::on(&server_url, "lapse");
    let nodes: Vec<ChildDaemon> = ["a", "b"]
        .iter()
        .map(|node| start_node(&dir, node, &db.url))
        .collect();
    let metrics: Vec<SocketAddr> = nodes.iter().map(metrics_of).collect();
    let mut games = Vec::new();
    let mut players: Vec<(Client, Game, Vec<Move>)> = nodes
        .iter()
        .enumerate()
        .map(|(i, node)| {
            let mut client = Client::login_as(node.addr, &format!("lapse{i}"));
            games.push(client.ok_game("NEW othello hotseat"));
            (client, Game::new(Variant::Othello), Vec::new())
        })
        .collect();
    for (client, mirror, acked) in &mut players {
        acked.push(play_until_acknowledged(client, mirror));
    }

    postgres_tool(&["crash", &pg_dir]);
    for node in &nodes {
        node.wait_for_log("lease lapsed", 1, WITHIN);
    }
    for (addr, (client, mirror, _)) in metrics.iter().zip(&mut players) {
        assert_eq!(http_get(*addr, "/healthz").0, 503);
        let refused = reply(client, &command(first_move(mirror))).unwrap_or_default();
        assert!(refused.starts_with("ERR 503"), "{refused}");
    }

    postgres_tool(&["resume", &pg_dir]);
    // Each node renews for longer than a lease after the outage: long
    // enough for a node to have judged the other dead, had it the right.
    let since: Vec<u64> = (metrics.iter())
        .map(|m| counter(*m, "flipline_lease_renewals_total"))
        .collect();
    until("three renewals on each node since the outage", || {
        metrics
            .iter()
            .zip(&since)
            .all(|(m, before)| counter(*m, "flipline_lease_renewals_total") >= before + 3)
    });
    for (node, (client, mirror, acked)) in nodes.iter().zip(&mut players) {
        assert!(node.log_lines_with("declared dead").is_empty());
        acked.push(play_until_acknowledged(client, mirror));
    }
    for addr in &metrics {
        assert_eq!(http_get(*addr, "/healthz").0, 200);
    }
    for (game, (_, _, acked)) in games.iter().zip(&players) {
        assert_eq!(&stored_moves(&db.url, *game), acked, "game {game}");
    }
    drop(players);
    drop(nodes);
    drop(db);
    postgres_tool(&["stop", &pg_dir]);
    remove_temp_dir(&dir);
}

#[test]
fn a_node_stopped_gracefully_hands_its_games_over_without_waiting_for_its_lease() {
    let Some(db) = ScratchDatabase::new("cluster_leave") else {
        return;
    };
    let dir = temp_dir("cluster-leave");
    let mut a = start_node(&dir, "a", &db.url);
    let b = start_node(&dir, "b", &db.url);
    let mut player = Client::connect(a.addr);
    let secret = secret_of(&reply(&mut player, "LOGIN leaver").unwrap_or_default());
    player.name = "leaver".into();
    let game = player.ok_game("NEW othello hotseat");
    let mut mirror = Game::new(Variant::Othello);
    let first = play_until_acknowledged(&mut player, &mut mirror);

    a.terminate();
    assert_eq!(a.wait_exit(WITHIN), Some(0));
    assert!(!a.log_lines_with("left the cluster").is_empty());
    b.wait_for_log("took over 1 games", 1, WITHIN);
    assert!(
        b.log_lines_with("did not renew its lease").is_empty(),
        "a left: nobody had to wait for its lease"
    );
    let seat = Seat {
        name: "leaver".into(),
        secret,
        game,
    };
    let Back::Seated(mut back, stored) = take_seat_back(&[b.addr], &seat) else {
        panic!("game {game} over")
    };
    assert_eq!(stored, [first]);
    let second = play_until_acknowledged(&mut back, &mut mirror);
    assert_eq!(stored_moves(&db.url, game), [first, second]);
    drop(back);
    drop(b);
    drop(db);
    remove_temp_dir(&dir);
}

#[test]
fn a_name_registered_on_one_node_is_registered_on_every_node() {
    let Some(db) = ScratchDatabase::new("cluster_names") else {
        return;
    };
    let dir = temp_dir("cluster-names");
    let a = start_node(&dir, "a", &db.url);
    let b = start_node(&dir, "b", &db.url);
    // a knows its registered names from its start; this one comes later.
    let mut on_b = Client::connect(b.addr);
    assert_eq!(on_b.command("LOGIN Regi hunter22").1, "OK Regi registered");
    let mut on_a = Client::connect(a.addr);
    let guest = on_a.command("LOGIN regi").1;
    assert!(guest.starts_with("ERR 401 "), "{guest}");
    let wrong = on_a.command("LOGIN regi hunter23").1;
    assert!(wrong.starts_with("ERR 401 "), "{wrong}");
    // Its password is right, but b's connection holds the name.
    let twice = on_a.command("LOGIN regi hunter22").1;
    assert_eq!(twice, "ERR 409 name 'Regi' is in use on node b");
    // b's connection goes: the name is a's to take, once b gave it back.
    assert_eq!(on_b.command("QUIT").1, "OK bye");
    drop(on_b);
    let taken = poll_login(&mut on_a, "LOGIN regi hunter22");
    assert_eq!(taken, "OK Regi");
    // And now b refuses it, a guest as well as the password.
    let mut on_b = Client::connect(b.addr);
    let guest = on_b.command("LOGIN REGI").1;
    assert!(guest.starts_with("ERR 401 "), "{guest}");
    let held = on_b.command("LOGIN REGI hunter22").1;
    assert_eq!(held, "ERR 409 name 'Regi' is in use on node a");
    drop((on_a, on_b, a, b, db));
    remove_temp_dir(&dir);
}

/// A guest's name is one connection's in the whole cluster too, and a
/// connection's name is free on every node once it is gone.
#[test]
fn a_guest_s_name_online_on_one_node_is_refused_on_the_others() {
    let Some(db) = ScratchDatabase::new("cluster_guest_names") else {
        return;
    };
    let dir = temp_dir("cluster-guest-names");
    let a = start_node(&dir, "a", &db.url);
    let b = start_node(&dir, "b", &db.url);
    let mut on_a = Client::connect(a.addr);
    let logged_in = on_a.command("LOGIN Gus").1;
    assert!(logged_in.starts_with("OK Gus secret "), "{logged_in}");
    let mut on_b = Client::connect(b.addr);
    assert_eq!(
        on_b.command("LOGIN gus").1,
        "ERR 409 name 'gus' is in use on node a"
    );
    // Refused, b's connection holds no name: it may take another.
    let other = on_b.command("LOGIN Gil").1;
    assert!(other.starts_with("OK Gil secret "), "{other}");
    // A second connection on a is refused by a's own lobby, as on one daemon.
    let mut twin = Client::connect(a.addr);
    assert_eq!(
        twin.command("LOGIN GIL").1,
        "ERR 409 name 'GIL' is in use on node b"
    );
    assert_eq!(twin.command("LOGIN gus").1, "ERR 409 name 'Gus' is in use");
    drop(on_a);
    let mut again = Client::connect(b.addr);
    let back = poll_login(&mut again, "LOGIN gus");
    assert!(back.starts_with("OK gus secret "), "{back}");
    drop((again, on_b, twin, a, b, db));
    remove_temp_dir(&dir);
}

/// Without a bus between the nodes a seat kept on one node cannot be taken
/// from another: a login there is refused, naming the game's node, rather
/// than letting the name start a second game.
#[test]
fn without_a_bus_a_login_elsewhere_of_a_name_seated_on_a_node_is_sent_there() {
    let Some(db) = ScratchDatabase::new("cluster_kept_no_bus") else {
        return;
    };
    let dir = temp_dir("cluster-kept-no-bus");
    let a = start_node(&dir, "a", &db.url);
    let b = start_node(&dir, "b", &db.url);
    let mut black = Client::login_as(a.addr, "nb1");
    let mut white = Client::connect(a.addr);
    let secret = secret_of(&reply(&mut white, "LOGIN nb2").unwrap_or_default());
    white.name = "nb2".into();
    let game = black.ok_game("NEW othello as X");
    assert_eq!(white.ok(&format!("JOIN {game}")).1, format!("OK {game} O"));
    drop(white);
    black.expect_event("INFO nb2 disconnected");
    let mut on_b = Client::connect(b.addr);
    // Once a has given the name back (its connection closed).
    let login = format!("LOGIN nb2 secret {secret}");
    let began = Instant::now();
    let refused = loop {
        let answer = on_b.command(&login).1;
        if !answer.contains("is in use") || began.elapsed() > HANG_GUARD {
            break answer;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(
        refused,
        format!("ERR 409 name 'nb2' sits at game {game} on node a: log in there")
    );
    // Refused, it holds nothing on b: another name is free to it there.
    let other = on_b.command("LOGIN nb3").1;
    assert!(other.starts_with("OK nb3 "), "{other}");
    drop((black, on_b, a, b, db));
    remove_temp_dir(&dir);
}

/// `login`'s answer once it is not `ERR 409` (a name given back on another
/// node is free a moment later): polled, within the hang guard.
fn poll_login(client: &mut Client, login: &str) -> String {
    let began = Instant::now();
    loop {
        let answer = client.command(login).1;
        if !answer.starts_with("ERR 409 ") || began.elapsed() > HANG_GUARD {
            return answer;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}
