//! The lobby actor: a shell around the lobby core ([`LobbyCore`]), which knows
//! who is online, the seeks, the games and who sits at each. The actor numbers
//! games, writes them to the store, starts their actors (each on a player's
//! worker thread), tells sessions and games what the core decided, answers
//! `LIST` and `WHO`, and at start brings back the games the store holds as in
//! play. It is never on the move path: moves go from a session straight to its
//! game.
//!
//! The lobby only ever tells games and sessions (`do_send`), never waits on
//! them, so no two actors wait on each other. Games tell the lobby that they
//! ended before anyone hears `OVER`, so what a player does after `OVER` finds
//! the lobby knowing.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use actix::{Actor, Addr, ArbiterHandle, AsyncContext, Context, Handler};
use flipline::notation::replay_with_passes;
use flipline::protocol::{EndReason, Event, GameId, GameResult, ProtocolError};

use crate::config::Config;
use crate::engine_pool::EngineWorker;
use crate::game::{GameActor, GameServices, GameSetup};
use crate::game_numbers::{GameNumbers, Reserved};
use crate::messages::*;
use crate::random::random_u64;
use crate::rules::Sitter;
use crate::rules::lobby::{Done, Launch, LobbyCore, LobbyEffect, Rematched, Sought};
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
    /// This lobby, for the answers it sends itself.
    own: Addr<Lobby>,
    workers: Vec<ArbiterHandle>,
    next_worker: usize,
    numbers: GameNumbers,
    sessions: HashMap<ConnId, SessionEntry>,
    core: LobbyCore<SeatRef>,
}

impl Lobby {
    /// Starts a lobby that starts games on `workers` (a player's, or in turn) with
    /// `engine` for bots, writing them to `store`, numbering new games from
    /// `next_game`.
    pub fn start(
        config: Arc<Config>,
        engine: Addr<EngineWorker>,
        workers: Vec<ArbiterHandle>,
        store: Store,
        next_game: GameId,
    ) -> Addr<Lobby> {
        Lobby::create(move |ctx| Lobby {
            own: ctx.address(),
            numbers: GameNumbers::new(next_game, store.clone()),
            services: Arc::new(GameServices {
                config,
                lobby: ctx.address().recipient(),
                engine,
                store,
            }),
            workers,
            next_worker: 0,
            sessions: HashMap::new(),
            core: LobbyCore::new(),
        })
    }

    /// Carries out the core's decision and answers with its reply.
    fn carry_out<T>(&mut self, done: Done<T, SeatRef>) -> T {
        for effect in done.effects {
            self.carry_out_one(effect);
        }
        done.reply
    }

    fn carry_out_one(&mut self, effect: LobbyEffect<SeatRef>) {
        match effect {
            LobbyEffect::Launch(launch) => self.launch(launch),
            LobbyEffect::StoreSeats { game, black, white } => {
                self.services.store.write(Write::Seats {
                    game,
                    black: black.map(|n| n.to_string()),
                    white: white.map(|n| n.to_string()),
                });
            }
            LobbyEffect::StoreCancel(game) => {
                self.services.store.write(Write::Cancel { game });
            }
            LobbyEffect::ToGame(route, order) => {
                let order = order.map_conn(|id| self.sessions.get(&id).map(|s| s.addr.clone()));
                route.tx.do_send(GameRequest::Seating(order));
            }
        }
    }

    /// Writes a new game to the store and starts its actor: on the worker
    /// thread of the player it names, else on the next in turn.
    fn launch(&mut self, launch: Launch) {
        let [black, white] = &launch.seats;
        self.services.store.write(Write::NewGame {
            id: launch.id,
            variant: launch.variant,
            black: black.name().map(|n| n.to_string()),
            white: white.name().map(|n| n.to_string()),
            clock: launch.clock,
            status: if matches!(black, Sitter::Open) || matches!(white, Sitter::Open) {
                Status::Open
            } else {
                Status::Playing
            },
            start: launch.start.clone(),
        });
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

    /// Asks every connection to close if it has been idle past the timeout: one
    /// sweep here instead of a timer in each of thousands of connections.
    fn sweep_idle(&mut self) {
        for session in self.sessions.values() {
            session.addr.tell(ToSession::IdleCheck);
        }
    }

    /// The route the session asking gets for a game the core just seated it in.
    fn route(&self, game: GameId) -> Result<SeatRef, ProtocolError> {
        self.core.route(game).cloned().ok_or_else(|| {
            ProtocolError::new(
                flipline::protocol::ErrorCode::NotFound,
                format!("no game {game}"),
            )
        })
    }
}

impl Actor for Lobby {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        let timeout = Duration::from_secs(self.services.config.idle_timeout_secs);
        ctx.run_interval(idle_sweep_interval(timeout), |act, _| act.sweep_idle());
        // The first game need not wait for its number.
        ask_ahead(&mut self.numbers, &self.own);
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

    fn handle(&mut self, msg: Gone, _: &mut Context<Self>) {
        if let Some(name) = msg.name {
            let effects = self.core.gone(msg.id, &name);
            for effect in effects {
                self.carry_out_one(effect);
            }
        }
        self.sessions.remove(&msg.id);
    }
}

impl Handler<Login> for Lobby {
    type Result = Result<(), ProtocolError>;

    fn handle(&mut self, msg: Login, _: &mut Context<Self>) -> Self::Result {
        // A holder whose connection has stopped but whose `Gone` is still on
        // its way has gone: say so first, so the name is free.
        if let Some(holder) = self.core.holder(&msg.name)
            && holder != msg.id
            && self.sessions.get(&holder).is_none_or(|s| s.addr.is_gone())
        {
            let effects = self.core.gone(holder, &msg.name);
            for effect in effects {
                self.carry_out_one(effect);
            }
        }
        self.core.login(&msg.name, msg.id)
    }
}

impl Handler<Create<SessionRef>> for Lobby {
    type Result = Result<SeatRef, ProtocolError>;

    fn handle(&mut self, msg: Create<SessionRef>, _: &mut Context<Self>) -> Self::Result {
        let (numbers, lobby) = (&mut self.numbers, &self.own);
        let id = || take_number(numbers, lobby);
        let done = self.core.new_game(&msg.name, &msg.spec, id, coin())?;
        let game = self.carry_out(done);
        self.route(game)
    }
}

impl Handler<Seek<SessionRef>> for Lobby {
    type Result = Result<Option<SeatRef>, ProtocolError>;

    fn handle(&mut self, msg: Seek<SessionRef>, _: &mut Context<Self>) -> Self::Result {
        let (numbers, lobby) = (&mut self.numbers, &self.own);
        let id = || take_number(numbers, lobby);
        let done = self
            .core
            .seek(&msg.name, msg.variant, msg.clock, id, coin())?;
        match self.carry_out(done) {
            Sought::Paired(game) => self.route(game).map(Some),
            Sought::Seeking => Ok(None),
        }
    }
}

impl Handler<Join<SessionRef>> for Lobby {
    type Result = Result<(SeatRef, flipline::Color), ProtocolError>;

    fn handle(&mut self, msg: Join<SessionRef>, _: &mut Context<Self>) -> Self::Result {
        let done = self.core.join(&msg.name, msg.game)?;
        let (game, color) = self.carry_out(done);
        Ok((self.route(game)?, color))
    }
}

impl Handler<Leave> for Lobby {
    type Result = Result<crate::rules::lobby::Left, ProtocolError>;

    fn handle(&mut self, msg: Leave, _: &mut Context<Self>) -> Self::Result {
        let done = self.core.leave(&msg.name, msg.watching)?;
        Ok(self.carry_out(done))
    }
}

impl Handler<Rematch<SessionRef>> for Lobby {
    type Result = Result<Option<SeatRef>, ProtocolError>;

    fn handle(&mut self, msg: Rematch<SessionRef>, _: &mut Context<Self>) -> Self::Result {
        let (numbers, lobby) = (&mut self.numbers, &self.own);
        let id = || take_number(numbers, lobby);
        let done = self.core.rematch(&msg.name, id)?;
        match self.carry_out(done) {
            Rematched::Game(game) => self.route(game).map(Some),
            Rematched::Waiting => Ok(None),
        }
    }
}

/// Takes the next game number, and asks the store for more when few are left.
/// The core takes it as a closure, so that a refused command takes none.
fn take_number(numbers: &mut GameNumbers, lobby: &Addr<Lobby>) -> GameId {
    let game = numbers.take();
    ask_ahead(numbers, lobby);
    game
}

/// Asks the store for more game numbers when few are left.
fn ask_ahead(numbers: &mut GameNumbers, lobby: &Addr<Lobby>) {
    if let Some(reservation) = numbers.ask_ahead() {
        let lobby = lobby.clone();
        actix::spawn(async move { lobby.do_send(NumbersReserved(reservation.await)) });
    }
}

impl Lobby {
    /// Starts the actor of a game the store holds as in play, its people away
    /// and its bots in their seats. A game whose stored moves already end it
    /// (its end was not written before the daemon stopped) is ended instead.
    fn recover(&mut self, record: GameRecord) -> bool {
        let moves = record.transcript();
        let position = match replay_with_passes(record.variant, &moves) {
            Ok((position, _)) => position,
            Err(e) => {
                tracing::error!(game = record.id, error = %e, "a stored game does not replay");
                return false;
            }
        };
        if position.is_over() {
            let score = position.score();
            let result = GameResult {
                winner: score.winner,
                black: score.black,
                white: score.white,
                reason: EndReason::Normal,
            };
            self.services.store.write(Write::End {
                game: record.id,
                result,
            });
            return false;
        }
        let seats = [
            Sitter::from_stored(record.black.as_deref()),
            Sitter::from_stored(record.white.as_deref()),
        ];
        if !self
            .core
            .recover(record.id, record.variant, record.clock, seats.clone())
        {
            return false;
        }
        self.numbers.skip_past(record.id);
        let seats = seats.map(|s| self.session_refs(s));
        let setup = GameSetup {
            id: record.id,
            variant: record.variant,
            clock: record.clock,
            seats,
            start: record.moves,
            recovered: true,
            services: Arc::clone(&self.services),
        };
        self.start_game(setup, None, &[]);
        true
    }
}

impl Handler<Recover> for Lobby {
    type Result = usize;

    fn handle(&mut self, Recover(records): Recover, _: &mut Context<Self>) -> usize {
        let mut started = 0;
        for record in records {
            started += usize::from(self.recover(record));
        }
        started
    }
}

/// A reservation of game numbers asked ahead has been answered.
#[derive(actix::Message)]
#[rtype(result = "()")]
struct NumbersReserved(Reserved);

impl Handler<NumbersReserved> for Lobby {
    type Result = ();

    fn handle(&mut self, NumbersReserved(answer): NumbersReserved, _: &mut Context<Self>) {
        self.numbers.reserved(answer);
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

    fn handle(&mut self, _: ListGames, _: &mut Context<Self>) -> Vec<Event> {
        self.core
            .games()
            .map(|(game, entry)| {
                let [black, white] = &entry.seats;
                Event::Game {
                    game,
                    variant: entry.variant,
                    black: black.as_ref().map(|o| o.name().to_string()),
                    white: white.as_ref().map(|o| o.name().to_string()),
                    status: entry.phase.status(),
                    ply: entry
                        .route
                        .as_ref()
                        .map_or(0, |r| r.ply.load(Ordering::Relaxed)),
                }
            })
            .collect()
    }
}

impl Handler<ListPlayers> for Lobby {
    type Result = Vec<Event>;

    fn handle(&mut self, _: ListPlayers, _: &mut Context<Self>) -> Vec<Event> {
        self.core
            .who()
            .into_iter()
            .map(|(name, status)| Event::Player {
                name: name.to_string(),
                status,
            })
            .collect()
    }
}

impl Handler<FromGame> for Lobby {
    type Result = ();

    fn handle(&mut self, msg: FromGame, _: &mut Context<Self>) {
        match msg {
            FromGame::Ended(game) => self.core.ended(game),
            FromGame::Closed(game) => self.core.closed(game),
        }
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
