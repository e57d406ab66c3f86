//! SQLite's errors in words an operator can act on: shared by the opening,
//! the threads and the checkpoints, so it sits below them all.

/// An SQLite error in words an operator can act on.
pub fn describe(error: &rusqlite::Error) -> String {
    match error.sqlite_error_code() {
        Some(rusqlite::ErrorCode::NotADatabase) => {
            "not a SQLite database (the file holds something else)".to_string()
        }
        Some(rusqlite::ErrorCode::DatabaseCorrupt) => format!("the database is damaged: {error}"),
        Some(rusqlite::ErrorCode::DiskFull) => format!("the disk is full: {error}"),
        _ => error.to_string(),
    }
}
