//! Archives: `HISTORY` over the protocol, and `flip export` reading a store file.

use std::time::{Duration, Instant};

use flipline::notation::transcript_string;
use flipline::protocol::{Event, GameResult};
use flipline_tests::*;

/// `HISTORY game` until its line satisfies `want` (some writes, like a game's
/// creation or end, are committed a moment after the events: until then the
/// store may not know the game, a 404); returns the line.
fn history_until(client: &mut Client, game: u64, want: impl Fn(&str) -> bool) -> String {
    let deadline = Instant::now() + HANG_GUARD;
    loop {
        let (data, ok) = client.command(&format!("HISTORY {game}"));
        let not_yet = ok.starts_with("ERR 404") && Instant::now() < deadline;
        assert!(ok == "OK" || not_yet, "HISTORY {game}: {ok}");
        let line = data.last().cloned().unwrap_or_default();
        if want(&line) {
            return line;
        }
        assert!(Instant::now() < deadline, "HISTORY {game} stayed {line:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn history_gives_a_game_its_players_moves_and_result() {
    let daemon = start(test_config());
    let (mut a, mut b, start) = seek_pair(daemon.addr, "othello6", ["ha", "hb"]);
    let mut rng = Rng::random();
    let finished = play_game(&mut [&mut a, &mut b], &start, &mut |m| rng.pick(m));
    let moves: Vec<flipline::Move> = finished
        .lines
        .iter()
        .filter_map(|l| match event(l) {
            Event::Moved { played, .. } => Some(played),
            _ => None,
        })
        .collect();
    let result = GameResult {
        winner: finished.over.winner,
        black: finished.over.black,
        white: finished.over.white,
        reason: finished.over.reason,
    };
    // Anyone may ask, logged in or not.
    let mut reader = Client::connect(daemon.addr);
    let g = start.game;
    let line = history_until(&mut reader, g, |l| l.contains(" over "));
    assert_eq!(
        line,
        format!(
            "HISTORY {g} othello6 {} {} - over {result} {}",
            start.black,
            start.white,
            transcript_string(&moves)
        )
    );
    // A game in play: the moves so far, from the position it started from.
    let mut hot = Client::login_as(daemon.addr, "hot");
    let h = hot.ok_game("NEW othello hotseat clock 5+3 from f5d6");
    hot.lines_through(&format!("TURN {h} X"));
    hot.ok("MOVE c3");
    hot.lines_through(&format!("TURN {h} O"));
    let (data, _) = hot.ok(&format!("HISTORY {h}"));
    assert_eq!(
        data,
        [format!("HISTORY {h} othello hot hot 5+3 playing - f5d6c3")]
    );
    hot.ok("END");
    let resigned = history_until(&mut reader, h, |l| l.contains(" over "));
    assert!(resigned.ends_with(":resign f5d6c3"), "{resigned}");
    // An open game its creator left is cancelled.
    let mut opener = Client::login_as(daemon.addr, "opener");
    let o = opener.ok_game("NEW tictactoe as X");
    opener.ok("LEAVE");
    let cancelled = history_until(&mut reader, o, |l| l.contains(" cancelled "));
    assert_eq!(
        cancelled,
        format!("HISTORY {o} tictactoe opener - - cancelled - -")
    );
    assert_eq!(reader.err("HISTORY 999", 404), "ERR 404 no game 999");
    reader.err("HISTORY x", 400);
    reader.err("HISTORY", 400);
}

/// Plays `moves` in a new hotseat game, then resigns it; returns the game.
fn resigned_game(client: &mut Client, variant: &str, moves: &[&str]) -> u64 {
    let g = client.ok_game(&format!("NEW {variant} hotseat"));
    client.lines_through(&format!("TURN {g} "));
    for square in moves {
        client.ok(&format!("MOVE {square}"));
        client.lines_through(&format!("TURN {g} "));
    }
    client.ok("END");
    client.lines_through(&format!("OVER {g} "));
    g
}

#[test]
fn flip_export_writes_finished_games_as_ggf_or_transcripts() {
    let daemon = start(test_config());
    let mut ann = Client::login_as(daemon.addr, "ann");
    let mut bob = Client::login_as(daemon.addr, "bob");
    let first = resigned_game(&mut ann, "othello", &["f5", "d6"]);
    let second = resigned_game(&mut ann, "tictactoe", &["b2"]);
    let third = resigned_game(&mut bob, "othello6", &[]);
    let mut unfinished = Client::login_as(daemon.addr, "cid");
    unfinished.ok("NEW othello hotseat");
    let config = daemon.config.clone();
    daemon
        .stop_keeping_store()
        .unwrap_or_else(|e| panic!("stop: {e}"));
    let db = store_place(&config).display().to_string();

    let ggf = run_flip(&["export", "--db", &db, "--format", "ggf"]);
    let text = String::from_utf8_lossy(&ggf.stdout);
    assert!(
        ggf.status.success(),
        "{}",
        String::from_utf8_lossy(&ggf.stderr)
    );
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{text}");
    assert!(
        lines[0].starts_with("(;GM[Othello]PC[flipline]DT[") && lines[0].ends_with(";)"),
        "{text}"
    );
    assert!(
        lines[0].contains("PB[ann]PW[ann]TY[8]RE[-58.00:r]BO[8 "),
        "{text}"
    );
    assert!(
        lines[0].contains("]B[F5//") && lines[0].contains("]W[D6//"),
        "{text}"
    );
    assert!(
        lines[1].contains("PB[bob]") && lines[1].contains("TY[6]"),
        "{text}"
    );
    assert!(String::from_utf8_lossy(&ggf.stderr).contains("skipped 1"));

    let transcripts = run_flip(&[
        "export",
        "--db",
        &db,
        "--format",
        "transcript",
        "--player",
        "ann",
    ]);
    let text = String::from_utf8_lossy(&transcripts.stdout);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines,
        [
            format!("{first} othello ann ann O:3-61:resign f5d6"),
            format!("{second} tictactoe ann ann X:9-0:resign b2"),
        ],
        "{text}"
    );
    let since = run_flip(&[
        "export",
        "--db",
        &db,
        "--since",
        "2999-01-01",
        "--format",
        "transcript",
    ]);
    assert!(since.status.success() && since.stdout.is_empty());
    let _ = third;
    let missing = run_flip(&["export", "--db", "/nonexistent/flipline.db"]);
    let stderr = String::from_utf8_lossy(&missing.stderr);
    assert!(!missing.status.success());
    assert!(stderr.contains("/nonexistent/flipline.db"), "{stderr}");
    if let Some(dir) = config.store.path.parent() {
        remove_temp_dir(dir);
    }
}
