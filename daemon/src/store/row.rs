//! What the store's rows are made of, shared by the records and the move
//! log: one stored move, and a text column read without panicking.

use flipline::Move;
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
