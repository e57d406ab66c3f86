//! The daemon's addresses as `--server` gives them: one, or several (a
//! cluster's nodes, `a:7341,b:7341`), tried in turn, each plain or TLS
//! (`tls://host:7342`). The one that answered last is tried first, except
//! after it was lost: then the next one is, so that a reconnect goes to a
//! live node rather than waiting on a dead one.

use std::io::BufReader;
use std::net::{TcpStream, ToSocketAddrs};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use std::io::{BufRead, Read};

use rustls::ClientConfig;

use crate::play::tls;
use crate::play::wire::{self, Incoming, Outgoing};
use crate::untrusted::escape;

/// A connection just made: its writing half, its reading half (the greeting
/// read) and the greeting, escaped for showing.
pub type Opened = (Outgoing, BufReader<Incoming>, String);

/// How long one address may take to accept a connection when there are
/// others to try: a machine that is gone never refuses, it only stays silent.
const CONNECT_WAIT: Duration = Duration::from_secs(3);

/// The addresses, in the order given, and where the next try begins.
#[derive(Debug)]
pub struct Servers {
    list: Vec<String>,
    first: AtomicUsize,
    /// The CA file TLS ports are verified with; `None`: the system's roots.
    ca: Option<PathBuf>,
    /// The TLS settings, made at the first TLS connection.
    tls: OnceLock<Result<Arc<ClientConfig>, String>>,
}

impl Servers {
    /// The addresses of `text`, separated by commas (as `--server` gives
    /// them, each with its port: see `link::server_address`).
    pub fn parse(text: &str) -> Servers {
        let list: Vec<String> = (text.split(','))
            .map(str::trim)
            .filter(|a| !a.is_empty())
            .map(str::to_string)
            .collect();
        Servers {
            list,
            first: AtomicUsize::new(0),
            ca: None,
            tls: OnceLock::new(),
        }
    }

    /// These addresses, their TLS ports verified with the authorities of
    /// `ca` rather than the system's.
    pub fn trusting(mut self, ca: Option<PathBuf>) -> Servers {
        self.ca = ca;
        self
    }

    /// The TLS settings, made once.
    fn tls_config(&self) -> Result<Arc<ClientConfig>, String> {
        let made = self
            .tls
            .get_or_init(|| tls::client_config(self.ca.as_deref()));
        made.clone()
    }

    /// The address tried first now (the one answering, while connected).
    pub fn current(&self) -> &str {
        let at = self.first.load(Ordering::Acquire);
        self.list.get(at).map_or("", String::as_str)
    }

    /// The connection to the current address was lost: the next try
    /// begins with the address after it.
    pub fn lost(&self) {
        if self.list.len() > 1 {
            let next = (self.first.load(Ordering::Acquire) + 1) % self.list.len();
            self.first.store(next, Ordering::Release);
        }
    }

    /// Connects to the first address that answers as a flipline server,
    /// from the current one round the list; the greeting comes with it.
    /// The error is the last address's, the others' said before it.
    pub fn open(&self) -> Result<Opened, String> {
        let count = self.list.len();
        let start = self.first.load(Ordering::Acquire);
        let mut failures = Vec::new();
        for step in 0..count {
            let at = (start + step) % count;
            let Some(address) = self.list.get(at) else {
                continue;
            };
            let wait = (count > 1).then_some(CONNECT_WAIT);
            match self.open_at(address, wait) {
                Ok(opened) => {
                    self.first.store(at, Ordering::Release);
                    return Ok(opened);
                }
                Err(why) => failures.push(why),
            }
        }
        match failures.pop() {
            Some(last) if failures.is_empty() => Err(last),
            Some(last) => Err(format!("{}; {last}", failures.join("; "))),
            None => Err("no server address given".to_string()),
        }
    }
}

impl Servers {
    /// Opens a connection to one address (TLS for a `tls://` one) and reads
    /// the greeting, the connection made within `wait` when given.
    fn open_at(&self, server: &str, wait: Option<Duration>) -> Result<Opened, String> {
        let (address, tls_host) = tls::split(server);
        let stream = connect(address, wait).map_err(|e| cannot_connect(server, &e))?;
        let _ = stream.set_nodelay(true);
        let (outgoing, incoming) = match tls_host {
            Some(host) => tls::handshake(stream, host, self.tls_config()?)?,
            None => wire::plain(stream).map_err(|e| e.to_string())?,
        };
        let (reader, greeting) = read_greeting(server, BufReader::new(incoming))?;
        Ok((outgoing, reader, greeting))
    }
}

/// Connects to `address` within `wait` (when given), each of its resolved
/// addresses in turn.
pub fn connect(address: &str, wait: Option<Duration>) -> std::io::Result<TcpStream> {
    let Some(wait) = wait else {
        return TcpStream::connect(address);
    };
    let mut last = None;
    for resolved in address.to_socket_addrs()? {
        match TcpStream::connect_timeout(&resolved, wait) {
            Ok(stream) => return Ok(stream),
            Err(e) => last = Some(e),
        }
    }
    Err(last.unwrap_or_else(|| std::io::Error::other("the address resolves to nothing")))
}

/// Why `server` could not be reached; when nothing listens there, how to
/// get something that does.
fn cannot_connect(server: &str, error: &std::io::Error) -> String {
    let mut message = format!("cannot connect to {server}: {error}");
    if error.kind() == std::io::ErrorKind::ConnectionRefused {
        message.push_str(
            "; is flipd running there? Start it with `flipd`, or play offline with `flip --local`",
        );
    }
    message
}

/// The longest greeting read: `HELLO flipline 1` is 16 bytes, and a server
/// that sends no line feed must not grow the buffer without end.
const MAX_GREETING: u64 = 256;

/// Reads the greeting (escaped for showing; only its start is checked).
fn read_greeting(
    server: &str,
    mut reader: BufReader<Incoming>,
) -> Result<(BufReader<Incoming>, String), String> {
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
    Ok((reader, shown))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::net::TcpListener;

    /// A listener that greets each connection as a flipline server does.
    fn greeter() -> (TcpListener, String) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap_or_else(|e| panic!("{e}"));
        let address = listener
            .local_addr()
            .map(|a| a.to_string())
            .unwrap_or_default();
        (listener, address)
    }

    fn greet(listener: &TcpListener) {
        if let Ok((mut stream, _)) = listener.accept() {
            let _ = stream.write_all(b"HELLO flipline 1\n");
        }
    }

    /// An address nothing listens on: a listener bound, then dropped.
    fn closed() -> String {
        let (listener, address) = greeter();
        drop(listener);
        address
    }

    #[test]
    fn the_next_address_is_tried_when_one_refuses_and_after_a_loss() {
        let (a, a_address) = greeter();
        let dead = closed();
        let servers = Servers::parse(&format!("{dead},{a_address}"));
        let helper = std::thread::spawn(move || {
            greet(&a);
            greet(&a);
            a
        });
        let opened = servers.open();
        assert!(opened.is_ok(), "{opened:?}");
        assert_eq!(servers.current(), a_address, "the one that answered");
        // Lost: the next try starts after it, round the list, and comes
        // back to it past the dead one.
        servers.lost();
        assert_eq!(servers.current(), dead);
        assert!(servers.open().is_ok());
        assert_eq!(servers.current(), a_address);
        let _ = helper.join();
    }

    #[test]
    fn when_none_answers_every_address_is_named() {
        let (one, two) = (closed(), closed());
        let servers = Servers::parse(&format!("{one}, {two}"));
        let why = servers.open().err().unwrap_or_default();
        assert!(why.contains(&one) && why.contains(&two), "{why}");
        assert!(Servers::parse(" , ").open().is_err());
    }
}
