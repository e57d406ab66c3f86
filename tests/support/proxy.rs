//! A loopback TCP proxy that a test cuts and heals, to put a daemon's link
//! to a server (NATS, PostgreSQL) through the faults of a real network:
//!
//! - [`Proxy::refuse`]: every connection through it is closed and new ones
//!   are closed at once, as when a server's host refuses (a port closed, a
//!   firewall that rejects);
//! - [`Proxy::silence`]: nothing passes either way and nothing is closed,
//!   as when a firewall or a NAT forgets the connections and drops their
//!   packets without a word; what is sent meanwhile waits in the proxy
//!   ([`Proxy::silence_replies`]: only what the server sends waits, as
//!   when a route fails one way);
//! - [`Proxy::heal`]: everything passes again (what waited goes on, as
//!   TCP's retransmissions would carry it).
//!
//! One thread accepts, two carry each connection; all of them stop when
//! the proxy is dropped.

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::Duration;

/// What the proxy does with traffic now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Pass,
    Refuse,
    Silent,
    /// Only the server's side is silent.
    SilentReplies,
    Stopped,
}

/// The proxy's shared state: its mode and the connections open through it.
struct State {
    mode: Mutex<(Mode, Vec<TcpStream>)>,
    changed: Condvar,
}

impl State {
    fn mode(&self) -> Mode {
        self.mode.lock().unwrap_or_else(PoisonError::into_inner).0
    }

    /// Sets the mode; closing every connection for `Refuse` and `Stopped`.
    fn set(&self, mode: Mode) {
        let mut held = self.mode.lock().unwrap_or_else(PoisonError::into_inner);
        held.0 = mode;
        if matches!(mode, Mode::Refuse | Mode::Stopped) {
            for stream in held.1.drain(..) {
                let _ = stream.shutdown(Shutdown::Both);
            }
        }
        self.changed.notify_all();
    }

    /// Waits while the proxy is silent for what goes `to_server` (or from
    /// it); whether to go on carrying bytes.
    fn may_pass(&self, to_server: bool) -> bool {
        let mut held = self.mode.lock().unwrap_or_else(PoisonError::into_inner);
        loop {
            match held.0 {
                Mode::Pass => return true,
                Mode::SilentReplies if to_server => return true,
                Mode::Refuse | Mode::Stopped => return false,
                Mode::Silent | Mode::SilentReplies => {
                    let waited = self.changed.wait_timeout(held, Duration::from_millis(200));
                    held = waited.unwrap_or_else(PoisonError::into_inner).0;
                }
            }
        }
    }
}

/// The proxy: listening on `addr`, carrying to its target.
pub struct Proxy {
    pub addr: SocketAddr,
    state: Arc<State>,
}

impl Proxy {
    /// A proxy on a free loopback port to `target`, passing everything.
    pub fn start(target: SocketAddr) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0")
            .unwrap_or_else(|e| panic!("the proxy cannot listen: {e}"));
        let addr = listener
            .local_addr()
            .unwrap_or_else(|e| panic!("the proxy's address: {e}"));
        let state = Arc::new(State {
            mode: Mutex::new((Mode::Pass, Vec::new())),
            changed: Condvar::new(),
        });
        let accepting = Arc::clone(&state);
        std::thread::spawn(move || accept_all(&listener, target, &accepting));
        Proxy { addr, state }
    }

    /// Closes every connection through it, and each new one at once.
    pub fn refuse(&self) {
        self.state.set(Mode::Refuse);
    }

    /// Carries nothing either way, closing nothing.
    pub fn silence(&self) {
        self.state.set(Mode::Silent);
    }

    /// Carries what the clients send, and nothing of what the server
    /// sends, closing nothing.
    pub fn silence_replies(&self) {
        self.state.set(Mode::SilentReplies);
    }

    /// Carries everything again.
    pub fn heal(&self) {
        self.state.set(Mode::Pass);
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.state.set(Mode::Stopped);
        // Wakes the accepting thread, which then sees the proxy stopped.
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_secs(1));
    }
}

fn accept_all(listener: &TcpListener, target: SocketAddr, state: &Arc<State>) {
    for client in listener.incoming() {
        let Ok(client) = client else { continue };
        match state.mode() {
            Mode::Stopped => return,
            Mode::Refuse => continue,
            Mode::Pass | Mode::Silent | Mode::SilentReplies => {}
        }
        let Ok(server) = TcpStream::connect_timeout(&target, Duration::from_secs(5)) else {
            continue;
        };
        let streams = [&client, &server].map(|s| s.try_clone());
        let [Ok(client_copy), Ok(server_copy)] = streams else {
            continue;
        };
        {
            let mut held = state.mode.lock().unwrap_or_else(PoisonError::into_inner);
            held.1.extend([client_copy, server_copy]);
        }
        for (from, to, to_server) in [(&client, &server, true), (&server, &client, false)] {
            let (Ok(from), Ok(to)) = (from.try_clone(), to.try_clone()) else {
                continue;
            };
            let carrying = Arc::clone(state);
            std::thread::spawn(move || carry((from, to), to_server, &carrying));
        }
    }
}

/// Carries bytes from `from` to `to` (`to_server`: the server's side) while
/// the proxy lets them pass; both close when either side does or the proxy
/// refuses.
fn carry((mut from, mut to): (TcpStream, TcpStream), to_server: bool, state: &State) {
    let mut buffer = [0u8; 16 * 1024];
    loop {
        let read = match from.read(&mut buffer) {
            Ok(0) | Err(_) => break,
            Ok(read) => read,
        };
        if !state.may_pass(to_server) {
            break;
        }
        if to.write_all(&buffer[..read]).is_err() {
            break;
        }
    }
    let _ = from.shutdown(Shutdown::Both);
    let _ = to.shutdown(Shutdown::Both);
}
