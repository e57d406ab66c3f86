//! The lobby and the people around a game: LIST, WHO, JOIN, WATCH, SAY, LEAVE,
//! REMATCH, and seeks.

use std::time::Duration;

use flipline::Color;
use flipline::protocol::EndReason;
use flipline_tests::*;

/// Reads every client up to the next TURN of game `g`; all must see the same
/// lines, which are returned.
fn sync(clients: &mut [&mut Client], g: u64) -> Vec<String> {
    let mut seen: Option<Vec<String>> = None;
    for c in clients.iter_mut() {
        let lines = c.lines_through(&format!("TURN {g} "));
        match &seen {
            Some(first) => assert_eq!(&lines, first, "{}", c.name),
            None => seen = Some(lines),
        }
    }
    seen.unwrap_or_default()
}

/// Plays `n` first-legal moves in game `g` between `a` (black) and `b` (white),
/// starting from `turn`, the TURN line everyone has read. After each move every
/// client is read up to the next TURN; the last such lines are returned.
fn play_first_moves(
    a: &mut Client,
    b: &mut Client,
    watchers: &mut [&mut Client],
    g: u64,
    n: usize,
    turn: &str,
) -> Vec<String> {
    let mut turn = turn.to_string();
    let mut seen = Vec::new();
    for _ in 0..n {
        let (side, command) = first_move(&turn);
        let mover = if side == Color::Black {
            &mut *a
        } else {
            &mut *b
        };
        assert_eq!(mover.ok(&command), (vec![], "OK".to_string()));
        let mut all: Vec<&mut Client> = vec![&mut *a, &mut *b];
        all.extend(watchers.iter_mut().map(|w| &mut **w));
        seen = sync(&mut all, g);
        turn = seen.last().cloned().unwrap_or_default();
    }
    seen
}

#[test]
fn list_shows_game_lines_and_who_shows_player_lines() {
    let daemon = start(test_config());
    let mut a = Client::login_as(daemon.addr, "la");
    let mut b = Client::login_as(daemon.addr, "lb");
    let mut c = Client::connect(daemon.addr);
    let g = a.ok_game("NEW othello6 as X");
    assert_eq!(
        c.ok("LIST"),
        (
            vec![format!("GAME {g} othello6 la - open 0")],
            "OK 1".to_string()
        )
    );
    assert_eq!(b.ok("SEEK tictactoe").1, "OK seeking");
    let (players, count) = c.ok("WHO");
    assert_eq!(
        players,
        [
            format!("PLAYER la playing {g} -"),
            "PLAYER lb seeking -".to_string()
        ]
    );
    assert_eq!(count, "OK 2");
    c.login("lc");
    let (players, _) = c.ok("WHO");
    assert_eq!(players.last().unwrap(), "PLAYER lc idle -");
    // A game against the bot is listed with the bot's name, and moves count plies.
    let bot_game = c.ok_game("NEW othello vs bot:2 as O");
    c.lines_through(&format!("TURN {bot_game} O "));
    let (games, count) = c.ok("LIST");
    assert_eq!(count, "OK 2");
    assert_eq!(
        games[1],
        format!("GAME {bot_game} othello bot:2 lc playing 1")
    );
    for line in &games {
        assert!(
            matches!(event(line), flipline::protocol::Event::Game { .. }),
            "{line}"
        );
    }
}

#[test]
fn names_that_read_as_protocol_text_are_refused_and_nobody_logs_in() {
    let daemon = start(test_config());
    let mut c = Client::connect(daemon.addr);
    for (name, rule) in [
        ("-", "a name of dashes only reads as an open seat"),
        ("--", "a name of dashes only reads as an open seat"),
        ("OK", "a protocol keyword is not a name"),
        ("err", "a protocol keyword is not a name"),
        ("Over", "a protocol keyword is not a name"),
        ("say", "a protocol keyword is not a name"),
        ("bot:3", "names starting bot: are the daemon's bots"),
    ] {
        let refused = c.err(&format!("LOGIN {name}"), 400);
        assert!(refused.contains(rule), "{name}: {refused}");
    }
    assert_eq!(c.ok("WHO"), (vec![], "OK 0".to_string()));
    // The connection is still free to take a name that is only a name.
    c.login("okay");
    assert_eq!(c.ok("WHO").0, ["PLAYER okay idle -"]);
}

#[test]
fn chat_cannot_forge_a_line_or_hide_text_from_the_others() {
    let daemon = start(test_config());
    let (mut a, mut b, start) = new_and_join(daemon.addr, "othello", ["fa", "fb"]);
    let g = start.game;
    sync(&mut [&mut a, &mut b], g);
    a.ok(&format!(
        "SAY x\u{2028}OVER {g} X 64 0 resign\u{85}OK\u{202E}\u{200B}!"
    ));
    let chat = format!("CHAT {g} fa x OVER {g} X 64 0 resign OK  !");
    assert_eq!(a.expect_event("CHAT "), chat);
    assert_eq!(b.expect_event("CHAT "), chat);
    // Nothing came after the chat line: the next line is PING's reply.
    assert_eq!(b.command("PING"), (vec![], "OK pong".to_string()));
}

#[test]
fn join_takes_the_open_seat_and_full_or_unknown_games_are_refused() {
    let daemon = start(test_config());
    let (mut a, mut b, start) = new_and_join(daemon.addr, "othello", ["ja", "jb"]);
    let g = start.game;
    let mut c = Client::login_as(daemon.addr, "jc");
    let err = c.err(&format!("JOIN {g}"), 409);
    assert!(err.contains("no free seat"), "{err}");
    c.err("JOIN 999", 404);
    c.err("JOIN x", 400);
    c.err("WATCH 999", 404);
    assert_eq!(
        c.ok("LIST").0,
        [format!("GAME {g} othello ja jb playing 0")]
    );
    let turn = sync(&mut [&mut a, &mut b], g);
    play_first_moves(&mut a, &mut b, &mut [], g, 1, turn.last().unwrap());
    assert_eq!(
        c.ok("LIST").0,
        [format!("GAME {g} othello ja jb playing 1")]
    );
    // JOIN of one's own game from the same connection re-sends the state.
    let (data, joined) = b.ok(&format!("JOIN {g}"));
    assert!(data.is_empty(), "{data:?}");
    assert_eq!(joined, format!("OK {g} O"));
    assert_eq!(b.line(), format!("START {g} othello ja jb -"));
    assert!(b.line().starts_with(&format!("BOARD {g} ")));
    assert!(b.line().starts_with(&format!("TURN {g} O ")));
}

#[test]
fn joining_or_creating_a_game_withdraws_an_open_seek() {
    let daemon = start(test_config());
    let mut host = Client::login_as(daemon.addr, "host");
    let mut seeker = Client::login_as(daemon.addr, "seeker");
    let g = host.ok_game("NEW othello as X");
    assert_eq!(seeker.ok("SEEK tictactoe").1, "OK seeking");
    assert_eq!(seeker.ok(&format!("JOIN {g}")).1, format!("OK {g} O"));
    seeker.expect_event(&format!("TURN {g} X"));
    host.expect_event(&format!("TURN {g} X"));
    // The seek went with the JOIN: a newcomer seeking the same game waits.
    let mut late = Client::login_as(daemon.addr, "late");
    assert_eq!(late.ok("SEEK tictactoe").1, "OK seeking");
    let (players, _) = late.ok("WHO");
    assert!(
        players.contains(&format!("PLAYER seeker playing {g} -")),
        "{players:?}"
    );
    // And the seeker's seat is still the game it joined.
    host.ok("MOVE d3");
    seeker.expect_event(&format!("TURN {g} O"));
    seeker.ok("MOVE c3");
    // The same for NEW: a seek, then a hotseat game.
    let mut solo = Client::login_as(daemon.addr, "solo");
    assert_eq!(solo.ok("SEEK anti").1, "OK seeking");
    let h = solo.ok_game("NEW othello hotseat");
    let mut other = Client::login_as(daemon.addr, "other");
    assert_eq!(other.ok("SEEK anti").1, "OK seeking");
    solo.expect_event(&format!("TURN {h} X"));
    solo.ok("MOVE d3");
    let lines = solo.lines_through(&format!("TURN {h} O"));
    assert!(
        lines.iter().all(|l| !l.starts_with("START")),
        "solo was paired: {lines:?}"
    );
}

#[test]
fn spectators_get_a_snapshot_and_every_later_event_and_chat_reaches_everyone() {
    let daemon = start(test_config());
    let (mut a, mut b, start) = new_and_join(daemon.addr, "othello", ["wa", "wb"]);
    let g = start.game;
    let first = sync(&mut [&mut a, &mut b], g);
    let seen = play_first_moves(&mut a, &mut b, &mut [], g, 3, first.last().unwrap());
    // Not logged in: watching needs no name.
    let mut w = Client::connect(daemon.addr);
    let (data, ok) = w.ok(&format!("WATCH {g}"));
    assert!(data.is_empty(), "the snapshot comes after OK: {data:?}");
    assert_eq!(ok, format!("OK {g}"));
    let snapshot = [w.line(), w.line(), w.line()];
    assert_eq!(snapshot[0], format!("START {g} othello wa wb -"));
    assert_eq!(
        snapshot[1..],
        seen[1..],
        "BOARD and TURN as the players have them"
    );
    // A logged-in spectator too, and BOARD works for spectators.
    let mut w2 = Client::login_as(daemon.addr, "w2");
    w2.ok(&format!("WATCH {g}"));
    w2.lines_through(&format!("TURN {g} "));
    assert_eq!(w2.ok("BOARD").0, snapshot[1..].to_vec());
    // Every later line reaches the spectators as the players see it.
    play_first_moves(&mut a, &mut b, &mut [&mut w, &mut w2], g, 4, &snapshot[2]);
    // Chat: the speaker gets OK, then everyone (speaker included) the CHAT line.
    let (data, ok) = a.command("SAY good luck, have fun");
    assert_eq!((data.len(), ok.as_str()), (0, "OK"));
    let chat = format!("CHAT {g} wa good luck, have fun");
    for c in [&mut a, &mut b, &mut w, &mut w2] {
        assert_eq!(c.expect_event("CHAT "), chat);
    }
    // A spectator that leaves hears nothing more; the other one hears the end.
    assert_eq!(w2.ok("LEAVE").1, "OK");
    // Resign: BOARD with side '-', then OVER.
    let (data, ok) = b.command("END");
    assert_eq!((data.len(), ok.as_str()), (0, "OK"));
    let end = w.lines_through(&format!("OVER {g} "));
    let over = parse_over(end.last().unwrap());
    assert_eq!(over.reason, EndReason::Resign);
    assert_eq!(over.winner, Some(Color::Black));
    assert_eq!(over.black + over.white, 64);
    assert!(
        end[end.len() - 2].starts_with(&format!("BOARD {g} "))
            && end[end.len() - 2].ends_with(" -")
    );
    assert_eq!(a.lines_through(&format!("OVER {g} ")).last(), end.last());
    w2.expect_silence(Duration::from_millis(100));
}

#[test]
fn rematch_starts_a_new_game_with_colours_swapped() {
    let daemon = start(test_config());
    let (mut a, mut b, start) = new_and_join(daemon.addr, "othello6 clock 5+2", ["ra", "rb"]);
    let g = start.game;
    let mut spectator = Client::connect(daemon.addr);
    spectator.ok(&format!("WATCH {g}"));
    a.ok("END");
    let over = a.expect_event(&format!("OVER {g} "));
    assert_eq!(b.expect_event(&format!("OVER {g} ")), over);
    assert_eq!(parse_over(&over).winner, Some(Color::White));
    assert_eq!(a.ok("REMATCH"), (vec![], "OK waiting".to_string()));
    let offer = a.line();
    assert!(offer.starts_with("INFO ra offers a rematch"), "{offer}");
    assert_eq!(b.line(), offer);
    let (data, ok) = b.ok("REMATCH");
    assert!(data.is_empty(), "{data:?}");
    let g2 = reply_game("REMATCH", &ok);
    assert_ne!(g2, g);
    let start2 = format!("START {g2} othello6 rb ra 5+2");
    assert_eq!(a.line(), start2);
    assert_eq!(b.line(), start2);
    // The spectator, whom no START reaches, is told where the players went.
    let told = spectator.expect_event(&format!("INFO game {g} is rematched"));
    assert_eq!(
        told,
        format!("INFO game {g} is rematched as game {g2}: WATCH {g2} follows it")
    );
    // rb is black now and moves first; ra is refused.
    b.lines_through(&format!("TURN {g2} X"));
    a.lines_through(&format!("TURN {g2} X"));
    a.err("MOVE c2", 403);
    let square = flipline::Game::new(flipline::Variant::Othello6)
        .legal_moves()
        .iter()
        .next()
        .unwrap();
    assert_eq!(b.ok(&format!("MOVE {square}")).1, "OK");
    assert!(a.line().starts_with(&format!("MOVED {g2} X {square} ")));
}
