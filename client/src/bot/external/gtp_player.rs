//! The controller's side of GTP: an external engine told the game with
//! `clear_board` and a `play` for every move so far (passes included), its
//! clock with `time_settings` and `time_left`, then asked `genmove`. Told
//! the whole game each turn, the engine cannot drift from the server's
//! board. Commands go without ids (Edax puts a space between the mark and
//! an echoed id, which GTP does not), so answers are matched by order.

use std::time::Instant;

use flipline::{Game, Move, Variant};

use super::process::EngineProcess;
use super::{EngineFailure, STARTUP, Turn, setup_deadline};
use crate::engine_tools::engine_protocols::gtp_wire::{
    Response, color_word, parse_response, parse_vertex, request_line, vertex,
};

/// A running GTP engine.
pub struct GtpPlayer {
    process: EngineProcess,
    /// The `time_settings` last given, not to repeat them (GTP resets the
    /// clocks on them).
    settings: Option<(u64, u64, u64)>,
}

impl GtpPlayer {
    /// Starts the engine and checks that it plays on an 8x8 board.
    pub fn start(argv: &[String]) -> Result<GtpPlayer, EngineFailure> {
        let process =
            EngineProcess::spawn(argv, Some("quit")).map_err(EngineFailure::CannotStart)?;
        let mut player = GtpPlayer {
            process,
            settings: None,
        };
        player.must(&request_line("boardsize", &["8"]), Instant::now() + STARTUP)?;
        Ok(player)
    }

    /// The engine's move for the side to move after `turn`'s moves.
    pub fn choose(&mut self, turn: &Turn<'_>) -> Result<Move, EngineFailure> {
        if turn.start != Game::new(Variant::Othello) {
            return Err(EngineFailure::Refused(
                "GTP starts every game from Othello's start, black first".into(),
            ));
        }
        let time = turn.budget.gtp;
        if self.settings != Some(time.settings) {
            let (main, byo_yomi, stones) = time.settings;
            let line = format!("time_settings {main} {byo_yomi} {stones}");
            // Optional in GTP: an engine without a clock (Egaroucid's) says so.
            self.ask(&line, setup_deadline())?;
            self.settings = Some(time.settings);
        }
        self.must("clear_board", setup_deadline())?;
        let mut game = turn.start;
        for &mv in turn.moves {
            let line = request_line("play", &[color_word(game.to_move()), &vertex(mv)]);
            self.must(&line, setup_deadline())?;
            let _ = game.apply(mv);
        }
        let color = color_word(turn.side);
        let (seconds, stones) = time.left;
        self.ask(
            &format!("time_left {color} {seconds} {stones}"),
            setup_deadline(),
        )?;
        let line = request_line("genmove", &[color]);
        let answer = self.ask(&line, Instant::now() + turn.budget.wait)?;
        if !answer.success {
            return Err(EngineFailure::Refused(format!("{line}: {}", answer.text)));
        }
        let word = answer.text.split_whitespace().next().unwrap_or("");
        if word.eq_ignore_ascii_case("resign") {
            return Err(EngineFailure::Resigned);
        }
        parse_vertex(word)
            .ok_or_else(|| EngineFailure::Nonsense(format!("{line}: {}", answer.text)))
    }

    /// Sends a command whose failure means the engine cannot go on.
    fn must(&mut self, line: &str, deadline: Instant) -> Result<(), EngineFailure> {
        let answer = self.ask(line, deadline)?;
        if answer.success {
            Ok(())
        } else {
            Err(EngineFailure::Refused(format!("{line}: {}", answer.text)))
        }
    }

    /// Sends a command and reads its response: the lines from the first
    /// that starts with `=` or `?` (anything before is passed over) to the
    /// empty line that ends it.
    fn ask(&mut self, line: &str, deadline: Instant) -> Result<Response, EngineFailure> {
        self.process.send(line).map_err(|e| e.during(line))?;
        let mut lines = Vec::new();
        loop {
            let next = self
                .process
                .next_line(deadline)
                .map_err(|e| e.during(line))?;
            if next.is_empty() && !lines.is_empty() {
                break;
            }
            if !lines.is_empty() || next.starts_with(['=', '?']) {
                lines.push(next);
            }
        }
        parse_response(&lines).ok_or_else(|| EngineFailure::Nonsense(format!("{line}: {lines:?}")))
    }
}
