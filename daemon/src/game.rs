//! The game actor: one per game. It owns the board (a pure `flipline::Game`), the
//! seats, the spectators and the clocks, serialises moves, and tells everyone in
//! the game what happened. The rules themselves are in `flipline`; this is a shell.
//!
//! Durability: a move is applied, handed to the store, and announced only once
//! it is committed (`OK` to the mover, `MOVED` to everyone). While the commit is
//! pending the actor waits (`ctx.wait`), which holds its mailbox and timers, so
//! no other move of this game can slip in; other games are not held. If the
//! commit fails, the game, its clocks and its ply count go back to what they were
//! and the mover gets `ERR 503`. The end is committed before `OVER` is sent, in
//! the same way. Creation and seats are written too; nothing waits for those,
//! but the store keeps their order with the moves.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use actix::dev::{MessageResponse, OneshotSender};
use actix::fut::{self, ActorFutureExt, WrapFuture};
use actix::{
    Actor, ActorContext, Addr, AsyncContext, Context, Handler, ResponseActFuture, SpawnHandle,
    WeakAddr,
};
use flipline::notation::cells_string;
use flipline::protocol::{
    ClockSpec, EndReason, ErrorCode, Event, GameId, GameResult, ProtocolError,
};
use flipline::{Color, Game, Move, MoveError, Variant};

use crate::clock::{Clocks, Stamp, millis};
use crate::config::Config;
use crate::engine_pool::{EngineWorker, Think};
use crate::lazy_list::LazyList;
use crate::lobby::Lobby;
use crate::messages::*;
use crate::random_u64;
use crate::session::Session;
use crate::store::{Status, Store, StoredMove, Write};

/// The engine level `HINT` uses.
const HINT_LEVEL: u8 = 6;

/// Messages a game's mailbox holds before senders wait (actix's default).
const MAILBOX_CAPACITY: usize = 16;

/// How long a bot waits before trying again when its move could not be saved.
const BOT_RETRY: Duration = Duration::from_secs(1);

/// Everything a game actor starts from.
pub struct GameSetup {
    /// The game's id.
    pub id: GameId,
    /// Its variant.
    pub variant: Variant,
    /// Its clock.
    pub clock: Option<ClockSpec>,
    /// Black's seat.
    pub black: SeatSpec,
    /// White's seat.
    pub white: SeatSpec,
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
    /// The lobby, told of status changes.
    pub lobby: Addr<Lobby>,
    /// The engine pool, for bots and hints.
    pub engine: Addr<EngineWorker>,
    /// Where moves are committed.
    pub store: Store,
}

/// A connection as a game keeps it: weak, since a strong actix address costs
/// two allocations for as long as it is kept, and upgraded for each message
/// (which costs them only while it is sent).
type SessionRef = WeakAddr<Session>;

/// A person in a seat; `session` is `None` while they are disconnected.
struct Player {
    name: Name,
    session: Option<SessionRef>,
    /// Set while the connection is gone; boxed, since few players are away.
    away: Option<Box<Away>>,
}

/// A game's clocks and the timer that ends the game when the running one
/// reaches zero. Boxed: most games have no clock, and an idle game should be
/// small.
struct Timing {
    clocks: Clocks,
    flag_timer: Option<SpawnHandle>,
}

/// A seat kept for someone who lost their connection.
struct Away {
    /// When the connection went.
    since: Instant,
    /// The timer that ends the game when the grace period runs out.
    grace: Option<SpawnHandle>,
}

impl Player {
    fn new(name: Name, session: Option<SessionRef>) -> Player {
        Player {
            name,
            session,
            away: None,
        }
    }
}

enum Seat {
    Open,
    Bot(u8),
    Human(Player),
}

impl Seat {
    fn from_spec(spec: SeatSpec) -> Seat {
        match spec {
            SeatSpec::Open => Seat::Open,
            SeatSpec::Bot(level) => Seat::Bot(level),
            SeatSpec::Human(m) => Seat::Human(Player::new(m.name, Some(m.session.downgrade()))),
            SeatSpec::Away(name) => Seat::Human(Player::new(name, None)),
        }
    }

    fn name(&self) -> Option<Name> {
        match self {
            Seat::Open => None,
            Seat::Bot(level) => Some(bot_name(*level)),
            Seat::Human(p) => Some(p.name.clone()),
        }
    }

    /// The name as `START` shows it: `-` for an open seat.
    fn name_or_dash(&self) -> String {
        self.name()
            .map_or_else(|| "-".to_string(), |n| n.to_string())
    }

    /// The name as the store keeps it.
    fn stored_name(&self) -> Option<String> {
        self.name().map(|n| n.to_string())
    }

    fn player(&self, name: &str) -> Option<&Player> {
        match self {
            Seat::Human(p) if *p.name == *name => Some(p),
            _ => None,
        }
    }

    fn player_mut(&mut self, name: &str) -> Option<&mut Player> {
        match self {
            Seat::Human(p) if *p.name == *name => Some(p),
            _ => None,
        }
    }

    /// The seat as a rematch would fill it.
    fn spec(&self) -> Option<SeatSpec> {
        match self {
            Seat::Open => Some(SeatSpec::Open),
            Seat::Bot(level) => Some(SeatSpec::Bot(*level)),
            Seat::Human(p) => p
                .session
                .as_ref()
                .and_then(WeakAddr::upgrade)
                .map(|session| {
                    SeatSpec::Human(Member {
                        name: p.name.clone(),
                        session,
                    })
                }),
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Phase {
    Waiting,
    Playing,
    Over,
}

/// One game (see the module docs).
pub struct GameActor {
    /// This game's number, actor and committed plies, shared (see [`GameHandle`]).
    handle: SeatRef,
    game: Game,
    /// Black's seat, then white's.
    seats: [Seat; 2],
    /// The connections watching (most games have none).
    spectators: LazyList<SessionRef>,
    timing: Option<Box<Timing>>,
    phase: Phase,
    /// Plies played, a move being committed included (the handle counts
    /// committed ones).
    ply: u32,
    /// When the side to move began its turn (what a move's stored time counts).
    turn_started: Stamp,
    rematch: [bool; 2],
    recovered: bool,
    services: Arc<GameServices>,
}

/// What a move changed, to put back if its commit fails.
struct Undo {
    game: Game,
    clocks: Option<Clocks>,
    turn_started: Stamp,
}

/// A move applied and on its way to the store: resolves once it is committed
/// and announced, or undone. Unboxed: its caller boxes it once, if at all.
trait Commit: fut::ActorFuture<GameActor, Output = Result<(), ProtocolError>> + 'static {}

impl<F> Commit for F where
    F: fut::ActorFuture<GameActor, Output = Result<(), ProtocolError>> + 'static
{
}

/// The answer to [`Play`]: at once, or once the move is committed. The second is
/// awaited with `ctx.wait`, so the game takes no other message meanwhile, and the
/// reply goes out before anything else the actor does.
pub enum PlayResponse {
    /// Answered now.
    Now(Reply),
    /// Answered once the move is committed (or refused).
    AfterCommit(ResponseActFuture<GameActor, Reply>),
}

impl MessageResponse<GameActor, Play> for PlayResponse {
    fn handle(self, ctx: &mut Context<GameActor>, tx: Option<OneshotSender<Reply>>) {
        match self {
            PlayResponse::Now(reply) => {
                if let Some(tx) = tx {
                    let _ = tx.send(reply);
                }
            }
            PlayResponse::AfterCommit(future) => {
                ctx.wait(future.map(move |reply, _, _| {
                    if let Some(tx) = tx {
                        let _ = tx.send(reply);
                    }
                }));
            }
        }
    }
}

fn slot(color: Color) -> usize {
    match color {
        Color::Black => 0,
        Color::White => 1,
    }
}

fn forbidden(message: impl Into<String>) -> ProtocolError {
    ProtocolError::new(ErrorCode::Forbidden, message)
}

fn conflict(message: impl Into<String>) -> ProtocolError {
    ProtocolError::new(ErrorCode::Conflict, message)
}

impl GameActor {
    /// Starts a game's actor on `worker` (here if `None`) and gives its handle,
    /// which the actor keeps too, to hand out in `Seated`.
    pub fn spawn_on(worker: Option<&actix::ArbiterHandle>, setup: GameSetup) -> SeatRef {
        let (tx, rx) = actix::dev::channel::channel(MAILBOX_CAPACITY);
        let handle = Arc::new(GameHandle {
            game: setup.id,
            addr: Addr::new(tx),
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

    /// A game from its setup; it begins once both seats are filled. Start moves
    /// that are not legal (the lobby checks them) are left out. The time stored
    /// with each start move is charged to its side's clock.
    fn new(setup: GameSetup, handle: SeatRef) -> GameActor {
        let mut game = Game::new(setup.variant);
        let mut clocks = setup.clock.map(Clocks::new);
        let mut ply = 0u32;
        for stored in setup.start {
            let side = game.to_move();
            if game.apply(stored.mv).is_err() {
                continue;
            }
            ply = ply.saturating_add(1);
            if let (Some(clocks), Some(ms)) = (&mut clocks, stored.ms) {
                let _ = clocks.charge(side, ms);
            }
        }
        handle.ply.store(ply, Ordering::Relaxed);
        GameActor {
            handle,
            game,
            seats: [Seat::from_spec(setup.black), Seat::from_spec(setup.white)],
            spectators: LazyList::default(),
            timing: clocks.map(|clocks| {
                Box::new(Timing {
                    clocks,
                    flag_timer: None,
                })
            }),
            phase: Phase::Waiting,
            ply,
            turn_started: Stamp::of(Instant::now()),
            rematch: [false; 2],
            recovered: setup.recovered,
            services: setup.services,
        }
    }

    /// The game's number.
    fn id(&self) -> GameId {
        self.handle.game
    }

    /// Plies played, a move being committed included.
    fn plies(&self) -> usize {
        self.ply as usize
    }

    fn seat(&self, color: Color) -> &Seat {
        &self.seats[slot(color)]
    }

    /// The colours `name` plays (both in a hotseat game).
    fn colors_of(&self, name: &str) -> Vec<Color> {
        [Color::Black, Color::White]
            .into_iter()
            .filter(|&c| self.seat(c).player(name).is_some())
            .collect()
    }

    /// The colour `name` may move for now, or why not.
    fn mover(&self, name: &str) -> Result<Color, ProtocolError> {
        let colors = self.colors_of(name);
        if colors.is_empty() {
            return Err(forbidden(format!("you have no seat in game {}", self.id())));
        }
        match self.phase {
            Phase::Waiting => return Err(conflict(format!("game {} has not started", self.id()))),
            Phase::Over => return Err(conflict(format!("game {} is over", self.id()))),
            Phase::Playing => {}
        }
        let to_move = self.game.to_move();
        if colors.contains(&to_move) {
            Ok(to_move)
        } else {
            Err(forbidden("not your turn"))
        }
    }

    /// Everyone who hears the game's events: the seated people who are
    /// connected (once, though hotseat gives one person both seats), then the
    /// spectators.
    fn audience(&self) -> impl Iterator<Item = &SessionRef> {
        fn connected(seat: &Seat) -> Option<&SessionRef> {
            match seat {
                Seat::Human(Player {
                    session: Some(s), ..
                }) => Some(s),
                _ => None,
            }
        }
        let [black, white] = &self.seats;
        let black = connected(black);
        let white = connected(white).filter(|w| black != Some(*w));
        black.into_iter().chain(white).chain(self.spectators.iter())
    }

    fn broadcast(&self, events: &[Event]) {
        let text = lines(events);
        for session in self.audience().filter_map(WeakAddr::upgrade) {
            session.do_send(Deliver(Arc::clone(&text)));
        }
    }

    fn start_event(&self) -> Event {
        Event::Start {
            game: self.id(),
            variant: self.game.variant(),
            black: self.seat(Color::Black).name_or_dash(),
            white: self.seat(Color::White).name_or_dash(),
            clock: self.clocks().map(Clocks::spec),
        }
    }

    fn board_event(&self) -> Event {
        let to_move = (self.phase == Phase::Playing).then(|| self.game.to_move());
        Event::Board {
            game: self.id(),
            cells: cells_string(&self.game),
            to_move,
        }
    }

    fn turn_event(&self) -> Option<Event> {
        (self.phase == Phase::Playing).then(|| {
            let legal = self.game.legal_moves();
            let mut moves = Vec::with_capacity(legal.len());
            moves.extend(legal.iter());
            Event::Turn {
                game: self.id(),
                side: self.game.to_move(),
                moves,
            }
        })
    }

    /// START, BOARD and TURN: the whole state, for a newcomer.
    fn snapshot(&self) -> Vec<Event> {
        let mut events = vec![self.start_event(), self.board_event()];
        events.extend(self.turn_event());
        events
    }

    fn tell_lobby(&self) {
        let status = match self.phase {
            Phase::Waiting => Status::Open,
            Phase::Playing => Status::Playing,
            Phase::Over => Status::Over,
        };
        self.services.lobby.do_send(GameChanged {
            game: self.id(),
            black: self.seat(Color::Black).name(),
            white: self.seat(Color::White).name(),
            status,
        });
    }

    /// Both seats are filled: play.
    fn begin(&mut self, ctx: &mut Context<Self>) {
        self.phase = Phase::Playing;
        self.tell_lobby();
        // The seat message comes from this actor, before START, so that a
        // session knows its game before it can read (and answer) START.
        let seat = Arc::clone(&self.handle);
        for seat_holder in &self.seats {
            if let Seat::Human(Player {
                session: Some(session),
                ..
            }) = seat_holder
                && let Some(session) = session.upgrade()
            {
                session.do_send(Seated(seat.clone()));
            }
        }
        self.broadcast(&self.snapshot());
        self.next_turn(ctx);
    }

    /// Starts the clock of the side to move and lets a bot think.
    fn next_turn(&mut self, ctx: &mut Context<Self>) {
        let side = self.game.to_move();
        let now = Instant::now();
        self.turn_started = Stamp::of(now);
        if let Some(clocks) = self.clocks_mut() {
            clocks.start(side, now);
            self.arm_flag_timer(ctx);
        }
        if let Seat::Bot(level) = *self.seat(side) {
            self.think(ctx, level);
        }
    }

    fn check_flag(&mut self, ctx: &mut Context<Self>, ply: usize) {
        if self.phase != Phase::Playing || self.plies() != ply {
            return;
        }
        let flagged = self.clocks().and_then(|c| c.flagged(Instant::now()));
        match flagged {
            Some(side) => self.finish(ctx, EndReason::Time, Some(side.opponent())),
            // Woken a little early: wait for the rest.
            None => self.arm_flag_timer(ctx),
        }
    }

    /// Wakes the game when the running clock would reach zero: one timer per game
    /// in play with a clock, none otherwise.
    fn arm_flag_timer(&mut self, ctx: &mut Context<Self>) {
        self.cancel_flag_timer(ctx);
        let ply = self.plies();
        let to_move = self.game.to_move();
        let Some(timing) = &mut self.timing else {
            return;
        };
        let left = timing.clocks.left(to_move, Instant::now());
        let wait = Duration::from_millis(left + 1);
        timing.flag_timer = Some(ctx.run_later(wait, move |act, ctx| act.check_flag(ctx, ply)));
    }

    fn cancel_flag_timer(&mut self, ctx: &mut Context<Self>) {
        if let Some(old) = self.timing.as_mut().and_then(|t| t.flag_timer.take()) {
            ctx.cancel_future(old);
        }
    }

    fn clocks(&self) -> Option<&Clocks> {
        self.timing.as_ref().map(|t| &t.clocks)
    }

    fn clocks_mut(&mut self) -> Option<&mut Clocks> {
        self.timing.as_mut().map(|t| &mut t.clocks)
    }

    /// Asks the engine pool for a bot move; the answer is played if the game has
    /// not moved on meanwhile.
    fn think(&mut self, ctx: &mut Context<Self>, level: u8) {
        let deadline = Instant::now() + self.think_budget();
        let job = Think {
            game: self.game,
            level,
            seed: random_u64(),
            deadline,
        };
        let (ply, side) = (self.plies(), self.game.to_move());
        let request =
            self.services
                .engine
                .send(job)
                .into_actor(self)
                .map(move |answer, act, ctx| {
                    if act.phase != Phase::Playing || act.plies() != ply {
                        return;
                    }
                    let mv = match answer {
                        Ok(Some(choice)) => choice.mv,
                        // The pool is gone (shutting down) or had no answer: play on
                        // with the first legal move rather than stall the game.
                        _ => act
                            .game
                            .legal_moves()
                            .iter()
                            .next()
                            .map_or(Move::Pass, Move::Place),
                    };
                    match act.play(ctx, side, mv) {
                        Ok(commit) => {
                            ctx.wait(commit.map(move |result, act, ctx| {
                                if result.is_err() {
                                    act.retry_bot(ctx, ply);
                                }
                            }));
                        }
                        Err(e) => {
                            tracing::warn!(game = act.id(), error = %e.message, "bot move refused")
                        }
                    }
                });
        ctx.spawn(request);
    }

    /// A bot's move was not saved: think again a little later, if it is still
    /// the bot's turn at the same ply.
    fn retry_bot(&mut self, ctx: &mut Context<Self>, ply: usize) {
        ctx.run_later(BOT_RETRY, move |act, ctx| {
            if act.phase != Phase::Playing || act.plies() != ply {
                return;
            }
            if let Seat::Bot(level) = *act.seat(act.game.to_move()) {
                act.think(ctx, level);
            }
        });
    }

    /// How long a bot may think: the configured time, and under a clock a share of
    /// what is left.
    fn think_budget(&self) -> Duration {
        let mut ms = self.services.config.engine_move_ms;
        if let Some(clocks) = self.clocks() {
            let left = clocks.left(self.game.to_move(), Instant::now());
            ms = ms.min(left / 20 + clocks.spec().increment_ms / 2).max(5);
        }
        Duration::from_millis(ms)
    }

    /// Plays `mv` for `side`: checks it, charges the clock and applies it. The
    /// returned future commits it, then tells everyone; it must be awaited with
    /// `ctx.wait` so that nothing else happens in the game meanwhile.
    fn play(
        &mut self,
        ctx: &mut Context<Self>,
        side: Color,
        mv: Move,
    ) -> Result<impl Commit, ProtocolError> {
        let mut next = self.game;
        next.apply(mv).map_err(|e| self.illegal(e))?;
        let (undo, used) = self.stop_clock(ctx)?;
        self.game = next;
        self.ply = self.ply.saturating_add(1);
        Ok(self.commit(side, mv, used, undo))
    }

    /// Stops the mover's clock (it stands still while the move is committed);
    /// returns what to put back should the commit fail and the milliseconds the
    /// move took. A flag that fell ends the game instead.
    fn stop_clock(&mut self, ctx: &mut Context<Self>) -> Result<(Undo, u64), ProtocolError> {
        let now = Instant::now();
        let undo = Undo {
            game: self.game,
            clocks: self.clocks().cloned(),
            turn_started: self.turn_started,
        };
        if let Some(clocks) = self.clocks_mut()
            && let Err(flagged) = clocks.stop(now)
        {
            self.finish(ctx, EndReason::Time, Some(flagged.opponent()));
            return Err(conflict("your time ran out"));
        }
        self.cancel_flag_timer(ctx);
        Ok((undo, millis(self.turn_started.until(Stamp::of(now)))))
    }

    /// Hands the move just applied to the store; once committed it is announced,
    /// if refused it is undone and the mover told `ERR 503`.
    fn commit(&mut self, side: Color, mv: Move, used: u64, undo: Undo) -> impl Commit {
        let ply = self.ply;
        let saved = self.services.store.append_move(self.id(), ply, mv, used);
        saved
            .into_actor(self)
            .map(move |saved, act, ctx| match saved {
                Ok(()) => {
                    act.announce(ctx, side, mv);
                    Ok(())
                }
                Err(error) => {
                    act.undo(ctx, undo, &error);
                    Err(ProtocolError::new(
                        ErrorCode::Unavailable,
                        "the move could not be saved and was not played; try again",
                    ))
                }
            })
    }

    /// Tells everyone of a committed move, then ends the game or starts the
    /// next turn.
    fn announce(&mut self, ctx: &mut Context<Self>, side: Color, mv: Move) {
        self.handle.ply.store(self.ply, Ordering::Relaxed);
        let counts = self.game.counts();
        let moved = Event::Moved {
            game: self.id(),
            side,
            played: mv,
            black: counts.black,
            white: counts.white,
            clocks: self.clocks().map(|c| c.both(Instant::now())),
        };
        if self.game.is_over() {
            self.broadcast(&[moved]);
            self.finish(ctx, EndReason::Normal, None);
        } else {
            match self.turn_event() {
                Some(turn) => self.broadcast(&[moved, self.board_event(), turn]),
                None => self.broadcast(&[moved, self.board_event()]),
            }
            self.next_turn(ctx);
        }
    }

    /// Puts the game back as it was before a move whose commit failed: the same
    /// side to move, its clock running from when its turn began.
    fn undo(&mut self, ctx: &mut Context<Self>, undo: Undo, error: &crate::store::StoreError) {
        tracing::error!(game = self.id(), %error, "a move could not be saved");
        self.game = undo.game;
        if let (Some(timing), Some(clocks)) = (&mut self.timing, undo.clocks) {
            timing.clocks = clocks;
        }
        self.turn_started = undo.turn_started;
        self.ply = self.ply.saturating_sub(1);
        if self.timing.is_some() {
            self.arm_flag_timer(ctx);
        }
    }

    fn illegal(&self, error: MoveError) -> ProtocolError {
        let legal = self.game.legal_moves();
        let legal = if legal.is_empty() {
            "pass".to_string()
        } else {
            legal.to_string()
        };
        match error {
            MoveError::GameOver => conflict(format!("game {} is over", self.id())),
            MoveError::MustMove(_) => {
                ProtocolError::new(ErrorCode::IllegalMove, format!("{error}"))
            }
            _ => ProtocolError::new(ErrorCode::IllegalMove, format!("{error}; legal: {legal}")),
        }
    }

    /// Ends the game: stores the result, then BOARD with no side to move and
    /// OVER. The result is committed before it is announced (`ctx.wait`: the
    /// game takes no message meanwhile), so that a crash cannot bring back in
    /// play a game its players were told is over: a resignation, a flag or an
    /// abandonment is not in the moves, for recovery to find again.
    fn finish(&mut self, ctx: &mut Context<Self>, reason: EndReason, winner: Option<Color>) {
        self.phase = Phase::Over;
        self.cancel_flag_timer(ctx);
        if let Some(clocks) = self.clocks_mut() {
            // A flag that fell is recorded as zero; otherwise the time stops as is.
            let _ = clocks.stop(Instant::now());
        }
        let score = match reason {
            EndReason::Normal => self.game.score(),
            _ => forced_score(&self.game, winner),
        };
        let over = Event::Over {
            game: self.id(),
            winner: score.winner,
            black: score.black,
            white: score.white,
            reason,
        };
        let result = GameResult {
            winner: score.winner,
            black: score.black,
            white: score.white,
            reason,
        };
        let game = self.id();
        let stored = self.services.store.commit(Write::End { game, result });
        ctx.wait(stored.into_actor(self).map(move |stored, act, ctx| {
            if let Err(error) = stored {
                tracing::error!(game, %error, "the end of a game could not be saved");
            }
            act.broadcast(&[act.board_event(), over]);
            act.tell_lobby();
            act.stop_if_deserted(ctx);
        }));
    }

    /// A finished (or never started) game with nobody left in it stops.
    fn stop_if_deserted(&mut self, ctx: &mut Context<Self>) {
        let attached = self.seats.iter().any(|s| {
            matches!(
                s,
                Seat::Human(Player {
                    session: Some(_),
                    ..
                })
            )
        });
        if self.phase != Phase::Playing && !attached {
            ctx.stop();
        }
    }

    fn act(&mut self, ctx: &mut Context<Self>, name: &str, action: Action) -> PlayResponse {
        let reply = match action {
            Action::Move(square) => return self.human_move(ctx, name, Move::Place(square)),
            Action::Pass => return self.human_move(ctx, name, Move::Pass),
            Action::Resign => self.resign(ctx, name),
            Action::Board => Ok(self.board_answer()),
            Action::Say(text) => self.say(name, text),
            Action::Leave => self.leave(ctx, name),
        };
        PlayResponse::Now(reply)
    }

    fn human_move(&mut self, ctx: &mut Context<Self>, name: &str, mv: Move) -> PlayResponse {
        let commit = self.mover(name).and_then(|side| self.play(ctx, side, mv));
        match commit {
            Ok(commit) => PlayResponse::AfterCommit(Box::pin(
                commit.map(|result, _, _| result.map(|()| Answer::default())),
            )),
            Err(e) => PlayResponse::Now(Err(e)),
        }
    }

    fn resign(&mut self, ctx: &mut Context<Self>, name: &str) -> Reply {
        let colors = self.colors_of(name);
        let Some(&mine) = colors.first() else {
            return Err(forbidden(format!("you have no seat in game {}", self.id())));
        };
        if self.phase != Phase::Playing {
            return Err(conflict(format!("game {} is not in play", self.id())));
        }
        // In a hotseat game the side to move is the one resigning.
        let loser = if colors.len() == 2 {
            self.game.to_move()
        } else {
            mine
        };
        self.finish(ctx, EndReason::Resign, Some(loser.opponent()));
        Ok(Answer::default())
    }

    fn board_answer(&self) -> Answer {
        let mut events = vec![self.board_event()];
        events.extend(self.turn_event());
        Answer {
            data: lines(&events).to_string(),
            ok: String::new(),
        }
    }

    fn say(&self, name: &str, text: String) -> Reply {
        let seated = !self.colors_of(name).is_empty();
        if !seated {
            return Err(forbidden(format!("you have no seat in game {}", self.id())));
        }
        self.broadcast(&[Event::Chat {
            game: self.id(),
            name: name.to_string(),
            text,
        }]);
        Ok(Answer::default())
    }

    fn leave(&mut self, ctx: &mut Context<Self>, name: &str) -> Reply {
        if self.colors_of(name).is_empty() {
            return Err(forbidden(format!("you have no seat in game {}", self.id())));
        }
        if self.phase == Phase::Playing {
            return Err(conflict(format!(
                "game {} is in play: END resigns it",
                self.id()
            )));
        }
        for seat in &mut self.seats {
            if let Some(p) = seat.player_mut(name) {
                p.session = None;
            }
        }
        if self.phase == Phase::Waiting {
            self.cancel();
        }
        self.stop_if_deserted(ctx);
        Ok(Answer::default())
    }

    /// Records `name`'s wish for a rematch; once every person agrees, asks the lobby
    /// for the new game with colours swapped.
    fn rematch(&mut self, name: &str) -> ResponseActFuture<Self, Reply> {
        let colors = self.colors_of(name);
        if colors.is_empty() {
            return ready(Err(forbidden(format!(
                "you have no seat in game {}",
                self.id()
            ))));
        }
        if self.phase != Phase::Over {
            return ready(Err(conflict(format!("game {} is not over", self.id()))));
        }
        for c in colors {
            self.rematch[slot(c)] = true;
        }
        let agreed = [Color::Black, Color::White]
            .into_iter()
            .all(|c| self.rematch[slot(c)] || matches!(self.seat(c), Seat::Bot(_)));
        if !agreed {
            let offer = Event::Info(format!(
                "{name} offers a rematch in game {}: REMATCH accepts",
                self.id()
            ));
            self.broadcast(&[offer]);
            return ready(Ok(Answer::ok("waiting")));
        }
        let (Some(black), Some(white)) = (
            self.seat(Color::White).spec(),
            self.seat(Color::Black).spec(),
        ) else {
            return ready(Err(conflict("your opponent has left")));
        };
        self.rematch = [false; 2];
        let order = Spawn {
            variant: self.game.variant(),
            clock: self.clocks().map(Clocks::spec),
            black,
            white,
            start: Vec::new(),
            near: Some(actix::Arbiter::current()),
        };
        Box::pin(self.services.lobby.send(order).into_actor(self).map(
            |answer, _, _| match answer {
                Ok(Ok(seat)) => Ok(Answer::ok(seat.game.to_string())),
                Ok(Err(e)) => Err(e),
                Err(_) => Err(ProtocolError::new(ErrorCode::Unavailable, "shutting down")),
            },
        ))
    }

    fn join(&mut self, ctx: &mut Context<Self>, member: Member) -> Result<Color, ProtocolError> {
        if let Some(color) = self.resume(ctx, &member)? {
            return Ok(color);
        }
        if self.phase != Phase::Waiting {
            return Err(conflict(format!("game {} has no free seat", self.id())));
        }
        let free = [Color::Black, Color::White]
            .into_iter()
            .find(|&c| matches!(self.seat(c), Seat::Open))
            .ok_or_else(|| conflict(format!("game {} has no free seat", self.id())))?;
        self.seats[slot(free)] =
            Seat::Human(Player::new(member.name, Some(member.session.downgrade())));
        self.services.store.write(Write::Seats {
            game: self.id(),
            black: self.seat(Color::Black).stored_name(),
            white: self.seat(Color::White).stored_name(),
        });
        self.begin(ctx);
        Ok(free)
    }

    /// `name` taking their own seat back: within the grace period after a
    /// disconnect, or again from the same connection.
    fn resume(
        &mut self,
        ctx: &mut Context<Self>,
        member: &Member,
    ) -> Result<Option<Color>, ProtocolError> {
        let colors = self.colors_of(&member.name);
        let Some(&color) = colors.first() else {
            return Ok(None);
        };
        let session = member.session.downgrade();
        for c in &colors {
            if let Seat::Human(p) = &mut self.seats[slot(*c)] {
                match &p.session {
                    Some(s) if *s != session => {
                        return Err(conflict(format!(
                            "{} is seated from another connection",
                            p.name
                        )));
                    }
                    _ => {}
                }
                p.session = Some(session.clone());
                if let Some(timer) = p.away.take().and_then(|away| away.grace) {
                    ctx.cancel_future(timer);
                }
            }
        }
        member.session.do_send(Deliver(lines(&self.snapshot())));
        Ok(Some(color))
    }

    /// An open game closes before anyone joined it.
    fn cancel(&mut self) {
        self.phase = Phase::Over;
        self.services.store.write(Write::Cancel { game: self.id() });
    }

    fn disconnected(&mut self, ctx: &mut Context<Self>, name: &str, since: Instant) {
        let colors = self.colors_of(name);
        for &c in &colors {
            if let Seat::Human(p) = &mut self.seats[slot(c)] {
                p.session = None;
                p.away = Some(Box::new(Away { since, grace: None }));
            }
        }
        match self.phase {
            Phase::Playing => {
                if let Some(&c) = colors.first() {
                    self.keep_seat(ctx, c, name);
                }
            }
            Phase::Waiting => {
                self.cancel();
                self.stop_if_deserted(ctx);
            }
            Phase::Over => self.stop_if_deserted(ctx),
        }
    }

    /// Keeps `name`'s seat for the grace period, telling the others.
    fn keep_seat(&mut self, ctx: &mut Context<Self>, color: Color, name: &str) {
        let grace = Duration::from_secs(self.services.config.grace_secs);
        let owner = name.to_string();
        let timer = ctx.run_later(grace, move |act, ctx| act.abandon(ctx, &owner));
        if let Seat::Human(p) = &mut self.seats[slot(color)] {
            let away = p.away.get_or_insert_with(|| {
                Box::new(Away {
                    since: Instant::now(),
                    grace: None,
                })
            });
            away.grace = Some(timer);
        }
        let text = format!(
            "{name} disconnected: the seat is kept for {}s",
            grace.as_secs()
        );
        self.broadcast(&[Event::Info(text)]);
    }

    /// A recovered game: every person's seat waits for them for the grace
    /// period from now, as after a disconnect.
    fn await_players(&mut self, ctx: &mut Context<Self>) {
        let now = Instant::now();
        let mut names: Vec<Name> = self.seats.iter().filter_map(Seat::name).collect();
        names.dedup();
        for name in names {
            if self.colors_of(&name).is_empty() {
                continue;
            }
            self.disconnected(ctx, &name, now);
        }
    }

    fn abandon(&mut self, ctx: &mut Context<Self>, name: &str) {
        if self.phase != Phase::Playing {
            return;
        }
        let colors = self.colors_of(name);
        let away = |seat: &Seat| match seat {
            Seat::Human(Player {
                session: None,
                away: Some(away),
                ..
            }) => Some(away.since),
            _ => None,
        };
        let Some(since) = colors.iter().find_map(|&c| away(self.seat(c))) else {
            return;
        };
        // Whoever has been away longer loses; both away since the same moment
        // (a recovered game nobody came back to) is a draw.
        let winner = match colors.as_slice() {
            [only] => match away(self.seat(only.opponent())) {
                Some(other) if other <= since => None,
                _ => Some(only.opponent()),
            },
            _ => None,
        };
        self.finish(ctx, EndReason::Abandon, winner);
    }
}

/// The score of a game that ended early: discs as they stand, the empties to the
/// winner (split on a draw).
fn forced_score(game: &Game, winner: Option<Color>) -> flipline::Outcome {
    let counts = game.counts();
    let empties = game.variant().squares() - counts.black - counts.white;
    let (black, white) = match winner {
        Some(Color::Black) => (counts.black + empties, counts.white),
        Some(Color::White) => (counts.black, counts.white + empties),
        None => (
            counts.black + empties / 2,
            counts.white + empties - empties / 2,
        ),
    };
    flipline::Outcome {
        winner,
        black,
        white,
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
        let filled = self.seats.iter().all(|s| !matches!(s, Seat::Open));
        if filled {
            self.begin(ctx);
        }
        if self.recovered {
            self.await_players(ctx);
        }
    }

    fn stopped(&mut self, _: &mut Context<Self>) {
        self.services.lobby.do_send(GameClosed(self.id()));
    }
}

impl Handler<Play> for GameActor {
    /// Answered synchronously, so that the reply is out before the actor may
    /// stop, except moves, which are answered once committed.
    type Result = PlayResponse;

    fn handle(&mut self, msg: Play, ctx: &mut Context<Self>) -> PlayResponse {
        self.act(ctx, &msg.name, msg.action)
    }
}

impl Handler<Rematch> for GameActor {
    type Result = ResponseActFuture<Self, Reply>;

    fn handle(&mut self, msg: Rematch, _: &mut Context<Self>) -> Self::Result {
        self.rematch(&msg.name)
    }
}

impl Handler<Hint> for GameActor {
    type Result = ResponseActFuture<Self, Reply>;

    fn handle(&mut self, msg: Hint, _: &mut Context<Self>) -> Self::Result {
        if let Err(e) = self.mover(&msg.name) {
            return ready(Err(e));
        }
        if !self.hints_allowed() {
            return ready(Err(forbidden("hints are off in this game")));
        }
        let job = Think {
            game: self.game,
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
                    Ok(None) => Err(conflict("the game is over")),
                    Err(_) => Err(ProtocolError::new(
                        ErrorCode::Unavailable,
                        "the engine is not available",
                    )),
                }),
        )
    }
}

impl GameActor {
    fn hints_allowed(&self) -> bool {
        let hints = self.services.config.hints;
        let bot = self.seats.iter().any(|s| matches!(s, Seat::Bot(_)));
        let [black, white] = &self.seats;
        let hotseat = matches!((black.name(), white.name()), (Some(a), Some(b)) if a == b);
        (bot && hints.bot_games)
            || (hotseat && hints.hotseat_games)
            || (!bot && !hotseat && hints.human_games)
    }
}

impl Handler<Join> for GameActor {
    type Result = Result<Color, ProtocolError>;

    fn handle(&mut self, Join(member): Join, ctx: &mut Context<Self>) -> Self::Result {
        self.join(ctx, member)
    }
}

impl Handler<Watch> for GameActor {
    type Result = Reply;

    fn handle(&mut self, msg: Watch, _: &mut Context<Self>) -> Reply {
        let session = msg.session.downgrade();
        if !self.spectators.iter().any(|s| *s == session) {
            self.spectators.push(session);
        }
        msg.session.do_send(Deliver(lines(&self.snapshot())));
        Ok(Answer::ok(self.id().to_string()))
    }
}

impl Handler<Unwatch> for GameActor {
    type Result = ();

    fn handle(&mut self, msg: Unwatch, _: &mut Context<Self>) {
        let session = msg.session.downgrade();
        self.spectators.retain(|s| *s != session);
    }
}

impl Handler<Disconnected> for GameActor {
    type Result = ();

    fn handle(&mut self, msg: Disconnected, ctx: &mut Context<Self>) {
        self.disconnected(ctx, &msg.name, Instant::now());
    }
}
