//! The reader thread and its read-only connection. Reads (`HISTORY`, accounts)
//! have a thread of their own so that a slow one holds up no write: WAL lets
//! it read while the writer writes. `flip export` reads through the same kind
//! of connection, without the thread.

use std::path::Path;
use std::sync::mpsc::Receiver;

use rusqlite::{Connection, OpenFlags};

use super::requests::{Read, ToReader};
use super::schema::{describe, refuse};
use super::{Faults, StoreError, failed, ratings, records};

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
    while let Ok(ToReader::Read(read)) = requests.recv() {
        if let Some(faults) = faults {
            faults.before_read();
        }
        answer(conn, read);
    }
}

/// Runs `read` on `conn` and answers it.
fn answer(conn: &Connection, read: Read) {
    fn send<T>(answer: super::requests::ReadAnswer<T>, result: rusqlite::Result<T>) {
        let _ = answer.send(result.map_err(failed));
    }
    match read {
        Read::Game { game, held, answer } => {
            let in_play = move |_: &Connection| Ok(held.unwrap_or_default());
            send(answer, records::game_with(conn, game, in_play));
        }
        Read::RatingChanges { game, answer } => send(answer, ratings::changes(conn, game)),
        Read::RatingsOf {
            name,
            variant,
            answer,
        } => send(answer, ratings::of(conn, &name, variant)),
        Read::Top {
            variant,
            count,
            answer,
        } => send(answer, ratings::top(conn, variant, count)),
        Read::Registration { name, answer } => {
            send(answer, records::registration(conn, &name));
        }
        // A single daemon's file: every game is its own.
        Read::OwnerOf { answer, .. } => drop(answer.send(Ok(None))),
        Read::NameNode { answer, .. } => drop(answer.send(Ok(None))),
        Read::SeatInPlay { answer, .. } => drop(answer.send(Ok(None))),
        // A single daemon's file: it counts its games on by itself.
        Read::GameNumbers { answer } => drop(answer.send(Err(StoreError::Failed(
            "only a cluster's shared store gives blocks of game numbers".into(),
        )))),
    }
}
