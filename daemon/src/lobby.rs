//! The lobby actor: a shell around the lobby core ([`LobbyCore`]), which knows
//! who is online, the seeks, the games and who sits at each. The actor numbers
//! games, writes them to the store, starts their actors (each on a player's
//! worker thread), tells sessions and games what the core decided, answers
//! `LIST` and `WHO`, and at start brings back the games the store holds as in
//! play. It is never on the move path: moves go from a session straight to its
//! game.
//!
//! A new game or a filled seat is answered only once the store has it: the
//! core holds the decision, the actor commits its write without waiting for
//! it (the lobby serves everyone else meanwhile), then carries it out and
//! answers, or has the core put it back and answers `ERR 503`. Work touching
//! what a held decision touched waits for it (`when_free`).
//!
//! The lobby only ever tells games and sessions (`do_send`), never waits on
//! them, so no two actors wait on each other. Games tell the lobby that they
//! ended before anyone hears `OVER`, so what a player does after `OVER` finds
//! the lobby knowing.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use actix::fut::{ActorFutureExt, WrapFuture};
use actix::{Actor, Addr, ArbiterHandle, AsyncContext, Context, Handler, ResponseFuture};
use flipline::protocol::{ErrorCode, Event, GameId, ProtocolError, TourneyId};
use tokio::sync::oneshot;

use crate::config::Config;
use crate::engine_pool::{DrawStart, EngineWorker};
use crate::game::{GameActor, GameServices, GameSetup};
use crate::messages::*;
use crate::random::random_u64;
use crate::reload::live::Live;
use crate::rules::Sitter;
use crate::rules::lobby::{
    Done, Entry, Held, Launch, Left, LobbyCore, LobbyEffect, Rematched, Sought, Waiting,
};
use crate::rules::lobby::{PAIR_RETRY, stored_game_state};
use crate::rules::numbers::Numbers;
use crate::rules::refusal::Refusal;
use crate::rules::tourney_desk::TourneyDesk;
use crate::session::{GameRequest, Reach, SeatRef, SessionRef};
use crate::store::{GameRecord, Status, Store, StoredMove, Write};

/// A connection as the lobby keeps it.
struct SessionEntry {
    /// Weak: the lobby only needs to reach a session that still exists.
    addr: SessionRef,
    /// Its worker thread, where the games it starts run.
    worker: ArbiterHandle,
}

/// The lobby actor (one per daemon).
pub struct Lobby {
    /// The config, the engine pool, the store and this lobby's own address:
    /// what the lobby uses and what every game it starts shares.
    services: Arc<GameServices>,
    workers: Vec<ArbiterHandle>,
    next_worker: usize,
    /// The settings SIGHUP changes (the idle timeout).
    live: Arc<Live>,
    /// The numbers new games get.
    numbers: Numbers,
    sessions: HashMap<ConnId, SessionEntry>,
    core: LobbyCore<SeatRef>,
    /// Commands and events waiting for a decision held until its write
    /// commits (see [`Lobby::when_free`]).
    waiting: Waiting<Deferred>,
    /// Whether the lobby is to wake when the next challenge lapses.
    expiry_armed: bool,
    /// The tournaments, and their writes not yet stored.
    desk: TourneyDesk<tourneys::TourneyReply>,
    /// On a cluster's node: tells the other nodes of a game over here.
    tell_over: Option<TellOver>,
    /// On a cluster's node with a bus: tells the lobby's leader of each
    /// seek here and its withdrawal (see `pooling`).
    pool: Option<Box<dyn Fn(crate::rules::lobby::PoolNote) + Send>>,
    /// Whether a name's seek is out for a pairing another node settles.
    pairing_pending: Option<crate::messages::PairingPending>,
    /// A pairing's write failed: seeks put back are told to the leader
    /// only after [`PAIR_RETRY`], so that a failing store is not asked
    /// again at once, as on one daemon.
    pool_paused: bool,
    /// On a cluster's node with a bus: the way to other nodes for
    /// challenges across them (see `across`).
    far: across::FarLink,
    /// Games of tournaments taken over, in play on other nodes.
    followed: followed::Followed,
    /// Logins waiting for a game this node has just taken over.
    taken_over: taken_over::TakenOverWaits,
}

mod across;
mod away;
mod challenging;
mod far_players;
mod followed;
mod pooling;
mod taken_over;
mod tourneys;

/// A command or event that touches what a held decision touched: it runs
/// once that decision is settled (and what it then waits for, if anything).
struct Deferred {
    waits: Waits,
    job: Job,
}

/// What held decision, if any, a piece of work must wait for.
type Waits = Box<dyn Fn(&LobbyCore<SeatRef>) -> Option<Held>>;

type Job = Box<dyn FnOnce(&mut Lobby, &mut Context<Lobby>)>;

/// Work touching `name` (and the game it sits at) and `game`.
fn touching(name: Option<Name>, game: Option<GameId>) -> Waits {
    Box::new(move |core| core.waits_for(name.as_deref(), game))
}

/// Where a command's answer goes, now or once its write commits.
type Reply<T> = oneshot::Sender<Result<T, ProtocolError>>;

impl Lobby {
    /// Starts a lobby that starts games on `workers` (a player's, or in turn) with
    /// `engine` for bots, writing them to `store` (on a cluster's node, with
    /// its `node` state), numbering new games with
    /// `numbers` and tournaments from `next_tourney`, and closing
    /// connections idle past `live`'s timeout.
    pub fn start(
        config: Arc<Config>,
        live: Arc<Live>,
        engine: Addr<EngineWorker>,
        workers: Vec<ArbiterHandle>,
        (store, node): (Store, Option<Arc<crate::node_state::NodeState>>),
        numbers: Numbers,
        next_tourney: TourneyId,
    ) -> Addr<Lobby> {
        crate::homed::create(move |ctx| Lobby {
            live,
            numbers,
            services: Arc::new(GameServices {
                config,
                lobby: ctx.address().recipient(),
                engine,
                store,
                node,
            }),
            workers,
            next_worker: 0,
            sessions: HashMap::new(),
            core: LobbyCore::new(),
            waiting: Waiting::default(),
            expiry_armed: false,
            desk: TourneyDesk::new(next_tourney),
            tell_over: None,
            pool: None,
            pairing_pending: None,
            pool_paused: false,
            far: None,
            followed: followed::Followed::default(),
            taken_over: taken_over::TakenOverWaits::default(),
        })
    }

    /// Runs `job` now, unless `waits` names a held decision it touches:
    /// then once that decision is settled, in the order such work came.
    fn when_free(
        &mut self,
        ctx: &mut Context<Self>,
        waits: Waits,
        job: impl FnOnce(&mut Lobby, &mut Context<Lobby>) + 'static,
    ) {
        match waits(&self.core) {
            Some(held) => {
                let job = Box::new(job);
                self.waiting.push(held, Deferred { waits, job });
            }
            None => {
                job(self, ctx);
                self.tell_nodes();
            }
        }
    }

    /// Tells the other nodes what changed here for them: seeks for the
    /// lobby's leader, challenges across for their other nodes.
    fn tell_nodes(&mut self) {
        self.tell_pool();
        self.tell_far();
    }

    /// A held decision is settled: what waited for it runs (or waits on).
    fn settled(&mut self, ctx: &mut Context<Self>, held: Held) {
        for deferred in self.waiting.take(held) {
            self.when_free(ctx, deferred.waits, deferred.job);
        }
    }

    /// Answers a command with the core's decision and carries it out: at
    /// once, or, for a decision held, once its write commits; if that
    /// fails, the core puts the lobby back and the answer is `ERR 503`.
    fn conclude<T: 'static, U: 'static>(
        &mut self,
        ctx: &mut Context<Self>,
        decided: Result<Done<T, SeatRef>, Refusal>,
        reply: Reply<U>,
        answer: impl FnOnce(&mut Lobby, T) -> Result<U, Refusal> + 'static,
    ) {
        self.ask_numbers(ctx);
        let done = match decided {
            Ok(done) => done,
            Err(refused) => {
                let _ = reply.send(Err(refused.into()));
                return;
            }
        };
        let Some(held) = done.held else {
            self.carry_out_all(done.effects);
            let _ = reply.send(answer(self, done.reply).map_err(Into::into));
            return;
        };
        // A decision is held for the one write it needs (a new game, or the
        // seats of a game joined): `LobbyEffect::needs_commit`.
        let write = done.effects.iter().find_map(write_of);
        let commit = write.map(|write| self.services.store.commit(write));
        let committed = async move {
            match commit {
                Some(commit) => commit.await.map(|_| ()),
                None => Ok(()),
            }
        };
        ctx.spawn(committed.into_actor(self).map(move |committed, act, ctx| {
            match committed {
                Ok(()) => {
                    act.core.stored(held);
                    act.carry_out_all(done.effects);
                    let _ = reply.send(answer(act, done.reply).map_err(Into::into));
                }
                Err(error) => {
                    act.core.not_stored(held);
                    tracing::error!(%error, "a new game or seat could not be saved");
                    let _ = reply.send(Err(Refusal::GameNotSaved.into()));
                    // A pairing put back may leave its seek beside another
                    // for the same game.
                    act.pool_paused = true;
                    ctx.run_later(PAIR_RETRY, |act, ctx| act.pair_waiting(ctx));
                }
            }
            act.tell_nodes();
            act.settled(ctx, held);
        }));
    }

    /// Asks the store for the next block of game numbers if the lobby takes
    /// them in blocks (a cluster node) and runs low.
    fn ask_numbers(&mut self, ctx: &mut Context<Self>) {
        if !self.numbers.ask() {
            return;
        }
        let block = self.services.store.game_numbers();
        ctx.spawn(block.into_actor(self).map(|block, act, _| match block {
            Ok(block) => act.numbers.given(block),
            Err(error) => {
                tracing::warn!(%error, "could not take a block of game numbers: asking again");
                act.numbers.not_given();
            }
        }));
    }

    /// Pairs seeks left waiting side by side by a pairing put back.
    fn pair_waiting(&mut self, ctx: &mut Context<Self>) {
        self.pool_paused = false;
        self.tell_nodes();
        let numbers = &mut self.numbers;
        if let Some(done) = self.core.pair_waiting(|| numbers.take(), coin()) {
            // Both players learn their seat from the launch; no one waits
            // for an answer.
            let (reply, _) = oneshot::channel();
            self.conclude(ctx, Ok(done), reply, |_, _| Ok(()));
        }
    }

    /// Carries out the core's effects, in order. Their writes that answers
    /// wait for ([`write_of`]) are already committed.
    fn carry_out_all(&mut self, effects: Vec<LobbyEffect<SeatRef>>) {
        for effect in effects {
            self.carry_out_one(effect);
        }
    }

    fn carry_out_one(&mut self, effect: LobbyEffect<SeatRef>) {
        match effect {
            LobbyEffect::Launch(launch) => self.launch(launch),
            LobbyEffect::StoreSeats { .. } => {}
            LobbyEffect::StoreCancel(game) => {
                self.services.store.write(Write::Cancel { game });
            }
            LobbyEffect::ToGame(route, order) => {
                let order = order.map_conn(|id| self.sessions.get(&id).map(|s| s.addr.clone()));
                route.tx.do_send(GameRequest::Seating(order));
            }
            LobbyEffect::Tell(conn, events) => {
                if let Some(session) = self.sessions.get(&conn) {
                    let text: String = events.iter().map(|e| format!("{e}\n")).collect();
                    session.addr.tell(ToSession::Deliver(Arc::from(text)));
                }
            }
        }
    }

    /// Starts a new game's actor (its creation is stored): on the worker
    /// thread of the player it names, else on the next in turn.
    fn launch(&mut self, launch: Launch) {
        let start = launch
            .start
            .iter()
            .map(|&mv| StoredMove { mv, ms: None })
            .collect();
        let near = launch
            .near
            .and_then(|conn| self.sessions.get(&conn))
            .map(|s| s.worker.clone());
        let seated: Vec<SessionRef> = launch
            .seated
            .iter()
            .filter_map(|conn| self.sessions.get(conn).map(|s| s.addr.clone()))
            .collect();
        let setup = GameSetup {
            id: launch.id,
            variant: launch.variant,
            clock: launch.clock,
            seats: launch.seats.map(|s| self.session_refs(s)),
            start,
            rated: launch.rated,
            recovered: false,
            services: Arc::clone(&self.services),
        };
        self.start_game(setup, near, &seated);
    }

    fn session_refs(&self, sitter: Sitter<ConnId>) -> Sitter<SessionRef> {
        sitter.map_conn(|id| self.sessions.get(&id).map(|s| s.addr.clone()))
    }

    /// Starts a game's actor on `near` (a player's worker thread), else on
    /// the next worker in turn; `seated` learn their seat before it begins.
    fn start_game(&mut self, setup: GameSetup, near: Option<ArbiterHandle>, seated: &[SessionRef]) {
        let id = setup.id;
        let worker = near.or_else(|| {
            let next = self
                .workers
                .get(self.next_worker % self.workers.len().max(1));
            self.next_worker = self.next_worker.wrapping_add(1);
            next.cloned()
        });
        let handle = GameActor::spawn_on(worker.as_ref(), setup, seated);
        self.core.set_route(id, handle);
    }

    /// A random start of `plies` moves in `variant`, drawn on the engine
    /// pool (`None` if there is none, or the pool is gone).
    fn draw_start(
        &self,
        variant: flipline::Variant,
        plies: u8,
    ) -> impl std::future::Future<Output = Option<Vec<flipline::Move>>> + 'static {
        let draw = DrawStart {
            variant,
            plies: usize::from(plies),
            seed: random_u64(),
        };
        let request = self.services.engine.send(draw);
        async move { request.await.ok().flatten() }
    }

    /// Asks every connection to close if it has been idle past the timeout: one
    /// sweep here instead of a timer in each of thousands of connections.
    fn sweep_idle(&mut self) {
        for session in self.sessions.values() {
            session.addr.tell(ToSession::IdleCheck);
        }
    }

    /// `LOGIN` past its password. A holder whose connection has stopped but
    /// whose `Gone` is still on its way has gone: that is said first, so the
    /// name is free.
    fn login(&mut self, msg: &Login) -> Result<LoggedIn, ProtocolError> {
        if let Some(holder) = self.core.holder(&msg.name)
            && holder != msg.id
            && self.sessions.get(&holder).is_none_or(|s| s.addr.is_gone())
        {
            let effects = self.core.gone(holder, &msg.name);
            self.carry_out_all(effects);
        }
        let logged_in = self.core.login(&msg.name, msg.id, msg.guest)?;
        self.core.set_marks(&logged_in.name, msg.marks);
        if self
            .pairing_pending
            .as_ref()
            .is_some_and(|p| p(&logged_in.name))
        {
            self.core.mark_pairing(&logged_in.name);
        }
        Ok(logged_in)
    }

    /// The route the session asking gets for a game the core just seated it in.
    fn route(&self, game: GameId) -> Result<SeatRef, Refusal> {
        self.core.route(game).cloned().ok_or(Refusal::NoGame(game))
    }
}

impl Actor for Lobby {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        self.schedule_sweep(ctx);
    }
}

impl Lobby {
    /// The next idle sweep, a quarter of the timeout from now: read again
    /// each time, so that a timeout changed by SIGHUP counts from the next
    /// sweep on.
    fn schedule_sweep(&self, ctx: &mut Context<Self>) {
        let every = idle_sweep_interval(self.live.idle_timeout());
        ctx.run_later(every, |act, ctx| {
            act.sweep_idle();
            act.schedule_sweep(ctx);
        });
    }
}

/// How often the lobby looks for idle connections: a quarter of the timeout
/// (so a connection closes at most a quarter late), at most once a minute.
fn idle_sweep_interval(timeout: Duration) -> Duration {
    (timeout / 4).clamp(Duration::from_millis(50), Duration::from_secs(60))
}

impl Handler<Connected<SessionRef>> for Lobby {
    type Result = ();

    fn handle(&mut self, msg: Connected<SessionRef>, _: &mut Context<Self>) {
        let entry = SessionEntry {
            addr: msg.session,
            worker: msg.worker,
        };
        self.sessions.insert(msg.id, entry);
    }
}

impl Handler<Gone> for Lobby {
    type Result = ();

    fn handle(&mut self, msg: Gone, ctx: &mut Context<Self>) {
        let name = msg.name.clone();
        self.when_free(ctx, touching(name, None), move |act, _| {
            if let Some(name) = msg.name {
                let effects = act.core.gone(msg.id, &name);
                act.carry_out_all(effects);
            }
            if msg.closed {
                act.sessions.remove(&msg.id);
            }
        });
    }
}

impl Handler<Login> for Lobby {
    type Result = ResponseFuture<Result<LoggedIn, ProtocolError>>;

    fn handle(&mut self, msg: Login, ctx: &mut Context<Self>) -> Self::Result {
        let (reply, answer) = oneshot::channel();
        let name = Name::clone(&msg.name);
        self.when_free(ctx, touching(Some(name), None), move |act, _| {
            let _ = reply.send(act.login(&msg));
        });
        answered(answer)
    }
}

impl Handler<Create<SessionRef>> for Lobby {
    type Result = ResponseFuture<Result<SeatRef, ProtocolError>>;

    fn handle(&mut self, msg: Create<SessionRef>, ctx: &mut Context<Self>) -> Self::Result {
        let (reply, answer) = oneshot::channel();
        let name = Name::clone(&msg.name);
        self.when_free(ctx, touching(Some(name), None), move |act, ctx| {
            let numbers = &mut act.numbers;
            let decided = act
                .core
                .new_game(&msg.name, &msg.spec, || numbers.take(), coin());
            act.conclude(ctx, decided, reply, |act, game| act.route(game));
        });
        answered(answer)
    }
}

impl Handler<Seek<SessionRef>> for Lobby {
    type Result = ResponseFuture<Result<Option<SeatRef>, ProtocolError>>;

    fn handle(&mut self, msg: Seek<SessionRef>, ctx: &mut Context<Self>) -> Self::Result {
        let (reply, answer) = oneshot::channel();
        let name = Name::clone(&msg.name);
        self.when_free(ctx, touching(Some(name), None), move |act, ctx| {
            let numbers = &mut act.numbers;
            let decided = (act.core).seek(&msg.name, msg.wanted, || numbers.take(), coin());
            act.conclude(ctx, decided, reply, |act, sought| match sought {
                Sought::Paired(game) => act.route(game).map(Some),
                Sought::Seeking => Ok(None),
            });
        });
        answered(answer)
    }
}

impl Handler<Join<SessionRef>> for Lobby {
    type Result = ResponseFuture<Result<(SeatRef, flipline::Color), ProtocolError>>;

    fn handle(&mut self, msg: Join<SessionRef>, ctx: &mut Context<Self>) -> Self::Result {
        let (reply, answer) = oneshot::channel();
        let name = Name::clone(&msg.name);
        self.when_free(
            ctx,
            touching(Some(name), Some(msg.game)),
            move |act, ctx| {
                // A seat taken is answered with the game's snapshot, which a
                // node whose lease passed may no longer know.
                if act.services.lease_lapsed() && act.core.route(msg.game).is_some() {
                    let _ = reply.send(Err(Refusal::LeaseLapsed(msg.game).into()));
                    return;
                }
                let decided = act.core.join(&msg.name, msg.game);
                act.conclude(ctx, decided, reply, |act, (game, color)| {
                    Ok((act.route(game)?, color))
                });
            },
        );
        answered(answer)
    }
}

impl Handler<Leave> for Lobby {
    type Result = ResponseFuture<Result<Left, ProtocolError>>;

    fn handle(&mut self, msg: Leave, ctx: &mut Context<Self>) -> Self::Result {
        let (reply, answer) = oneshot::channel();
        let name = Name::clone(&msg.name);
        self.when_free(ctx, touching(Some(name), None), move |act, ctx| {
            let decided = act.core.leave(&msg.name, msg.watching);
            act.conclude(ctx, decided, reply, |_, left| Ok(left));
        });
        answered(answer)
    }
}

impl Handler<Rematch<SessionRef>> for Lobby {
    type Result = ResponseFuture<Result<Option<SeatRef>, ProtocolError>>;

    fn handle(&mut self, msg: Rematch<SessionRef>, ctx: &mut Context<Self>) -> Self::Result {
        let (reply, answer) = oneshot::channel();
        let name = Name::clone(&msg.name);
        self.when_free(ctx, touching(Some(name), None), move |act, ctx| {
            let numbers = &mut act.numbers;
            let decided = act.core.rematch(&msg.name, || numbers.take());
            act.conclude(ctx, decided, reply, |act, rematched| match rematched {
                Rematched::Game(game) => act.route(game).map(Some),
                Rematched::Waiting => Ok(None),
            });
        });
        answered(answer)
    }
}

/// The answer a handler hands back while the work runs now or later.
fn answered<T: 'static>(
    answer: oneshot::Receiver<Result<T, ProtocolError>>,
) -> ResponseFuture<Result<T, ProtocolError>> {
    Box::pin(async move {
        answer.await.unwrap_or_else(|_| {
            Err(ProtocolError::new(
                ErrorCode::Unavailable,
                "the daemon is stopping",
            ))
        })
    })
}

impl Lobby {
    /// Starts the actor of a game the store holds as in play, its people away
    /// and its bots in their seats. A game whose stored moves already end it
    /// (its end was not written before the daemon stopped) is ended instead
    /// (`end_at_recovery`: stored, then told to its tournament).
    fn recover(&mut self, ctx: &mut Context<Self>, record: GameRecord) -> bool {
        match stored_game_state(record.variant, &record.transcript()) {
            Ok(None) => {}
            Ok(Some(result)) => {
                self.end_at_recovery(ctx, record.id, result);
                return false;
            }
            Err(e) => {
                tracing::error!(game = record.id, error = %e, "a stored game does not replay");
                return false;
            }
        }
        let seats = [
            Sitter::from_stored(record.black.as_deref()),
            Sitter::from_stored(record.white.as_deref()),
        ];
        let secrets = (record.secrets.clone()).map(|s| s.as_deref().and_then(GuestSecret::parse));
        if !(self.core).recover(
            record.id,
            record.variant,
            record.clock,
            seats.clone(),
            secrets,
            record.rated,
        ) {
            return false;
        }
        self.numbers.seen(record.id);
        // Taken over from another node, a tournament's game has no rematch
        // here either (its tournament, here or elsewhere, follows it).
        if record.tourney.is_some() {
            self.core.mark_tourney_game(record.id);
        }
        let seats = seats.map(|s| self.session_refs(s));
        let setup = GameSetup {
            id: record.id,
            variant: record.variant,
            clock: record.clock,
            seats,
            start: record.moves,
            rated: record.rated,
            recovered: true,
            services: Arc::clone(&self.services),
        };
        self.start_game(setup, None, &[]);
        true
    }
}

impl Handler<Recover> for Lobby {
    type Result = usize;

    fn handle(&mut self, Recover(records): Recover, ctx: &mut Context<Self>) -> usize {
        let mut started = 0;
        for record in records {
            let game = record.id;
            started += usize::from(self.recover(ctx, record));
            let core = &self.core;
            self.taken_over.recovered(game, |name| core.seat_of(name));
        }
        started
    }
}

impl Handler<Find<SessionRef>> for Lobby {
    type Result = Option<SeatRef>;

    fn handle(&mut self, Find(game, _): Find<SessionRef>, _: &mut Context<Self>) -> Self::Result {
        self.core.route(game).cloned()
    }
}

impl Handler<ListGames> for Lobby {
    type Result = Vec<Event>;

    fn handle(&mut self, ListGames(query): ListGames, _: &mut Context<Self>) -> Vec<Event> {
        // A game whose creation is not stored yet is not shown: its number
        // reaches nobody before its players' answer.
        let games = (self.core.games_from(query.from))
            .filter(|(_, entry)| entry.route.is_some())
            .filter(|(_, entry)| query.status.is_none_or(|s| s == entry.phase.status()))
            .map(|(game, entry)| (game, game_line(game, entry)));
        page(games, |&game| query.resumed_at(game).to_string())
    }
}

/// A game's `GAME` line.
fn game_line(game: GameId, entry: &Entry<SeatRef>) -> Event {
    let [black, white] = &entry.seats;
    Event::Game {
        game,
        variant: entry.variant,
        black: black.as_ref().map(|o| o.name().to_string()),
        white: white.as_ref().map(|o| o.name().to_string()),
        status: entry.phase.status(),
        ply: (entry.route.as_ref()).map_or(0, |r| r.ply.load(Ordering::Relaxed)),
    }
}

impl Handler<ListPlayers> for Lobby {
    type Result = Vec<Event>;

    fn handle(&mut self, ListPlayers(query): ListPlayers, _: &mut Context<Self>) -> Vec<Event> {
        let from = query.from.clone().unwrap_or_default();
        let names = (self.core.who().into_iter())
            .filter(|(name, _, _)| **name >= *from)
            .map(|(name, status, marks)| {
                let line = Event::Player {
                    name: name.to_string(),
                    status,
                    rating: marks.rating.map(i32::from),
                    bot: marks.bot,
                };
                (name, line)
            });
        page(names, |name| {
            let rest = flipline::protocol::WhoQuery {
                from: Some(name.to_string()),
            };
            rest.to_string()
        })
    }
}

use crate::rules::listing::PAGE as LIST_PAGE;

/// The first [`LIST_PAGE`] lines of `items`, and after them, if more are
/// left, `INFO more: <the command that lists the rest>`.
fn page<K>(items: impl Iterator<Item = (K, Event)>, rest: impl FnOnce(&K) -> String) -> Vec<Event> {
    let mut lines = Vec::new();
    for (key, line) in items {
        if lines.len() == LIST_PAGE {
            lines.push(Event::Info(format!("more: {}", rest(&key))));
            break;
        }
        lines.push(line);
    }
    lines
}

impl Handler<FromGame> for Lobby {
    type Result = ();

    fn handle(&mut self, msg: FromGame, ctx: &mut Context<Self>) {
        let game = match msg {
            FromGame::Ended(game) | FromGame::Closed(game) | FromGame::Announced(game, _) => game,
            FromGame::Rated(name, rating) => return self.core.rated(&name, rating),
        };
        // In the order the game sent them, behind a decision held on it.
        self.when_free(ctx, touching(None, Some(game)), move |act, ctx| match msg {
            FromGame::Ended(game) => {
                act.core.ended(game);
                if let Some(tell) = &act.tell_over {
                    tell(game);
                }
            }
            FromGame::Announced(game, result) => act.tourney_game_over(ctx, game, result),
            FromGame::Closed(game) => act.core.closed(game),
            FromGame::Rated(..) => {}
        });
    }
}

impl Handler<TellEnds> for Lobby {
    type Result = ();

    fn handle(&mut self, TellEnds(tell): TellEnds, _: &mut Context<Self>) {
        self.tell_over = Some(tell);
    }
}

impl Handler<MarkedBot> for Lobby {
    type Result = ();

    fn handle(&mut self, MarkedBot(name): MarkedBot, _: &mut Context<Self>) {
        self.core.marked_bot(&name);
    }
}

impl Handler<BroadcastShutdown> for Lobby {
    type Result = usize;

    fn handle(&mut self, _: BroadcastShutdown, _: &mut Context<Self>) -> usize {
        for session in self.sessions.values() {
            session.addr.tell(ToSession::Shutdown);
        }
        self.sessions.len()
    }
}

/// The write an effect needs committed before the command's answer: a new
/// game, the seats of a game joined.
fn write_of(effect: &LobbyEffect<SeatRef>) -> Option<Write> {
    match effect {
        LobbyEffect::Launch(launch) => {
            let [black, white] = &launch.seats;
            let open = matches!(black, Sitter::Open) || matches!(white, Sitter::Open);
            Some(Write::NewGame {
                id: launch.id,
                variant: launch.variant,
                black: black.name().map(|n| n.to_string()),
                white: white.name().map(|n| n.to_string()),
                secrets: launch.secrets.map(|s| s.map(|s| s.to_string())),
                clock: launch.clock,
                status: if open { Status::Open } else { Status::Playing },
                start: launch.start.clone(),
                rated: launch.rated,
                tourney: launch.tourney,
            })
        }
        LobbyEffect::StoreSeats {
            game,
            black,
            white,
            secrets,
        } => Some(Write::Seats {
            game: *game,
            black: black.as_ref().map(|n| n.to_string()),
            white: white.as_ref().map(|n| n.to_string()),
            secrets: secrets.map(|s| s.map(|s| s.to_string())),
        }),
        LobbyEffect::StoreCancel(_) | LobbyEffect::ToGame(..) | LobbyEffect::Tell(..) => None,
    }
}

/// A fair coin for colours.
fn coin() -> bool {
    random_u64() & 1 == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn idle_sweeps_come_every_quarter_timeout_within_bounds() {
        let s = Duration::from_secs;
        assert_eq!(idle_sweep_interval(s(1)), Duration::from_millis(250));
        assert_eq!(idle_sweep_interval(s(120)), s(30));
        assert_eq!(idle_sweep_interval(s(900)), s(60), "at most once a minute");
        assert_eq!(
            idle_sweep_interval(Duration::ZERO),
            Duration::from_millis(50)
        );
    }
}
