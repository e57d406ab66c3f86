//! The two text protocols Othello programs talk to each other in, NBoard's and
//! GTP (the Go Text Protocol, as Edax and Egaroucid speak it for Othello), on
//! both ends: `flip engine` answers them with flip's own engine, and `flip bot
//! --engine` drives another program through them.
//!
//! Like Edax's `nboard.c` and `gtp.c`, the front ends only translate: each is
//! a state machine from one input line to the lines it answers (pure; the
//! time the engine may think comes from a [`Clock`] it is handed), and the
//! loop that reads standard input and writes standard output is a thin shell
//! (`engine_cmd.rs`).
//!
//! # Layout
//! - this file: [`Protocol`], [`Answer`], [`Clock`] and the helpers both
//!   engines share (a timed search, scores in discs).
//! - `gtp_wire`: GTP's lines: commands (with their optional ids) and the
//!   `=`/`?` responses, written and read.
//! - `gtp`: the GTP engine.
//! - `nboard_wire`: NBoard's lines: the GUI's commands and the engine's
//!   replies (`=== F5/1.00/0.5`, `search ...`), written and read.
//! - `nboard`: the NBoard engine.
//! - `ggf`: GGF games (`set game`), read and written.

pub mod ggf;
pub mod gtp;
pub mod gtp_wire;
pub mod nboard;
pub mod nboard_wire;

#[cfg(test)]
mod transcripts;

use std::time::Duration;

use flipline::engine::{Choice, WIN_FACTOR};

/// Which protocol an engine speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Protocol {
    /// NBoard's protocol (Edax `-nboard`, NBoard's engines).
    Nboard,
    /// The Go Text Protocol as Othello engines speak it (Edax `-gtp`,
    /// Egaroucid `-gtp`).
    Gtp,
}

/// What one input line is answered with.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Answer {
    /// Lines for the other program (standard output), in order.
    pub lines: Vec<String>,
    /// Lines for the person watching (standard error): what NBoard's
    /// protocol has no reply for, such as a game that does not read.
    pub notes: Vec<String>,
    /// The session is over (`quit`).
    pub quit: bool,
}

impl Answer {
    /// An answer of these lines.
    pub fn lines(lines: Vec<String>) -> Answer {
        Answer {
            lines,
            ..Answer::default()
        }
    }

    /// An answer with only a note for the person watching.
    pub fn note(note: String) -> Answer {
        Answer {
            notes: vec![note],
            ..Answer::default()
        }
    }
}

/// Where an engine's sense of time comes from: the shell's monotonic clock,
/// or one the tests advance themselves, so that a state machine stays pure.
pub trait Clock {
    /// The time since some fixed moment.
    fn now(&mut self) -> Duration;
}

/// The clock of a running process.
pub struct SystemClock(std::time::Instant);

impl SystemClock {
    /// A clock that starts now.
    pub fn new() -> SystemClock {
        SystemClock(std::time::Instant::now())
    }
}

impl Clock for SystemClock {
    fn now(&mut self) -> Duration {
        self.0.elapsed()
    }
}

/// Runs `search` with a `stop` that turns true once `budget` has passed on
/// `clock`, and returns what it found with the time it took.
pub fn timed<T>(
    clock: &mut dyn Clock,
    budget: Duration,
    search: impl FnOnce(&mut dyn FnMut() -> bool) -> T,
) -> (T, Duration) {
    let start = clock.now();
    let deadline = start.checked_add(budget).unwrap_or(Duration::MAX);
    let found = {
        let mut stop = || clock.now() >= deadline;
        search(&mut stop)
    };
    (found, clock.now().saturating_sub(start))
}

/// An engine score in discs for the side to move, as both protocols give
/// scores: a proven one is the final margin, a heuristic one the engine's
/// estimate of it (the 8x8 engine scores in hundredths of a disc).
pub fn discs(choice: &Choice) -> f64 {
    if choice.exact {
        f64::from(choice.score / WIN_FACTOR)
    } else {
        f64::from(choice.score) / 100.0
    }
}
