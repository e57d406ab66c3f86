//! GGF games as NBoard's `set game` carries them: `(;GM[Othello]...TY[8]
//! BO[8 <64 cells> <side>]B[F5]W[D6//1.5]...;)`. The board (`*` black, `O`
//! white, `-` empty; `X`, `B`, `W`, `.` read too) gives the start and who
//! moves first, the `B[..]`/`W[..]` tags the moves, with their evaluation and
//! time after slashes and passes as `PA`; a pass left out (as Edax writes
//! games) is put back where the side to move had no move. Only 8x8 boards:
//! the other sizes are not what NBoard's engines play.

use flipline::{Color, Game, Move, Variant};

use super::nboard_wire::parse_move_item;
use crate::archive::ggf_write::{self, Rows};

/// A game as NBoard's `set game` gives it: a start and the moves from it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NboardGame {
    /// The position the game starts from.
    pub start: Game,
    /// Every move from there, passes written out.
    pub moves: Vec<Move>,
}

/// `start` with `moves` played (they are legal: [`parse_game`] checked them).
pub fn replay(start: Game, moves: &[Move]) -> Game {
    let mut game = start;
    for &mv in moves {
        let _ = game.apply(mv);
    }
    game
}

/// Reads the first game of `text`; the error names what does not read.
pub fn parse_game(text: &str) -> Result<NboardGame, String> {
    let tags = tags(text)?;
    if let Some((_, kind)) = tags.iter().find(|(tag, _)| tag == "TY") {
        check_type(kind)?;
    }
    let board =
        (tags.iter().find(|(tag, _)| tag == "BO")).ok_or("the game has no board (BO[...])")?;
    let start = parse_board(&board.1)?;
    let mut game = start;
    let mut moves = Vec::new();
    for (tag, value) in &tags {
        let color = match tag.as_str() {
            "B" => Color::Black,
            "W" => Color::White,
            _ => continue,
        };
        let item = parse_move_item(value).ok_or_else(|| format!("{tag}[{value}] is no move"))?;
        play(&mut game, &mut moves, color, item.mv).map_err(|e| format!("{tag}[{value}]: {e}"))?;
    }
    Ok(NboardGame { start, moves })
}

/// Plays `mv` for `color`, first passing for the side to move if it is the
/// other and has no move.
fn play(game: &mut Game, moves: &mut Vec<Move>, color: Color, mv: Move) -> Result<(), String> {
    if game.to_move() != color && mv != Move::Pass && game.must_pass() {
        game.apply(Move::Pass).map_err(|e| e.to_string())?;
        moves.push(Move::Pass);
    }
    if game.to_move() != color {
        return Err(format!("it is {}'s move", game.to_move()));
    }
    game.apply(mv).map_err(|e| e.to_string())?;
    moves.push(mv);
    Ok(())
}

/// The properties of the first game of `text`, in order, as (name,
/// value), read by the one GGF reader (`archive/ggf_read.rs`); the first
/// game that reads, else why none does.
fn tags(text: &str) -> Result<Vec<(String, String)>, String> {
    let mut first_error = None;
    for game in crate::archive::ggf_read::games(text) {
        match game {
            Ok(game) => return Ok(game.properties),
            Err(e) => {
                first_error.get_or_insert(e.why);
            }
        }
    }
    Err(first_error.unwrap_or_else(|| "no game: '(;' is missing".to_string()))
}

/// `TY[8]` and its kin (`8r`, a random start); another size is refused.
fn check_type(kind: &str) -> Result<(), String> {
    let size: String = (kind.chars())
        .skip_while(|c| !c.is_ascii_digit())
        .take_while(char::is_ascii_digit)
        .collect();
    if size.is_empty() || size == "8" {
        Ok(())
    } else {
        Err(format!("TY[{kind}]: only 8x8 games are played here"))
    }
}

/// `8 <64 cells> <side>`, spaces anywhere after the size.
fn parse_board(text: &str) -> Result<Game, String> {
    let text = text.trim();
    let (size, cells) = text.split_once(char::is_whitespace).unwrap_or((text, ""));
    if size != "8" {
        return Err(format!("BO[{text}]: only 8x8 boards are played here"));
    }
    let marks: Vec<char> = cells.chars().filter(|c| !c.is_whitespace()).collect();
    let [squares @ .., side] = marks.as_slice() else {
        return Err(format!("BO[{text}] has no side to move"));
    };
    if squares.len() != 64 {
        return Err(format!("BO[{text}] has {} squares, not 64", squares.len()));
    }
    let (mut black, mut white) = (0u128, 0u128);
    for (index, mark) in squares.iter().enumerate() {
        match color_of(*mark) {
            Some(Color::Black) => black |= 1 << index,
            Some(Color::White) => white |= 1 << index,
            None if matches!(mark, '-' | '.') => {}
            None => return Err(format!("BO[...]: '{}' is no square", mark.escape_debug())),
        }
    }
    let to_move = color_of(*side).ok_or_else(|| format!("BO[...]: '{side}' is no side"))?;
    Ok(Game::from_bits(Variant::Othello, black, white, to_move))
}

fn color_of(mark: char) -> Option<Color> {
    match mark {
        '*' | 'X' | 'x' | 'B' | 'b' => Some(Color::Black),
        'O' | 'o' | 'W' | 'w' => Some(Color::White),
        _ => None,
    }
}

/// A game as one GGF line, for an engine: the start board, who moves first,
/// and every move (passes as `PA`), written by the one GGF writer. The
/// moves are a game's, so legal; were one not, the engine would be given
/// the moves before it.
pub fn game_text(start: &Game, moves: &[Move]) -> String {
    let board = ggf_write::board(start, Rows::Together);
    let legal = moves.iter().take_while({
        let mut game = *start;
        move |&&mv| game.apply(mv).is_ok()
    });
    let moves = ggf_write::moves(*start, legal.map(|&mv| (mv, None))).unwrap_or_default();
    format!("(;GM[Othello]PC[flipline]TY[8]BO[{board}]{moves};)")
}

#[cfg(test)]
mod tests {
    use super::*;
    use flipline::Square;
    use proptest::prelude::*;

    /// NBoard's own example session.
    const NBOARD_GAME: &str = "(;GM[Othello]PC[NBoard]DT[2014-02-21 20:52:27 GMT]PB[./mEdax]PW[chris]\
        RE[?]TI[15:00]TY[8]BO[8 ---------------------------O*------*O--------------------------- *]\
        B[F5]W[F6]B[D3]W[C5]B[E6]W[F7]B[E7]W[F4];)";

    #[test]
    fn nboards_game_reads() {
        let game = parse_game(NBOARD_GAME).unwrap();
        assert_eq!(game.start, Game::new(Variant::Othello));
        let shown: Vec<String> = game.moves.iter().map(|m| m.to_string()).collect();
        assert_eq!(shown, ["f5", "f6", "d3", "c5", "e6", "f7", "e7", "f4"]);
        assert_eq!(replay(game.start, &game.moves).to_move(), Color::Black);
    }

    #[test]
    fn rows_apart_evaluations_times_and_white_first_read() {
        let text = "(;GM[Othello]BO[8 -------- -------- -------- ---O*--- ---*O--- -------- -------- -------- O]\
                    W[E3/-0.50/1.25]B[F3//3];)";
        let game = parse_game(text).unwrap();
        assert_eq!(game.start.to_move(), Color::White);
        assert_eq!(game.moves.len(), 2);
    }

    #[test]
    fn what_is_wrong_is_named() {
        assert!(parse_game("no game").unwrap_err().contains("(;"));
        assert!(parse_game("(;GM[Othello];)").unwrap_err().contains("BO"));
        assert!(parse_game("(;BO[6 ------];)").unwrap_err().contains("8x8"));
        assert!(
            parse_game("(;TY[10]BO[8];)")
                .unwrap_err()
                .contains("TY[10]")
        );
        let illegal = NBOARD_GAME.replace("B[F5]", "B[A1]");
        assert!(parse_game(&illegal).unwrap_err().contains("B[A1]"));
        let twice = NBOARD_GAME.replace("W[F6]", "B[F6]");
        assert!(parse_game(&twice).unwrap_err().contains("B[F6]"));
        assert!(parse_game("(;BO[8 ").unwrap_err().contains("]"));
    }

    #[test]
    fn a_left_out_pass_is_put_back() {
        // X's only disc, b1, is O's to take from a1; X has no move.
        let cells = format!("-*{}", "O".repeat(62));
        let text = format!("(;BO[8 {cells} *]W[A1];)");
        let game = parse_game(&text).unwrap();
        assert_eq!(
            game.moves,
            [Move::Pass, Move::Place(Square::new(0, 0).unwrap())]
        );
        assert!(replay(game.start, &game.moves).is_over());
    }

    fn random_moves(seed: u64, plies: usize) -> (Game, Vec<Move>) {
        let start = Game::new(Variant::Othello);
        let mut game = start;
        let mut moves = Vec::new();
        let mut state = seed;
        for _ in 0..plies {
            if game.is_over() {
                break;
            }
            let legal: Vec<Square> = game.legal_moves().iter().collect();
            state = flipline::game::mix64(state.wrapping_add(1));
            let mv = legal
                .get(state as usize % legal.len().max(1))
                .map_or(Move::Pass, |&s| Move::Place(s));
            game.apply(mv).unwrap();
            moves.push(mv);
        }
        (start, moves)
    }

    proptest! {
        #[test]
        fn any_text_reads_without_panicking(text in ".*") {
            let _ = parse_game(&text);
            let _ = parse_game(&format!("(;BO[8 {text}];)"));
        }

        #[test]
        fn a_written_game_reads_back(seed: u64, plies in 0usize..70) {
            let (start, moves) = random_moves(seed, plies);
            let read = parse_game(&game_text(&start, &moves)).unwrap();
            prop_assert_eq!(read.start, start);
            prop_assert_eq!(read.moves, moves);
        }
    }
}
