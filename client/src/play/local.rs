//! `flip --local`: a daemon embedded in the client on a free loopback port, so that
//! anyone can play the built-in bot or hotseat with nothing else running.
//!
//! The embedded daemon keeps its store in the user's data directory
//! (`local.db`), like any daemon: a local game left unfinished (the client quit,
//! or crashed) is recovered by the daemon at the next start, and the client
//! takes its seat back with `JOIN`. The same file is an archive of every local
//! game (`flip export --db ~/.local/share/flipline/local.db`).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use flipd::store::{Archive, GameRecord};

use crate::paths::data_file;
use crate::play;
use crate::play::reader::{Failure, PlayOptions};

/// Starts an embedded daemon on a free loopback port, with its store in the
/// user's data directory, and plays on it as `name`; an unfinished local game,
/// which the daemon recovers from the store, is joined again first.
pub fn run(name: String, raw: bool) -> Result<(), Failure> {
    let mut config = flipd::Config::embedded().map_err(|e| Failure::failed(e.to_string()))?;
    config.listen = "127.0.0.1:0".to_string();
    config.workers = 1;
    config.store.path = store_path();
    wait_for_store(&config.store.path)?;
    let daemon = flipd::DaemonThread::start(config.clone())
        .map_err(|e| Failure::failed(format!("cannot start the local daemon: {e}")))?;
    let mut first = Vec::new();
    match unfinished_game(&config.store.path, &name) {
        Some(game) => {
            crate::say!("{}", resume_note(&game, &name));
            first.push(format!("JOIN {}", game.id));
        }
        None => crate::say!("local mode: try `new othello vs bot:3` or `new tictactoe hotseat`"),
    }
    let options = PlayOptions {
        ca: None,
        server: daemon.addr.to_string(),
        name: Some(name),
        password: None,
        raw,
        // The daemon is this process's: it goes only with it.
        reconnect: Some(false),
        // The store keeps a guest's seat for its secret across restarts.
        secrets_key: Some(format!("local {}", config.store.path.display())),
        on_update: None,
    };
    let result = play::run(&options, first);
    drop(daemon);
    result
}

/// How long `--local` waits for the store to be let go of: a `flip --local`
/// just closed takes a moment to stop its daemon (the last writes, the
/// checkpoint), and starting again at once must not fail for that.
const STORE_WAIT: Duration = Duration::from_secs(5);

/// Waits (up to [`STORE_WAIT`], saying so) while another process holds the
/// store's lock, the one every daemon takes on its store (see flipd's
/// `store/lock.rs`); then the daemon starting here can take it.
fn wait_for_store(path: &Path) -> Result<(), Failure> {
    let deadline = Instant::now() + STORE_WAIT;
    let mut said = false;
    while store_held(path) {
        if Instant::now() >= deadline {
            return Err(Failure::failed(format!(
                "the local store {} is still in use after {} s: is another `flip --local` \
                 (or a flipd on that file) running? Close it first",
                path.display(),
                STORE_WAIT.as_secs()
            )));
        }
        if !said {
            crate::say!(
                "the local store is in use (a flip --local closing?): waiting up to {} s",
                STORE_WAIT.as_secs()
            );
            said = true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Ok(())
}

/// Whether another process holds the lock on the store at `path` now. The
/// lock taken to look is dropped at once.
fn store_held(path: &Path) -> bool {
    let Ok(file) = std::fs::File::open(path) else {
        return false;
    };
    matches!(file.try_lock(), Err(std::fs::TryLockError::WouldBlock))
}

/// Where the embedded daemon keeps its store: the data directory, else (no home
/// known) a file of this process in the temporary directory.
pub fn store_path() -> PathBuf {
    data_file("local.db").unwrap_or_else(|| {
        std::env::temp_dir().join(format!("flipline-local-{}.db", std::process::id()))
    })
}

/// The latest unfinished game in the store at `path` that `name` plays against
/// a bot or hotseat: the one to resume.
pub fn unfinished_game(path: &Path, name: &str) -> Option<GameRecord> {
    let archive = Archive::open(path).ok()?;
    let games = archive.playing_games().ok()?;
    games
        .into_iter()
        .rev()
        .find(|game| is_local_game_of(game, name))
}

/// Whether `name` sits in `game` against a bot or against themself.
fn is_local_game_of(game: &GameRecord, name: &str) -> bool {
    let (black, white) = (
        game.black.as_deref().unwrap_or(""),
        game.white.as_deref().unwrap_or(""),
    );
    let local = |other: &str| other == name || other.starts_with("bot:");
    (black == name && local(white)) || (white == name && local(black))
}

/// What the person is told when their game is resumed.
pub fn resume_note(game: &GameRecord, name: &str) -> String {
    let opponent = match (game.black.as_deref(), game.white.as_deref()) {
        (Some(b), Some(w)) if b == w => "yourself (hotseat)".to_string(),
        (Some(b), Some(w)) if b == name => w.to_string(),
        (Some(b), _) => b.to_string(),
        _ => "nobody".to_string(),
    };
    format!(
        "resuming your unfinished {} game {} against {opponent} ({} moves played)",
        game.variant,
        game.id,
        game.moves.len()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use flipd::store::Status;
    use flipline::Variant;

    fn game(black: &str, white: &str) -> GameRecord {
        GameRecord {
            id: 3,
            variant: Variant::Othello,
            black: Some(black.into()),
            white: Some(white.into()),
            clock: None,
            status: Status::Playing,
            result: None,
            started_at: String::new(),
            ended_at: None,
            secrets: [None, None],
            rated: false,
            tourney: None,
            moves: Vec::new(),
        }
    }

    #[test]
    fn only_bot_and_hotseat_games_of_the_name_are_resumed() {
        assert!(is_local_game_of(&game("ann", "bot:3"), "ann"));
        assert!(is_local_game_of(&game("bot:1", "ann"), "ann"));
        assert!(is_local_game_of(&game("ann", "ann"), "ann"));
        assert!(!is_local_game_of(&game("ann", "bob"), "ann"));
        assert!(!is_local_game_of(&game("bob", "bot:3"), "ann"));
        assert_eq!(
            resume_note(&game("bot:1", "ann"), "ann"),
            "resuming your unfinished othello game 3 against bot:1 (0 moves played)"
        );
        assert!(resume_note(&game("ann", "ann"), "ann").contains("yourself"));
    }
}
