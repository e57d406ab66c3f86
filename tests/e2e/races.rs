//! Regressions for races that put a player in two games in play: commands sent
//! in one write, and several connections at once, as bots send them.

use std::net::SocketAddr;

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

/// A player seeking who sends a command while another seeker arrives:
/// either the pairing came first and the command is refused, or the command
/// came first and the other seeker waits. Never both. `command` gives each
/// trial's line and, where it matters, the reply it gets when it comes first.
fn seek_then(mut command: impl FnMut(SocketAddr, u32) -> (String, Option<String>)) {
    let daemon = start(test_config());
    let mut lister = Client::connect(daemon.addr);
    let mut paired = 0;
    for trial in 0..40 {
        let (line, first) = command(daemon.addr, trial);
        let (a_name, b_name) = (format!("a{trial}"), format!("b{trial}"));
        let mut a = Client::login_as(daemon.addr, &a_name);
        let mut b = Client::login_as(daemon.addr, &b_name);
        assert_eq!(a.ok("SEEK anti").1, "OK seeking");
        a.send(&line);
        b.send("SEEK anti");
        let a_reply = a.final_reply(&line).1;
        let b_reply = b.final_reply("SEEK anti").1;
        let in_play = games_in_play(&mut lister, &a_name);
        let what = format!("trial {trial}: {line} -> {a_reply}, SEEK -> {b_reply}");
        assert_eq!(in_play.len(), 1, "{what}: {a_name} in {in_play:?}");
        if b_reply == "OK seeking" {
            match &first {
                Some(reply) => assert_eq!(&a_reply, reply, "{what}"),
                None => assert!(a_reply.starts_with("OK "), "{what}"),
            }
            // Withdrawn before the next trial's seeker comes: a closed
            // connection's seek may still stand when the next SEEK arrives.
            let left = b.command("LEAVE");
            assert!(left.1.starts_with("OK"), "{what}: LEAVE -> {left:?}");
        } else {
            paired += 1;
            assert!(a_reply.starts_with("ERR 409 "), "{what}");
            assert_eq!(in_play, [reply_game("SEEK", &b_reply)], "{what}");
        }
    }
    eprintln!("{paired} of 40 trials paired first");
}

#[test]
fn a_seeker_who_sends_new_as_another_seeker_arrives_sits_in_one_game() {
    seek_then(|_, _| ("NEW othello vs bot:1".to_string(), None));
}

#[test]
fn a_seeker_who_sends_join_as_another_seeker_arrives_sits_in_one_game() {
    // Each trial's host stays connected: its open game closes when it goes.
    let mut hosts = Vec::new();
    seek_then(|addr, trial| {
        let mut host = Client::login_as(addr, &format!("h{trial}"));
        let g = host.ok_game("NEW othello as X");
        hosts.push(host);
        (format!("JOIN {g}"), Some(format!("OK {g} O")))
    });
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
        assert_eq!(x.logged_in(&got[0]), Some(name.clone()), "{got:?}");
        assert_eq!(got[1..3], [format!("OK {first}"), "OK".into()]);
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
