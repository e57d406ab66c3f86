//! The interactive client: a rustyline prompt, with every line shown going
//! through the screen (screen.rs) so that it appears whole above the prompt,
//! and the terminal taken over and put back (terminal.rs).

use crate::play::wire::Incoming;
use std::io::BufReader;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use rustyline::error::ReadlineError;
use rustyline::history::DefaultHistory;
use rustyline::{ColorMode, Config, Editor};

use crate::paths::data_file;
use crate::play::commands::{Input, game_moves, input_for, save_game, starts_a_game};
use crate::play::helper::FlipHelper;
use crate::play::link::Link;
use crate::play::password::{self, Password, login_line};
use crate::play::reader::{Failure, Reconnect, spawn_reader};
use crate::play::screen;
use crate::play::secret::{plain_login_name, shows_credential};
use crate::play::terminal;

/// How long a command of the client's own (`help`, `save`) waits for the
/// answers to the commands before it, so that what it shows comes after them.
const ANSWERS_WAIT: Duration = Duration::from_secs(5);

/// How long `quit` waits for the server's goodbye.
const QUIT_WAIT: Duration = Duration::from_secs(2);

/// The prompt.
const PROMPT: &str = "flip> ";

/// Whether the prompt is up (the ticker redraws it only then).
static PROMPT_UP: AtomicBool = AtomicBool::new(false);

/// How often a running clock is drawn again.
const TICK: Duration = Duration::from_millis(200);

/// Starts the thread that, while a clock of the current game runs and the
/// prompt is up, has the prompt drawn again every [`TICK`]: its clocks count
/// down (through the one writer, see `screen::redraw`).
fn spawn_ticker(link: &Arc<Link>) {
    let link = Arc::clone(link);
    std::thread::spawn(move || {
        loop {
            std::thread::sleep(TICK);
            if PROMPT_UP.load(Ordering::Acquire) && link.view().clock_runs() {
                screen::redraw();
            }
        }
    });
}

/// How long the prompt after a command that starts a game waits for the
/// game's `START`.
const START_WAIT: Duration = Duration::from_millis(500);

/// What to do after a line.
enum Flow {
    Go,
    Quit,
}

/// Runs the prompt until `quit`, Ctrl-D or twice Ctrl-C; the terminal is
/// put back however it ends (a lost connection ends the process from the
/// reader thread, through [`terminal::leave`]).
pub fn run(
    link: &Arc<Link>,
    reader: BufReader<Incoming>,
    policy: Reconnect,
    first: Vec<String>,
) -> Result<(), Failure> {
    let mut editor = editor(link)?;
    terminal::take_over().map_err(Failure::failed)?;
    let result = prompt_loop(&mut editor, link, reader, policy, first);
    screen::detach();
    terminal::restore();
    result
}

fn editor(link: &Arc<Link>) -> Result<Editor<FlipHelper, DefaultHistory>, Failure> {
    let config = Config::builder()
        .auto_add_history(false)
        .history_ignore_space(true)
        // A pasted block is typed lines: each runs as a command of its own.
        .bracketed_paste(false)
        // The highlighter is asked even without colour (it adds colour only
        // where colour is on): the prompt's drawing is where a leave ends.
        .color_mode(ColorMode::Forced)
        .build();
    let mut editor: Editor<FlipHelper, DefaultHistory> =
        Editor::with_config(config).map_err(|e| Failure::failed(e.to_string()))?;
    editor.set_helper(Some(FlipHelper::new(link, link.view().style().color)));
    if let Some(path) = history_path() {
        let _ = editor.load_history(&path);
    }
    Ok(editor)
}

fn history_path() -> Option<PathBuf> {
    data_file("history.txt")
}

fn prompt_loop(
    editor: &mut Editor<FlipHelper, DefaultHistory>,
    link: &Arc<Link>,
    reader: BufReader<Incoming>,
    policy: Reconnect,
    first: Vec<String>,
) -> Result<(), Failure> {
    screen::line(format!(
        "connected to {}: {}; type help for the commands",
        link.servers().current(),
        link.greeting
    ));
    let printer = editor
        .create_external_printer()
        .map_err(|e| Failure::failed(e.to_string()))?;
    screen::attach(Box::new(printer));
    spawn_reader(link, reader, policy);
    spawn_ticker(link);
    for line in first {
        send(link, &line)?;
    }
    let mut interrupted = false;
    loop {
        if let Some(helper) = editor.helper() {
            helper.new_line();
        }
        let prompt = crate::play::helper::prompt_for(link, PROMPT);
        PROMPT_UP.store(true, Ordering::Release);
        let read = editor.readline(&prompt);
        PROMPT_UP.store(false, Ordering::Release);
        match read {
            Ok(line) => {
                interrupted = false;
                keep_in_history(editor, &line);
                if let Flow::Quit = run_line(link, &line)? {
                    break;
                }
            }
            // Ctrl-C clears the line; on an empty line it says how to
            // leave, and a second one leaves.
            Err(ReadlineError::Interrupted) => {
                let empty = editor.helper().is_none_or(FlipHelper::line_was_empty);
                if empty && interrupted {
                    break;
                }
                if empty {
                    screen::show_now(&["(to leave: quit, Ctrl-D, or Ctrl-C again)".to_string()]);
                }
                interrupted = empty;
            }
            Err(ReadlineError::Eof) => break,
            Err(e) => return Err(Failure::failed(e.to_string())),
        }
    }
    link.closing.store(true, Ordering::Release);
    if link.send("QUIT").is_ok() {
        link.wait_until(QUIT_WAIT, |v| v.idle());
    }
    Ok(())
}

/// A line typed goes into the history, unless it shows a password or a
/// secret.
fn keep_in_history(editor: &mut Editor<FlipHelper, DefaultHistory>, line: &str) {
    if line.trim().is_empty() || shows_credential(line) {
        return;
    }
    let _ = editor.add_history_entry(line);
    if let Some(path) = history_path() {
        let _ = editor.save_history(&path);
    }
}

/// Runs one line typed.
fn run_line(link: &Arc<Link>, line: &str) -> Result<Flow, Failure> {
    match input_for(link, line) {
        Input::Send(command) if shows_credential(&command) => {
            screen::show_now(&[credential_refused(&command)]);
        }
        Input::Register(name) => register(link, &name)?,
        Input::Send(command) => {
            send(link, &command)?;
            if starts_a_game(&command) {
                // So that the next prompt has the new game's clocks.
                link.wait_until(START_WAIT, |v| {
                    v.idle() && v.current.is_some_and(|id| v.games.contains_key(&id))
                });
            }
        }
        Input::Show(lines) => {
            link.wait_until(ANSWERS_WAIT, |v| v.idle());
            screen::show_now(&lines);
        }
        Input::Save(path) => screen::show_now(&save_game(link, &path)),
        Input::Moves => screen::show_now(&game_moves(link)),
        Input::Quit => return Ok(Flow::Quit),
        Input::Nothing => {}
    }
    Ok(Flow::Go)
}

/// Why a `login` typed with a password (or a secret) is not sent: the line
/// would stay on screen and in the terminal's scrollback. (Scripts may send
/// one; `--password-file` is the way for them.)
fn credential_refused(command: &str) -> String {
    let name = command.split_whitespace().nth(1).unwrap_or("NAME");
    let name = crate::untrusted::name(name);
    format!(
        "not sent: a password typed on the line stays on screen. Type login {name} \
         and it is asked without echo; register {name} makes a new name yours"
    )
}

/// `register NAME`: the password asked twice without echo, then the
/// `LOGIN` that registers it. A name already registered with that password
/// just logs in, and says so.
fn register(link: &Link, name: &str) -> Result<(), Failure> {
    let shown = crate::untrusted::name(name);
    let Some(first) = ask_hidden(&format!("new password for {shown}: ")) else {
        return Ok(());
    };
    let Some(again) = ask_hidden("the same password again: ") else {
        return Ok(());
    };
    if first != again {
        screen::show_now(&["the two passwords differ: nothing registered".to_string()]);
        return Ok(());
    }
    send_line(link, &login_line(name, &first)).map(|_| ())
}

/// A password read without echo, or `None` (said) when none was given.
fn ask_hidden(question: &str) -> Option<Password> {
    match screen::ask(question, password::read_hidden) {
        Ok(Some(password)) => Some(password),
        Ok(None) => {
            screen::show_now(&["no password given: nothing registered".to_string()]);
            None
        }
        Err(e) => {
            screen::show_now(&[e]);
            None
        }
    }
}

/// Sends one line; a line that cannot be sent ends the client, unless the
/// connection is being made again: then it is said not sent, and the person
/// may type it again once reconnected.
fn send_line(link: &Link, command: &str) -> Result<bool, Failure> {
    match link.send(command) {
        Ok(()) => Ok(true),
        Err(e) if link.reconnects() => {
            screen::show_now(&[format!("not sent: {e}")]);
            Ok(false)
        }
        Err(e) => Err(Failure::connection(e)),
    }
}

/// Sends a command. A plain `LOGIN name` waits for its answer: refused as a
/// registered name's, the password is asked for without echo and a `LOGIN`
/// with it sent (which no history keeps: only the line typed is there).
fn send(link: &Link, command: &str) -> Result<(), Failure> {
    let Some(name) = plain_login_name(command) else {
        return send_line(link, command).map(|_| ());
    };
    {
        let mut view = link.view();
        view.credentials.login_answer = None;
        view.credentials.password_wanted = None;
    }
    if !send_line(link, command)? {
        return Ok(());
    }
    link.wait_until(ANSWERS_WAIT, |v| v.credentials.login_answer.is_some());
    let Some(name) = link
        .view()
        .credentials
        .password_wanted
        .take()
        .filter(|n| n.eq_ignore_ascii_case(&name))
    else {
        return Ok(());
    };
    let question = format!("password for {}: ", crate::untrusted::name(&name));
    match screen::ask(&question, password::read_hidden) {
        Ok(Some(password)) => send_line(link, &login_line(&name, &password)).map(|_| ()),
        Ok(None) => {
            screen::show_now(&["no password given: not logged in".to_string()]);
            Ok(())
        }
        Err(e) => {
            screen::show_now(&[e]);
            Ok(())
        }
    }
}
