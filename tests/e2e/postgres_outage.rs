//! PostgreSQL going away under load and coming back (`pg_ctl stop -m
//! immediate`, as a crash of the database server, then a start): flipd
//! answers `ERR 503` meanwhile and says so at `/healthz`, needs no restart,
//! and afterwards every game holds exactly the moves it acknowledged: none
//! lost, none it refused, none twice. A move whose commit was under way at
//! the crash is answered only once the server says whether it was made, so
//! the players wait for replies as long as the outage may last.
//!
//! The test runs a server of its own (tests/tools/postgres.sh), since it
//! stops it; it runs where PostgreSQL's programs are installed (see
//! `flipline_test_servers`).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use flipline::{Game, Move, Variant};
use flipline_test_servers::ScratchDatabase;
use flipline_tests::*;

/// How long the server may take to be seen down, or back.
const WITHIN: Duration = Duration::from_secs(30);

/// A hotseat game's moves as its player heard them answered.
#[derive(Default)]
struct Played {
    game: u64,
    acked: Vec<Move>,
    refused: usize,
}

/// Sends `line` and reads its reply, however long the outage keeps it.
fn reply_within(client: &mut Client, line: &str) -> String {
    client.send(line);
    let deadline = Instant::now() + WITHIN;
    loop {
        match client.read_until(deadline) {
            Received::Line(reply) if is_final(&reply) => return reply,
            Received::Line(_) => {}
            other => panic!("{}: {line}: no reply ({other:?})", client.name),
        }
    }
}

/// Plays hotseat games until told to stop: each move the first legal one
/// (or a pass); an `ERR 503` leaves it unplayed, and it is sent again.
fn player(
    addr: std::net::SocketAddr,
    index: usize,
    stop: Arc<AtomicBool>,
    acked: Arc<AtomicUsize>,
    refused: Arc<AtomicUsize>,
) -> Vec<Played> {
    let mut client = Client::login_as(addr, &format!("out{index}"));
    let mut games = Vec::new();
    while !stop.load(Ordering::Relaxed) {
        let mut played = Played::default();
        let reply = reply_within(&mut client, "NEW othello hotseat");
        let Some(game) = reply.strip_prefix("OK ").and_then(|r| r.parse().ok()) else {
            // Creating a game needs the store too: refused while it is down.
            std::thread::sleep(Duration::from_millis(20));
            continue;
        };
        played.game = game;
        let mut mirror = Game::new(Variant::Othello);
        while !mirror.is_over() && !stop.load(Ordering::Relaxed) {
            let mv = mirror
                .legal_moves()
                .iter()
                .next()
                .map_or(Move::Pass, Move::Place);
            let command = match mv {
                Move::Pass => "PASS".to_string(),
                Move::Place(square) => format!("MOVE {square}"),
            };
            let reply = reply_within(&mut client, &command);
            if reply == "OK" {
                let _ = mirror.apply(mv);
                played.acked.push(mv);
                acked.fetch_add(1, Ordering::Relaxed);
            } else {
                assert!(reply.starts_with("ERR 503"), "{command}: {reply}");
                played.refused += 1;
                refused.fetch_add(1, Ordering::Relaxed);
                // A pause before the same move again, not a wait for anything.
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        games.push(played);
    }
    games
}

/// Waits until `done` holds, or fails saying `what`.
fn until(what: &str, done: impl FnMut() -> bool) {
    wait_until(what, WITHIN, done);
}

#[test]
fn a_database_that_crashes_and_comes_back_loses_no_acknowledged_move() {
    if !may_start_postgres() {
        return;
    }
    let dir = temp_dir("pg-outage");
    let pg_dir = dir.join("postgres");
    let pg_dir_text = pg_dir.display().to_string();
    let server_url = postgres_tool(&["start", &pg_dir_text]);
    let db = ScratchDatabase::on(&server_url, "outage");
    let mut config = test_config();
    config.store.url = flipd::config::StoreUrl::new(db.url.clone());
    config.metrics.listen = "127.0.0.1:0".to_string();
    config.store_deadline_ms = 1000;
    let daemon = start(config);
    let metrics = daemon
        .metrics
        .unwrap_or_else(|| panic!("no metrics listener"));

    let stop = Arc::new(AtomicBool::new(false));
    let (acked, refused) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let players: Vec<JoinHandle<Vec<Played>>> = (0..8)
        .map(|i| {
            let (stop, acked, refused) = (stop.clone(), acked.clone(), refused.clone());
            let addr = daemon.addr;
            std::thread::spawn(move || player(addr, i, stop, acked, refused))
        })
        .collect();
    until("200 moves played", || acked.load(Ordering::Relaxed) >= 200);

    postgres_tool(&["crash", &pg_dir_text]);
    until("/healthz says 503", || {
        http_get(metrics, "/healthz").0 == 503
    });
    // The players may all be waiting on a commit in doubt: a write of
    // someone else's is refused at once.
    let mut prober = Client::login_as(daemon.addr, "prober");
    let refusal = reply_within(&mut prober, "NEW othello hotseat");
    assert!(refusal.starts_with("ERR 503"), "{refusal}");
    let before = acked.load(Ordering::Relaxed);

    postgres_tool(&["resume", &pg_dir_text]);
    until("200 more moves once it is back", || {
        acked.load(Ordering::Relaxed) >= before + 200
    });
    until("/healthz says 200", || {
        http_get(metrics, "/healthz").0 == 200
    });
    stop.store(true, Ordering::Relaxed);
    let games: Vec<Played> = players
        .into_iter()
        .flat_map(|p| p.join().unwrap_or_else(|_| panic!("a player panicked")))
        .collect();
    eprintln!(
        "{} games, {} moves acknowledged, {} refused while the database was down",
        games.len(),
        acked.load(Ordering::Relaxed),
        refused.load(Ordering::Relaxed)
    );
    let mut reader = Client::connect(daemon.addr);
    for played in &games {
        let (data, reply) = reader.command(&format!("HISTORY {}", played.game));
        assert_eq!(reply, "OK", "HISTORY {}", played.game);
        let line = data.last().cloned().unwrap_or_default();
        let moves = line.rsplit(' ').next().unwrap_or_default();
        let stored = flipline::notation::parse_transcript(moves).unwrap_or_default();
        assert_eq!(
            stored, played.acked,
            "game {}: stored {line}, acknowledged {:?}",
            played.game, played.acked
        );
    }
    drop(daemon);
    drop(db);
    postgres_tool(&["stop", &pg_dir_text]);
    remove_temp_dir(&dir);
}
