//! Reviewing a finished game (`load FILE` of one): a position of the game,
//! stepped through move by move without the server, which would refuse a
//! new game from moves that end it. Pure: the review words parsed, the ply
//! moved within the game's bounds, the position and the move list as text.

use flipline::notation::replay_with_passes;
use flipline::{Game, Move, Outcome, Variant};

use crate::archive::saved_game::SavedGame;
use crate::play::render::{BoardView, COLUMNS, board, move_list_marked};

/// What a review word asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Command {
    /// Show another position.
    Step(Step),
    /// The position shown again.
    Board,
    /// The numbered move list, the current move marked.
    Moves,
    /// The engine's best move in the position shown.
    Hint,
    /// A new game from the position shown, with these `NEW` options (the
    /// ones given to `load` when empty).
    Play(String),
    /// Stop reviewing.
    Done,
}

/// Where to go in the game.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// One move on.
    Next,
    /// One move back.
    Prev,
    /// The start position.
    First,
    /// The final position.
    Last,
    /// The position after this many moves.
    Goto(usize),
}

/// The words [`Command::parse`] knows, for completion.
pub const WORDS: [&str; 12] = [
    "next", "prev", "goto", "first", "last", "moves", "board", "hint", "play", "done", "n", "p",
];

impl Command {
    /// The review command `line` asks for; `None` when it is no review
    /// word (the line is then a command as usual, and ends the review);
    /// an error for a review word used wrongly (`goto x`).
    pub fn parse(line: &str) -> Option<Result<Command, String>> {
        let line = line.trim();
        let (word, rest) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
        let rest = rest.trim();
        let bare = |command: Command| {
            Some(if rest.is_empty() {
                Ok(command)
            } else {
                Err(format!(
                    "{} takes nothing after it",
                    word.to_ascii_lowercase()
                ))
            })
        };
        match word.to_ascii_lowercase().as_str() {
            "next" | "n" => bare(Command::Step(Step::Next)),
            "prev" | "p" => bare(Command::Step(Step::Prev)),
            "first" => bare(Command::Step(Step::First)),
            "last" => bare(Command::Step(Step::Last)),
            "board" => bare(Command::Board),
            "moves" => bare(Command::Moves),
            "hint" => bare(Command::Hint),
            "done" => bare(Command::Done),
            "play" => Some(Ok(Command::Play(rest.to_string()))),
            "goto" => Some(
                rest.parse()
                    .map(|n| Command::Step(Step::Goto(n)))
                    .map_err(|_| {
                        "goto takes a move number: goto 0 is the start, goto 10 the position after \
                 move 10"
                            .to_string()
                    }),
            ),
            _ => None,
        }
    }
}

/// A finished game under review: its moves, the position after each, and
/// the ply shown (`0..=len`, 0 the start).
#[derive(Clone, Debug)]
pub struct Review {
    variant: Variant,
    start: Game,
    /// Each move with the position it leads to.
    plies: Vec<(Move, Game)>,
    ply: usize,
    /// The `NEW` options given to `load`, for `play`.
    options: String,
}

impl Review {
    /// A review of `game` at its start, when its moves end it; `None` when
    /// they do not (a new game can start from them) or do not replay.
    pub fn of_finished(game: &SavedGame, options: &str) -> Option<Review> {
        let start = Game::new(game.variant);
        // Passes a writer left out are put back, as the server would.
        let (_, moves) = replay_with_passes(game.variant, &game.moves).ok()?;
        let mut position = start;
        let mut plies = Vec::with_capacity(moves.len());
        for mv in moves {
            position.apply(mv).ok()?;
            plies.push((mv, position));
        }
        position.is_over().then(|| Review {
            variant: game.variant,
            start,
            plies,
            ply: 0,
            options: options.to_string(),
        })
    }

    /// The number of moves (passes included).
    pub fn len(&self) -> usize {
        self.plies.len()
    }

    /// The moves played before the position shown.
    pub fn ply(&self) -> usize {
        self.ply
    }

    /// The position shown.
    pub fn position(&self) -> &Game {
        self.ply
            .checked_sub(1)
            .and_then(|i| self.plies.get(i))
            .map_or(&self.start, |(_, game)| game)
    }

    /// The move that led to the position shown (none at the start).
    fn last_move(&self) -> Option<Move> {
        let i = self.ply.checked_sub(1)?;
        self.plies.get(i).map(|&(mv, _)| mv)
    }

    fn moves(&self) -> Vec<Move> {
        self.plies.iter().map(|&(mv, _)| mv).collect()
    }

    /// Goes where `step` says; past either end nothing moves and the error
    /// says how far the game goes.
    pub fn step(&mut self, step: Step) -> Result<(), String> {
        let len = self.len();
        self.ply = match step {
            Step::Next if self.ply >= len => {
                return Err(format!(
                    "that is the end of the game (move {len}): prev, first or goto N go back"
                ));
            }
            Step::Prev if self.ply == 0 => {
                return Err("that is the start of the game: next, last or goto N go on".into());
            }
            Step::Next => self.ply + 1,
            Step::Prev => self.ply - 1,
            Step::First => 0,
            Step::Last => len,
            Step::Goto(n) if n > len => {
                return Err(format!(
                    "no move {n}: the game has {len} moves (goto 0 to goto {len})"
                ));
            }
            Step::Goto(n) => n,
        };
        Ok(())
    }

    /// `play [options]`: the `NEW` that starts a game from the position
    /// shown, with `options` (else those given to `load`); refused where
    /// the game is over, which the server would refuse too.
    pub fn play_command(&self, options: &str) -> Result<String, String> {
        if self.position().is_over() {
            return Err(format!(
                "the game is over after move {}: go back (prev, goto N) to play on from there",
                self.ply
            ));
        }
        let options = if options.is_empty() {
            &self.options
        } else {
            options
        };
        let moves = self.plies.iter().take(self.ply).map(|&(mv, _)| mv);
        let game = SavedGame {
            variant: self.variant,
            moves: moves.collect(),
        };
        Ok(game.new_command(options))
    }

    /// What `load` says as the review opens.
    pub fn opening_lines(&self, color: bool) -> Vec<String> {
        let mut lines = vec![format!(
            "the game ended after {} moves: reviewing it (next, prev, goto N, play, done)",
            self.len()
        )];
        lines.extend(self.lines(color));
        lines
    }

    /// The position shown: where it is in the game, the board, the discs
    /// and who is to move, the moves (the one just played marked), the result.
    pub fn lines(&self, color: bool) -> Vec<String> {
        let game = self.position();
        let last = match self.last_move() {
            Some(Move::Place(square)) => Some(square),
            _ => None,
        };
        let view = BoardView {
            last,
            show_legal: !game.is_over(),
            color,
        };
        let mut lines = vec![self.heading()];
        lines.extend(board(game, &view));
        lines.push(status_line(game));
        lines.extend(self.move_lines());
        lines.push(format!("result: {}", self.result_words()));
        lines
    }

    /// `moves`: the numbered list, the move that led to the position shown
    /// marked `*`.
    pub fn move_lines(&self) -> Vec<String> {
        move_list_marked(&self.moves(), self.ply.checked_sub(1))
    }

    /// `review othello: move 12 of 60, O f4` (or `the start`).
    fn heading(&self) -> String {
        let len = self.len();
        let at = match self.last_move() {
            None => format!("the start, {len} moves"),
            Some(mv) => {
                let mover = self.mover_of_last();
                format!("move {} of {len}, {} {mv}", self.ply, mover.letter())
            }
        };
        format!("review {}: {at}", self.variant)
    }

    /// Who played the move that led to the position shown.
    fn mover_of_last(&self) -> flipline::Color {
        let before = self
            .ply
            .checked_sub(2)
            .and_then(|i| self.plies.get(i))
            .map_or(&self.start, |(_, game)| game);
        before.to_move()
    }

    /// The final result, as the server's `OVER` line reads.
    fn result_words(&self) -> String {
        let last = self.plies.last().map_or(&self.start, |(_, game)| game);
        let Outcome {
            winner,
            black,
            white,
        } = last.score();
        let who = match winner {
            Some(side) => format!("{} wins", side.letter()),
            None => "draw".to_string(),
        };
        if self.variant == Variant::TicTacToe {
            who
        } else {
            format!("{who} {black}-{white}")
        }
    }
}

/// `X 20  O 14  X to move` (or `game over`), within [`COLUMNS`].
fn status_line(game: &Game) -> String {
    let counts = game.counts();
    let turn = if game.is_over() {
        "game over".to_string()
    } else {
        format!("{} to move", game.to_move())
    };
    let line = format!("X {}  O {}  {turn}", counts.black, counts.white);
    line.chars().take(COLUMNS).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use flipline::notation::{parse_transcript, replay};
    use proptest::prelude::*;

    /// One of the shortest Othello games: black wipes white out in nine
    /// moves.
    const WIPEOUT: &str = "e6f4e3f6g5d6e7f5c5";

    fn review_of(variant: Variant, moves: &str, options: &str) -> Option<Review> {
        let moves = parse_transcript(moves).ok()?;
        Review::of_finished(&SavedGame { variant, moves }, options)
    }

    fn wipeout() -> Review {
        review_of(Variant::Othello, WIPEOUT, "as X vs bot:3")
            .unwrap_or_else(|| panic!("{WIPEOUT} does not end the game"))
    }

    /// A game played to its end by moves picked from `picks`, one a ply.
    fn random_finished_game(variant: Variant, picks: &[usize]) -> SavedGame {
        let mut game = Game::new(variant);
        let mut moves = Vec::new();
        let mut picks = picks.iter().cycle();
        while !game.is_over() {
            let legal: Vec<Move> = game.legal_moves().iter().map(Move::Place).collect();
            let pick = picks.next().copied().unwrap_or(0);
            let mv = legal
                .get(pick % legal.len().max(1))
                .copied()
                .unwrap_or(Move::Pass);
            game.apply(mv).unwrap_or_else(|e| panic!("{mv}: {e}"));
            moves.push(mv);
        }
        SavedGame { variant, moves }
    }

    #[test]
    fn only_a_game_its_moves_end_is_reviewed() {
        assert!(review_of(Variant::Othello, "f5d6c3", "").is_none());
        assert!(review_of(Variant::Othello, "", "").is_none());
        assert!(review_of(Variant::Othello, "f5f5", "").is_none());
        let review = wipeout();
        assert_eq!((review.ply(), review.len()), (0, 9));
        assert_eq!(review.position(), &Game::new(Variant::Othello));
        let tictactoe = review_of(Variant::TicTacToe, "a1b1a2b2a3", "");
        assert_eq!(
            tictactoe.map(|r| r.result_words()),
            Some("X wins".to_string())
        );
    }

    #[test]
    fn stepping_stops_at_both_ends_with_a_reason() {
        let mut review = wipeout();
        let prev = review.step(Step::Prev).unwrap_err();
        assert!(prev.contains("start"), "{prev}");
        assert_eq!(review.step(Step::Next), Ok(()));
        assert_eq!(review.step(Step::Goto(9)), Ok(()));
        assert!(
            review
                .step(Step::Next)
                .unwrap_err()
                .contains("end of the game (move 9)")
        );
        assert_eq!(
            review.step(Step::Goto(99)),
            Err("no move 99: the game has 9 moves (goto 0 to goto 9)".to_string())
        );
        assert_eq!(review.ply(), 9);
        assert_eq!(review.step(Step::First), Ok(()));
        assert_eq!(review.ply(), 0);
        assert_eq!(review.step(Step::Last), Ok(()));
        assert_eq!(review.ply(), 9);
    }

    #[test]
    fn review_words_parse_and_others_are_left_alone() {
        let parse = |line: &str| Command::parse(line);
        assert_eq!(parse(" N "), Some(Ok(Command::Step(Step::Next))));
        assert_eq!(parse("prev"), Some(Ok(Command::Step(Step::Prev))));
        assert_eq!(parse("GOTO 10"), Some(Ok(Command::Step(Step::Goto(10)))));
        assert_eq!(parse("play"), Some(Ok(Command::Play(String::new()))));
        assert_eq!(
            parse("play vs bot:2"),
            Some(Ok(Command::Play("vs bot:2".into())))
        );
        assert!(matches!(parse("goto"), Some(Err(e)) if e.contains("move number")));
        assert!(matches!(parse("goto -1"), Some(Err(_))));
        assert!(matches!(
            parse("goto 99999999999999999999999"),
            Some(Err(_))
        ));
        assert!(matches!(parse("next 3"), Some(Err(e)) if e == "next takes nothing after it"));
        assert_eq!(parse("d3"), None);
        assert_eq!(parse("who"), None);
        assert_eq!(parse(""), None);
        for word in WORDS {
            assert!(parse(word).is_some(), "{word}");
        }
    }

    #[test]
    fn a_position_shows_where_it_is_the_board_the_moves_and_the_result() {
        let mut review = wipeout();
        assert_eq!(review.step(Step::Goto(2)), Ok(()));
        let lines = review.lines(false);
        assert_eq!(
            lines.first().map(String::as_str),
            Some("review othello: move 2 of 9, O f4")
        );
        assert!(
            lines.contains(&"  4  .  .  .  O  O [O] .  .  4".to_string()),
            "{lines:#?}"
        );
        assert!(
            lines.contains(&"X 3  O 3  X to move".to_string()),
            "{lines:#?}"
        );
        assert!(lines.contains(&"1. e6 f4*  2. e3 f6  3. g5 d6  4. e7 f5  5. c5".to_string()));
        assert_eq!(
            lines.last().map(String::as_str),
            Some("result: X wins 64-0")
        );
        assert_eq!(review.step(Step::First), Ok(()));
        let start = review.lines(false);
        assert_eq!(
            start.first().map(String::as_str),
            Some("review othello: the start, 9 moves")
        );
        assert!(review.move_lines().concat().find('*').is_none());
        assert_eq!(review.step(Step::Last), Ok(()));
        assert!(
            review
                .lines(false)
                .contains(&"X 13  O 0  game over".to_string())
        );
    }

    #[test]
    fn play_starts_from_the_position_shown_but_not_from_the_end() {
        let mut review = wipeout();
        assert_eq!(
            review.play_command(""),
            Ok("NEW othello as X vs bot:3".to_string())
        );
        assert_eq!(review.step(Step::Goto(3)), Ok(()));
        assert_eq!(
            review.play_command(""),
            Ok("NEW othello as X vs bot:3 from e6f4e3".to_string())
        );
        assert_eq!(
            review.play_command("hotseat"),
            Ok("NEW othello hotseat from e6f4e3".to_string())
        );
        assert_eq!(review.step(Step::Last), Ok(()));
        assert!(
            review
                .play_command("")
                .unwrap_err()
                .contains("over after move 9")
        );
    }

    fn step() -> impl Strategy<Value = Step> {
        prop_oneof![
            Just(Step::Next),
            Just(Step::Prev),
            Just(Step::First),
            Just(Step::Last),
            (0usize..140).prop_map(Step::Goto),
        ]
    }

    proptest! {
        #[test]
        fn any_steps_keep_the_ply_in_the_game_and_show_its_replay(
            variant in proptest::sample::select(Variant::ALL.to_vec()),
            picks in proptest::collection::vec(0usize..64, 1..40),
            steps in proptest::collection::vec(step(), 0..40),
        ) {
            let game = random_finished_game(variant, &picks);
            let review = Review::of_finished(&game, "");
            prop_assert!(review.is_some());
            let Some(mut review) = review else { return Ok(()) };
            prop_assert_eq!(review.len(), game.moves.len());
            for step in steps {
                let before = review.ply();
                let moved = review.step(step);
                prop_assert!(review.ply() <= review.len());
                if moved.is_err() {
                    prop_assert_eq!(review.ply(), before);
                }
                let shown = game.moves.get(..review.ply()).unwrap_or_default();
                prop_assert_eq!(Ok(*review.position()), replay(variant, shown));
                let lines = review.lines(false);
                prop_assert!(lines.iter().all(|l| l.len() <= COLUMNS), "{:#?}", lines);
                prop_assert_eq!(review.play_command("").is_ok(), !review.position().is_over());
            }
        }
    }
}
