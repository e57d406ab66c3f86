//! Helpers for flipline's end-to-end tests: a daemon on port 0 in-process or as the
//! real binary, a line client whose every read is bounded, and a driver that plays
//! games from `TURN` lines while checking each line against the rules crate.
//!
//! Every wait here has a deadline, so a daemon that goes quiet fails a test with a
//! message instead of hanging it. Helpers panic with a message (they are only ever
//! called from tests); nothing here talks to anything but 127.0.0.1.
//!
//! # Layout
//! - [`test_config`], [`start`]: an in-process daemon ([`flipd::DaemonThread`])
//!   with a store of its own in a fresh temporary directory ([`TestDaemon`]).
//! - [`Client`]: connect, send, read lines, run commands, wait for events.
//! - [`seek_pair`], [`new_and_join`]: two clients seated in one game.
//! - [`play_game`]: plays a game to `OVER` for any mix of clients and bots.
//! - [`check_transcript`]: the ordering and counting rules of a game's lines.
//! - [`Rng`]: a small seeded generator for random legal moves.
//! - [`ChildDaemon`]: the `flipd` binary as a child process with a config file
//!   and a store of its own, killed on drop.

use std::io::{BufRead, BufReader, ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use flipline::notation::cells_string;
use flipline::protocol::{CommandKind, EndReason, Event, Reply, ServerLine};
use flipline::{Color, Game, Move, Square, Variant};

pub use flipd::{Config, DaemonThread};

/// The longest any single read waits: no test can hang on a silent server.
pub const READ_TIMEOUT: Duration = Duration::from_secs(5);

/// The embedded default, listening on port 0, with few threads, short engine
/// and shutdown times, and a store in a fresh temporary directory (see
/// [`temp_dir`]; [`start`] removes it with the daemon); each test changes what
/// it needs on top.
pub fn test_config() -> Config {
    let mut config = Config::embedded().unwrap_or_else(|e| panic!("embedded config: {e}"));
    config.listen = "127.0.0.1:0".to_string();
    config.workers = 2;
    config.engine_threads = 1;
    config.engine_move_ms = 100;
    config.shutdown_drain_ms = 500;
    config.store.path = temp_dir("store").join("flipline.db");
    // No fsync per commit: in-process daemons are never killed, and the tests
    // stay quick. The kill -9 test runs the binary with the default (full).
    config.store.synchronous = flipd::config::Synchronous::Normal;
    config
}

/// Where the tests keep their temporary files: a directory per test daemon
/// under this, named after the process and a counter, so that parallel tests
/// and parallel runs never share one; each is removed with its daemon.
fn temp_root() -> PathBuf {
    std::env::temp_dir().join("flipline-tests")
}

/// A new empty directory for one test's files, named after `what`, this process
/// and a counter.
pub fn temp_dir(what: &str) -> PathBuf {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let dir = temp_root().join(format!("{}-{n}-{what}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir)
        .unwrap_or_else(|e| panic!("cannot create {}: {e}", dir.display()));
    dir
}

/// Removes a directory made by [`temp_dir`] (and nothing else).
pub fn remove_temp_dir(dir: &Path) {
    if dir.starts_with(temp_root()) {
        let _ = std::fs::remove_dir_all(dir);
    }
}

/// An in-process daemon whose store directory is removed when it is dropped
/// (unless stopped with [`TestDaemon::stop_keeping_store`]).
pub struct TestDaemon {
    daemon: Option<DaemonThread>,
    /// Where it listens.
    pub addr: SocketAddr,
    store: PathBuf,
    /// The configuration it runs with (to start another on the same store).
    pub config: Config,
}

impl TestDaemon {
    /// Shuts the daemon down gracefully and removes its store.
    pub fn stop(mut self) -> std::io::Result<()> {
        self.daemon.take().map_or(Ok(()), DaemonThread::stop)
    }

    /// Shuts the daemon down gracefully and leaves its store for the next one.
    pub fn stop_keeping_store(mut self) -> std::io::Result<()> {
        self.store = PathBuf::new();
        self.daemon.take().map_or(Ok(()), DaemonThread::stop)
    }
}

impl Drop for TestDaemon {
    fn drop(&mut self) {
        drop(self.daemon.take());
        if let Some(dir) = self.store.parent() {
            remove_temp_dir(dir);
        }
    }
}

/// Starts an in-process daemon; dropping the handle stops it.
pub fn start(config: Config) -> TestDaemon {
    let daemon = DaemonThread::start(config.clone())
        .unwrap_or_else(|e| panic!("cannot start the daemon: {e}"));
    TestDaemon {
        addr: daemon.addr,
        daemon: Some(daemon),
        store: config.store.path.clone(),
        config,
    }
}

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

/// One connection to the daemon, speaking lines.
pub struct Client {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
    /// Bytes of a line that has not ended yet (kept across timed-out reads).
    partial: Vec<u8>,
    /// The name logged in with (empty before `LOGIN`), for messages.
    pub name: String,
}

impl Client {
    /// Connects and checks the greeting `HELLO flipline 1`.
    pub fn connect(addr: SocketAddr) -> Client {
        let mut client = Client::connect_raw(addr);
        let hello = client.line();
        assert_eq!(hello, "HELLO flipline 1", "greeting");
        client
    }

    /// Connects without reading anything.
    pub fn connect_raw(addr: SocketAddr) -> Client {
        let stream = TcpStream::connect_timeout(&addr, READ_TIMEOUT)
            .unwrap_or_else(|e| panic!("cannot connect to {addr}: {e}"));
        let _ = stream.set_nodelay(true);
        stream
            .set_write_timeout(Some(READ_TIMEOUT))
            .unwrap_or_else(|e| panic!("set_write_timeout: {e}"));
        let writer = stream
            .try_clone()
            .unwrap_or_else(|e| panic!("try_clone: {e}"));
        Client {
            reader: BufReader::new(stream),
            writer,
            partial: Vec::new(),
            name: String::new(),
        }
    }

    /// Connects and logs in as `name`.
    pub fn login_as(addr: SocketAddr, name: &str) -> Client {
        let mut client = Client::connect(addr);
        client.login(name);
        client
    }

    /// `LOGIN name`, which must answer `OK name`.
    pub fn login(&mut self, name: &str) {
        let (data, ok) = self.command(&format!("LOGIN {name}"));
        assert_eq!(ok, format!("OK {name}"), "LOGIN {name} (data {data:?})");
        self.name = name.to_string();
    }

    /// Sends one line (a line feed is added).
    pub fn send(&mut self, line: &str) {
        self.send_bytes(format!("{line}\n").as_bytes());
    }

    /// Sends raw bytes.
    pub fn send_bytes(&mut self, bytes: &[u8]) {
        self.writer
            .write_all(bytes)
            .unwrap_or_else(|e| panic!("{}: cannot send: {e}", self.who()));
    }

    /// Closes the sending side (the daemon reads end of file) and keeps reading.
    pub fn finish_sending(&mut self) {
        self.writer
            .shutdown(std::net::Shutdown::Write)
            .unwrap_or_else(|e| panic!("{}: cannot shut down: {e}", self.who()));
    }

    /// Sends raw bytes, telling whether the connection took them.
    pub fn try_send_bytes(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.writer.write_all(bytes)
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
    for _ in 0..100 {
        let (_, reply) = client.command(&format!("LOGIN {name}"));
        if reply == format!("OK {name}") {
            client.name = name.to_string();
            return;
        }
        assert!(reply.starts_with("ERR 409 "), "LOGIN {name}: {reply}");
        std::thread::sleep(Duration::from_millis(20));
    }
    panic!("the name {name} stayed in use");
}

/// Asserts that the daemon still serves a new connection.
pub fn assert_serves(addr: SocketAddr) {
    let mut client = Client::connect(addr);
    let (data, pong) = client.command("PING");
    assert_eq!((data.len(), pong.as_str()), (0, "OK pong"));
}

/// Whether a server line is a final reply.
pub fn is_final(line: &str) -> bool {
    line == "OK" || line.starts_with("OK ") || line.starts_with("ERR ")
}

/// A line as an event; fails on anything else.
pub fn event(line: &str) -> Event {
    match ServerLine::parse(line) {
        ServerLine::Event(event) => event,
        other => panic!("not an event: {line:?} ({other:?})"),
    }
}

/// The final reply `reply` to `command` (the line sent), typed; fails on an
/// `ERR` line, an unknown command, or a line that is no reply to the command.
pub fn reply_to(command: &str, reply: &str) -> Reply {
    let Some(kind) = CommandKind::of_line(command) else {
        panic!("no command in {command:?}");
    };
    Reply::parse(kind, reply).unwrap_or_else(|e| panic!("{command} -> {reply}: {e}"))
}

/// The game in the reply to `command`: `OK <game>` (`NEW`, `SEEK`, `WATCH`,
/// `REMATCH`) or `OK <game> <X|O>` (`JOIN`).
pub fn reply_game(command: &str, reply: &str) -> u64 {
    match reply_to(command, reply) {
        Reply::Game(game) | Reply::Joined(game, _) => game,
        other => panic!("{command} -> {reply}: no game in {other:?}"),
    }
}

/// What a test needs of a `START` line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Start {
    /// The game.
    pub game: u64,
    /// Its variant.
    pub variant: Variant,
    /// Black's name.
    pub black: String,
    /// White's name.
    pub white: String,
}

/// The side to move in a `TURN` line and a command for it: `MOVE` with the
/// first legal square, or `PASS`.
pub fn first_move(turn: &str) -> (Color, String) {
    match event(turn) {
        Event::Turn { side, moves, .. } => {
            let command = moves
                .first()
                .map_or_else(|| "PASS".to_string(), |s| format!("MOVE {s}"));
            (side, command)
        }
        other => panic!("expected TURN, got {other:?}"),
    }
}

/// Reads a `START` line.
pub fn parse_start(line: &str) -> Start {
    match event(line) {
        Event::Start {
            game,
            variant,
            black,
            white,
            ..
        } => Start {
            game,
            variant,
            black,
            white,
        },
        other => panic!("expected START, got {other:?}"),
    }
}

/// How a game ended, from its `OVER` line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Over {
    /// The winner, `None` for a draw.
    pub winner: Option<Color>,
    /// Black's score.
    pub black: u32,
    /// White's score.
    pub white: u32,
    /// Why it ended.
    pub reason: EndReason,
}

/// Reads an `OVER` line.
pub fn parse_over(line: &str) -> Over {
    match event(line) {
        Event::Over {
            winner,
            black,
            white,
            reason,
            ..
        } => Over {
            winner,
            black,
            white,
            reason,
        },
        other => panic!("expected OVER, got {other:?}"),
    }
}

/// X and O in a BOARD line's cells.
pub fn count_cells(cells: &str) -> (u32, u32) {
    let count = |c: char| u32::try_from(cells.chars().filter(|&x| x == c).count()).unwrap_or(0);
    (count('X'), count('O'))
}

/// A game played to its end by [`play_game`].
#[derive(Debug)]
pub struct Finished {
    /// Every line of the game, from the first BOARD to OVER, as the first client saw it.
    pub lines: Vec<String>,
    /// Passes played.
    pub passes: usize,
    /// Plies played (passes included).
    pub plies: usize,
    /// The end.
    pub over: Over,
}

/// Who plays a side in [`play_game`]: a client (by index) or the daemon's bot.
pub type SeatOf = [Option<usize>; 2];

/// The seats of a game from its START line: each side's client by name, `None`
/// where no client has that name (a bot).
pub fn seats_of(start: &Start, clients: &[&mut Client]) -> SeatOf {
    let find = |name: &str| clients.iter().position(|c| c.name == name);
    [find(&start.black), find(&start.white)]
}

fn slot(color: Color) -> usize {
    match color {
        Color::Black => 0,
        Color::White => 1,
    }
}

/// Plays a game to `OVER`. Every client must have read the game's `START` line
/// and nothing after it. On each `TURN` the client in that seat answers: `PASS`
/// when the moves are `pass`, otherwise `MOVE` with `choose(moves)`; a bot's
/// turn is waited out. Every client must see the same lines; each `TURN`,
/// `BOARD`, `MOVED` and `OVER` is checked against a local [`Game`].
pub fn play_game(
    clients: &mut [&mut Client],
    start: &Start,
    choose: &mut dyn FnMut(&[Square]) -> Square,
) -> Finished {
    play_game_from(clients, start, Game::new(start.variant), choose)
}

/// [`play_game`] for a game that began at `position` (`NEW ... from`).
pub fn play_game_from(
    clients: &mut [&mut Client],
    start: &Start,
    position: Game,
    choose: &mut dyn FnMut(&[Square]) -> Square,
) -> Finished {
    let seats = seats_of(start, clients);
    let mut mirror = Mirror {
        game: position,
        plies: 0,
    };
    let (mut lines, mut passes) = (Vec::new(), 0);
    for _ in 0..1000 {
        let segment = read_segment(clients, start.game);
        segment.iter().for_each(|line| mirror.check(line));
        lines.extend(segment.iter().cloned());
        let last = segment.last().map(String::as_str).unwrap_or_default();
        if last.starts_with("OVER ") {
            return finish(clients, start, lines, passes, mirror.plies);
        }
        let Event::Turn { side, moves, .. } = event(last) else {
            panic!("expected TURN, got {last:?}");
        };
        // A bot's turn: its move comes with the next segment.
        let Some(mover) = seats[slot(side)] else {
            continue;
        };
        passes += usize::from(moves.is_empty());
        let command = match moves.as_slice() {
            [] => "PASS".to_string(),
            moves => format!("MOVE {}", choose(moves)),
        };
        let client = clients
            .get_mut(mover)
            .unwrap_or_else(|| panic!("no client {mover}"));
        assert_eq!(
            client.command(&command),
            (vec![], "OK".to_string()),
            "{command}"
        );
    }
    panic!("game {} did not end in 1000 turns", start.game)
}

/// The end of [`play_game_from`]: checks the whole game's lines and that nothing
/// of the game (no stray TURN) follows OVER.
fn finish(
    clients: &mut [&mut Client],
    start: &Start,
    lines: Vec<String>,
    passes: usize,
    plies: usize,
) -> Finished {
    check_transcript(&lines, start.variant);
    for client in clients.iter_mut() {
        client.expect_silence(Duration::from_millis(30));
    }
    let over = parse_over(lines.last().map(String::as_str).unwrap_or_default());
    Finished {
        lines,
        passes,
        plies,
        over,
    }
}

/// Reads each client's lines up to the next TURN or OVER of `game` and checks
/// that they all saw the same lines.
fn read_segment(clients: &mut [&mut Client], game: u64) -> Vec<String> {
    let turn = format!("TURN {game} ");
    let over = format!("OVER {game} ");
    let mut first: Option<Vec<String>> = None;
    for client in clients.iter_mut() {
        let mut segment = Vec::new();
        loop {
            let line = client.line();
            let done = line.starts_with(&turn) || line.starts_with(&over);
            segment.push(line);
            if done {
                break;
            }
            assert!(segment.len() < 100, "no TURN or OVER in {segment:?}");
        }
        match &first {
            Some(seen) => assert_eq!(&segment, seen, "{} saw other lines", client.name),
            None => first = Some(segment),
        }
    }
    first.unwrap_or_default()
}

/// The game as the rules crate plays it, checked against the daemon's lines.
struct Mirror {
    game: Game,
    plies: usize,
}

impl Mirror {
    fn check(&mut self, line: &str) {
        match event(line) {
            Event::Board { cells, to_move, .. } => {
                assert_eq!(cells, cells_string(&self.game), "{line}");
                let expected = (!self.game.is_over()).then(|| self.game.to_move());
                assert_eq!(to_move, expected, "{line}");
            }
            Event::Turn { side, moves, .. } => {
                assert_eq!(side, self.game.to_move(), "{line}");
                let legal: Vec<Square> = self.game.legal_moves().iter().collect();
                assert_eq!(moves, legal, "{line}");
            }
            Event::Moved {
                side,
                played,
                black,
                white,
                ..
            } => self.moved(line, side, played, (black, white)),
            Event::Over {
                winner,
                black,
                white,
                reason: EndReason::Normal,
                ..
            } => {
                let score = self.game.score();
                assert!(self.game.is_over(), "{line} before the end");
                assert_eq!(
                    (winner, black, white),
                    (score.winner, score.black, score.white)
                );
            }
            _ => {}
        }
    }

    fn moved(&mut self, line: &str, side: Color, played: Move, discs: (u32, u32)) {
        assert_eq!(side, self.game.to_move(), "{line}");
        if let Err(e) = self.game.apply(played) {
            panic!("{line}: the rules refuse it: {e}");
        }
        self.plies += 1;
        let counts = self.game.counts();
        assert_eq!(discs, (counts.black, counts.white), "{line}");
    }
}

/// Checks the shape of a whole game's lines (from the first BOARD to OVER): each
/// MOVED is followed by a BOARD whose X and O counts are its disc counts; TURN
/// follows a BOARD whose side it names; the game ends with a BOARD with side `-`
/// and then OVER, whose scores sum to the squares of the board; nothing of the
/// game comes after OVER.
pub fn check_transcript(lines: &[String], variant: Variant) {
    let events: Vec<Event> = lines.iter().map(|l| event(l)).collect();
    for (i, pair) in events.windows(2).enumerate() {
        match pair {
            [
                Event::Moved { black, white, .. },
                Event::Board { cells, .. },
            ] => {
                assert_eq!(count_cells(cells), (*black, *white), "line {i}: {lines:?}");
            }
            [Event::Moved { .. }, other] => panic!("MOVED then {other:?}"),
            [Event::Board { to_move, .. }, Event::Turn { side, .. }] => {
                assert_eq!(*to_move, Some(*side), "line {i}");
            }
            [other, Event::Turn { .. }] => panic!("TURN after {other:?}, not BOARD"),
            _ => {}
        }
    }
    let n = events.len();
    let (Some(Event::Board { to_move, .. }), Some(Event::Over { black, white, .. })) =
        (n.checked_sub(2).and_then(|i| events.get(i)), events.last())
    else {
        panic!("the game does not end with BOARD then OVER: {lines:?}");
    };
    assert_eq!(*to_move, None, "the last BOARD still names a side");
    assert_eq!(black + white, variant.squares(), "OVER scores");
    let overs = events
        .iter()
        .filter(|e| matches!(e, Event::Over { .. }))
        .count();
    assert_eq!(overs, 1, "one OVER");
}

/// A seeded SplitMix64 generator: random legal moves that a seed reproduces.
#[derive(Clone, Debug)]
pub struct Rng(pub u64);

impl Rng {
    /// A generator seeded from the process's random keys; the seed is printed so
    /// that a failing game can be replayed.
    pub fn random() -> Rng {
        use std::hash::{BuildHasher, Hasher};
        let seed = std::collections::hash_map::RandomState::new()
            .build_hasher()
            .finish();
        eprintln!("rng seed {seed}");
        Rng(seed)
    }

    /// The next number.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// One of `moves`, at random.
    pub fn pick(&mut self, moves: &[Square]) -> Square {
        let len = u64::try_from(moves.len()).unwrap_or(1).max(1);
        let index = usize::try_from(self.next_u64() % len).unwrap_or(0);
        *moves
            .get(index)
            .unwrap_or_else(|| panic!("no moves to pick from"))
    }
}

/// The `flipd` binary as a child process on port 0, killed when dropped.
pub struct ChildDaemon {
    /// The process.
    pub child: Child,
    /// Where it listens.
    pub addr: SocketAddr,
    /// Its configuration file.
    pub config: PathBuf,
    /// A directory of its own, removed when it is dropped.
    owned: Option<PathBuf>,
}

impl ChildDaemon {
    /// Starts `flipd` with a configuration file of its own that listens on port
    /// 0 and keeps its store beside the file, in a fresh temporary directory.
    pub fn start() -> ChildDaemon {
        let dir = temp_dir("child");
        let config = write_config(&dir, "");
        let mut daemon = ChildDaemon::start_with(&config);
        daemon.owned = Some(dir);
        daemon
    }

    /// Builds (if need be) and starts `flipd --config FILE`, and reads the
    /// address from its log line `listening on 127.0.0.1:PORT`.
    pub fn start_with(config: &Path) -> ChildDaemon {
        let mut command = Command::new(flipd_binary());
        command.arg("--config").arg(config);
        ChildDaemon::run(command, config)
    }

    /// As [`ChildDaemon::start_with`], with the open-file limit (soft and hard,
    /// so that flipd cannot raise it) set to `open_files`.
    pub fn start_limited(config: &Path, open_files: u32) -> ChildDaemon {
        let mut command = with_open_file_limit(open_files, &flipd_binary());
        command.arg("--config").arg(config);
        ChildDaemon::run(command, config)
    }

    fn run(mut command: Command, config: &Path) -> ChildDaemon {
        let mut child = command
            .env("NO_COLOR", "1")
            .env("RUST_LOG", "info")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start flipd: {e}"));
        let Some(stderr) = child.stderr.take() else {
            let _ = child.kill();
            panic!("no stderr pipe");
        };
        let mut daemon = ChildDaemon {
            child,
            addr: SocketAddr::from(([127, 0, 0, 1], 0)),
            config: config.to_path_buf(),
            owned: None,
        };
        // Dropping `daemon` on a failure below kills the child.
        daemon.addr = listen_address(stderr);
        daemon
    }

    /// Kills the process with SIGKILL, as a crash would, and waits for it.
    pub fn kill(&mut self) {
        self.child
            .kill()
            .unwrap_or_else(|e| panic!("cannot kill flipd: {e}"));
        let _ = self.child.wait();
    }

    /// Sends SIGTERM.
    pub fn terminate(&self) {
        let status = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .unwrap_or_else(|e| panic!("cannot run kill: {e}"));
        assert!(status.success(), "kill -TERM failed: {status}");
    }

    /// Waits at most `within` for the process to exit; returns its exit code.
    pub fn wait_exit(&mut self, within: Duration) -> Option<i32> {
        let deadline = Instant::now() + within;
        loop {
            match self.child.try_wait() {
                Ok(Some(status)) => return status.code(),
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(20));
                }
                Ok(None) => panic!("flipd still running {within:?} after SIGTERM"),
                Err(e) => panic!("cannot wait for flipd: {e}"),
            }
        }
    }
}

impl Drop for ChildDaemon {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
        if let Some(dir) = &self.owned {
            remove_temp_dir(dir);
        }
    }
}

/// `program` run with its open-file limit, soft and hard (so that it cannot
/// raise it), at `open_files`; the caller adds its arguments.
pub fn with_open_file_limit(open_files: u32, program: &Path) -> Command {
    let mut command = Command::new("sh");
    command
        .arg("-c")
        .arg(format!("ulimit -n {open_files} && exec \"$0\" \"$@\""))
        .arg(program);
    command
}

/// Writes `<dir>/flipd.ron`: listen on port 0, the store at `<dir>/flipline.db`,
/// then `extra` settings (RON fields, each followed by a comma).
pub fn write_config(dir: &Path, extra: &str) -> PathBuf {
    let store = dir.join("flipline.db");
    let text = format!(
        "(\n    listen: \"127.0.0.1:0\",\n    workers: 2,\n    shutdown_drain_ms: 500,\n    \
         store: (path: {:?}),\n    {extra}\n)\n",
        store.display().to_string()
    );
    let path = dir.join("flipd.ron");
    std::fs::write(&path, text).unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
    path
}

/// Reads the daemon's log on a thread (which then keeps draining it, so that the
/// child never blocks on a full pipe) until the line that names the address.
fn listen_address(stderr: impl Read + Send + 'static) -> SocketAddr {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut tx = Some(tx);
        for line in BufReader::new(stderr).lines() {
            let Ok(line) = line else { break };
            if let Some(addr) = address_in(&line)
                && let Some(tx) = tx.take()
            {
                let _ = tx.send(addr);
            }
        }
    });
    rx.recv_timeout(Duration::from_secs(20))
        .unwrap_or_else(|e| panic!("flipd logged no 'listening on' line: {e}"))
}

fn address_in(line: &str) -> Option<SocketAddr> {
    let rest = line.split("listening on ").nth(1)?;
    let addr: String = rest
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.' || *c == ':')
        .collect();
    addr.parse().ok()
}

/// The `flipd` binary beside this test executable, built first.
fn flipd_binary() -> PathBuf {
    workspace_binary("flipd", "flipd")
}

/// A binary of the workspace beside this test executable (`target/<profile>/`),
/// built first with `cargo build -p <package> --bin <binary>` so that it is the
/// current code; `cargo test` builds only libraries for this crate. Without
/// cargo at hand an existing binary is used.
pub fn workspace_binary(package: &str, binary: &str) -> PathBuf {
    // Built once per test process: cargo takes a moment even when all is fresh.
    static BUILT: std::sync::Mutex<Vec<(String, PathBuf)>> = std::sync::Mutex::new(Vec::new());
    let mut built = BUILT
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some((_, path)) = built.iter().find(|(name, _)| name == binary) {
        return path.clone();
    }
    let path = build_binary(package, binary);
    built.push((binary.to_string(), path.clone()));
    path
}

fn build_binary(package: &str, binary: &str) -> PathBuf {
    let exe = std::env::current_exe().unwrap_or_else(|e| panic!("current_exe: {e}"));
    // target/<profile>/deps/e2e-<hash>
    let Some(profile_dir) = exe.parent().and_then(|deps| deps.parent()) else {
        panic!("unexpected test executable path {}", exe.display());
    };
    let path = profile_dir.join(format!("{binary}{}", std::env::consts::EXE_SUFFIX));
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let mut build = Command::new(cargo);
    build.args(["build", "--quiet", "-p", package, "--bin", binary]);
    if let Some(target_dir) = profile_dir.parent() {
        build.arg("--target-dir").arg(target_dir);
    }
    if profile_dir.file_name().is_some_and(|n| n == "release") {
        build.arg("--release");
    }
    let built = build.status().map(|s| s.success()).unwrap_or(false);
    assert!(
        built || path.exists(),
        "cannot build {binary} and {} does not exist",
        path.display()
    );
    path
}

/// Waits for a child at most `limit`, killing it past that, and returns its
/// output (so that no test can hang on a child process).
pub fn wait_bounded(mut child: std::process::Child, limit: Duration) -> std::process::Output {
    let deadline = Instant::now() + limit;
    while child.try_wait().ok().flatten().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child
        .wait_with_output()
        .unwrap_or_else(|e| panic!("wait: {e}"))
}
