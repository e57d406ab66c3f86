//! [`Archive`]: a store read without a daemon, for `flip export` (and for
//! `flip --local`, looking for the game it left unfinished). Read-only, and
//! checked like the daemon's store but never migrated: a file of another
//! program or another version is refused, not changed.

use std::path::Path;

use flipline::protocol::{GameId, TourneyId};
use rusqlite::Connection;

use super::reader::open_reader;
use super::schema::{self, refuse};
use super::{GameRecord, StoreError, failed, move_log, records};

/// A store opened read-only, without a daemon: for `flip export`.
pub struct Archive {
    conn: Connection,
}

impl Archive {
    /// Opens the store at `path` read-only; refuses anything that is not a
    /// flipline store of this build's schema.
    pub fn open(path: &Path) -> Result<Archive, StoreError> {
        if !path.exists() {
            return Err(refuse(path, "no such file"));
        }
        let conn = open_reader(path)?;
        schema::check_reader(&conn, path)?;
        Ok(Archive { conn })
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
        records::finished(&self.conn, player, since, tourney).map_err(failed)
    }

    /// One game, in whatever state.
    pub fn game(&self, id: GameId) -> Result<Option<GameRecord>, StoreError> {
        records::game(&self.conn, id).map_err(failed)
    }

    /// The connection it reads with (for the backup, which copies from it).
    pub(super) fn connection(&self) -> &Connection {
        &self.conn
    }

    /// Games being played, by number (without those whose rows do not read
    /// back: the daemon leaves them out too).
    pub fn playing_games(&self) -> Result<Vec<GameRecord>, StoreError> {
        let in_play = records::playing(&self.conn, move_log::logged_moves).map_err(failed)?;
        Ok(in_play.games)
    }
}
