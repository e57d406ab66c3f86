//! Games on other nodes of a cluster, reached over the bus: a connection
//! here may `WATCH` a game another node owns, and a game here may have
//! spectators on other nodes.
//!
//! - Here, a watcher's route is a [`RemoteGame`], a proxy actor that turns
//!   `WATCH` and `LEAVE` into bus messages to the owner and waits for the
//!   owner's answer (`Directory` makes it, from the owner the store names).
//! - At the owner, each watcher elsewhere is a spectator like any other,
//!   its session a [`FarSession`]: the game's lines go to it over the bus,
//!   numbered per watcher and game.
//! - What arrives (`Inbound`) is answered or delivered in order: the owner
//!   sends a `WATCH`'s snapshot before its answer, and the answer here
//!   releases the watcher's `OK` before the snapshot's lines, as on one
//!   node. A number missing (a message lost while NATS was away) asks the
//!   owner for the snapshot again, so nobody silently misses a `MOVED`.

use std::collections::HashMap;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use actix::{Actor, ActorContext, Context, Handler, Recipient, ResponseFuture};
use flipline::protocol::{CommandKind, ErrorCode, GameId, ProtocolError, Reply};
use tokio::sync::oneshot;

use crate::bus::{Body, Bus, Envelope, FarSession, InboundSlot};
use crate::messages::{Answer, Answered, Find, FindElsewhere, GameHandle, ToGame, ToSession};
use crate::node_state::NodeState;
use crate::session::{GameRequest, Reach, SeatRef, SessionRef};
use crate::store::Store;

/// How long a watcher waits for the owner's answer.
const ANSWER_WITHIN: Duration = Duration::from_secs(5);

/// Spectator numbers of watchers elsewhere: apart from this daemon's
/// connection numbers, which count from 1.
const FAR_IDS_FROM: u64 = 1 << 62;

/// A watcher here of a game elsewhere.
struct View {
    session: SessionRef,
    owner: String,
    /// The number of the next line expected from the owner.
    expected: u64,
}

/// What the bus's two sides share: this node's watchers of games elsewhere
/// and their requests in flight, and the spectators elsewhere of games
/// here.
pub struct Remote {
    bus: Bus,
    views: Mutex<HashMap<(u64, GameId), View>>,
    pending: Mutex<HashMap<u64, oneshot::Sender<Answered>>>,
    next_request: AtomicU64,
    far: Mutex<HashMap<(String, u64, GameId), Arc<FarSession>>>,
    next_far: AtomicU64,
    /// The lobby's directory of this node's games.
    find: Recipient<Find<SessionRef>>,
    /// The node's counts (requests sent and served).
    counts: Arc<NodeState>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Remote {
    /// Takes what arrives on `bus` (through `slot`); `find` looks this
    /// node's games up; `counts` counts the requests.
    pub fn attach(
        bus: Bus,
        slot: &InboundSlot,
        find: Recipient<Find<SessionRef>>,
        counts: Arc<NodeState>,
    ) -> Arc<Remote> {
        let remote = Arc::new(Remote {
            bus,
            views: Mutex::default(),
            pending: Mutex::default(),
            next_request: AtomicU64::new(1),
            far: Mutex::default(),
            next_far: AtomicU64::new(FAR_IDS_FROM),
            find,
            counts,
        });
        // Weakly, so that the bus stops with the `Remote`.
        let me = Arc::downgrade(&remote);
        let inbound = move |envelope: Envelope| {
            if let Some(remote) = me.upgrade() {
                remote.arrived(envelope);
            }
        };
        let _ = slot.set(Box::new(inbound));
        remote
    }

    /// An envelope from another node (on the bus's thread).
    fn arrived(self: Arc<Self>, Envelope { from, body }: Envelope) {
        match body {
            Body::Watch {
                request,
                game,
                conn,
            } => {
                tokio::spawn(self.watched(from, request, game, conn));
            }
            Body::Unwatch { game, conn } => {
                tokio::spawn(self.unwatched(from, game, conn));
            }
            Body::Answer { request, result } => {
                if let Some(waiting) = lock(&self.pending).remove(&request) {
                    let _ = waiting.send(answered(result));
                }
            }
            Body::Deliver {
                conn,
                game,
                seq,
                text,
            } => self.deliver(&from, conn, game, seq, text),
            Body::Owns { games } => self.moved(&from, &games),
        }
    }

    /// `owner` took `games` over from a dead node: their watchers here
    /// watch them there from now on, from a snapshot.
    fn moved(&self, owner: &str, games: &[GameId]) {
        let mut views = lock(&self.views);
        for (&(conn, game), view) in views.iter_mut() {
            if !games.contains(&game) || view.owner == owner {
                continue;
            }
            view.owner = owner.to_string();
            view.expected = 1;
            let body = Body::Watch {
                request: 0,
                game,
                conn,
            };
            self.bus.send(owner, body);
        }
    }

    /// Lines from the owner of `game` for `conn` here.
    fn deliver(&self, from: &str, conn: u64, game: GameId, seq: u64, text: String) {
        let mut views = lock(&self.views);
        let Some(view) = views.get_mut(&(conn, game)) else {
            return;
        };
        if seq != view.expected {
            tracing::warn!(
                game,
                from,
                missed = seq.saturating_sub(view.expected),
                "lines of a game on another node were lost: asking for its snapshot"
            );
            let body = Body::Watch {
                request: 0,
                game,
                conn,
            };
            self.bus.send(&view.owner, body);
        }
        view.expected = seq + 1;
        view.session.tell(ToSession::Deliver(Arc::from(text)));
    }

    /// At the owner: `conn` of node `from` watches `game` here.
    async fn watched(self: Arc<Self>, from: String, request: u64, game: GameId, conn: u64) {
        let found = self.find.send(Find(game, PhantomData)).await.ok().flatten();
        let result = match found {
            None => Err(ProtocolError::new(
                ErrorCode::NotFound,
                format!("no game {game}"),
            )),
            Some(route) => {
                let far = self.far_session(&from, conn, game, request != 0);
                let watch = ToGame::Watch {
                    id: far.id,
                    session: SessionRef::Far(far),
                };
                route.tx.send(watch).await.unwrap_or_else(|_| {
                    Err(ProtocolError::new(
                        ErrorCode::NotFound,
                        format!("no game {game}"),
                    ))
                })
            }
        };
        if result.is_err() {
            // Not watching after all: nothing is kept of it here.
            lock(&self.far).remove(&(from.clone(), conn, game));
        }
        // A snapshot asked for again after a gap is not answered.
        if request != 0 {
            self.counts.remote_served();
            let result = result
                .map(|answer| (answer.data, answer.ok.to_string()))
                .map_err(|e| (e.code.number(), e.message));
            self.bus.send(&from, Body::Answer { request, result });
        }
    }

    /// The spectator here for `conn` of `node` watching `game`: the same
    /// one for a snapshot asked for again, a `fresh` one (its lines
    /// numbered from 1 again, under the same spectator number) for a
    /// `WATCH`, which the watcher counts from 1.
    fn far_session(&self, node: &str, conn: u64, game: GameId, fresh: bool) -> Arc<FarSession> {
        let mut far = lock(&self.far);
        let key = (node.to_string(), conn, game);
        let id = match far.get(&key) {
            Some(known) if !fresh => return Arc::clone(known),
            Some(known) => known.id,
            None => self.next_far.fetch_add(1, Ordering::Relaxed),
        };
        let session = Arc::new(FarSession::new(self.bus.clone(), node, conn, game, id));
        far.insert(key, Arc::clone(&session));
        session
    }

    /// At the owner: `conn` of node `from` stopped watching `game`.
    async fn unwatched(self: Arc<Self>, from: String, game: GameId, conn: u64) {
        let Some(far) = lock(&self.far).remove(&(from, conn, game)) else {
            return;
        };
        far.close();
        if let Ok(Some(route)) = self.find.send(Find(game, PhantomData)).await {
            route.tx.do_send(ToGame::Unwatch { id: far.id });
        }
    }

    /// Here: `session` (connection `conn`) watches `game` on `owner`; the
    /// request's number and the owner's answer.
    fn watch(
        &self,
        owner: &str,
        game: GameId,
        conn: u64,
        session: SessionRef,
    ) -> (u64, oneshot::Receiver<Answered>) {
        let view = View {
            session,
            owner: owner.to_string(),
            expected: 1,
        };
        lock(&self.views).insert((conn, game), view);
        let request = self.next_request.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        lock(&self.pending).insert(request, tx);
        self.counts.remote_sent();
        self.bus.send(
            owner,
            Body::Watch {
                request,
                game,
                conn,
            },
        );
        (request, rx)
    }

    /// Here: the `WATCH` of `game` by `conn` (request `request`) came to
    /// nothing (refused, or no answer in time): nothing is kept of it.
    fn watch_failed(&self, request: u64, game: GameId, conn: u64) {
        lock(&self.pending).remove(&request);
        lock(&self.views).remove(&(conn, game));
    }

    /// Here: `conn` stops watching `game` (on whichever node owns it now).
    fn unwatch(&self, game: GameId, conn: u64) {
        if let Some(view) = lock(&self.views).remove(&(conn, game)) {
            self.bus.send(&view.owner, Body::Unwatch { game, conn });
        }
    }
}

/// An answer as the bus carries it, as the session takes it.
fn answered(result: Result<(String, String), (u16, String)>) -> Answered {
    match result {
        Ok((data, line)) => match Reply::parse(CommandKind::Watch, &line) {
            Ok(ok) => Ok(Answer { data, ok }),
            Err(_) => Err(unreachable_owner("its answer did not read")),
        },
        Err((code, message)) => Err(ProtocolError::new(
            ErrorCode::from_number(code).unwrap_or(ErrorCode::Unavailable),
            message,
        )),
    }
}

fn unreachable_owner(why: &str) -> ProtocolError {
    ProtocolError::new(
        ErrorCode::Unavailable,
        format!("the game's node did not answer ({why}), try again"),
    )
}

/// Finds which node owns a game this node does not hold, and makes a route
/// to it there.
pub struct Directory {
    pub remote: Arc<Remote>,
    pub store: Store,
}

impl Actor for Directory {
    type Context = Context<Self>;
}

impl Handler<FindElsewhere<SessionRef>> for Directory {
    type Result = ResponseFuture<Option<SeatRef>>;

    fn handle(&mut self, msg: FindElsewhere<SessionRef>, _: &mut Context<Self>) -> Self::Result {
        let FindElsewhere(game, _) = msg;
        let owner = self.store.owner_of(game);
        let remote = Arc::clone(&self.remote);
        Box::pin(async move {
            let owner = owner.await.ok().flatten()?;
            if owner == remote.bus.node() {
                return None;
            }
            let proxy = RemoteGame {
                remote,
                owner,
                game,
            };
            let tx = proxy.start().recipient();
            Some(Arc::new(GameHandle {
                game,
                tx,
                ply: AtomicU32::new(0),
            }))
        })
    }
}

/// A game elsewhere as a watcher here reaches it: `WATCH` and the leaving
/// of it go to the owner; playing it from here is refused.
struct RemoteGame {
    remote: Arc<Remote>,
    owner: String,
    game: GameId,
}

impl Actor for RemoteGame {
    type Context = Context<Self>;
}

impl Handler<GameRequest> for RemoteGame {
    type Result = ResponseFuture<Answered>;

    fn handle(&mut self, msg: GameRequest, ctx: &mut Context<Self>) -> Self::Result {
        match msg {
            ToGame::Watch { id, session } => {
                let (remote, game) = (Arc::clone(&self.remote), self.game);
                let (request, answer) = remote.watch(&self.owner, game, id, session);
                Box::pin(async move {
                    let answered = match tokio::time::timeout(ANSWER_WITHIN, answer).await {
                        Ok(Ok(answer)) => answer,
                        Ok(Err(_)) => Err(unreachable_owner("no answer")),
                        Err(_) => Err(unreachable_owner("in time")),
                    };
                    if answered.is_err() {
                        remote.watch_failed(request, game, id);
                    }
                    answered
                })
            }
            ToGame::Unwatch { id } => {
                self.remote.unwatch(self.game, id);
                ctx.stop();
                Box::pin(async { Ok(Answer::default()) })
            }
            ToGame::Play { .. } | ToGame::Hint { .. } | ToGame::Seating(_) => {
                let (game, owner) = (self.game, self.owner.clone());
                Box::pin(async move {
                    Err(ProtocolError::new(
                        ErrorCode::Conflict,
                        format!(
                            "game {game} is played on node {owner}: watch it from here, play it there"
                        ),
                    ))
                })
            }
        }
    }
}
