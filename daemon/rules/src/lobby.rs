//! The lobby core: names online, seeks, the games the daemon holds and who
//! sits at each. It is the one place that knows each player's seat, so the
//! rule "a player sits in at most one game in play" is kept here, where the
//! fact lives: creating, joining, pairing and rematching all go through it.
//!
//! Pure: the caller passes in game numbers and coin tosses and carries out
//! the [`LobbyEffect`]s each call returns, in order. A call that fails has
//! changed nothing. A decision that needs a write first (a new game, a seat
//! filled) comes back held, to be carried out once stored or put back (see
//! `journal`). `R` is whatever the caller keeps per game to reach it (the
//! daemon's route to the game's actor); the core only holds it.

use std::collections::BTreeMap;
use std::num::NonZeroU64;

use flipline::notation::replay_with_passes;
use flipline::protocol::{
    ClockSpec, Event, GameId, NewGame, Opponent, PlayerStatus, RatingRange, SeatChoice, SeekSpec,
    TourneyId,
};
use flipline::{Color, Move, Variant};

use super::challenges::Challenges;
use super::{COLORS, ConnId, Name, Phase, Sitter, bot_name, slot};
use crate::refusal::Refusal;

mod across;
mod caseless;
mod challenging;
mod guest_secret;
mod journal;
mod pooled;
mod taken_out;
mod tourney_games;

pub use across::{AcceptRoute, FarNote, FarWord};
use caseless::{Caseless, NameKey};
pub use challenging::{Across, LobbyChallenge, StartPlan, no_random_start, not_online, start_plan};
pub use guest_secret::GuestSecret;
pub use tourney_games::TourneyTerms;

use journal::Holds;
pub use journal::{Held, Waiting};
pub use pooled::{Partner, PoolNote, PooledSeek};

/// What the shell does for the lobby, in the order given.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LobbyEffect<R> {
    /// Store a new game, then start its actor (and [`LobbyCore::set_route`]).
    Launch(Launch),
    /// Store who sits in a game now.
    StoreSeats {
        /// The game.
        game: GameId,
        /// Black's name.
        black: Option<Name>,
        /// White's name.
        white: Option<Name>,
        /// The secrets of the guests among them, by seat.
        secrets: [Option<GuestSecret>; 2],
    },
    /// Store that an open game closed before anyone joined it.
    StoreCancel(GameId),
    /// Tell a game's table (reached by its route).
    ToGame(R, Order),
    /// Events to one connection (a challenge and its answers).
    Tell(ConnId, Vec<Event>),
}

/// What the lobby tells a game's table; `C` names a connection.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Order<C = ConnId> {
    /// `name` takes the open seat `color` from `conn`: the game begins.
    Fill {
        /// The seat.
        color: Color,
        /// Who.
        name: Name,
        /// Their connection.
        conn: C,
    },
    /// `name`, seated there, is back (or again) on `conn`.
    Attach {
        /// Who.
        name: Name,
        /// Their connection.
        conn: C,
    },
    /// `name` leaves a game that is not in play; `quiet` for a rematch (the
    /// others are leaving too).
    Detach {
        /// Who.
        name: Name,
        /// Whether the others are not told.
        quiet: bool,
    },
    /// `name`'s connection is gone.
    Disconnected {
        /// Who.
        name: Name,
    },
    /// The open game closes: nobody joined.
    Cancel,
    /// `name` offers a rematch.
    OfferRematch {
        /// Who.
        name: Name,
    },
    /// The rematch began as `game`: those still at this table (spectators
    /// above all, whom nothing else tells) hear its number.
    Rematched {
        /// The new game.
        game: GameId,
    },
}

impl Order {
    /// The same order with its connection named another way.
    pub fn map_conn<D>(self, f: impl FnOnce(ConnId) -> D) -> Order<D> {
        match self {
            Order::Fill { color, name, conn } => Order::Fill {
                color,
                name,
                conn: f(conn),
            },
            Order::Attach { name, conn } => Order::Attach {
                name,
                conn: f(conn),
            },
            Order::Detach { name, quiet } => Order::Detach { name, quiet },
            Order::Disconnected { name } => Order::Disconnected { name },
            Order::Cancel => Order::Cancel,
            Order::OfferRematch { name } => Order::OfferRematch { name },
            Order::Rematched { game } => Order::Rematched { game },
        }
    }
}

/// A game to start.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Launch {
    /// Its number.
    pub id: GameId,
    /// Its variant.
    pub variant: Variant,
    /// Its clock.
    pub clock: Option<ClockSpec>,
    /// Black's seat, then white's.
    pub seats: [Sitter<ConnId>; 2],
    /// The secrets of the guests among them, by seat, to store with them.
    pub secrets: [Option<GuestSecret>; 2],
    /// Moves already played, every pass written out.
    pub start: Vec<Move>,
    /// Whether it counts for the ratings.
    pub rated: bool,
    /// The tournament and round it is made for, if any.
    pub tourney: Option<(TourneyId, u32)>,
    /// The connection whose worker thread the game should run on (its
    /// player's messages then stay on one thread); `None`: any.
    pub near: Option<ConnId>,
    /// The connections to tell their seat before the game begins: its
    /// players but the one whose command made it (who learns it from the
    /// reply), so that none of them reads `START` before it knows its seat.
    pub seated: Vec<ConnId>,
}

/// A call's answer and what the shell must do for it.
#[derive(Debug)]
pub struct Done<T, R> {
    /// The answer to the command.
    pub reply: T,
    /// What to carry out, in order.
    pub effects: Vec<LobbyEffect<R>>,
    /// Set when the decision waits for its write (a new game, a seat filled):
    /// the shell commits it, then carries out the effects and answers, and
    /// says how it went ([`LobbyCore::stored`], [`LobbyCore::not_stored`]).
    pub held: Option<Held>,
}

/// The answer to `SEEK`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sought {
    /// Paired at once: the new game.
    Paired(GameId),
    /// Waiting for an opponent.
    Seeking,
}

/// The answer to `LEAVE`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Left {
    /// Left the seat in this game (open or over).
    Game(GameId),
    /// No seat, but the connection watches games: it stops.
    StopWatching,
    /// The seek was withdrawn.
    SeekWithdrawn,
}

/// The answer to `REMATCH`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rematched {
    /// Not everyone has asked yet.
    Waiting,
    /// Everyone has: the new game.
    Game(GameId),
}

/// Who sits in a seat of a game the lobby holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Occupant {
    /// The engine at a level.
    Bot(u8),
    /// A person.
    Person(Name),
}

impl Occupant {
    /// The name `LIST` and the store show.
    pub fn name(&self) -> Name {
        match self {
            Occupant::Bot(level) => bot_name(*level),
            Occupant::Person(name) => Name::clone(name),
        }
    }

    fn person(&self) -> Option<&Name> {
        match self {
            Occupant::Person(name) => Some(name),
            Occupant::Bot(_) => None,
        }
    }
}

/// A game as the lobby holds it.
#[derive(Clone, Debug)]
pub struct Entry<R> {
    /// How to reach its actor, once started.
    pub route: Option<R>,
    /// Its variant.
    pub variant: Variant,
    /// Its clock, boxed: most games have none, and the lobby holds every game.
    pub clock: Option<Box<ClockSpec>>,
    /// Black's seat, then white's; `None` while open.
    pub seats: [Option<Occupant>; 2],
    /// Where it stands.
    pub phase: Phase,
    /// Whether it counts for the ratings.
    pub rated: bool,
    /// Who has asked for a rematch (by seat).
    votes: [bool; 2],
    /// The rematch it started: a finished game starts at most one. (Game
    /// numbers start at 1.)
    rematch: Option<NonZeroU64>,
    /// Whether a tournament made it (its next round follows: no rematch).
    tourney: bool,
}

impl<R> Entry<R> {
    fn persons(&self) -> impl Iterator<Item = &Name> {
        self.seats.iter().flatten().filter_map(Occupant::person)
    }

    fn colors_of(&self, name: &str) -> Vec<Color> {
        COLORS
            .into_iter()
            .filter(|&c| matches!(&self.seats[slot(c)], Some(Occupant::Person(n)) if n.eq_ignore_ascii_case(name)))
            .collect()
    }

    /// Open or in play, and started: a game held until its creation is
    /// stored has no actor yet, and its number reaches nobody before that.
    fn in_play_or_open(&self) -> bool {
        self.phase != Phase::Over && self.route.is_some()
    }

    /// The rematch this game started, if any.
    pub fn rematch(&self) -> Option<GameId> {
        self.rematch.map(NonZeroU64::get)
    }
}

/// A name the lobby knows: logged in, or seated in a game (or both). Kept
/// for every player, so kept small: connections and games are numbered
/// from 1.
#[derive(Clone, Copy, Debug, Default)]
struct Person {
    /// The connection it is logged in on.
    conn: Option<NonZeroU64>,
    /// The game it sits at: open, in play, or over and not left yet.
    seat: Option<NonZeroU64>,
    /// Whether its connection is at that game's table (false after a
    /// reconnect, until `JOIN`).
    attached: bool,
    /// A game in play that another node of a cluster owns, where its
    /// connection here sits (`JOIN` of it from here): it holds the name as
    /// a seat here does, so that nobody sits in two games in play.
    away: Option<NonZeroU64>,
    /// Whether it logged in with a password (a registered name): only
    /// those play rated games.
    member: bool,
    /// What `WHO` shows of it beyond its status.
    marks: Marks,
    /// A guest's secret, which alone takes the name back while it is held
    /// without a connection; `None` for a registered name (its password
    /// does) and for a guest's seat recovered at a start (the secret is not
    /// stored).
    secret: Option<GuestSecret>,
    /// Whether its connection logged in as the holder of `secret`: false
    /// only for a name someone took while a dead node's game that seats it
    /// was on its way here (see [`LobbyCore::recover`]); that connection
    /// may not take the seat.
    disowned: bool,
    /// Its seek was taken out for a pairing whose game another node of a
    /// cluster makes: it takes no other seat until it is seated there or
    /// the pairing comes to nothing (see `pooled`).
    pairing: bool,
}

/// What `WHO` shows of a registered name: its othello rating (rounded)
/// and whether it is marked a program's. Read from the store at login and
/// kept up to date here, so that `WHO` never waits for the disk.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Marks {
    /// The othello rating, rounded, once rated.
    pub rating: Option<i16>,
    /// Marked a program's (`ACCOUNT bot`).
    pub bot: bool,
}

/// A guest's `LOGIN`, as the lobby hears it.
#[derive(Clone, Copy, Debug)]
pub struct GuestLogin {
    /// The secret shown (`LOGIN ann secret TOKEN`), if any and well formed.
    pub shown: Option<GuestSecret>,
    /// A new secret, freshly drawn, for a guest that takes a free name.
    pub fresh: GuestSecret,
}

/// How a name sitting at a game on another node logged in here: what that
/// node needs to seat it (nodes trust each other's password checks).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AwayPass {
    /// A guest's secret; `None` for a registered name.
    pub secret: Option<GuestSecret>,
    /// Whether it logged in with a password.
    pub member: bool,
    /// What `WHO` shows of it.
    pub marks: Marks,
}

/// A login the lobby let through.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoggedIn {
    /// The name as the lobby spells it: the first spelling of those that
    /// differ only in case.
    pub name: Name,
    /// A guest's secret, to give the client.
    pub secret: Option<GuestSecret>,
    /// The game in play whose seat the name kept through a disconnect or a
    /// restart, not taken back yet: the login says so, so that the player
    /// knows what `JOIN` takes it back.
    pub kept_seat: Option<GameId>,
}

#[derive(Clone, Debug)]
struct Seek {
    name: Name,
    variant: Variant,
    clock: Option<ClockSpec>,
    /// Rated: with the seeker's rating in the variant (rounded; a new
    /// player's 1500 before any rated game) and whom it pairs with.
    rated: Option<RatedSeek>,
}

/// What a rated seek pairs by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RatedSeek {
    /// The seeker's rating, rounded.
    pub rating: i32,
    /// The opponents' ratings it takes, if it limits them.
    pub range: Option<RatingRange>,
}

impl Seek {
    /// What it seeks.
    fn wanted(&self) -> SeekWanted {
        SeekWanted {
            variant: self.variant,
            clock: self.clock,
            rated: self.rated,
        }
    }

    /// Whether this seek and `other` make a game (see
    /// [`SeekWanted::pairs_with`]).
    fn matches(&self, other: &Seek) -> bool {
        self.wanted().pairs_with(&other.wanted())
    }
}

/// What a game is played for: the variant, the clock, whether it is rated
/// and the moves it starts from.
#[derive(Clone, Debug)]
struct GameTerms {
    variant: Variant,
    clock: Option<ClockSpec>,
    rated: bool,
    start: Vec<Move>,
    /// The tournament and round it is made for.
    tourney: Option<(TourneyId, u32)>,
}

/// The lobby (see the module docs).
#[derive(Debug)]
pub struct LobbyCore<R> {
    people: hashbrown::HashMap<NameKey, Person>,
    seeks: Vec<Seek>,
    games: BTreeMap<GameId, Entry<R>>,
    holds: Holds<R>,
    /// The challenges open.
    challenges: Challenges<Across>,
    /// Challenges made here to a player of another node, taken out while
    /// that node makes their game (see `across`).
    accepting: Vec<LobbyChallenge>,
    /// What the other nodes of challenges across are to hear.
    far_notes: Vec<FarNote>,
    /// Challenges of other nodes withdrawn before they arrived, by node
    /// and number there (bounded).
    withdrawn_early: std::collections::VecDeque<(String, crate::challenges::ChallengeId)>,
    /// A pairing was put back, and its seek may wait beside another for the
    /// same game until [`LobbyCore::pair_waiting`].
    unpaired: bool,
    /// The cluster's leader pairs the seeks (see `pooled`).
    pooled: bool,
    /// Names whose seek changed since the leader last heard.
    pool_dirty: Vec<Name>,
}

impl<R> Default for LobbyCore<R> {
    fn default() -> LobbyCore<R> {
        LobbyCore {
            people: hashbrown::HashMap::new(),
            seeks: Vec::new(),
            games: BTreeMap::new(),
            holds: Holds::default(),
            challenges: Challenges::new(),
            accepting: Vec::new(),
            far_notes: Vec::new(),
            withdrawn_early: std::collections::VecDeque::new(),
            unpaired: false,
            pooled: false,
            pool_dirty: Vec::new(),
        }
    }
}

/// What a `SEEK` asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SeekWanted {
    /// The game.
    pub variant: Variant,
    /// The clock.
    pub clock: Option<ClockSpec>,
    /// Rated, with what it pairs by; `None` casual.
    pub rated: Option<RatedSeek>,
}

/// How long after a failed write seeks left side by side are paired
/// ([`LobbyCore::pair_waiting`]): once the store may work again, and no
/// busier than that while it fails.
pub const PAIR_RETRY: std::time::Duration = std::time::Duration::from_secs(1);

/// What a game the store holds as in play is at a restart: to resume, or
/// already ended by its stored moves (its end was not stored before the
/// daemon stopped), with the result its `OVER` gives. `Err` if its moves do
/// not replay.
pub fn stored_game_state(
    variant: Variant,
    moves: &[Move],
) -> Result<Option<flipline::protocol::GameResult>, flipline::notation::ParseError> {
    let (position, _) = replay_with_passes(variant, moves)?;
    if !position.is_over() {
        return Ok(None);
    }
    let score = position.score();
    Ok(Some(flipline::protocol::GameResult {
        winner: score.winner,
        black: score.black,
        white: score.white,
        reason: flipline::protocol::EndReason::Normal,
    }))
}

/// A `from MOVES` start, as `NEW` and `CHALLENGE` take one: legal, passes
/// written out, not the end of the game.
pub fn checked_start(variant: Variant, moves: &[Move]) -> Result<Vec<Move>, Refusal> {
    let (position, start) =
        replay_with_passes(variant, moves).map_err(|e| Refusal::BadStart(e.to_string()))?;
    if position.is_over() {
        return Err(Refusal::StartEnds);
    }
    Ok(start)
}

impl SeekWanted {
    /// What `spec` asks for; a rated seek pairs by `rating` (see
    /// [`crate::ratings::seek_rating`]), which a casual one ignores.
    pub fn asked(spec: &SeekSpec, rating: i32) -> SeekWanted {
        SeekWanted {
            variant: spec.variant,
            clock: spec.clock,
            rated: spec.rated.then_some(RatedSeek {
                rating,
                range: spec.range,
            }),
        }
    }

    /// Whether this seek and `other` make a game: the same game and clock,
    /// both rated or neither, and each rating within the other's range.
    pub fn pairs_with(&self, other: &SeekWanted) -> bool {
        let rated = match (self.rated, other.rated) {
            (None, None) => true,
            (Some(a), Some(b)) => {
                a.range.is_none_or(|r| r.holds(b.rating))
                    && b.range.is_none_or(|r| r.holds(a.rating))
            }
            _ => false,
        };
        self.variant == other.variant && self.clock == other.clock && rated
    }

    /// A casual game of `variant` with `clock`.
    pub fn casual(variant: Variant, clock: Option<ClockSpec>) -> SeekWanted {
        SeekWanted {
            variant,
            clock,
            rated: None,
        }
    }
}

fn done<T, R>(reply: T, effects: Vec<LobbyEffect<R>>) -> Result<Done<T, R>, Refusal> {
    Ok(Done {
        reply,
        effects,
        held: None,
    })
}

impl<R: Clone> LobbyCore<R> {
    /// An empty lobby.
    pub fn new() -> LobbyCore<R> {
        LobbyCore::default()
    }

    /// The connection `name` is logged in on.
    pub fn holder(&self, name: &str) -> Option<ConnId> {
        self.people
            .get(&Caseless(name))
            .and_then(|p| p.conn)
            .map(NonZeroU64::get)
    }

    /// The game `name` sits at.
    pub fn seat_of(&self, name: &str) -> Option<GameId> {
        self.people
            .get(&Caseless(name))
            .and_then(|p| p.seat)
            .map(NonZeroU64::get)
    }

    /// The game in play on another node where `name` sits from here.
    pub fn away_of(&self, name: &str) -> Option<GameId> {
        self.people
            .get(&Caseless(name))
            .and_then(|p| p.away)
            .map(NonZeroU64::get)
    }

    /// A game the lobby holds.
    pub fn game(&self, game: GameId) -> Option<&Entry<R>> {
        self.games.get(&game)
    }

    /// Every game the lobby holds, by number.
    pub fn games(&self) -> impl Iterator<Item = (GameId, &Entry<R>)> {
        self.games_from(0)
    }

    /// The games numbered `from` on, by number.
    pub fn games_from(&self, from: GameId) -> impl Iterator<Item = (GameId, &Entry<R>)> {
        self.games.range(from..).map(|(&id, entry)| (id, entry))
    }

    /// How many games the lobby holds.
    pub fn game_count(&self) -> usize {
        self.games.len()
    }

    /// Where `game`'s actor is, once started.
    pub fn route(&self, game: GameId) -> Option<&R> {
        self.games.get(&game).and_then(|e| e.route.as_ref())
    }

    /// The game's actor is running: here is how to reach it.
    pub fn set_route(&mut self, game: GameId, route: R) {
        if let Some(entry) = self.game_mut(game) {
            entry.route = Some(route);
        }
    }

    /// `LOGIN name` on `conn`, once the accounts have let it through: a
    /// registered name with its password (`guest` is `None`), or a guest.
    /// Refused while another connection holds the name, in any case; a name
    /// held for a guest's seat after a disconnect is given back only to the
    /// guest's secret. The answer is the name as the lobby spells it (the
    /// first spelling) and, for a guest, its secret: the one it had, when it
    /// resumes, or `guest.fresh`.
    pub fn login(
        &mut self,
        name: &Name,
        conn: ConnId,
        guest: Option<GuestLogin>,
    ) -> Result<LoggedIn, Refusal> {
        let Some(conn) = NonZeroU64::new(conn) else {
            return Err(Refusal::NoSuchConnection);
        };
        let known = self.people.get_key_value(&Caseless(name));
        let spelling = known.map_or_else(|| Name::clone(name), |(key, _)| Name::clone(&key.0));
        let person = known.map(|(_, person)| *person).unwrap_or_default();
        match person.conn {
            Some(holder) if holder != conn => {
                return Err(Refusal::NameInUse(Name::from(spelling)));
            }
            Some(_) => {}
            None => check_hold(&spelling, &person, guest.as_ref())?,
        }
        // A guest taking a free name keeps the secret it shows, if any: on a
        // cluster its seat may be stored with that secret and come to this
        // daemon a moment later (a dead node's game taken over).
        let secret = guest.map(|g| person.secret.or(g.shown).unwrap_or(g.fresh));
        let kept_seat = self.kept_seat(&person);
        let person = self.person_mut(&spelling);
        person.conn = Some(conn);
        person.secret = secret;
        person.member = guest.is_none();
        person.disowned = false;
        Ok(LoggedIn {
            name: spelling,
            secret,
            kept_seat,
        })
    }

    /// The game in play where `person` has a seat its connection is not at.
    fn kept_seat(&self, person: &Person) -> Option<GameId> {
        let game = person
            .seat
            .map(NonZeroU64::get)
            .filter(|_| !person.attached)?;
        let playing = self
            .games
            .get(&game)
            .is_some_and(|e| e.phase == Phase::Playing);
        playing.then_some(game)
    }

    /// `conn`, logged in as `name`, is gone: its seek goes, an open game it
    /// made closes, a game in play keeps its seat (the table starts the grace
    /// period), a finished one is left.
    pub fn gone(&mut self, conn: ConnId, name: &Name) -> Vec<LobbyEffect<R>> {
        let mut effects = Vec::new();
        if self.people.get(&Caseless(name)).map(|p| p.conn) != Some(NonZeroU64::new(conn)) {
            return effects;
        }
        let Some(person) = self.existing_person_mut(name) else {
            return effects;
        };
        person.conn = None;
        person.attached = false;
        // The seat away is the owner's to keep for the grace period.
        person.away = None;
        person.pairing = false;
        let seat = person.seat.map(NonZeroU64::get);
        self.withdraw_seek(name);
        self.drop_challenges(name, &mut effects);
        if let Some(game) = seat {
            match self.games.get(&game).map(|e| e.phase) {
                Some(Phase::Open) => self.cancel(game, &mut effects),
                Some(Phase::Playing) => {
                    let order = Order::Disconnected {
                        name: Name::clone(name),
                    };
                    self.tell(game, order, &mut effects);
                }
                Some(Phase::Over) => {
                    self.unseat(name, game);
                    let order = Order::Disconnected {
                        name: Name::clone(name),
                    };
                    self.tell(game, order, &mut effects);
                }
                None => self.unseat(name, game),
            }
        }
        self.tidy(name);
        effects
    }

    /// What [`LobbyCore::seek`] decides.
    fn decide_seek(
        &mut self,
        name: &Name,
        wanted: SeekWanted,
        next_id: impl FnOnce() -> GameId,
        coin: bool,
    ) -> Result<Done<Sought, R>, Refusal> {
        let conn = self.logged_in(name)?;
        self.check_free(name)?;
        if wanted.rated.is_some() && !self.is_member(name) {
            return Err(Refusal::RatedForMembers);
        }
        let mut effects = Vec::new();
        self.vacate(name, &mut effects);
        self.withdraw_seek(name);
        let seek = Seek {
            name: Name::clone(name),
            variant: wanted.variant,
            clock: wanted.clock,
            rated: wanted.rated,
        };
        // Pooled: the leader pairs it, with any node's seek.
        let found = (!self.pooled)
            .then(|| self.seeks.iter().position(|s| s.matches(&seek)))
            .flatten();
        let Some(index) = found else {
            self.push_seek(seek);
            return done(Sought::Seeking, effects);
        };
        let Some(waiting) = self.remove_seek(index) else {
            return done(Sought::Seeking, effects);
        };
        let game = self.pair(
            waiting,
            Name::clone(name),
            conn,
            next_id(),
            coin,
            &mut effects,
        );
        done(Sought::Paired(game), effects)
    }

    /// Starts game `game` between the seek `waiting` and `other` (colours by
    /// `coin`: true gives the waiting one black), on the waiting one's
    /// worker; `asker` learns its seat from the reply, anyone else is told.
    fn pair(
        &mut self,
        waiting: Seek,
        other: Name,
        asker: ConnId,
        game: GameId,
        coin: bool,
        effects: &mut Vec<LobbyEffect<R>>,
    ) -> GameId {
        let waiting_conn = self.holder(&waiting.name);
        let other_conn = self.holder(&other);
        let first = Sitter::Person(waiting.name, waiting_conn);
        let second = Sitter::Person(other, other_conn);
        let seats = if coin {
            [first, second]
        } else {
            [second, first]
        };
        let origin = Origin {
            asker: Some(asker),
            near: waiting_conn,
        };
        let terms = GameTerms {
            variant: waiting.variant,
            clock: waiting.clock,
            rated: waiting.rated.is_some(),
            start: Vec::new(),
            tourney: None,
        };
        self.launch(game, terms, seats, origin, effects);
        game
    }

    /// What [`LobbyCore::new_game`] decides.
    fn decide_new_game(
        &mut self,
        name: &Name,
        spec: &NewGame,
        next_id: impl FnOnce() -> GameId,
        coin: bool,
    ) -> Result<Done<GameId, R>, Refusal> {
        let conn = self.logged_in(name)?;
        self.check_free(name)?;
        let start = checked_start(spec.variant, &spec.from)?;
        let mut effects = Vec::new();
        self.vacate(name, &mut effects);
        self.withdraw_seek(name);
        let creator = Sitter::Person(Name::clone(name), Some(conn));
        let other = match spec.opponent {
            Opponent::Open => Sitter::Open,
            Opponent::Bot(level) => Sitter::Bot(level),
            Opponent::Hotseat => creator.clone(),
        };
        let black = match spec.seat {
            SeatChoice::Black => true,
            SeatChoice::White => false,
            SeatChoice::Random => coin,
        };
        let seats = if black {
            [creator, other]
        } else {
            [other, creator]
        };
        let game = next_id();
        let terms = GameTerms {
            variant: spec.variant,
            clock: spec.clock,
            rated: false,
            start,
            tourney: None,
        };
        self.launch(game, terms, seats, Origin::from(conn), &mut effects);
        done(game, effects)
    }

    /// What [`LobbyCore::join`] decides.
    fn decide_join(
        &mut self,
        name: &Name,
        game: GameId,
    ) -> Result<Done<(GameId, Color), R>, Refusal> {
        let conn = self.logged_in(name)?;
        let entry = self.games.get(&game).ok_or(Refusal::NoGame(game))?;
        let mut effects = Vec::new();
        if let Some(&color) = entry.colors_of(name).first() {
            if self.people.get(&Caseless(name)).is_some_and(|p| p.disowned) {
                return Err(Refusal::HeldForGuest {
                    name: Name::clone(name),
                    wrong_secret: true,
                });
            }
            if self.seat_of(name) != Some(game) {
                self.check_free(name)?;
                self.vacate(name, &mut effects);
            }
            self.withdraw_seek(name);
            self.seat(name, game, true);
            let order = Order::Attach {
                name: Name::clone(name),
                conn,
            };
            self.tell(game, order, &mut effects);
            return done((game, color), effects);
        }
        let free = COLORS
            .into_iter()
            .find(|&c| entry.seats[slot(c)].is_none())
            .filter(|_| entry.phase == Phase::Open)
            .ok_or(Refusal::NoFreeSeat(game))?;
        self.check_free(name)?;
        self.vacate(name, &mut effects);
        self.withdraw_seek(name);
        let Some(entry) = self.game_mut(game) else {
            return Err(Refusal::NoFreeSeat(game));
        };
        entry.seats[slot(free)] = Some(Occupant::Person(Name::clone(name)));
        entry.phase = Phase::Playing;
        let seats = entry.seats.clone();
        let [black, white] = seats.clone().map(|s| s.map(|o| o.name()));
        let secrets = seats.map(|s| self.secret_of(s.as_ref().and_then(Occupant::person)));
        self.seat(name, game, true);
        effects.push(LobbyEffect::StoreSeats {
            game,
            black,
            white,
            secrets,
        });
        let order = Order::Fill {
            color: free,
            name: Name::clone(name),
            conn,
        };
        self.tell(game, order, &mut effects);
        done((game, free), effects)
    }

    /// What [`LobbyCore::sit_away`] decides.
    fn decide_sit_away(&mut self, name: &Name, game: GameId) -> Result<Done<AwayPass, R>, Refusal> {
        self.logged_in(name)?;
        let mut effects = Vec::new();
        if self.away_of(name) != Some(game) {
            self.check_free(name)?;
            self.vacate(name, &mut effects);
            self.withdraw_seek(name);
        }
        let Some(person) = self.existing_person_mut(name) else {
            return Err(Refusal::NotLoggedIn);
        };
        person.away = NonZeroU64::new(game);
        let pass = AwayPass {
            secret: person.secret,
            member: person.member,
            marks: person.marks,
        };
        done(pass, effects)
    }

    /// What [`LobbyCore::leave`] decides.
    fn decide_leave(&mut self, name: &Name, watching: bool) -> Result<Done<Left, R>, Refusal> {
        let mut effects = Vec::new();
        if let Some(game) = self.away_of(name) {
            return Err(Refusal::InPlay {
                game,
                attached: true,
            });
        }
        if let Some(game) = self.seat_of(name) {
            self.check_free(name)?;
            self.vacate(name, &mut effects);
            self.tidy(name);
            return done(Left::Game(game), effects);
        }
        if watching {
            return done(Left::StopWatching, effects);
        }
        if self.withdraw_seek(name) {
            return done(Left::SeekWithdrawn, effects);
        }
        Err(Refusal::NothingToLeave)
    }

    /// Pairs the first two seeks waiting for the same game, if two are: a
    /// pairing put back brings back the seek it took, which may then wait
    /// beside one that came meanwhile. Held like any pairing; nobody waits
    /// for its answer, so both players are told their seat
    /// ([`Launch::seated`]). `None` if no two seeks match.
    pub fn pair_waiting(
        &mut self,
        next_id: impl FnOnce() -> GameId,
        coin: bool,
    ) -> Option<Done<GameId, R>> {
        let pair = self.matching_seeks().filter(|_| !self.pooled);
        self.unpaired = false;
        let (first, second) = pair?;
        let done = self.transact(|core| core.decide_pair(first, second, next_id, coin));
        self.unpaired = self.matching_seeks().is_some();
        done.ok()
    }

    /// The first two seeks for the same game, by position.
    fn matching_seeks(&self) -> Option<(usize, usize)> {
        self.seeks.iter().enumerate().find_map(|(i, seek)| {
            (self.seeks.iter().skip(i + 1))
                .position(|o| o.matches(seek))
                .map(|j| (i, i + 1 + j))
        })
    }

    /// Pairs the seeks at `first` and `second` (`first` the older: it gets
    /// black if `coin`).
    fn decide_pair(
        &mut self,
        first: usize,
        second: usize,
        next_id: impl FnOnce() -> GameId,
        coin: bool,
    ) -> Result<Done<GameId, R>, Refusal> {
        let later = self.remove_seek(second).ok_or(Refusal::SeekGone)?;
        let older = self.remove_seek(first).ok_or(Refusal::SeekGone)?;
        let mut effects = Vec::new();
        // Connections are numbered from 1: nobody is the asker, and both
        // are told their seat.
        let game = self.pair(older, later.name, 0, next_id(), coin, &mut effects);
        done(game, effects)
    }

    /// What [`LobbyCore::rematch`] decides.
    fn decide_rematch(
        &mut self,
        name: &Name,
        next_id: impl FnOnce() -> GameId,
    ) -> Result<Done<Rematched, R>, Refusal> {
        let conn = self.logged_in(name)?;
        let game = self.seat_of(name).ok_or(Refusal::NotInGame)?;
        let entry = self.games.get(&game).ok_or(Refusal::NotInGame)?;
        if entry.phase != Phase::Over {
            return Err(Refusal::NotOver(game));
        }
        if entry.tourney {
            return Err(Refusal::TourneyGameRematch(game));
        }
        if let Some(next) = entry.rematch {
            let next = next.get();
            return Err(Refusal::Rematched { game, next });
        }
        let present = |other: &Name| {
            self.people
                .get(&Caseless(other))
                .is_some_and(|p| p.conn.is_some() && p.seat == NonZeroU64::new(game))
        };
        let opponent_left = entry.seats.iter().any(|s| match s {
            None => true,
            Some(Occupant::Bot(_)) => false,
            Some(Occupant::Person(other)) => !present(other),
        });
        if opponent_left {
            return Err(Refusal::OpponentLeft);
        }
        let colors = entry.colors_of(name);
        let Some(entry) = self.game_mut(game) else {
            return Err(Refusal::NotInGame);
        };
        for color in colors {
            entry.votes[slot(color)] = true;
        }
        let agreed = COLORS.into_iter().all(|c| {
            entry.votes[slot(c)] || matches!(entry.seats[slot(c)], Some(Occupant::Bot(_)))
        });
        if !agreed {
            let order = Order::OfferRematch {
                name: Name::clone(name),
            };
            let mut effects = Vec::new();
            self.tell(game, order, &mut effects);
            return done(Rematched::Waiting, effects);
        }
        let next = next_id();
        entry.rematch = NonZeroU64::new(next);
        entry.votes = [false; 2];
        let terms = GameTerms {
            variant: entry.variant,
            clock: entry.clock.as_deref().copied(),
            rated: entry.rated,
            start: Vec::new(),
            tourney: None,
        };
        let [black, white] = entry.seats.clone();
        let persons: Vec<Name> = entry.persons().cloned().collect();
        let mut effects = Vec::new();
        let sitter = |o: Option<Occupant>| match o {
            Some(Occupant::Bot(level)) => Sitter::Bot(level),
            Some(Occupant::Person(n)) => {
                let conn = self.holder(&n);
                Sitter::Person(n, conn)
            }
            None => Sitter::Open,
        };
        let seats = [sitter(white), sitter(black)];
        // Before the players leave: a table they all left may stop.
        self.tell(game, Order::Rematched { game: next }, &mut effects);
        for person in dedup(persons) {
            let order = Order::Detach {
                name: Name::clone(&person),
                quiet: true,
            };
            self.tell(game, order, &mut effects);
            self.unseat(&person, game);
        }
        self.launch(next, terms, seats, Origin::from(conn), &mut effects);
        done(Rematched::Game(next), effects)
    }

    /// The game ended (its table said so, before anyone heard `OVER`).
    pub fn ended(&mut self, game: GameId) {
        if let Some(entry) = self.game_mut(game) {
            entry.phase = Phase::Over;
        }
    }

    /// The game's actor stopped: the lobby forgets it and whoever sat there.
    pub fn closed(&mut self, game: GameId) {
        if let Some(entry) = self.forget(game) {
            for name in entry.persons() {
                self.tidy(name);
            }
        }
    }

    /// Removes a game, and the seat there of whoever sat at it.
    fn forget(&mut self, game: GameId) -> Option<Entry<R>> {
        let entry = self.remove_game(game)?;
        for name in entry.persons() {
            if self.seat_of(name) == Some(game)
                && let Some(person) = self.existing_person_mut(name)
            {
                person.seat = None;
            }
        }
        Some(entry)
    }

    /// A game the store holds as in play at the last stop: its people sit there,
    /// not connected, the guests among them held for their stored secrets.
    /// `false` if it cannot be held (a number already taken).
    pub fn recover(
        &mut self,
        game: GameId,
        variant: Variant,
        clock: Option<ClockSpec>,
        seats: [Sitter<ConnId>; 2],
        secrets: [Option<GuestSecret>; 2],
        rated: bool,
    ) -> bool {
        if self.games.contains_key(&game) {
            return false;
        }
        let seats = seats.map(occupant);
        let entry = Entry {
            route: None,
            variant,
            clock: clock.map(Box::new),
            phase: Phase::Playing,
            rated,
            votes: [false; 2],
            rematch: None,
            // Said by the tournaments once they are read back.
            tourney: false,
            seats,
        };
        let persons: Vec<(Name, Option<GuestSecret>)> = (entry.seats.iter().zip(secrets))
            .filter_map(|(seat, secret)| Some((Name::clone(seat.as_ref()?.person()?), secret)))
            .collect();
        self.insert_game(game, entry);
        for (name, secret) in persons {
            // A name seated in two recovered games (data from before this
            // rule) keeps the first; the other ends by abandon. A name
            // online under another identity (a dead node's game taken over
            // while someone else holds the name here) is seated for the
            // stored secret, which that connection did not show: it may not
            // take the seat, and once it goes only the secret takes the
            // name back.
            if self.seat_of(&name).is_none() {
                let disowned = self.online_as_another(&name, secret.as_ref());
                self.seat(&name, game, false);
                if let Some(person) = self.existing_person_mut(&name) {
                    person.secret = secret.or(person.secret);
                    person.disowned = disowned;
                }
            }
        }
        true
    }

    /// Whether `name` is logged in under another identity than a stored
    /// seat's `secret` (another guest secret, a guest for a registered
    /// seat, or a registered login for a guest's seat).
    fn online_as_another(&self, name: &str, secret: Option<&GuestSecret>) -> bool {
        let Some(person) = self.people.get(&Caseless(name)) else {
            return false;
        };
        if person.conn.is_none() {
            return false;
        }
        match (person.secret.as_ref(), secret) {
            (Some(held), Some(_)) => !held.matches(secret),
            (None, None) => false,
            _ => true,
        }
    }

    /// What `WHO` says of each name logged in, by name. A new game held for
    /// its write is not shown yet (its number reaches nobody before it is
    /// stored); a seat held for its write is (the game's number is known).
    pub fn who(&self) -> Vec<(Name, PlayerStatus, Marks)> {
        let mut names: Vec<(Name, PlayerStatus, Marks)> = self
            .people
            .iter()
            .filter(|(_, p)| p.conn.is_some())
            .map(|(NameKey(name), p)| {
                let here = p
                    .seat
                    .map(NonZeroU64::get)
                    .filter(|g| self.games.get(g).is_some_and(Entry::in_play_or_open));
                let playing = here.or(p.away.map(NonZeroU64::get));
                let status = match playing {
                    Some(game) => PlayerStatus::Playing(game),
                    None if self.seeks.iter().any(|s| s.name.eq_ignore_ascii_case(name)) => {
                        PlayerStatus::Seeking
                    }
                    None => PlayerStatus::Idle,
                };
                (Name::clone(name), status, p.marks)
            })
            .collect();
        names.sort_by(|a, b| a.0.cmp(&b.0));
        names
    }

    /// What the store says of `name`, logged in: its rating and its mark.
    /// Not journalled: it is not part of any decision.
    pub fn set_marks(&mut self, name: &str, marks: Marks) {
        if let Some(person) = self.people.get_mut(&Caseless(name)) {
            person.marks = marks;
        }
    }

    /// `name`'s othello rating changed (a rated game ended).
    pub fn rated(&mut self, name: &str, rating: i16) {
        if let Some(person) = self.people.get_mut(&Caseless(name)) {
            person.marks.rating = Some(rating);
        }
    }

    /// `name` is marked a program's (`ACCOUNT bot`).
    pub fn marked_bot(&mut self, name: &str) {
        if let Some(person) = self.people.get_mut(&Caseless(name)) {
            person.marks.bot = true;
        }
    }

    fn logged_in(&self, name: &str) -> Result<ConnId, Refusal> {
        self.holder(name).ok_or(Refusal::NotLoggedIn)
    }

    /// Refuses a new seat to someone seated in a game in play, here or on
    /// another node.
    fn check_free(&self, name: &str) -> Result<(), Refusal> {
        if self.people.get(&Caseless(name)).is_some_and(|p| p.pairing) {
            return Err(Refusal::BeingPaired);
        }
        if let Some(game) = self.away_of(name) {
            return Err(Refusal::InPlay {
                game,
                attached: true,
            });
        }
        match self.seat_of(name) {
            Some(game)
                if self
                    .games
                    .get(&game)
                    .is_some_and(|e| e.phase == Phase::Playing) =>
            {
                let attached = self.people.get(&Caseless(name)).is_some_and(|p| p.attached);
                Err(Refusal::InPlay { game, attached })
            }
            _ => Ok(()),
        }
    }

    /// Leaves `name`'s seat (checked not in play): an open game closes, a
    /// finished one is left.
    fn vacate(&mut self, name: &Name, effects: &mut Vec<LobbyEffect<R>>) {
        let Some(game) = self.seat_of(name) else {
            return;
        };
        match self.games.get(&game).map(|e| e.phase) {
            Some(Phase::Open) => self.cancel(game, effects),
            Some(Phase::Over) => {
                let order = Order::Detach {
                    name: Name::clone(name),
                    quiet: false,
                };
                self.tell(game, order, effects);
                self.unseat(name, game);
            }
            Some(Phase::Playing) | None => self.unseat(name, game),
        }
    }

    /// An open game closes before anyone joined it.
    fn cancel(&mut self, game: GameId, effects: &mut Vec<LobbyEffect<R>>) {
        let Some(entry) = self.forget(game) else {
            return;
        };
        effects.push(LobbyEffect::StoreCancel(game));
        if let Some(route) = entry.route {
            effects.push(LobbyEffect::ToGame(route, Order::Cancel));
        }
    }

    /// Tells `game`'s table `order`, if its actor has started.
    fn tell(&self, game: GameId, order: Order, effects: &mut Vec<LobbyEffect<R>>) {
        if let Some(route) = self.route(game) {
            effects.push(LobbyEffect::ToGame(R::clone(route), order));
        }
    }

    /// `name` sits at `game`, from its connection there if `attached`.
    fn seat(&mut self, name: &Name, game: GameId, attached: bool) {
        let person = self.person_mut(name);
        person.seat = NonZeroU64::new(game);
        person.attached = attached;
    }

    /// `name` no longer sits at `game`; its rematch votes go.
    fn unseat(&mut self, name: &str, game: GameId) {
        if self.seat_of(name) == Some(game)
            && let Some(person) = self.existing_person_mut(name)
        {
            person.seat = None;
        }
        if let Some(entry) = self.game_mut(game) {
            entry.votes = [false; 2];
        }
    }

    /// Withdraws `name`'s seek; whether there was one.
    fn withdraw_seek(&mut self, name: &str) -> bool {
        let mut withdrew = false;
        while let Some(index) = self
            .seeks
            .iter()
            .position(|s| s.name.eq_ignore_ascii_case(name))
        {
            withdrew |= self.remove_seek(index).is_some();
        }
        withdrew
    }

    /// The secret of `name`, if a guest's.
    fn secret_of(&self, name: Option<&Name>) -> Option<GuestSecret> {
        name.and_then(|n| self.people.get(&Caseless(n)))
            .and_then(|p| p.secret)
    }

    /// Forgets a name that is neither logged in nor seated.
    fn tidy(&mut self, name: &str) {
        if self
            .people
            .get(&Caseless(name))
            .is_some_and(|p| p.conn.is_none() && p.seat.is_none())
        {
            self.remove_person(name);
        }
    }

    /// Records a new game, seats its people and asks for its start.
    #[allow(clippy::too_many_arguments, reason = "a game's whole description")]
    fn launch(
        &mut self,
        id: GameId,
        terms: GameTerms,
        seats: [Sitter<ConnId>; 2],
        origin: Origin,
        effects: &mut Vec<LobbyEffect<R>>,
    ) {
        let GameTerms {
            variant,
            clock,
            rated,
            start,
            tourney,
        } = terms;
        let occupants = seats.clone().map(occupant);
        let mut seated: Vec<ConnId> = seats
            .iter()
            .filter_map(|s| match s {
                Sitter::Person(_, Some(c)) if Some(*c) != origin.asker => Some(*c),
                _ => None,
            })
            .collect();
        seated.dedup();
        let persons: Vec<(Name, bool)> = seats
            .iter()
            .filter_map(|s| match s {
                Sitter::Person(name, conn) => Some((Name::clone(name), conn.is_some())),
                _ => None,
            })
            .collect();
        let phase = if occupants.iter().all(Option::is_some) {
            Phase::Playing
        } else {
            Phase::Open
        };
        let entry = Entry {
            route: None,
            variant,
            clock: clock.map(Box::new),
            seats: occupants,
            phase,
            rated,
            votes: [false; 2],
            rematch: None,
            tourney: tourney.is_some(),
        };
        self.insert_game(id, entry);
        for (name, attached) in persons {
            self.withdraw_seek(&name);
            self.seat(&name, id, attached);
        }
        let secrets = [&seats[0], &seats[1]].map(|s| match s {
            Sitter::Person(name, _) => self.secret_of(Some(name)),
            Sitter::Open | Sitter::Bot(_) => None,
        });
        effects.push(LobbyEffect::Launch(Launch {
            id,
            variant,
            clock,
            seats,
            secrets,
            start,
            rated,
            tourney,
            near: origin.near,
            seated,
        }));
    }
}

impl<R: Clone> LobbyCore<R> {
    // The commands that take or give up a seat. Each runs in a transaction
    // (see `journal`): a refusal changes nothing, and a decision that needs
    // a write comes back held.

    /// `SEEK variant clock` from `name`: paired with a waiting seeker of the
    /// same game at once (colours by `coin`: true gives the waiting one black),
    /// or waiting. Replaces the seeker's earlier seek. A pairing is held.
    pub fn seek(
        &mut self,
        name: &Name,
        wanted: SeekWanted,
        next_id: impl FnOnce() -> GameId,
        coin: bool,
    ) -> Result<Done<Sought, R>, Refusal> {
        self.transact(|core| core.decide_seek(name, wanted, next_id, coin))
    }

    /// `NEW ...` from `name`. The creator's colour, when random, is black if
    /// `coin`. Held: the game exists once stored.
    pub fn new_game(
        &mut self,
        name: &Name,
        spec: &NewGame,
        next_id: impl FnOnce() -> GameId,
        coin: bool,
    ) -> Result<Done<GameId, R>, Refusal> {
        self.transact(|core| core.decide_new_game(name, spec, next_id, coin))
    }

    /// `JOIN game` from `name`: the open seat (held until the seats are
    /// stored), or `name`'s own seat again.
    pub fn join(&mut self, name: &Name, game: GameId) -> Result<Done<(GameId, Color), R>, Refusal> {
        self.transact(|core| core.decide_join(name, game))
    }

    /// `JOIN game` from `name`, where another node owns `game`: refused as
    /// a seat here would be (a game in play, here or away); else a seat here
    /// not in play is left, the seek withdrawn, and `game` holds the name
    /// until [`LobbyCore::back_from_away`] (the owner seats it there; a
    /// refusal there brings it back at once). Joining the same game again
    /// changes nothing.
    pub fn sit_away(&mut self, name: &Name, game: GameId) -> Result<Done<AwayPass, R>, Refusal> {
        self.transact(|core| core.decide_sit_away(name, game))
    }

    /// `name` no longer sits at `game` on another node: its owner refused
    /// the seat, or the game is over there.
    pub fn back_from_away(&mut self, name: &str, game: GameId) {
        let away = self.away_of(name);
        if let (Some(person), true) = (self.existing_person_mut(name), away == Some(game)) {
            person.away = None;
        }
    }

    /// `LEAVE` from `name`, whose connection `watching` games or not: the seat
    /// of a game not in play, else the watching, else the seek.
    pub fn leave(&mut self, name: &Name, watching: bool) -> Result<Done<Left, R>, Refusal> {
        self.transact(|core| core.decide_leave(name, watching))
    }

    /// `REMATCH` from `name`: a vote in the finished game they sit at; once
    /// every person there has voted (a bot always agrees), the new game, with
    /// colours swapped (held until stored).
    pub fn rematch(
        &mut self,
        name: &Name,
        next_id: impl FnOnce() -> GameId,
    ) -> Result<Done<Rematched, R>, Refusal> {
        self.transact(|core| core.decide_rematch(name, next_id))
    }
}

/// Whose command starts a game, and on whose worker thread it runs.
#[derive(Clone, Copy)]
struct Origin {
    /// The connection whose command made the game (it learns its seat from
    /// the answer); `None` for a game nobody asked for.
    asker: Option<ConnId>,
    near: Option<ConnId>,
}

impl From<ConnId> for Origin {
    /// A game that runs near the one who asked for it.
    fn from(asker: ConnId) -> Origin {
        Origin {
            asker: Some(asker),
            near: Some(asker),
        }
    }
}

fn occupant(sitter: Sitter<ConnId>) -> Option<Occupant> {
    match sitter {
        Sitter::Open => None,
        Sitter::Bot(level) => Some(Occupant::Bot(level)),
        Sitter::Person(name, _) => Some(Occupant::Person(name)),
    }
}

/// The names once each (hotseat puts one person in both seats).
/// Whether a login may take `name`, known to the lobby as `person` with no
/// connection: free when nothing holds it; a guest's seat only with the
/// guest's secret; a registered name's seat with its password (checked
/// before).
fn check_hold(name: &str, person: &Person, guest: Option<&GuestLogin>) -> Result<(), Refusal> {
    let Some(secret) = person.secret else {
        return Ok(());
    };
    match guest {
        Some(login) if secret.matches(login.shown.as_ref()) => Ok(()),
        Some(GuestLogin { shown: Some(_), .. }) => Err(Refusal::HeldForGuest {
            name: Name::from(name),
            wrong_secret: true,
        }),
        _ => Err(Refusal::HeldForGuest {
            name: Name::from(name),
            wrong_secret: false,
        }),
    }
}

/// Whether a login here may take `name`, whose seat the store keeps in a
/// game another node of a cluster owns (or this one has just taken over,
/// before its lobby holds it), with the guest's secret `stored`
/// there (`None`: a registered name's seat): as for a seat held here, a
/// guest's goes only to its secret (a stored secret that does not read
/// goes to nobody).
pub fn check_kept_elsewhere(
    name: &str,
    stored: Option<&str>,
    guest: Option<&GuestLogin>,
) -> Result<(), Refusal> {
    let secret = match stored.map(GuestSecret::parse) {
        None => None,
        Some(Some(secret)) => Some(secret),
        Some(None) => {
            return Err(Refusal::HeldForGuest {
                name: Name::from(name),
                wrong_secret: false,
            });
        }
    };
    let person = Person {
        secret,
        ..Person::default()
    };
    check_hold(name, &person, guest)
}

fn dedup(mut names: Vec<Name>) -> Vec<Name> {
    names.dedup_by(|a, b| a.eq_ignore_ascii_case(b));
    names
}

#[cfg(test)]
impl<R: Clone + std::fmt::Debug> LobbyCore<R> {
    /// The lobby's whole state in a canonical form (names sorted), to check
    /// that something changed nothing.
    pub fn snapshot(&self) -> String {
        let mut people: Vec<String> = (self.people.iter())
            .map(|(NameKey(name), person)| format!("{name}: {person:?}"))
            .collect();
        people.sort();
        format!("{people:?}\n{:?}\n{:?}", self.seeks, self.games)
    }
}

#[cfg(test)]
impl<R: Clone> LobbyCore<R> {
    /// Checks the lobby's invariants (ARCHITECTURE.md), naming the first
    /// broken one: every name sits in at most one game that is open or in
    /// play, and its seat says so; a seeker sits in none; every seat points at
    /// a game that has that name in it; a name known only as gone is
    /// forgotten.
    pub fn check_invariants(&self) -> Result<(), String> {
        let mut live: hashbrown::HashMap<NameKey, Vec<GameId>> = hashbrown::HashMap::new();
        for (&id, entry) in &self.games {
            if entry.phase != Phase::Over {
                for name in dedup(entry.persons().cloned().collect()) {
                    live.entry(NameKey(name)).or_default().push(id);
                }
            }
        }
        for (NameKey(name), games) in &live {
            if games.len() > 1 {
                return Err(format!("{name} sits in games {games:?}"));
            }
            if self.seat_of(name) != games.first().copied() {
                return Err(format!(
                    "{name} sits in {games:?}, seat {:?}",
                    self.seat_of(name)
                ));
            }
        }
        for (i, seek) in self.seeks.iter().enumerate() {
            if let Some(games) = live.get(&Caseless(&seek.name)) {
                return Err(format!("{} seeks while in {games:?}", seek.name));
            }
            let later = self.seeks.iter().skip(i + 1);
            if let Some(other) = (later.into_iter())
                .find(|o| o.matches(seek))
                .filter(|_| !self.unpaired && !self.pooled)
            {
                return Err(format!(
                    "{} and {} seek the same game",
                    seek.name, other.name
                ));
            }
        }
        for (NameKey(name), person) in &self.people {
            if let Some(game) = person.seat.map(NonZeroU64::get) {
                let seated = self
                    .games
                    .get(&game)
                    .is_some_and(|e| !e.colors_of(name).is_empty());
                if !seated {
                    return Err(format!("{name}'s seat {game} does not have them"));
                }
            }
            if person.conn.is_none() && person.seat.is_none() {
                return Err(format!("{name} is kept with nothing"));
            }
            if let Some(away) = person.away {
                if person.conn.is_none() {
                    return Err(format!("{name} sits away at {away} with no connection"));
                }
                if let Some(games) = live.get(&Caseless(name)) {
                    return Err(format!("{name} sits away at {away} and here in {games:?}"));
                }
                if self.seeks.iter().any(|s| s.name.eq_ignore_ascii_case(name)) {
                    return Err(format!("{name} seeks while away at {away}"));
                }
            }
            if person.pairing {
                let seeking = self.seeks.iter().any(|s| s.name.eq_ignore_ascii_case(name));
                if person.conn.is_none() || seeking || live.contains_key(&Caseless(name)) {
                    return Err(format!(
                        "{name} is being paired, yet gone, seeking or in play"
                    ));
                }
            }
        }
        Ok(())
    }
}
