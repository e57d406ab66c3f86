//! Engine isolation: a bot thinking hard in one game does not hold up the moves
//! of another game, even with a single worker thread for all connections.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use flipline_tests::*;

/// One bot search, as the human seen from the bot's game measures it: from the
/// human's move being accepted to the bot's MOVED (`None` while it still thinks).
type Search = (Instant, Option<Instant>);

/// Plays white against `bot:10` on 10x10 with instant first-legal replies, so
/// that the engine is busy nearly all the time; reports each search's start on
/// `started` and returns every search once `stop` is set.
fn keep_the_engine_busy(
    addr: SocketAddr,
    started: mpsc::Sender<Instant>,
    stop: Arc<AtomicBool>,
) -> Vec<Search> {
    let mut c = Client::login_as(addr, "busybot");
    let g = c.ok_game("NEW othello10 vs bot:10 as O");
    let mut searches: Vec<Search> = vec![(Instant::now(), None)];
    while !stop.load(Ordering::Acquire) {
        let Received::Line(line) = c.read_until(Instant::now() + Duration::from_millis(50)) else {
            continue;
        };
        if line.starts_with(&format!("MOVED {g} X ")) {
            if let Some(last) = searches.last_mut() {
                last.1 = Some(Instant::now());
            }
        } else if line.starts_with(&format!("TURN {g} O ")) {
            c.ok(&first_move(&line).1);
            let now = Instant::now();
            searches.push((now, None));
            let _ = started.send(now);
        } else if line.starts_with(&format!("OVER {g} ")) {
            break;
        }
    }
    searches
}

#[test]
fn a_thinking_bot_does_not_slow_the_moves_of_another_game() {
    let mut config = test_config();
    // One worker thread for every connection and game: a search on it would stall
    // them all.
    config.workers = 1;
    config.engine_threads = 1;
    config.engine_move_ms = 3000;
    let daemon = start(config);
    let (tx, rx) = mpsc::channel();
    let stop = Arc::new(AtomicBool::new(false));
    let addr = daemon.addr;
    let bot_stop = Arc::clone(&stop);
    let bot_game = std::thread::spawn(move || keep_the_engine_busy(addr, tx, bot_stop));
    // A few plies in, the bot's searches are deep; measure while one runs.
    for _ in 0..4 {
        rx.recv_timeout(Duration::from_secs(15)).unwrap();
    }
    let (mut a, mut b, start) = new_and_join(daemon.addr, "othello", ["ea", "eb"]);
    let g = start.game;
    let window_start = Instant::now();
    let mut round_trips = Vec::new();
    let mut turn = a.lines_through(&format!("TURN {g} ")).pop().unwrap();
    b.lines_through(&format!("TURN {g} "));
    for _ in 0..10 {
        let (side, command) = first_move(&turn);
        let mover = if side == flipline::Color::Black {
            &mut a
        } else {
            &mut b
        };
        let sent = Instant::now();
        assert_eq!(mover.command(&command), (vec![], "OK".to_string()));
        round_trips.push(sent.elapsed());
        turn = a.lines_through(&format!("TURN {g} ")).pop().unwrap();
        b.lines_through(&format!("TURN {g} "));
    }
    let window_end = Instant::now();
    stop.store(true, Ordering::Release);
    let searches = bot_game.join().unwrap();
    let max = round_trips.iter().max().copied().unwrap();
    let overlapping = searches
        .iter()
        .filter(|(from, to)| *from < window_end && to.is_none_or(|to| to > window_start))
        .count();
    eprintln!(
        "move round trips {round_trips:?}, max {max:?}; {} bot searches, {overlapping} during the moves",
        searches.len()
    );
    assert!(
        overlapping >= 1,
        "the bot was not thinking while the moves were timed"
    );
    assert!(
        max < Duration::from_secs(1),
        "a move took {max:?} while the bot thought"
    );
}
