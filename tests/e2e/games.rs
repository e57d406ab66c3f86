//! Whole games to `OVER`: every variant between two seeking clients, forced
//! passes, games against the bot, hotseat games and clocks.

use std::time::{Duration, Instant};

use flipline::protocol::EndReason;
use flipline::{Color, Game, Move, Square, Variant};
use flipline_tests::*;

#[test]
fn seeking_clients_play_each_variant_to_over_with_random_moves() {
    let daemon = start(test_config());
    let mut rng = Rng::random();
    let mut passes = 0;
    for variant in [
        "othello",
        "tictactoe",
        "othello6",
        "freeplace",
        "anti",
        "reversi",
    ] {
        let names = [format!("a-{variant}"), format!("b-{variant}")];
        let (mut a, mut b, start) = seek_pair(daemon.addr, variant, [&names[0], &names[1]]);
        assert_eq!(start.variant.name(), variant);
        let finished = play_game(&mut [&mut a, &mut b], &start, &mut |moves| rng.pick(moves));
        assert_eq!(finished.over.reason, EndReason::Normal, "{variant}");
        passes += finished.passes;
    }
    eprintln!("passes seen: {passes}");
}

#[test]
fn first_legal_moves_play_othello10_to_over() {
    let daemon = start(test_config());
    let (mut a, mut b, start) = seek_pair(daemon.addr, "othello10", ["ten-a", "ten-b"]);
    let finished = play_game(&mut [&mut a, &mut b], &start, &mut first);
    assert_eq!(finished.over.black + finished.over.white, 100);
    assert!(finished.plies >= 20, "{} plies", finished.plies);
}

fn first(moves: &[Square]) -> Square {
    *moves
        .first()
        .unwrap_or_else(|| panic!("TURN with moves lists none"))
}

/// A seed whose random game of `variant` (as [`Rng::pick`] plays it) has a
/// pass, and that game's moves before its first pass.
fn seed_with_a_pass(variant: Variant) -> (u64, Vec<Move>) {
    (0..10_000)
        .find_map(|seed| {
            let mut rng = Rng(seed);
            let mut game = Game::new(variant);
            let mut moves = Vec::new();
            while !game.is_over() {
                let legal: Vec<Square> = game.legal_moves().iter().collect();
                if legal.is_empty() {
                    return Some((seed, moves));
                }
                let mv = Move::Place(rng.pick(&legal));
                if let Err(e) = game.apply(mv) {
                    panic!("a legal move refused: {e}");
                }
                moves.push(mv);
            }
            None
        })
        .unwrap_or_else(|| panic!("no random {variant} game with a pass"))
}

#[test]
fn a_forced_pass_is_announced_by_turn_and_answered_with_pass() {
    let (seed, _) = seed_with_a_pass(Variant::Othello6);
    let daemon = start(test_config());
    let (mut a, mut b, start) = new_and_join(daemon.addr, "othello6", ["pa", "pb"]);
    // The same seed replays the game found above: TURN lists moves in the rules
    // crate's order, which play_game checks.
    let mut rng = Rng(seed);
    let finished = play_game(&mut [&mut a, &mut b], &start, &mut |m| rng.pick(m));
    assert!(finished.passes >= 1, "seed {seed}: no pass");
    let g = start.game;
    let turn_pass = finished
        .lines
        .iter()
        .position(|l| l.starts_with(&format!("TURN {g} ")) && l.ends_with(" pass"))
        .unwrap();
    let side = finished.lines[turn_pass].split(' ').nth(2).unwrap();
    let next = &finished.lines[turn_pass + 1];
    assert!(
        next.starts_with(&format!("MOVED {g} {side} pass ")),
        "after {}: {next}",
        finished.lines[turn_pass]
    );
}

#[test]
fn a_pass_with_moves_on_the_board_and_a_pass_out_of_turn_are_refused() {
    let daemon = start(test_config());
    let (mut a, mut b, start) = new_and_join(daemon.addr, "othello", ["pc", "pd"]);
    let g = start.game;
    a.lines_through(&format!("TURN {g} X"));
    let err = a.err("PASS", 422);
    assert!(err.contains("d3,c4,f5,e6"), "{err}");
    b.lines_through(&format!("TURN {g} X"));
    b.err("PASS", 403);
    a.expect_silence(Duration::from_millis(100));
}

#[test]
fn games_against_bots_at_levels_1_and_3_end_in_over() {
    let daemon = start(test_config());
    for (args, human_side, bot) in [
        ("othello vs bot:1 as X", Color::Black, "bot:1"),
        ("othello6 vs bot:3 as O", Color::White, "bot:3"),
    ] {
        let mut human = Client::login_as(daemon.addr, &format!("vs-{}", &bot[4..]));
        let (data, created) = human.ok(&format!("NEW {args}"));
        assert!(data.is_empty(), "{data:?}");
        let start = parse_start(&human.line());
        assert_eq!(start.game, reply_game("NEW", &created));
        let names = [start.black.as_str(), start.white.as_str()];
        let expected = match human_side {
            Color::Black => [human.name.as_str(), bot],
            Color::White => [bot, human.name.as_str()],
        };
        assert_eq!(names, expected);
        let finished = play_game(&mut [&mut human], &start, &mut first);
        assert_eq!(finished.over.reason, EndReason::Normal);
        let bot_letter = human_side.opponent().letter();
        let bot_moves = finished
            .lines
            .iter()
            .filter(|l| l.starts_with(&format!("MOVED {} {bot_letter} ", start.game)))
            .count();
        assert!(bot_moves > 0, "the bot never moved");
    }
}

#[test]
fn one_connection_plays_both_sides_of_a_hotseat_game() {
    let daemon = start(test_config());
    let mut solo = Client::login_as(daemon.addr, "solo");
    let (data, created) = solo.ok("NEW othello hotseat");
    assert!(data.is_empty());
    let start_line = solo.line();
    let start = parse_start(&start_line);
    assert_eq!(start.game, reply_game("NEW", &created));
    assert_eq!(
        (start.black.as_str(), start.white.as_str()),
        ("solo", "solo")
    );
    let mut rng = Rng::random();
    let finished = play_game(&mut [&mut solo], &start, &mut |m| rng.pick(m));
    assert_eq!(finished.over.black + finished.over.white, 64);
    // After OVER the game is over for moves: 409.
    solo.err("MOVE a1", 409);
}

#[test]
fn a_flag_falls_when_the_side_to_move_runs_out_of_time() {
    let daemon = start(test_config());
    // 0.1 minutes: 6 s each, no increment: long beside the round trips black
    // takes to move, so that white's flag is the one to fall.
    let (mut a, mut b, start) = new_and_join(daemon.addr, "othello clock 0.1+0", ["fa", "fb"]);
    let g = start.game;
    // The snapshot ends with the clocks, black's running.
    for client in [&mut a, &mut b] {
        let clock = client.lines_through(&format!("CLOCK {g} "));
        assert!(clock.last().is_some_and(|l| l.ends_with(" X")), "{clock:?}");
    }
    let sent = Instant::now();
    a.ok("MOVE d3");
    let moved = a.line();
    let fields: Vec<&str> = moved.split(' ').collect();
    assert_eq!(
        fields[..6],
        ["MOVED", &g.to_string(), "X", "d3", "4", "1"],
        "{moved}"
    );
    let (black_ms, white_ms): (u64, u64) = (fields[6].parse().unwrap(), fields[7].parse().unwrap());
    assert!(black_ms <= 6000 && black_ms > 0, "{moved}");
    assert_eq!(white_ms, 6000, "white's clock has not run: {moved}");
    assert_eq!(b.line(), moved);
    // Nobody moves: white's flag falls 6 s after black moved, not before.
    let board = a.expect_event(&format!("BOARD {g} "));
    assert!(board.starts_with(&format!("BOARD {g} ")) && board.ends_with(" O"));
    a.expect_event(&format!("TURN {g} O"));
    // The read's bound (three times READ_TIMEOUT) is a hang guard.
    let tail = a.lines_through(&format!("OVER {g} "));
    let waited = sent.elapsed();
    let over = parse_over(tail.last().unwrap());
    assert_eq!(over.reason, EndReason::Time);
    assert_eq!(over.winner, Some(Color::Black));
    assert_eq!(over.black + over.white, 64);
    assert!(
        tail[tail.len() - 2].ends_with(" -"),
        "BOARD with side - before OVER: {tail:?}"
    );
    assert!(
        waited >= Duration::from_millis(5900),
        "flag fell early: {waited:?}"
    );
    assert_eq!(b.expect_event(&format!("OVER {g} ")), tail[tail.len() - 1]);
    // The game is over: no more moves.
    b.err("MOVE c5", 409);
}

#[test]
fn new_from_a_transcript_starts_there_even_at_a_forced_pass() {
    let (_, moves) = seed_with_a_pass(Variant::Othello6);
    let transcript = flipline::notation::transcript_string(&moves);
    let position = flipline::notation::replay(Variant::Othello6, &moves).unwrap();
    assert!(position.must_pass());
    let daemon = start(test_config());
    let mut solo = Client::login_as(daemon.addr, "fromfan");
    let (data, created) = solo.ok(&format!("NEW othello6 hotseat from {transcript}"));
    assert!(data.is_empty(), "{data:?}");
    let g = reply_game("NEW", &created);
    let start = parse_start(&solo.line());
    assert_eq!(start.game, g);
    let board = solo.line();
    let side = position.to_move();
    assert_eq!(
        board,
        format!(
            "BOARD {g} {} {side}",
            flipline::notation::cells_string(&position)
        )
    );
    assert_eq!(solo.line(), format!("TURN {g} {side} pass"));
    let mut lister = Client::connect(daemon.addr);
    let (games, _) = lister.ok("LIST");
    assert_eq!(
        games,
        [format!(
            "GAME {g} othello6 fromfan fromfan playing {}",
            moves.len()
        )]
    );
    assert_eq!(solo.ok("BOARD").0, [board, format!("TURN {g} {side} pass")]);
    solo.err("MOVE a1", 422);
    assert_eq!(solo.ok("PASS").1, "OK");
    let mut rng = Rng::random();
    let finished = play_game_from(&mut [&mut solo], &start, position, &mut |m| rng.pick(m));
    assert!(finished.lines[0].starts_with(&format!("MOVED {g} {side} pass ")));
    // Transcripts that do not parse, are illegal, or end the game are refused.
    for bad in ["from", "from f5z9", "from f5f5", "from a1", "from f5 d6"] {
        solo.err(&format!("NEW othello {bad}"), 400);
    }
    // A whole game: nothing would be left to play.
    let mut whole = Game::new(Variant::Othello6);
    let mut played = Vec::new();
    while let Some(square) = whole.legal_moves().iter().next() {
        whole.apply(Move::Place(square)).unwrap();
        played.push(Move::Place(square));
        if whole.must_pass() {
            whole.apply(Move::Pass).unwrap();
        }
    }
    assert!(whole.is_over());
    let transcript = flipline::notation::transcript_string(&played);
    let err = solo.err(&format!("NEW othello6 from {transcript}"), 400);
    assert!(err.contains("end the game"), "{err}");
}
