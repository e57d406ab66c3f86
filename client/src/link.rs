//! The connection to the server: a writer shared between threads and a reader
//! thread that turns server lines into text for the person and into state.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::untrusted::escape;
use crate::view::{Style, View};

/// Where text for the person goes.
pub trait Sink: Send {
    /// Shows lines (no trailing newline).
    fn show(&mut self, lines: Vec<String>);
}

/// Plain standard output, for scripts and pipes.
pub struct StdoutSink;

impl Sink for StdoutSink {
    fn show(&mut self, lines: Vec<String>) {
        let mut out = std::io::stdout().lock();
        for line in lines {
            let _ = writeln!(out, "{line}");
        }
        let _ = out.flush();
    }
}

/// State shared by the input side and the reader thread.
pub struct Link {
    writer: Mutex<Option<TcpStream>>,
    view: Mutex<View>,
    /// Signalled whenever a server line has been taken in.
    changed: Condvar,
    /// Set when the connection is gone for good.
    pub lost: AtomicBool,
    /// Set before a deliberate close, so that the reader does not report a loss.
    pub closing: AtomicBool,
    /// The server's greeting (`HELLO flipline 1`), escaped for showing.
    pub greeting: String,
    /// Called with the view after every server line (local mode saves its game).
    pub on_update: Option<fn(&View)>,
}

impl Link {
    /// Connects to `server` and checks the greeting's protocol version.
    pub fn connect(
        server: &str,
        style: Style,
        on_update: Option<fn(&View)>,
    ) -> Result<(Arc<Link>, BufReader<TcpStream>), String> {
        let (stream, reader, greeting) = open_with_greeting(server)?;
        let link = Arc::new(Link {
            writer: Mutex::new(Some(stream)),
            view: Mutex::new(View::new(style)),
            changed: Condvar::new(),
            lost: AtomicBool::new(false),
            closing: AtomicBool::new(false),
            on_update,
            greeting,
        });
        Ok((link, reader))
    }

    /// The view, locked. A panicked holder cannot have left it half-written in a
    /// way that matters for display, so a poisoned lock is taken over.
    pub fn view(&self) -> MutexGuard<'_, View> {
        self.view.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Sends one command line.
    pub fn send(&self, line: &str) -> Result<(), String> {
        let mut writer = self.writer.lock().unwrap_or_else(|e| e.into_inner());
        let stream = writer.as_mut().ok_or("not connected")?;
        self.view().sent(line);
        stream
            .write_all(format!("{line}\n").as_bytes())
            .map_err(|e| format!("cannot send: {e}"))
    }

    /// Waits until `done` holds for the view, the connection is lost, or `limit`
    /// passes; returns whether `done` held.
    pub fn wait_until(&self, limit: Duration, done: impl Fn(&View) -> bool) -> bool {
        let deadline = Instant::now() + limit;
        let mut view = self.view();
        loop {
            if done(&view) {
                return true;
            }
            let now = Instant::now();
            if now >= deadline || self.lost.load(Ordering::Acquire) {
                return false;
            }
            view = match self.changed.wait_timeout(view, deadline - now) {
                Ok((guard, _)) => guard,
                Err(e) => e.into_inner().0,
            };
        }
    }

    /// Reads server lines until the connection ends, showing each.
    pub fn read_all(&self, reader: BufReader<TcpStream>, sink: &mut dyn Sink) {
        for line in reader.lines() {
            let Ok(line) = line else { break };
            let shown = {
                let mut view = self.view();
                let shown = view.on_line(&line);
                if let Some(hook) = self.on_update {
                    hook(&view);
                }
                shown
            };
            self.changed.notify_all();
            if !shown.is_empty() {
                sink.show(shown);
            }
        }
    }

    /// Replaces the connection after a reconnect.
    pub fn replace(&self, stream: TcpStream) {
        *self.writer.lock().unwrap_or_else(|e| e.into_inner()) = Some(stream);
        self.view().pending.clear();
    }

    /// Marks the connection lost and wakes anyone waiting.
    pub fn mark_lost(&self) {
        self.lost.store(true, Ordering::Release);
        self.changed.notify_all();
    }
}

/// Opens a connection and reads the greeting.
pub fn open(server: &str) -> Result<(TcpStream, BufReader<TcpStream>), String> {
    open_with_greeting(server).map(|(stream, reader, _)| (stream, reader))
}

/// The longest greeting read: `HELLO flipline 1` is 16 bytes, and a server
/// that sends no line feed must not grow the buffer without end.
const MAX_GREETING: u64 = 256;

/// [`open`], also returning the server's greeting line, escaped for showing
/// (only its start is checked).
pub fn open_with_greeting(
    server: &str,
) -> Result<(TcpStream, BufReader<TcpStream>, String), String> {
    let stream =
        TcpStream::connect(server).map_err(|e| format!("cannot connect to {server}: {e}"))?;
    let _ = stream.set_nodelay(true);
    let mut reader = BufReader::new(stream.try_clone().map_err(|e| e.to_string())?);
    let mut greeting = String::new();
    reader
        .by_ref()
        .take(MAX_GREETING)
        .read_line(&mut greeting)
        .map_err(|e| format!("no greeting from {server}: {e}"))?;
    let shown = escape(greeting.trim_end());
    if !greeting.starts_with("HELLO flipline ") {
        return Err(format!(
            "{server} is not a flipline server (it said '{shown}')"
        ));
    }
    Ok((stream, reader, shown))
}
