//! The clock policy across a pause of the daemon: the real `flipd` binary is
//! stopped with SIGSTOP for longer than the side to move has left, and the
//! game goes on as if no time had passed meanwhile.

use std::time::Duration;

use flipline::protocol::Event;
use flipline_tests::*;

#[test]
fn the_time_the_daemon_was_stopped_is_given_back_to_the_side_to_move() {
    let daemon = ChildDaemon::start();
    let mut c = Client::login_as(daemon.addr, "ps");
    // Three seconds each.
    let g = c.ok_game("NEW othello hotseat clock 0.05+0");
    c.lines_through(&format!("TURN {g} X"));
    daemon.pause();
    // Not a wait for anything: the length of the pause under test, past
    // black's whole time.
    std::thread::sleep(Duration::from_secs(4));
    daemon.resume();
    assert_eq!(c.ok("MOVE f5").1, "OK", "black's flag has not fallen");
    let moved = c.expect_event(&format!("MOVED {g} X f5 "));
    let Event::Moved {
        clocks: Some((black_ms, white_ms)),
        ..
    } = event(&moved)
    else {
        panic!("no clocks in {moved}");
    };
    assert!(
        (2000..=3000).contains(&black_ms),
        "black was charged the pause: {moved}"
    );
    assert_eq!(white_ms, 3000, "{moved}");
}
