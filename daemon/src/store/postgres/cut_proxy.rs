//! A loopback proxy between the writer and the test server that cuts the
//! connection at a commit: either after passing it on (the server commits;
//! the writer never hears so) or before (the server rolls back; the writer
//! cannot tell). It is how the tests put a commit in doubt for real. The
//! commit is a `COMMIT`, or for a batch of moves alone (one statement, its
//! own transaction) whatever the client sends next once armed.
//!
//! It also silences the connections open so far: from then on nothing
//! passes either way and nothing is closed, as when a firewall or a NAT
//! forgets a connection and drops its packets without a word.

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

/// Where to cut.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cut {
    /// Pass everything on.
    Never,
    /// Pass the next `COMMIT` on, then cut before its answer comes back.
    AfterCommit,
    /// Cut before the next `COMMIT` reaches the server.
    BeforeCommit,
    /// Pass the next request on, whatever it is, then cut.
    AfterNext,
    /// Cut before the next request reaches the server.
    BeforeNext,
}

/// The proxy: listens on loopback, one pair of threads a connection.
pub struct CutProxy {
    pub addr: SocketAddr,
    cut: Arc<Mutex<Cut>>,
    /// While set, new connections are closed at once: the server is "down".
    down: Arc<AtomicBool>,
    /// Connections numbered below this pass nothing on (see
    /// [`CutProxy::silence`]); the next connection's number.
    silence: Arc<Silence>,
}

/// Which connections are silenced.
#[derive(Default)]
struct Silence {
    below: AtomicUsize,
    next: AtomicUsize,
}

impl Silence {
    fn silenced(&self, connection: usize) -> bool {
        connection < self.below.load(Ordering::Relaxed)
    }
}

/// The simple-protocol message `COMMIT` as tokio-postgres sends it.
const COMMIT: &[u8] = b"Q\0\0\0\x0bCOMMIT\0";

impl CutProxy {
    /// Starts a proxy to `server`.
    pub fn start(server: SocketAddr) -> CutProxy {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let cut = Arc::new(Mutex::new(Cut::Never));
        let down = Arc::new(AtomicBool::new(false));
        let (shared, refusing) = (Arc::clone(&cut), Arc::clone(&down));
        let silence = Arc::new(Silence::default());
        let silencing = Arc::clone(&silence);
        std::thread::spawn(move || {
            for client in listener.incoming().flatten() {
                if refusing.load(Ordering::Relaxed) {
                    continue;
                }
                let Ok(upstream) = TcpStream::connect(server) else {
                    continue;
                };
                let number = silencing.next.fetch_add(1, Ordering::Relaxed);
                let link = Link {
                    cut: Arc::clone(&shared),
                    silence: Arc::clone(&silencing),
                    number,
                };
                relay(client, upstream, link);
            }
        });
        CutProxy {
            addr,
            cut,
            down,
            silence,
        }
    }

    /// From now on the connections open so far pass nothing either way,
    /// and stay open; new ones pass as before.
    pub fn silence(&self) {
        let next = self.silence.next.load(Ordering::Relaxed);
        self.silence.below.store(next, Ordering::Relaxed);
    }

    /// Closes every new connection at once from now on.
    pub fn go_down(&self) {
        self.down.store(true, Ordering::Relaxed);
    }

    /// Cuts the next `COMMIT` as `cut` says (once).
    pub fn arm(&self, cut: Cut) {
        *self.cut.lock().unwrap_or_else(PoisonError::into_inner) = cut;
    }
}

/// One relayed connection: the proxy's cut and silence, and its number.
#[derive(Clone)]
struct Link {
    cut: Arc<Mutex<Cut>>,
    silence: Arc<Silence>,
    number: usize,
}

fn relay(client: TcpStream, upstream: TcpStream, link: Link) {
    let (Ok(client_back), Ok(upstream_back)) = (client.try_clone(), upstream.try_clone()) else {
        return;
    };
    let back = link.clone();
    std::thread::spawn(move || copy(upstream_back, client_back, &back));
    std::thread::spawn(move || forward(client, upstream, &link));
}

/// Server to client, as it comes (nothing once silenced).
fn copy(mut from: TcpStream, mut to: TcpStream, link: &Link) {
    let mut buffer = [0u8; 16 * 1024];
    while let Ok(n @ 1..) = from.read(&mut buffer) {
        if link.silence.silenced(link.number) {
            continue;
        }
        if to.write_all(&buffer[..n]).is_err() {
            break;
        }
    }
    let _ = to.shutdown(Shutdown::Both);
}

/// Client to server, cutting both ends at an armed `COMMIT` (nothing once
/// silenced).
fn forward(mut from: TcpStream, mut to: TcpStream, link: &Link) {
    let cut = &link.cut;
    let mut buffer = [0u8; 16 * 1024];
    while let Ok(n @ 1..) = from.read(&mut buffer) {
        if link.silence.silenced(link.number) {
            continue;
        }
        let chunk = &buffer[..n];
        let at = chunk.windows(COMMIT.len()).position(|w| w == COMMIT);
        let armed = *cut.lock().unwrap_or_else(PoisonError::into_inner);
        let (pass, cut_here) = match (at, armed) {
            (Some(_), Cut::AfterCommit) | (_, Cut::AfterNext) => (chunk, true),
            (Some(at), Cut::BeforeCommit) => (&chunk[..at], true),
            (_, Cut::BeforeNext) => (&chunk[..0], true),
            _ => (chunk, false),
        };
        if cut_here {
            *cut.lock().unwrap_or_else(PoisonError::into_inner) = Cut::Never;
            // The client loses its connection first, so that no answer can
            // reach it; then the server gets what was passed, and the end
            // of the stream after it (a FIN, after the data).
            let _ = from.shutdown(Shutdown::Both);
            let _ = to.write_all(pass);
            let _ = to.shutdown(Shutdown::Write);
            return;
        }
        if to.write_all(pass).is_err() {
            break;
        }
    }
    let _ = to.shutdown(Shutdown::Both);
}
