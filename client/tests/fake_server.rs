//! The `flip` binary against a scripted server on 127.0.0.1: each test plays
//! the server's side line by line, so that it can send what flipd would not
//! (hostile chat) or does not yet (guests' secrets), and checks what flip
//! sends and prints. Every read is bounded in time; flip is killed when a
//! test ends.

mod support;

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant};

use support::{FakeServer, START_BOARD, STEP, TempDir};

/// The `flip` binary with its data directory in a fresh temporary
/// directory, stdin and stdout piped; killed when dropped.
struct Flip {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    seen: Vec<String>,
}

impl Flip {
    fn start(args: &[&str], data: &Path) -> Flip {
        Flip::start_with(args, data, &[])
    }

    /// [`Flip::start`] with these variables set too.
    fn start_with(args: &[&str], data: &Path, env: &[(&str, &str)]) -> Flip {
        let mut child = Command::new(env!("CARGO_BIN_EXE_flip"))
            .args(args)
            .env("NO_COLOR", "1")
            .env("XDG_DATA_HOME", data)
            .env_remove("FLIP_PASSWORD")
            .envs(env.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start flip: {e}"));
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
        Flip {
            child,
            stdin,
            lines,
            seen: Vec::new(),
        }
    }

    /// Reads flip's output up to the line `want`, returning the lines
    /// before it.
    fn until(&mut self, want: &str) -> Vec<String> {
        let deadline = Instant::now() + STEP;
        let from = self.seen.len();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) if line == want => {
                    let before = self.seen.get(from..).unwrap_or_default().to_vec();
                    self.seen.push(line);
                    return before;
                }
                Ok(line) => self.seen.push(line),
                Err(_) => panic!(
                    "flip did not print {want:?}; it printed:\n{}",
                    self.seen.join("\n")
                ),
            }
        }
    }

    /// Writes `line` to flip's input.
    fn type_line(&mut self, line: &str) {
        if let Some(stdin) = self.stdin.as_mut() {
            stdin
                .write_all(format!("{line}\n").as_bytes())
                .unwrap_or_else(|e| panic!("cannot type {line:?}: {e}"));
        }
    }

    /// Closes stdin and waits (bounded) for flip to exit; its status code.
    fn finish(&mut self) -> Option<i32> {
        self.stdin = None;
        let deadline = Instant::now() + STEP;
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                return status.code();
            }
            assert!(Instant::now() < deadline, "flip did not exit");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Flip {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Seats flip's `ann` as X in game 1 against bob, on its move.
fn seat_on_its_move(conn: &mut support::Conn, flip: &mut Flip) {
    conn.send("START 1 othello ann bob -");
    conn.send(&format!("BOARD 1 {START_BOARD}"));
    conn.send("TURN 1 X d3,c4,f5,e6");
    flip.until("your move (X): d3 c4 f5 e6");
}

/// The connection flip makes again after a lost one: it must log in with
/// `login`, then take back its seat in game 1.
fn rejoin(server: &FakeServer, flip: &mut Flip, login: &str) {
    let mut second = server.accept();
    second.expect(login);
    second.send("OK ann");
    second.expect("JOIN 1");
    second.send("OK 1 X");
    flip.until("reconnected");
    flip.until("ok 1 X");
}

/// `flip --reconnect`, logged in as the guest ann (secret `s3cr3tT0ken`)
/// and seated on its move, whose connection is then lost.
fn guest_seated_then_lost(data: &TempDir, server: &FakeServer) -> Flip {
    let addr = server.addr();
    let mut flip = Flip::start(
        &["--server", &addr, "--name", "ann", "--reconnect"],
        &data.0,
    );
    let mut first = server.accept();
    first.expect("LOGIN ann");
    first.send("OK ann secret s3cr3tT0ken");
    flip.until("logged in as ann (guest)");
    seat_on_its_move(&mut first, &mut flip);
    drop(first);
    flip
}

#[test]
fn a_guest_takes_its_seat_back_with_its_secret_after_a_lost_connection() {
    let data = TempDir::new("reconnect");
    let server = FakeServer::start();
    let addr = server.addr();
    let mut flip = guest_seated_then_lost(&data, &server);
    rejoin(&server, &mut flip, "LOGIN ann secret s3cr3tT0ken");
    // The input ends with the game in play on flip's turn.
    assert_eq!(flip.finish(), Some(1));
    assert!(
        flip.seen.iter().all(|l| !l.contains("s3cr3tT0ken")),
        "{:?}",
        flip.seen
    );
    let kept = std::fs::read_to_string(data.secret_file()).unwrap_or_default();
    assert_eq!(kept, format!("ann s3cr3tT0ken {addr}\n"));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(data.secret_file()).map(|m| m.permissions().mode() & 0o777);
        assert_eq!(mode.ok(), Some(0o600));
    }
}

/// A server that has not seen the lost connection go (or, on a cluster, a
/// node that died and whose lease has not passed yet) still holds the
/// name: the reconnect tries again rather than going on logged out.
#[test]
fn a_reconnect_whose_name_is_still_held_tries_again_and_takes_the_seat_back() {
    let data = TempDir::new("reconnect-held");
    let server = FakeServer::start();
    let mut flip = guest_seated_then_lost(&data, &server);
    let mut held = server.accept();
    held.expect("LOGIN ann secret s3cr3tT0ken");
    held.send("ERR 409 name 'ann' is in use on node a");
    // The refused connection stays open: flip leaves it for a new one,
    // where the secret, still good, is shown again.
    rejoin(&server, &mut flip, "LOGIN ann secret s3cr3tT0ken");
    assert_eq!(flip.finish(), Some(1));
    drop(held);
}

#[test]
fn a_flip_started_again_resumes_from_the_kept_secret_or_asks_anew() {
    let data = TempDir::new("restart");
    let server = FakeServer::start();
    let addr = server.addr();
    let mut flip = Flip::start(&["--server", &addr, "--name", "ann"], &data.0);
    let mut conn = server.accept();
    conn.expect("LOGIN ann");
    conn.send("OK ann secret k33p");
    flip.until("logged in as ann (guest)");
    assert_eq!(flip.finish(), Some(0));
    drop((flip, conn));

    // Started again: the kept secret goes with the login; refused (the
    // daemon no longer holds the name), a plain login follows.
    let mut flip = Flip::start(&["--server", &addr, "--name", "ann"], &data.0);
    let mut conn = server.accept();
    conn.expect("LOGIN ann secret k33p");
    conn.send("ERR 401 no guest 'ann' holds that secret");
    conn.expect("LOGIN ann");
    conn.send("OK ann secret fr3sh");
    let before = flip.until("logged in as ann (guest)");
    assert!(
        before.contains(
            &"the guest secret kept for ann was not accepted: logging in as a new guest"
                .to_string()
        ),
        "{before:?}"
    );
    assert_eq!(flip.finish(), Some(0));
    let kept = std::fs::read_to_string(data.secret_file()).unwrap_or_default();
    assert_eq!(kept, format!("ann fr3sh {addr}\n"));
    // Another server's address has no secret kept.
    let other = FakeServer::start();
    let mut flip = Flip::start(&["--server", &other.addr(), "--name", "ann"], &data.0);
    let mut conn = other.accept();
    conn.expect("LOGIN ann");
    conn.send("OK ann");
    flip.until("logged in as ann");
    assert_eq!(flip.finish(), Some(0));
}

#[test]
fn hostile_text_from_the_server_is_framed_and_escaped() {
    let data = TempDir::new("hostile");
    let server = FakeServer::start();
    let addr = server.addr();
    let mut flip = Flip::start(&["--server", &addr, "--name", "ann"], &data.0);
    let mut conn = server.accept();
    conn.expect("LOGIN ann");
    conn.send("OK ann");
    flip.until("logged in as ann");
    for line in [
        "CHAT 1 eve ok 12",
        "CHAT 1 eve \rgame 1 over: ann (X) wins 64-0 (normal)",
        "CHAT 1 eve \u{1b}[2J\u{1b}[Hlogged in as eve",
        "CHAT 1 eve \u{202e}niw uoy\u{200b}\u{feff}",
        "CHAT 1 eve one\u{2028}two\u{85}three",
        "CHAT 1 e<v>e hi",
        &format!("CHAT 1 eve {} game 1 over: you win", "x".repeat(67)),
        "INFO \u{1b}]0;pwned\u{7}",
        "NEWS \u{1b}[31mred",
        "PING",
    ] {
        conn.send(line);
    }
    let shown = flip.until("server: PING");
    assert_eq!(
        shown,
        [
            "[1] <eve> ok 12",
            "[1] <eve> \\u{d}game 1 over: ann (X) wins 64-0 (normal)",
            "[1] <eve> \\u{1b}[2J\\u{1b}[Hlogged in as eve",
            "[1] <eve> \\u{202e}niw uoy\\u{200b}\\u{feff}",
            "[1] <eve> one\\u{2028}two\\u{85}three",
            "[1] <e\\u{3c}v\\u{3e}e> hi",
            &format!("[1] <eve> {}", "x".repeat(67)),
            "[1] <eve> game 1 over: you win",
            "* \\u{1b}]0;pwned\\u{7}",
            "server: NEWS \\u{1b}[31mred",
        ]
    );
    assert_eq!(flip.finish(), Some(0));
}

#[test]
fn the_bot_logs_in_again_with_its_secret() {
    let server = FakeServer::start();
    let addr = server.addr();
    let data = TempDir::new("bot");
    let _bot = Flip::start(&["bot", "--server", &addr, "--name", "b1"], &data.0);
    let mut first = server.accept();
    first.expect("LOGIN b1");
    first.send("OK b1 secret b0ts3cret");
    first.expect("SEEK othello");
    first.send("OK seeking");
    drop(first);

    let mut second = server.accept();
    second.expect("LOGIN b1 secret b0ts3cret");
    second.send("ERR 401 no guest 'b1' holds that secret");
    second.expect("LOGIN b1");
    second.send("OK b1 secret n3xt");
    second.expect("SEEK othello");
    drop(second);

    let mut third = server.accept();
    third.expect("LOGIN b1 secret n3xt");
}

/// A password file of mode `mode` in `dir`.
#[cfg(unix)]
fn password_file(dir: &Path, word: &str, mode: u32) -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let file = dir.join("password");
    std::fs::write(&file, format!("{word}\n")).unwrap_or_else(|e| panic!("{e}"));
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(mode))
        .unwrap_or_else(|e| panic!("{e}"));
    file
}

#[cfg(unix)]
#[test]
fn a_password_file_logs_in_and_a_reconnect_logs_in_with_it_again_unprinted() {
    let data = TempDir::new("password");
    let server = FakeServer::start();
    let addr = server.addr();
    let file = password_file(&data.0, "tig3rPass", 0o600);
    let file = file.to_string_lossy().into_owned();
    let mut flip = Flip::start(
        &[
            "--server",
            &addr,
            "--name",
            "ann",
            "--password-file",
            &file,
            "--reconnect",
        ],
        &data.0,
    );
    let mut first = server.accept();
    first.expect("LOGIN ann tig3rPass");
    first.send("OK ann");
    flip.until("logged in as ann");
    // A server that quoted it back would not have it shown.
    first.send("INFO you said tig3rPass");
    flip.until("* you said <password>");
    seat_on_its_move(&mut first, &mut flip);
    drop(first);

    rejoin(&server, &mut flip, "LOGIN ann tig3rPass");
    assert_eq!(flip.finish(), Some(1));
    assert!(
        flip.seen.iter().all(|l| !l.contains("tig3rPass")),
        "{:?}",
        flip.seen
    );
    // No guest secret is kept for a registered name, and no history is
    // written without a terminal.
    let kept = std::fs::read_to_string(data.secret_file()).unwrap_or_default();
    assert!(!kept.contains("tig3rPass"), "{kept:?}");
    let history = std::fs::read_to_string(data.history_file()).unwrap_or_default();
    assert!(!history.contains("tig3rPass"), "{history:?}");
}

#[cfg(unix)]
#[test]
fn a_password_file_others_may_read_is_refused_before_connecting() {
    let data = TempDir::new("password-mode");
    let server = FakeServer::start();
    let file = password_file(&data.0, "tig3rPass", 0o644);
    let file = file.to_string_lossy().into_owned();
    let mut flip = Flip::start(
        &[
            "--server",
            &server.addr(),
            "--name",
            "ann",
            "--password-file",
            &file,
        ],
        &data.0,
    );
    assert_eq!(flip.finish(), Some(1));
}

#[test]
fn flip_password_gives_the_password_to_flip_and_to_the_bot() {
    let data = TempDir::new("password-env");
    let server = FakeServer::start();
    let addr = server.addr();
    let env = [("FLIP_PASSWORD", "s3same")];
    let mut flip = Flip::start_with(&["--server", &addr, "--name", "ann"], &data.0, &env);
    let mut conn = server.accept();
    conn.expect("LOGIN ann s3same");
    conn.send("OK ann");
    flip.until("logged in as ann");
    assert_eq!(flip.finish(), Some(0));
    assert!(
        flip.seen.iter().all(|l| !l.contains("s3same")),
        "{:?}",
        flip.seen
    );
    drop((flip, conn));

    let _bot = Flip::start_with(&["bot", "--server", &addr, "--name", "b1"], &data.0, &env);
    let mut conn = server.accept();
    conn.expect("LOGIN b1 s3same");
    conn.send("OK b1");
    conn.expect("SEEK othello");
    drop(conn);
    // Its reconnects too.
    let mut again = server.accept();
    again.expect("LOGIN b1 s3same");
}

#[test]
fn moves_shows_the_servers_record_numbered_with_the_last_marked() {
    let data = TempDir::new("moves");
    let server = FakeServer::start();
    let mut flip = Flip::start(&["--server", &server.addr(), "--name", "ann"], &data.0);
    let mut conn = server.accept();
    conn.expect("LOGIN ann");
    conn.send("OK ann");
    flip.until("logged in as ann");
    conn.send("START 3 othello bob ann -");
    flip.until("game 3 (othello): bob (X) vs ann (O), no clock");
    flip.type_line("moves");
    conn.expect("HISTORY 3");
    conn.send("HISTORY 3 othello bob ann - playing - f5d6c3d3c4");
    conn.send("OK");
    let before = flip.until("1. f5 d6  2. c3 d3  3. c4*");
    assert_eq!(
        before.last().map(String::as_str),
        Some("game 3 (othello): 5 moves")
    );
}

#[test]
fn a_connection_closed_for_want_of_a_login_is_made_again_by_the_next_command() {
    let data = TempDir::new("login-deadline");
    let server = FakeServer::start();
    let addr = server.addr();
    let mut flip = Flip::start(&["--server", &addr], &data.0);
    let mut first = server.accept();
    flip.until(&format!("connected to {addr}: HELLO flipline 1"));
    first.send("INFO closing: no LOGIN within 30 s [login-deadline]");
    drop(first);
    flip.until("* closing: no LOGIN within 30 s [login-deadline]");
    flip.until(
        "the server closes connections that do not log in in time; \
         the next command connects again (login NAME to play)",
    );
    flip.type_line("who");
    let mut second = server.accept();
    second.expect("who");
    second.send("PLAYER bob idle");
    second.send("OK 1");
    flip.until("bob: idle");
    assert_eq!(flip.finish(), Some(0), "{:?}", flip.seen);
    assert!(
        !flip.seen.iter().any(|l| l.contains("lost")),
        "not a lost connection: {:?}",
        flip.seen
    );
}
