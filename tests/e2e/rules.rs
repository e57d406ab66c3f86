//! Refusals: illegal moves (422 naming the legal moves), moves out of turn or
//! without a seat (403), commands before LOGIN (401), names (400, 409).

use std::time::Duration;

use flipline::protocol::Reply;
use flipline::{Game, Move, Variant};
use flipline_tests::*;

#[test]
fn illegal_moves_are_422_and_name_the_legal_moves() {
    let daemon = start(test_config());
    let (mut a, mut b, start) = new_and_join(daemon.addr, "othello", ["ia", "ib"]);
    let g = start.game;
    a.lines_through(&format!("TURN {g} X d3,c4,f5,e6"));
    b.lines_through(&format!("TURN {g} X d3,c4,f5,e6"));
    let legal = Game::new(Variant::Othello).legal_moves().to_string();
    assert_eq!(legal, "d3,c4,f5,e6");
    for (line, why) in [
        ("MOVE d4", "d4 is occupied"),
        ("MOVE e5", "e5 is occupied"),
        ("MOVE a1", "a1 flips nothing"),
        ("move H8", "h8 flips nothing"),
    ] {
        let err = a.err(line, 422);
        assert_eq!(err, format!("ERR 422 {why}; legal: {legal}"), "{line}");
    }
    let err = a.err("PASS", 422);
    assert!(err.contains(&legal), "{err}");
    // A square off this board is a bad argument on an 8x8 board... or not a square.
    a.err("MOVE z9", 400);
    a.err("MOVE", 400);
    // Nothing was played: no events reached either side.
    a.expect_silence(Duration::from_millis(100));
    b.expect_silence(Duration::from_millis(10));
    // A legal move still works after all that.
    a.ok("MOVE d3");
    assert!(a.line().starts_with(&format!("MOVED {g} X d3 4 1")));
}

#[test]
fn moves_out_of_turn_or_without_a_seat_are_403() {
    let daemon = start(test_config());
    let (mut a, mut b, start) = new_and_join(daemon.addr, "othello", ["ta", "tb"]);
    let g = start.game;
    a.lines_through(&format!("TURN {g} X"));
    b.lines_through(&format!("TURN {g} X"));
    let err = b.err("MOVE d3", 403);
    assert!(err.contains("not your turn"), "{err}");
    b.err("PASS", 403);
    // A spectator, logged in, has no seat: its moves, passes and resignations are 403.
    let mut watcher = Client::login_as(daemon.addr, "tw");
    watcher.ok(&format!("WATCH {g}"));
    watcher.lines_through(&format!("TURN {g} X"));
    for line in ["MOVE d3", "PASS", "END", "SAY hello"] {
        watcher.err(line, 403);
    }
    // Someone in no game at all.
    let mut idle = Client::login_as(daemon.addr, "tidle");
    idle.err("MOVE d3", 403);
    idle.err("BOARD", 403);
    // None of it changed the game.
    a.ok("MOVE d3");
    assert!(b.line().starts_with(&format!("MOVED {g} X d3 ")));
}

#[test]
fn commands_before_login_are_401_and_the_open_ones_work() {
    let daemon = start(test_config());
    let mut c = Client::connect(daemon.addr);
    for line in [
        "SEEK",
        "NEW othello",
        "JOIN 1",
        "MOVE d3",
        "PASS",
        "END",
        "SAY hi",
        "REMATCH",
        "HINT",
    ] {
        let err = c.err(line, 401);
        assert_eq!(err, "ERR 401 LOGIN first", "{line}");
    }
    // These need no name.
    assert_eq!(c.ok("PING").1, "OK pong");
    assert_eq!(c.ok("LIST"), (vec![], "OK 0".to_string()));
    assert_eq!(c.ok("WHO"), (vec![], "OK 0".to_string()));
    let (help, ok) = c.ok("HELP");
    assert_eq!(ok, "OK");
    assert!(help.iter().all(|l| l.starts_with("INFO ")), "{help:?}");
    for (usage, _) in flipline::protocol::COMMAND_HELP {
        assert!(help.iter().any(|l| l.contains(usage)), "{usage}: {help:?}");
    }
    c.err("WATCH 999", 404);
    c.login("late");
    assert_eq!(c.ok("SEEK").1, "OK seeking");
}

#[test]
fn a_name_held_by_a_live_connection_is_409_and_bad_names_are_400() {
    let daemon = start(test_config());
    let mut ann = Client::login_as(daemon.addr, "ann");
    let mut other = Client::connect(daemon.addr);
    let err = other.err("LOGIN ann", 409);
    assert!(err.contains("ann"), "{err}");
    // Logging in again under one's own name is fine; under another is 409.
    assert_eq!(ann.ok("LOGIN ann").1, "OK ann");
    ann.err("LOGIN bob", 409);
    for line in [
        "LOGIN",
        "LOGIN bad!name",
        "LOGIN a.b",
        "LOGIN abcdefghijklmnopqrstu",
        "LOGIN é",
        "LOGIN ann pw extra",
    ] {
        other.err(line, 400);
    }
    // Twenty characters is the longest allowed name.
    other.login("abcdefghijklmnopqrst");
    // Once ann's connection is gone, the name is free again.
    ann.ok("QUIT");
    ann.expect_closed(HANG_GUARD);
    let mut again = Client::connect(daemon.addr);
    login_soon(&mut again, "ann");
}

#[test]
fn hint_answers_in_bot_and_hotseat_games_and_is_403_between_people() {
    let daemon = start(test_config());
    let (mut a, mut b, start) = new_and_join(daemon.addr, "othello", ["ha", "hb"]);
    let g = start.game;
    a.lines_through(&format!("TURN {g} X"));
    b.lines_through(&format!("TURN {g} X"));
    let err = a.err("HINT", 403);
    assert!(err.contains("hints are off"), "{err}");
    b.err("HINT", 403);
    let mut solo = Client::login_as(daemon.addr, "hsolo");
    let h = solo.ok_game("NEW othello hotseat");
    solo.lines_through(&format!("TURN {h} X"));
    let (data, hint) = solo.ok("HINT");
    assert!(data.is_empty(), "{data:?}");
    let Reply::Hint(Move::Place(square), ..) = reply_to("HINT", &hint) else {
        panic!("HINT -> {hint}: not a square");
    };
    assert!(
        ["d3", "c4", "f5", "e6"].contains(&square.to_string().as_str()),
        "{hint}"
    );
    assert!(
        !hint.ends_with(" exact"),
        "the opening is not solved: {hint}"
    );
    // The hint is only advice: nothing was played.
    solo.expect_silence(Duration::from_millis(50));
    // Tic-tac-toe is solved from the start: a draw, said to be proven.
    let mut tic = Client::login_as(daemon.addr, "htic");
    let t = tic.ok_game("NEW tictactoe hotseat");
    tic.lines_through(&format!("TURN {t} X"));
    let (_, hint) = tic.ok("HINT");
    let Reply::Hint(_, score, exact) = reply_to("HINT", &hint) else {
        panic!("HINT -> {hint}");
    };
    assert_eq!((score, exact), (0, true), "{hint}");
}

#[test]
fn leave_withdraws_a_seek_or_a_watch_and_is_409_in_a_game_in_play() {
    let daemon = start(test_config());
    let mut c = Client::login_as(daemon.addr, "leaver");
    let err = c.err("LEAVE", 409);
    assert!(err.contains("nothing to leave"), "{err}");
    assert_eq!(c.ok("SEEK tictactoe").1, "OK seeking");
    assert_eq!(c.ok("LEAVE").1, "OK seek withdrawn");
    // Withdrawn: the next seeker waits instead of being paired.
    let mut d = Client::login_as(daemon.addr, "stayer");
    assert_eq!(d.ok("SEEK tictactoe").1, "OK seeking");
    // A game in play is left by resigning, not by LEAVE.
    let mut e = Client::login_as(daemon.addr, "partner");
    let (_, paired) = e.ok("SEEK tictactoe");
    let g = reply_game("SEEK", &paired);
    let err = e.err("LEAVE", 409);
    assert!(err.contains("END"), "{err}");
    e.err("NEW othello", 409);
    e.err("SEEK", 409);
    // A spectator's LEAVE stops the events.
    c.ok(&format!("WATCH {g}"));
    c.lines_through(&format!("TURN {g} X"));
    assert_eq!(c.ok("LEAVE"), (vec![], "OK".to_string()));
    e.ok("END");
    e.expect_event(&format!("OVER {g} "));
    c.expect_silence(Duration::from_millis(100));
}
