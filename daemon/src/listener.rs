//! The listener actor: accepts TCP connections, enforces the connection caps
//! (in all, per address, the places kept for players: crate::admission) and
//! hands each connection to a worker thread as a new session. With a descriptor
//! table per worker there is one listener on each worker thread, and its only
//! worker is its own: a connection never leaves the table it was accepted into.
//!
//! The TLS port has listeners of its own, which do the same and then shake
//! hands on the session's thread before the session starts. The place is
//! taken at the accept, so a handshake counts against every cap as an open
//! socket does, and it must end within the login deadline, which goes on
//! counting from the accept into the session: a flood of stalled handshakes
//! holds no more, and no longer, than a flood of silent sockets.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use actix::{
    Actor, ActorContext, ArbiterHandle, AsyncContext, Context, Handler, Message, StreamHandler,
};
use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream};

use crate::admission::ConnectionSlot;
use crate::metrics::Door;
use crate::player_tls::{HandshakeFailed, PlayerTls};
use crate::rules::admission::Refusal;
use crate::rules::peer::PeerKey;
use crate::session::{self, HeldHere, Session, Shared, Socket};

/// The listener: one per port and daemon, or one per port and worker thread
/// when each has its own descriptor table.
pub struct Listener {
    listener: Option<TcpListener>,
    shared: Arc<Shared>,
    /// The TLS port's certificate; `None` on the plain port.
    tls: Option<Arc<PlayerTls>>,
    /// Where sessions go: the worker threads in turn, or (`None`) this thread,
    /// whose descriptor table the listener and its connections share.
    workers: Option<Vec<ArbiterHandle>>,
    next_worker: usize,
}

impl Listener {
    /// A listener that spreads sessions over `workers`.
    pub fn new(
        listener: TcpListener,
        shared: Arc<Shared>,
        tls: Option<Arc<PlayerTls>>,
        workers: Vec<ArbiterHandle>,
    ) -> Listener {
        Listener {
            listener: Some(listener),
            shared,
            tls,
            workers: Some(workers),
            next_worker: 0,
        }
    }

    /// A listener on a worker thread with its own descriptor table, whose
    /// sessions stay on that thread.
    pub fn on_own_table(
        listener: TcpListener,
        shared: Arc<Shared>,
        tls: Option<Arc<PlayerTls>>,
    ) -> Listener {
        Listener {
            listener: Some(listener),
            shared,
            tls,
            workers: None,
            next_worker: 0,
        }
    }

    /// A place for one more connection from `peer`, if there is room: below
    /// `max_connections`, and below what a descriptor table holds (the
    /// process's, or with a table per worker this thread's), so that a client
    /// past it hears `503` instead of waiting in the queue of a listening
    /// socket that cannot accept; and within the address's share and the
    /// places not kept for players.
    fn place(&self, peer: PeerKey) -> Result<ConnectionSlot, Refusal> {
        let (admission, live) = (&self.shared.admission, &self.shared.live);
        let capacity = self.shared.table_capacity;
        let max = live.max_connections();
        if self.workers.is_some() {
            // One table for the process: every connection counts against it.
            return admission.admit(peer, max.min(capacity), live);
        }
        if session::held_here() >= capacity {
            return Err(Refusal::Full);
        }
        admission.admit(peer, max, live)
    }

    fn admit(&mut self, stream: TcpStream, peer: SocketAddr) {
        let slot = match self.place(PeerKey::of(peer.ip())) {
            Ok(slot) => slot,
            Err(refusal) => return self.refuse(stream, peer, refusal),
        };
        let _ = stream.set_nodelay(true);
        self.shared.doors.count(match self.tls {
            Some(_) => Door::Tls,
            None => Door::Plain,
        });
        let arrival = Arrival {
            id: self.shared.next_session.fetch_add(1, Ordering::Relaxed),
            shared: Arc::clone(&self.shared),
            slot,
            came: Instant::now(),
        };
        self.hand_over(stream, peer, arrival);
    }

    /// Starts the connection's session (after its handshake, on the TLS
    /// port) here, or on the next worker thread.
    fn hand_over(&mut self, stream: TcpStream, peer: SocketAddr, arrival: Arrival) {
        let Some(workers) = &self.workers else {
            return match &self.tls {
                None => arrival.start(Socket::Plain(stream)),
                Some(tls) => drop(actix::spawn(shake_hands(stream, Arc::clone(tls), arrival))),
            };
        };
        let stream = match stream.into_std() {
            Ok(stream) => stream,
            Err(e) => return tracing::warn!(%peer, error = %e, "could not hand over a connection"),
        };
        let Some(worker) = workers.get(self.next_worker % workers.len().max(1)) else {
            return tracing::error!("no worker threads");
        };
        self.next_worker = self.next_worker.wrapping_add(1);
        let Some(tls) = &self.tls else {
            let Arrival {
                id, shared, slot, ..
            } = arrival;
            return Session::spawn(stream, id, shared, slot, worker);
        };
        let tls = Arc::clone(tls);
        worker.spawn(async move {
            match tokio::net::TcpStream::from_std(stream) {
                Ok(stream) => shake_hands(stream, tls, arrival).await,
                Err(e) => tracing::warn!(error = %e, "could not adopt a connection"),
            }
        });
    }
}

/// A connection admitted, on its way to becoming a session.
struct Arrival {
    id: u64,
    shared: Arc<Shared>,
    /// Its place, given back if it never becomes a session.
    slot: ConnectionSlot,
    /// When it was accepted: its login deadline counts from then.
    came: Instant,
}

impl Arrival {
    fn start(self, socket: Socket) {
        Session::start(socket, self.id, self.shared, self.slot, self.came);
    }
}

/// The TLS handshake of a connection to the TLS port, on the thread its
/// session will run on, then the session. A handshake that fails or outlives
/// the login deadline closes the connection and gives its place back; nobody
/// else notices.
async fn shake_hands(stream: TcpStream, tls: Arc<PlayerTls>, arrival: Arrival) {
    let held = HeldHere::now();
    let deadline = arrival.shared.live.login_deadline();
    let within = deadline.saturating_sub(arrival.came.elapsed());
    let id = arrival.id;
    match tls.handshake(stream, within).await {
        Ok(stream) => {
            // The session counts itself from here.
            drop(held);
            arrival.start(Socket::Tls(Box::new(stream)));
        }
        Err(HandshakeFailed::Refused(error)) => {
            arrival.shared.doors.count(Door::HandshakeRefused);
            tracing::debug!(id, %error, "TLS handshake failed");
        }
        Err(HandshakeFailed::Deadline) => {
            arrival.shared.doors.count(Door::HandshakeLate);
            tracing::debug!(id, "TLS handshake not done within the login deadline");
        }
    }
}

impl Listener {
    /// Tells a connection past a cap why it is closed, and closes it.
    fn refuse(&self, stream: TcpStream, peer: SocketAddr, refusal: Refusal) {
        let (max, capacity) = (
            self.shared.live.max_connections(),
            self.shared.table_capacity,
        );
        let line = match refusal {
            Refusal::Full => {
                if capacity < max && once_a_minute() {
                    // The open-file limit, not the operator's own cap, turns
                    // people away: this is when it matters.
                    tracing::warn!(
                        max,
                        capacity,
                        "the open-file limit refuses connections past {capacity}: raise it \
                         (ulimit -n, LimitNOFILE= in the service) to hold max_connections"
                    );
                }
                tracing::info!(%peer, max, capacity, "refusing a connection: server full");
                "ERR 503 server full\n".to_string()
            }
            // The two below are what a flood from one or many addresses
            // meets: debug, so that the flood does not fill the log too.
            Refusal::KeptForPlayers => {
                tracing::debug!(%peer, max, "refusing a connection: the rest is kept for players");
                "ERR 503 server full: the places left are kept for players\n".to_string()
            }
            Refusal::PerAddress(most) => {
                tracing::debug!(%peer, most, "refusing a connection: too many from its address");
                format!("ERR 503 too many connections from your address (at most {most})\n")
            }
        };
        // The TLS port's clients would read the line as a broken handshake,
        // and shaking hands first would spend the most on whom the server
        // can least take: they are only closed.
        if self.tls.is_none() {
            actix::spawn(say_and_close(stream, line));
        }
    }
}

/// Whether a minute has passed since this last said yes (the first time: yes),
/// so that a warning repeated by every refused connection is logged once a
/// minute.
fn once_a_minute() -> bool {
    use std::sync::OnceLock;
    use std::sync::atomic::AtomicU64;
    use std::time::Instant;
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let now = EPOCH.get_or_init(Instant::now).elapsed().as_secs();
    let next = NEXT.load(Ordering::Relaxed);
    now >= next
        && NEXT
            .compare_exchange(next, now + 60, Ordering::Relaxed, Ordering::Relaxed)
            .is_ok()
}

/// Writes `line` and closes.
async fn say_and_close(mut stream: TcpStream, line: String) {
    let _ = stream.write_all(line.as_bytes()).await;
    let _ = stream.shutdown().await;
}

impl Actor for Listener {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        let Some(listener) = self.listener.take() else {
            return;
        };
        let accepts = futures_util::stream::unfold(listener, |listener| async move {
            let accepted = listener.accept().await;
            if let Err(e) = &accepted {
                // Out of file descriptors, say: back off instead of spinning.
                tracing::warn!(error = %e, "accept failed");
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            Some((accepted, listener))
        });
        ctx.add_stream(accepts);
    }
}

impl StreamHandler<std::io::Result<(TcpStream, SocketAddr)>> for Listener {
    fn handle(&mut self, item: std::io::Result<(TcpStream, SocketAddr)>, _: &mut Context<Self>) {
        if let Ok((stream, peer)) = item {
            self.admit(stream, peer);
        }
    }
}

/// Stop accepting: the listening socket closes.
#[derive(Message)]
#[rtype(result = "()")]
pub struct StopAccepting;

impl Handler<StopAccepting> for Listener {
    type Result = ();

    fn handle(&mut self, _: StopAccepting, ctx: &mut Context<Self>) {
        ctx.stop();
    }
}
