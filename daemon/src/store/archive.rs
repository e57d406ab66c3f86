//! [`Archive`]: a store read without a daemon, for `flip export` (and for
//! `flip --local`, looking for the game it left unfinished). Read-only, and
//! checked like the daemon's store but never migrated: a file of another
//! program or another version is refused, not changed. A SQLite file, or a
//! PostgreSQL store given by its URL (`postgres://...`) in the file's place.

use std::path::Path;
use std::sync::{Mutex, PoisonError};

use flipline::protocol::{GameId, TourneyId};
use rusqlite::Connection;

use super::postgres::PgArchive;
use super::reader::open_reader;
use super::schema::{self, refuse};
use super::{GameRecord, StoreError, failed, move_log, records};

/// A store opened read-only, without a daemon: for `flip export`.
pub struct Archive {
    store: Kind,
}

enum Kind {
    Sqlite(Connection),
    /// Its reads take the connection's statements in turn (boxed: it
    /// holds its settings and a runtime, several times a connection's size).
    Postgres(Box<Mutex<PgArchive>>),
}

/// Whether `place` names a PostgreSQL store rather than a file.
pub fn is_database_url(place: &str) -> bool {
    place.starts_with("postgres://") || place.starts_with("postgresql://")
}

impl Archive {
    /// Opens the store at `path` read-only (a file, or a PostgreSQL URL);
    /// refuses anything that is not a flipline store of this build's
    /// schema.
    pub fn open(path: &Path) -> Result<Archive, StoreError> {
        if let Some(url) = path.to_str().filter(|p| is_database_url(p)) {
            let archive = PgArchive::open(url)?;
            return Ok(Archive {
                store: Kind::Postgres(Box::new(Mutex::new(archive))),
            });
        }
        if !path.exists() {
            return Err(refuse(path, "no such file"));
        }
        let conn = open_reader(path)?;
        schema::check_reader(&conn, path)?;
        Ok(Archive {
            store: Kind::Sqlite(conn),
        })
    }

    fn postgres(archive: &Mutex<PgArchive>) -> std::sync::MutexGuard<'_, PgArchive> {
        archive.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Finished games, by number; only `player`'s if given, only those ended on
    /// or after `since` (`YYYY-MM-DD` or a full UTC time) if given, only
    /// those of tournament `tourney` if given.
    pub fn finished_games(
        &self,
        player: Option<&str>,
        since: Option<&str>,
        tourney: Option<TourneyId>,
    ) -> Result<Vec<GameRecord>, StoreError> {
        match &self.store {
            Kind::Sqlite(conn) => records::finished(conn, player, since, tourney).map_err(failed),
            Kind::Postgres(pg) => Self::postgres(pg).finished_games(player, since, tourney),
        }
    }

    /// One game, in whatever state.
    pub fn game(&self, id: GameId) -> Result<Option<GameRecord>, StoreError> {
        match &self.store {
            Kind::Sqlite(conn) => records::game(conn, id).map_err(failed),
            Kind::Postgres(pg) => Self::postgres(pg).game(id),
        }
    }

    /// The SQLite connection it reads with (for the backup, which copies
    /// from it); a PostgreSQL store is backed up with `pg_dump`.
    pub(super) fn connection(&self) -> Result<&Connection, StoreError> {
        match &self.store {
            Kind::Sqlite(conn) => Ok(conn),
            Kind::Postgres(_) => Err(StoreError::Failed(
                "a PostgreSQL store is backed up with pg_dump (pg_dump -Fc -f FILE URL), \
                 not flip backup"
                    .into(),
            )),
        }
    }

    /// Games being played, by number (without those whose rows do not read
    /// back: the daemon leaves them out too).
    pub fn playing_games(&self) -> Result<Vec<GameRecord>, StoreError> {
        match &self.store {
            Kind::Sqlite(conn) => {
                let in_play = records::playing(conn, move_log::logged_moves).map_err(failed)?;
                Ok(in_play.games)
            }
            Kind::Postgres(pg) => Self::postgres(pg).playing_games(),
        }
    }
}
