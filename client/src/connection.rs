//! What the client's two modes share: how the client was asked to run
//! (`PlayOptions`), why it stopped (`Failure`), and the thread that reads
//! the server and reconnects.

use std::io::BufReader;
use std::net::TcpStream;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use crate::link::{Link, Sink, open};
use crate::screen::ScreenSink;
use crate::terminal::{self, status};

/// How the client was asked to run.
#[derive(Clone, Debug)]
pub struct PlayOptions {
    /// `host:port` of the daemon.
    pub server: String,
    /// A name to log in with at once.
    pub name: Option<String>,
    /// The password for that login (a registered name's); a reconnect logs
    /// in with it again, as with any password logged in with.
    pub password: Option<crate::password::Password>,
    /// Show server lines as they are.
    pub raw: bool,
    /// Reconnect (and take the seat back) when the connection drops.
    pub reconnect: bool,
    /// What names the daemon in the data directory's secret file, where
    /// guests' secrets are kept too so that a client started again resumes
    /// its guest: the server's address, or for `--local` (whose daemon
    /// listens on another port each time) its store. `None`: memory only.
    pub secrets_key: Option<String>,
    /// Called with the view after every server line.
    pub on_update: Option<fn(&crate::view::View)>,
}

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
/// reconnects or ends the process (status 2, the terminal put back).
pub fn spawn_reader(link: &Arc<Link>, reader: BufReader<TcpStream>, options: &PlayOptions) {
    let link = Arc::clone(link);
    let options = options.clone();
    std::thread::spawn(move || {
        let mut sink = ScreenSink;
        let mut reader = reader;
        loop {
            link.read_all(reader, &mut sink);
            if link.closing.load(Ordering::Acquire) {
                return;
            }
            if link.closed_before_login() {
                link.doze();
                sink.show(vec![
                    "the server closes connections that do not log in in time; \
                     the next command connects again (login NAME to play)"
                        .to_string(),
                ]);
                match link.sleep_until_used() {
                    Some(again) => {
                        reader = again;
                        continue;
                    }
                    None => return,
                }
            }
            if options.reconnect {
                match reconnect(&link, &options, &mut sink) {
                    Some(again) => {
                        reader = again;
                        continue;
                    }
                    None => {
                        link.mark_lost();
                        terminal::leave(
                            status::CONNECTION,
                            &format!(
                                "connection to {} lost; no reconnect for a minute: giving up",
                                options.server
                            ),
                        );
                    }
                }
            }
            link.mark_lost();
            terminal::leave(
                status::CONNECTION,
                &format!("connection to {} lost", options.server),
            );
        }
    });
}

/// Tries to reconnect for about a minute; logs in again (a guest with the
/// secret it was given, which is what lets the daemon give the name back)
/// and, once logged in, takes back the seat of the game that was going on.
fn reconnect(
    link: &Link,
    options: &PlayOptions,
    sink: &mut dyn Sink,
) -> Option<BufReader<TcpStream>> {
    sink.show(vec![format!(
        "connection to {} lost; reconnecting",
        options.server
    )]);
    let (name, game) = {
        let view = link.view();
        let game = view.live_game().and(view.current);
        (view.name.clone(), game)
    };
    for attempt in 0..60u32 {
        std::thread::sleep(Duration::from_millis(250 * u64::from(attempt.min(4) + 1)));
        let Ok((stream, reader)) = open(&options.server) else {
            continue;
        };
        link.replace(stream);
        let mut reader = reader;
        let logged_in = match &name {
            Some(name) => match link.log_in(name, &mut reader, sink) {
                Ok(logged_in) => logged_in,
                Err(_) => continue,
            },
            None => false,
        };
        let rejoined = match game.filter(|_| logged_in) {
            Some(game) => link.send(&format!("JOIN {game}")).is_ok(),
            None => true,
        };
        if rejoined {
            sink.show(vec!["reconnected".to_string()]);
            return Some(reader);
        }
    }
    None
}
