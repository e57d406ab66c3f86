//! The PostgreSQL reader thread: a connection of its own, so that reads
//! (`HISTORY`, `RATING`, `TOP`, a registered name's `LOGIN`) never wait
//! behind the writes. While the server is down a read fails at once (the
//! client hears `ERR 503`); a read connects again at most every
//! `retry::RETRY_AFTER`.

use std::sync::mpsc::Receiver;

use tokio::runtime::Runtime;

use super::db::Db;
use super::retry::Retry;
use super::{games, ratings};
use crate::config::StoreConfig;
use crate::faults::Faults;
use crate::store::StoreError;
use crate::store::requests::{Read, ReadAnswer, ToReader};

/// The reader: its connection, when it has one.
pub struct PgReader {
    pub(super) config: StoreConfig,
    pub(super) runtime: Runtime,
    pub(super) db: Option<Db>,
    pub(super) down: Retry,
    pub(super) faults: Option<Faults>,
}

/// Answers reads until told to close.
pub fn run_reader(mut reader: PgReader, requests: &Receiver<ToReader>) {
    while let Ok(ToReader::Read(read)) = requests.recv() {
        if let Some(faults) = &reader.faults {
            faults.before_read();
        }
        match reader.connected() {
            Ok(()) => reader.answer(read),
            Err(why) => read.fail(StoreError::Failed(why)),
        }
    }
}

impl PgReader {
    fn connected(&mut self) -> Result<(), String> {
        if self.db.as_ref().is_some_and(|db| !db.is_closed()) {
            return Ok(());
        }
        self.db = None;
        let (runtime, config) = (&self.runtime, &self.config);
        let client = self
            .down
            .attempt(|| runtime.block_on(super::connect::connect(config)))?;
        self.db = Some(Db::new(client));
        Ok(())
    }

    fn answer(&mut self, read: Read) {
        let Some(db) = self.db.as_mut() else {
            read.fail(StoreError::Failed("no connection to PostgreSQL".into()));
            return;
        };
        let sql = |e: tokio_postgres::Error| super::describe(&e);
        self.runtime.block_on(async {
            match read {
                Read::Game { game, held, answer } => {
                    send(answer, games::game(db, game, held).await);
                }
                Read::RatingChanges { game, answer } => {
                    send(answer, ratings::changes(db, game).await.map_err(sql));
                }
                Read::RatingsOf {
                    name,
                    variant,
                    answer,
                } => send(answer, ratings::of(db, &name, variant).await.map_err(sql)),
                Read::Top {
                    variant,
                    count,
                    answer,
                } => send(answer, ratings::top(db, variant, count).await.map_err(sql)),
                Read::Registration { name, answer } => {
                    send(answer, games::registration(db, &name).await.map_err(sql));
                }
                Read::OwnerOf { game, answer } => {
                    send(answer, super::nodes::owner_of(db, game).await);
                }
                Read::NameNode { name, answer } => {
                    send(answer, super::names::node_of(db, &name).await);
                }
                Read::SeatInPlay { name, answer } => {
                    send(answer, super::names::seat_in_play(db, &name).await);
                }
                Read::GameNumbers { answer } => {
                    let block = crate::rules::numbers::BLOCK;
                    send(answer, super::nodes::number_block(db, "game", block).await);
                }
            }
        });
    }
}

fn send<T>(answer: ReadAnswer<T>, result: Result<T, String>) {
    let _ = answer.send(result.map_err(StoreError::Failed));
}
