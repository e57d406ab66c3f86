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
//! - Players sit at a game elsewhere the same way: see `seats`.

use std::collections::HashMap;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use actix::{Actor, ActorContext, ArbiterHandle, Context, Handler, Recipient, ResponseFuture};
use flipline::protocol::{CommandKind, ErrorCode, GameId, ProtocolError, Reply};
use tokio::sync::oneshot;

use crate::bus::{Arrival, Body, Bus, Envelope, FarAct, FarPass, FarSession, InboundSlot};
use crate::messages::{
    Answer, Answered, BackFromAway, Connected, Find, FindElsewhere, GameHandle, Gone,
    GoneElsewhere, Join, Leave, LeaveElsewhere, ListGames, ListPlayers, Login, Name, Rematch,
    RematchElsewhere, SitAway, SitElsewhere, ToGame, ToSession,
};
use crate::node_state::NodeState;
use crate::rules::refusal::Refusal;
use crate::session::{GameRequest, Reach, SeatRef, SessionRef};
use crate::store::Store;

mod challenging;
mod kept;
mod listing;
mod lobby_link;
mod pairing;
mod roster;
mod seats;
mod seeking;
mod served;
mod tourneys;

pub use lobby_link::LobbyLink;

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

/// The lobby's doors the bus uses: to seat players of other nodes here,
/// and to hold the names of players here seated elsewhere.
pub struct LobbyDoors {
    pub connected: Recipient<Connected<SessionRef>>,
    pub login: Recipient<Login>,
    pub join: Recipient<Join<SessionRef>>,
    pub rematch: Recipient<Rematch<SessionRef>>,
    pub leave: Recipient<Leave>,
    pub gone: Recipient<Gone>,
    pub sit_away: Recipient<SitAway>,
    pub back: Recipient<BackFromAway>,
    /// A game over on another node (a tournament here may follow it).
    pub over_there: Recipient<crate::messages::OverThere>,
    pub list_games: Recipient<ListGames>,
    pub list_players: Recipient<ListPlayers>,
    pub reserve: Recipient<crate::messages::ReserveSeek>,
    pub release: Recipient<crate::messages::ReleaseSeek>,
    pub pair: Recipient<crate::messages::PairSeeks>,
    pub paired: Recipient<crate::messages::PairedThere>,
    pub challenged: Recipient<crate::messages::ChallengedFromFar>,
    pub challenge_word: Recipient<crate::messages::FarChallengeWord>,
    pub reserve_challenger: Recipient<crate::messages::ReserveChallenger>,
    pub release_challenger: Recipient<crate::messages::ReleaseChallenger>,
    pub nodes_gone: Recipient<crate::messages::FarNodesGone>,
    pub take_out: Recipient<crate::messages::TakeOut>,
    pub free_taken_out: Recipient<crate::messages::FreeTakenOut>,
    pub tell_name: Recipient<crate::messages::TellName>,
    pub tourney: Recipient<crate::messages::TourneyFromFar>,
    /// Every seek here told to the leader again.
    pub reannounce: Recipient<crate::messages::Reannounce>,
    /// A worker: where games a player of another node starts here run,
    /// and the routes of players here to games elsewhere.
    pub worker: ArbiterHandle,
}

/// What the bus's two sides share: this node's watchers and players of
/// games elsewhere and their requests in flight, and the spectators and
/// players elsewhere of games here.
pub struct Remote {
    bus: Bus,
    views: Mutex<HashMap<(u64, GameId), View>>,
    /// Players here seated elsewhere, by connection.
    players: Mutex<HashMap<u64, seats::PlayerView>>,
    /// Names held here for their seats elsewhere since their login, by
    /// game (see `kept`).
    kept: Mutex<HashMap<GameId, Vec<Name>>>,
    pending: Mutex<HashMap<u64, oneshot::Sender<RawAnswer>>>,
    next_request: AtomicU64,
    /// Other nodes' requests taken up here, and their answers.
    served: Mutex<served::Served>,
    far: Mutex<HashMap<(String, u64, GameId), Arc<FarSession>>>,
    /// Players elsewhere seated here, by node and connection there.
    seated: Mutex<HashMap<(String, u64), Arc<seats::FarPlayer>>>,
    next_far: AtomicU64,
    /// The lobby's directory of this node's games.
    find: Recipient<Find<SessionRef>>,
    doors: LobbyDoors,
    /// The node's counts (requests sent and served).
    counts: Arc<NodeState>,
    /// The seeks of every node, while this node leads the lobby.
    pool: Mutex<seeking::LeaderPool>,
    /// Seeks here taken out for pairings other nodes settle, by pairing.
    reserved: Mutex<HashMap<u64, pairing::Reservation>>,
    /// The pairings whose games this node made or was to make.
    making: Mutex<pairing::Making>,
    /// How long a player's command waits for the owner's answer: long
    /// enough for a dead owner's game to be taken over and the command
    /// sent again there.
    act_within: Duration,
    /// The shared store: what a dead node left is read there.
    store: Store,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Remote {
    /// Takes what arrives on `bus` (through `slot`); `find` looks this
    /// node's games up, `doors` seats players; `counts` counts the
    /// requests.
    pub fn attach(
        bus: Bus,
        slot: &InboundSlot,
        (find, doors, store): (Recipient<Find<SessionRef>>, LobbyDoors, Store),
        (counts, lease): (Arc<NodeState>, Duration),
    ) -> Arc<Remote> {
        let remote = Arc::new(Remote {
            bus,
            views: Mutex::default(),
            players: Mutex::default(),
            kept: Mutex::default(),
            pending: Mutex::default(),
            // From a random point: see `served`.
            next_request: AtomicU64::new(crate::random::random_u64() >> 16 | 1),
            served: Mutex::default(),
            far: Mutex::default(),
            seated: Mutex::default(),
            next_far: AtomicU64::new(FAR_IDS_FROM),
            find,
            doors,
            counts,
            pool: Mutex::default(),
            reserved: Mutex::default(),
            making: Mutex::default(),
            act_within: ANSWER_WITHIN + lease * 2,
            store,
        });
        // Weakly, so that the bus stops with the `Remote`.
        let me = Arc::downgrade(&remote);
        let inbound = move |arrival: Arrival| {
            let Some(remote) = me.upgrade() else {
                return;
            };
            match arrival {
                Arrival::Envelope(envelope) => remote.arrived(*envelope),
                Arrival::LinkUp => remote.link_up(),
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
                    let _ = waiting.send(result);
                }
            }
            Body::Deliver {
                conn,
                game,
                seq,
                text,
            } => self.deliver(&from, conn, game, seq, text),
            Body::Owns { games } => {
                self.moved(&from, &games);
                self.players_follow(&from, &games);
            }
            Body::Sit {
                request,
                conn,
                game,
                pass,
                resend,
            } => {
                if request == 0 || self.take_up(&from, request) {
                    tokio::spawn(self.sat(from, (request, conn, game), pass, resend));
                }
            }
            Body::Act {
                request,
                conn,
                game,
                act,
                again,
                at,
            } => {
                if self.take_up(&from, request) {
                    let asked = (request, conn, game);
                    tokio::spawn(self.acted(from, asked, act, (again, at)));
                }
            }
            Body::Away { conn } => self.drop_player(&from, conn),
            Body::ToPlayer { conn, seq, news } => self.player_news(&from, conn, seq, news),
            Body::Gone { nodes } => self.forget_nodes(&nodes),
            Body::Over { game } => self.over_there(game),
            Body::ListHere { request, query } => {
                tokio::spawn(self.listed_here(from, request, query));
            }
            Body::WhoHere { request, query } => {
                tokio::spawn(self.who_here(from, request, query));
            }
            Body::Seek {
                epoch,
                conn,
                seek,
                pass,
            } => self.sought(from, (epoch, conn), &seek, pass),
            Body::Unseek { epoch, name } => self.unsought(&from, epoch, &name),
            Body::Reserve {
                request,
                epoch,
                pairing,
                maker,
                name,
                seek,
            } => {
                let reservation = (name, seek, maker);
                tokio::spawn(self.reserve(from, (request, epoch, pairing), reservation));
            }
            Body::Pair {
                pairing,
                epoch,
                waiting,
                seek,
                partner,
                coin,
            } => {
                let order = (waiting, seek, partner, coin);
                tokio::spawn(self.pair_here((pairing, epoch), order));
            }
            Body::Paired { pairing, game, .. } => self.paired(pairing, game),
            Body::Unpaired { pairing, .. } => self.settled(pairing, None),
            Body::AskPairing {
                request,
                pairing,
                name,
            } => {
                tokio::spawn(self.asked_pairing(from, (request, pairing), name));
            }
            Body::Challenge {
                request,
                id,
                pass,
                to,
                terms,
            } => {
                tokio::spawn(self.challenged(from, (request, id), pass, to, terms));
            }
            Body::ChallengeWord {
                id,
                withdrawn,
                reason,
            } => self.challenge_word(from, id, withdrawn, &reason),
            Body::Accepting {
                request,
                id,
                pairing,
            } => {
                tokio::spawn(self.accepting(from, request, id, pairing));
            }
            Body::TakeOut {
                request,
                name,
                pairing,
            } => {
                tokio::spawn(self.taken_out(from, request, name, pairing));
            }
            Body::TourneyHere {
                request,
                verb,
                id,
                member,
            } => {
                tokio::spawn(self.tourney_here(from, request, (verb, id), member));
            }
            Body::Back => self.back(&from),
            Body::Roster {
                players,
                watchers,
                answer,
            } => self.roster(&from, (&players, &watchers), answer),
            Body::TellName { name, text } => {
                let name = Name::from(name.as_str());
                self.doors
                    .tell_name
                    .do_send(crate::messages::TellName { name, text });
            }
        }
    }

    /// Whether request `request` of `from` is to be carried out now: not
    /// if it is under way here already (its answer goes when done), nor if
    /// it was answered (that answer goes again, now).
    pub(super) fn take_up(&self, from: &str, request: u64) -> bool {
        let taken = lock(&self.served).take(from, request);
        match taken {
            served::Taken::Fresh => true,
            served::Taken::Underway => false,
            served::Taken::Answered(result) => {
                self.bus.send(from, Body::Answer { request, result });
                false
            }
        }
    }

    /// A number for a request to another node, and its answer to come.
    fn pending_request(&self) -> (u64, oneshot::Receiver<RawAnswer>) {
        let request = self.next_request.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        lock(&self.pending).insert(request, tx);
        self.counts.remote_sent();
        (request, rx)
    }

    /// A spectator or player number for a connection elsewhere.
    fn next_far_id(&self) -> u64 {
        self.next_far.fetch_add(1, Ordering::Relaxed)
    }

    /// The route here to `game` on `owner`: a watcher's, or the player's on
    /// `conn`. Its actor runs on `doors.worker`, since this may be called
    /// on the bus's thread, which has no actors.
    fn route_to(self: &Arc<Self>, owner: String, game: GameId, conn: Option<u64>) -> SeatRef {
        let proxy = RemoteGame {
            remote: Arc::clone(self),
            owner,
            game,
            player: conn,
        };
        let proxy = RemoteGame::start_in_arbiter(&self.doors.worker, move |_| proxy);
        Arc::new(GameHandle {
            game,
            tx: proxy.recipient(),
            ply: AtomicU32::new(0),
        })
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
            self.answer(&from, request, result);
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
            None => self.next_far_id(),
        };
        let session = Arc::new(FarSession::new(
            self.bus.clone(),
            node,
            conn,
            Some(game),
            id,
        ));
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
    ) -> (u64, oneshot::Receiver<RawAnswer>) {
        let view = View {
            session,
            owner: owner.to_string(),
            expected: 1,
        };
        lock(&self.views).insert((conn, game), view);
        let (request, rx) = self.pending_request();
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

/// An answer as the bus carries it: the data lines and the final line, or
/// an error's code and words.
type RawAnswer = Result<(String, String), (u16, String)>;

/// An answer as the bus carries it, as the session takes it: the answer
/// to a command of `kind`.
fn answered(kind: CommandKind, result: RawAnswer) -> Answered {
    match result {
        Ok((data, line)) => match Reply::parse(kind, &line) {
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

/// The refusal for a game whose node was declared dead (or let its lease
/// pass), before a live node has taken it over.
fn being_taken_over(game: GameId) -> ProtocolError {
    ProtocolError::new(
        ErrorCode::Unavailable,
        format!("game {game}'s node is gone and another is taking it over, try again"),
    )
}

/// The owner's answer to a request for a command of `kind`, waited for at
/// most [`ANSWER_WITHIN`].
async fn owner_answer(kind: CommandKind, answer: oneshot::Receiver<RawAnswer>) -> Answered {
    answer_within(ANSWER_WITHIN, kind, answer).await
}

/// The owner's answer to a request for a command of `kind`, waited for at
/// most `within`.
async fn answer_within(
    within: Duration,
    kind: CommandKind,
    answer: oneshot::Receiver<RawAnswer>,
) -> Answered {
    match tokio::time::timeout(within, answer).await {
        Ok(Ok(answer)) => answered(kind, answer),
        Ok(Err(_)) => Err(unreachable_owner("no answer")),
        Err(_) => Err(unreachable_owner("in time")),
    }
}

impl Remote {
    /// The owner's answer to `asked`, a command of `kind`. A player's is
    /// asked again (the same request) every [`ANSWER_WITHIN`] until it
    /// comes, so that its answer says what was done: a lost answer is never
    /// taken for "not played". Once the player sits at no game elsewhere
    /// (its game came here, whose seat answers it, or its connection
    /// closed), it waits at most `act_within` more.
    async fn answer_asking_again(&self, kind: CommandKind, asked: seats::Asked) -> Answered {
        let seats::Asked {
            request,
            mut answer,
            again,
        } = asked;
        let Some(again) = again else {
            let answered = answer_within(self.act_within, kind, answer).await;
            if answered.is_err() {
                lock(&self.pending).remove(&request);
            }
            return answered;
        };
        let mut unasked = Duration::ZERO;
        loop {
            match tokio::time::timeout(ANSWER_WITHIN, &mut answer).await {
                Ok(Ok(result)) => return answered(kind, result),
                Ok(Err(_)) => return Err(unreachable_owner("no answer")),
                Err(_) => {}
            }
            match self.ask_again(request, &again) {
                Some((owner, body)) => {
                    tracing::debug!(owner, request, "a player's command unanswered: asked again");
                    self.bus.send(&owner, body);
                }
                None if unasked < self.act_within => unasked += ANSWER_WITHIN,
                None => {
                    lock(&self.pending).remove(&request);
                    return Err(unreachable_owner("in time"));
                }
            }
        }
    }

    /// The owner's answer to the seat `asked` at `game` for the player on
    /// `conn` (logged in as `pass` says), asked again (the same request)
    /// every [`ANSWER_WITHIN`] while the player waits for it there: a seat
    /// taken whose answer was lost is never refused as not taken.
    async fn seat_answer(
        &self,
        asked: &seats::SitRequest,
        mut answer: oneshot::Receiver<RawAnswer>,
        (conn, game, pass): (u64, GameId, &FarPass),
    ) -> Answered {
        loop {
            match tokio::time::timeout(ANSWER_WITHIN, &mut answer).await {
                Ok(Ok(result)) => return answered(CommandKind::Join, result),
                Ok(Err(_)) => return Err(unreachable_owner("no answer")),
                Err(_) => {}
            }
            let Some(owner) = self.owner_of_seat(conn, game) else {
                return Err(unreachable_owner("no answer"));
            };
            let sit = Body::Sit {
                request: asked.request,
                conn,
                game,
                pass: pass.clone(),
                resend: None,
            };
            self.bus.send(&owner, sit);
        }
    }
}

/// Finds which node owns a game this node does not hold, and makes a route
/// to it there; seats players at games elsewhere.
pub struct Directory {
    pub remote: Arc<Remote>,
    pub store: Store,
}

impl Actor for Directory {
    type Context = Context<Self>;
}

/// Where a game open or in play is, as the store says.
enum Owner {
    /// On that other node.
    Elsewhere(String),
    /// On this node.
    Here,
    /// On a node declared dead: about to be taken over.
    TakingOver,
    /// Nowhere: no such game, or it is over.
    Nowhere,
}

impl Directory {
    /// Where `game` is.
    fn owner(&self, game: GameId) -> impl Future<Output = Owner> + use<> {
        let owner = self.store.owner_of(game);
        let remote = Arc::clone(&self.remote);
        async move {
            match owner.await.ok().flatten() {
                None => Owner::Nowhere,
                Some((_, false)) => Owner::TakingOver,
                Some((node, true)) if node == remote.bus.node() => Owner::Here,
                Some((node, true)) => Owner::Elsewhere(node),
            }
        }
    }

    /// The node that owns `game`, if another live node does.
    fn owner_elsewhere(&self, game: GameId) -> impl Future<Output = Option<String>> + use<> {
        let owner = self.owner(game);
        async move {
            match owner.await {
                Owner::Elsewhere(node) => Some(node),
                _ => None,
            }
        }
    }
}

impl Handler<FindElsewhere<SessionRef>> for Directory {
    type Result = ResponseFuture<Option<SeatRef>>;

    fn handle(&mut self, msg: FindElsewhere<SessionRef>, _: &mut Context<Self>) -> Self::Result {
        let FindElsewhere(game, _) = msg;
        let owner = self.owner_elsewhere(game);
        let remote = Arc::clone(&self.remote);
        Box::pin(async move { Some(remote.route_to(owner.await?, game, None)) })
    }
}

impl Handler<SitElsewhere<SessionRef>> for Directory {
    type Result = ResponseFuture<Result<(SeatRef, flipline::Color), ProtocolError>>;

    fn handle(&mut self, msg: SitElsewhere<SessionRef>, _: &mut Context<Self>) -> Self::Result {
        let owner = self.owner(msg.game);
        let remote = Arc::clone(&self.remote);
        Box::pin(async move {
            let SitElsewhere {
                game,
                conn,
                name,
                session,
            } = msg;
            let owner = match owner.await {
                Owner::Elsewhere(node) => node,
                // Taken over by this node since it was asked (not started
                // here yet if the lobby does not have it).
                Owner::Here => {
                    let joined = remote.join_here(name, game).await;
                    return joined.map_err(|e| match e.code {
                        ErrorCode::NotFound => being_taken_over(game),
                        _ => e,
                    });
                }
                Owner::TakingOver => return Err(being_taken_over(game)),
                Owner::Nowhere => return Err(Refusal::NoGame(game).into()),
            };
            let pass = FarPass::of(&name, remote.hold_away(&name, game).await?);
            let (asked, answer) = remote.sit(&owner, (game, conn), pass.clone(), session);
            let answered = remote
                .seat_answer(&asked, answer, (conn, game, &pass))
                .await;
            let answer = answered.and_then(|answer| match answer.ok {
                Reply::Joined(_, color) => Ok(color),
                _ => Err(unreachable_owner("its answer did not read")),
            });
            match answer {
                Ok(color) => Ok((remote.route_to(owner, game, Some(conn)), color)),
                Err(e) => {
                    remote.sit_failed(conn, &asked);
                    remote.doors.back.do_send(BackFromAway { name, game });
                    Err(e)
                }
            }
        })
    }
}

impl Handler<RematchElsewhere> for Directory {
    type Result = ResponseFuture<Result<Option<SeatRef>, ProtocolError>>;

    fn handle(&mut self, msg: RematchElsewhere, _: &mut Context<Self>) -> Self::Result {
        let RematchElsewhere(conn) = msg;
        let remote = Arc::clone(&self.remote);
        Box::pin(async move {
            let asked = remote
                .act(conn, FarAct::Rematch)
                .ok_or(Refusal::NotInGame)?;
            let answered = remote.answer_asking_again(CommandKind::Rematch, asked);
            match answered.await?.ok {
                Reply::Game(game) => {
                    let owner = remote.moved_on(conn, game).ok_or(Refusal::NotInGame)?;
                    Ok(Some(remote.route_to(owner, game, Some(conn))))
                }
                _ => Ok(None),
            }
        })
    }
}

impl Handler<LeaveElsewhere> for Directory {
    type Result = ResponseFuture<Result<bool, ProtocolError>>;

    fn handle(&mut self, msg: LeaveElsewhere, _: &mut Context<Self>) -> Self::Result {
        let LeaveElsewhere(conn, game) = msg;
        let remote = Arc::clone(&self.remote);
        Box::pin(async move {
            if remote.seat_away(conn) != Some(game) {
                return Ok(false);
            }
            let Some(asked) = remote.act(conn, FarAct::Leave) else {
                return Ok(false);
            };
            (remote.answer_asking_again(CommandKind::Leave, asked)).await?;
            // Nothing more there: the connection goes from that node.
            remote.gone_here(conn);
            Ok(true)
        })
    }
}

impl Handler<GoneElsewhere> for Directory {
    type Result = ();

    fn handle(&mut self, msg: GoneElsewhere, _: &mut Context<Self>) {
        self.remote.gone_here(msg.0);
    }
}

/// A game elsewhere as a connection here reaches it: a watcher's `WATCH`
/// and the leaving of it go to the owner, and so do a player's commands
/// (`player`: its connection here); playing from a watcher's route is
/// refused.
struct RemoteGame {
    remote: Arc<Remote>,
    owner: String,
    game: GameId,
    player: Option<u64>,
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
                    let answered = owner_answer(CommandKind::Watch, answer).await;
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
            ToGame::Play { action, .. } => self.act(FarAct::of(&action)),
            // Sent again by this node to a game here, never to a route.
            ToGame::Again { act, .. } => self.act(FarAct::of_keyed(act)),
            ToGame::Hint { .. } => self.act(FarAct::Hint),
            ToGame::Seating(_) => Box::pin(async { Ok(Answer::default()) }),
        }
    }
}

impl RemoteGame {
    /// A player's command, sent to the owner; on a watcher's route only
    /// `BOARD` is (any name reads the board), the rest refused.
    fn act(&self, act: FarAct) -> ResponseFuture<Answered> {
        let kind = act.kind();
        let sent = match (self.player, act) {
            (Some(conn), act) => self.remote.act(conn, act),
            (None, FarAct::Board) => {
                let (request, answer) = self.remote.board(&self.owner, self.game);
                Some(seats::Asked {
                    request,
                    answer,
                    again: None,
                })
            }
            (None, _) => None,
        };
        let (game, owner) = (self.game, self.owner.clone());
        let remote = Arc::clone(&self.remote);
        Box::pin(async move {
            let Some(asked) = sent else {
                return Err(ProtocolError::new(
                    ErrorCode::Conflict,
                    format!("game {game} is played on node {owner}: JOIN {game} to take a seat"),
                ));
            };
            remote.answer_asking_again(kind, asked).await
        })
    }
}
