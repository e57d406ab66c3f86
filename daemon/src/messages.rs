//! Messages between the actors: plain data, and recipients instead of the
//! actor types of their senders, so that this module sits at the bottom of
//! the daemon's imports. Where a message carries a connection it is generic
//! in how a connection is reached (`C`): the session module names that type
//! (a weak address of a session: one pointer, no allocation) and every actor
//! above it uses that name, so nothing here names an actor. Sessions ask
//! (`send`) and wait for replies; games and the lobby only tell sessions
//! (`do_send`), so no two actors ever wait on each other.
//!
//! A session reaches a game only through its route ([`GameHandle`]), which
//! the lobby, the one directory of games, hands out with the seat or on
//! `WATCH`; the route's recipient is what a game on another machine would
//! replace.

use std::marker::PhantomData;
use std::sync::Arc;
use std::sync::atomic::AtomicU32;

use actix::{ArbiterHandle, Message, Recipient};
use flipline::protocol::{Event, GameId, NewGame, ProtocolError, Reply};
use flipline::{Color, Square};

use crate::outbox::Text;
pub use crate::rules::lobby::{AwayPass, GuestLogin, GuestSecret, LoggedIn};
use crate::rules::lobby::{Left, Order};

pub use crate::rules::{ConnId, Name};

/// A successful reply: data lines sent before it (each ending in LF, often
/// none) and the final `OK` line, typed as the protocol defines it.
#[derive(Debug, PartialEq, Eq)]
pub struct Answer {
    /// Data lines, each ending in LF.
    pub data: String,
    /// The final line.
    pub ok: Reply,
}

impl Default for Answer {
    /// A bare `OK`.
    fn default() -> Answer {
        Answer::ok(Reply::Done)
    }
}

impl Answer {
    /// The reply `ok`, with no data lines.
    pub fn ok(ok: Reply) -> Answer {
        Answer {
            data: String::new(),
            ok,
        }
    }

    /// Data lines, then a bare `OK`.
    pub fn data(data: String) -> Answer {
        Answer {
            data,
            ok: Reply::Done,
        }
    }

    /// A `LIST` or `WHO` answer: the lines, then `OK <count>`, the count
    /// of the games or names, not of the line that says how to get the
    /// rest of a long answer.
    pub fn listing(events: &[flipline::protocol::Event]) -> Answer {
        use flipline::protocol::Event;
        let data: String = events.iter().map(|e| format!("{e}\n")).collect();
        let listed = events.iter().filter(|e| !matches!(e, Event::Info(_)));
        Answer {
            data,
            ok: Reply::Count(listed.count()),
        }
    }
}

/// The final reply to a command, or why it failed.
pub type Answered = Result<Answer, ProtocolError>;

// ---- to sessions ----

/// What games and the lobby tell a session.
pub enum ToSession<C: Send + 'static> {
    /// Lines to write to the client.
    Deliver(Text),
    /// The session now holds a seat in this game (another player's command
    /// put it there: a pairing or a rematch).
    Seated(SeatRef<C>),
    /// The cluster's leader paired the session's seek, and another node
    /// made the game: it takes its seat there, as `JOIN` would (the
    /// snapshot shows it the game).
    SitThere(GameId),
    /// The lobby's periodic call: close if idle too long.
    IdleCheck,
    /// The daemon is stopping: say so and close.
    Shutdown,
}

impl<C: Send + 'static> Message for ToSession<C> {
    type Result = ();
}

/// A running game as the lobby, its players' sessions and the game itself hold
/// it: one allocation per game, shared. It is the route to the game: the
/// lobby hands it out, sessions keep it for their seat and what they watch.
#[derive(Debug)]
pub struct GameHandle<C: Send + 'static> {
    /// The game.
    pub game: GameId,
    /// Its mailbox.
    pub tx: Recipient<ToGame<C>>,
    /// Plies committed: written by the game on every move, read by the lobby
    /// for `LIST`, so that a move needs no message to the lobby.
    pub ply: AtomicU32,
}

impl<C: Send + std::fmt::Debug + 'static> crate::bus::Plies for GameHandle<C> {
    fn plies(&self) -> (GameId, u32) {
        (
            self.game,
            self.ply.load(std::sync::atomic::Ordering::Relaxed),
        )
    }
}

/// A game's route, shared.
pub type SeatRef<C> = Arc<GameHandle<C>>;

// ---- to games ----

/// What a seated player asks of their game.
#[derive(Clone, Debug)]
pub enum Action {
    /// `MOVE`.
    Move(Square),
    /// `PASS`.
    Pass,
    /// `END`.
    Resign,
    /// `UNDO`.
    Undo,
    /// `BOARD`.
    Board,
    /// `SAY`.
    Say(String),
    /// `QUIT`: answered `OK bye`, after a line saying whether the seat is
    /// kept. The connection's close then does the rest.
    Quit,
}

/// A command keyed by the plies its player had heard of, so that one sent
/// again to a game's new node is never carried out twice.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Keyed {
    /// `MOVE` or `PASS`.
    Move(flipline::Move),
    /// `UNDO`.
    Undo,
}

/// Everything a game is told or asked. One message type, so that a route
/// is one recipient.
pub enum ToGame<C: Send + 'static> {
    /// A player's action (`MOVE`, `PASS`, `END`, `BOARD`, `SAY`).
    Play {
        /// Who asks.
        name: Name,
        /// What they ask.
        action: Action,
    },
    /// `MOVE`, `PASS` or `UNDO` sent again at ply `at` (the plies its
    /// player had heard of), its first answer lost with the game's last
    /// node: carried out at most once (see
    /// [`crate::rules::table::Table::resent`]).
    Again {
        /// Who asks.
        name: Name,
        /// The command.
        act: Keyed,
        /// The plies its player had heard of.
        at: u32,
    },
    /// `HINT`: answered once the engine has thought.
    Hint {
        /// Who asks.
        name: Name,
    },
    /// `WATCH`: follow the game.
    Watch {
        /// The spectator's connection number.
        id: ConnId,
        /// Its mailbox.
        session: C,
    },
    /// A spectator leaves (by `LEAVE` or by disconnecting); not answered.
    Unwatch {
        /// The spectator's connection number.
        id: ConnId,
    },
    /// What the lobby decided about who sits at the game (see
    /// [`crate::rules::lobby::Order`]); `None` where the connection is
    /// already gone. Not answered.
    Seating(Order<Option<C>>),
}

impl<C: Send + 'static> Message for ToGame<C> {
    type Result = Answered;
}

/// What a game tells the lobby.
#[derive(Message)]
#[rtype(result = "()")]
pub enum FromGame {
    /// The game ended: sent before the reply to the command that ended it
    /// and before anyone hears `OVER`.
    Ended(GameId),
    /// The game's end went out to everyone in it (`OVER`, and `RATED` for
    /// a rated game), with its result.
    Announced(GameId, flipline::protocol::GameResult),
    /// The game's actor stopped.
    Closed(GameId),
    /// A rated othello game changed a player's rating (rounded).
    Rated(Name, i16),
}

/// A registered name marked itself a program's (`ACCOUNT bot`, stored).
pub struct MarkedBot(pub Name);

impl Message for MarkedBot {
    type Result = ();
}

// ---- to the lobby ----

/// A connection opened.
#[derive(Message)]
#[rtype(result = "()")]
pub struct Connected<C: Send + 'static> {
    /// The connection's number.
    pub id: ConnId,
    /// Its mailbox.
    pub session: C,
    /// Its worker thread: games one of its players starts run there.
    pub worker: ArbiterHandle,
}

/// A connection closed, or gave its name back and stays (a registration
/// that could not be stored).
#[derive(Message)]
#[rtype(result = "()")]
pub struct Gone {
    /// The connection's number.
    pub id: ConnId,
    /// The name it was logged in with.
    pub name: Option<Name>,
    /// Whether the connection itself is gone; `false`: only its name, and
    /// the lobby keeps reaching it.
    pub closed: bool,
}

/// `LOGIN`, once the password is checked.
#[derive(Message)]
#[rtype(result = "Result<LoggedIn, ProtocolError>")]
pub struct Login {
    /// The name.
    pub name: Name,
    /// The connection.
    pub id: ConnId,
    /// For a guest: the secret shown, and a fresh one should it need one.
    /// `None` for a registered name, whose password was checked.
    pub guest: Option<GuestLogin>,
    /// What `WHO` shows of a registered name (the store's, read at login).
    pub marks: crate::rules::lobby::Marks,
}

/// `NEW`: the seat in the new game.
pub struct Create<C> {
    /// The creator.
    pub name: Name,
    /// The arguments of `NEW`.
    pub spec: NewGame,
    /// The route type of the answer.
    pub route: PhantomData<fn() -> C>,
}

impl<C: Send + 'static> Message for Create<C> {
    type Result = Result<SeatRef<C>, ProtocolError>;
}

/// `SEEK`: a seat in a new game at once, or `None` while waiting.
pub struct Seek<C> {
    /// The seeker.
    pub name: Name,
    /// The game wanted, and for a rated seek the seeker's rating.
    pub wanted: crate::rules::lobby::SeekWanted,
    /// The route type of the answer.
    pub route: PhantomData<fn() -> C>,
}

/// `CHALLENGE`, `ACCEPT`, `DECLINE` and `CANCEL`.
pub struct ChallengeOp<C> {
    /// Who asks.
    pub name: Name,
    /// What.
    pub op: ChallengeStep,
    /// The route type of the answer.
    pub route: PhantomData<fn() -> C>,
}

/// One step of a challenge.
pub enum ChallengeStep {
    /// `CHALLENGE`: to whom, on what terms, from what start (the terms'
    /// own start is filled in from it).
    Make(
        String,
        crate::rules::challenges::Terms,
        flipline::protocol::StartSpec,
    ),
    /// `ACCEPT`.
    Accept(crate::rules::challenges::ChallengeId),
    /// `DECLINE`.
    Decline(
        crate::rules::challenges::ChallengeId,
        flipline::protocol::DeclineReason,
    ),
    /// `CANCEL`.
    Cancel(crate::rules::challenges::ChallengeId),
}

/// What a challenge step answers.
pub enum ChallengeAnswer<C: Send + 'static> {
    /// The challenge made, by number.
    Made(crate::rules::challenges::ChallengeId),
    /// The accepted challenge's game: a seat.
    Seat(SeatRef<C>),
    /// Declined or cancelled.
    Done,
}

impl<C: Send + 'static> Message for ChallengeOp<C> {
    type Result = Result<ChallengeAnswer<C>, ProtocolError>;
}

impl<C: Send + 'static> Message for Seek<C> {
    type Result = Result<Option<SeatRef<C>>, ProtocolError>;
}

/// `JOIN`: the open seat, or one's own seat again; the seat and its colour.
pub struct Join<C> {
    /// Who.
    pub name: Name,
    /// The game.
    pub game: GameId,
    /// The route type of the answer.
    pub route: PhantomData<fn() -> C>,
}

impl<C: Send + 'static> Message for Join<C> {
    type Result = Result<(SeatRef<C>, Color), ProtocolError>;
}

/// `LEAVE`: what was left.
#[derive(Message)]
#[rtype(result = "Result<Left, ProtocolError>")]
pub struct Leave {
    /// Who.
    pub name: Name,
    /// Whether the connection watches games (left after a seat, before a seek).
    pub watching: bool,
}

/// `REMATCH`: the seat in the new game, or `None` while others have not asked.
pub struct Rematch<C> {
    /// Who.
    pub name: Name,
    /// The route type of the answer.
    pub route: PhantomData<fn() -> C>,
}

impl<C: Send + 'static> Message for Rematch<C> {
    type Result = Result<Option<SeatRef<C>>, ProtocolError>;
}

/// Games that were in play when the daemon last stopped: the lobby starts their
/// actors again (answers how many it started).
#[derive(Message)]
#[rtype(result = "usize")]
pub struct Recover(pub Vec<crate::store::GameRecord>);

/// A login whose name sits at `game`, which this cluster node has just
/// taken over: answered once the lobby holds that game (its `Recover`
/// follows the claim), with the name's seat here then (none if the game
/// ended at its recovery, or the name sits elsewhere).
#[derive(Message)]
#[rtype(result = "Option<GameId>")]
pub struct AwaitTakenOver {
    pub name: Name,
    pub game: GameId,
}

/// Tournaments the store holds (not over, and the last over): the lobby
/// takes them up where they stood.
#[derive(Message)]
#[rtype(result = "()")]
pub struct RecoverTourneys(pub Vec<crate::store::StoredTourney>);

/// Tournaments this cluster node took over from a node declared dead: to
/// run here from their stored facts.
#[derive(Message)]
#[rtype(result = "()")]
pub struct AdoptTourneys(pub Vec<crate::store::StoredTourney>);

/// Game `game`, on the node that said so, is over: a tournament held here
/// whose game it is reads its end from the store.
#[derive(Message)]
#[rtype(result = "()")]
pub struct OverThere(pub GameId);

/// A `TOURNEY` command, from `name` if logged in (`LIST` and `SHOW` need
/// no name).
#[derive(Message)]
#[rtype(result = "Result<TourneyAnswer, ProtocolError>")]
pub struct TourneyOp {
    /// Who asks.
    pub name: Option<Name>,
    /// What.
    pub op: flipline::protocol::TourneyCommand,
}

/// The lobby's answer to a `TOURNEY` command.
pub use crate::rules::tourney_desk::TourneyAnswer;

/// The route to a game, for `WATCH`.
pub struct Find<C>(pub GameId, pub PhantomData<fn() -> C>);

impl<C: Send + 'static> Message for Find<C> {
    type Result = Option<SeatRef<C>>;
}

/// The route to a game another node of the cluster owns, for `WATCH`
/// (`None`: no live node owns it, or it is this node's).
pub struct FindElsewhere<C>(pub GameId, pub PhantomData<fn() -> C>);

impl<C: Send + 'static> Message for FindElsewhere<C> {
    type Result = Option<SeatRef<C>>;
}

/// `JOIN` of a game another node of the cluster owns: the lobby here holds
/// the name for it (see [`crate::rules::lobby::LobbyCore::sit_away`]) and
/// says how the name logged in, for the owner.
#[derive(Message)]
#[rtype(result = "Result<AwayPass, ProtocolError>")]
pub struct SitAway {
    /// Who.
    pub name: Name,
    /// The game, on another node.
    pub game: GameId,
}

/// `name` no longer sits at `game` on another node (refused there, or over).
#[derive(Message)]
#[rtype(result = "()")]
pub struct BackFromAway {
    /// Who.
    pub name: Name,
    /// The game.
    pub game: GameId,
}

/// A login here of `name`, whose seat the store keeps in `game`, which
/// another node owns: the lobby holds the name for that seat, as for one
/// taken there, until the game is over there (or the connection goes).
#[derive(Message)]
#[rtype(result = "Result<(), ProtocolError>")]
pub struct KeptElsewhere {
    /// Who.
    pub name: Name,
    /// The game, on another node.
    pub game: GameId,
}

/// A game of this node is over: the other nodes hear it (see
/// [`KeptElsewhere`]).
pub type TellOver = Box<dyn Fn(GameId) + Send>;

/// From now on the lobby tells `0` of every game over here.
#[derive(Message)]
#[rtype(result = "()")]
pub struct TellEnds(pub TellOver);

/// `JOIN` of `game`, which another node owns, by connection `conn` here
/// logged in as `name`: the seat there and its colour, reached through a
/// route here.
pub struct SitElsewhere<C> {
    /// The game.
    pub game: GameId,
    /// The connection.
    pub conn: ConnId,
    /// Its name.
    pub name: Name,
    /// Its mailbox.
    pub session: C,
}

impl<C: Send + 'static> Message for SitElsewhere<C> {
    type Result = Result<(SeatRef<C>, Color), ProtocolError>;
}

/// `REMATCH` from connection `conn` here, seated at a game another node
/// owns: the seat in the new game there, or `None` while others have not
/// asked.
#[derive(Message)]
#[rtype(result = "Result<Option<SeatRef<crate::session::SessionRef>>, ProtocolError>")]
pub struct RematchElsewhere(pub ConnId);

/// `LEAVE` from connection `conn` here, seated at `game`: that seat, if
/// another node owns the game (`false`: this node's to leave).
#[derive(Message)]
#[rtype(result = "Result<bool, ProtocolError>")]
pub struct LeaveElsewhere(pub ConnId, pub GameId);

/// Connection `conn` here closed: a seat it held on another node is kept
/// there for the grace period, as for a connection there.
#[derive(Message)]
#[rtype(result = "()")]
pub struct GoneElsewhere(pub ConnId);

/// On a cluster's node with a bus: the leader pairs the seeks here;
/// `tell` tells it each change, and `pending` says whether a name's seek
/// was taken out for a pairing not settled yet (a login then keeps it from
/// other seats).
#[derive(Message)]
#[rtype(result = "()")]
pub struct PoolSeeks {
    pub tell: Box<dyn Fn(crate::rules::lobby::PoolNote) + Send>,
    pub pending: PairingPending,
}

/// Whether a name's seek is out for a pairing another node settles.
pub type PairingPending = Box<dyn Fn(&str) -> bool + Send>;

/// Another node leads the lobby now (or this one): it hears every seek here.
#[derive(Message)]
#[rtype(result = "()")]
pub struct Reannounce;

/// From the leader: `name`'s seek of `wanted` is taken out for a pairing
/// whose game another node makes.
#[derive(Message)]
#[rtype(result = "Result<(), ProtocolError>")]
pub struct ReserveSeek {
    pub name: Name,
    pub wanted: crate::rules::lobby::SeekWanted,
}

/// From the leader: the pairing that reserved `name`'s seek of `wanted`
/// came to nothing.
#[derive(Message)]
#[rtype(result = "()")]
pub struct ReleaseSeek {
    pub name: Name,
    pub wanted: crate::rules::lobby::SeekWanted,
}

/// From the leader: the game of `waiting`'s seek of `wanted` here and
/// `partner`'s, made here (`coin`: `waiting` plays black).
#[derive(Message)]
#[rtype(result = "Result<GameId, ProtocolError>")]
pub struct PairSeeks {
    pub waiting: Name,
    pub wanted: crate::rules::lobby::SeekWanted,
    pub partner: crate::rules::lobby::Partner,
    pub coin: bool,
}

/// `name` was paired at `game`, which another node made: the session that
/// holds the name here takes the seat there.
#[derive(Message)]
#[rtype(result = "()")]
pub struct PairedThere {
    pub name: Name,
    pub game: GameId,
}

/// `LIST`: one `GAME` line per game.
#[derive(Message)]
#[rtype(result = "Vec<Event>")]
pub struct ListGames(pub flipline::protocol::ListQuery);

/// `WHO`: one `PLAYER` line per logged-in name.
#[derive(Message)]
#[rtype(result = "Vec<Event>")]
pub struct ListPlayers(pub flipline::protocol::WhoQuery);

/// Tell every connection that the daemon is stopping.
#[derive(Message)]
#[rtype(result = "usize")]
pub struct BroadcastShutdown;

/// A future another node answers.
pub type FarAnswer<T> =
    std::pin::Pin<Box<dyn std::future::Future<Output = Result<T, ProtocolError>> + Send>>;

/// How the lobby of a cluster's node reaches the other nodes for what
/// brings players of two nodes together: challenges across them
/// (`rules::lobby::Across`) and tournaments' games.
pub trait FarLobby: Send + Sync {
    /// Tells `node` of challenge `id`, made here by `from` (logged in as
    /// `pass`) to `to` there on `terms`: answered once that node took it,
    /// or refused as that node refuses it.
    fn challenge(
        &self,
        challenge: (&str, crate::rules::challenges::ChallengeId),
        from: (&Name, AwayPass),
        to: &str,
        terms: &crate::rules::challenges::Terms,
    ) -> FarAnswer<()>;
    /// Tells the other node of a challenge across what was settled here.
    fn note(&self, note: crate::rules::lobby::FarNote);
    /// Has `node` take the challenger of challenge `id` (its number there)
    /// out for a game made here: the pairing it is then settled by.
    fn reserve(&self, node: &str, id: crate::rules::challenges::ChallengeId) -> FarAnswer<u64>;
    /// The game of `pairing`, with `node`'s `player`, was made here, or
    /// not: that node hears.
    fn settle(&self, node: &str, pairing: u64, player: &Name, game: Option<GameId>);
    /// Has `node` take its player `name` out for a game made here (see
    /// `rules::lobby::LobbyCore::take_out`): the pairing it is then
    /// settled by.
    fn take_out(&self, node: &str, name: &Name) -> FarAnswer<u64>;
    /// Tells `name`, on `node`, `text` (whole lines).
    fn tell(&self, node: &str, name: &Name, text: String);
    /// `op` from `member` (if a registered name) for the other nodes'
    /// tournaments: `LIST`'s lines of every other node, or the answer of
    /// the node that holds the tournament named (`ERR 404` if none does).
    fn tourney(
        &self,
        op: flipline::protocol::TourneyCommand,
        member: Option<Name>,
    ) -> FarAnswer<TourneyAnswer>;
}

/// From another node: `op` of its player `member` (if registered) for a
/// tournament here; answered as here, never sent on.
#[derive(Message)]
#[rtype(result = "Result<TourneyAnswer, ProtocolError>")]
pub struct TourneyFromFar {
    pub member: Option<Name>,
    pub op: flipline::protocol::TourneyCommand,
}

/// From the node that makes a game with `name`: it is taken out here.
#[derive(Message)]
#[rtype(result = "Result<(), ProtocolError>")]
pub struct TakeOut {
    pub name: Name,
}

/// The game `name` was taken out for was not made: it is free again.
#[derive(Message)]
#[rtype(result = "()")]
pub struct FreeTakenOut {
    pub name: Name,
}

/// From another node: tell `name`, if online here, `text`.
#[derive(Message)]
#[rtype(result = "()")]
pub struct TellName {
    pub name: Name,
    pub text: String,
}

/// On a cluster's node with a bus: challenges may reach players of other
/// nodes, through `0`.
#[derive(Message)]
#[rtype(result = "()")]
pub struct ReachNodes(pub Arc<dyn FarLobby>);

/// From `node`: its player `from` (logged in there as `pass`) challenges
/// `to` here; `id` is the challenge's number there. The answer is its
/// number here.
#[derive(Message)]
#[rtype(result = "Result<crate::rules::challenges::ChallengeId, ProtocolError>")]
pub struct ChallengedFromFar {
    pub node: String,
    pub id: crate::rules::challenges::ChallengeId,
    pub from: Name,
    pub pass: AwayPass,
    pub to: String,
    pub terms: crate::rules::challenges::Terms,
}

/// From `node`: word about a challenge across.
#[derive(Message)]
#[rtype(result = "()")]
pub struct FarChallengeWord {
    pub node: String,
    pub word: crate::rules::lobby::FarWord,
}

/// From the challenged's node `node`: challenge `id` (this node's number)
/// is accepted there; its challenger is taken out. The answer is who.
#[derive(Message)]
#[rtype(result = "Result<Name, ProtocolError>")]
pub struct ReserveChallenger {
    pub node: String,
    pub id: crate::rules::challenges::ChallengeId,
}

/// The accept of challenge `id`, whose challenger `name` is here, came to
/// nothing on the challenged's node.
#[derive(Message)]
#[rtype(result = "()")]
pub struct ReleaseChallenger {
    pub name: Name,
    pub id: crate::rules::challenges::ChallengeId,
}

/// These nodes are gone: the challenges across with a party there go.
#[derive(Message)]
#[rtype(result = "()")]
pub struct FarNodesGone(pub Vec<String>);
