//! The cluster's message bus: core NATS, one subject per node
//! (`flip.<cluster>.n.<node>`, the cluster's number from its database, so
//! that two clusters never hear each other on one NATS server), one
//! subscription each, so that what one node sends
//! another arrives in the order sent (NATS keeps a publisher's order on a
//! subject, and one subscription delivers in order). Nothing is stored in
//! NATS: a message lost while a connection is down is noticed by its
//! sequence number (see `remote`) and made good from the game itself.
//!
//! The client runs on a thread of its own with a runtime of its own; the
//! actors hand it envelopes through a channel, and what arrives is handed
//! to `inbound` on that thread.

use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use serde::{Deserialize, Serialize};
use tokio::sync::mpsc;

use crate::node_state::NodeState;

/// What one node tells another.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Body {
    /// Connection `conn` of the sender watches `game`, owned by the
    /// receiver (sent again after a gap: the snapshot comes again).
    Watch { request: u64, game: u64, conn: u64 },
    /// Connection `conn` of the sender stops watching `game`.
    Unwatch { game: u64, conn: u64 },
    /// The answer to request `request`: the data lines and the final line,
    /// or an error's code and words.
    Answer {
        request: u64,
        result: Result<(String, String), (u16, String)>,
    },
    /// To every node (the sender too): the sender owns these games now (it
    /// took them over from a dead node); their watchers follow them there.
    Owns { games: Vec<u64> },
    /// Lines of `game` for connection `conn` of the receiver, the `seq`th
    /// the sender sent it of that game (from 1).
    Deliver {
        conn: u64,
        game: u64,
        seq: u64,
        text: String,
    },
    /// Connection `conn` of the sender, logged in there as `pass` says,
    /// takes a seat at `game`, owned by the receiver (`JOIN`); answered as
    /// `Watch` is, and `request` 0 (the snapshot again after a gap, or the
    /// game now owned by the receiver) is not answered.
    Sit {
        request: u64,
        conn: u64,
        game: u64,
        pass: FarPass,
        /// A command of the player left unanswered by the game's last
        /// owner (dead), sent again once the seat is taken.
        resend: Option<Resend>,
    },
    /// A command of the player on connection `conn` of the sender, seated
    /// at `game` on the receiver; answered. Asked `again` (the same
    /// request) while no answer has come: taken up once, its answer sent
    /// again; if the receiver does not know the request, a move is played
    /// only at ply `at` (the plies its player had heard of) and answered as
    /// played if it was (`Table::resent`), and nothing is answered while
    /// the player has no seat there yet.
    Act {
        request: u64,
        conn: u64,
        game: u64,
        act: FarAct,
        #[serde(default)]
        again: bool,
        #[serde(default)]
        at: Option<u32>,
    },
    /// Connection `conn` of the sender closed: a seat it holds on the
    /// receiver is kept for the grace period, as for a connection there.
    Away { conn: u64 },
    /// What the receiver's player on connection `conn` hears from its game
    /// or its lobby on the sender, the `seq`th such (from 1).
    ToPlayer {
        conn: u64,
        seq: u64,
        news: PlayerNews,
    },
    /// These nodes are gone (declared dead, or the sender itself, started
    /// again): what their connections held on the receiver goes.
    Gone { nodes: Vec<String> },
    /// To every node: `game`, owned by the sender, is over. A name held on
    /// the receiver for its seat there (kept at a login) goes free.
    Over { game: u64 },
    /// `LIST` (`query`: its arguments) of the receiver's games, for a
    /// connection of the sender; answered with the `GAME` lines.
    ListHere { request: u64, query: String },
    /// `WHO` (`query`: its arguments) of the receiver's names; answered
    /// with the `PLAYER` lines.
    WhoHere { request: u64, query: String },
    /// To the lobby's leader (of `epoch`, as the sender read it): the
    /// sender's player on `conn`, logged in as `pass` says, seeks.
    Seek {
        epoch: i64,
        conn: u64,
        seek: FarSeek,
        pass: FarPass,
    },
    /// To the lobby's leader: the sender's player `name` seeks no more.
    Unseek { epoch: i64, name: String },
    /// From the leader of `epoch`: take `name`'s seek of `seek` out for
    /// pairing `pairing`, whose game node `maker` makes; answered. Only
    /// `maker` settles it then (`Paired`, `Unpaired`, or `AskPairing`).
    Reserve {
        request: u64,
        epoch: i64,
        pairing: u64,
        maker: String,
        name: String,
        seek: FarSeek,
    },
    /// From the leader of `epoch`: make pairing `pairing`'s game here, of
    /// `waiting`'s seek and `partner`'s (`coin`: `waiting` plays black).
    Pair {
        pairing: u64,
        epoch: i64,
        waiting: String,
        seek: FarSeek,
        partner: FarPartner,
        coin: bool,
    },
    /// From the node that made `game` for pairing `pairing`: the
    /// receiver's player `name` on `conn` sits there; it takes its seat.
    Paired {
        pairing: u64,
        conn: u64,
        name: String,
        game: u64,
    },
    /// From the node that was to make pairing `pairing`'s game: it made
    /// none; the receiver's player `name` seeks again if it can.
    Unpaired { pairing: u64, name: String },
    /// To the node that was to make pairing `pairing`'s game, whose answer
    /// has not come: what became of it (answered `OK <game>` if made, `OK
    /// seeking` while being made or while the store cannot say, `ERR 404`
    /// if none is or ever will be).
    AskPairing {
        request: u64,
        pairing: u64,
        /// The player taken out for it, whose game in play the maker looks
        /// for in the store if it does not remember the pairing.
        #[serde(default)]
        name: String,
    },
    /// The sender's player `pass` challenges the receiver's player `to` on
    /// `terms`; `id` is its number at the sender, by which both nodes name
    /// it. Answered (`OK`, or refused as `CHALLENGE` is).
    Challenge {
        request: u64,
        id: u64,
        pass: FarPass,
        to: String,
        terms: FarTerms,
    },
    /// About challenge `id` (its number at the challenger's node), settled
    /// at the sender for `reason`: withdrawn by its challenger (to the
    /// challenged's node), or declined by its challenged (to the
    /// challenger's).
    ChallengeWord {
        id: u64,
        withdrawn: bool,
        reason: String,
    },
    /// From the challenged's node: the receiver's challenge `id` is
    /// accepted there; take its challenger out for pairing `pairing`, whose
    /// game the sender makes and settles (`Paired`, `Unpaired`). Answered.
    Accepting { request: u64, id: u64, pairing: u64 },
    /// From the node that makes a game with the receiver's player `name`
    /// (a tournament's round): take it out for pairing `pairing`, which the
    /// sender settles (`Paired`, `Unpaired`). Answered.
    TakeOut {
        request: u64,
        name: String,
        pairing: u64,
    },
    /// Lines for the receiver's player `name`, if online there (what its
    /// tournament on the sender says).
    TellName { name: String, text: String },
    /// `TOURNEY <verb> <id>` (`list`: every tournament of the receiver)
    /// from the sender's player `member` (if a registered name); answered
    /// with the lines, `OK`, or `ERR 404` where the receiver does not hold
    /// the tournament.
    TourneyHere {
        request: u64,
        verb: String,
        id: u64,
        member: Option<String>,
    },
    /// To every node: the sender's link to NATS is back after a cut, so
    /// that messages either way may have been lost. Each node answers with
    /// its `Roster` for the sender and takes its seats there again.
    Back,
    /// What the sender's connections hold on the receiver: the players
    /// (by connection) seated at its games and the watchers (connection,
    /// game). Anything else the receiver holds for the sender's
    /// connections goes (their `Away` or `Unwatch` was lost): a seat's
    /// grace starts. `answer`: the receiver sends its own back.
    Roster {
        players: Vec<u64>,
        watchers: Vec<(u64, u64)>,
        answer: bool,
    },
}

/// A challenge's terms as the bus carries them: the variant's name, the
/// challenger's side (0 black, 1 white, 2 random), the clock's base and
/// increment in milliseconds, rated or not, and the moves to start from.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FarTerms {
    pub variant: String,
    pub side: u8,
    pub clock: Option<(u64, u64)>,
    pub rated: bool,
    pub start: Vec<String>,
}

/// A seek as the bus carries it: the variant's name, the clock's base and
/// increment in milliseconds, and for a rated seek its rating and range.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FarSeek {
    pub variant: String,
    pub clock: Option<(u64, u64)>,
    pub rated: Option<(i32, Option<(u16, u16)>)>,
}

/// The other seeker of a pairing: its node, its connection there and how
/// it logged in.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FarPartner {
    pub node: String,
    pub conn: u64,
    pub pass: FarPass,
}

/// How a player seated from another node logged in there (its node
/// checked its password; the nodes of a cluster trust each other).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FarPass {
    pub name: String,
    /// A guest's secret; none for a registered name.
    pub secret: Option<String>,
    pub member: bool,
    pub rating: Option<i16>,
    pub bot: bool,
}

/// A seated player's command, as the bus carries it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum FarAct {
    Move(String),
    Pass,
    Resign,
    Undo,
    Board,
    Say(String),
    Quit,
    Hint,
    Rematch,
    Leave,
}

/// A player's command sent again to a game's new owner: answered as
/// request `request`; a move keyed by `at`, the plies its player had heard
/// of, so that it is never played twice (`Table::resent`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Resend {
    pub request: u64,
    pub act: FarAct,
    pub at: Option<u32>,
}

/// What a player seated from another node hears.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum PlayerNews {
    /// Lines to write to it, and where its game stood when they were sent
    /// (the game and its plies), if it sits at one.
    Lines(String, Option<(u64, u32)>),
    /// It sits at this game now (a rematch that the other player's vote
    /// made).
    Seated(u64),
}

/// A message and its sender.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Envelope {
    pub from: String,
    pub body: Body,
}

impl Envelope {
    /// The bytes sent.
    pub fn encode(&self) -> Vec<u8> {
        ron::to_string(self).unwrap_or_default().into_bytes()
    }

    /// An envelope from bytes received, or why not.
    pub fn decode(bytes: &[u8]) -> Result<Envelope, String> {
        let text = std::str::from_utf8(bytes).map_err(|e| e.to_string())?;
        ron::from_str(text).map_err(|e| e.to_string())
    }
}

/// A connection on another node that follows a game here (a spectator)
/// or sits at one (a player): what the game (and for a player, the lobby)
/// tells it goes over the bus, numbered.
#[derive(Debug)]
pub struct FarSession {
    bus: Bus,
    node: String,
    conn: u64,
    /// The game a spectator watches; `None` for a player, whose lines are
    /// numbered across its games.
    game: Option<u64>,
    /// The game's spectator number for it here.
    pub id: u64,
    /// How many it was sent. Held while a message is numbered and sent: a
    /// player hears both its game (on a worker's thread) and its lobby (on
    /// the lobby's), and its node takes a number out of order for a lost
    /// message, asking for the snapshot again.
    sent: std::sync::Mutex<u64>,
    gone: std::sync::atomic::AtomicBool,
    /// A player's game, which stamps its lines with its plies. Weak: the
    /// game holds this session.
    seat: std::sync::Mutex<Option<std::sync::Weak<dyn Plies>>>,
}

/// A game as it stands, for the lines its far players hear: its number and
/// its plies committed.
pub trait Plies: Send + Sync + std::fmt::Debug {
    fn plies(&self) -> (u64, u32);
}

impl FarSession {
    /// Connection `conn` of `node`, watching `game` (`None`: a player),
    /// known here as `id`.
    pub fn new(bus: Bus, node: &str, conn: u64, game: Option<u64>, id: u64) -> FarSession {
        FarSession {
            bus,
            node: node.to_string(),
            conn,
            game,
            id,
            sent: Default::default(),
            gone: Default::default(),
            seat: std::sync::Mutex::default(),
        }
    }

    /// A player sits at `seat` from now on: its lines carry that game's
    /// plies.
    pub fn sits_at(&self, seat: std::sync::Weak<dyn Plies>) {
        let mut held = self
            .seat
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        *held = Some(seat);
    }

    /// Where its game stands, if it is a player at one.
    fn stamp(&self) -> Option<(u64, u32)> {
        let held = self
            .seat
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        held.as_ref()?.upgrade().map(|seat| seat.plies())
    }

    /// Sends it `text`.
    pub fn tell(&self, text: &str) {
        let stamp = self.stamp();
        self.send_numbered(|seq| match self.game {
            Some(game) => Body::Deliver {
                conn: self.conn,
                game,
                seq,
                text: text.to_string(),
            },
            None => Body::ToPlayer {
                conn: self.conn,
                seq,
                news: PlayerNews::Lines(text.to_string(), stamp),
            },
        });
    }

    /// Tells a player it sits at `game` now; a spectator hears nothing of
    /// seats.
    pub fn seated(&self, game: u64) {
        if self.game.is_none() {
            self.send_numbered(|seq| Body::ToPlayer {
                conn: self.conn,
                seq,
                news: PlayerNews::Seated(game),
            });
        }
    }

    /// Sends the message `body` makes of the next number, numbered and
    /// sent in one step, so that numbers go out in order.
    fn send_numbered(&self, body: impl FnOnce(u64) -> Body) {
        let mut sent = self
            .sent
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        *sent += 1;
        self.bus.send(&self.node, body(*sent));
    }

    /// It stopped watching.
    pub fn close(&self) {
        self.gone.store(true, std::sync::atomic::Ordering::Relaxed);
    }

    /// Whether it stopped watching.
    pub fn is_gone(&self) -> bool {
        self.gone.load(std::sync::atomic::Ordering::Relaxed)
    }
}

/// The subject a node of a cluster listens on.
pub fn subject(cluster: &str, node: &str) -> String {
    format!("flip.{cluster}.n.{node}")
}

/// The subject every node of a cluster listens on too.
pub fn everyone(cluster: &str) -> String {
    format!("flip.{cluster}.all")
}

/// How many messages may wait to go out: past that, a message is dropped
/// (and counted) rather than hold up the actors, whatever NATS's state.
/// What a lost message carried is made good as for a message lost in a
/// cut: by sequence numbers, answers asked again and rosters.
const OUTBOUND_QUEUE: usize = 65_536;

/// A message on its way out: its subject and bytes.
type Outgoing = (String, Vec<u8>);

/// The bus as the actors hold it.
#[derive(Clone)]
pub struct Bus {
    cluster: Arc<str>,
    node: Arc<str>,
    out: mpsc::Sender<Outgoing>,
    state: Arc<NodeState>,
}

impl std::fmt::Debug for Bus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Bus").field("node", &self.node).finish()
    }
}

/// What reaches the node from the bus.
#[derive(Debug)]
pub enum Arrival {
    /// A message of another node (or this one, to every node).
    Envelope(Box<Envelope>),
    /// The link to NATS is up again after a cut (or for the first time).
    LinkUp,
}

/// What the bus does with what arrives (on the bus's thread, inside its
/// runtime: it may spawn tasks there).
pub type Inbound = Box<dyn Fn(Arrival) + Send + Sync>;

/// Where the bus hands what arrives, once something takes it; until then
/// it is dropped.
pub type InboundSlot = Arc<std::sync::OnceLock<Inbound>>;

/// A bus started and not yet joined to its cluster (see [`Bus::start`]).
pub struct Starting {
    out: mpsc::Sender<Outgoing>,
    join: tokio::sync::oneshot::Sender<Joining>,
    slot: InboundSlot,
    /// Told once the bus listens on its subjects, or why it will not.
    listening: std::sync::mpsc::Receiver<Result<(), String>>,
}

/// What the bus's thread needs to connect: the cluster's number, the
/// node's name and its shared state (where the link's state is kept).
type Joining = (String, String, Arc<NodeState>);

/// How long a start waits for the bus to listen before it serves anyway
/// (a NATS server away at start is connected to later, in the background).
const LISTEN_WITHIN: Duration = Duration::from_secs(5);

impl Bus {
    /// Starts the bus's thread for the NATS server at `url`; it connects
    /// once told its cluster and node ([`Starting::join`]).
    ///
    /// Its thread and runtime are made before the worker threads take
    /// descriptor tables of their own (`descriptor_tables.rs`, rule 1):
    /// the games on those threads wake the bus's runtime, whose wake-up
    /// descriptor must be in their tables. The cluster's number is read
    /// from the store, which opens after that.
    pub fn start(settings: &crate::config::ClusterConfig) -> std::io::Result<Starting> {
        let (out, queue) = mpsc::channel(OUTBOUND_QUEUE);
        let (join, joined) = tokio::sync::oneshot::channel::<Joining>();
        let settings = settings.clone();
        let slot: InboundSlot = Arc::default();
        let inbound = Arc::clone(&slot);
        let (ready_tx, ready) = std::sync::mpsc::channel();
        let (listening_tx, listening) = std::sync::mpsc::channel();
        std::thread::Builder::new()
            .name("cluster-bus".into())
            .spawn(move || {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build();
                let _ = ready_tx.send(());
                let Ok(runtime) = runtime else {
                    tracing::error!("the cluster's bus cannot start a runtime");
                    return;
                };
                runtime.block_on(async move {
                    // Dropped unjoined: the daemon did not start.
                    if let Ok((cluster, node, state)) = joined.await {
                        let subjects = [subject(&cluster, &node), everyone(&cluster)];
                        let link = Link { inbound, state };
                        run(&settings, &subjects, queue, link, listening_tx).await;
                    }
                });
            })?;
        // Its runtime (and wake-up descriptor) exists once this returns.
        let _ = ready.recv();
        Ok(Starting {
            out,
            join,
            slot,
            listening,
        })
    }

    /// This node's name.
    pub fn node(&self) -> &str {
        &self.node
    }

    /// Sends `body` to node `to`.
    pub fn send(&self, to: &str, body: Body) {
        self.publish(subject(&self.cluster, to), body);
    }

    /// Sends `body` to every node, this one too (a game taken over here
    /// may have had watchers here, whose route led to its dead owner).
    pub fn broadcast(&self, body: Body) {
        self.publish(everyone(&self.cluster), body);
    }

    fn publish(&self, subject: String, body: Body) {
        let envelope = Envelope {
            from: self.node.to_string(),
            body,
        };
        let full = match self.out.try_send((subject, envelope.encode())) {
            Err(mpsc::error::TrySendError::Full(_)) => true,
            Ok(()) | Err(mpsc::error::TrySendError::Closed(_)) => false,
        };
        if full && self.state.bus_dropped() {
            tracing::warn!(
                "the bus's queue to other nodes is full (NATS slow or away): messages are dropped"
            );
        }
    }
}

impl Starting {
    /// Joins the bus to cluster `cluster` as node `node`: it connects and
    /// listens; what arrives goes to what is put in the slot returned.
    ///
    /// It waits (at most [`LISTEN_WITHIN`]) until the bus listens, so that
    /// a node serves nobody before the others can reach it: a message sent
    /// to a subject nobody listens on yet is lost. An error: the bus will
    /// not use that server (it lets anyone in, or the settings are bad),
    /// and the node must not start.
    pub fn join(
        self,
        cluster: &str,
        node: &str,
        state: Arc<NodeState>,
    ) -> Result<(Bus, InboundSlot), String> {
        state.bus_link(false);
        let joining = (cluster.to_string(), node.to_string(), Arc::clone(&state));
        let _ = self.join.send(joining);
        match self.listening.recv_timeout(LISTEN_WITHIN) {
            Ok(Ok(())) => {}
            Ok(Err(why)) => return Err(why),
            Err(_) => tracing::warn!(
                "the cluster's NATS server did not answer at start: games on other nodes are \
                 out of reach until it does"
            ),
        }
        let bus = Bus {
            cluster: Arc::from(cluster),
            node: Arc::from(node),
            out: self.out,
            state,
        };
        Ok((bus, self.slot))
    }
}

/// Where the bus's thread tells what happens: what arrives, and the state
/// of its link to NATS.
#[derive(Clone)]
struct Link {
    inbound: InboundSlot,
    state: Arc<NodeState>,
}

impl Link {
    /// Hands `arrival` on, once something takes it.
    fn hand(&self, arrival: Arrival) {
        if let Some(inbound) = self.inbound.get() {
            hand_over(inbound, arrival);
        }
    }

    /// What the NATS client reports of its connection.
    fn event(&self, event: &async_nats::Event) {
        say(event);
        match event {
            async_nats::Event::Connected => {
                self.state.bus_link(true);
                self.hand(Arrival::LinkUp);
            }
            async_nats::Event::Disconnected => self.state.bus_link(false),
            _ => {}
        }
    }
}

/// The bus's thread: connects, subscribes to its subjects, and moves
/// envelopes out and in until every handle is dropped. What goes out is
/// published by a task of its own, so that a slow or absent server never
/// holds up what arrives.
async fn run(
    settings: &crate::config::ClusterConfig,
    subjects: &[String; 2],
    queue: mpsc::Receiver<Outgoing>,
    link: Link,
    listening: std::sync::mpsc::Sender<Result<(), String>>,
) {
    let client = match connect(settings, &subjects[0], &link).await {
        Ok(client) => client,
        Err(why) => {
            tracing::error!(why, "the cluster's bus does not start");
            let _ = listening.send(Err(why));
            return;
        }
    };
    let Some(mut incoming) = listen(&client, settings, subjects, &listening).await else {
        return;
    };
    let mut publishing = tokio::spawn(publish_all(client, queue));
    loop {
        tokio::select! {
            _ = &mut publishing => return,
            arrived = incoming.next() => {
                let Some(message) = arrived else { return };
                match Envelope::decode(&message.payload) {
                    Ok(envelope) => link.hand(Arrival::Envelope(Box::new(envelope))),
                    Err(why) => tracing::warn!(why, "a message on the bus does not read"),
                }
            }
        }
    }
}

/// The client, connected (or connecting in the background), whose events
/// `link` hears; or why the settings cannot be used.
async fn connect(
    settings: &crate::config::ClusterConfig,
    mine: &str,
    link: &Link,
) -> Result<async_nats::Client, String> {
    let url = settings.nats.redacted();
    let connected = async {
        let (options, servers) = crate::bus_login::options(settings).await?;
        let events = link.clone();
        let options = options
            .name(format!("flipd {mine}"))
            .ping_interval(ping_every(Duration::from_secs(settings.lease_secs)))
            .retry_on_initial_connect()
            .max_reconnects(None)
            .reconnect_delay_callback(|attempts| {
                Duration::from_millis(100 * u64::try_from(attempts.min(10)).unwrap_or(10))
            })
            .event_callback(move |event| {
                let events = events.clone();
                async move { events.event(&event) }
            });
        options
            .connect(servers.as_slice())
            .await
            .map_err(|e| format!("cannot use the cluster's NATS server {url}: {e}"))
    };
    connected.await
}

/// How often the client pings the server: a quarter of the lease (at least
/// a quarter of a second), so that a link gone silent, which the client
/// gives up after its third unanswered ping, is noticed within the lease.
fn ping_every(lease: Duration) -> Duration {
    (lease / 4).max(Duration::from_millis(250))
}

/// What arrives on this node's subjects, once subscribed; `None` (and
/// `listening` told why) if the server lets anyone in and the settings do
/// not accept that, or the subscriptions fail.
async fn listen(
    client: &async_nats::Client,
    settings: &crate::config::ClusterConfig,
    [mine, everyone]: &[String; 2],
    listening: &std::sync::mpsc::Sender<Result<(), String>>,
) -> Option<impl futures_util::Stream<Item = async_nats::Message> + use<>> {
    let subscribed = async {
        let own = client.subscribe(mine.clone()).await?;
        let all = client.subscribe(everyone.clone()).await?;
        Ok::<_, async_nats::SubscribeError>(futures_util::stream::select(own, all))
    };
    let incoming = match subscribed.await {
        Ok(incoming) => incoming,
        Err(e) => {
            tracing::error!(error = %e, "cannot subscribe to this node's subjects on NATS");
            return None;
        }
    };
    // Once flushed, the server has the subscriptions, and said whether it
    // asks who connects.
    if client.flush().await.is_ok() {
        if !client.server_info().auth_required && !settings.nats_insecure {
            let why = crate::bus_login::OPEN_SERVER.to_string();
            tracing::error!(url = %settings.nats.redacted(), "{why}");
            let _ = listening.send(Err(why));
            return None;
        }
        let _ = listening.send(Ok(()));
    }
    Some(incoming)
}

/// Publishes what the actors send until every handle is dropped.
async fn publish_all(client: async_nats::Client, mut queue: mpsc::Receiver<Outgoing>) {
    while let Some((to, bytes)) = queue.recv().await {
        if let Err(e) = client.publish(to, bytes.into()).await {
            tracing::warn!(error = %e, "a message to another node was not sent");
        }
    }
}

/// Hands `arrival` to `inbound`: a panic there (a bug) is logged and the
/// bus goes on, since this thread carries every node's messages.
fn hand_over(inbound: &Inbound, arrival: Arrival) {
    let handled = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| inbound(arrival)));
    if handled.is_err() {
        tracing::error!(
            "a message from another node could not be handled (a panic): the bus goes on"
        );
    }
}

fn say(event: &async_nats::Event) {
    match event {
        async_nats::Event::Connected => tracing::info!("connected to the cluster's NATS server"),
        async_nats::Event::Disconnected => tracing::warn!(
            "lost the cluster's NATS server: games on other nodes are out of reach until it \
             is back"
        ),
        other => tracing::debug!(event = %other, "NATS"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_far_player_s_lines_go_out_in_the_order_of_their_numbers_from_any_thread() {
        let (out, mut sent) = mpsc::channel(OUTBOUND_QUEUE);
        let bus = Bus {
            cluster: Arc::from("c"),
            node: Arc::from("a"),
            out,
            state: Arc::default(),
        };
        // A player hears its game and its lobby from different threads.
        let player = Arc::new(FarSession::new(bus, "b", 7, None, 1));
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let player = Arc::clone(&player);
                std::thread::spawn(move || (0..500).for_each(|_| player.tell("INFO x\n")))
            })
            .collect();
        for thread in threads {
            assert!(thread.join().is_ok());
        }
        let mut numbers = Vec::new();
        while let Ok((_, bytes)) = sent.try_recv() {
            if let Ok(Envelope {
                body: Body::ToPlayer { seq, .. },
                ..
            }) = Envelope::decode(&bytes)
            {
                numbers.push(seq);
            }
        }
        assert_eq!(numbers, (1..=2000).collect::<Vec<u64>>());
    }

    #[test]
    fn a_full_queue_drops_and_counts_what_does_not_fit_rather_than_wait() {
        let (out, _queued) = mpsc::channel(2);
        let state = Arc::new(NodeState::default());
        let bus = Bus {
            cluster: Arc::from("c"),
            node: Arc::from("a"),
            out,
            state: Arc::clone(&state),
        };
        for conn in 0..5 {
            bus.send("b", Body::Away { conn });
        }
        assert_eq!(state.counts().bus_dropped, 3);
    }

    #[test]
    fn a_message_whose_handling_panics_leaves_the_bus_handing_over_the_next() {
        let seen = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counted = Arc::clone(&seen);
        let inbound: Inbound = Box::new(move |arrival: Arrival| {
            if let Arrival::Envelope(envelope) = arrival {
                assert_ne!(envelope.body, Body::Away { conn: 0 }, "a bug");
                counted.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
        });
        let from = String::from("a");
        for conn in [0, 1, 0, 2] {
            let body = Body::Away { conn };
            let envelope = Envelope {
                from: from.clone(),
                body,
            };
            hand_over(&inbound, Arrival::Envelope(Box::new(envelope)));
        }
        assert_eq!(seen.load(std::sync::atomic::Ordering::Relaxed), 2);
    }

    proptest! {
        #[test]
        fn envelopes_read_back_as_sent(
            from in "[a-z0-9_-]{1,32}",
            text in ".{0,200}",
            numbers in (any::<u64>(), any::<u64>(), any::<u64>()),
            code in any::<u16>(),
        ) {
            let (a, b, c) = numbers;
            let bodies = [
                Body::Watch { request: a, game: b, conn: c },
                Body::Unwatch { game: b, conn: c },
                Body::Answer { request: a, result: Ok((text.clone(), "OK".into())) },
                Body::Answer { request: a, result: Err((code, text.clone())) },
                Body::Deliver { conn: c, game: b, seq: a, text: text.clone() },
                Body::Owns { games: vec![a, b, c] },
                Body::Sit { request: a, conn: c, game: b, pass: FarPass {
                    name: text.clone(), secret: Some(text.clone()), member: true,
                    rating: Some(code as i16), bot: false,
                }, resend: Some(Resend { request: b, act: FarAct::Pass, at: Some(code.into()) }) },
                Body::Act { request: a, conn: c, game: b, act: FarAct::Say(text.clone()), again: false, at: None },
                Body::Act { request: a, conn: c, game: b, act: FarAct::Move("d3".into()), again: true, at: Some(code.into()) },
                Body::Away { conn: c },
                Body::ToPlayer { conn: c, seq: a, news: PlayerNews::Lines(text.clone(), Some((b, code.into()))) },
                Body::Over { game: b },
                Body::ListHere { request: a, query: text.clone() },
                Body::WhoHere { request: a, query: text.clone() },
                Body::ToPlayer { conn: c, seq: a, news: PlayerNews::Seated(b) },
                Body::Gone { nodes: vec![from.clone(), text.clone()] },
                Body::Back,
                Body::Roster { players: vec![a, c], watchers: vec![(b, c)], answer: code % 2 == 0 },
            ];
            for body in bodies {
                let envelope = Envelope { from: from.clone(), body };
                prop_assert_eq!(Envelope::decode(&envelope.encode()), Ok(envelope));
            }
        }

        #[test]
        fn any_bytes_are_refused_or_read_never_a_panic(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
            let _ = Envelope::decode(&bytes);
        }
    }
}
