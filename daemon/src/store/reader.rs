//! The reader thread and its read-only connection. Reads (`HISTORY`, accounts)
//! have a thread of their own so that a slow one holds up no write: WAL lets
//! it read while the writer writes. `flip export` reads through the same kind
//! of connection, without the thread.

use std::path::Path;
use std::sync::mpsc::Receiver;

use rusqlite::{Connection, OpenFlags};

use super::schema::{describe, refuse};
use super::{Faults, StoreError};

pub(super) type ReadJob = Box<dyn FnOnce(&Connection) + Send>;

pub(super) enum ToReader {
    Job(ReadJob),
    Close,
}

pub(super) fn open_reader(path: &Path) -> Result<Connection, StoreError> {
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(path, flags).map_err(|e| refuse(path, describe(&e)))?;
    conn.busy_timeout(std::time::Duration::from_secs(5))
        .map_err(|e| refuse(path, describe(&e)))?;
    Ok(conn)
}

pub(super) fn run_reader(
    conn: &Connection,
    requests: &Receiver<ToReader>,
    faults: Option<&Faults>,
) {
    while let Ok(ToReader::Job(job)) = requests.recv() {
        if let Some(faults) = faults {
            faults.before_read();
        }
        job(conn);
    }
}
