//! The terminal's mode, taken over by the interactive client and put back on
//! every way out: the end of a session, a lost connection, SIGTERM, SIGHUP,
//! SIGINT, an error, a panic. Through `nix`'s safe termios and signal calls.
//!
//! Between prompts the terminal neither echoes nor edits lines: what is typed
//! while flip is busy (a paste, type-ahead) waits unseen in the terminal's
//! queue, and the next prompt takes it, whole lines as separate commands.

use std::io::Write;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use nix::sys::signal::{SigSet, Signal};
use nix::sys::termios::{self, LocalFlags, SetArg, Termios};

/// The mode the terminal was in when flip took it over.
static SAVED: Mutex<Option<Termios>> = Mutex::new(None);

/// Set by the first thread that leaves; the others wait for the exit.
static LEAVING: AtomicBool = AtomicBool::new(false);

/// How the process ends, for README's table of exit statuses.
pub mod status {
    /// A command failed (in a pipe), or a subcommand did.
    pub const FAILED: i32 = 1;
    /// The connection was refused or lost.
    pub const CONNECTION: i32 = 2;
    /// A panic: a bug of flip's.
    pub const PANIC: i32 = 101;
}

fn saved() -> std::sync::MutexGuard<'static, Option<Termios>> {
    SAVED.lock().unwrap_or_else(|e| e.into_inner())
}

/// Blocks SIGTERM, SIGHUP, SIGINT and SIGQUIT in this thread, and so in every
/// thread started after (call it first), and starts the one thread that
/// waits for them: it puts the terminal back and ends the process with
/// 128 + the signal's number, saying why. Also sets a panic hook that puts
/// the terminal back before the panic's message, and ends the process (a
/// reader thread gone would leave flip deaf).
pub fn handle_signals_and_panics() {
    let mut set = SigSet::empty();
    for signal in [
        Signal::SIGTERM,
        Signal::SIGHUP,
        Signal::SIGINT,
        Signal::SIGQUIT,
    ] {
        set.add(signal);
    }
    if set.thread_block().is_ok() {
        std::thread::spawn(move || {
            if let Ok(signal) = set.wait() {
                let reason = match signal {
                    Signal::SIGHUP => "the terminal hung up",
                    Signal::SIGINT => "interrupted",
                    _ => "stopped by a signal",
                };
                leave(128 + signal as i32, &format!("flip: {reason} ({signal})"));
            }
        });
    }
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        restore();
        default(info);
        std::process::exit(status::PANIC);
    }));
}

/// Keeps the terminal's mode (to put back) and turns echo, line editing and
/// the signal keys off between prompts: Ctrl-C typed while flip is busy then
/// reaches the next prompt, which clears the line, instead of killing flip.
pub fn take_over() -> Result<(), String> {
    let stdin = std::io::stdin();
    let mode = termios::tcgetattr(&stdin).map_err(|e| format!("cannot read the terminal: {e}"))?;
    let mut quiet = mode.clone();
    quiet.local_flags &= !(LocalFlags::ECHO | LocalFlags::ICANON | LocalFlags::ISIG);
    *saved() = Some(mode);
    termios::tcsetattr(&stdin, SetArg::TCSADRAIN, &quiet)
        .map_err(|e| format!("cannot set the terminal: {e}"))
}

/// Puts the terminal back as it was taken over; whether there was one.
pub fn restore() -> bool {
    let Some(mode) = saved().clone() else {
        return false;
    };
    let _ = termios::tcsetattr(std::io::stdin(), SetArg::TCSADRAIN, &mode);
    true
}

/// A leave asked of the prompt's thread: the status and the reason.
static ASKED: Mutex<Option<(i32, String)>> = Mutex::new(None);

/// How long a leave waits for the prompt's thread before leaving itself
/// (that thread is busy, not at the prompt).
const PROMPT_WAIT: Duration = Duration::from_secs(2);

/// Ends the process with `status`: what was shown drawn, the terminal put
/// back, and `reason` on a line of its own (where the prompt was, which is
/// cleared). While a prompt is up, the editor's thread does it as it next
/// draws the prompt (see [`leave_if_asked`]), so that it draws nothing after
/// the reason. Only one thread leaves; another that calls this waits.
pub fn leave(status: i32, reason: &str) -> ! {
    if LEAVING.swap(true, Ordering::SeqCst) {
        park_forever();
    }
    *asked() = Some((status, reason.to_string()));
    if crate::play::screen::leave_through_prompt() {
        std::thread::sleep(PROMPT_WAIT);
    }
    let Some((status, reason)) = asked().take() else {
        park_forever();
    };
    crate::play::screen::detach();
    finish(status, &reason)
}

/// Called as the prompt is drawn: ends the process there if another thread
/// asked to and everything shown before is drawn.
pub fn leave_if_asked() {
    if !crate::play::screen::leave_armed() {
        return;
    }
    if let Some((status, reason)) = asked().take() {
        finish(status, &reason);
    }
}

fn asked() -> std::sync::MutexGuard<'static, Option<(i32, String)>> {
    ASKED.lock().unwrap_or_else(|e| e.into_inner())
}

/// The terminal put back, the reason on a line of its own, the exit.
fn finish(status: i32, reason: &str) -> ! {
    let prompt_was_up = restore();
    let mut out = std::io::stdout().lock();
    let clear = if prompt_was_up { "\r\x1b[K" } else { "" };
    let _ = writeln!(out, "{clear}{reason}");
    let _ = out.flush();
    std::process::exit(status);
}

fn park_forever() -> ! {
    loop {
        std::thread::park();
    }
}
