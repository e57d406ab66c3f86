//! Why a core refused a command: a kind and its fields. The cores return a
//! [`Refusal`]; it becomes the protocol's `ERR <code> <text>` here and only
//! here ([`Refusal::code`], its `Display`, `From<Refusal> for
//! ProtocolError`), so a shell or a test can tell refusals apart by kind, and
//! a text is worded once.

use std::fmt;

use flipline::protocol::{DeclineReason, ErrorCode, GameId, ProtocolError, TourneyId};
use flipline::{MoveError, Variant};

use crate::Name;

/// A challenge's number (as `rules::challenges` numbers them; the refusal
/// names no module above it, so that none imports the other back).
type ChallengeId = u64;

/// A command refused by a core (see the module docs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Refusal {
    // Who asks.
    /// The connection has no name yet.
    NotLoggedIn,
    /// The connection is not known (it closed meanwhile).
    NoSuchConnection,
    /// Another connection holds the name.
    NameInUse(Name),
    /// On a cluster: a connection to another node holds the name.
    NameInUseOn { name: Name, node: String },
    /// On a cluster without a bus: the name's seat is kept in a game on
    /// another node (`None`: one being taken over), where alone it is
    /// taken back.
    SeatOnNode {
        name: Name,
        game: GameId,
        node: Option<String>,
    },
    /// On a cluster: the names online in the database could not be read.
    NamesUnreachable,
    /// A guest's seat holds the name; `wrong_secret` if a secret was given.
    HeldForGuest {
        /// The name.
        name: Name,
        /// Whether the login gave a secret that is not the guest's.
        wrong_secret: bool,
    },
    /// Rated games and seeks are for registered names.
    RatedForMembers,
    /// Tournaments are for registered names.
    TourneysForMembers,
    /// `RATING` of a name nobody registered.
    NotRegistered(String),

    // Games and seats.
    /// No game with that number.
    NoGame(GameId),
    /// The game's seats are taken.
    NoFreeSeat(GameId),
    /// The asker sits at no game.
    NotInGame,
    /// `LEAVE` with nothing to leave.
    NothingToLeave,
    /// The asker sits at a game in play; `attached` if connected to it.
    InPlay {
        /// The game.
        game: GameId,
        /// Whether the asker is at it (else away, its seat kept).
        attached: bool,
    },
    /// A seek to pair with is gone.
    SeekGone,
    /// The asker's seek is being paired with a seek of another node: the
    /// game is on its way.
    BeingPaired,
    /// `REMATCH` of a game not over.
    NotOver(GameId),
    /// `REMATCH` of a tournament's game.
    TourneyGameRematch(GameId),
    /// `REMATCH` of a game already rematched.
    Rematched {
        /// The game.
        game: GameId,
        /// Its rematch.
        next: GameId,
    },
    /// `REMATCH` with the opponent gone.
    OpponentLeft,

    // One game's table.
    /// The asker has no seat at the game.
    NoSeat(GameId),
    /// The game has not begun.
    NotStarted(GameId),
    /// The game is over.
    GameOver(GameId),
    /// A move sent again after its game's node died was made at ply `at`;
    /// the game is at `plies` now, past it.
    PastResent { game: GameId, at: u32, plies: u32 },
    /// The game is not in play (open or over).
    NotInPlay(GameId),
    /// A move out of turn.
    NotYourTurn,
    /// A move after the mover's flag fell.
    TimeRanOut,
    /// An illegal move, and the legal ones (`pass` if none).
    Illegal {
        /// Why it is illegal.
        error: MoveError,
        /// The legal moves, as `TURN` writes them.
        legal: String,
    },
    /// `HINT` where hints are off.
    HintsOff,
    /// `UNDO` after the game moved on from the ply asked about.
    MovedOn,
    /// `UNDO` with no move of the asker's to take back.
    NothingToTakeBack,
    /// `UNDO` in a rated game.
    RatedTakeBack,
    /// `UNDO` asked twice before the other player answered.
    TakeBackAsked,

    // Starts.
    /// A `from MOVES` that does not replay: the parser's words.
    BadStart(String),
    /// A `from MOVES` that ends the game.
    StartEnds,
    /// No random start of that many moves exists.
    NoRandomStart {
        /// The game.
        variant: Variant,
        /// The moves asked for.
        plies: u8,
    },

    // Challenges.
    /// A challenge to oneself.
    ChallengeSelf,
    /// A challenge to a name not online.
    NotOnline(Name),
    /// A name not online, where `WHO` helps.
    NotOnlineWho(Name),
    /// An open challenge to the same name.
    ChallengedAlready {
        /// Who was challenged.
        to: Name,
        /// The open challenge.
        id: ChallengeId,
    },
    /// Too many challenges open: the most one may have.
    TooManyChallenges(usize),
    /// No open challenge with that number.
    NoChallenge(ChallengeId),
    /// A challenge that is not the asker's to answer (`challenged`) or to
    /// cancel.
    NotYourChallenge {
        /// The challenge.
        id: ChallengeId,
        /// Whether the asker would have to be its challenged.
        challenged: bool,
    },
    /// A decline reason only the daemon gives.
    DaemonsReason(DeclineReason),
    /// `ACCEPT` of a challenge whose challenger has gone.
    ChallengerGone(Name),
    /// The challenger is being seated in another game (on another node).
    ChallengerBusy(Name),
    /// A player is in a game in play.
    Playing {
        /// Who.
        name: Name,
        /// The game.
        game: GameId,
    },
    /// A player is not free to play a tournament's game.
    NotFree(Name),

    // Tournaments.
    /// No tournament with that number.
    NoTourney(TourneyId),
    /// The daemon runs as many tournaments as it holds: that many.
    TooManyTourneys(usize),
    /// The asker runs as many as one name may: that many.
    RunsTooMany(usize),
    /// `JOIN` or `START` of a running tournament.
    TourneyStarted,
    /// `LEAVE` of a running tournament.
    TourneyStartedLeave,
    /// `JOIN` twice.
    AlreadyIn,
    /// `JOIN` of a full tournament: its most players.
    TourneyFull(usize),
    /// `LEAVE` of one the asker is not in.
    NotIn,
    /// `START` by someone else than the creator.
    OnlyCreatorStarts,
    /// `START` with fewer than two players.
    NeedsTwo,
    /// A Swiss with rounds its field cannot play.
    SwissRounds {
        /// The rounds asked for.
        rounds: u32,
        /// The players.
        players: usize,
    },
    /// A tournament's change the store refused: nothing changed.
    NotSaved,
    /// A new game or a seat the store refused: nothing changed.
    GameNotSaved,
    /// The game a command was sent to has ended meanwhile.
    GameGone,
    /// On a cluster's node whose lease is not held (the database not
    /// reached in time): another node may have taken the game over and
    /// moved on, so this node says nothing of it.
    LeaseLapsed(GameId),
}

impl Refusal {
    /// The protocol's code for it.
    pub fn code(&self) -> ErrorCode {
        use Refusal::*;
        match self {
            NotLoggedIn => ErrorCode::Unauthorized,
            NoSuchConnection | NotSaved | GameNotSaved | NamesUnreachable | LeaseLapsed(_) => {
                ErrorCode::Unavailable
            }
            RatedForMembers
            | TourneysForMembers
            | NotInGame
            | NoSeat(_)
            | NotYourTurn
            | HintsOff
            | RatedTakeBack
            | NotYourChallenge { .. }
            | OnlyCreatorStarts => ErrorCode::Forbidden,
            NotRegistered(_) | NoGame(_) | NotOnline(_) | NotOnlineWho(_) | NoChallenge(_)
            | NoTourney(_) | GameGone => ErrorCode::NotFound,
            Illegal { .. } => ErrorCode::IllegalMove,
            BadStart(_)
            | StartEnds
            | NoRandomStart { .. }
            | ChallengeSelf
            | DaemonsReason(_)
            | SwissRounds { .. } => ErrorCode::BadRequest,
            TooManyChallenges(_) | TooManyTourneys(_) | RunsTooMany(_) => ErrorCode::TooMany,
            _ => ErrorCode::Conflict,
        }
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use Refusal::*;
        match self {
            NotLoggedIn => f.write_str("LOGIN first"),
            NoSuchConnection => f.write_str("no such connection"),
            NameInUse(name) => write!(f, "name '{name}' is in use"),
            NameInUseOn { name, node } => write!(f, "name '{name}' is in use on node {node}"),
            SeatOnNode {
                name,
                game,
                node: Some(node),
            } => write!(
                f,
                "name '{name}' sits at game {game} on node {node}: log in there"
            ),
            SeatOnNode {
                name,
                game,
                node: None,
            } => write!(
                f,
                "name '{name}' sits at game {game}, which a live node is taking over: try again"
            ),
            NamesUnreachable => f.write_str("the cluster's names cannot be reached, try again"),
            HeldForGuest {
                name,
                wrong_secret: true,
            } => write!(
                f,
                "name '{name}' is held for its guest: that is not the secret its login was given"
            ),
            HeldForGuest { name, .. } => write!(
                f,
                "name '{name}' is held for its guest's seat: LOGIN {name} secret <the secret its OK gave> takes it back"
            ),
            RatedForMembers => f.write_str(
                "rated games are for registered names: LOGIN name password registers one",
            ),
            TourneysForMembers => f.write_str(
                "tournaments are for registered names: LOGIN name password registers one",
            ),
            NotRegistered(name) => {
                write!(f, "'{name}' is not a registered name: only those are rated")
            }
            // One match, so that the compiler holds every kind worded.
            NoGame(game) => write!(f, "no game {game}"),
            NoFreeSeat(game) => write!(f, "game {game} has no free seat"),
            NotInGame => f.write_str("you are not in a game"),
            NothingToLeave => f.write_str("nothing to leave"),
            InPlay {
                game,
                attached: true,
            } => write!(f, "game {game} is in play: END resigns it"),
            InPlay { game, .. } => {
                write!(
                    f,
                    "game {game} is in play: JOIN {game} takes your seat back"
                )
            }
            SeekGone => f.write_str("the seek is gone"),
            BeingPaired => {
                f.write_str("you are being seated in a game on another node: START follows")
            }
            NotOver(game) => write!(f, "game {game} is not over"),
            TourneyGameRematch(game) => write!(
                f,
                "game {game} is a tournament's: no rematch, its next round starts by itself"
            ),
            Rematched { game, next } => write!(f, "game {game} was rematched as game {next}"),
            OpponentLeft => f.write_str("your opponent has left"),
            NoSeat(game) => write!(f, "you have no seat in game {game}"),
            NotStarted(game) => write!(f, "game {game} has not started"),
            GameOver(game) => write!(f, "game {game} is over"),
            PastResent { game, at, plies } => write!(
                f,
                "game {game} moved on while its node was taken over: the command was sent after move {at}, the game is after move {plies} (BOARD shows it)"
            ),
            NotInPlay(game) => write!(f, "game {game} is not in play"),
            NotYourTurn => f.write_str("not your turn"),
            TimeRanOut => f.write_str("your time ran out"),
            Illegal {
                error: error @ MoveError::MustMove(_),
                ..
            } => write!(f, "{error}"),
            Illegal { error, legal } => write!(f, "{error}; legal: {legal}"),
            HintsOff => f.write_str("hints are off in this game"),
            MovedOn => f.write_str("the game moved on; UNDO again"),
            NothingToTakeBack => f.write_str("there is no move of yours to take back"),
            RatedTakeBack => f.write_str("moves are not taken back in a rated game"),
            TakeBackAsked => f.write_str("you asked already: the other player has not agreed"),
            BadStart(why) => write!(f, "from: {why}"),
            StartEnds => f.write_str("from: those moves end the game"),
            NoRandomStart { variant, plies } => {
                write!(f, "{variant} has no start of {plies} random moves")
            }
            ChallengeSelf => f.write_str("you cannot challenge yourself"),
            NotOnline(name) => write!(f, "'{name}' is not online"),
            NotOnlineWho(name) => write!(f, "'{name}' is not online (WHO lists who is)"),
            ChallengedAlready { to, id } => {
                write!(f, "you have challenged '{to}' already: challenge {id}")
            }
            TooManyChallenges(most) => write!(
                f,
                "you have {most} challenges open: CANCEL one, or wait for answers"
            ),
            NoChallenge(id) => write!(f, "no challenge {id}"),
            NotYourChallenge {
                id,
                challenged: true,
            } => write!(f, "challenge {id} is not addressed to you"),
            NotYourChallenge { id, .. } => write!(f, "challenge {id} is not yours"),
            DaemonsReason(reason) => write!(f, "'{reason}' is the daemon's reason, not a player's"),
            ChallengerGone(name) => write!(f, "'{name}' is not online"),
            ChallengerBusy(name) => write!(f, "'{name}' is being seated in another game"),
            Playing { name, game } => write!(f, "'{name}' is playing game {game}"),
            NotFree(name) => write!(f, "'{name}' is not free to play"),
            NoTourney(id) => write!(f, "no tournament {id} (TOURNEY LIST lists them)"),
            TooManyTourneys(most) => write!(
                f,
                "{most} tournaments are under way: try again when one is over"
            ),
            RunsTooMany(most) => write!(f, "you run {most} tournaments already"),
            TourneyStarted => f.write_str("the tournament has started"),
            TourneyStartedLeave => {
                f.write_str("the tournament has started: its games are played or lost by abandon")
            }
            AlreadyIn => f.write_str("you are in it already"),
            TourneyFull(most) => write!(f, "the tournament is full ({most} players)"),
            NotIn => f.write_str("you are not in it"),
            OnlyCreatorStarts => f.write_str("only the tournament's creator starts it"),
            NeedsTwo => f.write_str("a tournament needs two players"),
            SwissRounds { rounds, players } => {
                write!(f, "{rounds} Swiss rounds for {players} players")
            }
            NotSaved => f.write_str(
                "the tournament change could not be saved, so nothing changed; try again",
            ),
            GameNotSaved => {
                f.write_str("the game could not be saved, so nothing changed; try again")
            }
            GameGone => f.write_str("that game has ended"),
            LeaseLapsed(game) => write!(
                f,
                "this node cannot reach the cluster's database: where game {game} stands is \
                 not known here, try again"
            ),
        }
    }
}

impl From<Refusal> for ProtocolError {
    fn from(refusal: Refusal) -> ProtocolError {
        ProtocolError::new(refusal.code(), refusal.to_string())
    }
}

impl std::error::Error for Refusal {}

#[cfg(test)]
mod tests {
    use super::*;

    /// One of each kind.
    fn every_kind() -> Vec<Refusal> {
        use Refusal::*;
        let ann = || Name::from("ann");
        vec![
            NotLoggedIn,
            NoSuchConnection,
            NameInUse(ann()),
            PastResent {
                game: 3,
                at: 4,
                plies: 6,
            },
            HeldForGuest {
                name: ann(),
                wrong_secret: true,
            },
            HeldForGuest {
                name: ann(),
                wrong_secret: false,
            },
            RatedForMembers,
            TourneysForMembers,
            NotRegistered("zed".into()),
            NoGame(7),
            NoFreeSeat(7),
            NotInGame,
            NothingToLeave,
            InPlay {
                game: 7,
                attached: true,
            },
            InPlay {
                game: 7,
                attached: false,
            },
            SeekGone,
            BeingPaired,
            NotOver(7),
            TourneyGameRematch(7),
            Rematched { game: 7, next: 8 },
            OpponentLeft,
            NoSeat(7),
            NotStarted(7),
            GameOver(7),
            NotInPlay(7),
            NotYourTurn,
            TimeRanOut,
            Illegal {
                error: MoveError::GameOver,
                legal: "d3,c4".into(),
            },
            HintsOff,
            MovedOn,
            NothingToTakeBack,
            RatedTakeBack,
            TakeBackAsked,
            BadStart("no such square".into()),
            StartEnds,
            NoRandomStart {
                variant: Variant::Othello,
                plies: 60,
            },
            ChallengeSelf,
            NotOnline(ann()),
            NotOnlineWho(ann()),
            ChallengedAlready { to: ann(), id: 3 },
            TooManyChallenges(16),
            NoChallenge(3),
            NotYourChallenge {
                id: 3,
                challenged: true,
            },
            NotYourChallenge {
                id: 3,
                challenged: false,
            },
            DaemonsReason(DeclineReason::Timeout),
            ChallengerGone(ann()),
            ChallengerBusy(ann()),
            Playing {
                name: ann(),
                game: 7,
            },
            NotFree(ann()),
            NoTourney(2),
            TooManyTourneys(256),
            RunsTooMany(4),
            TourneyStarted,
            TourneyStartedLeave,
            AlreadyIn,
            TourneyFull(64),
            NotIn,
            OnlyCreatorStarts,
            NeedsTwo,
            SwissRounds {
                rounds: 9,
                players: 4,
            },
            NotSaved,
            GameNotSaved,
            GameGone,
            NameInUseOn {
                name: ann(),
                node: "b".into(),
            },
            SeatOnNode {
                name: ann(),
                game: 7,
                node: Some("b".into()),
            },
            SeatOnNode {
                name: ann(),
                game: 7,
                node: None,
            },
            NamesUnreachable,
            LeaseLapsed(7),
        ]
    }

    #[test]
    fn each_kind_is_worded_once_on_one_line_and_told_apart() {
        let kinds = every_kind();
        let mut texts: Vec<String> = kinds.iter().map(Refusal::to_string).collect();
        for (kind, text) in kinds.iter().zip(&texts) {
            assert!(
                !text.is_empty() && !text.contains('\n'),
                "{kind:?}: {text:?}"
            );
            let line = ProtocolError::from(kind.clone());
            assert_eq!((line.code, &line.message), (kind.code(), text));
        }
        texts.sort();
        let before = texts.len();
        texts.dedup();
        // Two kinds share words on purpose: the challenged or the
        // challenger not online (404 and 409).
        assert_eq!(before - texts.len(), 1, "kinds told apart by their words");
    }

    #[test]
    fn codes_follow_the_protocol_table() {
        assert_eq!(Refusal::NotLoggedIn.code().number(), 401);
        assert_eq!(Refusal::NotYourTurn.code().number(), 403);
        assert_eq!(Refusal::NoGame(1).code().number(), 404);
        assert_eq!(Refusal::NoFreeSeat(1).code().number(), 409);
        let illegal = Refusal::Illegal {
            error: MoveError::GameOver,
            legal: "pass".into(),
        };
        assert_eq!(illegal.code().number(), 422);
        assert_eq!(Refusal::TooManyChallenges(16).code().number(), 429);
        assert_eq!(Refusal::GameNotSaved.code().number(), 503);
        assert_eq!(Refusal::NotOnline(Name::from("a")).code().number(), 404);
        assert_eq!(
            Refusal::ChallengerGone(Name::from("a")).code().number(),
            409
        );
    }
}
