//! Stopping: SIGTERM to the real `flipd` binary, and `DaemonThread::stop`.

use std::time::Instant;

use flipline_tests::*;

#[test]
fn sigterm_tells_clients_closes_them_and_exits_with_status_0() {
    let mut daemon = ChildDaemon::start();
    let (mut a, mut b, start) = new_and_join(daemon.addr, "othello", ["sa", "sb"]);
    let g = start.game;
    a.lines_through(&format!("TURN {g} X"));
    a.ok("MOVE d3");
    b.lines_through(&format!("TURN {g} O"));
    let mut watcher = Client::connect(daemon.addr);
    watcher.ok(&format!("WATCH {g}"));
    let signalled = Instant::now();
    daemon.terminate();
    for client in [&mut a, &mut b, &mut watcher] {
        let lines = client.expect_closed(HANG_GUARD);
        assert_eq!(
            lines.last().map(String::as_str),
            Some("INFO shutting down"),
            "{lines:?}"
        );
    }
    let code = daemon.wait_exit(HANG_GUARD);
    eprintln!("flipd exited {:?} after SIGTERM", signalled.elapsed());
    assert_eq!(code, Some(0));
    // Nobody listens any more.
    assert!(std::net::TcpStream::connect(daemon.addr).is_err());
}

#[test]
fn daemon_thread_stop_closes_connections_and_returns_ok() {
    let daemon = start(test_config());
    let addr = daemon.addr;
    let (mut a, mut b, _) = new_and_join(addr, "othello", ["ta", "tb"]);
    let mut bot = Client::login_as(addr, "tbot");
    bot.ok("NEW othello vs bot:3");
    // Stopped on a thread of its own, so that a stop that hangs (on the
    // bot's search, say) fails the test at the hang guard.
    let (stopped, result) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = stopped.send(daemon.stop());
    });
    let result = result
        .recv_timeout(HANG_GUARD)
        .unwrap_or_else(|e| panic!("hang guard: the daemon did not stop: {e}"));
    assert!(result.is_ok(), "{result:?}");
    for client in [&mut a, &mut b, &mut bot] {
        let lines = client.expect_closed(HANG_GUARD);
        assert_eq!(lines.last().map(String::as_str), Some("INFO shutting down"));
    }
    assert!(std::net::TcpStream::connect(addr).is_err());
}
