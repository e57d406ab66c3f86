//! The game actor: one per game, a shell around its [`Table`]
//! (`rules::table`), which holds every rule of the game and its seats. The
//! actor feeds the table the messages it gets and the timers it asked for, and
//! carries out the effects the table returns: it sends events, keeps timers,
//! asks the engine, and stores moves and the end.
//!
//! Durability: a move is applied, handed to the store, and announced only once
//! it is committed (`OK` to the mover, `MOVED` to everyone). While the commit is
//! pending the actor waits (`ctx.wait`), which holds its mailbox and timers, so
//! no other move of this game can slip in; other games are not held. If the
//! commit fails, the table puts the game back and the mover gets `ERR 503`. The
//! end is committed before `OVER` is sent, in the same way.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use actix::dev::{MessageResponse, OneshotSender};
use actix::fut::{self, ActorFutureExt, WrapFuture};
use actix::{
    Actor, ActorContext, Addr, AsyncContext, Context, Handler, Recipient, ResponseActFuture,
    SpawnHandle,
};
use flipline::protocol::{ClockSpec, ErrorCode, Event, GameId, ProtocolError};
use flipline::{Move, Variant};

use crate::config::Config;
use crate::engine_pool::{EngineWorker, Think};
use crate::messages::*;
use crate::random_u64;
use crate::rules::Sitter;
use crate::rules::lobby::Order;
use crate::rules::table::{Effect, MoveCommit, Played, Table, Timer};
use crate::store::{Store, StoredMove, Write};

/// The engine level `HINT` uses.
const HINT_LEVEL: u8 = 6;

/// Messages a game's mailbox holds before senders wait (actix's default).
const MAILBOX_CAPACITY: usize = 16;

/// Everything a game actor starts from.
pub struct GameSetup {
    /// The game's id.
    pub id: GameId,
    /// Its variant.
    pub variant: Variant,
    /// Its clock.
    pub clock: Option<ClockSpec>,
    /// Black's seat, then white's.
    pub seats: [Sitter<SessionRef>; 2],
    /// Moves already played, every pass written out (from `NEW ... from`, or
    /// the stored moves of a recovered game with the time each took).
    pub start: Vec<StoredMove>,
    /// Whether the game is recovered from the store: its people are not
    /// connected yet, and their grace period runs from the start.
    pub recovered: bool,
    /// What every game uses, shared.
    pub services: Arc<GameServices>,
}

/// What every game talks to, made once by the lobby and shared: a copy of an
/// `Addr` costs two allocations, and an idle game should cost little.
pub struct GameServices {
    /// Daemon settings.
    pub config: Arc<Config>,
    /// The lobby, told when a game ends or closes.
    pub lobby: Recipient<FromGame>,
    /// The engine pool, for bots and hints.
    pub engine: Addr<EngineWorker>,
    /// Where moves are committed.
    pub store: Store,
}

/// The timers a table asked for. Boxed, and only once there is one: most
/// games have no clock and nobody away.
#[derive(Default)]
struct Timers {
    flag: Option<SpawnHandle>,
    grace: [Option<SpawnHandle>; 2],
    bot: Option<SpawnHandle>,
}

impl Timers {
    fn slot(&mut self, timer: Timer) -> &mut Option<SpawnHandle> {
        match timer {
            Timer::Flag => &mut self.flag,
            Timer::Grace(color) => &mut self.grace[crate::rules::slot(color)],
            Timer::Bot => &mut self.bot,
        }
    }
}

/// One game (see the module docs).
pub struct GameActor {
    /// This game's number, actor and committed plies, shared (see [`GameHandle`]).
    handle: SeatRef,
    table: Table<SessionRef>,
    timers: Option<Box<Timers>>,
    /// Until `started`: a recovered game waits for its people.
    recovered: bool,
    services: Arc<GameServices>,
}

/// The answer to [`ToGame`]: at once, once a move is committed, or once the
/// engine has thought. A commit is awaited with `ctx.wait`, so the game takes
/// no other message meanwhile, and the reply goes out before anything else the
/// actor does; the engine is not (other games' and players' messages go on).
pub enum GameResponse {
    /// Answered now.
    Now(Reply),
    /// Answered once the move is committed (or refused).
    AfterCommit(ResponseActFuture<GameActor, Reply>),
    /// Answered once the engine has thought (`HINT`).
    Later(ResponseActFuture<GameActor, Reply>),
}

impl MessageResponse<GameActor, ToGame> for GameResponse {
    fn handle(self, ctx: &mut Context<GameActor>, tx: Option<OneshotSender<Reply>>) {
        let answer = move |reply| {
            if let Some(tx) = tx {
                let _ = tx.send(reply);
            }
        };
        match self {
            GameResponse::Now(reply) => answer(reply),
            GameResponse::AfterCommit(future) => {
                ctx.wait(future.map(move |reply, _, _| answer(reply)));
            }
            GameResponse::Later(future) => {
                ctx.spawn(future.map(move |reply, _, _| answer(reply)));
            }
        }
    }
}

impl GameActor {
    /// Starts a game's actor on `worker` (here if `None`) and gives its handle,
    /// which the actor keeps too.
    pub fn spawn_on(worker: Option<&actix::ArbiterHandle>, setup: GameSetup) -> SeatRef {
        let (tx, rx) = actix::dev::channel::channel(MAILBOX_CAPACITY);
        let handle = Arc::new(GameHandle {
            game: setup.id,
            tx: Addr::<GameActor>::new(tx).recipient(),
            ply: AtomicU32::new(0),
        });
        let own = Arc::clone(&handle);
        let run = move || {
            let ctx = Context::with_receiver(rx);
            tokio::task::spawn_local(ctx.into_future(GameActor::new(setup, own)));
        };
        match worker {
            Some(worker) => {
                worker.spawn_fn(run);
            }
            None => run(),
        }
        handle
    }

    fn new(setup: GameSetup, handle: SeatRef) -> GameActor {
        let start: Vec<(Move, Option<u64>)> = setup.start.iter().map(|m| (m.mv, m.ms)).collect();
        let table = Table::new(
            setup.id,
            setup.variant,
            setup.clock,
            setup.seats,
            &start,
            Instant::now(),
        );
        handle.ply.store(table.plies(), Ordering::Relaxed);
        GameActor {
            handle,
            table,
            timers: None,
            recovered: setup.recovered,
            services: setup.services,
        }
    }

    fn id(&self) -> GameId {
        self.handle.game
    }

    fn grace(&self) -> Duration {
        Duration::from_secs(self.services.config.grace_secs)
    }

    /// Carries out what the table asked for, in order.
    fn carry_out(&mut self, ctx: &mut Context<Self>, effects: Vec<Effect<SessionRef>>) {
        for effect in effects {
            match effect {
                Effect::Broadcast(events) => {
                    let text = lines(&events);
                    for session in self.table.audience() {
                        session.tell(ToSession::Deliver(Arc::clone(&text)));
                    }
                }
                Effect::Tell(session, events) => session.tell(ToSession::Deliver(lines(&events))),
                Effect::Schedule(timer, after) => self.schedule(ctx, timer, after),
                Effect::Unschedule(timer) => self.unschedule(ctx, timer),
                Effect::Think { level, ply } => self.think(ctx, level, ply),
                Effect::CommitEnd { result, then } => {
                    let game = self.id();
                    let stored = self.services.store.commit(Write::End { game, result });
                    ctx.wait(stored.into_actor(self).map(move |stored, act, ctx| {
                        if let Err(error) = stored {
                            tracing::error!(game, %error, "the end of a game could not be saved");
                        }
                        act.carry_out(ctx, then);
                    }));
                }
                Effect::Ended(_) => self.services.lobby.do_send(FromGame::Ended(self.id())),
                Effect::Stop => ctx.stop(),
            }
        }
    }

    fn schedule(&mut self, ctx: &mut Context<Self>, timer: Timer, after: Duration) {
        self.unschedule(ctx, timer);
        let handle = ctx.run_later(after, move |act, ctx| {
            if let Some(timers) = &mut act.timers {
                *timers.slot(timer) = None;
            }
            let effects = act.table.timer_fired(timer, Instant::now());
            act.carry_out(ctx, effects);
        });
        *self.timers.get_or_insert_with(Box::default).slot(timer) = Some(handle);
    }

    fn unschedule(&mut self, ctx: &mut Context<Self>, timer: Timer) {
        if let Some(old) = self.timers.as_mut().and_then(|t| t.slot(timer).take()) {
            ctx.cancel_future(old);
        }
    }

    /// Asks the engine pool for a bot move; the table drops an answer for a
    /// ply that has gone by.
    fn think(&mut self, ctx: &mut Context<Self>, level: u8, ply: u32) {
        let now = Instant::now();
        let budget = self
            .table
            .think_budget(self.services.config.engine_move_ms, now);
        let job = Think {
            game: self.table.position(),
            level,
            seed: random_u64(),
            deadline: now + budget,
        };
        let request =
            self.services
                .engine
                .send(job)
                .into_actor(self)
                .map(move |answer, act, ctx| {
                    // The pool gone (shutting down) or without an answer: the
                    // table plays the first legal move rather than stall the game.
                    let mv = answer.ok().flatten().map(|choice| choice.mv);
                    match act.table.bot_answer(ply, mv, Instant::now()) {
                        Some(Played::Commit(commit)) => {
                            let stored = act.store_move(commit);
                            ctx.wait(stored.map(|_, _, _| ()));
                        }
                        Some(Played::Refused(e, effects)) => {
                            tracing::warn!(game = act.id(), error = %e.message, "bot move refused");
                            act.carry_out(ctx, effects);
                        }
                        None => {}
                    }
                });
        ctx.spawn(request);
    }

    /// Stores a move the table applied; once committed the table announces it,
    /// if refused the table undoes it and the mover is told `ERR 503`. Awaited
    /// with `ctx.wait`, so that nothing else happens in the game meanwhile.
    fn store_move(
        &mut self,
        commit: MoveCommit,
    ) -> impl fut::ActorFuture<GameActor, Output = Reply> + 'static {
        let saved = self
            .services
            .store
            .append_move(self.id(), commit.ply, commit.mv, commit.ms);
        saved
            .into_actor(self)
            .map(move |saved, act, ctx| match saved {
                Ok(()) => {
                    act.handle.ply.store(commit.ply, Ordering::Relaxed);
                    let effects = act.table.committed(&commit, Instant::now());
                    act.carry_out(ctx, effects);
                    Ok(Answer::default())
                }
                Err(error) => {
                    tracing::error!(game = act.id(), %error, "a move could not be saved");
                    let effects = act.table.rolled_back(commit, Instant::now());
                    act.carry_out(ctx, effects);
                    Err(ProtocolError::new(
                        ErrorCode::Unavailable,
                        "the move could not be saved and was not played; try again",
                    ))
                }
            })
    }

    fn human_move(&mut self, ctx: &mut Context<Self>, name: &str, mv: Move) -> GameResponse {
        match self.table.play(name, mv, Instant::now()) {
            Played::Commit(commit) => GameResponse::AfterCommit(Box::pin(self.store_move(commit))),
            Played::Refused(e, effects) => {
                self.carry_out(ctx, effects);
                GameResponse::Now(Err(e))
            }
        }
    }

    fn act(&mut self, ctx: &mut Context<Self>, name: &str, action: Action) -> GameResponse {
        let outcome = match action {
            Action::Move(square) => return self.human_move(ctx, name, Move::Place(square)),
            Action::Pass => return self.human_move(ctx, name, Move::Pass),
            Action::Resign => self.table.resign(name, Instant::now()),
            Action::Say(text) => self.table.say(name, text),
            Action::Board => {
                return GameResponse::Now(Ok(Answer {
                    data: lines(&self.table.board()).to_string(),
                    ok: String::new(),
                }));
            }
        };
        GameResponse::Now(outcome.map(|effects| {
            self.carry_out(ctx, effects);
            Answer::default()
        }))
    }

    fn seating(&mut self, ctx: &mut Context<Self>, order: Order<Option<SessionRef>>) {
        let now = Instant::now();
        let effects = match order {
            Order::Fill { color, name, conn } => self.table.fill(color, name, conn, now),
            Order::Attach { name, conn } => match conn {
                Some(conn) => self.table.attach(&name, conn),
                None => Vec::new(),
            },
            Order::Detach { name, quiet } => self.table.detach(&name, quiet),
            Order::Disconnected { name } => self.table.disconnected(&name, self.grace(), now),
            Order::Cancel => self.table.cancel(),
            Order::OfferRematch { name } => self.table.offer_rematch(&name),
        };
        self.carry_out(ctx, effects);
    }
}

/// Events as text, one line each.
fn lines(events: &[Event]) -> crate::outbox::Text {
    use std::fmt::Write;
    let mut text = String::with_capacity(events.len() * 80);
    for event in events {
        // Formatting into one string: no string per event.
        let _ = writeln!(text, "{event}");
    }
    Arc::from(text)
}

fn ready(reply: Reply) -> ResponseActFuture<GameActor, Reply> {
    Box::pin(fut::ready(reply))
}

impl Actor for GameActor {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        let effects = self
            .table
            .open(self.recovered, self.grace(), Instant::now());
        self.carry_out(ctx, effects);
    }

    fn stopped(&mut self, _: &mut Context<Self>) {
        self.services.lobby.do_send(FromGame::Closed(self.id()));
    }
}

impl Handler<ToGame> for GameActor {
    /// Answered synchronously, so that the reply is out before the actor may
    /// stop, except moves (once committed) and hints (once thought).
    type Result = GameResponse;

    fn handle(&mut self, msg: ToGame, ctx: &mut Context<Self>) -> GameResponse {
        match msg {
            ToGame::Play { name, action } => self.act(ctx, &name, action),
            ToGame::Hint { name } => GameResponse::Later(self.hint(&name)),
            ToGame::Watch { id, session } => {
                let effects = self.table.watch(id, session);
                self.carry_out(ctx, effects);
                GameResponse::Now(Ok(Answer::ok(self.id().to_string())))
            }
            ToGame::Unwatch { id } => {
                self.table.unwatch(id);
                GameResponse::Now(Ok(Answer::default()))
            }
            ToGame::Seating(order) => {
                self.seating(ctx, order);
                GameResponse::Now(Ok(Answer::default()))
            }
        }
    }
}

impl GameActor {
    /// `HINT`: the engine's move for `name`, if the table allows it.
    fn hint(&mut self, name: &str) -> ResponseActFuture<Self, Reply> {
        let position = match self.table.hint(name, &self.services.config.hints) {
            Ok(position) => position,
            Err(e) => return ready(Err(e)),
        };
        let job = Think {
            game: position,
            level: HINT_LEVEL,
            seed: random_u64(),
            deadline: Instant::now() + Duration::from_millis(self.services.config.engine_move_ms),
        };
        Box::pin(
            self.services
                .engine
                .send(job)
                .into_actor(self)
                .map(|answer, _, _| match answer {
                    Ok(Some(choice)) => Ok(Answer::ok(format!("{} {}", choice.mv, choice.score))),
                    Ok(None) => Err(ProtocolError::new(ErrorCode::Conflict, "the game is over")),
                    Err(_) => Err(ProtocolError::new(
                        ErrorCode::Unavailable,
                        "the engine is not available",
                    )),
                }),
        )
    }
}
#[cfg(test)]
mod tests {
    /// An idle game is its actor's tokio task: the actor plus actix's
    /// 320-byte context, rounded up to 128-byte lines. At 192 bytes the task
    /// is 512; one byte more and it is 640, for every game held.
    #[test]
    fn a_game_actor_fits_its_task_size_class() {
        assert!(std::mem::size_of::<super::GameActor>() <= 192);
    }
}
