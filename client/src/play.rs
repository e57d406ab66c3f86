//! `flip play`: the interactive client (rustyline prompt, boards printed while the
//! person types) and its plain mode for scripts and pipes.

use std::io::{BufRead, BufReader, IsTerminal};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use flipline::protocol::COMMAND_HELP;
use flipline::{Square, Variant};
use rustyline::completion::Completer;
use rustyline::error::ReadlineError;
use rustyline::hint::HistoryHinter;
use rustyline::history::DefaultHistory;
use rustyline::{
    Completer, Config, Editor, ExternalPrinter, Helper, Highlighter, Hinter, Validator,
};

use crate::export::GameLine;
use crate::link::{Link, Sink, StdoutSink, open};
use crate::paths::data_file;
use crate::secret::shows_credential;
use crate::untrusted::escape;
use crate::view::Style;

/// How the client was asked to run.
#[derive(Clone, Debug)]
pub struct PlayOptions {
    /// `host:port` of the daemon.
    pub server: String,
    /// A name to log in with at once.
    pub name: Option<String>,
    /// Show server lines as they are.
    pub raw: bool,
    /// Reconnect (and take the seat back) when the connection drops.
    pub reconnect: bool,
    /// What names the daemon in the data directory's secret file, where
    /// guests' secrets are kept too so that a client started again resumes
    /// its guest: the server's address, or for `--local` (whose daemon
    /// listens on another port each time) its store. `None`: memory only.
    pub secrets_key: Option<String>,
    /// Called with the view after every server line.
    pub on_update: Option<fn(&crate::view::View)>,
}

/// How long a script waits for its turn or for a reply before going on.
const SCRIPT_WAIT: Duration = Duration::from_secs(120);

/// Runs the client until the person quits, stdin ends, or the connection is lost.
pub fn run(options: &PlayOptions, first: Vec<String>) -> Result<(), String> {
    let interactive = std::io::stdin().is_terminal() && std::io::stdout().is_terminal();
    let color = interactive && std::env::var_os("NO_COLOR").is_none();
    let style = Style {
        color,
        raw: options.raw,
    };
    let (link, reader) = Link::connect(
        &options.server,
        style,
        options.on_update,
        options.secrets_key.as_deref(),
    )?;
    let mut commands = first;
    if let Some(name) = &options.name {
        commands.insert(0, format!("LOGIN {name}"));
    }
    if interactive {
        interactive_loop(&link, reader, options, commands)
    } else {
        println!("connected to {}: {}", options.server, link.greeting);
        spawn_reader(&link, reader, Box::new(StdoutSink), options);
        script_loop(&link, commands)
    }
}

/// Starts the thread that reads server lines; on a lost connection it either
/// reconnects or ends the process with status 2.
fn spawn_reader(
    link: &Arc<Link>,
    reader: BufReader<TcpStream>,
    mut sink: Box<dyn Sink>,
    options: &PlayOptions,
) {
    let link = Arc::clone(link);
    let options = options.clone();
    std::thread::spawn(move || {
        let mut reader = reader;
        loop {
            link.read_all(reader, sink.as_mut());
            if link.closing.load(Ordering::Acquire) {
                return;
            }
            if options.reconnect
                && let Some(again) = reconnect(&link, &options, sink.as_mut())
            {
                reader = again;
                continue;
            }
            link.mark_lost();
            sink.show(vec![format!("connection to {} lost", options.server)]);
            std::process::exit(2);
        }
    });
}

/// Tries to reconnect for about a minute; logs in again (a guest with the
/// secret it was given, which is what lets the daemon give the name back)
/// and, once logged in, takes back the seat of the game that was going on.
fn reconnect(
    link: &Link,
    options: &PlayOptions,
    sink: &mut dyn Sink,
) -> Option<BufReader<TcpStream>> {
    sink.show(vec![format!(
        "connection to {} lost; reconnecting",
        options.server
    )]);
    let (name, game) = {
        let view = link.view();
        let game = view.live_game().and(view.current);
        (view.name.clone(), game)
    };
    for attempt in 0..60u32 {
        std::thread::sleep(Duration::from_millis(250 * u64::from(attempt.min(4) + 1)));
        let Ok((stream, reader)) = open(&options.server) else {
            continue;
        };
        link.replace(stream);
        let mut reader = reader;
        let logged_in = match &name {
            Some(name) => match link.log_in(name, &mut reader, sink) {
                Ok(logged_in) => logged_in,
                Err(_) => continue,
            },
            None => false,
        };
        let rejoined = match game.filter(|_| logged_in) {
            Some(game) => link.send(&format!("JOIN {game}")).is_ok(),
            None => true,
        };
        if rejoined {
            sink.show(vec!["reconnected".to_string()]);
            return Some(reader);
        }
    }
    None
}

/// What a line typed by the person becomes.
enum Input {
    /// Send this to the server.
    Send(String),
    /// Print this locally.
    Show(Vec<String>),
    /// Leave.
    Quit,
    /// Write the current game to this file.
    Save(PathBuf),
    /// Nothing to do.
    Nothing,
}

/// A square alone means `MOVE`; `help`, `quit` and `save FILE` are done
/// locally; `load FILE [options]` becomes the `NEW` that replays the file's
/// game.
fn translate(line: &str) -> Input {
    let line = line.trim();
    let lower = line.to_ascii_lowercase();
    let (keyword, rest) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
    let rest = rest.trim();
    match lower.as_str() {
        "" => Input::Nothing,
        "help" | "?" => Input::Show(help_lines()),
        "quit" | "exit" => Input::Quit,
        "save" | "load" => Input::Show(vec![format!("{lower} needs a file name")]),
        _ if keyword.eq_ignore_ascii_case("save") => Input::Save(PathBuf::from(rest)),
        _ if keyword.eq_ignore_ascii_case("load") => {
            let (file, options) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
            match load_command(Path::new(file), options.trim()) {
                Ok(command) => Input::Send(command),
                Err(e) => Input::Show(vec![e]),
            }
        }
        _ if line.parse::<Square>().is_ok() => Input::Send(format!("MOVE {line}")),
        _ => Input::Send(line.to_string()),
    }
}

/// How long `save` waits for the server's record of the game.
const SAVE_WAIT: Duration = Duration::from_secs(10);

/// `save FILE`: asks the server for the current game's record (`HISTORY`, so
/// that moves made before this client joined are in it too) and writes it as a
/// transcript line (see export.rs), which `load` reads back.
fn save_game(link: &Link, path: &Path) -> Vec<String> {
    let Some(id) = link.view().current else {
        return vec!["no game to save".to_string()];
    };
    if let Err(e) = link.send(&format!("HISTORY {id}")) {
        return vec![e];
    }
    link.wait_until(SAVE_WAIT, |v| v.idle());
    let line = {
        let view = link.view();
        let Some(record) = view.records.get(&id) else {
            return vec![format!("the server sent no record of game {id}")];
        };
        GameLine(record).to_string()
    };
    match std::fs::write(path, format!("{line}\n")) {
        Ok(()) => vec![format!("saved game {id} to {}", path.display())],
        Err(e) => vec![format!("cannot write {}: {e}", path.display())],
    }
}

/// `load FILE [options]`: `NEW <variant> <options> from <moves>` for the first
/// game line of the file (written by `save` or `flip export --format
/// transcript`).
fn load_command(path: &Path, options: &str) -> Result<String, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let line = text
        .lines()
        .find(|l| !l.trim().is_empty())
        .ok_or_else(|| format!("cannot load {}: it holds no game", path.display()))?;
    // The error quotes the file, which may come from anyone.
    let game = GameLine::parse(line)
        .map_err(|e| format!("cannot load {}: {}", path.display(), escape(&e)))?;
    let mut command = format!("NEW {}", game.variant);
    if !options.is_empty() {
        command.push(' ');
        command.push_str(options);
    }
    if !game.moves.is_empty() {
        let moves = flipline::notation::transcript_string(&game.moves);
        command.push_str(&format!(" from {moves}"));
    }
    Ok(command)
}

fn help_lines() -> Vec<String> {
    let mut lines: Vec<String> = COMMAND_HELP
        .iter()
        .map(|(usage, what)| format!("  {usage:<34} {what}"))
        .collect();
    lines.insert(0, "commands (keywords in any case):".to_string());
    lines.push("  d3                                 a square alone plays it".to_string());
    lines.push("  save FILE                          write the current game to FILE".to_string());
    lines.push(
        "  load FILE [as/vs/clock ...]        a new game from the moves saved in FILE".to_string(),
    );
    lines.push(format!(
        "  variants: {}",
        Variant::ALL.map(|v| v.name()).join(", ")
    ));
    lines
}

/// Whether a command is a move, which a script sends only on its turn.
fn is_move(line: &str) -> bool {
    let keyword = line
        .split_whitespace()
        .next()
        .unwrap_or("")
        .to_ascii_uppercase();
    matches!(keyword.as_str(), "MOVE" | "PASS")
}

/// Plain mode: one command at a time, each sent after the previous reply and,
/// for moves, on the client's turn, so that `printf ... | flip` plays sensibly.
fn script_loop(link: &Arc<Link>, first: Vec<String>) -> Result<(), String> {
    let stdin = std::io::stdin();
    let typed = stdin.lock().lines().map_while(Result::ok);
    for line in first.into_iter().chain(typed) {
        match translate(&line) {
            Input::Nothing => {}
            Input::Show(lines) => StdoutSink.show(lines),
            Input::Save(path) => StdoutSink.show(save_game(link, &path)),
            Input::Quit => break,
            Input::Send(command) => {
                let moving = is_move(&command);
                if moving {
                    link.wait_until(SCRIPT_WAIT, |v| v.my_turn());
                }
                let before = link.view().moves_seen();
                link.send(&command)?;
                // A move counts as done once its MOVED line is in, which comes
                // after the OK; then the next line sees the new position.
                let done = link.wait_until(SCRIPT_WAIT, |v| {
                    v.idle() && (!moving || !v.last_ok || v.moves_seen() > before)
                });
                if !done && link.lost.load(Ordering::Acquire) {
                    return Err("connection lost".to_string());
                }
            }
        }
    }
    link.wait_until(SCRIPT_WAIT, |v| v.idle());
    link.closing.store(true, Ordering::Release);
    Ok(())
}

/// Completion of commands, variants and the squares that are legal right now;
/// hints from history.
#[derive(Helper, Completer, Hinter, Highlighter, Validator)]
struct FlipHelper {
    #[rustyline(Completer)]
    completer: FlipCompleter,
    #[rustyline(Hinter)]
    hinter: HistoryHinter,
}

struct FlipCompleter {
    link: Arc<Link>,
}

impl Completer for FlipCompleter {
    type Candidate = String;

    fn complete(
        &self,
        line: &str,
        pos: usize,
        _: &rustyline::Context<'_>,
    ) -> rustyline::Result<(usize, Vec<String>)> {
        let head = line.get(..pos).unwrap_or(line);
        let start = head.rfind(' ').map_or(0, |i| i + 1);
        let word = head.get(start..).unwrap_or("").to_ascii_lowercase();
        let first_word = !head
            .get(..start)
            .unwrap_or("")
            .contains(|c: char| !c.is_whitespace());
        let keyword = head
            .split_whitespace()
            .next()
            .unwrap_or("")
            .to_ascii_lowercase();
        let squares: Vec<String> = self
            .link
            .view()
            .legal_now()
            .iter()
            .map(Square::to_string)
            .collect();
        let options: Vec<String> = if first_word {
            let commands = COMMAND_HELP
                .iter()
                .filter_map(|(usage, _)| usage.split(' ').next());
            commands
                .map(str::to_ascii_lowercase)
                .chain(["save", "load"].map(str::to_string))
                .chain(squares)
                .collect()
        } else {
            match keyword.as_str() {
                "move" => squares,
                "new" | "seek" => {
                    let words = [
                        "as", "vs", "bot", "hotseat", "clock", "from", "x", "o", "random",
                    ];
                    Variant::ALL
                        .iter()
                        .map(|v| v.name())
                        .chain(words)
                        .map(str::to_string)
                        .collect()
                }
                _ => Vec::new(),
            }
        };
        Ok((
            start,
            options
                .into_iter()
                .filter(|o| o.starts_with(&word))
                .collect(),
        ))
    }
}

/// Sends lines to rustyline's external printer, so that they appear above the
/// prompt without garbling what the person is typing.
struct PrinterSink<P: ExternalPrinter + Send>(P);

impl<P: ExternalPrinter + Send> Sink for PrinterSink<P> {
    fn show(&mut self, lines: Vec<String>) {
        let _ = self.0.print(lines.join("\n"));
    }
}

fn history_path() -> Option<PathBuf> {
    data_file("history.txt")
}

fn interactive_loop(
    link: &Arc<Link>,
    reader: BufReader<TcpStream>,
    options: &PlayOptions,
    first: Vec<String>,
) -> Result<(), String> {
    let config = Config::builder()
        .auto_add_history(false)
        .history_ignore_space(true)
        .build();
    let mut editor: Editor<FlipHelper, DefaultHistory> =
        Editor::with_config(config).map_err(|e| e.to_string())?;
    editor.set_helper(Some(FlipHelper {
        completer: FlipCompleter {
            link: Arc::clone(link),
        },
        hinter: HistoryHinter::new(),
    }));
    let history = history_path();
    if let Some(path) = &history {
        let _ = editor.load_history(path);
    }
    println!(
        "connected to {}: {}; type help for the commands",
        options.server, link.greeting
    );
    let printer = editor
        .create_external_printer()
        .map_err(|e| e.to_string())?;
    spawn_reader(link, reader, Box::new(PrinterSink(printer)), options);
    for line in first {
        link.send(&line)?;
    }
    loop {
        match editor.readline("flip> ") {
            Ok(line) => {
                // A password or a secret typed is not written to the history.
                if !line.trim().is_empty() && !shows_credential(&line) {
                    let _ = editor.add_history_entry(line.as_str());
                    if let Some(path) = &history {
                        let _ = editor.save_history(path);
                    }
                }
                match translate(&line) {
                    Input::Send(command) => link.send(&command)?,
                    Input::Show(lines) => lines.iter().for_each(|l| println!("{l}")),
                    Input::Save(path) => {
                        save_game(link, &path).iter().for_each(|l| println!("{l}"))
                    }
                    Input::Quit => break,
                    Input::Nothing => {}
                }
            }
            Err(ReadlineError::Interrupted) => continue,
            Err(ReadlineError::Eof) => break,
            Err(e) => return Err(e.to_string()),
        }
    }
    link.closing.store(true, Ordering::Release);
    let _ = link.send("QUIT");
    link.wait_until(Duration::from_secs(2), |v| v.idle());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::untrusted::CHAT_MARKER;

    #[test]
    fn a_square_alone_is_a_move_and_help_is_local() {
        assert!(matches!(translate("d3"), Input::Send(s) if s == "MOVE d3"));
        assert!(matches!(translate(" D3 "), Input::Send(s) if s == "MOVE D3"));
        assert!(matches!(translate("pass"), Input::Send(s) if s == "pass"));
        assert!(matches!(translate("help"), Input::Show(_)));
        assert!(matches!(translate("QUIT"), Input::Quit));
        assert!(matches!(translate("   "), Input::Nothing));
        assert!(is_move("move d3") && is_move("PASS") && !is_move("board"));
        assert!(
            matches!(translate("Save my game.txt"), Input::Save(p) if p == Path::new("my game.txt"))
        );
        assert!(matches!(translate("save"), Input::Show(_)));
        // Only chat lines start with the chat marker.
        assert!(help_lines().iter().all(|l| !l.starts_with(CHAT_MARKER)));
    }

    #[test]
    fn load_turns_a_saved_line_into_new_from() {
        let dir = std::env::temp_dir().join(format!("flip-load-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("game.txt");
        std::fs::write(&file, "\n7 othello ann bot:3 - f5d6c3\n").unwrap();
        let typed = format!("load {} vs bot:2 as X", file.display());
        assert!(
            matches!(translate(&typed), Input::Send(s) if s == "NEW othello vs bot:2 as X from f5d6c3")
        );
        std::fs::write(&file, "8 tictactoe ann ann - -\n").unwrap();
        assert_eq!(load_command(&file, "").unwrap(), "NEW tictactoe");
        std::fs::write(&file, "garbage\n").unwrap();
        assert!(load_command(&file, "").unwrap_err().contains("1 fields"));
        assert!(
            load_command(&dir.join("none.txt"), "")
                .unwrap_err()
                .contains("cannot read")
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
