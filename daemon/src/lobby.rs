//! The lobby: who is online, open seeks, game ids, the list of games, pairing.
//! It is never on the move path: moves go from a session straight to its game.
//! It writes each new game to the store before its actor starts, so that the
//! game's first move, written by the game, follows it in the store's queue; and
//! at start it brings back the games the store holds as in play.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use actix::{Actor, Addr, ArbiterHandle, AsyncContext, Context, Handler, WeakAddr};
use flipline::Color;
use flipline::Variant;
use flipline::notation::replay_with_passes;
use flipline::protocol::{
    ClockSpec, EndReason, ErrorCode, Event, GameId, GameResult, Opponent, ProtocolError, SeatChoice,
};

use crate::config::Config;
use crate::engine_pool::EngineWorker;
use crate::game::{GameActor, GameServices, GameSetup};
use crate::game_numbers::{GameNumbers, Reserved};
use crate::messages::*;
use crate::random_u64;
use crate::session::Session;
use crate::store::{GameRecord, Status, Store, StoredMove, Write};

/// What the lobby knows of a game.
struct GameEntry {
    handle: SeatRef,
    variant: Variant,
    status: Status,
    black: Option<Name>,
    white: Option<Name>,
}

struct OpenSeek {
    member: Member,
    variant: Variant,
    clock: Option<ClockSpec>,
    near: ArbiterHandle,
}

/// The lobby actor (one per daemon).
pub struct Lobby {
    /// The config, the engine pool, the store and this lobby's own address:
    /// what the lobby uses and what every game it starts shares.
    services: Arc<GameServices>,
    workers: Vec<ArbiterHandle>,
    next_worker: usize,
    numbers: GameNumbers,
    /// Weak addresses: a strong one costs two allocations per copy, and the
    /// lobby only needs these to reach sessions that still exist.
    sessions: HashMap<u64, WeakAddr<Session>>,
    names: HashMap<Name, WeakAddr<Session>>,
    seeks: Vec<OpenSeek>,
    games: HashMap<GameId, GameEntry>,
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
            numbers: GameNumbers::new(next_game, store.clone()),
            services: Arc::new(GameServices {
                config,
                lobby: ctx.address(),
                engine,
                store,
            }),
            workers,
            next_worker: 0,
            sessions: HashMap::new(),
            names: HashMap::new(),
            seeks: Vec::new(),
            games: HashMap::new(),
        })
    }

    /// Numbers a new game, writes it to the store and starts it.
    fn spawn_game(&mut self, order: Spawn) -> SeatRef {
        let game = self.numbers.take();
        self.reserve_ahead();
        let (black, white) = (order.black.name(), order.white.name());
        let status = status_of_seats(&black, &white);
        self.services.store.write(Write::NewGame {
            id: game,
            variant: order.variant,
            black: black.map(|n| n.to_string()),
            white: white.map(|n| n.to_string()),
            clock: order.clock,
            status,
            start: order.start.clone(),
        });
        let start = order
            .start
            .iter()
            .map(|&mv| StoredMove { mv, ms: None })
            .collect();
        self.launch(game, order, start, false)
    }

    /// Asks the store for more game numbers when few are left.
    fn reserve_ahead(&mut self) {
        if let Some(reservation) = self.numbers.ask_ahead() {
            let lobby = self.services.lobby.clone();
            actix::spawn(async move { lobby.do_send(NumbersReserved(reservation.await)) });
        }
    }

    /// Starts a game actor, on a player's worker thread if the order names
    /// one, else on the next in turn, and records it.
    fn launch(
        &mut self,
        game: GameId,
        order: Spawn,
        start: Vec<StoredMove>,
        recovered: bool,
    ) -> SeatRef {
        let setup = GameSetup {
            id: game,
            variant: order.variant,
            clock: order.clock,
            black: order.black,
            white: order.white,
            start,
            recovered,
            services: Arc::clone(&self.services),
        };
        let (black, white) = (setup.black.name(), setup.white.name());
        let handle = match &order.near {
            Some(near) => GameActor::spawn_on(Some(near), setup),
            None => {
                let worker = self
                    .workers
                    .get(self.next_worker % self.workers.len().max(1));
                self.next_worker = self.next_worker.wrapping_add(1);
                GameActor::spawn_on(worker, setup)
            }
        };
        let entry = GameEntry {
            handle: Arc::clone(&handle),
            variant: order.variant,
            status: status_of_seats(&black, &white),
            black,
            white,
        };
        self.games.insert(game, entry);
        handle
    }

    /// Asks every connection to close if it has been idle past the timeout: one
    /// sweep here instead of a timer in each of thousands of connections.
    fn sweep_idle(&mut self) {
        for session in self.sessions.values().filter_map(WeakAddr::upgrade) {
            session.do_send(IdleCheck);
        }
    }
}

impl Actor for Lobby {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        let timeout = Duration::from_secs(self.services.config.idle_timeout_secs);
        ctx.run_interval(idle_sweep_interval(timeout), |act, _| act.sweep_idle());
        // The first game need not wait for its number.
        self.reserve_ahead();
    }
}

/// How often the lobby looks for idle connections: a quarter of the timeout
/// (so a connection closes at most a quarter late), at most once a minute.
fn idle_sweep_interval(timeout: Duration) -> Duration {
    (timeout / 4).clamp(Duration::from_millis(50), Duration::from_secs(60))
}

impl Handler<Connected> for Lobby {
    type Result = ();

    fn handle(&mut self, msg: Connected, _: &mut Context<Self>) {
        self.sessions.insert(msg.id, msg.session.downgrade());
    }
}

impl Handler<Gone> for Lobby {
    type Result = ();

    fn handle(&mut self, msg: Gone, _: &mut Context<Self>) {
        self.sessions.remove(&msg.id);
        if let Some(name) = msg.name {
            self.names.remove(&name);
            self.seeks.retain(|s| s.member.name != name);
        }
    }
}

impl Handler<Login> for Lobby {
    type Result = Result<(), ProtocolError>;

    fn handle(&mut self, Login(member): Login, _: &mut Context<Self>) -> Self::Result {
        match self.names.get(&member.name) {
            Some(holder) if holder.upgrade().is_some_and(|h| h != member.session) => {
                Err(ProtocolError::new(
                    ErrorCode::Conflict,
                    format!("name '{}' is in use", member.name),
                ))
            }
            _ => {
                self.names.insert(member.name, member.session.downgrade());
                Ok(())
            }
        }
    }
}

impl Handler<Create> for Lobby {
    type Result = Result<SeatRef, ProtocolError>;

    fn handle(&mut self, msg: Create, _: &mut Context<Self>) -> Self::Result {
        let spec = msg.spec;
        let other = match spec.opponent {
            Opponent::Open => SeatSpec::Open,
            Opponent::Bot(level) => SeatSpec::Bot(level),
            Opponent::Hotseat => SeatSpec::Human(msg.creator.clone()),
        };
        let creator = SeatSpec::Human(msg.creator);
        let creator_color = match spec.seat {
            SeatChoice::Black => Color::Black,
            SeatChoice::White => Color::White,
            SeatChoice::Random => random_color(),
        };
        let (black, white) = match creator_color {
            Color::Black => (creator, other),
            Color::White => (other, creator),
        };
        let (position, start) = replay_with_passes(spec.variant, &spec.from)
            .map_err(|e| ProtocolError::bad(format!("from: {e}")))?;
        if position.is_over() {
            return Err(ProtocolError::bad("from: those moves end the game"));
        }
        let order = Spawn {
            variant: spec.variant,
            clock: spec.clock,
            black,
            white,
            start,
            near: Some(msg.near),
        };
        Ok(self.spawn_game(order))
    }
}

impl Handler<Seek> for Lobby {
    type Result = Result<Option<SeatRef>, ProtocolError>;

    fn handle(&mut self, msg: Seek, _: &mut Context<Self>) -> Self::Result {
        let name = msg.member.name.clone();
        self.seeks.retain(|s| s.member.name != name);
        let found = self
            .seeks
            .iter()
            .position(|s| s.variant == msg.variant && s.clock == msg.clock);
        let Some(index) = found else {
            self.seeks.push(OpenSeek {
                member: msg.member,
                variant: msg.variant,
                clock: msg.clock,
                near: msg.near,
            });
            return Ok(None);
        };
        let waiting = self.seeks.remove(index);
        let (first, second) = (SeatSpec::Human(waiting.member), SeatSpec::Human(msg.member));
        let (black, white) = match random_color() {
            Color::Black => (first, second),
            Color::White => (second, first),
        };
        let seat = self.spawn_game(Spawn {
            variant: msg.variant,
            clock: msg.clock,
            black,
            white,
            start: Vec::new(),
            near: Some(waiting.near),
        });
        Ok(Some(seat))
    }
}

impl Handler<CancelSeek> for Lobby {
    type Result = bool;

    fn handle(&mut self, msg: CancelSeek, _: &mut Context<Self>) -> bool {
        let before = self.seeks.len();
        self.seeks.retain(|s| s.member.name != msg.name);
        self.seeks.len() != before
    }
}

impl Handler<Spawn> for Lobby {
    type Result = Result<SeatRef, ProtocolError>;

    fn handle(&mut self, msg: Spawn, _: &mut Context<Self>) -> Self::Result {
        Ok(self.spawn_game(msg))
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
        let order = Spawn {
            variant: record.variant,
            clock: record.clock,
            black: SeatSpec::from_stored(record.black.as_deref()),
            white: SeatSpec::from_stored(record.white.as_deref()),
            start: Vec::new(),
            near: None,
        };
        self.numbers.skip_past(record.id);
        self.launch(record.id, order, record.moves, true);
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

impl Handler<Find> for Lobby {
    type Result = Option<SeatRef>;

    fn handle(&mut self, Find(game): Find, _: &mut Context<Self>) -> Self::Result {
        self.games.get(&game).map(|entry| Arc::clone(&entry.handle))
    }
}

impl Handler<ListGames> for Lobby {
    type Result = Vec<Event>;

    fn handle(&mut self, _: ListGames, _: &mut Context<Self>) -> Vec<Event> {
        let mut ids: Vec<&GameId> = self.games.keys().collect();
        ids.sort();
        ids.into_iter()
            .filter_map(|id| self.games.get(id).map(|g| (id, g)))
            .map(|(&game, g)| Event::Game {
                game,
                variant: g.variant,
                black: g.black.as_deref().map(str::to_string),
                white: g.white.as_deref().map(str::to_string),
                status: g.status.word().to_string(),
                ply: g.handle.ply.load(Ordering::Relaxed),
            })
            .collect()
    }
}

impl Handler<ListPlayers> for Lobby {
    type Result = Vec<Event>;

    fn handle(&mut self, _: ListPlayers, _: &mut Context<Self>) -> Vec<Event> {
        let mut playing: HashMap<&str, GameId> = HashMap::new();
        for (&id, g) in self.games.iter().filter(|(_, g)| g.status != Status::Over) {
            for name in [&g.black, &g.white].into_iter().flatten() {
                playing.insert(name, id);
            }
        }
        let mut names: Vec<&Name> = self.names.keys().collect();
        names.sort();
        names
            .into_iter()
            .map(|name| {
                let status = if let Some(game) = playing.get(&**name) {
                    format!("playing {game}")
                } else if self.seeks.iter().any(|s| &s.member.name == name) {
                    "seeking".to_string()
                } else {
                    "idle".to_string()
                };
                Event::Player {
                    name: name.to_string(),
                    status,
                }
            })
            .collect()
    }
}

impl Handler<GameChanged> for Lobby {
    type Result = ();

    fn handle(&mut self, msg: GameChanged, _: &mut Context<Self>) {
        if let Some(entry) = self.games.get_mut(&msg.game) {
            entry.black = msg.black;
            entry.white = msg.white;
            entry.status = msg.status;
        }
    }
}

impl Handler<GameClosed> for Lobby {
    type Result = ();

    fn handle(&mut self, GameClosed(game): GameClosed, _: &mut Context<Self>) {
        self.games.remove(&game);
    }
}

impl Handler<BroadcastShutdown> for Lobby {
    type Result = usize;

    fn handle(&mut self, _: BroadcastShutdown, _: &mut Context<Self>) -> usize {
        for session in self.sessions.values().filter_map(WeakAddr::upgrade) {
            session.do_send(ShutdownNotice);
        }
        self.sessions.len()
    }
}

/// A new game is in play once both seats are filled, open until then.
fn status_of_seats(black: &Option<Name>, white: &Option<Name>) -> Status {
    if black.is_some() && white.is_some() {
        Status::Playing
    } else {
        Status::Open
    }
}

fn random_color() -> Color {
    if random_u64() & 1 == 0 {
        Color::Black
    } else {
        Color::White
    }
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
