//! The session actor: one per connection. It reads lines, parses commands, keeps
//! replies in command order, forwards game commands to the game's actor and writes
//! whatever the games and the lobby tell it through a bounded outbound queue.
//!
//! Ordering: a command that needs another actor's answer is awaited with
//! `ctx.wait`, which holds back both the next input line and incoming events until
//! the reply is written. So each reply comes in command order, and the events a
//! command causes come after its `OK`.
//!
//! The session's files go by job: `io` (the `Reader` and the `Flusher`, the
//! futures that read and write the socket in this actor's context) and
//! `limits` (the connection count, with the session's `Drop` that gives its
//! place back, the rate limit, the idle check). This file keeps the actor
//! itself: its state, its start and stop, the messages it is told, the helpers
//! every command replies and asks with, and the commands.

mod io;
mod limits;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize};
use std::time::{Duration, Instant};

use bytes::BytesMut;

use actix::dev::ToEnvelope;
use actix::fut::{ActorFutureExt, WrapFuture};
use actix::{Actor, ActorContext, Addr, ArbiterHandle, AsyncContext, Context, Handler, Message};
use flipline::protocol::{
    COMMAND_HELP, Command, ErrorCode, Event, GREETING, GameStatus, ProtocolError,
};

use tokio::net::TcpStream;

use crate::accounts::Accounts;
use crate::codec::{Line, LineCodec};
use crate::config::Config;
use crate::lazy_list::LazyList;
use crate::lobby::Lobby;
use crate::messages::*;
use crate::outbox::{Outbox, QueueError};
use crate::rules::lobby::Left;
use crate::store::{GameRecord, Status, Store};

use io::{Flusher, Reader};
pub use limits::{ConnectionSlot, held_here};
use limits::{HELD_HERE, TokenBucket};

/// What every session shares.
pub struct Shared {
    /// Daemon settings.
    pub config: Arc<Config>,
    /// The lobby.
    pub lobby: Addr<Lobby>,
    /// Connections open now.
    pub connections: Arc<AtomicUsize>,
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
    pub slow_moves: Arc<crate::watch::SlowMoves>,
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
    socket: Option<TcpStream>,
    /// Read and not yet handled.
    input: BytesMut,
    codec: LineCodec,
    outbox: Outbox,
    name: Option<Name>,
    seat: Option<SeatRef>,
    /// The games this connection watches, most recent last.
    watching: LazyList<SeatRef>,
    bucket: TokenBucket,
    last_input: Instant,
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
        worker.spawn(async move {
            match TcpStream::from_std(stream) {
                Ok(stream) => Session::start(stream, id, shared, slot),
                Err(e) => tracing::warn!(error = %e, "could not adopt a connection"),
            }
        });
    }

    /// Starts a session for `stream` on this thread, whose event loop the
    /// stream belongs to.
    pub fn start(stream: TcpStream, id: u64, shared: Arc<Shared>, slot: ConnectionSlot) {
        let Ok(peer) = stream.peer_addr() else { return };
        // Later lines about this connection name it by its id only: the
        // address is not kept, an idle connection should be small.
        tracing::debug!(%peer, id, "connected");
        HELD_HERE.with(|held| held.set(held.get() + 1));
        Session::create(move |ctx: &mut Context<Session>| {
            ctx.spawn(Reader);
            ctx.spawn(Flusher);
            slot.hand_over();
            let config = &shared.config;
            Session {
                id,
                input: BytesMut::new(),
                codec: LineCodec::new(config.max_line_bytes),
                bucket: TokenBucket::new(config.rate_limit),
                shared,
                socket: Some(stream),
                outbox: Outbox::default(),
                name: None,
                seat: None,
                watching: LazyList::default(),
                last_input: Instant::now(),
            }
        });
    }

    /// Queues text for the client; a client that does not read is disconnected.
    fn send_text(&mut self, ctx: &mut Context<Self>, text: Arc<str>) {
        match self
            .outbox
            .push(text, self.shared.config.outbound_queue_lines)
        {
            Ok(()) => {}
            Err(QueueError::Full) => {
                tracing::info!(id = self.id, "disconnecting a client that does not read");
                self.outbox.abandon();
                ctx.stop();
            }
            Err(QueueError::Closed) => ctx.stop(),
        }
    }

    fn reply(&mut self, ctx: &mut Context<Self>, reply: Reply) {
        // The reply to every move: one text per thread (its count stays in
        // that core's cache) rather than two allocations a move.
        thread_local! {
            static OK: crate::outbox::Text = Arc::from("OK\n");
        }
        let text = match reply {
            Ok(Answer { data, ok }) if ok.is_empty() && data.is_empty() => {
                return self.send_text(ctx, OK.with(Arc::clone));
            }
            Ok(Answer { data, ok }) if ok.is_empty() => format!("{data}OK\n"),
            Ok(Answer { data, ok }) => format!("{data}OK {ok}\n"),
            Err(e) => format!("{e}\n"),
        };
        self.send_text(ctx, Arc::from(text));
    }

    fn error(&mut self, ctx: &mut Context<Self>, code: ErrorCode, message: impl Into<String>) {
        self.reply(ctx, Err(ProtocolError::new(code, message)));
    }

    /// Sends `msg` to `addr` and hands the answer to `then`, holding back input and
    /// events meanwhile (see the module docs).
    fn ask<A, M, F>(&mut self, ctx: &mut Context<Self>, addr: &Addr<A>, msg: M, then: F)
    where
        A: Actor + actix::Handler<M>,
        A::Context: ToEnvelope<A, M>,
        M: Message + Send + 'static,
        M::Result: Send,
        F: FnOnce(&mut Session, &mut Context<Session>, M::Result) + 'static,
    {
        let request = addr.send(msg);
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
                Err(_) => act.error(ctx, ErrorCode::NotFound, "that game has ended"),
            });
        ctx.wait(request);
    }

    /// This session as games and the lobby keep it.
    fn own_ref(ctx: &Context<Self>) -> SessionRef {
        SessionRef::new(ctx.address().downgrade().recipient())
    }
}

impl Session {
    fn on_line(&mut self, ctx: &mut Context<Self>, line: Line) {
        if matches!(&line, Line::Text(text) if text.trim().is_empty()) {
            return;
        }
        if !self.bucket.take() {
            return self.error(ctx, ErrorCode::TooMany, "too many commands, slow down");
        }
        match line {
            Line::Text(text) => match Command::parse(&text) {
                Ok(command) if command.needs_login() && self.name.is_none() => {
                    self.error(ctx, ErrorCode::Unauthorized, "LOGIN first")
                }
                Ok(command) => self.dispatch(ctx, command),
                Err(e) => self.reply(ctx, Err(e)),
            },
            Line::TooLong => {
                let max = self.shared.config.max_line_bytes;
                self.error(
                    ctx,
                    ErrorCode::TooLong,
                    format!("line too long (at most {max} bytes)"),
                )
            }
            Line::NotUtf8 => self.error(ctx, ErrorCode::BadRequest, "line is not UTF-8"),
        }
    }
}

impl Session {
    /// One function per command keeps this match short.
    fn dispatch(&mut self, ctx: &mut Context<Self>, command: Command) {
        match command {
            Command::Login { name, password } => self.login(ctx, name, password),
            Command::Seek { variant, clock } => self.seek(ctx, variant, clock),
            Command::New(spec) => self.new_game(ctx, spec),
            Command::Join(game) => self.join(ctx, game),
            Command::Watch(game) => self.watch(ctx, game),
            Command::History(game) => self.history(ctx, game),
            Command::Leave => self.leave(ctx),
            Command::List => self.list(ctx, ListGames),
            Command::Who => self.list(ctx, ListPlayers),
            Command::Move(square) => self.play(ctx, Action::Move(square)),
            Command::Pass => self.play(ctx, Action::Pass),
            Command::End => self.play(ctx, Action::Resign),
            Command::Board => self.board(ctx),
            Command::Say(text) => self.play(ctx, Action::Say(text)),
            Command::Rematch => self.rematch(ctx),
            Command::Hint => self.hint(ctx),
            Command::Ping => self.reply(ctx, Ok(Answer::ok("pong"))),
            Command::Help => self.help(ctx),
            Command::Quit => {
                self.reply(ctx, Ok(Answer::ok("bye")));
                ctx.stop();
            }
        }
    }

    /// `LOGIN`: the password (or the guest rule) first, off this thread, then
    /// the name in the lobby.
    fn login(&mut self, ctx: &mut Context<Self>, name: String, password: Option<String>) {
        match &self.name {
            Some(current) if **current == *name => return self.reply(ctx, Ok(Answer::ok(name))),
            Some(current) => {
                let message = format!("already logged in as {current}");
                return self.error(ctx, ErrorCode::Conflict, message);
            }
            None => {}
        }
        let accounts = Arc::clone(&self.shared.accounts);
        let check = accounts.check(name.clone(), password);
        ctx.wait(
            check
                .into_actor(self)
                .map(move |checked, act, ctx| match checked {
                    Ok(()) => act.claim_name(ctx, name),
                    Err(e) => act.reply(ctx, Err(e)),
                }),
        );
    }

    /// Takes `name` in the lobby (refused while another connection holds it).
    fn claim_name(&mut self, ctx: &mut Context<Self>, name: String) {
        let name = Name::from(name);
        let login = Login {
            name: Name::clone(&name),
            id: self.id,
        };
        let lobby = self.shared.lobby.clone();
        self.ask(ctx, &lobby, login, move |act, ctx, result| {
            if result.is_ok() {
                act.name = Some(Name::clone(&name));
            }
            act.reply(ctx, result.map(|()| Answer::ok(name.to_string())));
        });
    }

    /// Asks the lobby (which decides every seat) and answers with what it
    /// says; a seat it gives becomes this session's route to that game before
    /// the reply goes out, so the next command already goes there.
    fn ask_lobby<M, T, F>(&mut self, ctx: &mut Context<Self>, msg: M, answer: F)
    where
        M: Message<Result = Result<T, ProtocolError>> + Send + 'static,
        T: Send + 'static,
        Lobby: Handler<M>,
        F: FnOnce(&mut Session, T) -> Answer + 'static,
    {
        let lobby = self.shared.lobby.clone();
        self.ask(ctx, &lobby, msg, move |act, ctx, result| {
            let reply = result.map(|value| answer(act, value));
            act.reply(ctx, reply);
        });
    }

    fn seek(
        &mut self,
        ctx: &mut Context<Self>,
        variant: flipline::Variant,
        clock: Option<flipline::protocol::ClockSpec>,
    ) {
        let Some(name) = self.name.clone() else {
            return;
        };
        let seek = Seek {
            name,
            variant,
            clock,
        };
        self.ask_lobby(ctx, seek, |act, seat| match seat {
            Some(seat) => {
                let game = seat.game;
                act.seat = Some(seat);
                Answer::ok(game.to_string())
            }
            None => {
                act.seat = None;
                Answer::ok("seeking")
            }
        });
    }

    fn new_game(&mut self, ctx: &mut Context<Self>, spec: flipline::protocol::NewGame) {
        let Some(name) = self.name.clone() else {
            return;
        };
        self.ask_lobby(ctx, Create { name, spec }, |act, seat| {
            let game = seat.game;
            act.seat = Some(seat);
            Answer::ok(game.to_string())
        });
    }

    fn join(&mut self, ctx: &mut Context<Self>, game: flipline::protocol::GameId) {
        let Some(name) = self.name.clone() else {
            return;
        };
        self.ask_lobby(ctx, Join { name, game }, |act, (seat, color)| {
            let game = seat.game;
            act.seat = Some(seat);
            Answer::ok(format!("{game} {color}"))
        });
    }

    fn rematch(&mut self, ctx: &mut Context<Self>) {
        let Some(name) = self.name.clone() else {
            return self.error(ctx, ErrorCode::Forbidden, "you are not in a game");
        };
        self.ask_lobby(ctx, Rematch { name }, |act, seat| match seat {
            Some(seat) => {
                let game = seat.game;
                act.seat = Some(seat);
                Answer::ok(game.to_string())
            }
            None => Answer::ok("waiting"),
        });
    }

    fn leave(&mut self, ctx: &mut Context<Self>) {
        let Some(name) = self.name.clone() else {
            return self.stop_watching(ctx);
        };
        let watching = !self.watching.is_empty();
        self.ask_lobby(ctx, Leave { name, watching }, |act, left| match left {
            Left::Game(_) => {
                act.seat = None;
                Answer::default()
            }
            Left::StopWatching => {
                act.unwatch_all();
                Answer::default()
            }
            Left::SeekWithdrawn => Answer::ok("seek withdrawn"),
        });
    }

    /// `LEAVE` before `LOGIN`: only watching can be left.
    fn stop_watching(&mut self, ctx: &mut Context<Self>) {
        if self.watching.is_empty() {
            return self.error(ctx, ErrorCode::Conflict, "nothing to leave");
        }
        self.unwatch_all();
        self.reply(ctx, Ok(Answer::default()));
    }

    fn unwatch_all(&mut self) {
        for seat in self.watching.take() {
            seat.tx.do_send(ToGame::Unwatch { id: self.id });
        }
    }

    /// Looks a game up in the lobby, then goes on with its actor.
    fn find_game<F>(&mut self, ctx: &mut Context<Self>, game: flipline::protocol::GameId, then: F)
    where
        F: FnOnce(&mut Session, &mut Context<Session>, SeatRef) + 'static,
    {
        let lobby = self.shared.lobby.clone();
        self.ask(
            ctx,
            &lobby,
            Find(game),
            move |act, ctx, found| match found {
                Some(seat) => then(act, ctx, seat),
                None => act.error(ctx, ErrorCode::NotFound, format!("no game {game}")),
            },
        );
    }

    fn watch(&mut self, ctx: &mut Context<Self>, game: flipline::protocol::GameId) {
        let session = Session::own_ref(ctx);
        self.find_game(ctx, game, move |act, ctx, seat| {
            let request = seat.tx.send(ToGame::Watch {
                id: act.id,
                session,
            });
            act.await_answer(ctx, request, move |act, ctx, result| {
                if result.is_ok() && !act.watching.iter().any(|w| w.game == game) {
                    act.watching.push(seat);
                }
                act.reply(ctx, result);
            });
        });
    }

    /// `HISTORY`: the game as the store has it (committed moves only).
    fn history(&mut self, ctx: &mut Context<Self>, game: flipline::protocol::GameId) {
        let read = self.shared.store.history(game);
        ctx.wait(read.into_actor(self).map(move |found, act, ctx| {
            let reply = match found {
                Ok(Some(record)) => Ok(Answer {
                    data: format!("{}\n", history_line(record)),
                    ok: String::new(),
                }),
                Ok(None) => Err(ProtocolError::new(
                    ErrorCode::NotFound,
                    format!("no game {game}"),
                )),
                Err(e) => {
                    tracing::error!(error = %e, "HISTORY could not read the store");
                    Err(ProtocolError::new(
                        ErrorCode::Unavailable,
                        "the store is not available, try again",
                    ))
                }
            };
            act.reply(ctx, reply);
        }));
    }

    fn list<M>(&mut self, ctx: &mut Context<Self>, msg: M)
    where
        M: Message<Result = Vec<Event>> + Send + 'static,
        Lobby: Handler<M>,
    {
        let lobby = self.shared.lobby.clone();
        self.ask(ctx, &lobby, msg, |act, ctx, events| {
            let data: String = events.iter().map(|e| format!("{e}\n")).collect();
            let ok = events.len().to_string();
            act.reply(ctx, Ok(Answer { data, ok }));
        });
    }

    /// The game a game command is for: the seat, else (for `BOARD`) the game
    /// being watched most recently.
    fn current_game(&self, spectator_ok: bool) -> Option<SeatRef> {
        self.seat.clone().or_else(|| {
            if spectator_ok {
                self.watching.last().cloned()
            } else {
                None
            }
        })
    }

    /// `MOVE`, `PASS` and the like: sent from the seat as it is, since this is
    /// the busiest path (no copy of the game's address per move).
    fn play(&mut self, ctx: &mut Context<Self>, action: Action) {
        let (Some(seat), Some(name)) = (&self.seat, &self.name) else {
            return self.error(ctx, ErrorCode::Forbidden, "you are not in a game");
        };
        let is_move = matches!(action, Action::Move(_) | Action::Pass);
        let request = seat.tx.send(ToGame::Play {
            name: name.clone(),
            action,
        });
        self.await_answer(ctx, request, move |act, ctx, result| {
            // Input waits while a command does, so the last input is this line.
            if is_move {
                act.shared.slow_moves.served(act.last_input.elapsed());
            }
            act.reply(ctx, result)
        });
    }

    fn board(&mut self, ctx: &mut Context<Self>) {
        let Some(seat) = self.current_game(true) else {
            return self.error(ctx, ErrorCode::Forbidden, "you are not in a game");
        };
        // Spectators have no seat; any name reads the board.
        let name = self.name.clone().unwrap_or_default();
        let request = seat.tx.send(ToGame::Play {
            name,
            action: Action::Board,
        });
        self.await_answer(ctx, request, |act, ctx, result| act.reply(ctx, result));
    }

    fn hint(&mut self, ctx: &mut Context<Self>) {
        let (Some(seat), Some(name)) = (self.current_game(false), self.name.clone()) else {
            return self.error(ctx, ErrorCode::Forbidden, "you are not in a game");
        };
        let request = seat.tx.send(ToGame::Hint { name });
        self.await_answer(ctx, request, |act, ctx, result| act.reply(ctx, result));
    }

    fn help(&mut self, ctx: &mut Context<Self>) {
        let data: String = COMMAND_HELP
            .iter()
            .map(|(usage, what)| format!("INFO {usage:<34} {what}\n"))
            .collect();
        self.reply(
            ctx,
            Ok(Answer {
                data,
                ok: String::new(),
            }),
        );
    }
}

/// The `HISTORY` data line of a stored game.
fn history_line(record: GameRecord) -> Event {
    let moves = record.transcript();
    Event::History {
        game: record.id,
        variant: record.variant,
        black: record.black,
        white: record.white,
        clock: record.clock,
        status: match record.status {
            Status::Open => GameStatus::Open,
            Status::Playing => GameStatus::Playing,
            Status::Over => GameStatus::Over,
            Status::Cancelled => GameStatus::Cancelled,
        },
        result: record.result,
        moves,
    }
}

impl Actor for Session {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        self.shared.lobby.do_send(Connected {
            id: self.id,
            session: Session::own_ref(ctx),
            worker: actix::Arbiter::current(),
        });
        self.send_text(ctx, Arc::from(format!("{GREETING}\n")));
    }

    fn stopped(&mut self, _: &mut Context<Self>) {
        // The lobby tells the game this player sits at (it knows which).
        self.seat = None;
        self.unwatch_all();
        self.shared.lobby.do_send(Gone {
            id: self.id,
            name: self.name.take(),
        });
        // The last lines (a reply to QUIT, a notice) still go out, briefly.
        if let Some(socket) = self.socket.take() {
            self.outbox.close(socket, LINGER);
        }
        tracing::debug!(id = self.id, "disconnected");
    }
}

impl Handler<ToSession> for Session {
    type Result = ();

    fn handle(&mut self, msg: ToSession, ctx: &mut Context<Self>) {
        match msg {
            ToSession::Deliver(text) => self.send_text(ctx, text),
            ToSession::Seated(seat) => self.seat = Some(seat),
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
    /// 320-byte context, rounded up to 128-byte lines. At 208 bytes the task
    /// is 640; past it, 768, for every connection held.
    #[test]
    fn a_session_fits_its_task_size_class() {
        assert!(std::mem::size_of::<super::Session>() <= 208);
    }
}
