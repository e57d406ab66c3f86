//! The clock policy across a pause of the daemon: the real `flipd` binary is
//! stopped with SIGSTOP for longer than the side to move has left, and the
//! game goes on as if no time had passed meanwhile.

use std::time::{Duration, Instant};

use flipline::protocol::Event;
use flipline_tests::*;

#[test]
fn the_time_the_daemon_was_stopped_is_given_back_to_the_side_to_move() {
    let daemon = ChildDaemon::start();
    let mut c = Client::login_as(daemon.addr, "ps");
    // Six seconds each: black's clock runs from the game's start, so that
    // much covers a slow start on a loaded machine before the pause.
    let began = Instant::now();
    let g = c.ok_game("NEW othello hotseat clock 0.1+0");
    c.lines_through(&format!("TURN {g} X"));
    daemon.pause();
    let paused = Instant::now();
    // Not a wait for anything: the length of the pause under test, past
    // black's whole time.
    std::thread::sleep(Duration::from_secs(7));
    let stopped_for = paused.elapsed();
    daemon.resume();
    assert_eq!(c.ok("MOVE f5").1, "OK", "black's flag has not fallen");
    let moved = c.expect_event(&format!("MOVED {g} X f5 "));
    let ran_for = began.elapsed().saturating_sub(stopped_for);
    let Event::Moved {
        clocks: Some((black_ms, white_ms)),
        ..
    } = event(&moved)
    else {
        panic!("no clocks in {moved}");
    };
    // Black is charged the time the daemon ran (no more than the test saw
    // outside the pause) and one tick of the pause (the clock policy gives
    // back all of it but one reading's interval, 100 ms), give or take a
    // millisecond of rounding: charged the 7 s pause, black would be out of
    // time.
    let charged = Duration::from_millis(6000_u64.saturating_sub(black_ms));
    assert!(
        charged <= ran_for + Duration::from_millis(101),
        "black was charged {charged:?}, the daemon ran {ran_for:?}: {moved}"
    );
    assert_eq!(white_ms, 6000, "{moved}");
}
