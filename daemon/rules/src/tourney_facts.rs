//! The facts a tournament is stored as (who joined, the rounds begun, the
//! games lost by abandon, the starts drawn, its end) and a stored
//! tournament as read back at start: plain data the desk decides and the
//! store writes and reads, so that neither needs the other's code.

use flipline::protocol::{GameId, TourneyId, TourneySpec};
use flipline::{Color, Move};

/// A change to a tournament's stored rows: a fact it goes on from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TourneyWrite {
    /// `TOURNEY NEW`.
    New {
        /// Its number.
        id: TourneyId,
        /// Who runs it.
        creator: String,
        /// Its terms.
        spec: TourneySpec,
    },
    /// `TOURNEY JOIN`: 0 rows if the name is in it already.
    Join {
        /// The tournament.
        id: TourneyId,
        /// Who.
        name: String,
    },
    /// `TOURNEY LEAVE`.
    Leave {
        /// The tournament.
        id: TourneyId,
        /// Who.
        name: String,
    },
    /// A round began (or went on after a restart), with the games it lost
    /// by abandon before a move: one transaction.
    Round {
        /// The tournament.
        id: TourneyId,
        /// Its number.
        round: u32,
        /// Its games lost by abandon as it began.
        forfeits: Vec<StoredForfeit>,
    },
    /// A game of a round was lost by abandon before a move (once the
    /// round had begun: its game could not be made).
    Forfeit {
        /// The tournament.
        id: TourneyId,
        /// The game.
        forfeit: StoredForfeit,
    },
    /// The start the games of a start group share.
    Start {
        /// The tournament.
        id: TourneyId,
        /// The group.
        group: u32,
        /// Its moves.
        moves: Vec<Move>,
    },
    /// The tournament ended.
    Over {
        /// The tournament.
        id: TourneyId,
        /// Its winner; `None` for a tie at the top.
        winner: Option<String>,
    },
}

impl TourneyWrite {
    /// The tournament it is a fact of.
    pub fn tourney(&self) -> TourneyId {
        match self {
            TourneyWrite::New { id, .. }
            | TourneyWrite::Join { id, .. }
            | TourneyWrite::Leave { id, .. }
            | TourneyWrite::Round { id, .. }
            | TourneyWrite::Forfeit { id, .. }
            | TourneyWrite::Start { id, .. }
            | TourneyWrite::Over { id, .. } => *id,
        }
    }

    /// What the write is, for logs.
    pub fn summary(&self) -> String {
        match self {
            TourneyWrite::New { id, .. } => format!("creation of tournament {id}"),
            TourneyWrite::Join { id, name } => format!("{name} joining tournament {id}"),
            TourneyWrite::Leave { id, name } => format!("{name} leaving tournament {id}"),
            TourneyWrite::Round { id, round, .. } => format!("round {round} of tournament {id}"),
            TourneyWrite::Forfeit { id, forfeit } => {
                format!("a forfeit in round {} of tournament {id}", forfeit.round)
            }
            TourneyWrite::Start { id, group, .. } => {
                format!("start {group} of tournament {id}")
            }
            TourneyWrite::Over { id, .. } => format!("end of tournament {id}"),
        }
    }
}

/// A game made for a tournament, as stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredTourneyGame {
    /// The round it was made for.
    pub round: u32,
    /// The game.
    pub game: GameId,
    /// Black.
    pub black: String,
    /// White.
    pub white: String,
    /// Once over: the winner and the scores of its `OVER`.
    pub result: Option<(Option<Color>, (u32, u32))>,
}

/// A game lost by abandon before a move, as stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredForfeit {
    /// The round.
    pub round: u32,
    /// Black.
    pub black: String,
    /// White.
    pub white: String,
    /// Which sides were away.
    pub absent: [bool; 2],
}

/// A tournament as stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredTourney {
    /// Its number.
    pub id: TourneyId,
    /// Who runs it.
    pub creator: String,
    /// Its terms.
    pub spec: TourneySpec,
    /// Its players, in the order they joined.
    pub players: Vec<String>,
    /// Rounds begun (0: open).
    pub round: u32,
    /// Whether it is over.
    pub over: bool,
    /// Its games.
    pub games: Vec<StoredTourneyGame>,
    /// Its games lost by abandon before a move.
    pub forfeits: Vec<StoredForfeit>,
    /// The starts drawn, by start group.
    pub starts: Vec<(u32, Vec<Move>)>,
}
