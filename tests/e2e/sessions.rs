//! Disconnects: a seat kept through the grace period and taken back with LOGIN and
//! JOIN, and a game abandoned when the player stays away.

use std::time::{Duration, Instant};

use flipline::Color;
use flipline::protocol::EndReason;
use flipline_tests::*;

#[test]
fn a_player_who_reconnects_within_grace_resumes_the_game() {
    let mut config = test_config();
    config.grace_secs = 10;
    let daemon = start(config);
    let (mut a, b, start) = new_and_join(daemon.addr, "othello", ["ra", "rb"]);
    let g = start.game;
    a.lines_through(&format!("TURN {g} X"));
    a.ok("MOVE d3");
    a.lines_through(&format!("TURN {g} O"));
    drop(b);
    let info = a.expect_event("INFO ");
    assert_eq!(info, "INFO rb disconnected: the seat is kept for 10s");
    // Back within the grace period: the same name, then JOIN.
    let mut b = Client::connect(daemon.addr);
    login_soon(&mut b, "rb");
    let (data, joined) = b.ok(&format!("JOIN {g}"));
    assert!(data.is_empty(), "{data:?}");
    assert_eq!(joined, format!("OK {g} O"));
    // The state arrives at once, without waiting for anything else.
    let snapshot = [b.line(), b.line(), b.line()];
    assert_eq!(snapshot[0], format!("START {g} othello ra rb -"));
    assert!(snapshot[1].starts_with(&format!("BOARD {g} ")) && snapshot[1].ends_with(" O"));
    assert_eq!(snapshot[2], format!("TURN {g} O c3,e3,c5"));
    // Play goes on from the new connection.
    assert_eq!(b.ok("MOVE c3").1, "OK");
    let moved = a.expect_event(&format!("MOVED {g} "));
    assert_eq!(moved, format!("MOVED {g} O c3 3 3"));
    assert_eq!(b.line(), moved);
    assert_eq!(a.line(), b.line(), "the same BOARD");
    assert_eq!(a.line(), b.line(), "the same TURN");
    // And the game does not end when the old grace period would have.
    a.ok("MOVE c4");
    assert!(b.expect_event(&format!("TURN {g} O")).starts_with("TURN"));
}

#[test]
fn a_player_who_stays_away_past_grace_loses_by_abandon() {
    let mut config = test_config();
    config.grace_secs = 1;
    let daemon = start(config);
    let (mut a, mut b, start) = new_and_join(daemon.addr, "othello", ["aa", "ab"]);
    let g = start.game;
    b.lines_through(&format!("TURN {g} X"));
    a.lines_through(&format!("TURN {g} X"));
    // Quitting says that the seat is kept, and for how long.
    let (told, _) = b.ok("QUIT");
    let gone = Instant::now();
    let kept = format!(
        "INFO your seat in game {g} is kept for 1s: log in as ab and JOIN {g} to take it back"
    );
    assert_eq!(told, [kept]);
    assert_eq!(
        a.expect_event("INFO "),
        "INFO ab disconnected: the seat is kept for 1s"
    );
    // The read's bound (three times READ_TIMEOUT) is a hang guard.
    let end = a.lines_through(&format!("OVER {g} "));
    let waited = gone.elapsed();
    let over = parse_over(end.last().unwrap());
    assert_eq!(over.reason, EndReason::Abandon);
    assert_eq!(over.winner, Some(Color::Black), "the one who stayed wins");
    assert_eq!((over.black, over.white), (62, 2));
    assert!(end[end.len() - 2].ends_with(" -"), "{end:?}");
    assert!(waited >= Duration::from_millis(900), "{waited:?}");
    // Too late to play on: the seat can be taken back to see the result (and
    // offer a rematch), but the game is over.
    let mut b = Client::connect(daemon.addr);
    login_soon(&mut b, "ab");
    assert_eq!(b.ok(&format!("JOIN {g}")).1, format!("OK {g} O"));
    assert_eq!(b.line(), format!("START {g} othello aa ab -"));
    assert_eq!(b.line(), end[end.len() - 2], "the final BOARD, side -");
    let err = b.err("MOVE c4", 409);
    assert!(err.contains("over"), "{err}");
    // Nothing kept once the game is over: a bare goodbye.
    assert_eq!(b.ok("QUIT"), (Vec::new(), "OK bye".to_string()));
    assert_serves(daemon.addr);
}
