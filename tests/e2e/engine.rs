//! Engine isolation: a bot thinking hard in one game does not hold up the moves
//! of another game, even with a single worker thread for all connections.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use flipline_tests::*;

/// Plays white against `bot:10` on 10x10 with instant first-legal replies, so
/// that the engine is busy nearly all the time, until `stop` is set; sends
/// the game's number on `game` first.
fn keep_the_engine_busy(addr: SocketAddr, game: mpsc::Sender<u64>, stop: Arc<AtomicBool>) {
    let mut c = Client::login_as(addr, "busybot");
    let g = c.ok_game("NEW othello10 vs bot:10 as O");
    let _ = game.send(g);
    while !stop.load(Ordering::Acquire) {
        match c.read_until(Instant::now() + Duration::from_millis(50)) {
            Received::Line(line) if line.starts_with(&format!("TURN {g} O ")) => {
                c.ok(&first_move(&line).1);
            }
            Received::Line(line) if line.starts_with(&format!("OVER {g} ")) => break,
            Received::Line(_) | Received::TimedOut => {}
            Received::Closed => break,
        }
    }
}

/// Reads a watcher of both games up to the next line that starts with
/// `until` (of game `g`), and tells whether the bot of game `busy` was
/// thinking when it came: its `TURN` seen and its `MOVED` not yet. The
/// watcher's one connection gets the lines of both games in the order the
/// daemon sent them, so this is an order, whatever the speed of the machine.
fn bot_thinking_at(watcher: &mut Client, busy: u64, until: &str, thinking: &mut bool) -> bool {
    let bot_turn = format!("TURN {busy} X");
    let bot_moved = format!("MOVED {busy} X ");
    let bot_over = format!("OVER {busy} ");
    loop {
        let line = watcher.line();
        if line.starts_with(&bot_turn) {
            *thinking = true;
        } else if line.starts_with(&bot_moved) || line.starts_with(&bot_over) {
            *thinking = false;
        } else if line.starts_with(until) {
            return *thinking;
        }
    }
}

#[test]
fn a_thinking_bot_does_not_slow_the_moves_of_another_game() {
    let mut config = test_config();
    // One worker thread for every connection and game: a search on it would
    // stall them all, and no move of another game could come between the
    // bot's TURN and its MOVED.
    config.workers = 1;
    config.engine_threads = 1;
    config.engine_move_ms = 3000;
    let daemon = start(config);
    let (tx, rx) = mpsc::channel();
    let stop = Arc::new(AtomicBool::new(false));
    let addr = daemon.addr;
    let bot_stop = Arc::clone(&stop);
    let bot_game = std::thread::spawn(move || keep_the_engine_busy(addr, tx, bot_stop));
    let busy = rx
        .recv_timeout(HANG_GUARD)
        .unwrap_or_else(|e| panic!("hang guard: no bot game: {e}"));
    let (mut a, mut b, start) = new_and_join(daemon.addr, "othello", ["ea", "eb"]);
    let g = start.game;
    let mut watcher = Client::connect(daemon.addr);
    watcher.send(&format!("WATCH {busy}"));
    watcher.send(&format!("WATCH {g}"));
    // Watching both before the first move: the snapshot's TURN comes last.
    let mut thinking = false;
    bot_thinking_at(&mut watcher, busy, &format!("TURN {g} "), &mut thinking);
    let mut turn = a.lines_through(&format!("TURN {g} ")).pop().unwrap();
    b.lines_through(&format!("TURN {g} "));
    // Ten moves made while the bot thought, of at most forty: the bot thinks
    // nearly all the time, so most moves are; none could be if its search
    // held the worker thread.
    let (mut during, mut plies) = (0, 0);
    while during < 10 {
        assert!(
            plies < 40,
            "only {during} of {plies} moves were made while the bot thought"
        );
        let (side, command) = first_move(&turn);
        let mover = if side == flipline::Color::Black {
            &mut a
        } else {
            &mut b
        };
        assert_eq!(mover.command(&command), (vec![], "OK".to_string()));
        plies += 1;
        let moved = format!("MOVED {g} ");
        during += usize::from(bot_thinking_at(&mut watcher, busy, &moved, &mut thinking));
        turn = a.lines_through(&format!("TURN {g} ")).pop().unwrap();
        b.lines_through(&format!("TURN {g} "));
    }
    eprintln!("{during} of {plies} moves made while the bot thought");
    stop.store(true, Ordering::Release);
    bot_game.join().unwrap();
}
