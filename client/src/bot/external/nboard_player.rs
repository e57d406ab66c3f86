//! The controller's side of NBoard's protocol, as the NBoard GUI speaks it
//! to an engine: `nboard 1` once, then for each move `set depth` (from the
//! move's share of the clock: the protocol has no clock), `set game` with
//! the whole game in GGF, `ping` and `go`. The answer is the `=== <move>`
//! after the matching `pong` (whatever comes before belongs to earlier
//! commands); `status`, `nodestats` and search lines are passed over.

use std::time::Instant;

use flipline::Move;

use super::budget::nboard_depth;
use super::process::EngineProcess;
use super::{EngineFailure, STARTUP, Turn};
use crate::engine_tools::engine_protocols::ggf::game_text;
use crate::engine_tools::engine_protocols::nboard_wire::{Reply, parse_reply};

/// A running NBoard engine.
pub struct NboardPlayer {
    process: EngineProcess,
    ping: u64,
    depth: Option<u32>,
}

impl NboardPlayer {
    /// Starts the engine and opens the protocol. Edax reads version 1 and
    /// complains of any other; the two differ in nothing asked here.
    pub fn start(argv: &[String]) -> Result<NboardPlayer, EngineFailure> {
        let mut process =
            EngineProcess::spawn(argv, Some("quit")).map_err(EngineFailure::CannotStart)?;
        process.send("nboard 1")?;
        Ok(NboardPlayer {
            process,
            ping: 0,
            depth: None,
        })
    }

    /// The engine's move for the side to move after `turn`'s moves.
    pub fn choose(&mut self, turn: &Turn<'_>) -> Result<Move, EngineFailure> {
        let depth = nboard_depth(turn.budget.share);
        if self.depth != Some(depth) {
            self.process.send(&format!("set depth {depth}"))?;
            self.depth = Some(depth);
        }
        self.process
            .send(&format!("set game {}", game_text(&turn.start, turn.moves)))?;
        self.ping += 1;
        let ping = self.ping.to_string();
        self.process.send(&format!("ping {ping}"))?;
        self.process.send("go")?;
        // The first pong may wait for the engine to load.
        let synced = if ping == "1" {
            STARTUP
        } else {
            turn.budget.wait
        };
        self.until_pong(&ping, Instant::now() + synced)?;
        self.until_move(Instant::now() + turn.budget.wait)
    }

    fn until_pong(&mut self, ping: &str, deadline: Instant) -> Result<(), EngineFailure> {
        loop {
            let line = self
                .process
                .next_line(deadline)
                .map_err(|e| e.during("ping"))?;
            if parse_reply(&line) == Reply::Pong(ping.to_string()) {
                return Ok(());
            }
        }
    }

    fn until_move(&mut self, deadline: Instant) -> Result<Move, EngineFailure> {
        loop {
            let line = self
                .process
                .next_line(deadline)
                .map_err(|e| e.during("go"))?;
            match parse_reply(&line) {
                Reply::Move(Some(item)) => return Ok(item.mv),
                Reply::Move(None) => return Err(EngineFailure::Nonsense(format!("go: {line}"))),
                Reply::Pong(_) | Reply::Other => {}
            }
        }
    }
}
