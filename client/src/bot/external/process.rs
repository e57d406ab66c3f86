//! An engine as a child process: its standard input to write commands to,
//! its standard output read line by line on a thread of its own so that
//! every wait for a line has a deadline, its standard error left to the
//! terminal (where an engine says what went wrong). Dropped, it is told to
//! quit, given a moment, then killed: no engine outlives its bot.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use super::EngineFailure;

/// The longest line an engine may write; a longer one is nonsense, and
/// reading it whole would let an engine fill the bot's memory.
const MAX_LINE_BYTES: usize = 64 * 1024;

/// The lines read ahead of the bot, at most.
const LINES_AHEAD: usize = 1024;

/// How long an engine told to quit has to go before it is killed.
const QUIT_GRACE: Duration = Duration::from_millis(500);

/// What the reading thread hands over.
enum Output {
    Line(String),
    TooLong,
}

/// A running engine.
pub struct EngineProcess {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<Output>,
    /// What to write before closing it (`quit`), if anything.
    quit_line: Option<&'static str>,
}

impl EngineProcess {
    /// Starts `argv` (the program, then its arguments). An error when it
    /// cannot be started at all: a missing program, say.
    pub fn spawn(
        argv: &[String],
        quit_line: Option<&'static str>,
    ) -> Result<EngineProcess, String> {
        let (program, args) = argv.split_first().ok_or("no program to start")?;
        let mut child = Command::new(program)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| format!("cannot start {program:?}: {e}"))?;
        let stdin = child.stdin.take();
        let stdout = child
            .stdout
            .take()
            .ok_or("the engine has no standard output")?;
        // Bounded: an engine that floods its output is held up, not
        // buffered without end, and then misses its deadline.
        let (tx, lines) = mpsc::sync_channel(LINES_AHEAD);
        let reader = std::thread::Builder::new().name("engine output".into());
        if let Err(e) = reader.spawn(move || read_lines(stdout, &tx)) {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("cannot read the engine's output: {e}"));
        }
        Ok(EngineProcess {
            child,
            stdin,
            lines,
            quit_line,
        })
    }

    /// Writes one line.
    pub fn send(&mut self, line: &str) -> Result<(), EngineFailure> {
        let stdin = self
            .stdin
            .as_mut()
            .ok_or_else(|| EngineFailure::Died("closed".into()))?;
        let written = stdin
            .write_all(format!("{line}\n").as_bytes())
            .and_then(|()| stdin.flush());
        written.map_err(|e| EngineFailure::Died(format!("stopped reading ({e}){}", self.status())))
    }

    /// The next line it writes, waiting until `deadline` at most.
    pub fn next_line(&mut self, deadline: Instant) -> Result<String, EngineFailure> {
        let wait = deadline.saturating_duration_since(Instant::now());
        match self.lines.recv_timeout(wait) {
            Ok(Output::Line(line)) => Ok(line),
            Ok(Output::TooLong) => Err(EngineFailure::Nonsense(format!(
                "wrote a line longer than {MAX_LINE_BYTES} bytes"
            ))),
            Err(RecvTimeoutError::Timeout) => Err(EngineFailure::TimedOut(String::new())),
            Err(RecvTimeoutError::Disconnected) => Err(EngineFailure::Died(format!(
                "closed its output{}",
                self.status()
            ))),
        }
    }

    /// `, exiting with status 3` once it has exited; nothing while it runs.
    fn status(&mut self) -> String {
        match self.child.try_wait() {
            Ok(Some(status)) => match status.code() {
                Some(code) => format!(", exiting with status {code}"),
                None => format!(", ended by {status}"),
            },
            _ => String::new(),
        }
    }
}

impl Drop for EngineProcess {
    fn drop(&mut self) {
        if let (Some(line), Some(stdin)) = (self.quit_line, self.stdin.as_mut()) {
            let _ = stdin.write_all(format!("{line}\n").as_bytes());
            let _ = stdin.flush();
        }
        // Its input closed, an engine that reads it sees the end.
        self.stdin = None;
        let deadline = Instant::now() + QUIT_GRACE;
        // Its output ends when it exits: wait for that, not for a guess.
        while let Ok(_) | Err(RecvTimeoutError::Timeout) = self
            .lines
            .recv_timeout(deadline.saturating_duration_since(Instant::now()))
        {
            if Instant::now() >= deadline {
                break;
            }
        }
        if !matches!(self.child.try_wait(), Ok(Some(_))) {
            let _ = self.child.kill();
        }
        let _ = self.child.wait();
    }
}

/// Hands the engine's lines over one by one (without their line ends) until
/// its output ends or a line is too long.
fn read_lines(stdout: impl Read, tx: &mpsc::SyncSender<Output>) {
    let mut reader = BufReader::new(stdout);
    let mut line = Vec::new();
    loop {
        line.clear();
        let limit = u64::try_from(MAX_LINE_BYTES + 1).unwrap_or(u64::MAX);
        match (&mut reader).take(limit).read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => return,
            Ok(_) if line.last() != Some(&b'\n') && line.len() > MAX_LINE_BYTES => {
                let _ = tx.send(Output::TooLong);
                return;
            }
            Ok(_) => {
                let text = String::from_utf8_lossy(&line);
                let text = text.trim_end_matches(['\n', '\r']).to_string();
                if tx.send(Output::Line(text)).is_err() {
                    return;
                }
            }
        }
    }
}
