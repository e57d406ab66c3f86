//! Durability: the store under a crash (`kill -9` of the real binary mid-load,
//! right after a game was announced over, and right after each kind of
//! acknowledgement that makes a game or a seat), a graceful restart with clocks
//! and a bot, a failing write, and a file that is not a store.
//!
//! A game is acknowledged with the reply to its `NEW`, and its seats with the
//! reply to the `JOIN`: after the restart every such game is there, and one
//! whose `JOIN` was answered is not cancelled as left open.
//!
//! What "exactly the acknowledged moves" means here: a move is acknowledged when
//! its mover reads `OK`. The daemon sends `OK` only after the commit, so every
//! acknowledged move must be stored, in order. The one move per game that was
//! sent but whose reply had not been read when the daemon died may be stored or
//! not (its commit may have finished just before the kill). Nothing else may be
//! stored: no move that was never sent, none out of order.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use flipline::notation::{cells_string, replay};
use flipline::protocol::{Event, GameStatus, ServerLine};
use flipline::{Game, Move, Variant};
use flipline_tests::*;

/// One game as a load driver played it.
#[derive(Debug)]
struct GameLog {
    game: u64,
    /// Black's and white's names (the same twice in a hotseat game).
    players: [String; 2],
    /// Every move sent, in order.
    sent: Vec<Move>,
    /// How many of them were answered `OK`.
    acked: usize,
    /// Whether every seat was acknowledged (`NEW` alone for hotseat, then
    /// the `JOIN` for two): the game is stored in play.
    seated: bool,
}

/// The next final reply, or `None` if the connection closed (the daemon died).
fn reply_or_closed(client: &mut Client) -> Option<String> {
    let deadline = Instant::now() + READ_TIMEOUT;
    loop {
        match client.read_until(deadline) {
            Received::Line(line) if is_final(&line) => return Some(line),
            Received::Line(_) => {}
            Received::Closed => return None,
            Received::TimedOut => panic!("{}: no reply within {READ_TIMEOUT:?}", client.name),
        }
    }
}

/// Reads until `prefix` (or the close); `false` if the connection closed.
fn through_or_closed(client: &mut Client, prefix: &str) -> bool {
    let deadline = Instant::now() + READ_TIMEOUT;
    loop {
        match client.read_until(deadline) {
            Received::Line(line) if line.starts_with(prefix) => return true,
            Received::Line(_) => {}
            Received::Closed => return false,
            Received::TimedOut => panic!("{}: no '{prefix}'", client.name),
        }
    }
}

/// Sends a command and reads its reply; `None` once the daemon is gone.
fn ask(client: &mut Client, line: &str) -> Option<String> {
    client.try_send_bytes(format!("{line}\n").as_bytes()).ok()?;
    reply_or_closed(client)
}

/// A new game: hotseat for one client, `NEW`/`JOIN` for two. `None` if the
/// daemon died before `NEW` was acknowledged; else the game and whether
/// every seat was (the `JOIN` too).
fn open_game(a: &mut Client, b: Option<&mut Client>) -> Option<(u64, bool)> {
    let Some(b) = b else {
        let reply = ask(a, "NEW othello hotseat")?;
        return Some((reply_game("NEW", &reply), true));
    };
    let game = reply_game("NEW", &ask(a, "NEW othello as X")?);
    let Some(joined) = ask(b, &format!("JOIN {game}")) else {
        return Some((game, false));
    };
    assert_eq!(joined, format!("OK {game} O"));
    Some((game, true))
}

/// Plays random legal moves as fast as the replies come, until the game ends
/// (`true`) or the daemon dies (`false`).
fn play_fast(
    a: &mut Client,
    mut b: Option<&mut Client>,
    log: &mut GameLog,
    rng: &mut Rng,
    acked_total: &AtomicUsize,
) -> bool {
    let mut mirror = Game::new(Variant::Othello);
    while !mirror.is_over() {
        let legal: Vec<_> = mirror.legal_moves().iter().collect();
        let mv = if legal.is_empty() {
            Move::Pass
        } else {
            Move::Place(rng.pick(&legal))
        };
        let black = mirror.to_move() == flipline::Color::Black;
        let (mover, other) = match (&mut b, black) {
            (Some(b), false) => (&mut **b, Some(&mut *a)),
            (Some(b), true) => (&mut *a, Some(&mut **b)),
            (None, _) => (&mut *a, None),
        };
        let command = match mv {
            Move::Pass => "PASS".to_string(),
            Move::Place(square) => format!("MOVE {square}"),
        };
        log.sent.push(mv);
        let Some(reply) = ask(mover, &command) else {
            return false;
        };
        assert_eq!(reply, "OK", "{command} in game {}", log.game);
        log.acked += 1;
        acked_total.fetch_add(1, Ordering::Relaxed);
        let _ = mirror.apply(mv);
        // The opponent hears of the move: MOVED is its acknowledgement.
        if let Some(other) = other
            && !through_or_closed(other, &format!("MOVED {} ", log.game))
        {
            return false;
        }
    }
    true
}

/// One load driver: games one after another until the daemon dies.
fn drive(addr: std::net::SocketAddr, index: u64, acked_total: Arc<AtomicUsize>) -> Vec<GameLog> {
    let names = [format!("d{index}a"), format!("d{index}b")];
    let mut a = Client::login_as(addr, &names[0]);
    let mut b = (index % 5 == 4).then(|| Client::login_as(addr, &names[1]));
    let players = match b {
        Some(_) => names.clone(),
        None => [names[0].clone(), names[0].clone()],
    };
    let mut rng = Rng(0x5EED ^ index);
    let mut logs = Vec::new();
    loop {
        let Some((game, seated)) = open_game(&mut a, b.as_mut()) else {
            return logs;
        };
        let mut log = GameLog {
            game,
            players: players.clone(),
            sent: Vec::new(),
            acked: 0,
            seated,
        };
        if !seated {
            logs.push(log);
            return logs;
        }
        let alive = play_fast(&mut a, b.as_mut(), &mut log, &mut rng, &acked_total);
        logs.push(log);
        if !alive {
            return logs;
        }
    }
}

/// `HISTORY game`: its status and moves, or `None` for 404.
fn history(client: &mut Client, game: u64) -> Option<(GameStatus, Vec<Move>)> {
    let (data, reply) = client.command(&format!("HISTORY {game}"));
    if reply.starts_with("ERR 404 ") {
        return None;
    }
    assert_eq!(reply, "OK", "HISTORY {game}: {data:?}");
    match data.as_slice() {
        [line] => match ServerLine::parse(line) {
            ServerLine::Event(Event::History(summary)) => Some((summary.status, summary.moves)),
            other => panic!("not a HISTORY line: {other:?}"),
        },
        other => panic!("HISTORY {game}: {other:?}"),
    }
}

/// Checks one game's stored moves against what its driver saw; returns whether
/// the in-flight move was stored.
fn check_log(client: &mut Client, log: &GameLog) -> bool {
    let acked = log.sent.get(..log.acked).unwrap_or_default();
    // `NEW` is answered once the game is stored, `JOIN` once its seats are.
    let Some((status, stored)) = history(client, log.game) else {
        panic!("game {} was acknowledged and is gone", log.game);
    };
    if status == GameStatus::Cancelled {
        // Open at the kill (its JOIN unanswered), and open games are
        // cancelled at the restart.
        assert!(!log.seated, "game {} cancelled after its JOIN", log.game);
        assert!(stored.is_empty(), "game {} cancelled with moves", log.game);
        return false;
    }
    assert!(
        status == GameStatus::Playing || status == GameStatus::Over,
        "game {}: {status}",
        log.game
    );
    assert!(
        stored.len() == log.acked || stored.len() == log.acked + 1,
        "game {}: {} acknowledged, {} sent, {} stored",
        log.game,
        log.acked,
        log.sent.len(),
        stored.len()
    );
    assert_eq!(
        stored.get(..log.acked),
        Some(acked),
        "game {}: the acknowledged moves, in order",
        log.game
    );
    if stored.len() > log.acked {
        assert_eq!(stored.last(), log.sent.get(log.acked), "game {}", log.game);
        return true;
    }
    false
}

#[test]
fn acknowledged_moves_survive_kill_9_and_the_games_play_on() {
    let dir = temp_dir("durability");
    let config = write_config(
        &dir,
        "grace_secs: 60, rate_limit: (per_second: 100000, burst: 100000),",
    );
    let mut daemon = ChildDaemon::start_with(&config);
    let acked_total = Arc::new(AtomicUsize::new(0));
    let addr = daemon.addr;
    let drivers: Vec<_> = (0..20u64)
        .map(|i| {
            let acked_total = Arc::clone(&acked_total);
            std::thread::spawn(move || drive(addr, i, acked_total))
        })
        .collect();
    // Killed after 1500 acknowledged moves, or after 4 s with at least 200
    // (a loaded machine makes fewer in that time: it is then waited for).
    let began = Instant::now();
    loop {
        let acked = acked_total.load(Ordering::Relaxed);
        if acked >= 1500 || (acked >= 200 && began.elapsed() >= Duration::from_secs(4)) {
            break;
        }
        assert!(
            began.elapsed() < HANG_GUARD,
            "hang guard: {acked} acknowledged moves"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    daemon.kill();
    let before_kill = acked_total.load(Ordering::Relaxed);
    eprintln!(
        "killed flipd after {:?} and {before_kill} acknowledged moves",
        began.elapsed()
    );
    assert!(before_kill >= 200, "too little load: {before_kill} moves");
    let logs: Vec<GameLog> = drivers
        .into_iter()
        .flat_map(|d| d.join().unwrap_or_else(|_| panic!("a driver panicked")))
        .collect();

    let daemon = ChildDaemon::start_with(&config);
    let mut reader = Client::connect(daemon.addr);
    let in_flight_stored = logs
        .iter()
        .filter(|log| check_log(&mut reader, log))
        .count();
    let unfinished = logs.iter().filter(|l| l.sent.len() == l.acked + 1).count();
    eprintln!(
        "{} games checked, {unfinished} with a move in flight at the kill, \
         {in_flight_stored} of those moves stored",
        logs.len()
    );
    assert!(logs.len() >= 20, "{} games", logs.len());
    resume(daemon.addr, &logs, false);
    resume(daemon.addr, &logs, true);
    let max = logs.iter().map(|l| l.game).max().unwrap_or(0);
    let mut late = Client::login_as(daemon.addr, "late");
    let game = late.ok_game("NEW tictactoe hotseat");
    assert!(game > max, "game {game} after {max}");
    drop(daemon);
    remove_temp_dir(&dir);
}

/// The stored moves of a game in play, and the position they reach.
fn stored_position(client: &mut Client, game: u64) -> (Vec<Move>, Game) {
    let (status, moves) = history(client, game).unwrap_or_else(|| panic!("no game {game}"));
    assert_eq!(status, GameStatus::Playing, "game {game}");
    let position = replay(Variant::Othello, &moves).unwrap_or_else(|e| panic!("{e}"));
    (moves, position)
}

/// A game cut off by the kill, hotseat (`pair` false) or between two
/// connections, with a few moves stored.
fn cut_off(reader: &mut Client, logs: &[GameLog], pair: bool) -> u64 {
    logs.iter()
        .filter(|l| l.acked >= 2 && (l.players[0] != l.players[1]) == pair)
        .map(|l| l.game)
        .find(|&g| history(reader, g).is_some_and(|(status, _)| status == GameStatus::Playing))
        .unwrap_or_else(|| panic!("no unfinished game (pair: {pair}) to resume"))
}

/// The players of a game cut off by the kill log in again, join, see the stored
/// position and play on; the next move is stored after the others.
fn resume(addr: std::net::SocketAddr, logs: &[GameLog], pair: bool) {
    let mut reader = Client::connect(addr);
    let g = cut_off(&mut reader, logs, pair);
    let (moves, position) = stored_position(&mut reader, g);
    let players = logs
        .iter()
        .find(|l| l.game == g)
        .map(|l| l.players.clone())
        .unwrap_or_else(|| panic!("no log of game {g}"));
    let mut clients: Vec<Client> = Vec::new();
    for (name, side) in players
        .iter()
        .zip(["X", "O"])
        .take(if pair { 2 } else { 1 })
    {
        let mut client = Client::login_as(addr, name);
        assert_eq!(client.ok(&format!("JOIN {g}")).1, format!("OK {g} {side}"));
        let lines = client.lines_through(&format!("TURN {g} "));
        assert_eq!(lines.len(), 3, "START, BOARD, TURN: {lines:?}");
        let board = format!("BOARD {g} {} ", cells_string(&position));
        assert!(lines[1].starts_with(&board), "{lines:?}");
        clients.push(client);
    }
    let mover = match position.to_move() {
        flipline::Color::White if pair => 1,
        _ => 0,
    };
    let command = match position.legal_moves().iter().next() {
        Some(square) => format!("MOVE {square}"),
        None => "PASS".to_string(),
    };
    assert_eq!(clients[mover].ok(&command).1, "OK", "{command}");
    for client in &mut clients {
        assert!(
            client
                .expect_event(&format!("MOVED {g} "))
                .starts_with("MOVED")
        );
    }
    let (_, stored) = history(&mut reader, g).unwrap_or_else(|| panic!("no game {g}"));
    assert_eq!(stored.len(), moves.len() + 1);
    assert_eq!(stored.get(..moves.len()), Some(moves.as_slice()));
}

/// The moves' stored milliseconds, black's and white's, read from the file.
fn used_ms(store: &std::path::Path, game: u64) -> (u64, u64) {
    let archive = flipd::store::Archive::open(store).unwrap_or_else(|e| panic!("{e}"));
    let record = archive
        .game(game)
        .unwrap_or_else(|e| panic!("{e}"))
        .unwrap_or_else(|| panic!("no game {game}"));
    let mut position = Game::new(record.variant);
    let mut used = (0, 0);
    for stored in &record.moves {
        let ms = stored.ms.unwrap_or(0);
        match position.to_move() {
            flipline::Color::Black => used.0 += ms,
            flipline::Color::White => used.1 += ms,
        }
        position
            .apply(stored.mv)
            .unwrap_or_else(|e| panic!("stored move: {e}"));
    }
    used
}

#[test]
fn a_restart_brings_back_games_with_their_clocks_bots_and_numbers() {
    let mut config = test_config();
    config.grace_secs = 30;
    let daemon = start(config);
    let mut ann = Client::login_as(daemon.addr, "ann");
    let g = ann.ok_game("NEW othello as X vs bot:1 clock 10+2");
    ann.lines_through(&format!("TURN {g} X"));
    for _ in 0..2 {
        std::thread::sleep(Duration::from_millis(150));
        ann_move(&mut ann, g);
        ann.lines_through(&format!("MOVED {g} O"));
        ann.lines_through(&format!("TURN {g} X"));
    }
    let (pa, pb, pair) = new_and_join(daemon.addr, "tictactoe", ["pa", "pb"]);
    drop((pa, pb));
    let config = daemon.config.clone();
    daemon
        .stop_keeping_store()
        .unwrap_or_else(|e| panic!("stop: {e}"));

    let (black_used, white_used) = used_ms(&store_place(&config), g);
    assert!(black_used >= 300, "ann thought {black_used} ms");
    // Black's turn begins afresh no sooner than the restart.
    let restarted = Instant::now();
    let daemon = start(config.clone());
    let mut watcher = Client::connect(daemon.addr);
    let (games, _) = watcher.ok("LIST");
    assert!(
        games.contains(&format!("GAME {g} othello ann bot:1 playing 4")),
        "{games:?}"
    );
    assert!(
        games
            .iter()
            .any(|l| l.starts_with(&format!("GAME {} ", pair.game))),
        "{games:?}"
    );
    let mut ann = Client::connect(daemon.addr);
    login_soon(&mut ann, "ann");
    assert_eq!(ann.ok(&format!("JOIN {g}")).1, format!("OK {g} X"));
    assert_eq!(ann.line(), format!("START {g} othello ann bot:1 10+2"));
    ann.lines_through(&format!("TURN {g} X"));
    let square = ann_move(&mut ann, g);
    let moved = ann.expect_event(&format!("MOVED {g} X {square} "));
    let Event::Moved {
        clocks: Some((black_left, white_left)),
        ..
    } = event(&moved)
    else {
        panic!("no clocks in {moved}")
    };
    // Restored from the stored times: 10 minutes, less what each side used,
    // plus 2 s for each move made (black's third included).
    // Black is charged this turn no more than the time since the restart
    // (rounded up to the millisecond), however long that was.
    let black_before = 600_000 - black_used + 3 * 2000;
    let since = u64::try_from(restarted.elapsed().as_millis()).unwrap_or(u64::MAX);
    assert!(black_left <= black_before, "{moved}");
    assert!(black_left + since + 1 >= black_before, "{moved}");
    assert_eq!(white_left, 600_000 - white_used + 2 * 2000, "{moved}");
    // The bot is back in its seat and answers.
    ann.lines_through(&format!("MOVED {g} O "));
    let mut late = Client::login_as(daemon.addr, "late");
    let next = late.ok_game("NEW tictactoe hotseat");
    assert_eq!(next, pair.game + 1, "numbers go on after the stored ones");
}

/// Plays ann's first legal move from the last TURN line; returns the square.
fn ann_move(ann: &mut Client, g: u64) -> String {
    let (board, _) = ann.ok("BOARD");
    let turn = board.iter().map(|l| event(l)).find_map(|e| match e {
        Event::Turn { moves, .. } => Some(moves),
        _ => None,
    });
    let Some(moves) = turn else {
        panic!("no TURN in {board:?}");
    };
    let square = moves
        .first()
        .unwrap_or_else(|| panic!("no move in game {g}"))
        .to_string();
    assert_eq!(ann.ok(&format!("MOVE {square}")).1, "OK");
    square
}

#[test]
fn a_failing_write_refuses_the_move_and_the_game_keeps_its_state() {
    let daemon = start(test_config());
    let mut c = Client::login_as(daemon.addr, "wf");
    let g = c.ok_game("NEW othello hotseat");
    c.lines_through(&format!("TURN {g} X"));
    c.ok("MOVE f5");
    c.lines_through(&format!("TURN {g} O"));
    let (before, _) = c.ok("BOARD");
    // The store refuses every new move, as a full disk would.
    let config = &daemon.config;
    store_execute(
        config,
        "CREATE TRIGGER refuse BEFORE INSERT ON move_log \
         BEGIN SELECT RAISE(FAIL, 'database or disk is full'); END;",
        "CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS \
         $$ BEGIN RAISE EXCEPTION 'database or disk is full'; END $$; \
         CREATE TRIGGER refuse BEFORE INSERT ON moves FOR EACH ROW EXECUTE FUNCTION refuse();",
    );
    let refused = c.err("MOVE d6", 503);
    assert!(refused.contains("not played"), "{refused}");
    c.expect_silence(Duration::from_millis(100));
    assert_eq!(c.ok("BOARD").0, before, "the position is the committed one");
    let (history_lines, _) = c.ok(&format!("HISTORY {g}"));
    assert!(
        history_lines.last().map(String::as_str)
            == Some(format!("HISTORY {g} othello wf wf - playing - f5").as_str()),
        "{history_lines:?}"
    );
    assert_serves(daemon.addr);
    // Once writes work again, so does the game.
    store_execute(
        config,
        "DROP TRIGGER refuse;",
        "DROP TRIGGER refuse ON moves;",
    );
    assert_eq!(c.ok("MOVE d6").1, "OK");
    assert_eq!(c.line(), format!("MOVED {g} O d6 3 3"));
    let (history_lines, _) = c.ok(&format!("HISTORY {g}"));
    assert!(
        history_lines
            .last()
            .is_some_and(|l| l.ends_with(" playing - f5d6")),
        "{history_lines:?}"
    );
    // A bot's move that cannot be saved is not played; the bot tries again.
    let mut b = Client::login_as(daemon.addr, "wb");
    let g2 = b.ok_game("NEW othello as X vs bot:1");
    b.lines_through(&format!("TURN {g2} X"));
    store_execute(
        config,
        &format!(
            "CREATE TRIGGER refuse_bot BEFORE INSERT ON move_log \
             WHEN NEW.game = {g2} AND NEW.ply = 2 \
             BEGIN SELECT RAISE(FAIL, 'database or disk is full'); END;"
        ),
        &format!(
            "CREATE FUNCTION refuse_bot() RETURNS trigger LANGUAGE plpgsql AS \
             $$ BEGIN IF NEW.game = {g2} AND NEW.ply = 2 THEN \
             RAISE EXCEPTION 'database or disk is full'; END IF; RETURN NEW; END $$; \
             CREATE TRIGGER refuse_bot BEFORE INSERT ON moves \
             FOR EACH ROW EXECUTE FUNCTION refuse_bot();"
        ),
    );
    b.ok("MOVE f5");
    b.lines_through(&format!("TURN {g2} O"));
    b.expect_silence(Duration::from_millis(400));
    store_execute(
        config,
        "DROP TRIGGER refuse_bot;",
        "DROP TRIGGER refuse_bot ON moves;",
    );
    assert!(
        b.expect_event(&format!("MOVED {g2} O "))
            .starts_with("MOVED")
    );
}

#[test]
fn flipd_refuses_a_file_that_is_not_its_store_and_names_it() {
    if sqlite_only("a file that is not a store (a foreign database is refused in the store tests)")
    {
        return;
    }
    let dir = temp_dir("not-a-store");
    let config = write_config(&dir, "");
    let store = dir.join("flipline.db");
    let junk = b"these are somebody's notes, not a database\n".repeat(200);
    std::fs::write(&store, &junk).unwrap_or_else(|e| panic!("{e}"));
    let binary = workspace_binary("flipd", "flipd");
    let output = std::process::Command::new(binary)
        .arg("--config")
        .arg(&config)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("cannot run flipd: {e}"));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "{stderr}");
    assert!(stderr.contains(&store.display().to_string()), "{stderr}");
    assert!(stderr.contains("not a SQLite database"), "{stderr}");
    assert_eq!(
        std::fs::read(&store).unwrap_or_default(),
        junk,
        "the file is left as it was"
    );
    remove_temp_dir(&dir);
}

#[test]
fn a_recovered_game_nobody_comes_back_to_is_abandoned_as_a_draw() {
    let mut config = test_config();
    config.grace_secs = 1;
    let daemon = start(config);
    let (mut a, b, game) = new_and_join(daemon.addr, "othello", ["na", "nb"]);
    let g = game.game;
    a.lines_through(&format!("TURN {g} X"));
    a.ok("MOVE d3");
    drop((a, b));
    let config = daemon.config.clone();
    daemon
        .stop_keeping_store()
        .unwrap_or_else(|e| panic!("stop: {e}"));
    let restarted = Instant::now();
    let daemon = start(config);
    let mut reader = Client::connect(daemon.addr);
    loop {
        let (data, _) = reader.ok(&format!("HISTORY {g}"));
        let line = data.last().cloned().unwrap_or_default();
        if line.contains(" over ") {
            // Both away since the restart: neither is the one who left.
            assert_eq!(
                line,
                format!("HISTORY {g} othello na nb - over draw:33-31:abandon d3")
            );
            break;
        }
        assert!(
            restarted.elapsed() < HANG_GUARD,
            "hang guard: not abandoned yet: {line}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(restarted.elapsed() >= Duration::from_millis(900));
}

#[test]
fn a_game_announced_over_stays_over_after_kill_9() {
    let dir = temp_dir("over-kill");
    let config = write_config(&dir, "");
    let mut daemon = ChildDaemon::start_with(&config);
    let mut c = Client::login_as(daemon.addr, "res");
    let g = c.ok_game("NEW othello hotseat");
    c.ok("MOVE f5");
    c.ok("END");
    let over = c.lines_through(&format!("OVER {g} "));
    assert!(
        over.last().is_some_and(|l| l.ends_with(" resign")),
        "{over:?}"
    );
    // A resignation is not in the moves: only the stored result can bring
    // it back, and it is stored before OVER is sent.
    daemon.kill();
    let daemon = ChildDaemon::start_with(&config);
    let mut reader = Client::connect(daemon.addr);
    let (data, _) = reader.ok(&format!("HISTORY {g}"));
    assert_eq!(
        data.last().map(String::as_str),
        Some(format!("HISTORY {g} othello res res - over X:63-1:resign f5").as_str()),
        "{data:?}"
    );
    drop(daemon);
    remove_temp_dir(&dir);
}

/// The status and players `HISTORY` gives for `game` (its line's fields).
fn history_line(reader: &mut Client, game: u64) -> String {
    let (data, _) = reader.ok(&format!("HISTORY {game}"));
    data.last()
        .cloned()
        .unwrap_or_else(|| panic!("HISTORY {game}: no line"))
}

#[test]
fn every_game_and_seat_acknowledged_is_there_after_kill_9() {
    let dir = temp_dir("acks-kill");
    let config = write_config(&dir, "");
    let mut daemon = ChildDaemon::start_with(&config);
    let addr = daemon.addr;
    let hotseat = Client::login_as(addr, "hs").ok_game("NEW othello hotseat");
    let (_, _, joined) = new_and_join(addr, "othello", ["nj1", "nj2"]);
    let (_, _, paired) = seek_pair(addr, "othello", ["sp1", "sp2"]);
    let mut rem = Client::login_as(addr, "rem");
    let first = rem.ok_game("NEW othello as X vs bot:1");
    rem.ok("END");
    rem.expect_event(&format!("OVER {first} "));
    let rematch = rem.ok_game("REMATCH");
    // Each was answered OK: the kill comes right after the last answer.
    daemon.kill();
    let daemon = ChildDaemon::start_with(&config);
    let mut reader = Client::connect(daemon.addr);
    let expected = [
        (hotseat, "othello hs hs - playing"),
        (joined.game, "othello nj1 nj2 - playing"),
        (first, "othello rem bot:1 - over"),
        (rematch, "othello bot:1 rem - playing"),
    ];
    for (game, fields) in expected {
        let line = history_line(&mut reader, game);
        let wanted = format!("HISTORY {game} {fields}");
        assert!(line.starts_with(&wanted), "{line}, wanted {wanted}");
    }
    let line = history_line(&mut reader, paired.game);
    let seats = format!("{} {}", paired.black, paired.white);
    assert!(
        line.contains(&format!(" othello {seats} - playing")),
        "{line}"
    );
    drop(daemon);
    remove_temp_dir(&dir);
}
