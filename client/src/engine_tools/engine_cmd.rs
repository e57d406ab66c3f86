//! `flip engine --protocol nboard|gtp`: flip's engine for Othello programs
//! that drive engines over standard input and output (NBoard, GTP
//! controllers, `flip bot --engine`). The shell only: it reads lines, hands
//! each to the protocol's state machine (engine_protocols/) with the
//! process's clock, and writes what it answers, flushed, until `quit` or the
//! end of input.

use std::io::{BufRead, Write};

use clap::Args;

use crate::engine_tools::engine_protocols::gtp::GtpEngine;
use crate::engine_tools::engine_protocols::nboard::NboardEngine;
use crate::engine_tools::engine_protocols::{Answer, Clock, Protocol, SystemClock};

#[derive(Args, Debug)]
pub struct EngineArgs {
    /// The protocol to answer on standard input and output.
    #[arg(long, value_enum)]
    protocol: Protocol,
    /// Engine level, 1 to 10: its depth and the longest it thinks a move
    /// (NBoard's `set depth` picks another; GTP's clock can only shorten it).
    #[arg(long, default_value_t = 6, value_parser = clap::value_parser!(u8).range(1..=10))]
    level: u8,
}

/// One protocol's state machine, behind one call.
trait Session {
    fn handle(&mut self, line: &str, clock: &mut dyn Clock) -> Answer;
}

impl Session for GtpEngine {
    fn handle(&mut self, line: &str, clock: &mut dyn Clock) -> Answer {
        GtpEngine::handle(self, line, clock)
    }
}

impl Session for NboardEngine {
    fn handle(&mut self, line: &str, clock: &mut dyn Clock) -> Answer {
        NboardEngine::handle(self, line, clock)
    }
}

/// Serves standard input until `quit` or its end.
pub fn run(args: &EngineArgs) -> Result<(), String> {
    let mut session: Box<dyn Session> = match args.protocol {
        Protocol::Gtp => Box::new(GtpEngine::new(args.level)),
        Protocol::Nboard => Box::new(NboardEngine::new(args.level)),
    };
    let mut clock = SystemClock::new();
    let mut input = std::io::stdin().lock();
    let mut line = Vec::new();
    loop {
        line.clear();
        match input.read_until(b'\n', &mut line) {
            Ok(0) => return Ok(()),
            Ok(_) => {}
            Err(e) => return Err(format!("cannot read standard input: {e}")),
        }
        // A line that is not UTF-8 is still a line: its bad bytes read as
        // U+FFFD, which no command contains.
        let text = String::from_utf8_lossy(&line);
        let answer = session.handle(text.trim_end_matches(['\n', '\r']), &mut clock);
        write_answer(&answer)?;
        if answer.quit {
            return Ok(());
        }
    }
}

/// Writes the answer's lines, flushed so that the other program sees them
/// now, and its notes on standard error.
fn write_answer(answer: &Answer) -> Result<(), String> {
    for note in &answer.notes {
        eprintln!("{note}");
    }
    if answer.lines.is_empty() {
        return Ok(());
    }
    let mut text = answer.lines.join("\n");
    text.push('\n');
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) => {
            // The other program went away: nothing is left to answer.
            crate::out::gone_or_ignored(&e);
            Err(format!("cannot write standard output: {e}"))
        }
    }
}
