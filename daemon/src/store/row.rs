//! What the store's rows are made of, shared by the records and the move
//! log: one stored move, a text column read without panicking, and a game
//! whose rows do not read back.

use flipline::Move;
use flipline::protocol::GameId;
use rusqlite::Row;
use rusqlite::types::Type;

/// One stored move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StoredMove {
    /// The square, or a pass.
    pub mv: Move,
    /// Milliseconds the mover took; `None` for a move given by `NEW ... from`.
    pub ms: Option<u64>,
}

/// A text column parsed with `parse`; a value that does not parse (an operator
/// edited the file by hand, say) is an error naming the column, not a panic.
pub(super) fn parsed<T>(
    row: &Row<'_>,
    index: usize,
    parse: impl FnOnce(&str) -> Option<T>,
) -> rusqlite::Result<T> {
    let text: String = row.get(index)?;
    parse(&text).ok_or_else(|| {
        let why = format!("unreadable value {text:?}");
        rusqlite::Error::FromSqlConversionFailure(index, Type::Text, why.into())
    })
}

/// A game whose stored rows do not read back (edited by hand, a bad disk):
/// recovery leaves it out, and its rows are kept as they are for repair.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Damaged {
    /// The game.
    pub game: GameId,
    /// Which row and column, and why, in words.
    pub why: String,
}

/// `error`, from reading a row of a table with `columns`, in words: the
/// column and what is wrong with it.
pub(super) fn unreadable(error: &rusqlite::Error, columns: &[&str]) -> String {
    let column = |index: usize| columns.get(index).copied().unwrap_or("unknown");
    match error {
        rusqlite::Error::FromSqlConversionFailure(index, _, why) => {
            format!("the {} column: {why}", column(*index))
        }
        rusqlite::Error::InvalidColumnType(_, name, kind) => {
            format!("the {name} column holds {kind}")
        }
        rusqlite::Error::IntegralValueOutOfRange(index, value) => {
            format!("the {} column: {value} is out of range", column(*index))
        }
        other => other.to_string(),
    }
}
