//! What the operator's log says at info: where the settings and the store
//! are, each login, each game begun with its players, each game over with
//! its result.

use std::time::Duration;

use flipline_tests::*;

/// A guard against a hang, not a claim about how soon the daemon logs.
const WITHIN: Duration = HANG_GUARD;

#[test]
fn logins_and_games_begun_and_over_are_logged_at_info() {
    let dir = temp_dir("logs");
    let config = write_config(&dir, "log_filter: \"info\",");
    let daemon = ChildDaemon::start_filtered_by_file(&config);
    // The start says where the settings and the store come from.
    let settings = daemon.wait_for_log("configuration from", 1, WITHIN);
    assert!(
        settings[0].contains(&config.display().to_string()),
        "{settings:?}"
    );
    let listening = daemon.wait_for_log("listening on", 1, WITHIN);
    // The file, or the database without its password.
    let store = match database_of(&dir) {
        Some(_) => "store=postgres://flipd:***@".to_string(),
        None => format!("store={}", dir.display()),
    };
    assert!(listening[0].contains(&store), "{listening:?}");
    let mut ann = Client::login_as(daemon.addr, "ann");
    let g = ann.ok_game("NEW othello as X vs bot:1");
    ann.lines_through(&format!("TURN {g} X"));
    ann.ok("END");
    ann.lines_through(&format!("OVER {g} "));
    let login = daemon.wait_for_log("logged in", 1, WITHIN);
    assert!(
        login[0].contains("name=ann")
            && login[0].contains("guest=true")
            && login[0].contains("peer=127.0.0.1"),
        "{login:?}"
    );
    let begun = daemon.wait_for_log("game begun", 1, WITHIN);
    assert!(begun[0].contains(&format!("game={g}")), "{begun:?}");
    assert!(
        begun[0].contains("black=ann") && begun[0].contains("white=bot:1"),
        "{begun:?}"
    );
    let over = daemon.wait_for_log("game over", 1, WITHIN);
    assert!(
        over[0].contains(&format!("game={g}")) && over[0].contains("resign"),
        "{over:?}"
    );
    drop(daemon);
    remove_temp_dir(&dir);
}

/// Whatever reads flipd's standard error may stall (a journald under
/// pressure, a terminal scrolled back): the games do not wait for it. Written
/// on the actors' threads, the log filled the pipe after a few hundred
/// logins, and from then on every command waited for the reader.
#[test]
fn a_log_nobody_reads_holds_up_no_login_and_no_move() {
    let daemon = ChildDaemon::start();
    daemon.wait_for_log("listening on", 1, WITHIN);
    let stopped = daemon.stop_reading_the_log();
    // A login's line is about 150 bytes: 1,000 are more than a pipe holds
    // (64 KiB), with the reader's own buffer.
    for n in 0..1000 {
        drop(Client::login_as(daemon.addr, &format!("g{n}")));
    }
    let mut ann = Client::login_as(daemon.addr, "ann");
    let g = ann.ok_game("NEW othello as X vs bot:1");
    ann.lines_through(&format!("TURN {g} X"));
    ann.ok("MOVE d3");
    // Read again, the log has every line: none was lost while it waited.
    drop(stopped);
    let logins = daemon.wait_for_log("logged in", 1001, WITHIN);
    assert!(
        logins.iter().any(|l| l.contains("name=g999")),
        "the last guest's login is not in the log"
    );
}
