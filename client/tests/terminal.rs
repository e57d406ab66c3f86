//! The interactive `flip` in a real pseudo-terminal, against a scripted
//! server: what is typed goes in as keys, and what flip writes goes through a
//! terminal emulator (vt100), so that the tests check the screen a person
//! sees, and the terminal's mode after flip has gone. Every wait is bounded.

mod support;

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::OwnedFd;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use nix::pty::{Winsize, openpty};
use nix::sys::signal::{Signal, kill};
use nix::sys::termios::{LocalFlags, tcgetattr};
use nix::unistd::Pid;

use support::{Conn, FakeServer, STEP, TempDir};

/// `flip` on the slave side of a pty of 24 rows and 80 columns; killed when
/// dropped.
struct Pty {
    child: Child,
    master: File,
    /// Kept open, to read the terminal's mode after flip has exited.
    slave: OwnedFd,
    screen: Arc<Mutex<vt100::Parser>>,
    /// Every byte flip wrote, for what the emulator does not keep (dimness).
    written: Arc<Mutex<Vec<u8>>>,
}

impl Pty {
    fn start(args: &[&str], data: &Path, env: &[(&str, &str)]) -> Pty {
        let size = Winsize {
            ws_row: 24,
            ws_col: 80,
            ws_xpixel: 0,
            ws_ypixel: 0,
        };
        let pty = openpty(Some(&size), None).unwrap_or_else(|e| panic!("openpty: {e}"));
        let stdio = || Stdio::from(pty.slave.try_clone().unwrap_or_else(|e| panic!("{e}")));
        let mut command = Command::new(env!("CARGO_BIN_EXE_flip"));
        command
            .args(args)
            .env("XDG_DATA_HOME", data)
            .env("TERM", "xterm")
            .env("NO_COLOR", "1")
            .env_remove("FLIP_PASSWORD")
            .stdin(stdio())
            .stdout(stdio())
            .stderr(stdio());
        for (key, value) in env {
            command.env(key, value);
        }
        let child = command
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start flip: {e}"));
        let master = File::from(pty.master);
        let screen = Arc::new(Mutex::new(vt100::Parser::new(24, 80, 0)));
        let mut output = master.try_clone().unwrap_or_else(|e| panic!("{e}"));
        let parser = Arc::clone(&screen);
        let written = Arc::new(Mutex::new(Vec::new()));
        let bytes = Arc::clone(&written);
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            // Ends with EIO once flip and every copy of the slave are gone.
            while let Ok(n) = output.read(&mut buf) {
                if n == 0 {
                    break;
                }
                let chunk = buf.get(..n).unwrap_or_default();
                let mut parser = parser.lock().unwrap_or_else(|e| e.into_inner());
                parser.process(chunk);
                let mut bytes = bytes.lock().unwrap_or_else(|e| e.into_inner());
                bytes.extend_from_slice(chunk);
            }
        });
        Pty {
            child,
            master,
            slave: pty.slave,
            screen,
            written,
        }
    }

    /// Types `keys` (`\r` is Enter) in one write, as a paste would come.
    fn type_keys(&mut self, keys: &str) {
        self.master
            .write_all(keys.as_bytes())
            .unwrap_or_else(|e| panic!("cannot type {keys:?}: {e}"));
    }

    /// The screen's rows, trailing blanks cut.
    fn rows(&self) -> Vec<String> {
        let parser = self.screen.lock().unwrap_or_else(|e| e.into_inner());
        parser
            .screen()
            .rows(0, 80)
            .map(|row| row.trim_end().to_string())
            .collect()
    }

    /// What flip wrote, as text.
    fn written(&self) -> String {
        let bytes = self.written.lock().unwrap_or_else(|e| e.into_inner());
        String::from_utf8_lossy(&bytes).into_owned()
    }

    /// The row the cursor is on, and its column.
    fn cursor(&self) -> (u16, u16) {
        let parser = self.screen.lock().unwrap_or_else(|e| e.into_inner());
        parser.screen().cursor_position()
    }

    /// Waits until the screen satisfies `want`; its rows then.
    fn until(&self, what: &str, want: impl Fn(&[String]) -> bool) -> Vec<String> {
        let deadline = Instant::now() + STEP;
        loop {
            let rows = self.rows();
            if want(&rows) {
                return rows;
            }
            assert!(
                Instant::now() < deadline,
                "the screen never showed {what}; it shows:\n{}",
                rows.join("\n")
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Waits until some row is `line`.
    fn until_row(&self, line: &str) -> Vec<String> {
        self.until(&format!("{line:?}"), |rows| rows.iter().any(|r| r == line))
    }

    /// Waits (bounded) for flip to exit; its status code.
    fn exit_code(&mut self) -> Option<i32> {
        let deadline = Instant::now() + STEP;
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                return status.code();
            }
            assert!(Instant::now() < deadline, "flip did not exit");
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Whether the terminal echoes and edits lines, as a shell expects.
    fn is_sane(&self) -> bool {
        let mode = tcgetattr(&self.slave).unwrap_or_else(|e| panic!("tcgetattr: {e}"));
        mode.local_flags
            .contains(LocalFlags::ECHO | LocalFlags::ICANON | LocalFlags::ISIG)
    }

    fn signal(&self, signal: Signal) {
        let pid = Pid::from_raw(i32::try_from(self.child.id()).unwrap_or(0));
        kill(pid, signal).unwrap_or_else(|e| panic!("kill: {e}"));
    }
}

impl Drop for Pty {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// flip started on a fresh server and data directory, logged in as `name`
/// (a guest).
fn logged_in(name: &str, tag: &str) -> (Pty, Conn, FakeServer, TempDir) {
    logged_in_with(name, tag, &[], &format!("OK {name}"))
}

/// [`logged_in`] with flags `more`, the `LOGIN` answered `ok`.
fn logged_in_with(
    name: &str,
    tag: &str,
    more: &[&str],
    ok: &str,
) -> (Pty, Conn, FakeServer, TempDir) {
    let data = TempDir::new(tag);
    let server = FakeServer::start();
    let addr = server.addr();
    let mut args = vec!["--server", &addr, "--name", name];
    args.extend_from_slice(more);
    let pty = Pty::start(&args, &data.0, &[]);
    let mut conn = server.accept();
    conn.expect(&format!("LOGIN {name}"));
    conn.send(ok);
    let logged_in = format!("logged in as {name}");
    pty.until(&logged_in, |rows| {
        rows.iter().any(|r| r.starts_with(&logged_in))
    });
    pty.until_row("flip>");
    (pty, conn, server, data)
}

/// flip started on a fresh server and data directory, not logged in, its
/// prompt up.
fn at_a_prompt(tag: &str) -> (Pty, Conn, FakeServer, TempDir) {
    let data = TempDir::new(tag);
    let server = FakeServer::start();
    let pty = Pty::start(&["--server", &server.addr()], &data.0, &[]);
    let conn = server.accept();
    pty.until_row("flip>");
    (pty, conn, server, data)
}

#[test]
fn lines_from_the_server_stay_on_screen_above_what_is_being_typed() {
    let (mut pty, mut conn, _server, _data) = logged_in("bob", "stay");
    pty.type_keys("who");
    pty.until_row("flip> who");
    // Lines arriving while a line is typed, several at once.
    conn.send("INFO bea disconnected: the seat is kept for 60s");
    conn.send("CHAT 1 bea gg");
    pty.until_row("[1] <bea> gg");
    let rows = pty.until_row("flip> who");
    let at = |text: &str| rows.iter().position(|r| r == text);
    let info = at("* bea disconnected: the seat is kept for 60s");
    let chat = at("[1] <bea> gg");
    let prompt = at("flip> who");
    assert!(info < chat && chat < prompt && info.is_some(), "{rows:?}");
    pty.type_keys("\r");
    conn.expect("who");
    // A multi-line answer, line by line; nothing written is erased.
    conn.send("PLAYER bob idle");
    conn.send("PLAYER bea playing 1");
    conn.send("OK 2");
    let rows = pty.until_row("ok 2");
    let shown: Vec<&String> = rows
        .iter()
        .filter(|r| !r.is_empty() && !r.starts_with("flip>"))
        .collect();
    let tail: Vec<&str> = shown
        .iter()
        .rev()
        .take(3)
        .rev()
        .map(|s| s.as_str())
        .collect();
    assert_eq!(tail, ["bob: idle", "bea: playing 1", "ok 2"], "{rows:?}");
    assert!(rows.iter().any(|r| r == "logged in as bob"), "{rows:?}");
    assert!(rows.iter().any(|r| r == "flip> who"), "{rows:?}");
}

#[test]
fn lines_typed_ahead_or_pasted_run_in_order_one_command_each() {
    let (mut pty, mut conn, _server, _data) = logged_in("cy", "ahead");
    pty.type_keys("ping\rwho\r");
    conn.expect("ping");
    conn.expect("who");
    conn.send("OK pong");
    conn.send("OK 0");
    // A pasted block of three lines: three commands, no Enter needed.
    pty.type_keys("list\nhelp\npING\n");
    conn.expect("list");
    conn.send("OK 0");
    conn.expect("pING");
    conn.send("OK pong");
    let rows = pty.until_row("ok pong");
    let at = |text: &str| rows.iter().position(|r| r.starts_with(text));
    let help = at("  variants:");
    assert!(help.is_some(), "{rows:?}");
    assert!(
        help < at("flip> pING") && at("flip> pING") < at("ok pong"),
        "{rows:?}"
    );
}

#[test]
fn a_daemon_stopping_leaves_the_terminal_sane_and_says_why() {
    let (mut pty, mut conn, server, _data) =
        logged_in_with("dee", "lost", &["--no-reconnect"], "OK dee");
    pty.type_keys("half typed");
    pty.until_row("flip> half typed");
    conn.send("INFO shutting down");
    drop(conn);
    let lost = format!("connection to {} lost", server.addr());
    let rows = pty.until_row(&lost);
    assert!(rows.iter().any(|r| r == "* shutting down"), "{rows:?}");
    assert_eq!(pty.exit_code(), Some(2));
    assert!(pty.is_sane(), "the terminal was left without echo");
    // The cursor is at the start of a line of its own, for the shell.
    assert_eq!(pty.cursor().1, 0, "{:?}", pty.rows());
}

/// A guest's secret, as the server gives it.
const SECRET: &str = "0123456789abcdef0123456789abcdef";

#[test]
fn a_daemon_restarted_is_reconnected_to_and_the_kept_seat_taken_back() {
    let ok = format!("OK hal secret {SECRET}");
    let (mut pty, mut conn, server, _data) = logged_in_with("hal", "restart", &[], &ok);
    let addr = server.addr();
    conn.send("START 4 othello hal bob -");
    conn.send(&format!("BOARD 4 {}", support::START_BOARD));
    conn.send("TURN 4 X d3,c4,f5,e6");
    pty.until_row("your move (X): d3 c4 f5 e6");
    // The daemon stops; nothing listens until it is started again.
    conn.send("INFO shutting down");
    drop(server);
    drop(conn);
    pty.until_row(&format!(
        "connection to {addr} lost; reconnecting (quit leaves)"
    ));
    pty.until("a status line for a failed try", |rows| {
        rows.iter()
            .any(|r| r.starts_with(&format!("reconnecting to {addr}: try 1 failed (")))
    });
    // What is typed meanwhile is not sent, and does not end the client.
    pty.type_keys("who\r");
    pty.until_row("not sent: not connected: the connection is being made again");
    let server = FakeServer::start_at(&addr);
    let mut conn = server.accept();
    conn.expect(&format!("LOGIN hal secret {SECRET}"));
    conn.send(&format!("OK hal secret {SECRET} seat 4"));
    conn.expect("JOIN 4");
    conn.send("OK 4 X");
    conn.send("START 4 othello hal bob -");
    conn.send(&format!("BOARD 4 {}", support::START_BOARD));
    conn.send("TURN 4 X d3,c4,f5,e6");
    let rows = pty.until_row("reconnected");
    assert!(
        rows.iter()
            .any(|r| r == "your seat in game 4 was kept: taking it back"),
        "{rows:?}"
    );
    pty.type_keys("d3\r");
    conn.expect("MOVE d3");
    pty.type_keys("quit\r");
    conn.expect("QUIT");
    conn.send("OK bye");
    assert_eq!(pty.exit_code(), Some(0));
    assert!(pty.is_sane());
}

#[test]
fn a_node_lost_is_followed_by_a_reconnect_to_the_next_address_given() {
    let data = TempDir::new("nodes");
    let (a, b) = (FakeServer::start(), FakeServer::start());
    let servers = format!("{},{}", a.addr(), b.addr());
    let args = ["--server", &servers, "--name", "hal"];
    let mut pty = Pty::start(&args, &data.0, &[]);
    let mut conn = a.accept();
    conn.expect("LOGIN hal");
    conn.send(&format!("OK hal secret {SECRET}"));
    pty.until_row(&format!(
        "connected to {}: HELLO flipline 1; type help for the commands",
        a.addr()
    ));
    pty.until_row("flip>");
    // The node goes; the other node is reached at once, with the same login.
    let gone = a.addr();
    drop(a);
    drop(conn);
    pty.until_row(&format!(
        "connection to {gone} lost; reconnecting (quit leaves)"
    ));
    let mut conn = b.accept();
    conn.expect(&format!("LOGIN hal secret {SECRET}"));
    conn.send(&format!("OK hal secret {SECRET}"));
    pty.until_row(&format!("reconnected, to {}", b.addr()));
    pty.type_keys("quit\r");
    conn.expect("QUIT");
    conn.send("OK bye");
    assert_eq!(pty.exit_code(), Some(0));
}

#[test]
fn a_signal_leaves_the_terminal_sane() {
    for (signal, code) in [(Signal::SIGTERM, 143), (Signal::SIGHUP, 129)] {
        let (pty, _conn, _server, _data) = logged_in("eve", "signal");
        pty.signal(signal);
        let mut pty = pty;
        assert_eq!(pty.exit_code(), Some(code), "{signal}");
        assert!(pty.is_sane(), "{signal} left the terminal without echo");
    }
}

#[test]
fn ctrl_c_clears_the_line_and_twice_on_an_empty_line_leaves() {
    let (mut pty, mut conn, _server, _data) = logged_in("fay", "ctrlc");
    pty.type_keys("somethin");
    pty.until_row("flip> somethin");
    pty.type_keys("\x03");
    pty.until(
        "a fresh prompt",
        |rows| matches!(rows.iter().rfind(|r| !r.is_empty()), Some(r) if r == "flip>"),
    );
    pty.type_keys("\x03");
    pty.until_row("(to leave: quit, Ctrl-D, or Ctrl-C again)");
    pty.type_keys("\x03");
    conn.expect("QUIT");
    conn.send("OK bye");
    assert_eq!(pty.exit_code(), Some(0));
    assert!(pty.is_sane());
}

#[test]
fn quit_says_goodbye_on_a_line_of_its_own() {
    let (mut pty, mut conn, _server, _data) = logged_in("gus", "quit");
    pty.type_keys("quit\r");
    conn.expect("QUIT");
    conn.send("OK bye");
    pty.until_row("ok bye");
    assert_eq!(pty.exit_code(), Some(0));
    assert_eq!(pty.cursor().1, 0, "{:?}", pty.rows());
    assert!(pty.is_sane());
}

#[test]
fn a_hint_from_the_history_is_dimmed_and_not_sent() {
    let data = TempDir::new("hint");
    let history = data.history_file();
    std::fs::create_dir_all(history.parent().unwrap_or(&data.0)).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(&history, "#V2\nping\n").unwrap_or_else(|e| panic!("{e}"));
    let server = FakeServer::start();
    // Colour on: hints are shown, dimmed.
    let mut pty = Pty::start(&["--server", &server.addr()], &data.0, &[("NO_COLOR", "")]);
    let mut conn = server.accept();
    pty.until_row("flip>");
    pty.type_keys("pi");
    pty.until_row("flip> ping");
    // `pi` typed, `ng` the hint, dimmed.
    assert!(
        pty.written().contains("pi\x1b[2mng\x1b[0m"),
        "{:?}",
        pty.written()
    );
    pty.type_keys("\r");
    conn.expect("pi");
    // Colour off: no hint at all.
    drop((pty, conn));
    let mut pty = Pty::start(&["--server", &server.addr()], &data.0, &[]);
    let _conn = server.accept();
    pty.until_row("flip>");
    pty.type_keys("pi");
    pty.until_row("flip> pi");
    pty.type_keys("x");
    let rows = pty.until_row("flip> pix");
    assert!(
        !rows.iter().any(|r| r.starts_with("flip> ping")),
        "{rows:?}"
    );
}

#[test]
fn a_registered_name_typed_at_the_prompt_asks_for_its_password_unechoed() {
    let (mut pty, mut conn, _server, data) = at_a_prompt("password");
    pty.type_keys("login ann\r");
    conn.expect("login ann");
    conn.send("ERR 401 'ann' is registered: LOGIN ann <password> [password-needed]");
    pty.until_row("password for ann:");
    pty.type_keys("hunter22\r");
    conn.expect("LOGIN ann hunter22");
    conn.send("OK ann");
    let rows = pty.until_row("logged in as ann");
    assert!(
        rows.iter()
            .any(|r| r == "error 401: 'ann' is registered: LOGIN ann <password> [password-needed]"),
        "{rows:?}"
    );
    pty.until_row("flip>");
    assert!(!pty.written().contains("hunter22"), "{:?}", pty.written());
    // The line typed is in the history; the password is not.
    let history = std::fs::read_to_string(data.history_file()).unwrap_or_default();
    assert!(history.contains("login ann"), "{history:?}");
    assert!(!history.contains("hunter22"), "{history:?}");
    pty.type_keys("quit\r");
    conn.expect("QUIT");
    conn.send("OK bye");
    assert_eq!(pty.exit_code(), Some(0));
    assert!(pty.is_sane());
}

#[test]
fn a_password_typed_on_the_line_is_drawn_masked_and_not_sent() {
    let (mut pty, mut conn, _server, data) = at_a_prompt("masked");
    pty.type_keys("login carol hunter2");
    pty.until_row("flip> login carol *******");
    pty.type_keys("\r");
    let rows = pty.until("the advice", |rows| {
        rows.iter()
            .any(|r| r.starts_with("not sent: a password typed on the line"))
    });
    assert!(
        rows.iter().any(|r| r == "flip> login carol *******"),
        "{rows:?}"
    );
    // Nothing of it went out: the next line the server reads is the next one typed.
    pty.type_keys("ping\r");
    conn.expect("ping");
    conn.send("OK pong");
    pty.until_row("ok pong");
    assert!(!pty.written().contains("hunter2"), "{:?}", pty.written());
    let history = std::fs::read_to_string(data.history_file()).unwrap_or_default();
    assert!(!history.contains("hunter2"), "{history:?}");
}

#[test]
fn register_asks_for_the_password_twice_unechoed_and_says_it_registered() {
    let (mut pty, mut conn, _server, data) = at_a_prompt("register");
    // Two different passwords: nothing is sent.
    pty.type_keys("register ann\r");
    pty.until_row("new password for ann:");
    pty.type_keys("tiger-one\r");
    pty.until_row("the same password again:");
    pty.type_keys("tiger-two\r");
    pty.until_row("the two passwords differ: nothing registered");
    pty.type_keys("register ann\r");
    pty.until(r#"a second "new password for ann:""#, |rows| {
        rows.iter()
            .filter(|r| *r == "new password for ann:")
            .count()
            == 2
    });
    pty.type_keys("tiger-one\r");
    pty.until(r#"a second "the same password again:""#, |rows| {
        rows.iter()
            .filter(|r| *r == "the same password again:")
            .count()
            == 2
    });
    pty.type_keys("tiger-one\r");
    conn.expect("LOGIN ann tiger-one");
    conn.send("OK ann registered");
    pty.until_row("registered ann: the name needs its password from now on");
    let written = pty.written();
    assert!(
        !written.contains("tiger-one") && !written.contains("tiger-two"),
        "{written:?}"
    );
    let history = std::fs::read_to_string(data.history_file()).unwrap_or_default();
    assert!(history.contains("register ann"), "{history:?}");
    assert!(!history.contains("tiger"), "{history:?}");
}

#[test]
fn quit_in_a_game_in_play_says_how_long_the_seat_is_kept() {
    let (mut pty, mut conn, _server, _data) = logged_in("bob", "quit-seat");
    start_game(&mut conn, 5);
    pty.until("the game's clocks", |rows| {
        prompt_row(rows).is_some_and(|r| r.ends_with(" O  5:00.0"))
    });
    pty.type_keys("quit\r");
    conn.expect("QUIT");
    conn.send("INFO your seat in game 5 is kept for 60s: log in as bob and JOIN 5 to take it back");
    conn.send("OK bye");
    pty.until_row(
        "* your seat in game 5 is kept for 60s: log in as bob and JOIN 5 to take it back",
    );
    assert_eq!(pty.exit_code(), Some(0));
    assert!(pty.is_sane());
}

/// The prompt's row: the one with `flip>` in it, the clocks at its right end
/// while a clocked game is on (`flip>    ...    [X] 4:59.9  O  5:00.0`).
fn prompt_row(rows: &[String]) -> Option<&String> {
    rows.iter().rfind(|r| r.starts_with("flip>"))
}

/// The time the prompt shows for X, in tenths of a second.
fn x_clock(rows: &[String]) -> Option<u64> {
    let row = prompt_row(rows)?;
    let at = row.find("[X]").or_else(|| row.find(" X  "))?;
    let time = row.get(at + 3..at + 10)?.trim();
    let (minutes, rest) = time.split_once(':')?;
    let (seconds, tenths) = rest.split_once('.')?;
    Some(
        (minutes.parse::<u64>().ok()? * 60 + seconds.parse::<u64>().ok()?) * 10
            + tenths.parse::<u64>().ok()?,
    )
}

/// Sends game `id`'s start, hal (X, to move) against bob with 5 minutes.
fn start_game(conn: &mut Conn, id: u32) {
    conn.send(&format!("START {id} othello hal bob 5+0"));
    conn.send(&format!("BOARD {id} {}", support::START_BOARD));
    conn.send(&format!("TURN {id} X d3,c4,f5,e6"));
    conn.send(&format!("CLOCK {id} 300000 300000 X"));
}

#[test]
fn the_clocks_show_at_once_however_a_game_starts() {
    // The command typed, the server's answer, and whether the game starts
    // later, with a prompt up (a seek paired, an open game joined).
    let starts = [
        ("seek othello clock 5+0", "OK seeking", "ok seeking", 1),
        ("accept 3", "OK 2", "ok 2", 2),
        ("rematch", "OK 3", "ok 3", 3),
        ("new othello clock 5+0", "OK 4", "game 4 made:", 4),
    ];
    for (typed, answer, shown, id) in starts {
        let (mut pty, mut conn, _server, _data) = logged_in("hal", "starts");
        pty.type_keys(&format!("{typed}\r"));
        assert_eq!(conn.line(), typed);
        conn.send(answer);
        // The prompt is up, without clocks, when the game starts.
        pty.until(&format!("a plain prompt after {typed:?}"), |rows| {
            let answered = rows.iter().any(|r| r.starts_with(shown));
            answered && prompt_row(rows).is_some_and(|r| r == "flip>")
        });
        start_game(&mut conn, id);
        // Nothing typed: the prompt shows them.
        pty.until(&format!("the clocks after {typed:?}"), |rows| {
            x_clock(rows).is_some_and(|t| t <= 3000)
                && prompt_row(rows).is_some_and(|r| r.ends_with(" O  5:00.0"))
        });
    }
}

#[test]
fn the_board_never_shows_other_clocks_than_the_prompt() {
    let (mut pty, mut conn, _server, _data) = logged_in("hal", "agree");
    pty.type_keys("join 4\r");
    conn.expect("join 4");
    conn.send("OK 4 X");
    // A snapshot: the BOARD before the CLOCK that gives the time left.
    conn.send("START 4 othello hal bob 5+0");
    conn.send(&format!("BOARD 4 {}", support::START_BOARD));
    conn.send("TURN 4 X d3,c4,f5,e6");
    conn.send("CLOCK 4 282400 300000 X");
    let rows = pty.until("X's clock from CLOCK", |rows| {
        x_clock(rows).is_some_and(|t| t <= 2824)
    });
    assert!(
        !rows.iter().any(|r| r.contains("clocks X 5:00.0")),
        "the board kept the base times: {rows:?}"
    );
    // After a move both give the times of its MOVED.
    conn.send("MOVED 4 X d3 4 1 280000 300000");
    conn.send("BOARD 4 -------------------X-------XX------XO--------------------------- O");
    let rows = pty.until_row("game 4  X hal 4  O bob 1  clocks X 4:40.0 O 5:00.0  O to move");
    let prompt = prompt_row(&rows).cloned().unwrap_or_default();
    assert!(
        prompt.ends_with(" X  4:40.0 [O] 5:00.0") || prompt.ends_with(" X  4:40.0 [O] 4:59.9"),
        "{rows:?}"
    );
}

#[test]
fn the_running_clock_counts_down_at_the_prompt() {
    let (mut pty, mut conn, _server, _data) = logged_in("hal", "clock");
    conn.send("START 1 othello hal bob 5+0");
    conn.send(&format!("BOARD 1 {}", support::START_BOARD));
    conn.send("TURN 1 X d3,c4,f5,e6");
    pty.until_row("your move (X): d3 c4 f5 e6");
    let first = pty.until("the clocks in the prompt", |rows| x_clock(rows).is_some());
    let start = x_clock(&first).unwrap_or(0);
    assert!(start <= 3000, "{first:?}");
    // Counted down on screen, nothing typed.
    let later = pty.until("X's clock counted down by a second", |rows| {
        x_clock(rows).is_some_and(|t| t + 10 <= start)
    });
    assert!(
        prompt_row(&later).is_some_and(|r| r.ends_with(" O  5:00.0")),
        "O's clock stands: {later:?}"
    );
    // What is being typed stays as the prompt is drawn again.
    pty.type_keys("c4");
    let typed = pty.until("the clock counting down past a typed c4", |rows| {
        prompt_row(rows).is_some_and(|r| r.starts_with("flip> c4 "))
            && x_clock(rows).is_some_and(|t| t + 20 <= start)
    });
    assert_eq!(
        typed.iter().filter(|r| r.contains("[X]")).count(),
        1,
        "the prompt drawn again in its place, not below: {typed:?}"
    );
    pty.type_keys("\x15");
    // After the move, O's runs; after OVER nothing does and the prompt
    // goes back to plain once the game is over.
    conn.send("MOVED 1 X d3 4 1 290000 300000");
    conn.send("BOARD 1 -------------------X-------XX------XO--------------------------- O");
    conn.send("OVER 1 O 3 61 time");
    pty.until_row("game 1 over: bob (O) wins 3-61 (time)");
    pty.until("X's flag fallen", |rows| {
        prompt_row(rows).is_some_and(|r| r.contains(" X  0:00.0!"))
    });
    pty.type_keys("\r");
    pty.until(
        "a plain prompt",
        |rows| matches!(rows.iter().rfind(|r| !r.is_empty()), Some(r) if r == "flip>"),
    );
}
