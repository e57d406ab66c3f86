//! A test's connection to the daemon: [`Client`] connects (from 127.0.0.1,
//! or from another loopback address to be another peer), sends lines and
//! reads them back, every read bounded by a deadline ([`Received`], [`READ_TIMEOUT`]), so
//! that a daemon that goes quiet fails a test instead of hanging it. Here too
//! are the few steps that many tests take with clients: seating two in one
//! game ([`seek_pair`], [`new_and_join`]), logging in again under a name just
//! freed ([`login_soon`]) and checking that the daemon still serves
//! ([`assert_serves`]).

use std::io::{BufRead, BufReader, ErrorKind, Read, Write};
use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpStream};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use flipline::protocol::{CommandKind, Reply};

use crate::lines::{Start, is_final, parse_start, reply_game, reply_to};
use crate::tls::Wire;

/// The longest any single read waits: no test can hang on a silent server.
/// A guard against a hang, not a claim about speed: generous, so that a
/// loaded machine (a slow build beside the tests) never fails a test here.
pub const READ_TIMEOUT: Duration = Duration::from_secs(30);

/// The bound of a wait that only stops a hung test (a close, an exit, a log
/// line, a state polled for): never a claim about how quick the daemon is,
/// which a loaded machine would break.
pub const HANG_GUARD: Duration = Duration::from_secs(60);

/// What a bounded read found.
#[derive(Debug, PartialEq, Eq)]
pub enum Received {
    /// A whole line, without its line ending.
    Line(String),
    /// The server closed the connection (or reset it).
    Closed,
    /// Nothing complete arrived before the deadline.
    TimedOut,
}

/// A stream connected to `addr` from `source`: std cannot bind a socket
/// before connecting it, tokio can (on a runtime of its own for the call).
fn bound_stream(addr: SocketAddr, source: Ipv4Addr) -> TcpStream {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("a runtime to connect with: {e}"));
    let connected = runtime.block_on(async {
        let socket = tokio::net::TcpSocket::new_v4()?;
        socket.bind(SocketAddr::new(IpAddr::V4(source), 0))?;
        let stream = tokio::time::timeout(READ_TIMEOUT, socket.connect(addr))
            .await
            .map_err(|_| std::io::Error::from(ErrorKind::TimedOut))??;
        stream.into_std()
    });
    let stream =
        connected.unwrap_or_else(|e| panic!("cannot connect to {addr} from {source}: {e}"));
    stream
        .set_nonblocking(false)
        .unwrap_or_else(|e| panic!("set_nonblocking: {e}"));
    stream
}

/// One connection to the daemon, speaking lines.
pub struct Client {
    /// Read through the buffer, written past it (`get_mut`): one stream, so
    /// that a TLS connection needs no split.
    reader: BufReader<Wire>,
    /// Bytes of a line that has not ended yet (kept across timed-out reads).
    partial: Vec<u8>,
    /// The name logged in with (empty before `LOGIN`), for messages.
    pub name: String,
    /// The daemon's address, which keys the guests' secrets.
    addr: SocketAddr,
}

/// The secret each guest name was last given, by daemon and name (folded),
/// so that a test's later `LOGIN` of that name shows it, as a client that
/// reconnects does. A daemon is known by its store (or its configuration
/// file), which a restart keeps, rather than by its address, which changes.
static SECRETS: std::sync::Mutex<Vec<((PathBuf, String), String)>> =
    std::sync::Mutex::new(Vec::new());

/// Which daemon listens where: its address and what a restart keeps.
static DAEMONS: std::sync::Mutex<Vec<(SocketAddr, PathBuf)>> = std::sync::Mutex::new(Vec::new());

/// Says that the daemon at `addr` keeps its games in `identity` (a store or a
/// configuration file), so that the guests' secrets outlive its restarts.
pub fn name_daemon(addr: SocketAddr, identity: &std::path::Path) {
    let mut daemons = DAEMONS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    daemons.retain(|(a, _)| *a != addr);
    daemons.push((addr, identity.to_path_buf()));
}

fn secret_key(addr: SocketAddr, name: &str) -> (PathBuf, String) {
    let daemons = DAEMONS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let daemon = daemons
        .iter()
        .find(|(a, _)| *a == addr)
        .map(|(_, p)| p.clone());
    let daemon = daemon.unwrap_or_else(|| PathBuf::from(addr.to_string()));
    (daemon, name.to_ascii_lowercase())
}

/// The secret `name` was given on the daemon at `addr`, if it was a guest.
pub fn guest_secret(addr: SocketAddr, name: &str) -> Option<String> {
    let key = secret_key(addr, name);
    let secrets = SECRETS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    secrets
        .iter()
        .find(|(k, _)| *k == key)
        .map(|(_, s)| s.clone())
}

fn keep_secret(addr: SocketAddr, name: &str, secret: &str) {
    let key = secret_key(addr, name);
    let mut secrets = SECRETS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    secrets.retain(|(k, _)| *k != key);
    secrets.push((key, secret.to_string()));
}

impl Client {
    /// Connects and checks the greeting `HELLO flipline 1`.
    pub fn connect(addr: SocketAddr) -> Client {
        let mut client = Client::connect_raw(addr);
        let hello = client.line();
        assert_eq!(hello, "HELLO flipline 1", "greeting");
        client
    }

    /// Connects and reads the greeting within `within`, or `None` (a node
    /// down, paused or refusing): for tests that connect through faults.
    pub fn try_connect(addr: SocketAddr, within: Duration) -> Option<Client> {
        let stream = TcpStream::connect_timeout(&addr, within).ok()?;
        let mut client = Client::over(stream, addr);
        match client.read_until(Instant::now() + within) {
            Received::Line(hello) if hello == "HELLO flipline 1" => Some(client),
            _ => None,
        }
    }

    /// Sends `line` and reads up to its final reply within `within`, or
    /// `None` if the connection closed or said nothing final meanwhile.
    pub fn try_command(&mut self, line: &str, within: Duration) -> Option<(Vec<String>, String)> {
        self.try_send_bytes(format!("{line}\n").as_bytes()).ok()?;
        let deadline = Instant::now() + within;
        let mut before = Vec::new();
        loop {
            match self.read_until(deadline) {
                Received::Line(line) if is_final(&line) => return Some((before, line)),
                Received::Line(line) => before.push(line),
                _ => return None,
            }
        }
    }

    /// Connects without reading anything.
    pub fn connect_raw(addr: SocketAddr) -> Client {
        let stream = TcpStream::connect_timeout(&addr, READ_TIMEOUT)
            .unwrap_or_else(|e| panic!("cannot connect to {addr}: {e}"));
        Client::over(stream, addr)
    }

    /// Connects from `source` (another loopback address, such as
    /// 127.0.0.9: another peer as the daemon counts them) without reading
    /// anything.
    pub fn connect_raw_from(addr: SocketAddr, source: Ipv4Addr) -> Client {
        Client::over(bound_stream(addr, source), addr)
    }

    /// Connects from `source` and checks the greeting.
    pub fn connect_from(addr: SocketAddr, source: Ipv4Addr) -> Client {
        let mut client = Client::connect_raw_from(addr, source);
        let hello = client.line();
        assert_eq!(hello, "HELLO flipline 1", "greeting");
        client
    }

    fn over(stream: TcpStream, addr: SocketAddr) -> Client {
        Client::over_wire(Client::plain(stream), addr)
    }

    /// A TCP stream set up as every test's is.
    fn plain(stream: TcpStream) -> TcpStream {
        let _ = stream.set_nodelay(true);
        stream
            .set_write_timeout(Some(READ_TIMEOUT))
            .unwrap_or_else(|e| panic!("set_write_timeout: {e}"));
        stream
    }

    /// Connects to the TLS port at `addr`, verifying its certificate for
    /// `host` with `config`'s authorities; the handshake's error if it
    /// fails. Reads nothing.
    pub fn try_connect_tls(
        addr: SocketAddr,
        host: &str,
        config: std::sync::Arc<rustls::ClientConfig>,
    ) -> std::io::Result<Client> {
        let stream = Client::plain(TcpStream::connect_timeout(&addr, READ_TIMEOUT)?);
        stream.set_read_timeout(Some(READ_TIMEOUT))?;
        let wire = Wire::tls(stream, host, config)?;
        Ok(Client::over_wire(wire, addr))
    }

    /// Connects to the TLS port at `addr` as `127.0.0.1`, trusting `config`,
    /// and checks the greeting.
    pub fn connect_tls(addr: SocketAddr, config: std::sync::Arc<rustls::ClientConfig>) -> Client {
        let mut client = Client::try_connect_tls(addr, "127.0.0.1", config)
            .unwrap_or_else(|e| panic!("TLS to {addr}: {e}"));
        let hello = client.line();
        assert_eq!(hello, "HELLO flipline 1", "greeting");
        client
    }

    fn over_wire(wire: impl Into<Wire>, addr: SocketAddr) -> Client {
        Client {
            reader: BufReader::new(wire.into()),
            partial: Vec::new(),
            name: String::new(),
            addr,
        }
    }

    /// Connects and logs in as `name`.
    pub fn login_as(addr: SocketAddr, name: &str) -> Client {
        let mut client = Client::connect(addr);
        client.login(name);
        client
    }

    /// `LOGIN name` as a guest, showing the secret the name was last given
    /// if any; it must log in as `name`.
    pub fn login(&mut self, name: &str) {
        let (data, ok) = self.command(&self.guest_login_line(name));
        assert_eq!(
            self.logged_in(&ok),
            Some(name.to_string()),
            "LOGIN {name} (data {data:?})"
        );
    }

    /// `LOGIN name`, with the name's secret when a guest of that name had one.
    pub fn guest_login_line(&self, name: &str) -> String {
        match guest_secret(self.addr, name) {
            Some(secret) => format!("LOGIN {name} secret {secret}"),
            None => format!("LOGIN {name}"),
        }
    }

    /// The name a `LOGIN` reply logged in as (keeping a guest's secret for
    /// later logins), or `None` if it is not an `OK`.
    pub fn logged_in(&mut self, reply: &str) -> Option<String> {
        let (name, secret) = match Reply::parse(CommandKind::Login, reply).ok()? {
            Reply::Login(login) => (login.name, login.secret),
            _ => return None,
        };
        if let Some(secret) = secret {
            keep_secret(self.addr, &name, &secret);
        }
        self.name = name.clone();
        Some(name)
    }

    /// Sends one line (a line feed is added).
    pub fn send(&mut self, line: &str) {
        self.send_bytes(format!("{line}\n").as_bytes());
    }

    /// Sends raw bytes.
    pub fn send_bytes(&mut self, bytes: &[u8]) {
        self.try_send_bytes(bytes)
            .unwrap_or_else(|e| panic!("{}: cannot send: {e}", self.who()));
    }

    /// Closes the sending side (the daemon reads end of file) and keeps reading.
    pub fn finish_sending(&mut self) {
        self.reader
            .get_mut()
            .finish_sending()
            .unwrap_or_else(|e| panic!("{}: cannot shut down: {e}", self.who()));
    }

    /// Sends raw bytes, telling whether the connection took them.
    pub fn try_send_bytes(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        let wire = self.reader.get_mut();
        wire.write_all(bytes)?;
        wire.flush()
    }

    fn who(&self) -> String {
        match self.name.as_str() {
            "" => "client".to_string(),
            name => format!("client {name}"),
        }
    }

    /// The next line, or what stopped it, waiting at most until `deadline`.
    pub fn read_until(&mut self, deadline: Instant) -> Received {
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Received::TimedOut;
            }
            if let Err(e) = self.reader.get_ref().set_read_timeout(Some(left)) {
                panic!("set_read_timeout: {e}");
            }
            match self.reader.read_until(b'\n', &mut self.partial) {
                Ok(0) => return Received::Closed,
                Ok(_) if self.partial.ends_with(b"\n") => {
                    let bytes = std::mem::take(&mut self.partial);
                    let text = String::from_utf8_lossy(&bytes);
                    return Received::Line(text.trim_end_matches(['\r', '\n']).to_string());
                }
                Ok(_) => {}
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(_) => return Received::Closed,
            }
        }
    }

    /// The next line within [`READ_TIMEOUT`]; anything else fails the test.
    pub fn line(&mut self) -> String {
        match self.read_until(Instant::now() + READ_TIMEOUT) {
            Received::Line(line) => line,
            other => panic!("{}: expected a line, got {other:?}", self.who()),
        }
    }

    /// Sends `line` and reads up to its final reply: the lines before it (data
    /// and events) and the final `OK ...` or `ERR ...` line.
    pub fn command(&mut self, line: &str) -> (Vec<String>, String) {
        self.send(line);
        self.final_reply(line)
    }

    /// Reads up to the next final reply (to the command `what`).
    pub fn final_reply(&mut self, what: &str) -> (Vec<String>, String) {
        let mut before = Vec::new();
        loop {
            let line = self.line();
            if is_final(&line) {
                return (before, line);
            }
            assert!(before.len() < 10_000, "{what}: no final reply");
            before.push(line);
        }
    }

    /// Runs a command that must succeed; returns its data lines and `OK ...`,
    /// which must be a reply to that command and print back as the same bytes.
    pub fn ok(&mut self, line: &str) -> (Vec<String>, String) {
        let (data, reply) = self.command(line);
        assert!(
            reply == "OK" || reply.starts_with("OK "),
            "{}: {line} -> {reply} (before: {data:?})",
            self.who()
        );
        if CommandKind::of_line(line).is_some() {
            assert_eq!(reply_to(line, &reply).to_string(), reply, "{line}");
        }
        (data, reply)
    }

    /// Runs a command that must answer with a game (`NEW`, `SEEK` when paired,
    /// `JOIN`, `WATCH`, `REMATCH` when accepted); returns the game's number.
    pub fn ok_game(&mut self, line: &str) -> u64 {
        let (_, reply) = self.ok(line);
        reply_game(line, &reply)
    }

    /// Runs a command that must fail with `code`; returns the `ERR` line.
    pub fn err(&mut self, line: &str, code: u16) -> String {
        let (data, reply) = self.command(line);
        assert!(
            reply.starts_with(&format!("ERR {code} ")),
            "{}: {line} -> {reply}, expected ERR {code} (before: {data:?})",
            self.who()
        );
        reply
    }

    /// Reads lines until one starts with `prefix` and returns it; the lines
    /// skipped are dropped. Fails after [`READ_TIMEOUT`] of silence.
    pub fn expect_event(&mut self, prefix: &str) -> String {
        self.lines_through(prefix).pop().unwrap_or_default()
    }

    /// Reads lines up to and including the first that starts with `prefix`.
    pub fn lines_through(&mut self, prefix: &str) -> Vec<String> {
        let deadline = Instant::now() + 3 * READ_TIMEOUT;
        let mut lines = Vec::new();
        loop {
            match self.read_until(deadline) {
                Received::Line(line) => {
                    let done = line.starts_with(prefix);
                    lines.push(line);
                    if done {
                        return lines;
                    }
                }
                other => panic!(
                    "{}: waiting for '{prefix}', got {other:?} after {lines:?}",
                    self.who()
                ),
            }
        }
    }

    /// Asserts that no line arrives for `quiet`.
    pub fn expect_silence(&mut self, quiet: Duration) {
        match self.read_until(Instant::now() + quiet) {
            Received::TimedOut => {}
            other => panic!("{}: expected silence, got {other:?}", self.who()),
        }
    }

    /// Reads until the server closes the connection, at most `within`; returns
    /// the lines read meanwhile.
    pub fn expect_closed(&mut self, within: Duration) -> Vec<String> {
        let deadline = Instant::now() + within;
        let mut lines = Vec::new();
        loop {
            match self.read_until(deadline) {
                Received::Line(line) => lines.push(line),
                Received::Closed => return lines,
                Received::TimedOut => panic!(
                    "{}: still open after {within:?}; read {lines:?}",
                    self.who()
                ),
            }
        }
    }

    /// Reads and throws away everything up to the server's close, however much,
    /// at most `within`; returns the bytes read.
    pub fn drain_until_closed(&mut self, within: Duration) -> usize {
        let deadline = Instant::now() + within;
        let mut total = self.partial.len();
        let mut buf = vec![0u8; 1 << 16];
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            assert!(
                !left.is_zero(),
                "{}: still open after {within:?}",
                self.who()
            );
            if let Err(e) = self.reader.get_ref().set_read_timeout(Some(left)) {
                panic!("set_read_timeout: {e}");
            }
            match self.reader.read(&mut buf) {
                Ok(0) => return total,
                Ok(n) => total += n,
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(_) => return total,
            }
        }
    }
}

/// Two clients logged in as `names` and paired by `SEEK <args>`; both have read
/// the game's START line, which is returned.
pub fn seek_pair(addr: SocketAddr, args: &str, names: [&str; 2]) -> (Client, Client, Start) {
    let [first, second] = names;
    let mut a = Client::login_as(addr, first);
    let mut b = Client::login_as(addr, second);
    let seek = format!("SEEK {args}");
    let (_, waiting) = a.ok(&seek);
    assert_eq!(waiting, "OK seeking");
    let (data, paired) = b.ok(&seek);
    assert!(data.is_empty(), "{data:?}");
    let game = reply_game(&seek, &paired);
    let start_b = b.line();
    let start_a = a.expect_event("START ");
    assert_eq!(start_a, start_b, "both see the same START");
    let start = parse_start(&start_a);
    assert_eq!(start.game, game);
    let mut seated = [start.black.as_str(), start.white.as_str()];
    seated.sort_unstable();
    let mut wanted = names;
    wanted.sort_unstable();
    assert_eq!(seated, wanted, "{start_a}");
    (a, b, start)
}

/// `NEW <args> as X` by the first client and `JOIN` by the second: the first
/// plays black. Both have read START, which is returned.
pub fn new_and_join(addr: SocketAddr, args: &str, names: [&str; 2]) -> (Client, Client, Start) {
    let [first, second] = names;
    let mut a = Client::login_as(addr, first);
    let mut b = Client::login_as(addr, second);
    let new = format!("NEW {args} as X");
    let (data, created) = a.ok(&new);
    assert!(data.is_empty(), "NEW sends no data before OK: {data:?}");
    let game = reply_game(&new, &created);
    let (data, joined) = b.ok(&format!("JOIN {game}"));
    assert!(data.is_empty(), "JOIN sends no data before OK: {data:?}");
    assert_eq!(joined, format!("OK {game} O"));
    let start = b.line();
    assert_eq!(a.line(), start, "both see the same START");
    let parsed = parse_start(&start);
    assert_eq!(
        (parsed.black.as_str(), parsed.white.as_str()),
        (first, second)
    );
    (a, b, parsed)
}

/// `LOGIN name` that may see 409 for a moment while the daemon notices that the
/// name's previous connection closed (it cannot know before it reads the close).
pub fn login_soon(client: &mut Client, name: &str) {
    let deadline = Instant::now() + HANG_GUARD;
    while Instant::now() < deadline {
        let (_, reply) = client.command(&client.guest_login_line(name));
        if client.logged_in(&reply).as_deref() == Some(name) {
            return;
        }
        assert!(reply.starts_with("ERR 409 "), "LOGIN {name}: {reply}");
        std::thread::sleep(Duration::from_millis(20));
    }
    panic!("hang guard: the name {name} stayed in use");
}

/// A `LOGIN` line that may see 409 for a moment, as [`login_soon`], until it
/// answers `want`.
pub fn login_line_soon(client: &mut Client, line: &str, want: &str) {
    let deadline = Instant::now() + HANG_GUARD;
    while Instant::now() < deadline {
        let reply = client.command(line).1;
        if reply == want {
            return;
        }
        assert!(reply.starts_with("ERR 409 "), "{line}: {reply}");
        std::thread::sleep(Duration::from_millis(20));
    }
    panic!("hang guard: {line}: never {want}");
}

/// Asserts that the daemon still serves a new connection.
pub fn assert_serves(addr: SocketAddr) {
    let mut client = Client::connect(addr);
    let (data, pong) = client.command("PING");
    assert_eq!((data.len(), pong.as_str()), (0, "OK pong"));
}

/// Waits until `done` holds, checking every 20 ms, or fails saying `what`
/// once `within` has passed: a bound that stops a hung test, not a claim
/// about speed.
pub fn wait_until(what: &str, within: Duration, mut done: impl FnMut() -> bool) {
    let began = Instant::now();
    while !done() {
        assert!(began.elapsed() < within, "not within {within:?}: {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}
