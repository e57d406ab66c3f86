//! The lobby: who is online, open seeks, game ids, the list of games, pairing.
//! It is never on the move path: moves go from a session straight to its game.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use actix::{Actor, Addr, ArbiterHandle, AsyncContext, Context, Handler};
use flipline::Color;
use flipline::Variant;
use flipline::notation::replay_with_passes;
use flipline::protocol::{
    ClockSpec, ErrorCode, Event, GameId, Opponent, ProtocolError, SeatChoice,
};

use crate::config::Config;
use crate::engine_pool::EngineWorker;
use crate::game::{GameActor, GameSetup};
use crate::messages::*;
use crate::random_u64;
use crate::session::Session;

/// What the lobby knows of a game.
struct GameEntry {
    addr: Addr<GameActor>,
    variant: Variant,
    black: Option<String>,
    white: Option<String>,
    status: &'static str,
    /// Written by the game on every move, read here for `LIST`: no message per move.
    ply: Arc<AtomicU32>,
}

struct OpenSeek {
    member: Member,
    variant: Variant,
    clock: Option<ClockSpec>,
}

/// The lobby actor (one per daemon).
pub struct Lobby {
    config: Arc<Config>,
    engine: Addr<EngineWorker>,
    workers: Vec<ArbiterHandle>,
    next_worker: usize,
    next_game: GameId,
    sessions: HashMap<u64, Addr<Session>>,
    names: HashMap<String, Addr<Session>>,
    seeks: Vec<OpenSeek>,
    games: HashMap<GameId, GameEntry>,
}

impl Lobby {
    /// A lobby that starts games on `workers` (round robin) with `engine` for bots.
    pub fn new(
        config: Arc<Config>,
        engine: Addr<EngineWorker>,
        workers: Vec<ArbiterHandle>,
    ) -> Lobby {
        Lobby {
            config,
            engine,
            workers,
            next_worker: 0,
            next_game: 1,
            sessions: HashMap::new(),
            names: HashMap::new(),
            seeks: Vec::new(),
            games: HashMap::new(),
        }
    }

    /// Starts a game actor on the next worker thread and records it.
    fn spawn_game(&mut self, ctx: &mut Context<Self>, order: Spawn) -> SeatRef {
        let game = self.next_game;
        self.next_game += 1;
        let ply = Arc::new(AtomicU32::new(0));
        let setup = GameSetup {
            id: game,
            variant: order.variant,
            clock: order.clock,
            black: order.black,
            white: order.white,
            start: order.start,
            config: Arc::clone(&self.config),
            lobby: ctx.address(),
            engine: self.engine.clone(),
            ply: Arc::clone(&ply),
        };
        let name_of = |seat: &SeatSpec| match seat {
            SeatSpec::Human(m) => Some(m.name.clone()),
            SeatSpec::Bot(level) => Some(format!("bot:{level}")),
            SeatSpec::Open => None,
        };
        let (black, white) = (name_of(&setup.black), name_of(&setup.white));
        let addr = match self
            .workers
            .get(self.next_worker % self.workers.len().max(1))
        {
            Some(worker) => GameActor::start_in_arbiter(worker, move |_| GameActor::new(setup)),
            None => GameActor::new(setup).start(),
        };
        self.next_worker = self.next_worker.wrapping_add(1);
        let status = if black.is_some() && white.is_some() {
            "playing"
        } else {
            "open"
        };
        let entry = GameEntry {
            addr: addr.clone(),
            variant: order.variant,
            black,
            white,
            status,
            ply,
        };
        self.games.insert(game, entry);
        SeatRef { game, addr }
    }
}

impl Actor for Lobby {
    type Context = Context<Self>;
}

impl Handler<Connected> for Lobby {
    type Result = ();

    fn handle(&mut self, msg: Connected, _: &mut Context<Self>) {
        self.sessions.insert(msg.id, msg.session);
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
            Some(holder) if *holder != member.session => Err(ProtocolError::new(
                ErrorCode::Conflict,
                format!("name '{}' is in use", member.name),
            )),
            _ => {
                self.names.insert(member.name, member.session);
                Ok(())
            }
        }
    }
}

impl Handler<Create> for Lobby {
    type Result = Result<SeatRef, ProtocolError>;

    fn handle(&mut self, msg: Create, ctx: &mut Context<Self>) -> Self::Result {
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
        };
        Ok(self.spawn_game(ctx, order))
    }
}

impl Handler<Seek> for Lobby {
    type Result = Result<Option<SeatRef>, ProtocolError>;

    fn handle(&mut self, msg: Seek, ctx: &mut Context<Self>) -> Self::Result {
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
            });
            return Ok(None);
        };
        let waiting = self.seeks.remove(index);
        let (first, second) = (
            SeatSpec::Human(waiting.member.clone()),
            SeatSpec::Human(msg.member),
        );
        let (black, white) = match random_color() {
            Color::Black => (first, second),
            Color::White => (second, first),
        };
        let seat = self.spawn_game(
            ctx,
            Spawn {
                variant: msg.variant,
                clock: msg.clock,
                black,
                white,
                start: Vec::new(),
            },
        );
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

    fn handle(&mut self, msg: Spawn, ctx: &mut Context<Self>) -> Self::Result {
        Ok(self.spawn_game(ctx, msg))
    }
}

impl Handler<Find> for Lobby {
    type Result = Option<Addr<GameActor>>;

    fn handle(&mut self, Find(game): Find, _: &mut Context<Self>) -> Self::Result {
        self.games.get(&game).map(|entry| entry.addr.clone())
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
                black: g.black.clone(),
                white: g.white.clone(),
                status: g.status.to_string(),
                ply: g.ply.load(Ordering::Relaxed),
            })
            .collect()
    }
}

impl Handler<ListPlayers> for Lobby {
    type Result = Vec<Event>;

    fn handle(&mut self, _: ListPlayers, _: &mut Context<Self>) -> Vec<Event> {
        let mut playing: HashMap<&str, GameId> = HashMap::new();
        for (&id, g) in self.games.iter().filter(|(_, g)| g.status != "over") {
            for name in [&g.black, &g.white].into_iter().flatten() {
                playing.insert(name.as_str(), id);
            }
        }
        let mut names: Vec<&String> = self.names.keys().collect();
        names.sort();
        names
            .into_iter()
            .map(|name| {
                let status = if let Some(game) = playing.get(name.as_str()) {
                    format!("playing {game}")
                } else if self.seeks.iter().any(|s| &s.member.name == name) {
                    "seeking".to_string()
                } else {
                    "idle".to_string()
                };
                Event::Player {
                    name: name.clone(),
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
        for session in self.sessions.values() {
            session.do_send(ShutdownNotice);
        }
        self.sessions.len()
    }
}

fn random_color() -> Color {
    if random_u64() & 1 == 0 {
        Color::Black
    } else {
        Color::White
    }
}
