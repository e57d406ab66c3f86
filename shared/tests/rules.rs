//! One test per point of the rules, on hand-built positions, plus perft and the
//! complete tic-tac-toe game tree.

use flipline::notation::{board_string, parse_board};
use flipline::{Color, Game, Move, MoveError, Outcome, Square, SquareSet, Variant};

/// A square by name (`d3`).
fn sq(name: &str) -> Square {
    name.parse()
        .unwrap_or_else(|e| panic!("{name} is not a square: {e}"))
}

/// A set of squares of a board `size` wide, by name.
fn set(names: &[&str], size: u8) -> SquareSet {
    let bits = names
        .iter()
        .fold(0u128, |acc, name| acc | 1u128 << sq(name).index(size));
    SquareSet::from_bits(bits, size)
}

/// A position of `variant` from its top rows (row 1 first), each padded with `-` to
/// the board's width; missing rows are empty.
fn position(variant: Variant, rows: &[&str], side: char) -> Game {
    let n = usize::from(variant.size());
    let mut cells = String::new();
    for r in 0..n {
        let row = rows.get(r).copied().unwrap_or("");
        assert!(row.len() <= n, "row {row} is too wide for {variant}");
        cells.push_str(row);
        cells.push_str(&"-".repeat(n - row.len()));
    }
    parse_board(&format!("{cells} {side}"), variant)
        .unwrap_or_else(|e| panic!("{variant} {rows:?}: {e}"))
}

/// A small deterministic generator (xorshift64*), so that the tests are repeatable.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Plays `plies` random moves (passing when forced), or fewer if the game ends.
fn random_play(game: &mut Game, rng: &mut Rng, plies: usize) {
    for _ in 0..plies {
        if game.is_over() {
            break;
        }
        let legal: Vec<Square> = game.legal_moves().iter().collect();
        let mv = if legal.is_empty() {
            Move::Pass
        } else {
            Move::Place(legal[rng.below(legal.len())])
        };
        if let Err(e) = game.apply(mv) {
            panic!("{mv} was listed as legal: {e}");
        }
    }
}

// ---------------------------------------------------------------------------------
// Placing and flipping.
// ---------------------------------------------------------------------------------

#[test]
fn a1_is_the_top_left_corner_and_d3_is_column_d_row_3() {
    assert_eq!(sq("a1"), Square { row: 0, col: 0 });
    assert_eq!(sq("d3"), Square { row: 2, col: 3 });
    assert_eq!(sq("d3").index(8), 19);
    assert_eq!(sq("j10").index(10), 99);
    // The first cell of a board string is a1; the ninth is a2 on 8x8.
    let game = position(Variant::Othello, &["X", "O"], 'X');
    assert_eq!(game.cell(sq("a1")), Some(Color::Black));
    assert_eq!(game.cell(sq("a2")), Some(Color::White));
    assert_eq!(game.cell(sq("b1")), None);
}

#[test]
fn every_variant_starts_with_its_centre_discs_and_first_player() {
    for variant in Variant::ALL {
        let game = Game::new(variant);
        let n = variant.size();
        assert_eq!(game.variant(), variant);
        assert!(!game.is_over(), "{variant}");
        let first = if variant == Variant::Reversi {
            Color::White
        } else {
            Color::Black
        };
        assert_eq!(game.to_move(), first, "{variant}");
        let mut black = Vec::new();
        let mut white = Vec::new();
        for row in 0..n {
            for col in 0..n {
                let square = Square { row, col };
                match game.cell(square) {
                    Some(Color::Black) => black.push(square),
                    Some(Color::White) => white.push(square),
                    None => {}
                }
            }
        }
        if variant == Variant::TicTacToe {
            assert!(black.is_empty() && white.is_empty());
            assert_eq!(game.legal_moves().len(), 9);
            continue;
        }
        let (hi, lo) = (n / 2, n / 2 - 1);
        let mut want_black = vec![Square { row: lo, col: hi }, Square { row: hi, col: lo }];
        want_black.sort();
        assert_eq!(black, want_black, "{variant}");
        assert_eq!(
            white,
            vec![Square { row: lo, col: lo }, Square { row: hi, col: hi }],
            "{variant}"
        );
    }
    // The classic 8x8 start: d5 and e4 black, d4 and e5 white.
    let start = Game::new(Variant::Othello);
    assert_eq!(start.cell(sq("d5")), Some(Color::Black));
    assert_eq!(start.cell(sq("e4")), Some(Color::Black));
    assert_eq!(start.cell(sq("d4")), Some(Color::White));
    assert_eq!(start.cell(sq("e5")), Some(Color::White));
    assert_eq!(
        start.legal_moves(),
        set(&["d3", "c4", "f5", "e6"], 8),
        "black's four openings"
    );
}

#[test]
fn a_move_must_flip_at_least_one_disc() {
    for variant in [
        Variant::Othello,
        Variant::Reversi,
        Variant::Anti,
        Variant::Othello6,
        Variant::Othello10,
    ] {
        let start = Game::new(variant);
        let n = variant.size();
        let legal = start.legal_moves();
        assert_eq!(legal.len(), 4, "{variant}");
        for row in 0..n {
            for col in 0..n {
                let square = Square { row, col };
                let mut game = start;
                let result = game.apply(Move::Place(square));
                if legal.contains(square) {
                    let flipped = result.expect("a legal move");
                    assert!(!flipped.is_empty(), "{variant} {square} flipped nothing");
                } else if start.cell(square).is_some() {
                    assert_eq!(result, Err(MoveError::Occupied(square)));
                    assert_eq!(game, start);
                } else {
                    assert_eq!(result, Err(MoveError::FlipsNothing(square)));
                    assert_eq!(game, start, "a refused move changed the game");
                }
            }
        }
    }
    // c3 touches white's d4 diagonally, but e5 beyond it is white too: no line closes.
    let mut game = Game::new(Variant::Othello);
    assert_eq!(
        game.apply(Move::Place(sq("c3"))),
        Err(MoveError::FlipsNothing(sq("c3")))
    );
    assert_eq!(
        game.apply(Move::Place(sq("d3"))),
        Ok(set(&["d4"], 8)),
        "d3 flips d4"
    );
}

#[test]
fn flips_run_only_from_the_new_disc_no_chain_reaction() {
    // Black plays a1. Along row 1 it closes b1 against c1. Were flipped discs to flip
    // further, b1 would then flip b2 (against b3) and c2 (against d3), and c1 would
    // flip d1 (against e1). The diagonal a1-b2-c3 ends on an empty square.
    let rows = ["-OXOX", "-OO", "-X-X"];
    for variant in [
        Variant::Othello,
        Variant::Anti,
        Variant::Freeplace,
        Variant::Othello6,
        Variant::Othello10,
    ] {
        let mut game = position(variant, &rows, 'X');
        let n = variant.size();
        let flipped = game.apply(Move::Place(sq("a1"))).expect("a1 is legal");
        assert_eq!(flipped, set(&["b1"], n), "{variant}");
        let after = position(variant, &["XXXOX", "-OO", "-X-X"], 'O');
        assert_eq!(board_string(&game), board_string(&after), "{variant}");
        assert_eq!(game, after, "{variant}");
    }
    // Several lines from the new disc all flip, each only up to its own closing disc.
    let mut game = position(
        Variant::Othello,
        &["XOO-OOX", "---O", "---O", "---X", "------O", "-------X"],
        'X',
    );
    let flipped = game.apply(Move::Place(sq("d1"))).expect("d1 is legal");
    // West: c1, b1 (closed by a1). East: e1, f1 (closed by g1). South: d2, d3 (d4).
    // South-east: e2 is empty, so g5 is not reached.
    assert_eq!(flipped, set(&["b1", "c1", "e1", "f1", "d2", "d3"], 8));
    assert_eq!(game.cell(sq("g5")), Some(Color::White));
}

#[test]
fn a_run_must_end_on_the_movers_own_disc_not_an_edge_or_an_empty_square() {
    // Row 1: white b1..g1 running to the h1 edge with no black disc beyond.
    let mut game = position(Variant::Othello, &["-OOOOOO", "-O", "--X"], 'X');
    // a1 closes only the diagonal b2 (against c3); the row runs off into h1, empty.
    assert_eq!(game.apply(Move::Place(sq("a1"))), Ok(set(&["b2"], 8)));
    // Black's only discs are on row 5 (so the game is not over): from a1 there is
    // nothing to close against at all.
    let mut game = position(Variant::Othello, &["-OOOOOOO", "O", "", "", "---XO"], 'X');
    assert_eq!(game.legal_moves(), set(&["f5"], 8));
    assert_eq!(
        game.apply(Move::Place(sq("a1"))),
        Err(MoveError::FlipsNothing(sq("a1")))
    );
}

// ---------------------------------------------------------------------------------
// Passing and the end.
// ---------------------------------------------------------------------------------

#[test]
fn a_player_with_a_legal_move_may_not_pass() {
    for variant in Variant::ALL {
        let start = Game::new(variant);
        let mut game = start;
        assert!(!game.must_pass(), "{variant}");
        let err = game.apply(Move::Pass).unwrap_err();
        assert_eq!(err, MoveError::MustMove(start.legal_moves()), "{variant}");
        assert_eq!(game, start, "{variant}: a refused pass changed the game");
    }
    let mut game = Game::new(Variant::Othello);
    let err = game.apply(Move::Pass).unwrap_err();
    assert_eq!(err, MoveError::MustMove(set(&["d3", "c4", "f5", "e6"], 8)));
    assert!(err.to_string().contains("d3"), "{err}");
}

#[test]
fn a_player_without_a_legal_move_must_pass() {
    // White a1, black b1: black has nothing to close; white can play c1.
    let start = position(Variant::Othello, &["OX"], 'X');
    assert!(!start.is_over());
    assert!(start.must_pass());
    assert!(start.legal_moves().is_empty());
    let mut game = start;
    assert_eq!(
        game.apply(Move::Place(sq("c1"))),
        Err(MoveError::FlipsNothing(sq("c1")))
    );
    assert_eq!(game, start);
    assert_eq!(game.apply(Move::Pass), Ok(set(&[], 8)));
    assert_eq!(game.to_move(), Color::White);
    assert!(!game.must_pass());
    assert_eq!(game.legal_moves(), set(&["c1"], 8));
    assert_eq!(game.counts(), start.counts(), "a pass moves no disc");
    // White takes b1; now neither side can move and the game is over.
    assert_eq!(game.apply(Move::Place(sq("c1"))), Ok(set(&["b1"], 8)));
    assert!(game.is_over());
    assert!(!game.must_pass(), "nobody passes once the game is over");
    assert_eq!(game.apply(Move::Pass), Err(MoveError::GameOver));
    assert_eq!(
        game.outcome(),
        Some(Outcome {
            winner: Some(Color::White),
            black: 0,
            white: 64
        })
    );
}

#[test]
fn the_game_ends_when_neither_side_can_move() {
    // Black and white kept apart by empty rows: nobody can close a line.
    let game = position(
        Variant::Othello,
        &["XXXXXXXX", "XX", "", "", "", "OOOOOOOO", "OOOOOOOO", "OOOO"],
        'X',
    );
    assert!(game.is_over());
    assert!(game.legal_moves().is_empty());
    assert!(!game.must_pass());
    let mut copy = game;
    assert_eq!(copy.apply(Move::Place(sq("a4"))), Err(MoveError::GameOver));
    assert_eq!(copy, game);
    // One side stuck is not the end.
    let stuck = position(Variant::Othello, &["OX"], 'X');
    assert!(!stuck.is_over());
}

#[test]
fn freeplace_move_next_to_a_disc_is_legal_even_if_it_flips_nothing() {
    let start = Game::new(Variant::Freeplace);
    // The eight squares orthogonally beside the centre block.
    assert_eq!(
        start.legal_moves(),
        set(&["d3", "e3", "c4", "f4", "c5", "f5", "d6", "e6"], 8)
    );
    let mut game = start;
    // c5 sits beside black's d5 and closes nothing.
    assert_eq!(game.apply(Move::Place(sq("c5"))), Ok(set(&[], 8)));
    assert_eq!(game.cell(sq("c5")), Some(Color::Black));
    assert_eq!(game.counts().black, 3);
    assert_eq!(game.to_move(), Color::White);
    // A diagonal neighbour is not enough.
    let mut game = start;
    assert_eq!(
        game.apply(Move::Place(sq("c3"))),
        Err(MoveError::NotAdjacent(sq("c3")))
    );
    assert_eq!(game, start);
    // It flips what it closes, like Othello: d3 closes d4 against d5.
    assert_eq!(game.apply(Move::Place(sq("d3"))), Ok(set(&["d4"], 8)));
}

#[test]
fn freeplace_ends_only_when_the_board_is_full() {
    let mut rng = Rng(0x5EED_F1EE);
    for _ in 0..50 {
        let mut game = Game::new(Variant::Freeplace);
        let mut placements = 0;
        while !game.is_over() {
            assert!(!game.must_pass(), "freeplace never forces a pass");
            let counts = game.counts();
            assert!(counts.black + counts.white < 64);
            random_play(&mut game, &mut rng, 1);
            placements += 1;
        }
        assert_eq!(
            placements, 60,
            "four discs to start, sixty moves fill the board"
        );
        let counts = game.counts();
        assert_eq!(counts.black + counts.white, 64);
        let outcome = game.outcome().expect("the game is over");
        assert_eq!(outcome.black, counts.black);
        assert_eq!(outcome.white, counts.white);
    }
    // A board one disc short of full, where Othello would be over, is not over.
    let almost = "-".to_string() + &"X".repeat(63) + " O";
    let othello = parse_board(&almost, Variant::Othello).unwrap();
    assert!(othello.is_over());
    let freeplace = parse_board(&almost, Variant::Freeplace).unwrap();
    assert!(!freeplace.is_over());
    assert_eq!(freeplace.legal_moves(), set(&["a1"], 8));
    // Even a lone disc leaves the game open.
    let lone = position(
        Variant::Freeplace,
        &["", "", "", "", "", "", "", "-------O"],
        'X',
    );
    assert!(!lone.is_over());
    assert_eq!(lone.legal_moves(), set(&["g8", "h7"], 8));
}

#[test]
fn reversi_white_moves_first() {
    let reversi = Game::new(Variant::Reversi);
    let othello = Game::new(Variant::Othello);
    assert_eq!(reversi.to_move(), Color::White);
    assert_eq!(othello.to_move(), Color::Black);
    assert_eq!(reversi.bits(), othello.bits(), "the same start position");
    assert_eq!(reversi.legal_moves(), set(&["e3", "f4", "c5", "d6"], 8));
    let mut game = reversi;
    assert_eq!(game.apply(Move::Place(sq("e3"))), Ok(set(&["e4"], 8)));
    assert_eq!(game.to_move(), Color::Black);
}

#[test]
fn anti_fewest_discs_wins() {
    // Over, black 10 discs, white 20, 34 empties.
    let rows = ["XXXXXXXX", "XX", "", "", "", "OOOOOOOO", "OOOOOOOO", "OOOO"];
    let anti = position(Variant::Anti, &rows, 'X');
    assert!(anti.is_over());
    // Black wins; the empties go to the loser (white), so the margin is 54 - 10, as
    // wide as Othello's.
    assert_eq!(
        anti.outcome(),
        Some(Outcome {
            winner: Some(Color::Black),
            black: 10,
            white: 54
        })
    );
    let othello = position(Variant::Othello, &rows, 'X');
    assert_eq!(
        othello.outcome(),
        Some(Outcome {
            winner: Some(Color::White),
            black: 10,
            white: 54
        })
    );
    // A board full of white: white has more discs and loses.
    let all_white = parse_board(&("O".repeat(64) + " X"), Variant::Anti).unwrap();
    assert_eq!(all_white.outcome().unwrap().winner, Some(Color::Black));
    // The moves are Othello's.
    assert_eq!(
        Game::new(Variant::Anti).legal_moves(),
        Game::new(Variant::Othello).legal_moves()
    );
}

#[test]
fn equal_discs_are_a_draw_and_the_empties_are_split() {
    let rows = ["XXXX", "", "", "", "", "", "", "OOOO"];
    for variant in [Variant::Othello, Variant::Anti] {
        let game = position(variant, &rows, 'X');
        assert!(game.is_over());
        assert_eq!(
            game.outcome(),
            Some(Outcome {
                winner: None,
                black: 32,
                white: 32
            }),
            "{variant}"
        );
    }
}

#[test]
fn scores_sum_to_the_number_of_squares() {
    let mut rng = Rng(0xD15C_5C0E);
    for variant in Variant::ALL {
        for _ in 0..100 {
            let mut game = Game::new(variant);
            random_play(&mut game, &mut rng, 300);
            assert!(game.is_over(), "{variant}: random play ended the game");
            let outcome = game.outcome().expect("over");
            let counts = game.counts();
            assert_eq!(
                outcome.black + outcome.white,
                variant.squares(),
                "{variant} {}",
                board_string(&game)
            );
            assert!(outcome.black >= counts.black && outcome.white >= counts.white);
            match outcome.winner {
                Some(winner) => {
                    let (mine, theirs) = match winner {
                        Color::Black => (outcome.black, outcome.white),
                        Color::White => (outcome.white, outcome.black),
                    };
                    if variant == Variant::Anti {
                        assert!(mine < theirs, "anti: the winner scores fewer");
                    } else {
                        assert!(mine > theirs, "{variant}: the winner scores more");
                    }
                }
                None if variant == Variant::TicTacToe => {
                    assert_eq!((outcome.black, outcome.white), (5, 4), "a full grid");
                }
                None => assert_eq!(outcome.black, outcome.white, "{variant}"),
            }
        }
    }
}

// ---------------------------------------------------------------------------------
// Tic-tac-toe.
// ---------------------------------------------------------------------------------

fn play_all(game: &mut Game, moves: &[&str]) {
    for name in moves {
        game.apply(Move::Place(sq(name)))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
    }
}

#[test]
fn tictactoe_ends_at_a_line_or_a_full_board() {
    let mut game = Game::new(Variant::TicTacToe);
    play_all(&mut game, &["a1", "a2", "b1", "b2"]);
    assert!(!game.is_over());
    assert_eq!(
        game.apply(Move::Place(sq("a2"))),
        Err(MoveError::Occupied(sq("a2")))
    );
    assert_eq!(
        game.apply(Move::Place(sq("d1"))),
        Err(MoveError::OffBoard(sq("d1")))
    );
    assert_eq!(
        game.apply(Move::Place(sq("c1"))),
        Ok(set(&[], 3)),
        "nothing flips"
    );
    assert!(game.is_over(), "X has a1 b1 c1");
    assert_eq!(
        game.outcome(),
        Some(Outcome {
            winner: Some(Color::Black),
            black: 7,
            white: 2
        })
    );
    assert_eq!(game.apply(Move::Place(sq("c3"))), Err(MoveError::GameOver));

    // O wins on the diagonal c1-b2-a3.
    let mut game = Game::new(Variant::TicTacToe);
    play_all(&mut game, &["a1", "c1", "b1", "b2", "c3", "a3"]);
    assert_eq!(
        game.outcome(),
        Some(Outcome {
            winner: Some(Color::White),
            black: 3,
            white: 6
        })
    );

    // X O X / X O O / O X X: a full board, no line.
    let mut game = Game::new(Variant::TicTacToe);
    play_all(
        &mut game,
        &["a1", "b1", "c1", "b2", "a2", "c2", "b3", "a3", "c3"],
    );
    assert!(game.is_over());
    assert_eq!(
        game.outcome(),
        Some(Outcome {
            winner: None,
            black: 5,
            white: 4
        })
    );
}

fn count_nodes(game: &Game) -> u64 {
    if game.is_over() {
        return 1;
    }
    1 + game
        .legal_moves()
        .iter()
        .map(|square| {
            let mut child = *game;
            if let Err(e) = child.apply(Move::Place(square)) {
                panic!("{square} was listed as legal: {e}");
            }
            count_nodes(&child)
        })
        .sum::<u64>()
}

#[test]
fn tictactoe_complete_game_tree_has_549946_nodes() {
    assert_eq!(count_nodes(&Game::new(Variant::TicTacToe)), 549_946);
}

#[test]
fn tictactoe_has_255168_complete_games() {
    // The leaves of the same tree: the number of distinct games.
    assert_eq!(
        flipline::perft::perft(&Game::new(Variant::TicTacToe), 9),
        255_168
    );
}

// ---------------------------------------------------------------------------------
// Perft.
// ---------------------------------------------------------------------------------

fn perft_table() -> Vec<(u32, u64)> {
    include_str!("data/perft.txt")
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let (Some(depth), Some(leaves)) = (
                fields.first().and_then(|f| f.parse::<u32>().ok()),
                fields.get(1).and_then(|f| f.parse::<u64>().ok()),
            ) else {
                panic!("perft.txt: bad line {line:?}");
            };
            assert_eq!(fields.len(), 2, "perft.txt: bad line {line:?}");
            (depth, leaves)
        })
        .collect()
}

#[test]
fn othello_perft_from_the_start_matches_perft_txt_through_depth_11() {
    let table = perft_table();
    let start = Game::new(Variant::Othello);
    let mut checked = 0;
    for &(depth, leaves) in table.iter().filter(|(depth, _)| *depth <= 11) {
        assert_eq!(
            flipline::perft::perft(&start, depth),
            leaves,
            "depth {depth}"
        );
        checked += 1;
    }
    assert_eq!(checked, 11);
    assert_eq!(flipline::perft::perft(&start, 0), 1);
}

#[test]
fn reversi_and_anti_perft_equal_othello_perft() {
    let table = perft_table();
    // Reversi's start is Othello's with the colours swapped (and mirrored), so its
    // tree is the same; anti has Othello's moves.
    for (variant, max_depth) in [(Variant::Reversi, 10), (Variant::Anti, 9)] {
        let start = Game::new(variant);
        for &(depth, leaves) in table.iter().filter(|(depth, _)| *depth <= max_depth) {
            assert_eq!(
                flipline::perft::perft(&start, depth),
                leaves,
                "{variant} depth {depth}"
            );
        }
    }
}

/// Perft by recursion through `Game::apply` alone, with the same convention.
fn perft_by_apply(game: &Game, depth: u32) -> u64 {
    if depth == 0 || game.is_over() {
        return 1;
    }
    let legal = game.legal_moves();
    if legal.is_empty() {
        let mut child = *game;
        if let Err(e) = child.apply(Move::Pass) {
            panic!("a forced pass was refused: {e}");
        }
        return perft_by_apply(&child, depth - 1);
    }
    legal
        .iter()
        .map(|square| {
            let mut child = *game;
            if let Err(e) = child.apply(Move::Place(square)) {
                panic!("{square} was listed as legal: {e}");
            }
            perft_by_apply(&child, depth - 1)
        })
        .sum()
}

#[test]
fn fast_and_generic_perft_agree_on_random_8x8_positions() {
    let mut rng = Rng(0x0DD5_EED5);
    let mut positions = Vec::new();
    // Positions reached in play, from the opening to the endgame.
    for plies in [4, 10, 20, 30, 40, 48, 54, 58] {
        for _ in 0..4 {
            let mut game = Game::new(Variant::Othello);
            random_play(&mut game, &mut rng, plies);
            positions.push(game);
        }
    }
    // Arbitrary crowded positions, with passes and early ends.
    for _ in 0..24 {
        let (mut black, mut white) = (0u128, 0u128);
        for i in 0..64 {
            match rng.below(5) {
                0 => {}
                1 | 2 => black |= 1 << i,
                _ => white |= 1 << i,
            }
        }
        let side = if rng.below(2) == 0 {
            Color::Black
        } else {
            Color::White
        };
        positions.push(Game::from_bits(Variant::Othello, black, white, side));
    }
    for game in positions {
        for depth in 0..=3 {
            let generic = perft_by_apply(&game, depth);
            assert_eq!(
                flipline::perft::perft(&game, depth),
                generic,
                "{} depth {depth}",
                board_string(&game)
            );
            if let (Some((p, o)), false) = (game.board8(), game.is_over()) {
                assert_eq!(flipline::board8::perft(p, o, depth), generic);
            }
        }
    }
}

#[test]
fn perft_counts_a_forced_pass_as_one_ply_and_an_early_end_as_one_leaf() {
    for variant in [
        Variant::Othello,
        Variant::Anti,
        Variant::Othello6,
        Variant::Othello10,
    ] {
        // Black (to move) must pass; white then has one move, c1, which ends the game.
        let game = position(variant, &["OX"], 'X');
        assert!(game.must_pass());
        for (depth, leaves) in [(0, 1), (1, 1), (2, 1), (3, 1), (6, 1)] {
            assert_eq!(
                flipline::perft::perft(&game, depth),
                leaves,
                "{variant} depth {depth}"
            );
        }
        // Black must pass; white then has two moves (c1 and a3), after each of which
        // black has one reply or none.
        let game = position(variant, &["OX", "X"], 'X');
        assert!(game.must_pass());
        assert_eq!(flipline::perft::perft(&game, 1), 1, "{variant}");
        assert_eq!(flipline::perft::perft(&game, 2), 2, "{variant}");
        assert_eq!(
            flipline::perft::perft(&game, 3),
            perft_by_apply(&game, 3),
            "{variant}"
        );
        // A finished game is one leaf at any depth.
        let over = position(variant, &["XX"], 'O');
        assert!(over.is_over());
        assert_eq!(flipline::perft::perft(&over, 0), 1);
        assert_eq!(flipline::perft::perft(&over, 5), 1, "{variant}");
    }
}

#[test]
fn perft_agrees_with_a_recursion_through_apply_in_every_variant() {
    let mut rng = Rng(0xA11_5123);
    for variant in Variant::ALL {
        for _ in 0..40 {
            let n = variant.squares();
            let (mut black, mut white) = (0u128, 0u128);
            for i in 0..n {
                match rng.below(4) {
                    0 => black |= 1 << i,
                    1 => white |= 1 << i,
                    _ => {}
                }
            }
            let side = if rng.below(2) == 0 {
                Color::Black
            } else {
                Color::White
            };
            let mut played = Game::new(variant);
            let plies = rng.below(variant.squares() as usize);
            random_play(&mut played, &mut rng, plies);
            for game in [Game::from_bits(variant, black, white, side), played] {
                for depth in 0..=3 {
                    assert_eq!(
                        flipline::perft::perft(&game, depth),
                        perft_by_apply(&game, depth),
                        "{variant} {} depth {depth}",
                        board_string(&game)
                    );
                }
            }
        }
    }
}

#[test]
fn board8_moves_and_flips_agree_with_game() {
    let mut rng = Rng(0x00B0_A2D8);
    for _ in 0..200 {
        let mut game = Game::new(Variant::Othello);
        let plies = rng.below(60);
        random_play(&mut game, &mut rng, plies);
        let (p, o) = game.board8().expect("8x8");
        assert_eq!(
            u128::from(flipline::board8::moves(p, o)),
            game.legal_moves().bits()
        );
        for square in game.legal_moves().iter() {
            let mut child = game;
            let flipped = child.apply(Move::Place(square)).expect("legal");
            assert_eq!(
                u128::from(flipline::board8::flips(square.index(8), p, o)),
                flipped.bits()
            );
        }
    }
}
