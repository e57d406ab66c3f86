//! The parsers: no input makes them panic, what the crate prints it reads back, and
//! every error names the offending token in single quotes.

use flipline::notation::{
    board_string, cells_string, parse_board, parse_cells, parse_transcript, replay,
    transcript_string,
};
use flipline::protocol::{Command, CommandKind, ErrorCode, Reply, ServerLine};
use flipline::{Game, Move, MoveError, ParseError, ParseErrorKind, Square, Variant};
use proptest::collection::vec;
use proptest::prelude::*;
use proptest::sample::select;
use proptest::test_runner::TestCaseError;

/// The token an error about `input` should quote: the input itself, or its first 40
/// characters and an ellipsis when it is longer.
fn quoted(input: &str) -> String {
    if input.chars().count() > 40 {
        format!("'{}...'", input.chars().take(40).collect::<String>())
    } else {
        format!("'{input}'")
    }
}

/// An error's message quotes its token.
fn names_its_token(err: &ParseError) -> Result<(), TestCaseError> {
    let message = err.to_string();
    prop_assert!(
        message.contains(&format!("'{}'", err.token)),
        "{} does not quote {:?}",
        message,
        err.token
    );
    Ok(())
}

/// Feeds `text` to every parser; none may panic, and every error names its token.
fn parse_everything(text: &str) -> Result<(), TestCaseError> {
    match text.parse::<Square>() {
        Ok(square) => {
            prop_assert!(square.fits(10));
            prop_assert!(square.to_string().eq_ignore_ascii_case(text));
        }
        Err(err) => {
            prop_assert_eq!(&err.kind, &ParseErrorKind::Square);
            prop_assert!(err.to_string().contains(&quoted(text)), "{}", err);
        }
    }
    match text.parse::<Move>() {
        Ok(mv) => prop_assert!(mv.to_string().eq_ignore_ascii_case(text) || mv == Move::Pass),
        Err(err) => {
            prop_assert_eq!(&err.kind, &ParseErrorKind::Move);
            prop_assert!(err.to_string().contains(&quoted(text)), "{}", err);
        }
    }
    match text.parse::<Variant>() {
        Ok(variant) => prop_assert!(variant.name().eq_ignore_ascii_case(text)),
        Err(err) => {
            prop_assert_eq!(&err.kind, &ParseErrorKind::Variant);
            prop_assert!(err.to_string().contains(&quoted(text)), "{}", err);
        }
    }
    match parse_transcript(text) {
        Ok(moves) => {
            // What was read prints as a transcript that reads back the same.
            let again = parse_transcript(&transcript_string(&moves));
            prop_assert_eq!(again.as_ref(), Ok(&moves));
            for variant in Variant::ALL {
                match replay(variant, &moves) {
                    Ok(game) => prop_assert_eq!(game.variant(), variant),
                    Err(err) => {
                        prop_assert!(
                            matches!(err.kind, ParseErrorKind::IllegalMove { .. }),
                            "{:?}",
                            err
                        );
                        names_its_token(&err)?;
                    }
                }
            }
        }
        Err(err) => {
            prop_assert_eq!(&err.kind, &ParseErrorKind::Move);
            prop_assert!(!err.token.is_empty());
            names_its_token(&err)?;
        }
    }
    for variant in Variant::ALL {
        match parse_board(text, variant) {
            Ok(game) => {
                prop_assert_eq!(game.variant(), variant);
                prop_assert_eq!(parse_board(&board_string(&game), variant), Ok(game));
            }
            Err(err) => names_its_token(&err)?,
        }
        match parse_cells(text, variant) {
            Ok((black, white)) => prop_assert_eq!(black & white, 0),
            Err(err) => names_its_token(&err)?,
        }
    }
    Ok(())
}

/// Plausible pieces of squares, moves, transcripts and boards, and some that are not.
fn piece() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => proptest::char::range('a', 'k').prop_map(String::from),
        2 => proptest::char::range('A', 'K').prop_map(String::from),
        4 => proptest::char::range('0', '9').prop_map(String::from),
        1 => Just("10".to_string()),
        1 => Just("11".to_string()),
        1 => select(vec!["pass", "PA", "pa", "Pass", "pas", "p"]).prop_map(String::from),
        2 => select(vec!["X", "O", "-", "x", "o", ".", "*"]).prop_map(String::from),
        1 => select(vec![" ", ",", "\t", "\n", "\u{a0}", ", "]).prop_map(String::from),
        1 => select(vec!["é", "ß", "€", "😀", "\u{301}", "Ⅻ", "Ｘ", "\0"]).prop_map(String::from),
        1 => select(Variant::ALL.iter().map(|v| v.name().to_string()).collect::<Vec<_>>()),
    ]
}

fn plausible() -> impl Strategy<Value = String> {
    vec(piece(), 0..24).prop_map(|pieces| pieces.concat())
}

/// Lines that look like protocol lines, both ways: a keyword, then tokens that
/// are often the right kind, so that the parsers get past their first checks.
fn protocol_line() -> impl Strategy<Value = String> {
    let keyword = select(vec![
        "LOGIN", "SEEK", "NEW", "JOIN", "WATCH", "HISTORY", "MOVE", "SAY", "PASS", "HELLO", "OK",
        "ERR", "START", "BOARD", "TURN", "MOVED", "OVER", "GAME", "PLAYER", "CHAT", "INFO",
        "login", "new", "history",
    ]);
    let token = prop_oneof![
        3 => (0u64..40).prop_map(|n| n.to_string()),
        2 => plausible(),
        1 => select(vec![
            "-", "X", "O", "draw", "pass", "vs", "bot:3", "bot:11", "as", "hotseat", "clock",
            "5+3", "0.5+0", "99999+9", "from", "f5d6c3", "normal", "resign", "X:40-24:normal",
            "draw:1-2:time", "O:1-:x", "d3,c4,f5", "flipline", "400", "503", "over", "playing",
        ])
        .prop_map(String::from),
        1 => any::<String>(),
    ];
    (keyword, vec(token, 0..9), select(vec![" ", "  ", "\t"])).prop_map(|(k, tokens, sep)| {
        let mut line = k.to_string();
        for token in tokens {
            line.push_str(sep);
            line.push_str(&token);
        }
        line
    })
}

/// Feeds a line to the protocol parsers: none may panic, a refused command is
/// a 400, and a reply is read only in the form it prints.
fn parse_protocol(line: &str) -> Result<(), TestCaseError> {
    match Command::parse(line) {
        Ok(_) => {}
        Err(err) => {
            prop_assert_eq!(err.code, ErrorCode::BadRequest);
            prop_assert!(!err.message.contains('\n'), "{}", err.message);
        }
    }
    if let ServerLine::Unknown(text) = ServerLine::parse(line) {
        prop_assert_eq!(text, line);
    }
    for kind in CommandKind::ALL {
        if let Ok(reply) = Reply::parse(kind, line) {
            prop_assert_eq!(reply.to_string(), line.trim_end_matches(['\r', '\n']));
        }
    }
    Ok(())
}

/// A board string of `variant`'s length or close to it, mostly from the OBF alphabet.
fn board_text() -> impl Strategy<Value = (Variant, String)> {
    (select(Variant::ALL.to_vec()), -2i32..=2).prop_flat_map(|(variant, delta)| {
        let len = (variant.squares() as i32 + delta).max(0) as usize;
        let cell = prop_oneof![
            20 => select(vec!['X', 'O', '-', 'x', 'o', '.', '*']),
            1 => any::<char>(),
        ];
        let side = select(vec!["X", "O", "x", "o", "Q", "", "XO", "X extra", "-"]);
        let sep = select(vec![" ", "  ", "\t", "", " \n "]);
        (Just(variant), vec(cell, len), sep, side).prop_map(|(variant, cells, sep, side)| {
            let cells: String = cells.into_iter().collect();
            (variant, format!("{cells}{sep}{side}"))
        })
    })
}

fn any_square() -> impl Strategy<Value = Square> {
    (0u8..10, 0u8..10).prop_map(|(row, col)| Square { row, col })
}

fn any_move() -> impl Strategy<Value = Move> {
    prop_oneof![
        8 => any_square().prop_map(Move::Place),
        1 => Just(Move::Pass),
    ]
}

/// A random game of `variant`, `choices` picking among the legal moves, `length`
/// plies long at most. Returns the game and its moves, passes included.
fn random_game(variant: Variant, choices: &[u16], length: usize) -> (Game, Vec<Move>) {
    let mut game = Game::new(variant);
    let mut moves = Vec::new();
    for i in 0..length {
        if game.is_over() {
            break;
        }
        let legal: Vec<Square> = game.legal_moves().iter().collect();
        let mv = if legal.is_empty() {
            Move::Pass
        } else {
            Move::Place(legal[usize::from(choices[i % choices.len()]) % legal.len()])
        };
        if let Err(e) = game.apply(mv) {
            panic!("{mv} was listed as legal: {e}");
        }
        moves.push(mv);
    }
    (game, moves)
}

fn game_strategy() -> impl Strategy<Value = (Variant, Vec<u16>, usize)> {
    (
        select(Variant::ALL.to_vec()),
        vec(any::<u16>(), 1..64),
        0usize..130,
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]

    #[test]
    fn no_unicode_string_makes_a_parser_panic(text in any::<String>()) {
        parse_everything(&text)?;
    }

    #[test]
    fn no_printable_string_makes_a_parser_panic(text in "\\PC{0,120}") {
        parse_everything(&text)?;
    }

    #[test]
    fn no_plausible_string_makes_a_parser_panic(text in plausible()) {
        parse_everything(&text)?;
    }

    #[test]
    fn no_byte_string_makes_a_protocol_parser_panic(bytes in vec(any::<u8>(), 0..300)) {
        // As the daemon and the clients read a line: bytes, then text.
        parse_protocol(&String::from_utf8_lossy(&bytes))?;
    }

    #[test]
    fn no_protocol_like_line_makes_a_protocol_parser_panic(line in protocol_line()) {
        parse_protocol(&line)?;
    }

    #[test]
    fn a_keyword_reads_the_same_in_any_case(line in protocol_line()) {
        // The first word with its ASCII letters' case swapped.
        let end = line.find(char::is_whitespace).unwrap_or(line.len());
        let (keyword, rest) = line.split_at(end);
        let swapped: String = keyword
            .chars()
            .map(|c| if c.is_ascii_uppercase() { c.to_ascii_lowercase() } else { c.to_ascii_uppercase() })
            .collect();
        match (Command::parse(&line), Command::parse(&format!("{swapped}{rest}"))) {
            (Ok(a), Ok(b)) => prop_assert_eq!(a, b),
            (Err(a), Err(b)) => prop_assert_eq!(a.code, b.code),
            (a, b) => prop_assert!(false, "{:?} against {:?}", a, b),
        }
    }

    #[test]
    fn no_near_board_string_makes_parse_board_panic((variant, text) in board_text()) {
        parse_everything(&text)?;
        match parse_board(&text, variant) {
            Ok(game) => {
                let cells = text.split_whitespace().next().unwrap_or("");
                // The board string is the same cells in the canonical alphabet.
                let canonical: String = cells
                    .chars()
                    .map(|c| match c {
                        'X' | 'x' | '*' => 'X',
                        'O' | 'o' => 'O',
                        _ => '-',
                    })
                    .collect();
                prop_assert_eq!(cells_string(&game), canonical);
                prop_assert_eq!(parse_board(&board_string(&game), variant), Ok(game));
            }
            Err(err) => {
                prop_assert!(
                    matches!(err.kind, ParseErrorKind::Board(_) | ParseErrorKind::Side),
                    "{:?}",
                    err
                );
                names_its_token(&err)?;
            }
        }
    }

    #[test]
    fn no_move_list_makes_replay_panic(
        variant in select(Variant::ALL.to_vec()),
        moves in vec(any_move(), 0..80),
    ) {
        match replay(variant, &moves) {
            Ok(game) => prop_assert_eq!(game.variant(), variant),
            Err(err) => {
                let ParseErrorKind::IllegalMove { ply, .. } = err.kind else {
                    return Err(TestCaseError::fail(format!("{err:?}")));
                };
                prop_assert!(ply >= 1 && ply <= moves.len());
                prop_assert_eq!(&err.token, &moves[ply - 1].to_string());
                prop_assert!(err.to_string().contains(&format!("at ply {ply}")), "{}", err);
                names_its_token(&err)?;
            }
        }
    }

    #[test]
    fn transcripts_round_trip(moves in vec(any_move(), 0..80)) {
        let text = transcript_string(&moves);
        prop_assert_eq!(parse_transcript(&text), Ok(moves.clone()));
    }

    #[test]
    fn transcripts_read_any_separators_and_case(
        moves in vec(any_move(), 0..40),
        seps in vec(select(vec!["", " ", ",", ", ", "\t", "\n", "  ,  "]), 41),
        upper in vec(any::<bool>(), 40),
        short_pass in vec(any::<bool>(), 40),
    ) {
        let mut text = seps[40].to_string();
        for (i, mv) in moves.iter().enumerate() {
            let word = match mv {
                Move::Pass if short_pass[i] => "pa".to_string(),
                mv => mv.to_string(),
            };
            text.push_str(&if upper[i] { word.to_uppercase() } else { word });
            text.push_str(seps[i]);
        }
        prop_assert_eq!(parse_transcript(&text), Ok(moves));
    }

    #[test]
    fn board_strings_round_trip((variant, choices, length) in game_strategy()) {
        let (game, _) = random_game(variant, &choices, length);
        let text = board_string(&game);
        let n = variant.squares() as usize;
        prop_assert_eq!(text.chars().count(), n + 2);
        prop_assert_eq!(parse_board(&text, variant), Ok(game));
        // The lower-case and alternative alphabets read the same.
        let alternative: String = text
            .chars()
            .enumerate()
            .map(|(i, c)| match (c, i % 2) {
                (c, _) if i >= n => c,
                ('X', 0) => 'x',
                ('X', _) => '*',
                ('O', _) => 'o',
                ('-', 0) => '.',
                (c, _) => c,
            })
            .collect();
        prop_assert_eq!(parse_board(&alternative, variant), Ok(game));
        for i in 0..n {
            let sq = Square::from_index(i as u32, variant.size());
            let cell = text.chars().nth(i).expect("a cell");
            let want = match game.cell(sq) {
                Some(color) => color.letter(),
                None => '-',
            };
            prop_assert_eq!(cell, want, "{}", sq);
        }
    }

    #[test]
    fn game_transcripts_replay_to_the_same_game((variant, choices, length) in game_strategy()) {
        let (game, moves) = random_game(variant, &choices, length);
        let text = transcript_string(&moves);
        let read = parse_transcript(&text);
        prop_assert_eq!(read.as_ref(), Ok(&moves));
        prop_assert_eq!(replay(variant, &moves), Ok(game));
        // Passes may be left out: replay infers them before a square.
        let last_placement = moves.iter().rposition(|mv| *mv != Move::Pass);
        let kept = &moves[..last_placement.map_or(0, |i| i + 1)];
        let (at_last_placement, _) = random_game(variant, &choices, kept.len());
        let without_passes: Vec<Move> =
            kept.iter().copied().filter(|mv| *mv != Move::Pass).collect();
        prop_assert_eq!(replay(variant, &without_passes), Ok(at_last_placement));
    }

    #[test]
    fn replay_reports_the_first_illegal_move(
        (variant, choices, length) in game_strategy(),
        at in any::<usize>(),
        replacement in any_move(),
    ) {
        let (_, mut moves) = random_game(variant, &choices, length.max(1));
        let at = at % moves.len().max(1);
        if moves.is_empty() {
            return Ok(());
        }
        let (before, _) = random_game(variant, &choices, at);
        let mut probe = before;
        let result = probe.apply(replacement);
        let implied_pass = matches!(replacement, Move::Place(_)) && before.must_pass();
        moves[at] = replacement;
        if let (Err(error), false) = (result, implied_pass) {
            let err = replay(variant, &moves).unwrap_err();
            prop_assert_eq!(
                &err.kind,
                &ParseErrorKind::IllegalMove { ply: at + 1, error }
            );
            let want = format!("'{replacement}' at ply {}", at + 1);
            prop_assert!(err.to_string().contains(&want), "{}", err);
        }
    }
}

#[test]
fn every_square_of_every_size_prints_and_reads_back() {
    for variant in Variant::ALL {
        let size = variant.size();
        let mut names = std::collections::HashSet::new();
        for index in 0..variant.squares() {
            let square = Square::from_index(index, size);
            assert!(square.fits(size));
            assert_eq!(square.index(size), index);
            let name = square.to_string();
            assert_eq!(name.parse::<Square>(), Ok(square), "{name}");
            assert_eq!(name.to_uppercase().parse::<Square>(), Ok(square), "{name}");
            assert_eq!(name.parse::<Move>(), Ok(Move::Place(square)), "{name}");
            assert_eq!(Move::Place(square).to_string(), name);
            assert!(names.insert(name), "two squares print alike");
        }
    }
    assert_eq!(Square::new(9, 9).unwrap().to_string(), "j10");
    assert_eq!(Square::new(10, 0), None);
    assert_eq!(Square::new(0, 10), None);
    assert_eq!(Move::Pass.to_string(), "pass");
}

#[test]
fn passes_read_in_both_spellings_and_any_case() {
    for text in ["pass", "PASS", "Pass", "pa", "PA", "Pa"] {
        assert_eq!(text.parse::<Move>(), Ok(Move::Pass), "{text}");
        assert_eq!(parse_transcript(text), Ok(vec![Move::Pass]), "{text}");
    }
    assert_eq!(
        parse_transcript("f5PAd6pass,PASS pa"),
        Ok(vec![
            Move::Place(Square { row: 4, col: 5 }),
            Move::Pass,
            Move::Place(Square { row: 5, col: 3 }),
            Move::Pass,
            Move::Pass,
            Move::Pass,
        ])
    );
}

/// Regression: `Square`'s fields are public, and its `Display` once computed
/// `b'a' + col`, which overflowed for a column of 159 or more; `replay` formats a
/// refused move, so it panicked on such a square.
#[test]
fn replay_of_a_square_far_off_any_board_does_not_panic() {
    let far = Square { row: 0, col: 200 };
    let result = std::panic::catch_unwind(|| replay(Variant::Othello, &[Move::Place(far)]));
    let err = result
        .expect("replay panicked")
        .expect_err("an off-board square is refused");
    assert!(err.to_string().contains("'[200]1'"), "{err}");
    assert!(matches!(
        err.kind,
        ParseErrorKind::IllegalMove {
            ply: 1,
            error: MoveError::OffBoard(_)
        }
    ));
}

#[test]
fn variants_print_and_read_back() {
    for variant in Variant::ALL {
        assert_eq!(variant.to_string().parse::<Variant>(), Ok(variant));
        assert_eq!(
            variant.name().to_uppercase().parse::<Variant>(),
            Ok(variant)
        );
    }
}

#[test]
fn a_bad_square_names_the_token_in_quotes() {
    let err = "z9".parse::<Square>().unwrap_err();
    assert_eq!(err.kind, ParseErrorKind::Square);
    assert_eq!(err.token, "z9");
    assert!(err.to_string().contains("'z9'"), "{err}");
    for bad in [
        "", "a", "a0", "k1", "a11", "j11", "a1 ", " a1", "d3d", "10", "é4", "pass",
    ] {
        let err = bad.parse::<Square>().unwrap_err();
        assert!(err.to_string().contains(&format!("'{bad}'")), "{err}");
    }
}

#[test]
fn a_bad_move_or_variant_names_the_token_in_quotes() {
    for bad in ["z9", "pas", "passs", "p", "", "a0", "PASS1"] {
        let err = bad.parse::<Move>().unwrap_err();
        assert_eq!(err.kind, ParseErrorKind::Move);
        assert!(err.to_string().contains(&format!("'{bad}'")), "{err}");
    }
    for bad in ["chess", "othello8", "", "anti "] {
        let err = bad.parse::<Variant>().unwrap_err();
        assert!(err.to_string().contains(&format!("'{bad}'")), "{err}");
        // The message lists what would have been accepted.
        assert!(err.to_string().contains("tictactoe"), "{err}");
    }
}

#[test]
fn a_long_token_is_quoted_shortened() {
    let long = "q".repeat(1000);
    let err = long.parse::<Square>().unwrap_err();
    assert_eq!(err.token, format!("{}...", "q".repeat(40)));
    assert!(err.to_string().contains(&quoted(&long)), "{err}");
    assert!(err.to_string().len() < 200);
    // Shortening counts characters, not bytes: no cut through a multi-byte one.
    let wide = "é".repeat(100);
    let err = wide.parse::<Variant>().unwrap_err();
    assert_eq!(err.token, format!("{}...", "é".repeat(40)));
}

#[test]
fn a_bad_transcript_names_the_bad_token() {
    for (text, token) in [
        ("f5 d6 z9 c3", "z9"),
        ("f5d6z9", "z9"),
        ("f5,k3", "k3"),
        ("f5 d6 c3 q", "q"),
        ("a0", "a0"),
        ("d3 é4", "é4"),
        ("pass x", "x"),
    ] {
        let err = parse_transcript(text).unwrap_err();
        assert_eq!(err.kind, ParseErrorKind::Move, "{text}");
        assert_eq!(err.token, token, "{text}");
        assert!(err.to_string().contains(&format!("'{token}'")), "{err}");
    }
    assert_eq!(parse_transcript(""), Ok(vec![]));
    assert_eq!(parse_transcript(" , "), Ok(vec![]));
}

#[test]
fn a_bad_board_names_the_token() {
    // Too few cells: the cells are quoted.
    let err = parse_board("XO- X", Variant::TicTacToe).unwrap_err();
    assert!(matches!(err.kind, ParseErrorKind::Board(_)));
    assert!(err.to_string().contains("'XO-'"), "{err}");
    // A bad side.
    let err = parse_board("--------- Z", Variant::TicTacToe).unwrap_err();
    assert_eq!(err.kind, ParseErrorKind::Side);
    assert!(err.to_string().contains("'Z'"), "{err}");
    // A bad cell: its character and its position are named.
    let err = parse_board("----Q---- X", Variant::TicTacToe).unwrap_err();
    assert!(err.to_string().contains("'----Q----'"), "{err}");
    assert!(err.to_string().contains("'Q'"), "{err}");
    assert!(err.to_string().contains("cell 5"), "{err}");
    // Missing or extra fields.
    for text in ["", "---------", "--------- X X"] {
        let err = parse_board(text, Variant::TicTacToe).unwrap_err();
        assert!(err.to_string().contains(&format!("'{text}'")), "{err}");
    }
}

#[test]
fn an_illegal_transcript_move_names_the_move_and_ply() {
    let moves = parse_transcript("f5 d6 c3 c3").unwrap();
    let err = replay(Variant::Othello, &moves).unwrap_err();
    assert_eq!(
        err.kind,
        ParseErrorKind::IllegalMove {
            ply: 4,
            error: MoveError::Occupied("c3".parse().unwrap())
        }
    );
    assert!(err.to_string().contains("'c3' at ply 4"), "{err}");
    let err = replay(Variant::Othello, &parse_transcript("pass").unwrap()).unwrap_err();
    assert!(err.to_string().contains("'pass' at ply 1"), "{err}");
    let err = replay(Variant::Othello, &parse_transcript("i9").unwrap()).unwrap_err();
    assert!(matches!(
        err.kind,
        ParseErrorKind::IllegalMove {
            error: MoveError::OffBoard(_),
            ..
        }
    ));
    assert!(err.to_string().contains("'i9'"), "{err}");
}
