//! A slow, obvious reference implementation of the rules of every variant, written
//! apart from the crate (a grid of cells and eight direction loops, no bit tricks),
//! and property tests that play random games in both, move by move, and compare
//! everything `flipline::Game` says: legal moves, flips, passes, the end, the score,
//! the board, and the errors for illegal moves.

use flipline::{Color, Counts, Game, Move, MoveError, Outcome, Square, SquareSet, Variant};
use proptest::collection::vec;
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

// ---------------------------------------------------------------------------------
// The reference rules.
// ---------------------------------------------------------------------------------

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Cell {
    Empty,
    Black,
    White,
}

impl Cell {
    fn of(color: Color) -> Cell {
        match color {
            Color::Black => Cell::Black,
            Color::White => Cell::White,
        }
    }

    fn color(self) -> Option<Color> {
        match self {
            Cell::Empty => None,
            Cell::Black => Some(Color::Black),
            Cell::White => Some(Color::White),
        }
    }
}

fn other(color: Color) -> Color {
    match color {
        Color::Black => Color::White,
        Color::White => Color::Black,
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Rule {
    /// A move must flip at least one disc.
    MustFlip,
    /// Any empty square with an occupied orthogonal neighbour.
    Adjacent,
    /// Any empty square, nothing flips, three in a row wins.
    Mark,
}

/// The rules of a variant, written out here rather than asked of the crate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Spec {
    size: usize,
    first: Color,
    rule: Rule,
    fewest_wins: bool,
    centre_start: bool,
}

fn spec(variant: Variant) -> Spec {
    let othello = Spec {
        size: 8,
        first: Color::Black,
        rule: Rule::MustFlip,
        fewest_wins: false,
        centre_start: true,
    };
    match variant {
        Variant::Othello => othello,
        Variant::Reversi => Spec {
            first: Color::White,
            ..othello
        },
        Variant::Freeplace => Spec {
            rule: Rule::Adjacent,
            ..othello
        },
        Variant::Anti => Spec {
            fewest_wins: true,
            ..othello
        },
        Variant::Othello6 => Spec { size: 6, ..othello },
        Variant::Othello10 => Spec {
            size: 10,
            ..othello
        },
        Variant::TicTacToe => Spec {
            size: 3,
            first: Color::Black,
            rule: Rule::Mark,
            fewest_wins: false,
            centre_start: false,
        },
    }
}

const DIRECTIONS: [(isize, isize); 8] = [
    (-1, -1),
    (-1, 0),
    (-1, 1),
    (0, -1),
    (0, 1),
    (1, -1),
    (1, 0),
    (1, 1),
];

const ORTHOGONAL: [(isize, isize); 4] = [(-1, 0), (1, 0), (0, -1), (0, 1)];

#[derive(Clone, Debug, PartialEq, Eq)]
struct RefGame {
    spec: Spec,
    board: Vec<Vec<Cell>>,
    to_move: Color,
    over: bool,
}

/// The reference's idea of a finished game's result.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct RefScore {
    winner: Option<Color>,
    black: u32,
    white: u32,
}

impl RefGame {
    fn new(variant: Variant) -> RefGame {
        let spec = spec(variant);
        let n = spec.size;
        let mut board = vec![vec![Cell::Empty; n]; n];
        if spec.centre_start {
            let (hi, lo) = (n / 2, n / 2 - 1);
            board[hi][lo] = Cell::Black;
            board[lo][hi] = Cell::Black;
            board[lo][lo] = Cell::White;
            board[hi][hi] = Cell::White;
        }
        RefGame::from_cells(variant, board, spec.first)
    }

    fn from_cells(variant: Variant, board: Vec<Vec<Cell>>, to_move: Color) -> RefGame {
        let mut game = RefGame {
            spec: spec(variant),
            board,
            to_move,
            over: false,
        };
        game.over = game.ended();
        game
    }

    fn n(&self) -> usize {
        self.spec.size
    }

    /// The cell at (r, c), or `None` off the board.
    fn at(&self, r: isize, c: isize) -> Option<Cell> {
        let n = self.n() as isize;
        if r < 0 || c < 0 || r >= n || c >= n {
            return None;
        }
        Some(self.board[r as usize][c as usize])
    }

    /// The discs a `color` disc on (r, c) would flip: in each direction, the run of
    /// opponent discs that ends on a `color` disc. Only lines through (r, c).
    fn flips(&self, r: usize, c: usize, color: Color) -> Vec<(usize, usize)> {
        if self.spec.rule == Rule::Mark {
            return Vec::new();
        }
        let mine = Cell::of(color);
        let theirs = Cell::of(other(color));
        let mut flipped = Vec::new();
        for (dr, dc) in DIRECTIONS {
            let mut run = Vec::new();
            let (mut rr, mut cc) = (r as isize + dr, c as isize + dc);
            while self.at(rr, cc) == Some(theirs) {
                run.push((rr as usize, cc as usize));
                rr += dr;
                cc += dc;
            }
            if self.at(rr, cc) == Some(mine) {
                flipped.extend(run);
            }
        }
        flipped.sort_unstable();
        flipped
    }

    /// Whether a `color` disc on (r, c) would flip anything (`flips` without the list).
    fn closes_a_line(&self, r: usize, c: usize, color: Color) -> bool {
        let mine = Cell::of(color);
        let theirs = Cell::of(other(color));
        DIRECTIONS.iter().any(|&(dr, dc)| {
            let (mut rr, mut cc) = (r as isize + dr, c as isize + dc);
            let mut run = 0;
            while self.at(rr, cc) == Some(theirs) {
                run += 1;
                rr += dr;
                cc += dc;
            }
            run > 0 && self.at(rr, cc) == Some(mine)
        })
    }

    fn is_legal(&self, r: usize, c: usize, color: Color) -> bool {
        if self.board[r][c] != Cell::Empty {
            return false;
        }
        match self.spec.rule {
            Rule::MustFlip => self.closes_a_line(r, c, color),
            Rule::Adjacent => ORTHOGONAL.iter().any(|&(dr, dc)| {
                matches!(
                    self.at(r as isize + dr, c as isize + dc),
                    Some(Cell::Black | Cell::White)
                )
            }),
            Rule::Mark => true,
        }
    }

    /// Legal squares of `color` (ignoring whether the game is over), row by row.
    fn legal(&self, color: Color) -> Vec<(usize, usize)> {
        let mut moves = Vec::new();
        for r in 0..self.n() {
            for c in 0..self.n() {
                if self.is_legal(r, c, color) {
                    moves.push((r, c));
                }
            }
        }
        moves
    }

    fn has_line(&self, color: Color) -> bool {
        let n = self.n();
        let mine = Cell::of(color);
        let row = (0..n).any(|r| (0..n).all(|c| self.board[r][c] == mine));
        let col = (0..n).any(|c| (0..n).all(|r| self.board[r][c] == mine));
        let diag = (0..n).all(|i| self.board[i][i] == mine);
        let anti = (0..n).all(|i| self.board[i][n - 1 - i] == mine);
        row || col || diag || anti
    }

    fn full(&self) -> bool {
        self.board
            .iter()
            .all(|row| row.iter().all(|&cell| cell != Cell::Empty))
    }

    fn ended(&self) -> bool {
        match self.spec.rule {
            Rule::Mark => self.full() || self.has_line(Color::Black) || self.has_line(Color::White),
            _ => self.legal(self.to_move).is_empty() && self.legal(other(self.to_move)).is_empty(),
        }
    }

    /// The moves the side to move may make now: none once the game is over.
    fn legal_now(&self) -> Vec<(usize, usize)> {
        if self.over {
            Vec::new()
        } else {
            self.legal(self.to_move)
        }
    }

    /// Plays a legal move (`None` is a pass) and returns the flipped discs.
    fn play(&mut self, mv: Option<(usize, usize)>) -> Vec<(usize, usize)> {
        assert!(!self.over, "reference: move after the end");
        let color = self.to_move;
        let flipped = match mv {
            None => {
                assert!(self.legal(color).is_empty(), "reference: illegal pass");
                Vec::new()
            }
            Some((r, c)) => {
                assert!(self.is_legal(r, c, color), "reference: illegal move");
                let flipped = self.flips(r, c, color);
                self.board[r][c] = Cell::of(color);
                for &(fr, fc) in &flipped {
                    self.board[fr][fc] = Cell::of(color);
                }
                flipped
            }
        };
        self.to_move = other(color);
        self.over = self.ended();
        flipped
    }

    fn counts(&self) -> (u32, u32) {
        let mut black = 0;
        let mut white = 0;
        for row in &self.board {
            for &cell in row {
                match cell {
                    Cell::Black => black += 1,
                    Cell::White => white += 1,
                    Cell::Empty => {}
                }
            }
        }
        (black, white)
    }

    /// The score as if the game ended now.
    fn score(&self) -> RefScore {
        let (black, white) = self.counts();
        let squares = (self.n() * self.n()) as u32;
        let empties = squares - black - white;
        let winner = if self.spec.rule == Rule::Mark {
            if self.has_line(Color::Black) {
                Some(Color::Black)
            } else if self.has_line(Color::White) {
                Some(Color::White)
            } else {
                None
            }
        } else if black == white {
            None
        } else if (black > white) != self.spec.fewest_wins {
            Some(Color::Black)
        } else {
            Some(Color::White)
        };
        // The winner takes the empties; in anti the loser does, which widens the
        // winner's margin just the same.
        let takes = match winner {
            Some(w) if self.spec.fewest_wins => Some(other(w)),
            w => w,
        };
        let (b, w) = match takes {
            Some(Color::Black) => (black + empties, white),
            Some(Color::White) => (black, white + empties),
            None => (black + empties / 2, white + empties - empties / 2),
        };
        RefScore {
            winner,
            black: b,
            white: w,
        }
    }
}

// ---------------------------------------------------------------------------------
// Comparing the crate with the reference.
// ---------------------------------------------------------------------------------

fn square(r: usize, c: usize) -> Square {
    // The reference only uses squares of boards up to 10x10.
    Square {
        row: r as u8,
        col: c as u8,
    }
}

fn set_of(squares: &[(usize, usize)], n: usize) -> SquareSet {
    let bits = squares
        .iter()
        .fold(0u128, |acc, &(r, c)| acc | 1u128 << (r * n + c));
    SquareSet::from_bits(bits, n as u8)
}

fn bits_of(reference: &RefGame, cell: Cell) -> u128 {
    let n = reference.n();
    let mut bits = 0u128;
    for r in 0..n {
        for c in 0..n {
            if reference.board[r][c] == cell {
                bits |= 1u128 << (r * n + c);
            }
        }
    }
    bits
}

/// Everything the crate says about the position agrees with the reference.
fn check_same(game: &Game, reference: &RefGame) -> Result<(), TestCaseError> {
    let n = reference.n();
    prop_assert_eq!(usize::from(game.size()), n);
    prop_assert_eq!(game.to_move(), reference.to_move);
    prop_assert_eq!(game.is_over(), reference.over);
    for r in 0..10 {
        for c in 0..10 {
            let want = if r < n && c < n {
                reference.board[r][c].color()
            } else {
                None
            };
            prop_assert_eq!(game.cell(square(r, c)), want, "cell {}", square(r, c));
        }
    }
    let (black, white) = game.bits();
    prop_assert_eq!(black, bits_of(reference, Cell::Black));
    prop_assert_eq!(white, bits_of(reference, Cell::White));
    let (rb, rw) = reference.counts();
    prop_assert_eq!(
        game.counts(),
        Counts {
            black: rb,
            white: rw
        }
    );

    let legal = reference.legal_now();
    let got = game.legal_moves();
    prop_assert_eq!(got, set_of(&legal, n), "legal moves {} ", got);
    prop_assert_eq!(got.len(), legal.len());
    let listed: Vec<Square> = got.iter().collect();
    let want: Vec<Square> = legal.iter().map(|&(r, c)| square(r, c)).collect();
    prop_assert_eq!(listed, want);
    for r in 0..n {
        for c in 0..n {
            prop_assert_eq!(got.contains(square(r, c)), legal.contains(&(r, c)));
        }
    }
    prop_assert_eq!(
        game.must_pass(),
        !reference.over && legal.is_empty(),
        "must_pass"
    );

    let score = reference.score();
    let want = Outcome {
        winner: score.winner,
        black: score.black,
        white: score.white,
    };
    if reference.over {
        prop_assert_eq!(game.outcome(), Some(want));
        prop_assert_eq!(want.black + want.white, (n * n) as u32);
    } else {
        prop_assert_eq!(game.outcome(), None);
    }
    prop_assert_eq!(game.score(), want);

    if n == 8 {
        let (p, o) = match reference.to_move {
            Color::Black => (black, white),
            Color::White => (white, black),
        };
        prop_assert_eq!(game.board8(), Some((p as u64, o as u64)));
    } else {
        prop_assert_eq!(game.board8(), None);
    }
    Ok(())
}

/// Every move the reference calls illegal is refused with the right error, and
/// leaves the game as it was; so is a pass when a move exists.
fn check_refusals(game: &Game, reference: &RefGame) -> Result<(), TestCaseError> {
    let n = reference.n();
    let legal = reference.legal_now();
    for r in 0..n {
        for c in 0..n {
            if legal.contains(&(r, c)) {
                continue;
            }
            let sq = square(r, c);
            let want = if reference.over {
                MoveError::GameOver
            } else if reference.board[r][c] != Cell::Empty {
                MoveError::Occupied(sq)
            } else {
                match reference.spec.rule {
                    Rule::MustFlip => MoveError::FlipsNothing(sq),
                    Rule::Adjacent => MoveError::NotAdjacent(sq),
                    Rule::Mark => unreachable!("every empty square is legal in tic-tac-toe"),
                }
            };
            let mut copy = *game;
            prop_assert_eq!(copy.apply(Move::Place(sq)), Err(want), "move {}", sq);
            prop_assert_eq!(copy, *game);
        }
    }
    // Squares beyond this board, named and not.
    let mut beyond = vec![
        Square { row: 10, col: 0 },
        Square { row: 0, col: 10 },
        Square { row: 200, col: 3 },
        Square { row: 3, col: 200 },
        Square { row: 255, col: 255 },
    ];
    for i in n..10 {
        beyond.push(square(i, 0));
        beyond.push(square(0, i));
        beyond.push(square(i, i));
    }
    for sq in beyond {
        let want = if reference.over {
            MoveError::GameOver
        } else {
            MoveError::OffBoard(sq)
        };
        let mut copy = *game;
        prop_assert_eq!(copy.apply(Move::Place(sq)), Err(want), "{:?}", sq);
        prop_assert_eq!(copy, *game);
    }
    let mut copy = *game;
    let pass = copy.apply(Move::Pass);
    if reference.over {
        prop_assert_eq!(pass, Err(MoveError::GameOver));
        prop_assert_eq!(copy, *game);
    } else if !legal.is_empty() {
        prop_assert_eq!(pass, Err(MoveError::MustMove(set_of(&legal, n))));
        prop_assert_eq!(copy, *game);
    }
    Ok(())
}

/// Plays one game in both implementations, the moves picked by `choices` (indices
/// into the legal move list, used in turn and cyclically), until it ends.
fn play_random_game(variant: Variant, choices: &[u16]) -> Result<(), TestCaseError> {
    let mut game = Game::new(variant);
    let mut reference = RefGame::new(variant);
    prop_assert_eq!(game.variant(), variant);
    check_same(&game, &reference)?;
    let mut placements = 0usize;
    let mut plies = 0usize;
    while !reference.over {
        plies += 1;
        prop_assert!(plies <= 250, "the game does not end");
        check_refusals(&game, &reference)?;
        let legal = reference.legal(reference.to_move);
        if legal.is_empty() {
            let flipped = game.apply(Move::Pass);
            prop_assert_eq!(flipped, Ok(set_of(&[], reference.n())));
            reference.play(None);
        } else {
            let pick = usize::from(choices[placements % choices.len()]) % legal.len();
            placements += 1;
            let (r, c) = legal[pick];
            let want = reference.play(Some((r, c)));
            let got = game.apply(Move::Place(square(r, c)));
            prop_assert_eq!(
                got,
                Ok(set_of(&want, reference.n())),
                "flips of {}",
                square(r, c)
            );
        }
        check_same(&game, &reference)?;
    }
    check_refusals(&game, &reference)?;
    prop_assert!(game.outcome().is_some());
    Ok(())
}

fn choices() -> impl Strategy<Value = Vec<u16>> {
    vec(any::<u16>(), 1..=128)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn random_othello_games_match_the_reference(choices in choices()) {
        play_random_game(Variant::Othello, &choices)?;
    }

    #[test]
    fn random_reversi_games_match_the_reference(choices in choices()) {
        play_random_game(Variant::Reversi, &choices)?;
    }

    #[test]
    fn random_freeplace_games_match_the_reference(choices in choices()) {
        play_random_game(Variant::Freeplace, &choices)?;
    }

    #[test]
    fn random_anti_games_match_the_reference(choices in choices()) {
        play_random_game(Variant::Anti, &choices)?;
    }

    #[test]
    fn random_othello6_games_match_the_reference(choices in choices()) {
        play_random_game(Variant::Othello6, &choices)?;
    }

    #[test]
    fn random_othello10_games_match_the_reference(choices in choices()) {
        play_random_game(Variant::Othello10, &choices)?;
    }

    #[test]
    fn random_tictactoe_games_match_the_reference(choices in choices()) {
        play_random_game(Variant::TicTacToe, &choices)?;
    }
}

// ---------------------------------------------------------------------------------
// Arbitrary positions (reachable or not): long runs, full edges, lone discs.
// ---------------------------------------------------------------------------------

/// Builds the same arbitrary position in both: `cells` gives 0 empty, 1 black,
/// 2 white for the first size*size squares.
fn position(variant: Variant, cells: &[u8], to_move: Color) -> (Game, RefGame) {
    let n = spec(variant).size;
    let mut board = vec![vec![Cell::Empty; n]; n];
    let (mut black, mut white) = (0u128, 0u128);
    for (i, &cell) in cells.iter().take(n * n).enumerate() {
        let (r, c) = (i / n, i % n);
        match cell {
            1 => {
                board[r][c] = Cell::Black;
                black |= 1 << i;
            }
            2 => {
                board[r][c] = Cell::White;
                white |= 1 << i;
            }
            _ => {}
        }
    }
    (
        Game::from_bits(variant, black, white, to_move),
        RefGame::from_cells(variant, board, to_move),
    )
}

/// Compares a position, then every move on it: the flips and the position after.
fn check_position(game: &Game, reference: &RefGame) -> Result<(), TestCaseError> {
    check_same(game, reference)?;
    check_refusals(game, reference)?;
    if reference.over {
        return Ok(());
    }
    let legal = reference.legal(reference.to_move);
    if legal.is_empty() {
        let mut after = *game;
        prop_assert_eq!(after.apply(Move::Pass), Ok(set_of(&[], reference.n())));
        let mut ref_after = reference.clone();
        ref_after.play(None);
        check_same(&after, &ref_after)?;
    }
    for (r, c) in legal {
        let mut after = *game;
        let mut ref_after = reference.clone();
        let want = ref_after.play(Some((r, c)));
        prop_assert_eq!(
            after.apply(Move::Place(square(r, c))),
            Ok(set_of(&want, reference.n())),
            "flips of {}",
            square(r, c)
        );
        check_same(&after, &ref_after)?;
    }
    Ok(())
}

fn side() -> impl Strategy<Value = Color> {
    prop_oneof![Just(Color::Black), Just(Color::White)]
}

/// Cells for up to 100 squares, some boards sparse, some crowded, some one-sided.
fn cells() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        vec(0u8..3, 100),
        vec(
            prop_oneof![1 => Just(0u8), 3 => Just(1u8), 3 => Just(2u8)],
            100
        ),
        vec(
            prop_oneof![6 => Just(0u8), 1 => Just(1u8), 1 => Just(2u8)],
            100
        ),
        vec(
            prop_oneof![1 => Just(0u8), 1 => Just(1u8), 8 => Just(2u8)],
            100
        ),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn arbitrary_positions_match_the_reference(
        variant in proptest::sample::select(Variant::ALL.to_vec()),
        cells in cells(),
        to_move in side(),
    ) {
        let (game, reference) = position(variant, &cells, to_move);
        if variant == Variant::TicTacToe
            && reference.has_line(Color::Black)
            && reference.has_line(Color::White)
        {
            // Both sides with a line cannot arise in play, and who "won" is moot.
            return Ok(());
        }
        check_position(&game, &reference)?;
    }

    #[test]
    fn from_bits_drops_bits_beyond_the_board_and_gives_shared_squares_to_black(
        variant in proptest::sample::select(Variant::ALL.to_vec()),
        black in any::<u128>(),
        white in any::<u128>(),
        to_move in side(),
    ) {
        let game = Game::from_bits(variant, black, white, to_move);
        let n = spec(variant).size;
        let full = u128::MAX >> (128 - n * n);
        prop_assert_eq!(game.bits(), (black & full, white & full & !black));
        let cells: Vec<u8> = (0..n * n)
            .map(|i| match (black >> i & 1, white >> i & 1) {
                (1, _) => 1,
                (_, 1) => 2,
                _ => 0,
            })
            .collect();
        let (same, _) = position(variant, &cells, to_move);
        prop_assert_eq!(game, same);
    }
}

/// The FFO endgame positions: crowded, realistic boards with long runs.
#[test]
fn ffo_positions_match_the_reference() {
    let files = [
        include_str!("data/ffo/fforum-1-19.obf"),
        include_str!("data/ffo/fforum-20-39.obf"),
        include_str!("data/ffo/fforum-40-59.obf"),
    ];
    let mut seen = 0;
    for line in files.iter().flat_map(|f| f.lines()) {
        let line = line.trim();
        if line.is_empty() || line.starts_with('%') {
            continue;
        }
        let board = line
            .split(';')
            .next()
            .expect("a board before the first ';'");
        for variant in [Variant::Othello, Variant::Anti, Variant::Freeplace] {
            let game = flipline::notation::parse_board(board, variant).expect("an OBF board");
            let cells: Vec<u8> = (0..64)
                .map(|i| match game.cell(Square::from_index(i, 8)) {
                    Some(Color::Black) => 1,
                    Some(Color::White) => 2,
                    None => 0,
                })
                .collect();
            for to_move in [Color::Black, Color::White] {
                let (game, reference) = position(variant, &cells, to_move);
                if let Err(e) = check_position(&game, &reference) {
                    panic!("{variant} {board} ({to_move} to move): {e}");
                }
            }
        }
        seen += 1;
    }
    assert_eq!(seen, 59);
}

// ---------------------------------------------------------------------------------
// The reference itself, checked against facts that do not come from the crate.
// ---------------------------------------------------------------------------------

fn reference_perft(game: &RefGame, depth: u32) -> u64 {
    if depth == 0 || game.over {
        return 1;
    }
    let legal = game.legal(game.to_move);
    if legal.is_empty() {
        let mut child = game.clone();
        child.play(None);
        return reference_perft(&child, depth - 1);
    }
    legal
        .into_iter()
        .map(|mv| {
            let mut child = game.clone();
            child.play(Some(mv));
            reference_perft(&child, depth - 1)
        })
        .sum()
}

#[test]
fn the_reference_knows_the_standard_othello_perft_counts() {
    let start = RefGame::new(Variant::Othello);
    let expected = [1, 4, 12, 56, 244, 1396];
    for (depth, &want) in expected.iter().enumerate() {
        assert_eq!(reference_perft(&start, depth as u32), want, "depth {depth}");
    }
}

#[test]
fn the_reference_and_the_crate_agree_on_perft_in_every_variant() {
    for (variant, depth) in [
        (Variant::Othello, 5),
        (Variant::Reversi, 5),
        (Variant::Freeplace, 3),
        (Variant::Anti, 5),
        (Variant::Othello6, 6),
        (Variant::Othello10, 4),
        (Variant::TicTacToe, 9),
    ] {
        let reference = RefGame::new(variant);
        let game = Game::new(variant);
        for d in 0..=depth {
            assert_eq!(
                flipline::perft::perft(&game, d),
                reference_perft(&reference, d),
                "{variant} depth {d}"
            );
        }
    }
}

#[test]
fn the_reference_scores_by_hand_examples() {
    // Othello, black 40 white 20 with 4 empties left: black takes them.
    let mut board = vec![vec![Cell::Empty; 8]; 8];
    for (i, cell) in board.iter_mut().flatten().enumerate() {
        *cell = match i {
            0..40 => Cell::Black,
            40..60 => Cell::White,
            _ => Cell::Empty,
        };
    }
    let othello = RefGame::from_cells(Variant::Othello, board.clone(), Color::Black);
    assert_eq!(
        othello.score(),
        RefScore {
            winner: Some(Color::Black),
            black: 44,
            white: 20
        }
    );
    // The same in anti: white wins, black (the loser) takes the empties.
    let anti = RefGame::from_cells(Variant::Anti, board, Color::Black);
    assert_eq!(
        anti.score(),
        RefScore {
            winner: Some(Color::White),
            black: 44,
            white: 20
        }
    );
}
