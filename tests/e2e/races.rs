//! Regressions for races that put a player in two games in play: commands sent
//! in one write, and several connections at once, as bots send them.

use flipline::protocol::{EndReason, Event, GameStatus};
use flipline_tests::*;

/// The games `LIST` shows in play with `name` in a seat.
fn games_in_play(lister: &mut Client, name: &str) -> Vec<u64> {
    let (lines, _) = lister.ok("LIST");
    lines
        .iter()
        .filter_map(|line| match event(line) {
            Event::Game {
                game,
                black,
                white,
                status,
                ..
            } if status == GameStatus::Playing
                && (black.as_deref() == Some(name) || white.as_deref() == Some(name)) =>
            {
                Some(game)
            }
            _ => None,
        })
        .collect()
}

/// Reads `n` final replies, skipping the events between them.
fn replies(client: &mut Client, n: usize) -> Vec<String> {
    (0..n)
        .map(|i| client.final_reply(&format!("reply {i}")).1)
        .collect()
}

/// A player seeking who sends `command` while another seeker arrives: either
/// the pairing came first and `command` is refused, or `command` came first
/// and the other seeker waits. Never both.
fn seek_then(command: &str) {
    let daemon = start(test_config());
    let mut lister = Client::connect(daemon.addr);
    let mut paired = 0;
    for trial in 0..40 {
        let (a_name, b_name) = (format!("a{trial}"), format!("b{trial}"));
        let mut a = Client::login_as(daemon.addr, &a_name);
        let mut b = Client::login_as(daemon.addr, &b_name);
        assert_eq!(a.ok("SEEK anti").1, "OK seeking");
        let line = command;
        a.send(line);
        b.send("SEEK anti");
        let a_reply = a.final_reply(line).1;
        let b_reply = b.final_reply("SEEK anti").1;
        let in_play = games_in_play(&mut lister, &a_name);
        assert_eq!(
            in_play.len(),
            1,
            "trial {trial}: {a_name} in {in_play:?} ({line} -> {a_reply}, SEEK -> {b_reply})"
        );
        if b_reply == "OK seeking" {
            assert!(a_reply.starts_with("OK "), "trial {trial}: {a_reply}");
        } else {
            paired += 1;
            assert!(a_reply.starts_with("ERR 409 "), "trial {trial}: {a_reply}");
            assert_eq!(in_play, [reply_game("SEEK", &b_reply)], "trial {trial}");
        }
    }
    eprintln!("{paired} of 40 trials paired first");
}

#[test]
fn a_seeker_who_sends_new_as_another_seeker_arrives_sits_in_one_game() {
    seek_then("NEW othello vs bot:1");
}

#[test]
fn a_seeker_who_sends_join_as_another_seeker_arrives_sits_in_one_game() {
    let daemon = start(test_config());
    let mut lister = Client::connect(daemon.addr);
    let mut paired = 0;
    for trial in 0..40 {
        let mut host = Client::login_as(daemon.addr, &format!("h{trial}"));
        let g = host.ok_game("NEW othello as X");
        let (a_name, b_name) = (format!("a{trial}"), format!("b{trial}"));
        let mut a = Client::login_as(daemon.addr, &a_name);
        let mut b = Client::login_as(daemon.addr, &b_name);
        assert_eq!(a.ok("SEEK anti").1, "OK seeking");
        a.send(&format!("JOIN {g}"));
        b.send("SEEK anti");
        let a_reply = a.final_reply("JOIN").1;
        let b_reply = b.final_reply("SEEK anti").1;
        let in_play = games_in_play(&mut lister, &a_name);
        assert_eq!(
            in_play.len(),
            1,
            "trial {trial}: {in_play:?} ({a_reply}, {b_reply})"
        );
        if b_reply == "OK seeking" {
            assert_eq!(a_reply, format!("OK {g} O"), "trial {trial}");
        } else {
            paired += 1;
            assert!(a_reply.starts_with("ERR 409 "), "trial {trial}: {a_reply}");
        }
    }
    eprintln!("{paired} of 40 trials paired first");
}

#[test]
fn rematches_sent_in_one_write_start_one_game_and_it_ends_when_the_player_leaves() {
    let mut config = test_config();
    config.grace_secs = 1;
    let daemon = start(config);
    let mut lister = Client::connect(daemon.addr);
    for trial in 0..5 {
        let name = format!("rm{trial}");
        let mut x = Client::connect(daemon.addr);
        x.send_bytes(
            format!("LOGIN {name}\nNEW othello as X vs bot:1\nEND\nREMATCH\nREMATCH\nREMATCH\n")
                .as_bytes(),
        );
        let got = replies(&mut x, 6);
        let first = reply_game("NEW", &got[1]);
        assert_eq!(
            got[..3],
            [format!("OK {name}"), format!("OK {first}"), "OK".into()]
        );
        let second = reply_game("REMATCH", &got[3]);
        assert_ne!(second, first);
        for late in &got[4..] {
            assert_eq!(
                *late,
                format!("ERR 409 game {second} is not over"),
                "{got:?}"
            );
        }
        assert_eq!(games_in_play(&mut lister, &name), [second]);
        // The one game in play ends by abandon once its player is gone.
        let mut watcher = Client::connect(daemon.addr);
        watcher.ok(&format!("WATCH {second}"));
        x.ok("QUIT");
        let over = watcher.expect_event(&format!("OVER {second} "));
        assert_eq!(parse_over(&over).reason, EndReason::Abandon);
        assert_eq!(games_in_play(&mut lister, &name), Vec::<u64>::new());
    }
}

#[test]
fn rematch_after_the_opponent_left_is_refused_and_the_leaving_is_told() {
    let daemon = start(test_config());
    let (mut a, mut b, start) = new_and_join(daemon.addr, "othello", ["la", "lb"]);
    let g = start.game;
    a.ok("END");
    a.expect_event(&format!("OVER {g} "));
    b.expect_event(&format!("OVER {g} "));
    assert_eq!(b.ok("LEAVE").1, "OK");
    assert_eq!(a.line(), format!("INFO lb left game {g}"));
    assert_eq!(a.err("REMATCH", 409), "ERR 409 your opponent has left");
    // A vote is lost with the voter: b's REMATCH does not start a game either.
    let (mut c, mut d, start) = new_and_join(daemon.addr, "othello", ["lc", "ld"]);
    let h = start.game;
    d.ok("END");
    c.expect_event(&format!("OVER {h} "));
    d.expect_event(&format!("OVER {h} "));
    assert_eq!(c.ok("REMATCH").1, "OK waiting");
    assert!(d.expect_event("INFO ").contains("offers a rematch"));
    assert_eq!(c.ok("LEAVE").1, "OK");
    assert_eq!(d.line(), format!("INFO lc left game {h}"));
    assert_eq!(d.err("REMATCH", 409), "ERR 409 your opponent has left");
}
