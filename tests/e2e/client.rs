//! The `flip` client in its plain (non-terminal) mode against a real daemon, and
//! the example Python bot.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant};

use flipline_tests::{
    Client, HANG_GUARD, remove_temp_dir, start, temp_dir, test_config, wait_bounded,
    workspace_binary,
};

/// `flip` as a child process with piped stdin and stdout; killed when dropped.
struct FlipProcess {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    seen: Vec<String>,
}

impl FlipProcess {
    fn start(args: &[&str]) -> FlipProcess {
        let shared = std::env::temp_dir().join("flipline-e2e-client");
        FlipProcess::start_in(args, &shared)
    }

    /// `flip` with its data directory (history, local store) in `data_home`.
    fn start_in(args: &[&str], data_home: &std::path::Path) -> FlipProcess {
        let binary = workspace_binary("flip", "flip");
        let mut child = Command::new(&binary)
            .args(args)
            .env("NO_COLOR", "1")
            .env("XDG_DATA_HOME", data_home)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", binary.display()));
        let stdout = child.stdout.take().unwrap_or_else(|| panic!("no stdout"));
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let stdin = child.stdin.take();
        FlipProcess {
            child,
            stdin,
            lines,
            seen: Vec::new(),
        }
    }

    fn type_line(&mut self, line: &str) {
        let stdin = self
            .stdin
            .as_mut()
            .unwrap_or_else(|| panic!("stdin closed"));
        writeln!(stdin, "{line}").unwrap_or_else(|e| panic!("cannot type {line:?}: {e}"));
    }

    /// Reads output until a line satisfies `want` (at most the hang guard).
    fn until(&mut self, want: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + HANG_GUARD;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    self.seen.push(line.clone());
                    if want(&line) {
                        return line;
                    }
                }
                Err(_) => panic!(
                    "flip printed no expected line; it printed:\n{}",
                    self.seen.join("\n")
                ),
            }
        }
    }

    /// Closes stdin and waits (at most the hang guard) for the exit code.
    fn finish(&mut self) -> Option<i32> {
        self.stdin = None;
        let deadline = Instant::now() + HANG_GUARD;
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                return status.code();
            }
            assert!(Instant::now() < deadline, "flip did not exit");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for FlipProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn a_full_game_against_the_bot_typed_as_squares_alone() {
    let daemon = start(test_config());
    let addr = daemon.addr.to_string();
    let mut flip = FlipProcess::start(&["--server", &addr, "--name", "ann"]);
    flip.until(|l| l == "logged in as ann (guest)");
    flip.type_line("new othello6 as X vs bot:2");
    let mut moves = 0;
    loop {
        let line = flip.until(|l| l.starts_with("your move (X):") || l.starts_with("game 1 over:"));
        if line.starts_with("game 1 over:") {
            break;
        }
        let first = line.split_whitespace().nth(3).unwrap_or("pass");
        // A square typed alone is a move; `pass` is typed as it is.
        flip.type_line(if first == "no" { "pass" } else { first });
        moves += 1;
        assert!(moves < 40, "the game did not end");
    }
    assert!(moves >= 2, "too few moves: {moves}");
    assert!(
        flip.seen.iter().any(|l| l.starts_with("ann (X) played ")),
        "{:?}",
        flip.seen
    );
    assert!(flip.seen.iter().any(|l| l.starts_with("bot:2 (O) played ")));
    assert_eq!(flip.finish(), Some(0));
}

#[test]
fn the_board_of_a_known_position_renders_line_by_line() {
    let daemon = start(test_config());
    let addr = daemon.addr.to_string();
    let mut flip = FlipProcess::start(&["--server", &addr, "--name", "bea"]);
    flip.until(|l| l == "logged in as bea (guest)");
    flip.type_line("new othello hotseat from f5d6c3");
    flip.until(|l| l.starts_with("game 1 (othello): bea (X) vs bea (O)"));
    let expect = [
        "     a  b  c  d  e  f  g  h",
        "  1  .  .  .  .  .  .  .  .  1",
        "  2  .  .  .  .  .  .  .  .  2",
        "  3  .  .  X  *  .  *  .  .  3",
        "  4  .  .  .  X  X  *  .  .  4",
        "  5  .  .  .  O  X  X  *  .  5",
        "  6  .  .  .  O  .  .  .  .  6",
        "  7  .  .  .  .  .  .  .  .  7",
        "  8  .  .  .  .  .  .  .  .  8",
        "     a  b  c  d  e  f  g  h",
        "game 1  X bea 5  O bea 2  O to move (you)",
    ];
    let first = flip.until(|l| l.starts_with("     a  b"));
    let mut board = vec![first];
    for _ in 1..expect.len() {
        board.push(flip.until(|_| true));
    }
    assert_eq!(board, expect);
    // The input ends with the game in play on its turn: status 1.
    assert_eq!(flip.finish(), Some(1));
}

#[test]
fn a_lost_connection_is_reported_and_exits_non_zero() {
    let daemon = start(test_config());
    let addr = daemon.addr.to_string();
    let mut flip = FlipProcess::start(&["--server", &addr, "--name", "cid"]);
    flip.until(|l| l == "logged in as cid (guest)");
    daemon.stop().unwrap_or_else(|e| panic!("stop: {e}"));
    flip.until(|l| l.contains("lost"));
    let code = flip.finish();
    assert!(code.is_some_and(|c| c != 0), "exit code {code:?}");
}

/// The first square of a `your move (X): d3 c4 ...` line, or `pass`.
fn first_square(line: &str) -> String {
    match line.split_whitespace().nth(3) {
        Some("no") | None => "pass".to_string(),
        Some(square) => square.to_string(),
    }
}

#[test]
fn local_mode_resumes_an_unfinished_game_from_its_store() {
    let data = temp_dir("local");
    let mut flip = FlipProcess::start_in(&["--local", "--name", "loc"], &data);
    flip.until(|l| l.starts_with("local mode:"));
    flip.type_line("new othello as X vs bot:1");
    let turn = flip.until(|l| l.starts_with("your move (X):"));
    let first = first_square(&turn);
    flip.type_line(&first);
    flip.until(|l| l.starts_with("bot:1 (O) played "));
    flip.until(|l| l.starts_with("your move (X):"));
    flip.type_line("quit");
    assert_eq!(flip.finish(), Some(0));
    drop(flip);

    let mut flip = FlipProcess::start_in(&["--local", "--name", "loc"], &data);
    flip.until(|l| l == "resuming your unfinished othello game 1 against bot:1 (2 moves played)");
    flip.until(|l| l.starts_with("game 1 (othello): loc (X) vs bot:1 (O)"));
    let turn = flip.until(|l| l.starts_with("your move (X):"));
    let second = first_square(&turn);
    flip.type_line(&second);
    flip.until(|l| *l == format!("loc (X) played {second}"));
    flip.until(|l| l.starts_with("bot:1 (O) played "));
    flip.type_line("quit");
    assert_eq!(flip.finish(), Some(0));
    let store = data.join("flipline").join("local.db");
    let archive = flipd::store::Archive::open(&store).unwrap_or_else(|e| panic!("{e}"));
    let game = archive
        .game(1)
        .unwrap_or_else(|e| panic!("{e}"))
        .unwrap_or_else(|| panic!("no game 1"));
    assert_eq!(game.moves.len(), 4, "{game:?}");
    assert_eq!(game.moves[0].mv.to_string(), first);
    assert_eq!(game.moves[2].mv.to_string(), second);
    drop(archive);
    remove_temp_dir(&data);
}

#[test]
fn local_mode_waits_for_a_store_still_held_by_a_closing_daemon() {
    let data = temp_dir("local-wait");
    let dir = data.join("flipline");
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{e}"));
    // What a flipd still closing holds: the lock on the store's file.
    let held = std::fs::File::create(dir.join("local.db")).unwrap_or_else(|e| panic!("{e}"));
    held.lock().unwrap_or_else(|e| panic!("cannot lock: {e}"));
    let mut flip = FlipProcess::start_in(&["--local", "--name", "lw"], &data);
    flip.until(|l| l.starts_with("the local store is in use (a flip --local closing?): waiting"));
    drop(held);
    flip.until(|l| l.starts_with("local mode:"));
    flip.type_line("quit");
    assert_eq!(flip.finish(), Some(0));
    drop(flip);
    remove_temp_dir(&data);
}

#[test]
fn save_writes_the_game_and_load_plays_it_again() {
    let daemon = start(test_config());
    let addr = daemon.addr.to_string();
    let dir = temp_dir("save");
    let file = dir.join("game.txt");
    let mut flip = FlipProcess::start(&["--server", &addr, "--name", "sv"]);
    flip.until(|l| l == "logged in as sv (guest)");
    flip.type_line("new othello hotseat from f5d6");
    flip.until(|l| l.starts_with("your move (X):"));
    flip.type_line("c3");
    flip.until(|l| l == "sv (X) played c3");
    flip.type_line(&format!("save {}", file.display()));
    flip.until(|l| *l == format!("saved game 1 to {}", file.display()));
    let saved = std::fs::read_to_string(&file).unwrap_or_default();
    assert_eq!(saved, "1 othello sv sv - f5d6c3\n");
    flip.type_line("end");
    flip.until(|l| l.starts_with("game 1 over:"));
    flip.type_line(&format!("load {} as X vs bot:2", file.display()));
    flip.until(|l| l.starts_with("game 2 (othello): sv (X) vs bot:2 (O)"));
    flip.until(|l| l.starts_with("bot:2 (O) played "));
    flip.type_line("quit");
    assert_eq!(flip.finish(), Some(0));
    let mut reader = Client::connect(daemon.addr);
    let (data, _) = reader.ok("HISTORY 2");
    let line = data.last().cloned().unwrap_or_default();
    assert!(
        line.starts_with("HISTORY 2 othello sv bot:2 - playing - f5d6c3"),
        "{line}"
    );
    remove_temp_dir(&dir);
}

#[test]
fn a_finished_game_loaded_is_reviewed_position_by_position() {
    let daemon = start(test_config());
    let addr = daemon.addr.to_string();
    let dir = temp_dir("review");
    let file = dir.join("over.txt");
    // Nine moves that wipe white out: the server would refuse a game from them.
    std::fs::write(
        &file,
        "3 othello ann bob X:64-0:normal e6f4e3f6g5d6e7f5c5\n",
    )
    .unwrap_or_else(|e| panic!("cannot write {}: {e}", file.display()));
    let input = format!(
        "login rv\nload {} as X vs bot:1\ngoto 3\nprev\ngoto 99\nmoves\nlast\nplay\nfirst\n\
         play\nquit\n",
        file.display()
    );
    let (lines, code) = piped(&["--server", &addr], &input);
    assert_eq!(code, Some(0), "{lines:#?}");
    // The board, discs and moves under a position's heading.
    let after = |heading: &str| -> Vec<String> {
        let at = lines.iter().position(|l| l == heading);
        let at = at.unwrap_or_else(|| panic!("no {heading:?} in {lines:#?}"));
        lines.iter().skip(at + 1).take(13).cloned().collect()
    };
    let has = |lines: &[String], line: &str| lines.iter().any(|l| l == line);
    let starts = |start: &str| lines.iter().any(|l| l.starts_with(start));
    let third = after("review othello: move 3 of 9, X e3");
    assert!(has(&third, "  3  .  .  .  . [X] .  .  .  3"), "{third:#?}");
    assert!(has(&third, "X 5  O 2  O to move"), "{third:#?}");
    assert!(has(&third, "result: X wins 64-0"), "{third:#?}");
    let second = after("review othello: move 2 of 9, O f4");
    assert!(
        has(&second, "  4  .  .  .  O  O [O] .  .  4"),
        "{second:#?}"
    );
    assert!(starts("no move 99: the game has 9 moves"), "{lines:#?}");
    assert!(has(
        &lines,
        "1. e6 f4*  2. e3 f6  3. g5 d6  4. e7 f5  5. c5"
    ));
    assert!(starts("the game is over after move 9"), "{lines:#?}");
    // play from the start: a new game against the bot, nothing refused.
    assert!(
        starts("game 1 (othello): rv (X) vs bot:1 (O)"),
        "{lines:#?}"
    );
    remove_temp_dir(&dir);
}

/// Runs an example bot with `args` and waits for it (bounded).
fn example_bot(script: &str, args: &[&str]) -> std::process::Output {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../examples")
        .join(script);
    let child = Command::new("python3")
        .arg(&path)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run python3: {e}"));
    wait_bounded(child, Duration::from_secs(30))
}

#[test]
fn the_example_bots_explain_themselves_and_a_missing_daemon_in_a_sentence() {
    // A port nobody listens on: taken, then given back.
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .unwrap_or_else(|e| panic!("bind: {e}"));
    let closed = closed.to_string();
    for (script, extra) in [
        ("random_bot.py", &[][..]),
        ("challenge_bot.py", &["bot", "pw"][..]),
    ] {
        let help = example_bot(script, &["--help"]);
        let text = String::from_utf8_lossy(&help.stdout);
        assert!(help.status.success(), "{script} --help: {text}");
        assert!(
            text.contains("host[:port]"),
            "{script}: every argument described: {text}"
        );
        let mut args = vec![closed.as_str()];
        args.extend_from_slice(extra);
        let failed = example_bot(script, &args);
        let err = String::from_utf8_lossy(&failed.stderr);
        assert_eq!(failed.status.code(), Some(1), "{script}: {err}");
        assert!(!err.contains("Traceback"), "{script}: {err}");
        assert!(
            err.contains(&format!("cannot connect to {closed}")),
            "{script}: {err}"
        );
        assert_eq!(
            err.trim().lines().count(),
            1,
            "{script}: one sentence: {err}"
        );
    }
}

#[test]
fn the_example_python_bot_plays_its_games() {
    let daemon = start(test_config());
    let addr = daemon.addr.to_string();
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/random_bot.py");
    let bots: Vec<Child> = ["py1", "py2"]
        .iter()
        .map(|name| {
            Command::new("python3")
                .arg(&script)
                .args([addr.as_str(), name, "2", "tictactoe"])
                .stdout(Stdio::piped())
                .spawn()
                .unwrap_or_else(|e| panic!("cannot run python3: {e}"))
        })
        .collect();
    for bot in bots {
        let output = wait_bounded(bot, Duration::from_secs(30));
        let text = String::from_utf8_lossy(&output.stdout);
        assert!(output.status.success(), "{text}");
        let games: Vec<&str> = text.lines().filter(|l| l.starts_with("game ")).collect();
        assert_eq!(games.len(), 2, "{text}");
        assert!(games.iter().all(|g| g.contains("(normal)")), "{text}");
    }
}

/// The start position in OBF: its first cell, `-`, looks like a flag.
const START_OBF: &str = "---------------------------OX------XO--------------------------- X";

#[test]
fn every_subcommand_ends_quietly_on_a_closed_pipe() {
    let binary = workspace_binary("flip", "flip");
    let runs: [&[&str]; 3] = [
        &["perft", "5"],
        &["perft", "--board", START_OBF, "4"],
        &["analyze", START_OBF, "--level", "2"],
    ];
    for args in runs {
        // A pipe whose reader is gone before flip writes: its first line
        // meets a closed pipe.
        let (reader, writer) = std::io::pipe().unwrap_or_else(|e| panic!("pipe: {e}"));
        drop(reader);
        let child = Command::new(&binary)
            .args(args)
            .stdout(writer)
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start flip: {e}"));
        let output = wait_bounded(child, Duration::from_secs(30));
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(0), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
}

/// `flip` fed `input` whole, its stdin then closed: its output and status,
/// within 30 s.
fn piped(args: &[&str], input: &str) -> (Vec<String>, Option<i32>) {
    let binary = workspace_binary("flip", "flip");
    let data = temp_dir("piped");
    let mut child = Command::new(&binary)
        .args(args)
        .env("NO_COLOR", "1")
        .env("XDG_DATA_HOME", &data)
        .env_remove("FLIP_PASSWORD")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {}: {e}", binary.display()));
    if let Some(mut stdin) = child.stdin.take() {
        stdin
            .write_all(input.as_bytes())
            .unwrap_or_else(|e| panic!("cannot write: {e}"));
    }
    let output = wait_bounded(child, Duration::from_secs(30));
    remove_temp_dir(&data);
    let mut lines: Vec<String> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(str::to_string)
        .collect();
    lines.extend(
        String::from_utf8_lossy(&output.stderr)
            .lines()
            .map(str::to_string),
    );
    (lines, output.status.code())
}

#[test]
fn a_script_sees_its_game_end_after_end() {
    let daemon = start(test_config());
    let addr = daemon.addr.to_string();
    let input = "login p\nnew othello as X vs bot:1\nd3\nend\nquit\n";
    let (lines, code) = piped(&["--server", &addr], input);
    let over = lines.iter().position(|l| l.starts_with("game 1 over:"));
    assert!(over.is_some(), "{lines:?}");
    assert!(lines.iter().any(|l| l == "p (X) played d3"), "{lines:?}");
    assert_eq!(code, Some(0), "{lines:?}");
}

#[test]
fn a_script_stops_at_once_at_a_command_that_cannot_succeed() {
    let daemon = start(test_config());
    let addr = daemon.addr.to_string();
    let started = Instant::now();
    // Nobody has joined: the move is refused at once.
    let (lines, code) = piped(&["--server", &addr], "login q\nnew othello\nd3\nping\n");
    assert_eq!(code, Some(1), "{lines:?}");
    assert!(lines.iter().any(|l| l.starts_with("error 4")), "{lines:?}");
    assert!(!lines.iter().any(|l| l == "ok pong"), "{lines:?}");
    // After the game is over, likewise.
    let input = "login r\nnew othello as X vs bot:1\nend\nd3\n";
    let (lines, code) = piped(&["--server", &addr], input);
    assert_eq!(code, Some(1), "{lines:?}");
    assert!(
        lines.iter().any(|l| l.starts_with("game 2 over:")),
        "{lines:?}"
    );
    assert!(lines.iter().any(|l| l.starts_with("error 4")), "{lines:?}");
    assert!(
        started.elapsed() < HANG_GUARD,
        "hang guard: the scripts did not stop"
    );
}

#[test]
fn a_script_that_ends_with_its_move_to_make_says_so_and_exits_1() {
    let daemon = start(test_config());
    let addr = daemon.addr.to_string();
    let (lines, code) = piped(&["--server", &addr], "login s\nnew othello as X vs bot:1\n");
    assert_eq!(code, Some(1), "{lines:?}");
    assert!(
        lines
            .iter()
            .any(|l| l.contains("game 1 in play and your move")),
        "{lines:?}"
    );
}

#[test]
fn quit_and_the_end_of_input_end_their_last_line() {
    let daemon = start(test_config());
    let addr = daemon.addr.to_string();
    let binary = workspace_binary("flip", "flip");
    let child = Command::new(&binary)
        .args(["--server", &addr, "--name", "t"])
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start flip: {e}"));
    let output = wait_bounded(child, Duration::from_secs(30));
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(text.ends_with('\n'), "{text:?}");
    assert_eq!(output.status.code(), Some(0), "{text}");
}

#[test]
fn a_script_takes_back_its_move_with_undo_and_sees_the_position_before_going_on() {
    let daemon = start(test_config());
    let addr = daemon.addr.to_string();
    let input = "login u\nnew othello as X vs bot:1\nd3\nundo\nmoves\nf5\nend\n";
    let (lines, code) = piped(&["--server", &addr], input);
    assert_eq!(code, Some(0), "{lines:?}");
    // The bot's reply may have come before the take-back (then both go) or
    // not (then only the script's move does).
    let undone = lines
        .iter()
        .position(|l| l == "2 moves taken back in game 1" || l == "1 move taken back in game 1");
    let undone = undone.unwrap_or_else(|| panic!("{lines:?}"));
    // The position taken back is shown before `moves` runs: the board, and
    // the move to make again.
    let after: Vec<&String> = lines.iter().skip(undone).collect();
    let turn = after.iter().position(|l| l.starts_with("your move (X): "));
    let record = after
        .iter()
        .position(|l| l.starts_with("game 1 (othello): "));
    assert!(turn < record && turn.is_some(), "{after:?}");
    assert!(lines.iter().any(|l| l == "u (X) played f5"), "{lines:?}");
    assert!(
        lines.iter().any(|l| l.starts_with("game 1 over:")),
        "{lines:?}"
    );
}

#[test]
fn the_example_challenge_bots_play_rated_games_from_random_starts() {
    let daemon = start(test_config());
    let addr = daemon.addr.to_string();
    let script =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/challenge_bot.py");
    let bot = |args: &[&str]| {
        Command::new("python3")
            .arg(&script)
            .arg(&addr)
            .args(args)
            .stdout(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot run python3: {e}"))
    };
    let host = bot(&["pb1", "pw-one", "--games", "2"]);
    // The challenger starts once its opponent is online.
    let mut watcher = Client::connect(daemon.addr);
    let deadline = Instant::now() + HANG_GUARD;
    while !watcher
        .ok("WHO")
        .0
        .iter()
        .any(|l| l.starts_with("PLAYER pb1 "))
    {
        assert!(Instant::now() < deadline, "pb1 never logged in");
        std::thread::sleep(Duration::from_millis(20));
    }
    let guest = bot(&[
        "pb2",
        "pw-two",
        "--games",
        "2",
        "--challenge",
        "pb1",
        "--rated",
        "--random-start",
        "4",
    ]);
    for child in [host, guest] {
        let output = wait_bounded(child, Duration::from_secs(60));
        let text = String::from_utf8_lossy(&output.stdout);
        assert!(output.status.success(), "{text}");
        let games = text.lines().filter(|l| l.contains(": winner ")).count();
        let rated = text.lines().filter(|l| l.contains(": rated ")).count();
        assert_eq!((games, rated), (2, 2), "{text}");
    }
    let (data, _) = watcher.ok("TOP othello");
    assert_eq!(data.len(), 2, "{data:?}");
    assert!(data.iter().all(|l| l.ends_with(" bot")), "{data:?}");
}

#[test]
fn a_script_makes_joins_and_shows_a_tournament_in_words() {
    let daemon = start(test_config());
    let addr = daemon.addr.to_string();
    let input = "login ann pw-ann-tourney\ntourney new swiss rounds 1 clock 1+0\n\
                 tourney join 1\ntourney list\ntourney show 1\nquit\n";
    let (lines, code) = piped(&["--server", &addr], input);
    assert_eq!(code, Some(0), "{lines:?}");
    let listed = "tournament 1: swiss othello, clock 1+0, 1 player, open: tourney join 1";
    assert!(lines.iter().any(|l| l == listed), "{lines:?}");
    let standing = lines
        .iter()
        .find(|l| l.contains("ann") && l.contains("points"));
    let standing = standing.unwrap_or_else(|| panic!("no standing: {lines:?}"));
    assert!(standing.trim_start().starts_with("1. ann"), "{standing}");
    assert!(standing.ends_with("discs +0"), "{standing}");
}
