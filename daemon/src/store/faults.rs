//! The fault switch ([`crate::faults::Faults`]) in the store's terms: a
//! write it fails fails as SQLite's full disk does, so the store's own
//! handling of a full disk (checkpoint, retry, `ERR 503`) is what the
//! failure tests exercise.

use rusqlite::ffi;

use crate::faults::Faults;

/// Before a transaction: waits while frozen, fails while failing.
pub(super) fn before_write(faults: Option<&Faults>) -> rusqlite::Result<()> {
    match faults {
        Some(faults) if faults.write_fails() => Err(rusqlite::Error::SqliteFailure(
            ffi::Error::new(ffi::SQLITE_FULL),
            Some("database or disk is full (a fault switched on)".to_string()),
        )),
        Some(_) | None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failing_writes_fail_as_a_full_disk_and_heal() {
        let faults = Faults::new();
        assert!(before_write(Some(&faults)).is_ok());
        faults.fail_writes();
        let error = before_write(Some(&faults)).unwrap_err();
        assert_eq!(
            error.sqlite_error_code(),
            Some(rusqlite::ErrorCode::DiskFull)
        );
        faults.heal();
        assert!(before_write(Some(&faults)).is_ok());
        assert!(before_write(None).is_ok());
    }
}
