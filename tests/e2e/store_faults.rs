//! The store on a sick disk: a second flipd reaching a running one's store
//! through a link, a volume that fills up (a small tmpfs, so these tests run
//! as root and fail, never skip, without it), the WAL file removed under a
//! running daemon, and a damaged row at a restart.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use flipline::protocol::{Event, GameStatus, ServerLine};
use flipline::{Game, Move, Variant};
use flipline_tests::*;

/// A configuration file for the `flipd` binary with its store at `store`.
fn config_for_store(dir: &Path, store: &Path) -> PathBuf {
    let text = format!(
        "(\n    listen: \"127.0.0.1:0\",\n    workers: 1,\n    store: (path: {:?}),\n)\n",
        store.display().to_string()
    );
    let path = dir.join("flipd.ron");
    std::fs::write(&path, text).unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
    path
}

/// Runs the `flipd` binary with `config` (bounded in time) and returns its log,
/// asserting that it exited with an error.
fn refused_binary(config: &Path) -> String {
    let child = Command::new(workspace_binary("flipd", "flipd"))
        .arg("--config")
        .arg(config)
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run flipd: {e}"));
    let output = wait_bounded(child, HANG_GUARD);
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(!output.status.success(), "a second flipd ran: {stderr}");
    stderr
}

#[test]
fn a_second_flipd_on_a_link_to_a_running_ones_store_is_refused() {
    if sqlite_only(
        "the lock of a SQLite file and its links (a database is locked by the writing connection, tested with the store)",
    ) {
        return;
    }
    let daemon = start(test_config());
    let store = daemon.config.store.path.clone();
    let links = temp_dir("links");
    let symlink = links.join("symlink.db");
    let hard_link = links.join("hard-link.db");
    std::os::unix::fs::symlink(&store, &symlink).unwrap_or_else(|e| panic!("symlink: {e}"));
    std::fs::hard_link(&store, &hard_link).unwrap_or_else(|e| panic!("hard link: {e}"));
    for link in [&symlink, &hard_link] {
        // In this process, as a second in-process daemon would start.
        let mut config = daemon.config.clone();
        config.store.path = link.clone();
        let error = DaemonThread::start(config)
            .err()
            .unwrap_or_else(|| panic!("a second daemon started on {}", link.display()))
            .to_string();
        assert!(error.contains("in use by another flipd"), "{error}");
        assert!(error.contains(&link.display().to_string()), "{error}");
        // And the binary, another process.
        let dir = temp_dir("second-flipd");
        let log = refused_binary(&config_for_store(&dir, link));
        assert!(log.contains("in use by another flipd"), "{log}");
        assert!(log.contains(&link.display().to_string()), "{log}");
        remove_temp_dir(&dir);
    }
    // The first daemon plays on, its store its own.
    let mut c = Client::login_as(daemon.addr, "first");
    let g = c.ok_game("NEW othello hotseat");
    assert_eq!(c.ok("MOVE f5").1, "OK");
    let (history, _) = c.ok(&format!("HISTORY {g}"));
    assert!(
        history.last().is_some_and(|l| l.ends_with(" playing - f5")),
        "{history:?}"
    );
    drop(daemon);
    remove_temp_dir(&links);
}

/// A configuration whose store is on `volume`.
fn config_on(volume: &SmallVolume) -> Config {
    let mut config = test_config();
    if let Some(unused) = config.store.path.parent() {
        remove_temp_dir(unused);
    }
    config.store.path = volume.path("store/flipline.db");
    config
}

/// Plies each game is played to at most: short of any end, so that every
/// write of these tests is a move.
const PLIES: usize = 40;

/// A hotseat game one client plays, with the moves it was told were stored.
struct Table {
    name: String,
    client: Client,
    game: u64,
    position: Game,
    acked: Vec<Move>,
}

impl Table {
    fn open(addr: std::net::SocketAddr, name: &str) -> Table {
        let mut client = Client::login_as(addr, name);
        let game = client.ok_game("NEW othello hotseat");
        Table {
            name: name.to_string(),
            client,
            game,
            position: Game::new(Variant::Othello),
            acked: Vec::new(),
        }
    }

    /// Sends the next move (the first legal one); the reply if not `OK`.
    fn play(&mut self) -> Result<(), String> {
        let mv = match self.position.legal_moves().iter().next() {
            Some(square) => Move::Place(square),
            None => Move::Pass,
        };
        let command = match mv {
            Move::Pass => "PASS".to_string(),
            Move::Place(square) => format!("MOVE {square}"),
        };
        let (_, reply) = self.client.command(&command);
        if reply != "OK" {
            return Err(reply);
        }
        self.position
            .apply(mv)
            .unwrap_or_else(|e| panic!("game {}: {e}", self.game));
        self.acked.push(mv);
        Ok(())
    }

    fn playable(&self) -> bool {
        !self.position.is_over() && self.acked.len() < PLIES
    }
}

/// `HISTORY game`'s status and moves, asked through `client`.
fn stored(client: &mut Client, game: u64) -> (GameStatus, Vec<Move>) {
    let (data, reply) = client.command(&format!("HISTORY {game}"));
    assert_eq!(reply, "OK", "HISTORY {game}: {data:?}");
    match data.last().map(|line| ServerLine::parse(line)) {
        Some(ServerLine::Event(Event::History(summary))) => (summary.status, summary.moves),
        other => panic!("HISTORY {game}: {other:?} in {data:?}"),
    }
}

/// Every game holds exactly the moves acknowledged in it, in play.
fn assert_acknowledged_stored(client: &mut Client, tables: &[Table]) {
    for table in tables {
        let (status, moves) = stored(client, table.game);
        assert_eq!(status, GameStatus::Playing, "game {}", table.game);
        assert_eq!(
            moves, table.acked,
            "game {}: the acknowledged moves",
            table.game
        );
    }
}

/// Plays the games in turn until a move is refused; returns how many were
/// acknowledged before, which game's move was refused and the reply.
fn play_until_refused(tables: &mut [Table]) -> (usize, usize, String) {
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut acknowledged = 0;
    while Instant::now() < deadline {
        let mut played = false;
        for (index, table) in tables.iter_mut().enumerate() {
            if !table.playable() {
                continue;
            }
            played = true;
            match table.play() {
                Ok(()) => acknowledged += 1,
                Err(reply) => return (acknowledged, index, reply),
            }
        }
        assert!(
            played,
            "every game reached {PLIES} plies and no move was refused: the volume never filled"
        );
    }
    panic!("no move was refused within 60 s ({acknowledged} acknowledged)");
}

/// A daemon with its store on `volume` and `games` games in play, a move
/// played in each.
fn games_on(volume: &SmallVolume, games: usize) -> (TestDaemon, Vec<Table>) {
    let daemon = start(config_on(volume));
    let mut tables: Vec<Table> = (0..games)
        .map(|i| Table::open(daemon.addr, &format!("full{i}")))
        .collect();
    for table in &mut tables {
        table
            .play()
            .unwrap_or_else(|reply| panic!("game {} before the filler: {reply}", table.game));
    }
    (daemon, tables)
}

#[test]
fn on_a_full_volume_moves_are_refused_then_go_on_once_there_is_room() {
    if sqlite_only("fills the volume of a SQLite file") {
        return;
    }
    let volume = SmallVolume::mount("2m");
    let (daemon, mut tables) = games_on(&volume, 24);
    let filler = volume.fill("filler");
    let (on_full, refused_in, reply) = play_until_refused(&mut tables);
    eprintln!("{on_full} moves acknowledged on the full volume before: {reply}");
    assert!(reply.starts_with("ERR 503 "), "{reply}");
    // The WAL's own space is reused at a checkpoint: moves go on for a while
    // on a full volume, until the database file has to grow.
    assert!(on_full > 0, "the first move on the full volume was refused");
    let mut reader = Client::connect(daemon.addr);
    assert_acknowledged_stored(&mut reader, &tables);
    SmallVolume::free(&filler);
    // No restart, nothing done but the space freed: the next moves are stored.
    for table in tables.iter_mut().skip(refused_in).take(3) {
        table
            .play()
            .unwrap_or_else(|reply| panic!("game {} with room again: {reply}", table.game));
    }
    assert_acknowledged_stored(&mut reader, &tables);
    drop(daemon);
}

#[test]
fn a_daemon_restarted_on_a_full_volume_serves_its_games_and_writes_once_there_is_room() {
    if sqlite_only("fills the volume of a SQLite file") {
        return;
    }
    let volume = SmallVolume::mount("2m");
    let (daemon, mut tables) = games_on(&volume, 8);
    // A game still open at the stop: the start cancels it, a write.
    let mut waiting = Client::login_as(daemon.addr, "waiting");
    let open = waiting.ok_game("NEW othello as X");
    let filler = volume.fill("filler");
    let (_, _, reply) = play_until_refused(&mut tables);
    assert!(reply.starts_with("ERR 503 "), "{reply}");
    drop(waiting);
    let config = daemon.config.clone();
    daemon
        .stop_keeping_store()
        .unwrap_or_else(|e| panic!("stop: {e}"));
    // Nothing could be written at the start (not the cancellation, not a
    // checkpoint): it serves all the same.
    let daemon = start(config);
    let mut reader = Client::connect(daemon.addr);
    assert_acknowledged_stored(&mut reader, &tables);
    let (status, _) = stored(&mut reader, open);
    eprintln!("the game left open is {status} after the start on the full volume");
    SmallVolume::free(&filler);
    for table in &mut tables {
        table.client = Client::login_as(daemon.addr, &table.name);
        let g = table.game;
        assert_eq!(table.client.ok(&format!("JOIN {g}")).1, format!("OK {g} X"));
        table.client.lines_through(&format!("TURN {g} "));
        table
            .play()
            .unwrap_or_else(|reply| panic!("game {g} after the restart: {reply}"));
    }
    assert_acknowledged_stored(&mut reader, &tables);
    drop(daemon);
}

#[test]
fn a_wal_removed_under_a_running_flipd_stops_its_moves_and_a_crash_loses_none() {
    if sqlite_only("removes a SQLite file's WAL") {
        return;
    }
    let dir = temp_dir("wal-removed");
    let config = write_config(&dir, "");
    let mut daemon = ChildDaemon::start_with(&config);
    let mut c = Client::login_as(daemon.addr, "cleaned");
    let g = c.ok_game("NEW othello hotseat");
    assert_eq!(c.ok("MOVE f5").1, "OK");
    assert_eq!(c.ok("MOVE d6").1, "OK");
    // A clean-up script removes the WAL under the running daemon.
    let wal = dir.join("flipline.db-wal");
    std::fs::remove_file(&wal).unwrap_or_else(|e| panic!("{}: {e}", wal.display()));
    for _ in 0..2 {
        let refused = c.err("MOVE c3", 503);
        assert!(refused.contains("not played"), "{refused}");
    }
    let (_, moves) = stored(&mut c, g);
    assert_eq!(moves.len(), 2, "reads go on: {moves:?}");
    // A crash now: every acknowledged move is in the database file.
    daemon.kill();
    let daemon = ChildDaemon::start_with(&config);
    let mut c = Client::login_as(daemon.addr, "cleaned");
    let (status, after) = stored(&mut c, g);
    assert_eq!((status, &after), (GameStatus::Playing, &moves));
    // The new daemon has a WAL of its own and writes again.
    assert_eq!(c.ok(&format!("JOIN {g}")).1, format!("OK {g} X"));
    c.lines_through(&format!("TURN {g} "));
    assert_eq!(c.ok("MOVE c3").1, "OK");
    drop(daemon);
    remove_temp_dir(&dir);
}

#[test]
fn a_game_with_a_damaged_row_is_left_out_at_a_restart_and_the_others_play_on() {
    if sqlite_only("damages a row of a SQLite file") {
        return;
    }
    let daemon = start(test_config());
    let mut damaged = Table::open(daemon.addr, "damaged");
    let mut sound = Table::open(daemon.addr, "sound");
    for table in [&mut damaged, &mut sound] {
        table
            .play()
            .unwrap_or_else(|reply| panic!("game {}: {reply}", table.game));
    }
    let config = daemon.config.clone();
    daemon
        .stop_keeping_store()
        .unwrap_or_else(|e| panic!("stop: {e}"));
    let db = rusqlite::Connection::open(&config.store.path).unwrap_or_else(|e| panic!("{e}"));
    db.execute(
        "UPDATE games SET clock = '99999999+0' WHERE id = ?1",
        [damaged.game],
    )
    .unwrap_or_else(|e| panic!("{e}"));
    drop(db);
    let daemon = start(config);
    let mut watcher = Client::connect(daemon.addr);
    let (games, _) = watcher.ok("LIST");
    let listed = |game: u64| {
        games
            .iter()
            .any(|l| l.starts_with(&format!("GAME {game} ")))
    };
    assert!(listed(sound.game), "{games:?}");
    assert!(!listed(damaged.game), "{games:?}");
    let g = sound.game;
    sound.client = Client::login_as(daemon.addr, "sound");
    assert_eq!(sound.client.ok(&format!("JOIN {g}")).1, format!("OK {g} X"));
    sound.client.lines_through(&format!("TURN {g} "));
    sound
        .play()
        .unwrap_or_else(|reply| panic!("game {g} after the restart: {reply}"));
    assert_acknowledged_stored(&mut watcher, std::slice::from_ref(&sound));
}
