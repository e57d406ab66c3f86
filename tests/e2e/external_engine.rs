//! flip's engine over NBoard's and GTP's protocols: `flip engine` on its
//! standard streams, and `flip bot --engine` driving it (a second `flip`
//! process, so the real spawn, pipes and protocol) through whole games on a
//! daemon; and an engine that dies mid-game, which costs its bot that game
//! and nothing more. Every process is waited for with a bound.

use std::io::Write;
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

use flipline::notation::replay;
use flipline::protocol::{EndReason, Event, GameStatus, GameSummary};
use flipline::{Color, Variant};
use flipline_tests::{Client, event, start, test_config, wait_bounded, workspace_binary};

/// The `flip` binary, as a path a command line can hold.
fn flip_path() -> String {
    workspace_binary("flip", "flip").display().to_string()
}

/// `flip args...` with `input` on its standard input, its output when it
/// has ended (at most 30 s).
fn flip_with_input(args: &[&str], input: &str) -> Output {
    let mut child = Command::new(flip_path())
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start flip: {e}"));
    let mut stdin = child.stdin.take().unwrap_or_else(|| panic!("no stdin"));
    stdin
        .write_all(input.as_bytes())
        .unwrap_or_else(|e| panic!("cannot write: {e}"));
    drop(stdin);
    wait_bounded(child, Duration::from_secs(30))
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn flip_engine_answers_gtp_on_its_standard_streams() {
    let script = "1 protocol_version\nboardsize 8\nclear_board\n2 play b d3\ngenmove w\nplay b a1\nnonsense\nquit\nname\n";
    let out = flip_with_input(&["engine", "--protocol", "gtp", "--level", "2"], script);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let lines: Vec<String> = text(&out.stdout).lines().map(str::to_string).collect();
    let (head, tail) = lines.split_at(8);
    assert_eq!(head, ["=1 2", "", "=", "", "=", "", "=2", ""]);
    let [
        genmove,
        blank,
        illegal,
        blank2,
        unknown,
        blank3,
        quit,
        blank4,
    ] = tail
    else {
        panic!("{lines:?}");
    };
    assert!(
        [blank, blank2, blank3, blank4].iter().all(|l| l.is_empty()),
        "{lines:?}"
    );
    // White's answers to d3: c3, e3 or c5.
    assert!(
        ["= C3", "= E3", "= C5"].contains(&genmove.as_str()),
        "{genmove}"
    );
    assert_eq!(
        (illegal.as_str(), unknown.as_str()),
        ("? illegal move", "? unknown command")
    );
    assert_eq!(quit, "=", "nothing is read after quit");
}

#[test]
fn flip_engine_answers_nboard_on_its_standard_streams() {
    let game = "(;GM[Othello]PC[NBoard]TY[8]BO[8 ---------------------------O*------*O--------------------------- *]B[F5];)";
    let script = format!("nboard 2\nset depth 2\nset game {game}\nping 1\ngo\nmove zz\nping 2\n");
    let out = flip_with_input(&["engine", "--protocol", "nboard"], &script);
    assert!(
        out.status.success(),
        "the end of input ends it: {}",
        text(&out.stderr)
    );
    let stdout = text(&out.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.first(), Some(&"set myname flip"), "{stdout}");
    assert_eq!(lines.get(1), Some(&"pong 1"), "{stdout}");
    let go = lines
        .iter()
        .find(|l| l.starts_with("=== "))
        .unwrap_or_else(|| panic!("{stdout}"));
    // White's answers to f5: d6, f4 or f6.
    let mv = go
        .trim_start_matches("=== ")
        .split('/')
        .next()
        .unwrap_or("");
    assert!(["D6", "F4", "F6"].contains(&mv), "{go}");
    assert_eq!(lines.last(), Some(&"pong 2"), "{stdout}");
    assert!(text(&out.stderr).contains("move"), "the bad move is noted");
}

/// Runs `flip bot` with `args` on the daemon at `addr` (returns at once).
fn bot(addr: &str, args: &[&str]) -> Child {
    Command::new(flip_path())
        .args(["bot", "--server", addr])
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start flip bot: {e}"))
}

/// The `HISTORY` of `game`, as a watcher reads it.
fn history(addr: std::net::SocketAddr, game: u64) -> GameSummary {
    let mut judge = Client::login_as(addr, &format!("judge{game}"));
    let (data, _) = judge.ok(&format!("HISTORY {game}"));
    match data.first().map(|l| event(l)) {
        Some(Event::History(summary)) => summary,
        other => panic!("HISTORY {game}: {other:?}"),
    }
}

/// Two connections of one `flip bot`, each driving its own `flip engine`
/// through `protocol`, play each other `rounds` games; each ends as the
/// rules end it, every move the server's to check.
fn bots_play_each_other(protocol: &str, variant: Variant, extra: &[&str]) {
    let daemon = start(test_config());
    let addr = daemon.addr.to_string();
    let engine = format!("'{}' engine --protocol {protocol} --level 1", flip_path());
    let mut args = vec!["--name", "eng", "--games", "2", "--rounds", "2"];
    args.extend([
        "--variant",
        variant.name(),
        "--engine",
        engine.as_str(),
        "--protocol",
        protocol,
    ]);
    args.extend(extra);
    let out = wait_bounded(bot(&addr, &args), Duration::from_secs(240));
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", text(&out.stderr));
    let overs = stdout.lines().filter(|l| l.contains(" over: ")).count();
    assert_eq!(overs, 4, "two games, each told to both bots: {stdout}");
    for game in 1..=2 {
        let summary = history(daemon.addr, game);
        assert_eq!(
            (summary.variant, summary.status),
            (variant, GameStatus::Over)
        );
        let result = summary
            .result
            .unwrap_or_else(|| panic!("game {game} has no result"));
        assert_eq!(result.reason, EndReason::Normal, "game {game}: {result:?}");
        let end = replay(variant, &summary.moves).unwrap_or_else(|e| panic!("{e}"));
        assert!(end.is_over(), "game {game} is played out");
    }
}

#[test]
fn flip_bot_plays_whole_games_through_flip_engine_over_gtp() {
    bots_play_each_other("gtp", Variant::Othello, &["--clock", "1+0"]);
}

#[test]
fn flip_bot_plays_whole_reversi_games_through_flip_engine_over_nboard() {
    bots_play_each_other("nboard", Variant::Reversi, &["--think-ms", "100"]);
}

#[test]
fn an_engine_that_dies_mid_game_resigns_its_game_and_says_why() {
    let daemon = start(test_config());
    let addr = daemon.addr.to_string();
    // The engine is handed ten lines one by one (GNU sed's -u, unlike head,
    // passes each on as it comes), answers them (a move or two), then sees
    // its input end and exits.
    let engine = format!(
        "sh -c \"sed -u 10q | '{}' engine --protocol gtp --level 1\"",
        flip_path()
    );
    let args = ["--name", "fragile", "--rounds", "1", "--think-ms", "100"];
    let engine_args = ["--engine", engine.as_str(), "--protocol", "gtp"];
    let fragile = bot(&addr, &[&args[..], &engine_args[..]].concat());
    let steady = bot(
        &addr,
        &["--name", "steady", "--rounds", "1", "--level", "1"],
    );
    let fragile = wait_bounded(fragile, Duration::from_secs(60));
    let steady = wait_bounded(steady, Duration::from_secs(60));
    let log = text(&fragile.stderr);
    assert!(fragile.status.success(), "{log}");
    assert!(steady.status.success(), "{}", text(&steady.stderr));
    assert!(
        log.contains("fragile: resigns game 1: the engine died"),
        "{log}"
    );

    let summary = history(daemon.addr, 1);
    let result = summary
        .result
        .unwrap_or_else(|| panic!("no result: {summary:?}"));
    assert_eq!(result.reason, EndReason::Resign, "{summary:?}");
    let fragile_side = if summary.black.as_deref() == Some("fragile") {
        Color::Black
    } else {
        Color::White
    };
    assert_eq!(result.winner, Some(fragile_side.opponent()), "{summary:?}");
    assert!(
        summary.moves.len() >= 2,
        "the engine played before it died: {summary:?}"
    );
}
