//! The OBF line parser: no input makes it panic, and what it accepts reads back.

use flipline::notation::cells_string;
use flipline::obf::parse_line;
use proptest::prelude::*;
use proptest::sample::select;

const CELLS: &str = "O--OOOOX-OOOOOOXOOXXOOOXOOXOOOXXOOOOOOXX---OOOOX----O--X--------";

/// Pieces that OBF lines are made of, valid and not.
fn token() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(CELLS.to_string()),
        Just(" X".to_string()),
        Just(" O".to_string()),
        Just(";".to_string()),
        Just(" A2:+38".to_string()),
        Just("pass:-4".to_string()),
        Just(":".to_string()),
        Just("%".to_string()),
        Just("+".to_string()),
        "[A-Ja-j][0-9]{1,2}:[+-]?[0-9]{1,3}",
        "[-XOxo*. ]{0,70}",
        "\\PC{0,12}",
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn no_line_makes_the_parser_panic(parts in proptest::collection::vec(token(), 0..8)) {
        let line: String = parts.concat();
        if let Err(err) = parse_line(&line) {
            prop_assert!(!err.message.is_empty());
        }
    }

    #[test]
    fn arbitrary_text_never_panics(line in "\\PC{0,200}") {
        let _ = parse_line(&line);
    }

    #[test]
    fn valid_lines_read_back_their_board_and_moves(
        side in select(vec!["X", "O"]),
        entries in proptest::collection::vec(("[a-h][1-8]", -64i32..=64), 0..6),
        comment in any::<bool>(),
    ) {
        let moves: String = entries.iter().map(|(sq, s)| format!(" {sq}:{s:+};")).collect();
        let line = format!("{CELLS} {side};{moves}");
        let line = if comment { format!("% {line}") } else { line };
        match parse_line(&line) {
            Ok(None) => prop_assert!(comment),
            Ok(Some(position)) => {
                prop_assert!(!comment);
                prop_assert_eq!(cells_string(&position.game), CELLS);
                prop_assert_eq!(position.moves.len(), entries.len());
                let best = entries.iter().map(|&(_, s)| s).max();
                prop_assert_eq!(position.best_score(), best);
            }
            Err(err) => prop_assert!(false, "{}", err),
        }
    }
}
