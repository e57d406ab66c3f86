//! Sessions of both engines as transcripts: a fixed script of lines in, the
//! replies asserted line by line (the engine's own moves by their legality,
//! since they are its choice); and any lines at all answered without a
//! panic.

use std::time::Duration;

use flipline::{Color, Game, Move, Variant};
use proptest::prelude::*;

use super::gtp::GtpEngine;
use super::gtp_wire::parse_vertex;
use super::nboard::NboardEngine;
use super::nboard_wire::{parse_move, parse_move_item};
use super::{Answer, Clock};

/// A clock that moves a millisecond each time it is read, so that every
/// search stops after as many polls as its budget has milliseconds.
struct Ticks(Duration);

impl Clock for Ticks {
    fn now(&mut self) -> Duration {
        self.0 += Duration::from_millis(1);
        self.0
    }
}

fn ticks() -> Ticks {
    Ticks(Duration::ZERO)
}

fn gtp(engine: &mut GtpEngine, line: &str) -> Vec<String> {
    engine.handle(line, &mut ticks()).lines
}

fn legal(game: &Game, mv: Move) -> bool {
    let mut after = *game;
    after.apply(mv).is_ok()
}

#[test]
fn a_gtp_session_answers_with_gtp_framing_and_ids() {
    let mut e = GtpEngine::new(1);
    let expect = [
        ("protocol_version", vec!["= 2", ""]),
        ("1 name", vec!["=1 flip", ""]),
        ("2 known_command genmove", vec!["=2 true", ""]),
        ("known_command fly", vec!["= false", ""]),
        ("boardsize 10", vec!["? unacceptable size", ""]),
        ("boardsize eight", vec!["? boardsize not an integer", ""]),
        ("boardsize 8", vec!["=", ""]),
        ("clear_board", vec!["=", ""]),
        ("komi 6.5", vec!["=", ""]),
        ("3 play b d3", vec!["=3", ""]),
        ("play b e3", vec!["? illegal move", ""]),
        ("play w z9", vec!["? invalid coordinate", ""]),
        ("play purple c3", vec!["? invalid color", ""]),
        ("play w", vec!["? syntax error", ""]),
        ("time_settings 60 0 0", vec!["=", ""]),
        ("time_left w 30 0", vec!["=", ""]),
        ("time_left w soon 0", vec!["? syntax error", ""]),
        ("# a comment", vec![]),
        ("", vec![]),
        ("frobnicate", vec!["? unknown command", ""]),
        ("44 frobnicate", vec!["?44 unknown command", ""]),
    ];
    for (line, want) in expect {
        assert_eq!(gtp(&mut e, line), want, "after {line:?}");
    }
    let answer = gtp(&mut e, "9 genmove white");
    let [head, end] = answer.as_slice() else {
        panic!("{answer:?}");
    };
    assert_eq!(end, "");
    let mut game = Game::new(Variant::Othello);
    game.apply("d3".parse().unwrap()).unwrap();
    let mv = parse_vertex(head.strip_prefix("=9 ").unwrap()).unwrap();
    assert!(legal(&game, mv), "{head}");
    assert_eq!(gtp(&mut e, "genmove w"), ["? wrong color", ""]);
    assert_eq!(gtp(&mut e, "undo"), ["=", ""]);
    assert_eq!(gtp(&mut e, "undo"), ["=", ""]);
    assert_eq!(gtp(&mut e, "undo"), ["? cannot undo", ""]);
    let board = gtp(&mut e, "showboard");
    assert_eq!(board.first().map(String::as_str), Some("="));
    assert_eq!(board.get(1).map(String::as_str), Some("  A B C D E F G H"));
    assert_eq!(board.get(5).map(String::as_str), Some("4 - - - O X - - -"));
    assert_eq!(
        board.get(10).map(String::as_str),
        Some("X to move (X 2 O 2)")
    );
    assert_eq!(board.last().map(String::as_str), Some(""));
    let listed = gtp(&mut e, "list_commands");
    assert!(
        listed.contains(&"time_left".to_string()) && listed.len() == 16,
        "{listed:?}"
    );
    let quit = e.handle("quit", &mut ticks());
    assert_eq!(
        (quit.lines, quit.quit),
        (vec!["=".to_string(), String::new()], true)
    );
}

/// Both sides by `genmove`, every answer checked against the rules, to the
/// end of the game (passes too: the engine answers `pass` when it has no
/// move, and a `genmove` for the other side implies the pass).
#[test]
fn a_whole_game_of_genmoves_is_legal_to_the_end() {
    let mut e = GtpEngine::new(2);
    let mut game = Game::new(Variant::Othello);
    while !game.is_over() {
        let color = if game.to_move() == Color::Black {
            "b"
        } else {
            "w"
        };
        let answer = gtp(&mut e, &format!("genmove {color}"));
        let head = answer.first().cloned().unwrap_or_default();
        let mv = parse_vertex(head.strip_prefix("= ").unwrap_or("?")).unwrap();
        game.apply(mv).unwrap_or_else(|err| panic!("{head}: {err}"));
    }
    assert_eq!(gtp(&mut e, "genmove b"), ["= pass", ""]);
}

fn nboard(engine: &mut NboardEngine, line: &str) -> Answer {
    engine.handle(line, &mut ticks())
}

/// NBoard's example session's game.
const GAME: &str = "(;GM[Othello]PC[NBoard]DT[2014-02-21 20:52:27 GMT]PB[./mEdax]PW[chris]RE[?]\
    TI[15:00]TY[8]BO[8 ---------------------------O*------*O--------------------------- *]\
    B[F5]W[F6]B[D3]W[C5]B[E6]W[F7]B[E7]W[F4];)";

fn example_position() -> Game {
    let mut game = Game::new(Variant::Othello);
    for mv in ["f5", "f6", "d3", "c5", "e6", "f7", "e7", "f4"] {
        game.apply(mv.parse().unwrap()).unwrap();
    }
    game
}

#[test]
fn an_nboard_session_answers_as_nboard_reads() {
    let mut e = NboardEngine::new(6);
    assert_eq!(nboard(&mut e, "nboard 2").lines, ["set myname flip"]);
    for line in ["set depth 3", &format!("set game {GAME}"), "set contempt 0"] {
        assert_eq!(nboard(&mut e, line), Answer::default(), "{line}");
    }
    assert_eq!(nboard(&mut e, "ping 1").lines, ["pong 1"]);
    let position = example_position();

    let hint = nboard(&mut e, "hint 3").lines;
    assert_eq!(
        hint.first().map(String::as_str),
        Some("status flip is thinking")
    );
    assert_eq!(hint.last().map(String::as_str), Some("status"));
    let searches: Vec<&String> = hint.iter().filter(|l| l.starts_with("search ")).collect();
    assert_eq!(searches.len(), 3, "{hint:?}");
    for line in searches {
        let words: Vec<&str> = line.split(' ').collect();
        let [_, mv, eval, zero, depth] = words.as_slice() else {
            panic!("{line}");
        };
        assert!(legal(&position, parse_move(mv).unwrap()), "{line}");
        assert!(eval.parse::<f64>().is_ok() && *zero == "0", "{line}");
        assert!(depth.parse::<u32>().is_ok() || *depth == "100%", "{line}");
    }
    assert!(hint.iter().any(|l| l.starts_with("nodestats ")), "{hint:?}");

    let go = nboard(&mut e, "go").lines;
    let moves: Vec<&str> = go.iter().filter_map(|l| l.strip_prefix("=== ")).collect();
    let [text] = moves.as_slice() else {
        panic!("{go:?}");
    };
    let item = parse_move_item(text).unwrap();
    assert!(
        legal(&position, item.mv) && item.eval.is_some() && item.seconds.is_some(),
        "{go:?}"
    );
    assert_eq!(go.last().map(String::as_str), Some("status"));

    // The GUI plays the move itself: `go` changed nothing.
    assert_eq!(
        nboard(
            &mut e,
            &format!("move {}", super::nboard_wire::move_text(item.mv))
        ),
        Answer::default()
    );
    let refused = nboard(&mut e, "move a1");
    assert!(
        refused.lines.is_empty() && refused.notes.len() == 1,
        "{refused:?}"
    );
    let unread = nboard(&mut e, "set game (;GM[Othello]");
    assert!(
        unread.lines.is_empty() && unread.notes[0].contains("unchanged"),
        "{unread:?}"
    );
    assert!(nboard(&mut e, "frobnicate").lines.is_empty());

    let learn = nboard(&mut e, "learn").lines;
    assert_eq!(learn.first().map(String::as_str), Some("learned"));
    assert!(
        learn
            .iter()
            .any(|l| l.starts_with("status ") && l.contains("no book")),
        "{learn:?}"
    );

    let analysis = nboard(&mut e, "analyze").lines;
    let plies: Vec<u32> = analysis
        .iter()
        .filter_map(|l| l.strip_prefix("analysis "))
        .map(|rest| {
            let (ply, eval) = rest.split_once(' ').unwrap();
            assert!(eval.parse::<f64>().is_ok(), "{rest}");
            ply.parse().unwrap()
        })
        .collect();
    assert_eq!(plies, (0..=9).rev().collect::<Vec<u32>>(), "{analysis:?}");
    assert_eq!(nboard(&mut e, "ping 2").lines, ["pong 2"]);
    assert!(nboard(&mut e, "quit").quit);
}

#[test]
fn nboard_plays_a_forced_pass_and_says_when_the_game_is_over() {
    // X's only disc, b1, is O's to take from a1; X has no move.
    let cells = format!("-*{}", "O".repeat(62));
    let mut e = NboardEngine::new(3);
    nboard(&mut e, &format!("set game (;GM[Othello]BO[8 {cells} *];)"));
    let go = nboard(&mut e, "go").lines;
    assert!(go.iter().any(|l| l.starts_with("=== PA")), "{go:?}");
    assert_eq!(nboard(&mut e, "move PA"), Answer::default());
    assert_eq!(nboard(&mut e, "move A1"), Answer::default());
    let over = nboard(&mut e, "go").lines;
    assert!(
        over.iter().all(|l| !l.starts_with("===")) && over.len() == 1,
        "{over:?}"
    );
    let analysis = nboard(&mut e, "analyze").lines;
    assert!(
        analysis.contains(&"analysis 2 -64.00".to_string()),
        "{analysis:?}"
    );
}

/// A clock that says every search is out of time at once.
struct Hurried(Duration);

impl Clock for Hurried {
    fn now(&mut self) -> Duration {
        self.0 += Duration::from_secs(3600);
        self.0
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn any_lines_are_answered_without_a_panic(lines in proptest::collection::vec(
        prop_oneof![
            ".*",
            "(genmove|play|undo|time_left|boardsize) [bw] [a-j][0-9]{1,2}",
            "(move|hint|set depth|ping) [A-Ha-h1-9/.0-9 -]{0,8}",
            Just("go".to_string()),
            Just(format!("set game {GAME}")),
        ],
        0..12,
    )) {
        let mut clock = Hurried(Duration::ZERO);
        let mut g = GtpEngine::new(1);
        let mut n = NboardEngine::new(1);
        for line in &lines {
            let answer = g.handle(line, &mut clock);
            if !answer.lines.is_empty() {
                prop_assert_eq!(answer.lines.last().map(String::as_str), Some(""));
                prop_assert!(answer.lines[0].starts_with(['=', '?']));
            }
            let _ = n.handle(line, &mut clock);
        }
    }
}
