//! What the tests that run the `flip` binary share: a scripted server on a
//! free loopback port, and temporary data directories. Every read is bounded
//! in time.

// Each test binary uses its own part of this module.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// How long any one step may take: a guard against a hang, not a claim
/// about speed, so generous that a loaded machine never reaches it.
pub const STEP: Duration = Duration::from_secs(60);

/// The server's side: a listener on a free loopback port.
pub struct FakeServer {
    listener: TcpListener,
}

impl FakeServer {
    pub fn start() -> FakeServer {
        FakeServer::start_at("127.0.0.1:0")
    }

    /// A server on `addr`: one started again where another was (a daemon
    /// restarted on its port).
    pub fn start_at(addr: &str) -> FakeServer {
        let listener = TcpListener::bind(addr).unwrap_or_else(|e| panic!("bind {addr}: {e}"));
        listener
            .set_nonblocking(true)
            .unwrap_or_else(|e| panic!("{e}"));
        FakeServer { listener }
    }

    pub fn addr(&self) -> String {
        let addr = self.listener.local_addr().unwrap_or_else(|e| panic!("{e}"));
        addr.to_string()
    }

    /// The next connection, greeted as flipd greets.
    pub fn accept(&self) -> Conn {
        let deadline = Instant::now() + STEP;
        loop {
            match self.listener.accept() {
                Ok((stream, _)) => {
                    stream
                        .set_nonblocking(false)
                        .unwrap_or_else(|e| panic!("{e}"));
                    stream
                        .set_read_timeout(Some(STEP))
                        .unwrap_or_else(|e| panic!("{e}"));
                    let reader =
                        BufReader::new(stream.try_clone().unwrap_or_else(|e| panic!("{e}")));
                    let mut conn = Conn { stream, reader };
                    conn.send("HELLO flipline 1");
                    return conn;
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    assert!(Instant::now() < deadline, "flip did not connect");
                    std::thread::sleep(Duration::from_millis(10));
                }
                Err(e) => panic!("accept: {e}"),
            }
        }
    }
}

/// One connection from flip.
pub struct Conn {
    stream: TcpStream,
    reader: BufReader<TcpStream>,
}

impl Conn {
    pub fn send(&mut self, line: &str) {
        self.stream
            .write_all(format!("{line}\n").as_bytes())
            .unwrap_or_else(|e| panic!("cannot send {line:?}: {e}"));
    }

    /// The next line flip sends, without its ending.
    pub fn line(&mut self) -> String {
        let mut line = String::new();
        match self.reader.read_line(&mut line) {
            Ok(n) if n > 0 => line.trim_end().to_string(),
            other => panic!("flip sent no line: {other:?}"),
        }
    }

    pub fn expect(&mut self, want: &str) {
        assert_eq!(self.line(), want);
    }
}

/// A fresh directory of this test's own, removed when dropped.
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> TempDir {
        let dir = std::env::temp_dir().join(format!("flip-fake-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{e}"));
        TempDir(dir)
    }

    pub fn secret_file(&self) -> PathBuf {
        self.0.join("flipline").join("guest-secrets")
    }

    pub fn history_file(&self) -> PathBuf {
        self.0.join("flipline").join("history.txt")
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The start position of othello as a BOARD line's cells and side.
pub const START_BOARD: &str = "---------------------------OX------XO--------------------------- X";
