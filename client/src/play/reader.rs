//! The thread that reads the server, and makes the connection again when
//! it drops (as `Reconnect` says); with what the client's two modes share:
//! how the client was asked to run (`PlayOptions`) and why it stopped
//! (`Failure`).

use crate::play::wire::Incoming;
use std::io::BufReader;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use flipline::protocol::ErrorCode;

use crate::play::link::{Link, Sink};
use crate::play::screen::ScreenSink;
use crate::play::terminal::{self, status};

/// How the client was asked to run.
#[derive(Clone, Debug)]
pub struct PlayOptions {
    /// `host:port` of the daemon (`tls://host:port` for its TLS port).
    pub server: String,
    /// A CA file to verify a TLS port's certificate with instead of the
    /// system's roots.
    pub ca: Option<std::path::PathBuf>,
    /// A name to log in with at once.
    pub name: Option<String>,
    /// The password for that login (a registered name's); a reconnect logs
    /// in with it again, as with any password logged in with.
    pub password: Option<crate::play::password::Password>,
    /// Show server lines as they are.
    pub raw: bool,
    /// Whether to reconnect (and take the seat back) when the connection
    /// drops: `Some` as the flags say (`--reconnect`, `--no-reconnect`),
    /// `None` for the mode's default (see [`Reconnect::choose`]).
    pub reconnect: Option<bool>,
    /// What names the daemon in the data directory's secret file, where
    /// guests' secrets are kept too so that a client started again resumes
    /// its guest: the server's address, or for `--local` (whose daemon
    /// listens on another port each time) its store. `None`: memory only.
    pub secrets_key: Option<String>,
    /// Called with the view after every server line.
    pub on_update: Option<fn(&crate::play::view::View)>,
}

/// What the client does when its connection drops.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reconnect {
    /// It ends, with status 2.
    Never,
    /// It tries again for about a minute, then ends with status 2.
    ForAMinute,
    /// It tries again, the pauses growing, for as long as the person waits.
    UntilQuit,
}

impl Reconnect {
    /// At a terminal a person is there to wait, so a client reconnects
    /// unless told not to; a script, which nobody watches, fails fast
    /// unless told to reconnect, and then gives up after a minute.
    pub fn choose(flag: Option<bool>, interactive: bool) -> Reconnect {
        match (flag, interactive) {
            (Some(false), _) | (None, false) => Reconnect::Never,
            (Some(true), false) => Reconnect::ForAMinute,
            (_, true) => Reconnect::UntilQuit,
        }
    }

    /// How long to pause before try `attempt` (from 0): a quarter of a
    /// second, doubled each try up to [`LONGEST_PAUSE`], so that a daemon
    /// back at once is found at once and a long outage costs few tries.
    /// `None` once the tries are over.
    pub fn pause_before(self, attempt: u32, waited: Duration) -> Option<Duration> {
        let pause = (FIRST_PAUSE * 2u32.saturating_pow(attempt.min(16))).min(LONGEST_PAUSE);
        match self {
            Reconnect::Never => None,
            Reconnect::ForAMinute if waited >= SCRIPT_PATIENCE => None,
            Reconnect::ForAMinute | Reconnect::UntilQuit => Some(pause),
        }
    }
}

/// The first pause before connecting again.
const FIRST_PAUSE: Duration = Duration::from_millis(250);

/// The longest pause between two tries.
const LONGEST_PAUSE: Duration = Duration::from_secs(8);

/// How long a script's `--reconnect` tries.
const SCRIPT_PATIENCE: Duration = Duration::from_secs(60);

/// Why the client stopped other than by being told to, and the exit status
/// that says so (see README).
#[derive(Debug)]
pub struct Failure {
    /// The process's exit status.
    pub status: i32,
    /// What to tell the person.
    pub message: String,
}

impl Failure {
    /// A command or a local step failed.
    pub fn failed(message: impl Into<String>) -> Failure {
        Failure {
            status: status::FAILED,
            message: message.into(),
        }
    }

    /// The connection was refused or lost.
    pub fn connection(message: impl Into<String>) -> Failure {
        Failure {
            status: status::CONNECTION,
            message: message.into(),
        }
    }
}

/// Starts the thread that reads server lines; on a lost connection it either
/// reconnects, as `policy` says, or ends the process (status 2, the terminal
/// put back).
pub fn spawn_reader(link: &Arc<Link>, reader: BufReader<Incoming>, policy: Reconnect) {
    let link = Arc::clone(link);
    link.set_reconnects(policy != Reconnect::Never);
    std::thread::spawn(move || {
        let mut sink = ScreenSink;
        let mut reader = reader;
        loop {
            link.read_all(reader, &mut sink);
            if link.closing.load(Ordering::Acquire) {
                return;
            }
            let server = link.servers().current().to_string();
            let again = if link.closed_before_login() {
                wait_for_a_command(&link, &mut sink)
            } else {
                reconnect(&link, &server, policy, &mut sink)
            };
            match again {
                Some(again) => reader = again,
                None if link.closing.load(Ordering::Acquire) => return,
                None => lose(&link, &server, policy),
            }
        }
    });
}

/// After the server closed a connection that did not log in in time: the
/// next command connects again. `None` on a deliberate close.
fn wait_for_a_command(link: &Link, sink: &mut dyn Sink) -> Option<BufReader<Incoming>> {
    link.doze();
    sink.show(vec![
        "the server closes connections that do not log in in time; \
         the next command connects again (login NAME to play)"
            .to_string(),
    ]);
    link.sleep_until_used()
}

/// Ends the process: the connection is gone for good.
fn lose(link: &Link, server: &str, policy: Reconnect) -> ! {
    link.mark_lost();
    let why = match policy {
        Reconnect::Never => format!("connection to {server} lost"),
        Reconnect::ForAMinute | Reconnect::UntilQuit => {
            format!("connection to {server} lost; no reconnect for a minute: giving up")
        }
    };
    terminal::leave(status::CONNECTION, &why)
}

/// Connects again as `policy` allows, each failed try said (at a terminal)
/// with the pause before the next; logs in again (a guest with the secret it
/// was given, which is what lets the daemon give the name back) and, once
/// logged in, takes back the seat the daemon says it kept (the view sends
/// that `JOIN`), or else that of the game that was going on. `None` when the
/// tries are over or the person quit.
fn reconnect(
    link: &Link,
    server: &str,
    policy: Reconnect,
    sink: &mut dyn Sink,
) -> Option<BufReader<Incoming>> {
    if policy == Reconnect::Never {
        return None;
    }
    link.drop_connection();
    // Another address, if several were given, is tried first.
    link.servers().lost();
    let quit = if policy == Reconnect::UntilQuit {
        " (quit leaves)"
    } else {
        ""
    };
    sink.show(vec![format!(
        "connection to {server} lost; reconnecting{quit}"
    )]);
    let (name, game) = {
        let view = link.view();
        let game = view.live_game().and(view.current);
        (view.name.clone(), game)
    };
    let started = Instant::now();
    let mut attempt = 0;
    while let Some(pause) = policy.pause_before(attempt, started.elapsed()) {
        attempt += 1;
        std::thread::sleep(pause);
        if link.closing.load(Ordering::Acquire) {
            return None;
        }
        match try_once(link, name.as_deref(), game, sink) {
            Ok(reader) => {
                let to = link.servers().current();
                let shown = if to == server {
                    "reconnected".to_string()
                } else {
                    format!("reconnected, to {to}")
                };
                sink.show(vec![shown]);
                return Some(reader);
            }
            Err(why) if policy == Reconnect::UntilQuit => {
                let next = policy.pause_before(attempt, started.elapsed());
                let next = next.map_or(0.0, |p| p.as_secs_f64());
                let why = short_reason(&why, server);
                sink.show(vec![format!(
                    "reconnecting to {server}: try {attempt} failed ({why}); next in {next:.1} s{quit}"
                )]);
            }
            Err(_) => {}
        }
    }
    None
}

/// Why a try failed, short enough for a status line: without the address
/// the line already names, nor the advice for a first connection.
fn short_reason<'a>(why: &'a str, server: &str) -> &'a str {
    let prefix = format!("cannot connect to {server}: ");
    let why = why.strip_prefix(&prefix).unwrap_or(why);
    why.split(';').next().unwrap_or(why)
}

/// Why a try whose `LOGIN` was refused for a passing reason failed, in the
/// client's words (the server's are not shown as they came).
fn passing_refusal(code: ErrorCode) -> &'static str {
    match code {
        ErrorCode::Conflict => "the name is still held by the lost connection",
        _ => "the server is busy",
    }
}

/// One try at connecting again, logging in and taking the seat back; a
/// `LOGIN` refused for a reason that passes by itself is a failed try.
fn try_once(
    link: &Link,
    name: Option<&str>,
    game: Option<u64>,
    sink: &mut dyn Sink,
) -> Result<BufReader<Incoming>, String> {
    let (stream, mut reader, _) = link.servers().open()?;
    link.replace(stream);
    let Some(name) = name else {
        return Ok(reader);
    };
    link.view().credentials.kept_seat = None;
    let logged_in = link.log_in(name, &mut reader, sink)?;
    if let Some(code) = link.view().credentials.login_passing.filter(|_| !logged_in) {
        return Err(passing_refusal(code).to_string());
    }
    let said = link.view().credentials.kept_seat.take();
    // A server that does not say which seat it kept: the game known.
    if let Some(game) = game.filter(|_| logged_in && said.is_none()) {
        link.send(&format!("JOIN {game}"))?;
    }
    Ok(reader)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_person_is_reconnected_for_as_long_as_they_wait_and_a_script_fails_fast() {
        use Reconnect::*;
        assert_eq!(Reconnect::choose(None, true), UntilQuit);
        assert_eq!(Reconnect::choose(Some(true), true), UntilQuit);
        assert_eq!(Reconnect::choose(Some(false), true), Never);
        assert_eq!(Reconnect::choose(None, false), Never);
        assert_eq!(Reconnect::choose(Some(true), false), ForAMinute);
        let now = Duration::ZERO;
        let pauses: Vec<_> = (0..7).map(|n| UntilQuit.pause_before(n, now)).collect();
        let ms = |n| Some(Duration::from_millis(n));
        assert_eq!(
            pauses,
            [
                ms(250),
                ms(500),
                ms(1000),
                ms(2000),
                ms(4000),
                ms(8000),
                ms(8000)
            ]
        );
        let a_day = Duration::from_secs(24 * 3600);
        assert_eq!(UntilQuit.pause_before(u32::MAX, a_day), ms(8000));
        assert_eq!(
            ForAMinute.pause_before(3, Duration::from_secs(59)),
            ms(2000)
        );
        assert_eq!(ForAMinute.pause_before(3, Duration::from_secs(60)), None);
        assert_eq!(Never.pause_before(0, now), None);
    }

    #[test]
    fn a_failed_try_is_said_in_a_few_words() {
        let why =
            "cannot connect to h:1: Connection refused (os error 111); is flipd running there?";
        assert_eq!(
            short_reason(why, "h:1"),
            "Connection refused (os error 111)"
        );
        assert_eq!(short_reason("no greeting", "h:1"), "no greeting");
    }
}
