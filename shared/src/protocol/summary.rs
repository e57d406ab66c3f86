//! [`GameSummary`]: the facts about one game that outlive its table (who sat
//! where, the clock, where it stands, the result, the moves). The `HISTORY`
//! line carries them, the daemon fills them from its store, and the client
//! writes its transcript lines (`save`, `flip export`) from them, so that all
//! of these hold one shape instead of a copy each.

use super::GameId;
use super::clock::ClockSpec;
use super::result::GameResult;
use super::status::GameStatus;
use crate::square::Move;
use crate::variant::Variant;

/// One game as a record of it: what `HISTORY` says, and what a transcript
/// line is written from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GameSummary {
    /// The game's number.
    pub game: GameId,
    /// Its variant.
    pub variant: Variant,
    /// Black's name (`bot:N` for a bot), `None` while the seat is open.
    pub black: Option<String>,
    /// White's name, likewise.
    pub white: Option<String>,
    /// The clock, `None` for a game without one.
    pub clock: Option<ClockSpec>,
    /// Where it stands: `open`, `playing`, `over` or `cancelled`.
    pub status: GameStatus,
    /// The result, once over.
    pub result: Option<GameResult>,
    /// Every move from the start, in order, passes written out.
    pub moves: Vec<Move>,
}
