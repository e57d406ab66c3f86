//! Helpers for the tests that need a store: a file of its own, its
//! configuration, a game to write, a future run to its end; shared by the
//! store's test modules.

use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use flipline::Variant;
use flipline::protocol::GameId;

use super::{Status, Write};
use crate::config::{StoreConfig, Synchronous};

/// A store path in a fresh directory of its own, removed when dropped.
pub(crate) struct TempDb(PathBuf);

impl std::ops::Deref for TempDb {
    type Target = PathBuf;

    fn deref(&self) -> &PathBuf {
        &self.0
    }
}

impl AsRef<Path> for TempDb {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDb {
    fn drop(&mut self) {
        if let Some(dir) = self.0.parent() {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

pub(crate) fn temp_path(what: &str) -> TempDb {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let dir = std::env::temp_dir()
        .join("flipd-store-tests")
        .join(format!("{}-{n}-{what}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    TempDb(dir.join("flipline.db"))
}

pub(crate) fn config(path: &Path) -> StoreConfig {
    StoreConfig {
        path: path.to_path_buf(),
        url: crate::config::StoreUrl::default(),
        password_file: std::path::PathBuf::new(),
        synchronous: Synchronous::Normal,
        batch_max: 64,
        cache_mb: 8,
        rating_period_days: 1,
        faults: None,
        lease: None,
    }
}

pub(crate) fn new_game(id: GameId, white: Option<&str>, start: &str) -> Write {
    Write::NewGame {
        id,
        variant: Variant::Othello,
        black: Some("ann".into()),
        white: white.map(str::to_string),
        secrets: [None, None],
        clock: flipline::protocol::ClockSpec::parse("5+3").ok(),
        status: if white.is_some() {
            Status::Playing
        } else {
            Status::Open
        },
        start: flipline::notation::parse_transcript(start).unwrap(),
        rated: false,
        tourney: None,
    }
}

pub(crate) fn block_on<F: Future>(future: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
        .block_on(future)
}
