//! The session actor: one per connection. It reads lines, parses commands, keeps
//! replies in command order, forwards game commands to the game's actor and writes
//! whatever the games and the lobby tell it through a bounded outbound queue.
//!
//! Ordering: a command that needs another actor's answer is awaited with
//! `ctx.wait`, which holds back both the next input line and incoming events until
//! the reply is written. So each reply comes in command order, and the events a
//! command causes come after its `OK`.
//!
//! The session's files go by job: `socket` (the connection, plain or TLS),
//! `io` (the `Reader` and the `Flusher`, the
//! futures that read and write the socket in this actor's context), `limits`
//! (the connection count, with the session's `Drop` that gives its place back,
//! the rate limit, the idle check), `deadline` (the login deadline: one queue
//! and one timer per thread, not per connection) and `cmd` (the commands, a
//! function each, in files by whom they ask). This file keeps the
//! actor itself: its state, its start and stop, the messages it is told, and
//! the helpers every command replies and asks with.

mod cmd;
mod deadline;
mod io;
mod limits;
mod socket;

use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use std::time::Duration;

use bytes::BytesMut;

use actix::fut::{ActorFutureExt, WrapFuture};
use actix::{
    Actor, ActorContext, ArbiterHandle, AsyncContext, Context, Handler, Message, Recipient,
    WeakAddr,
};
use flipline::protocol::{ErrorCode, GREETING, ProtocolError};

use tokio::net::TcpStream;

use crate::accounts::Accounts;
use crate::admission::{Admission, ConnectionSlot};
use crate::codec::LineCodec;
use crate::lazy_list::LazyList;
use crate::messages::{
    Answer, Answered, ChallengeOp, Connected, Create, Find, Gone, Join, Leave, ListGames,
    ListPlayers, Login, MarkedBot, Name, Rematch, Seek, ToSession, TourneyOp,
};
use crate::outbox::{Outbox, QueueError};
use crate::rules::peer::PeerKey;
use crate::rules::refusal::Refusal;
use crate::store::Store;
use flipline::protocol::Reply;

use io::{Flusher, Reader};
use limits::{HELD_HERE, Moment, TokenBucket};
pub use limits::{HeldHere, held_here};
pub use socket::Socket;

/// A connection as games and the lobby keep it: on this daemon, a weak
/// address (one pointer, no allocation, so that a seat stays small),
/// upgraded for each message; on another node of a cluster, a spectator
/// reached over the bus. The messages are generic in it; this is the
/// daemon's choice.
#[derive(Clone, Debug)]
pub enum SessionRef {
    Here(WeakAddr<Session>),
    Far(Arc<crate::bus::FarSession>),
}

/// A game's route as this daemon's sessions, games and lobby hold it.
pub type SeatRef = crate::messages::SeatRef<SessionRef>;

/// What games and the lobby tell a session, as they write it.
pub type SessionNews = ToSession<SessionRef>;

/// What sessions and the lobby tell a game, as they write it.
pub type GameRequest = crate::messages::ToGame<SessionRef>;

/// Telling a session something, from wherever its address is kept.
pub trait Reach {
    /// Tells the session `msg`, if it is still there.
    fn tell(&self, msg: SessionNews);
    /// Whether the session is gone.
    fn is_gone(&self) -> bool;
}

impl Reach for SessionRef {
    fn tell(&self, msg: SessionNews) {
        match self {
            SessionRef::Here(session) => {
                if let Some(session) = session.upgrade() {
                    session.do_send(msg);
                }
            }
            // A connection elsewhere hears lines and, a player, its seats;
            // its own node closes it and checks it for idleness.
            SessionRef::Far(far) => match msg {
                ToSession::Deliver(text) => far.tell(&text),
                ToSession::Seated(seat) => {
                    far.sits_at(Arc::downgrade(&seat) as std::sync::Weak<dyn crate::bus::Plies>);
                    far.seated(seat.game);
                }
                // A player elsewhere seeks on its own node.
                ToSession::SitThere(_) | ToSession::IdleCheck | ToSession::Shutdown => {}
            },
        }
    }

    fn is_gone(&self) -> bool {
        match self {
            SessionRef::Here(session) => session.upgrade().is_none(),
            SessionRef::Far(far) => far.is_gone(),
        }
    }
}

/// The lobby as sessions reach it: a recipient per request, so that the
/// session module names no lobby type (the lobby names the session's).
pub struct LobbyPort {
    /// A connection opened.
    pub connected: Recipient<Connected<SessionRef>>,
    /// A connection closed.
    pub gone: Recipient<Gone>,
    /// `LOGIN`.
    pub login: Recipient<Login>,
    /// `NEW`.
    pub create: Recipient<Create<SessionRef>>,
    /// `SEEK`.
    pub seek: Recipient<Seek<SessionRef>>,
    /// `JOIN`.
    pub join: Recipient<Join<SessionRef>>,
    /// `LEAVE`.
    pub leave: Recipient<Leave>,
    /// `REMATCH`.
    pub rematch: Recipient<Rematch<SessionRef>>,
    /// A game's route, for `WATCH`.
    pub find: Recipient<Find<SessionRef>>,
    /// `LIST`.
    pub list_games: Recipient<ListGames>,
    /// `WHO`.
    pub list_players: Recipient<ListPlayers>,
    /// `CHALLENGE`, `ACCEPT`, `DECLINE`, `CANCEL`.
    pub challenge: Recipient<ChallengeOp<SessionRef>>,
    /// `ACCOUNT bot`, once stored.
    pub marked_bot: Recipient<MarkedBot>,
    /// `TOURNEY`.
    pub tourney: Recipient<TourneyOp>,
    /// A login's seat in a game this cluster node has just taken over.
    pub taken_over: Recipient<crate::messages::AwaitTakenOver>,
}

/// What every session shares.
pub struct Shared {
    /// The settings SIGHUP changes: read these, not `config`'s.
    pub live: Arc<crate::reload::live::Live>,
    /// The lobby.
    pub lobby: LobbyPort,
    /// The connection places: who holds them, by address, logged in or not.
    pub admission: Arc<Admission>,
    /// The next connection's number (each listener takes from it).
    pub next_session: AtomicU64,
    /// Connections one descriptor table holds: its open-file limit less what
    /// it keeps for other things.
    pub table_capacity: usize,
    /// The store, for `HISTORY`.
    pub store: Store,
    /// Password checks for `LOGIN`.
    pub accounts: Arc<Accounts>,
    /// Moves slow inside the daemon, for the log.
    pub slow_moves: Arc<crate::stall_watch::SlowMoves>,
    /// A cluster's node (`cluster.node`): a name online is the cluster's,
    /// taken in the store's names online as well as in the lobby.
    pub clustered: bool,
    /// On a cluster's node reaching the others (`cluster.nats`): the
    /// games other nodes own, for `WATCH` and `JOIN`.
    pub elsewhere: Option<Elsewhere>,
    /// Where the plain port takes passwords (`tls.plain_passwords`).
    pub plain_passwords: crate::config::PlainPasswords,
    /// The TLS port, once bound: what a password refused on the plain
    /// port is told to use.
    pub tls_port: std::sync::OnceLock<std::net::SocketAddr>,
    /// The listeners' counts, for the metrics.
    pub doors: Arc<crate::metrics::Doors>,
}

/// The games other nodes of a cluster own, as sessions reach them.
pub struct Elsewhere {
    /// A game's route, for `WATCH`.
    pub find: Recipient<crate::messages::FindElsewhere<SessionRef>>,
    /// `JOIN`.
    pub sit: Recipient<crate::messages::SitElsewhere<SessionRef>>,
    /// `REMATCH` of a game there.
    pub rematch: Recipient<crate::messages::RematchElsewhere>,
    /// `LEAVE` of a seat there.
    pub leave: Recipient<crate::messages::LeaveElsewhere>,
    /// A login whose seat is kept there.
    pub kept: Recipient<crate::messages::KeptElsewhere>,
    /// `LIST` of every node's games.
    pub list_games: Recipient<crate::messages::ListGames>,
    /// `WHO` of every node's names.
    pub list_players: Recipient<crate::messages::ListPlayers>,
    /// A connection closed.
    pub gone: Recipient<crate::messages::GoneElsewhere>,
}

/// How long a closing connection may take to write its last lines.
const LINGER: Duration = Duration::from_secs(5);

/// One connection (see the module docs). Every idle connection has one, so its
/// size counts: it sits in the session's task with actix's context, and tokio
/// rounds tasks up to 128 bytes.
pub struct Session {
    id: u64,
    shared: Arc<Shared>,
    /// The client's socket, whole: read by the `Reader` and written by the
    /// `Flusher`, both in this context. `None` once handed over to close.
    socket: Option<Socket>,
    /// Read and not yet handled.
    input: BytesMut,
    codec: LineCodec,
    outbox: Outbox,
    /// Where the connection comes from, as the per-address limits count it.
    peer: PeerKey,
    /// Boxed: one pointer, not two, in every session (the box costs a
    /// logged-in connection 16 bytes of heap, the two words a task size
    /// class for every connection).
    name: Option<Box<Name>>,
    seat: Option<SeatRef>,
    /// The games this connection watches, most recent last.
    watching: LazyList<SeatRef>,
    bucket: TokenBucket,
    last_input: Moment,
}

impl Session {
    /// Starts a session for `stream` on `worker`. The socket is handed over as a
    /// std stream because each worker thread has its own event loop.
    pub fn spawn(
        stream: std::net::TcpStream,
        id: u64,
        shared: Arc<Shared>,
        slot: ConnectionSlot,
        worker: &ArbiterHandle,
    ) {
        let came = std::time::Instant::now();
        worker.spawn(async move {
            match TcpStream::from_std(stream) {
                Ok(stream) => Session::start(Socket::Plain(stream), id, shared, slot, came),
                Err(e) => tracing::warn!(error = %e, "could not adopt a connection"),
            }
        });
    }

    /// Starts a session for `socket` on this thread, whose event loop the
    /// socket belongs to; its login deadline counts from `came` (when it was
    /// accepted: a TLS handshake has used some of it).
    pub fn start(
        socket: Socket,
        id: u64,
        shared: Arc<Shared>,
        slot: ConnectionSlot,
        came: std::time::Instant,
    ) {
        let (Ok(address), Some(peer)) = (socket.tcp().peer_addr(), slot.peer()) else {
            return;
        };
        // Later lines about this connection name it by its id only: the
        // address is not kept, an idle connection should be small.
        tracing::debug!(%address, id, tls = socket.is_tls(), "connected");
        HELD_HERE.with(|held| held.set(held.get() + 1));
        crate::homed::create(move |ctx: &mut Context<Session>| {
            ctx.spawn(Reader);
            ctx.spawn(Flusher);
            slot.hand_over();
            let live = &shared.live;
            deadline::expect_login(ctx.address().downgrade(), live, Moment::of(came));
            Session {
                id,
                input: BytesMut::new(),
                codec: LineCodec::new(live.max_line_bytes()),
                bucket: TokenBucket::new(live.rate_limit()),
                shared,
                socket: Some(socket),
                outbox: Outbox::default(),
                peer,
                name: None,
                seat: None,
                watching: LazyList::default(),
                last_input: Moment::now(),
            }
        });
    }

    /// Queues text for the client; a client that does not read is disconnected.
    fn send_text(&mut self, ctx: &mut Context<Self>, text: Arc<str>) {
        match self.outbox.push(text, self.shared.live.outbound_bound()) {
            Ok(()) => {}
            Err(QueueError::Full) => {
                tracing::info!(id = self.id, "disconnecting a client that does not read");
                self.outbox.abandon();
                ctx.stop();
            }
            Err(QueueError::Closed) => ctx.stop(),
        }
    }

    fn reply(&mut self, ctx: &mut Context<Self>, reply: Answered) {
        // The reply to every move: one text per thread (its count stays in
        // that core's cache) rather than two allocations a move.
        thread_local! {
            static OK: crate::outbox::Text = Arc::from("OK\n");
        }
        let text = match reply {
            Ok(Answer {
                data,
                ok: Reply::Done,
            }) if data.is_empty() => {
                return self.send_text(ctx, OK.with(Arc::clone));
            }
            Ok(Answer { data, ok }) => format!("{data}{ok}\n"),
            Err(e) => {
                crate::metrics::counters::refused(e.code);
                format!("{e}\n")
            }
        };
        self.send_text(ctx, Arc::from(text));
    }

    fn error(&mut self, ctx: &mut Context<Self>, code: ErrorCode, message: impl Into<String>) {
        self.reply(ctx, Err(ProtocolError::new(code, message)));
    }

    /// Replies with a refusal the rules word (`rules::refusal`).
    fn refuse(&mut self, ctx: &mut Context<Self>, refusal: Refusal) {
        self.reply(ctx, Err(refusal.into()));
    }

    /// Sends `msg` to `to` and hands the answer to `then`, holding back input and
    /// events meanwhile (see the module docs).
    fn ask<M, F>(&mut self, ctx: &mut Context<Self>, to: &Recipient<M>, msg: M, then: F)
    where
        M: Message + Send + 'static,
        M::Result: Send,
        F: FnOnce(&mut Session, &mut Context<Session>, M::Result) + 'static,
    {
        let request = to.send(msg);
        self.await_answer(ctx, request, then);
    }

    /// Holds back everything else until `request` is answered, then `then`.
    fn await_answer<T, R, F>(&mut self, ctx: &mut Context<Self>, request: R, then: F)
    where
        R: std::future::Future<Output = Result<T, actix::MailboxError>> + 'static,
        F: FnOnce(&mut Session, &mut Context<Session>, T) + 'static,
    {
        let request = request
            .into_actor(self)
            .map(move |answer, act, ctx| match answer {
                Ok(answer) => then(act, ctx, answer),
                Err(_) => act.refuse(ctx, Refusal::GameGone),
            });
        ctx.wait(request);
    }

    /// Whether passwords are refused on this connection: the plain port,
    /// from anywhere but 127.0.0.1 or ::1, where `tls.plain_passwords`
    /// keeps them to loopback. Asked of the socket when a password comes
    /// rather than kept in every session; a socket that cannot say where it
    /// goes is refused.
    fn passwords_refused(&self) -> bool {
        if self.shared.plain_passwords != crate::config::PlainPasswords::Loopback {
            return false;
        }
        match &self.socket {
            Some(Socket::Plain(stream)) => !stream.peer_addr().is_ok_and(|peer| local(peer.ip())),
            Some(Socket::Tls(_)) => false,
            None => true,
        }
    }

    /// The name logged in with, if any.
    fn login_name(&self) -> Option<&Name> {
        self.name.as_deref()
    }

    /// This session as games and the lobby keep it.
    fn own_ref(ctx: &Context<Self>) -> SessionRef {
        SessionRef::Here(ctx.address().downgrade())
    }
}

/// Whether `address` is the loopback address a program on this machine
/// connects from: 127.0.0.1 or ::1. The rest of 127.0.0.0/8 is this machine
/// too, but nothing connects from there unless it binds it on purpose, so
/// it is counted as elsewhere (stricter, and what lets the tests be another
/// peer).
fn local(address: std::net::IpAddr) -> bool {
    use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
    match address.to_canonical() {
        IpAddr::V4(v4) => v4 == Ipv4Addr::LOCALHOST,
        IpAddr::V6(v6) => v6 == Ipv6Addr::LOCALHOST,
    }
}

impl Actor for Session {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        self.shared.lobby.connected.do_send(Connected {
            id: self.id,
            session: Session::own_ref(ctx),
            worker: actix::Arbiter::current(),
        });
        self.send_text(ctx, Arc::from(format!("{GREETING}\n")));
    }

    fn stopped(&mut self, _: &mut Context<Self>) {
        // The lobby tells the game this player sits at (it knows which);
        // a game on another node hears it over the bus.
        self.seat = None;
        self.unwatch_all();
        if let Some(elsewhere) = &self.shared.elsewhere {
            elsewhere
                .gone
                .do_send(crate::messages::GoneElsewhere(self.id));
        }
        // The name stays: `Drop` gives back the place of a logged-in
        // connection.
        self.release_in_cluster();
        self.shared.lobby.gone.do_send(Gone {
            id: self.id,
            name: self.login_name().cloned(),
            closed: true,
        });
        // The last lines (a reply to QUIT, a notice) still go out, briefly.
        if let Some(socket) = self.socket.take() {
            let farewell = socket.is_tls();
            self.outbox.close(socket, LINGER, farewell);
        }
        tracing::debug!(id = self.id, "disconnected");
    }
}

impl Handler<SessionNews> for Session {
    type Result = ();

    fn handle(&mut self, msg: SessionNews, ctx: &mut Context<Self>) {
        match msg {
            ToSession::Deliver(text) => self.send_text(ctx, text),
            ToSession::Seated(seat) => self.seat = Some(seat),
            ToSession::SitThere(game) => self.sit_there(ctx, game),
            ToSession::IdleCheck => self.close_if_idle(ctx),
            ToSession::Shutdown => {
                self.send_text(ctx, Arc::from("INFO shutting down\n"));
                ctx.stop();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    /// Every connection is a session's tokio task: the actor plus actix's
    /// 336-byte context and tokio's header and trailer, rounded up to
    /// 128-byte lines. At 208 bytes the task is 640 (heaptrack, 2026-12-06);
    /// past it, 768, for every connection held. (Built with the
    /// whole workspace, tokio's `TcpStream` is 8 bytes larger than with
    /// this crate alone: `cargo test --workspace` is the measure.)
    #[test]
    fn a_session_fits_its_task_size_class() {
        assert!(std::mem::size_of::<super::Session>() <= 208);
    }
}
