//! `flip engine --protocol nboard`: flip's engine behind NBoard's protocol. A
//! state machine: one line from the GUI in, the lines it answers out. What
//! the protocol has no reply for (a game that does not read, an illegal
//! move) is a note for standard error, as Edax writes its; commands this
//! engine does not know are ignored, as the protocol asks.
//!
//! `set depth N` picks the level of the same depth (1 to 10; deeper asks are
//! level 10), whose time budget then bounds every search. Every command is
//! finished before the next line is read, so `pong` always comes after
//! whatever was asked before its `ping`.

use flipline::engine::{self, Choice};
use flipline::{Color, Game, Move, Variant};

use super::ggf::{NboardGame, parse_game, replay};
use super::nboard_wire::{Command, MoveItem, move_item_text, move_text, parse_command};
use super::{Answer, Clock, discs, timed};

/// The name the engine gives NBoard.
const NAME: &str = "flip";

/// What `hint`'s depth says of an exact solve, in NBoard's terms: 100 % of
/// the game searched.
const SOLVED: &str = "100%";

/// The engine's side of an NBoard session.
pub struct NboardEngine {
    start: Game,
    moves: Vec<Move>,
    game: Game,
    level: u8,
}

impl NboardEngine {
    /// A session at the start position, at `level` until `set depth`.
    pub fn new(level: u8) -> NboardEngine {
        let start = Game::new(Variant::Othello);
        NboardEngine {
            start,
            moves: Vec::new(),
            game: start,
            level,
        }
    }

    /// The answer to one line from the GUI.
    pub fn handle(&mut self, line: &str, clock: &mut dyn Clock) -> Answer {
        let Some(command) = parse_command(line) else {
            return Answer::default();
        };
        match command {
            Command::Nboard(version) => greet(&version),
            Command::SetDepth(depth) => self.set_depth(depth),
            Command::SetGame(text) => self.set_game(&text),
            // flip's engine scores a draw as nothing either way; a contempt
            // is accepted and changes nothing.
            Command::SetContempt(_) => Answer::default(),
            Command::SetOther(rest) => Answer::note(format!("{NAME}: ignored: set {rest}")),
            Command::Move(item) => self.play(item),
            Command::Hint(count) => self.hint(count.unwrap_or(1).max(1), clock),
            Command::Go => self.go(clock),
            Command::Ping(n) => Answer::lines(vec![format!("pong {n}")]),
            Command::Learn => learn(),
            Command::Analyze => self.analyze(clock),
            Command::Quit => Answer {
                quit: true,
                ..Answer::default()
            },
            Command::Unknown(text) => Answer::note(format!("{NAME}: ignored: {text}")),
        }
    }

    fn set_depth(&mut self, depth: Option<i64>) -> Answer {
        match depth {
            Some(depth) => {
                let clamped =
                    depth.clamp(i64::from(engine::MIN_LEVEL), i64::from(engine::MAX_LEVEL));
                self.level = u8::try_from(clamped).unwrap_or(engine::MAX_LEVEL);
                Answer::default()
            }
            None => Answer::note(format!("{NAME}: set depth needs a number")),
        }
    }

    fn set_game(&mut self, text: &str) -> Answer {
        match parse_game(text) {
            Ok(NboardGame { start, moves }) => {
                self.game = replay(start, &moves);
                (self.start, self.moves) = (start, moves);
                Answer::default()
            }
            Err(e) => Answer::note(format!("{NAME}: set game: {e}; the position is unchanged")),
        }
    }

    fn play(&mut self, item: Option<MoveItem>) -> Answer {
        let Some(MoveItem { mv, .. }) = item else {
            return Answer::note(format!("{NAME}: move: that is no move"));
        };
        let mut next = self.game;
        let mut played = Vec::new();
        if mv != Move::Pass && next.must_pass() {
            // NBoard sends passes; a GUI that leaves one out means it.
            played.push(Move::Pass);
            let _ = next.apply(Move::Pass);
        }
        match next.apply(mv) {
            Ok(_) => {
                played.push(mv);
                self.moves.extend(played);
                self.game = next;
                Answer::default()
            }
            Err(e) => Answer::note(format!("{NAME}: move {}: {e}", move_text(mv))),
        }
    }

    fn hint(&mut self, count: u32, clock: &mut dyn Clock) -> Answer {
        let budget = engine::level(self.level).time_budget();
        let game = self.game;
        let (ranked, spent) = timed(clock, budget, |stop| {
            engine::rank_moves(&game, self.level, stop)
        });
        let mut lines = vec![format!("status {NAME} is thinking")];
        let shown = usize::try_from(count).unwrap_or(usize::MAX);
        lines.extend(ranked.iter().take(shown).map(search_line));
        let nodes = ranked.iter().map(|c| c.nodes).max().unwrap_or(0);
        lines.push(format!("nodestats {nodes} {:.2}", spent.as_secs_f64()));
        lines.push("status".to_string());
        Answer::lines(lines)
    }

    fn go(&mut self, clock: &mut dyn Clock) -> Answer {
        let budget = engine::level(self.level).time_budget();
        let game = self.game;
        let (choice, spent) = timed(clock, budget, |stop| {
            engine::choose(&game, self.level, 0, stop)
        });
        let Some(choice) = choice else {
            return Answer::lines(vec![format!("status the game is over: {NAME} has no move")]);
        };
        let item = MoveItem {
            mv: choice.mv,
            eval: Some(discs(&choice)),
            seconds: Some(spent.as_secs_f64()),
        };
        Answer::lines(vec![
            format!("status {NAME} is thinking"),
            format!("nodestats {} {:.2}", choice.nodes, spent.as_secs_f64()),
            format!("=== {}", move_item_text(&item)),
            "status".to_string(),
        ])
    }

    /// `analysis <moves played> <eval>` for every position of the game, from
    /// the last back to the start, as NBoard's engines send them. The
    /// evaluation is black's, in discs: NBoard draws it on its score graph
    /// beside black's evaluations (white's turned round), and its own
    /// engines send black's, though the protocol's comments speak of the
    /// side to move.
    fn analyze(&mut self, clock: &mut dyn Clock) -> Answer {
        let budget = engine::level(self.level).time_budget();
        let mut positions = vec![self.start];
        let mut game = self.start;
        for &mv in &self.moves {
            let _ = game.apply(mv);
            positions.push(game);
        }
        let mut lines = vec![format!("status {NAME} is analyzing")];
        let (mut nodes, mut seconds) = (0u64, 0.0f64);
        for (ply, position) in positions.iter().enumerate().rev() {
            let (eval, spent) = timed(clock, budget, |stop| black_eval(position, self.level, stop));
            nodes = nodes.saturating_add(eval.1);
            seconds += spent.as_secs_f64();
            lines.push(format!("analysis {ply} {:.2}", eval.0));
        }
        lines.push(format!("nodestats {nodes} {seconds:.2}"));
        lines.push("status".to_string());
        Answer::lines(lines)
    }
}

/// The answer to `nboard <version>`: the engine's name. Versions 1 and 2
/// differ in nothing this engine does; another is noted and served alike.
fn greet(version: &str) -> Answer {
    let mut answer = Answer::lines(vec![format!("set myname {NAME}")]);
    if version != "1" && version != "2" {
        answer.notes.push(format!(
            "{NAME}: NBoard protocol version {version:?} is not 1 or 2; answering as for 2"
        ));
    }
    answer
}

/// `learn`: flip's engine keeps no opening book, so there is nothing to
/// learn into. `learned` is the protocol's acknowledgement; the status line
/// after it tells the person why nothing changed.
fn learn() -> Answer {
    Answer::lines(vec![
        "learned".to_string(),
        format!("status {NAME} keeps no book: the game was not learned"),
    ])
}

/// `search <move> <eval> 0 <depth>`: one hint.
fn search_line(choice: &Choice) -> String {
    let depth = if choice.exact {
        SOLVED.to_string()
    } else {
        choice.depth.to_string()
    };
    format!(
        "search {} {:.2} 0 {depth}",
        move_text(choice.mv),
        discs(choice)
    )
}

/// A position's value for black, in discs, with the nodes it took: the
/// final margin of a finished game, else the engine's score at `level`.
fn black_eval(position: &Game, level: u8, stop: &mut dyn FnMut() -> bool) -> (f64, u64) {
    if position.is_over() {
        let score = position.score();
        return (f64::from(score.black) - f64::from(score.white), 0);
    }
    match engine::choose(position, level, 0, stop) {
        Some(choice) if position.to_move() == Color::White => (-discs(&choice), choice.nodes),
        Some(choice) => (discs(&choice), choice.nodes),
        None => (0.0, 0),
    }
}
