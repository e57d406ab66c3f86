//! `UNDO` over the protocol: against a bot (and what a restart brings back),
//! between two people (asked, then agreed), and the `CLOCK` lines that tell
//! the time left in every snapshot and once moves are taken back.

use flipline::notation::{cells_string, replay};
use flipline::protocol::Event;
use flipline::{Move, Variant};
use flipline_tests::*;

/// The board of `moves` from the start of Othello, as `BOARD` writes it.
fn cells_after(moves: &[Move]) -> String {
    let game = replay(Variant::Othello, moves).unwrap_or_else(|e| panic!("replay: {e}"));
    cells_string(&game)
}

/// Plays the first legal move of the side to move (from `BOARD`); returns it.
fn play_first(client: &mut Client) -> Move {
    let (board, _) = client.ok("BOARD");
    let moves = board.iter().find_map(|l| match event(l) {
        Event::Turn { moves, .. } => Some(moves),
        _ => None,
    });
    let square = *moves
        .and_then(|m| m.first().copied())
        .as_ref()
        .unwrap_or_else(|| panic!("no move in {board:?}"));
    client.ok(&format!("MOVE {square}"));
    Move::Place(square)
}

/// The moves of game `g` as `HISTORY` tells them.
fn history_moves(client: &mut Client, g: u64) -> Vec<Move> {
    let (data, _) = client.ok(&format!("HISTORY {g}"));
    let history = data.iter().find_map(|l| match event(l) {
        Event::History(summary) => Some(summary.moves),
        _ => None,
    });
    history.unwrap_or_else(|| panic!("no HISTORY line in {data:?}"))
}

/// The moves the bot answered with, read from its `MOVED` lines up to the
/// next `TURN` for black.
fn bot_reply(client: &mut Client, g: u64) -> Move {
    let lines = client.lines_through(&format!("TURN {g} X"));
    lines
        .iter()
        .find_map(|l| match event(l) {
            Event::Moved {
                side: flipline::Color::White,
                played,
                ..
            } => Some(played),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no bot move in {lines:?}"))
}

/// The lines through game `g`'s next `CLOCK`, and what it says: black's
/// and white's milliseconds and whose clock runs.
fn snapshot_clock(
    client: &mut Client,
    g: u64,
) -> (Vec<String>, (u64, u64, Option<flipline::Color>)) {
    let lines = client.lines_through(&format!("CLOCK {g} "));
    match lines.last().map(|l| event(l)) {
        Some(Event::Clock {
            black_ms,
            white_ms,
            running,
            ..
        }) => (lines, (black_ms, white_ms, running)),
        _ => panic!("no CLOCK in {lines:?}"),
    }
}

#[test]
fn against_a_bot_undo_takes_back_a_move_and_its_reply_and_a_restart_keeps_that() {
    let daemon = start(test_config());
    let mut ann = Client::login_as(daemon.addr, "ann");
    let g = ann.ok_game("NEW othello vs bot:1 as X");
    ann.lines_through(&format!("TURN {g} X"));
    let mut played = Vec::new();
    for _ in 0..2 {
        played.push(play_first(&mut ann));
        played.push(bot_reply(&mut ann, g));
    }
    let (events, ok) = ann.command("UNDO");
    assert_eq!(ok, "OK");
    let mut lines = events;
    if !lines.iter().any(|l| l.starts_with("TURN ")) {
        lines.extend(ann.lines_through(&format!("TURN {g} X")));
    }
    let undone = lines.iter().position(|l| *l == format!("UNDONE {g} 2 2"));
    let undone = undone.unwrap_or_else(|| panic!("no UNDONE in {lines:?}"));
    let board = format!("BOARD {g} {} X", cells_after(&played[..2]));
    assert_eq!(lines.get(undone + 1), Some(&board), "{lines:?}");
    assert_eq!(history_moves(&mut ann, g), played[..2]);

    // A move played after the take-back, then a restart: the store holds
    // the first two moves and that one, no more.
    played.truncate(2);
    played.push(play_first(&mut ann));
    played.push(bot_reply(&mut ann, g));
    let config = daemon.config.clone();
    drop(ann);
    daemon
        .stop_keeping_store()
        .unwrap_or_else(|e| panic!("stop: {e}"));
    let daemon = start(config);
    let mut ann = Client::connect(daemon.addr);
    login_soon(&mut ann, "ann");
    assert_eq!(history_moves(&mut ann, g), played);
    assert_eq!(ann.ok(&format!("JOIN {g}")).1, format!("OK {g} X"));
    let snapshot = ann.lines_through(&format!("TURN {g} X"));
    let board = format!("BOARD {g} {} X", cells_after(&played));
    assert!(snapshot.contains(&board), "{snapshot:?}");
    assert_eq!(ann.command("UNDO").1, "OK", "and again after the restart");
    ann.lines_through(&format!("UNDONE {g} 2 2"));
}

#[test]
fn between_two_people_undo_asks_the_other_who_agrees_with_undo() {
    let daemon = start(test_config());
    let (mut ann, mut bob, start) = new_and_join(daemon.addr, "othello", ["ann", "bob"]);
    let g = start.game;
    ann.lines_through(&format!("TURN {g} X"));
    bob.lines_through(&format!("TURN {g} X"));
    play_first(&mut ann);
    bob.lines_through(&format!("TURN {g} O"));
    assert_eq!(ann.command("UNDO").1, "OK asked");
    bob.lines_through(&format!("UNDO {g} ann"));
    assert!(ann.err("UNDO", 409).contains("asked already"));
    assert_eq!(bob.command("UNDO").1, "OK");
    for client in [&mut ann, &mut bob] {
        client.lines_through(&format!("UNDONE {g} 0 1"));
        let board = client.line();
        assert_eq!(board, format!("BOARD {g} {} X", cells_after(&[])));
    }
    assert!(history_moves(&mut ann, g).is_empty());
    // Nothing to take back now: bob has not moved, ann has no move left.
    assert!(bob.err("UNDO", 409).contains("no move"), "bob asks");
}

#[test]
fn clock_lines_come_with_every_snapshot_and_after_board() {
    let daemon = start(test_config());
    let (mut ann, mut bob, start) = new_and_join(daemon.addr, "othello clock 5+0", ["ann", "bob"]);
    let g = start.game;
    for client in [&mut ann, &mut bob] {
        let lines = client.lines_through(&format!("CLOCK {g} "));
        assert!(
            lines.last().is_some_and(|l| l.ends_with(" X")),
            "black's clock runs: {lines:?}"
        );
    }
    let mut watcher = Client::connect(daemon.addr);
    watcher.ok(&format!("WATCH {g}"));
    let (snapshot, (black_ms, white_ms, running)) = snapshot_clock(&mut watcher, g);
    assert!(black_ms <= 300_000 && black_ms > 200_000, "{snapshot:?}");
    assert_eq!(white_ms, 300_000);
    assert_eq!(running, Some(flipline::Color::Black));
    let (board, _) = bob.ok("BOARD");
    assert!(
        board
            .last()
            .is_some_and(|l| l.starts_with(&format!("CLOCK {g} "))),
        "{board:?}"
    );
}

#[test]
fn a_player_back_after_a_lost_connection_hears_the_time_left() {
    let daemon = start(test_config());
    let (mut ann, mut bob, start) = new_and_join(daemon.addr, "othello clock 5+0", ["ann", "bob"]);
    let g = start.game;
    ann.lines_through(&format!("CLOCK {g} "));
    bob.lines_through(&format!("CLOCK {g} "));
    play_first(&mut ann);
    let seen = bob.lines_through(&format!("TURN {g} O"));
    let black_left = seen.iter().find_map(|l| match event(l) {
        Event::Moved {
            clocks: Some((black, _)),
            ..
        } => Some(black),
        _ => None,
    });
    drop(bob);
    let mut bob = Client::connect(daemon.addr);
    login_soon(&mut bob, "bob");
    assert_eq!(bob.ok(&format!("JOIN {g}")).1, format!("OK {g} O"));
    let (snapshot, (black_ms, white_ms, running)) = snapshot_clock(&mut bob, g);
    // Black's clock stopped at its move, as MOVED said; white's runs.
    assert_eq!(Some(black_ms), black_left, "{snapshot:?}");
    assert!(white_ms <= 300_000, "{snapshot:?}");
    assert_eq!(running, Some(flipline::Color::White));
}
