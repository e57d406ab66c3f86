//! The game actor: one per game, a shell around its [`Table`]
//! (`rules::table`), which holds every rule of the game and its seats. The
//! actor feeds the table the messages it gets and the timers it asked for, and
//! carries out the effects the table returns: it sends events, keeps timers,
//! asks the engine, and stores moves and the end.
//!
//! Files: `effects.rs` carries out what the table returns (events, timers);
//! `ending.rs` stores the end before it is announced (a resignation the
//! store refuses is taken back, another ending is committed again until it
//! is stored); `commands.rs` turns messages into table calls and stores
//! moves; `engine.rs` asks the engine pool for bot moves and hints;
//! `undo.rs` takes moves back once the store has.
//!
//! Durability: a move is applied, handed to the store, and announced only once
//! it is committed (`OK` to the mover, `MOVED` to everyone). While the commit is
//! pending the actor waits (`ctx.wait`), which holds its mailbox and timers, so
//! no other move of this game can slip in; other games are not held. If the
//! commit fails, the table puts the game back and the mover gets `ERR 503`. The
//! end is committed before `OVER` is sent, in the same way (see `ending.rs`
//! for when the store refuses it).
//!
//! Time: every `now` given to the table is service time
//! ([`crate::service_time`]): the clocks do not charge the time the daemon
//! was not running.
//!
//! Answers: a message is answered at once (`GameResponse::Now`), after a
//! commit with the mailbox held (`AfterCommit`: a move, a resignation, a
//! take-back; the reply then goes out before the events the change causes),
//! or later without holding it (`Later`: a hint, from the engine). Waiting in the actor, rather than
//! queueing later moves itself, lets actix hold the game's mailbox and
//! timers (no second move, no flag fall, no join mid-commit) while every
//! other game runs on.
//!
//! Where: a new game starts on the worker thread of one of its players
//! (the lobby core names which: who asked for it, or the seeker who waited),
//! so that player's moves, replies and events pass between actors on one
//! thread without waking another; sessions are spread over the workers in
//! turn, so games are too. At 200 games this cut the workers' CPU per move
//! by about 1.5 µs and raised moves a second by about 8 % (BENCHMARKS.md,
//! set K).

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use actix::dev::{MessageResponse, OneshotSender};
use actix::fut::ActorFutureExt;
use actix::{Actor, Addr, AsyncContext, Context, Handler, Recipient, ResponseActFuture};
use flipline::protocol::{ClockSpec, GameId};
use flipline::{Move, Variant};

use crate::config::Config;
use crate::engine_pool::EngineWorker;
use crate::messages::*;
use crate::rules::Sitter;
use crate::rules::table::Table;
use crate::service_time;
use crate::session::{GameRequest, Reach, SeatRef, SessionRef};
use crate::store::{Store, StoredMove};
use flipline::protocol::Reply;

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
    /// Whether it counts for the ratings.
    pub rated: bool,
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
    /// On a cluster's node, its state: where its lease stands.
    pub node: Option<Arc<crate::node_state::NodeState>>,
}

impl GameServices {
    /// Whether this is a cluster's node whose lease is not held now:
    /// another node may have taken its games over and moved on, so nothing
    /// it says of them may be true (see `Refusal::LeaseLapsed`).
    pub fn lease_lapsed(&self) -> bool {
        let node = self.node.as_ref();
        node.is_some_and(|node| node.standing() != crate::rules::lease::Standing::Held)
    }
}

mod commands;
mod effects;
mod ending;
mod engine;
mod undo;

use effects::Timers;

/// One game (see the module docs).
pub struct GameActor {
    /// This game's number, actor and committed plies, shared (see [`GameHandle`]).
    handle: SeatRef,
    table: Table<SessionRef>,
    timers: Option<Box<Timers>>,
    /// Until `started`: a recovered game waits for its people.
    recovered: bool,
    /// Its end is being committed again after the store refused it: the
    /// game does not stop before the end is stored and announced.
    ending: bool,
    services: Arc<GameServices>,
}

/// The answer to [`GameRequest`]: at once, once a move is committed, or once the
/// engine has thought. A commit is awaited with `ctx.wait`, so the game takes
/// no other message meanwhile, and the reply goes out before anything else the
/// actor does; the engine is not (other games' and players' messages go on).
pub enum GameResponse {
    /// Answered now.
    Now(Answered),
    /// Answered once the move is committed (or refused).
    AfterCommit(ResponseActFuture<GameActor, Answered>),
    /// Answered once the engine has thought (`HINT`).
    Later(ResponseActFuture<GameActor, Answered>),
}

impl MessageResponse<GameActor, GameRequest> for GameResponse {
    fn handle(self, ctx: &mut Context<GameActor>, tx: Option<OneshotSender<Answered>>) {
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
    pub fn spawn_on(
        worker: Option<&actix::ArbiterHandle>,
        setup: GameSetup,
        seated: &[SessionRef],
    ) -> SeatRef {
        let (tx, rx) = actix::dev::channel::channel(MAILBOX_CAPACITY);
        let handle = Arc::new(GameHandle {
            game: setup.id,
            tx: Addr::<GameActor>::new(tx).recipient(),
            ply: AtomicU32::new(0),
        });
        // Before the actor runs: its `START` must not reach a player who
        // does not know the seat yet.
        for session in seated {
            session.tell(ToSession::Seated(Arc::clone(&handle)));
        }
        let own = Arc::clone(&handle);
        let run = move || {
            let ctx = Context::with_receiver(rx);
            crate::homed::spawn(ctx.into_future(GameActor::new(setup, own)));
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
            setup.rated,
            service_time::now(),
        );
        handle.ply.store(table.plies(), Ordering::Relaxed);
        GameActor {
            handle,
            table,
            timers: None,
            recovered: setup.recovered,
            ending: false,
            services: setup.services,
        }
    }

    fn id(&self) -> GameId {
        self.handle.game
    }

    fn grace(&self) -> Duration {
        Duration::from_secs(self.services.config.grace_secs)
    }
}

impl Actor for GameActor {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        let effects = self
            .table
            .open(self.recovered, self.grace(), service_time::now());
        self.carry_out(ctx, effects);
        self.log_begun();
    }

    fn stopped(&mut self, _: &mut Context<Self>) {
        self.services.lobby.do_send(FromGame::Closed(self.id()));
    }
}

impl GameActor {
    /// The operator's line for a game that begins (or comes back after a
    /// restart): one a game, at info.
    pub(super) fn log_begun(&self) {
        if self.table.phase() != crate::rules::Phase::Playing {
            return;
        }
        crate::metrics::game_begun();
        let [black, white] = self.table.names().map(|n| n.unwrap_or_default());
        let (game, plies) = (self.id(), self.table.plies());
        let variant = self.table.position().variant().name();
        if self.recovered {
            tracing::info!(game, variant, %black, %white, plies, "game resumed (after a restart, or taken over from a dead node)");
        } else {
            tracing::info!(game, variant, %black, %white, "game begun");
        }
    }
}

impl GameRequest {
    /// Whether its answer says where the game stands (a move, a refusal, a
    /// snapshot); leaving it or being seated says nothing.
    fn tells_of_the_game(&self) -> bool {
        match self {
            GameRequest::Play { .. }
            | GameRequest::Again { .. }
            | GameRequest::Hint { .. }
            | GameRequest::Watch { .. } => true,
            GameRequest::Unwatch { .. } | GameRequest::Seating(_) => false,
        }
    }
}

impl Handler<GameRequest> for GameActor {
    /// Answered synchronously, so that the reply is out before the actor may
    /// stop, except moves (once committed) and hints (once thought).
    type Result = GameResponse;

    fn handle(&mut self, msg: GameRequest, ctx: &mut Context<Self>) -> GameResponse {
        if self.services.lease_lapsed() && msg.tells_of_the_game() {
            let game = self.id();
            let lapsed = crate::rules::refusal::Refusal::LeaseLapsed(game);
            return GameResponse::Now(Err(lapsed.into()));
        }
        match msg {
            GameRequest::Play { name, action } => self.act(ctx, &name, action),
            GameRequest::Again { name, act, at } => self.again(ctx, &name, act, at),
            GameRequest::Hint { name } => GameResponse::Later(self.hint(&name)),
            GameRequest::Watch { id, session } => {
                let effects = self.table.watch(id, session, service_time::now());
                self.carry_out(ctx, effects);
                GameResponse::Now(Ok(Answer::ok(Reply::Game(self.id()))))
            }
            GameRequest::Unwatch { id } => {
                self.table.unwatch(id);
                GameResponse::Now(Ok(Answer::default()))
            }
            GameRequest::Seating(order) => {
                self.seating(ctx, order);
                GameResponse::Now(Ok(Answer::default()))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    /// An idle game is its actor's tokio task: the actor plus actix's
    /// 336-byte context and tokio's header and trailer, rounded up to
    /// 128-byte lines. At 192 bytes the task is 640 (heaptrack, 2026-12-06;
    /// it was 512 before tokio's task grew), a few bytes short of 768 for
    /// every game held; 512 again would take an actor of about 72 bytes.
    #[test]
    fn a_game_actor_fits_its_task_size_class() {
        assert!(std::mem::size_of::<super::GameActor>() <= 192);
    }
}
