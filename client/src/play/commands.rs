//! What a line typed (or piped) becomes: a command for the server, or one of
//! the client's own (`help`, `quit`, `save FILE`, `load FILE`, and the review
//! words while a finished game is reviewed: review.rs), shared by the
//! interactive client and the script mode.

use std::path::{Path, PathBuf};
use std::time::Duration;

use flipline::protocol::COMMAND_HELP;
use flipline::{Square, Variant};

use crate::archive::export::GameLine;
use crate::engine_tools::engine_score::score_phrase;
use crate::play::link::Link;
use crate::play::render::move_list;
use crate::play::review::{self, Review};
use crate::untrusted::escape;

/// What a line typed by the person becomes.
pub enum Input {
    /// Send this to the server.
    Send(String),
    /// Print this locally.
    Show(Vec<String>),
    /// Leave.
    Quit,
    /// Write the current game to this file.
    Save(PathBuf),
    /// Show the current game's moves.
    Moves,
    /// Register this name: the password is asked twice without echo.
    Register(String),
    /// Nothing to do.
    Nothing,
}

/// What `line` becomes, with the review the link holds: taken out
/// meanwhile, so that a hint's search or a file read holds no lock.
pub fn input_for(link: &Link, line: &str) -> Input {
    let color = link.view().style().color;
    let mut review = link.review().take();
    let input = translate(line, &mut review, color);
    *link.review() = review;
    input
}

/// While a game is reviewed, a review word acts on `review` and any command
/// for the server (or `quit`, `save`, `moves` of a game) ends the review;
/// otherwise see [`translate_line`].
pub fn translate(line: &str, review: &mut Option<Review>, color: bool) -> Input {
    if let Some(open) = review.as_mut() {
        match review::Command::parse(line) {
            Some(Ok(review::Command::Done)) => {
                *review = None;
                return Input::Show(vec!["review closed".to_string()]);
            }
            Some(Ok(review::Command::Play(options))) => {
                return match open.play_command(&options) {
                    Ok(command) => {
                        *review = None;
                        Input::Send(command)
                    }
                    Err(e) => Input::Show(vec![e]),
                };
            }
            Some(Ok(command)) => return Input::Show(on_review(open, command, color)),
            Some(Err(e)) => return Input::Show(vec![e]),
            None => {}
        }
    }
    let input = translate_line(line, review, color);
    if !matches!(input, Input::Show(_) | Input::Nothing) {
        *review = None;
    }
    input
}

/// A review word other than `play` and `done`, on the review open.
fn on_review(review: &mut Review, command: review::Command, color: bool) -> Vec<String> {
    match command {
        review::Command::Step(step) => match review.step(step) {
            Ok(()) => review.lines(color),
            Err(e) => vec![e],
        },
        review::Command::Moves => review.move_lines(),
        review::Command::Hint => vec![review_hint(review.position())],
        _ => review.lines(color),
    }
}

/// The engine level of a hint while reviewing: the server's `HINT`'s.
const REVIEW_HINT_LEVEL: u8 = 6;

/// `hint` while reviewing: the engine's best move in the position shown
/// and its score, in the units of `flip analyze`.
fn review_hint(game: &flipline::Game) -> String {
    if game.is_over() {
        return "the game is over here: no move to hint".to_string();
    }
    let budget = flipline::engine::level(REVIEW_HINT_LEVEL).time_budget();
    let deadline = std::time::Instant::now() + budget;
    let stop = &mut || std::time::Instant::now() >= deadline;
    match flipline::engine::choose(game, REVIEW_HINT_LEVEL, 0, stop) {
        Some(choice) => {
            let score = score_phrase(choice.score, choice.exact, game.variant());
            format!("hint for {}: {} ({score})", game.to_move(), choice.mv)
        }
        None => "the engine found no move".to_string(),
    }
}

/// A square alone means `MOVE`; `help`, `quit` and `save FILE` are done
/// locally; `load FILE [options]` becomes the `NEW` that replays the file's
/// game, or, for a finished game, opens `review` on it.
fn translate_line(line: &str, review: &mut Option<Review>, color: bool) -> Input {
    let line = line.trim();
    let lower = line.to_ascii_lowercase();
    let (keyword, rest) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
    let rest = rest.trim();
    match lower.as_str() {
        "" => Input::Nothing,
        "help" | "?" => Input::Show(help_lines()),
        "quit" | "exit" => Input::Quit,
        "moves" => Input::Moves,
        "save" | "load" => Input::Show(vec![format!("{lower} needs a file name")]),
        "register" => Input::Show(vec![
            "register needs a name: register NAME (the password is asked without echo)".to_string(),
        ]),
        _ if keyword.eq_ignore_ascii_case("register") => register_input(rest),
        _ if keyword.eq_ignore_ascii_case("save") => Input::Save(PathBuf::from(rest)),
        _ if keyword.eq_ignore_ascii_case("load") => {
            let (file, options) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
            match load_command(Path::new(file), options.trim()) {
                Ok(Loaded::New(command)) => Input::Send(command),
                Ok(Loaded::Review(opened)) => {
                    let lines = opened.opening_lines(color);
                    *review = Some(*opened);
                    Input::Show(lines)
                }
                Err(e) => Input::Show(vec![e]),
            }
        }
        _ if line.parse::<Square>().is_ok() => Input::Send(format!("MOVE {line}")),
        _ => Input::Send(line.to_string()),
    }
}

/// `register NAME`: the name alone, checked as `LOGIN` checks it; the
/// password is never typed on the line.
fn register_input(rest: &str) -> Input {
    use flipline::protocol::Command;
    match Command::parse(&format!("LOGIN {rest}")) {
        Ok(Command::Login {
            name,
            credential: None,
        }) => Input::Register(name),
        Ok(_) => Input::Show(vec![
            "register takes the name alone: the password is asked without echo".to_string(),
        ]),
        Err(e) => Input::Show(vec![format!("register: {}", e.message)]),
    }
}

/// How long `save` waits for the server's record of the game.
const SAVE_WAIT: Duration = Duration::from_secs(10);

/// `save FILE`: asks the server for the current game's record (`HISTORY`, so
/// that moves made before this client joined are in it too) and writes it as a
/// transcript line (see export.rs), which `load` reads back.
pub fn save_game(link: &Link, path: &Path) -> Vec<String> {
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

/// `moves`: the current game's moves, numbered, the last marked (see
/// [`move_list`]). From the server's record (`HISTORY`, taken in without
/// being shown), so that moves made before this client came are in it too;
/// from the moves this client saw where there is no record.
pub fn game_moves(link: &Link) -> Vec<String> {
    let Some(id) = link.view().current else {
        return vec!["no game".to_string()];
    };
    link.view().quiet_records.insert(id);
    if let Err(e) = link.send(&format!("HISTORY {id}")) {
        return vec![e];
    }
    link.wait_until(SAVE_WAIT, |v| v.idle());
    let mut view = link.view();
    view.quiet_records.remove(&id);
    let (variant, moves) = match (view.records.get(&id), view.games.get(&id)) {
        (Some(record), _) => (record.variant, record.moves.clone()),
        (None, Some(game)) => (game.variant, game.moves.clone()),
        (None, None) => return vec![format!("no moves known of game {id}")],
    };
    // Every pass written out, should a record leave one implied.
    let moves = flipline::notation::replay_with_passes(variant, &moves).map_or(moves, |(_, m)| m);
    let count = moves.len();
    let mut lines = vec![format!(
        "game {id} ({variant}): {count} move{}",
        if count == 1 { "" } else { "s" }
    )];
    lines.extend(move_list(&moves));
    lines
}

/// What `load` does with a file's game.
enum Loaded {
    /// Start a new game: this `NEW`.
    New(String),
    /// Review it: its moves end it.
    Review(Box<Review>),
}

/// `load FILE [options]`: `NEW <variant> <options> from <moves>` for the first
/// game of the file (a line written by `save` or `flip export`, or a bare
/// move string: see saved_game.rs); a review of it when its moves end it.
fn load_command(path: &Path, options: &str) -> Result<Loaded, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    // The error quotes the file, which may come from anyone.
    let game = crate::archive::saved_game::parse(&text)
        .map_err(|e| format!("cannot load {}: {}", path.display(), escape(&e)))?;
    Ok(match Review::of_finished(&game, options) {
        Some(review) => Loaded::Review(Box::new(review)),
        None => Loaded::New(game.new_command(options)),
    })
}

/// The widest a help line may be: an 80-column terminal, less one so that
/// no line makes it wrap.
const HELP_COLUMNS: usize = 79;

/// Where a command's description starts.
const HELP_INDENT: usize = 24;

pub fn help_lines() -> Vec<String> {
    let mut lines = vec!["commands (keywords in any case):".to_string()];
    for (usage, what) in prompt_commands() {
        lines.extend(help_entry(usage, what));
    }
    let variants = Variant::ALL.map(|v| v.name()).join(", ");
    lines.extend(wrapped("  variants: ", &variants, 4));
    lines
}

/// Every command typed at the prompt, the server's and the client's own,
/// with what it does: `help` and the manual page list the same.
pub fn prompt_commands() -> Vec<(&'static str, &'static str)> {
    let own = [
        ("d3", "a square alone plays it"),
        ("moves", "the current game's moves, the last marked *"),
        (
            "register NAME",
            "make NAME yours: the password is asked twice, without echo \
             (login NAME then asks for it)",
        ),
        ("save FILE", "write the current game to FILE"),
        (
            "load FILE [as/vs/clock ...]",
            "a new game from the moves saved in FILE; a finished game is \
             reviewed: next (n), prev (p), goto N (0 the start), first, last, \
             moves, board, hint",
        ),
        (
            "play [as/vs/clock ...]",
            "reviewing: a new game from the position shown (load's options \
             unless others are given)",
        ),
        (
            "done",
            "reviewing: stop; any command for the server stops it too",
        ),
    ];
    COMMAND_HELP.iter().copied().chain(own).collect()
}

/// One command's help: the usage, and its description from
/// [`HELP_INDENT`] on (on the next line unless two spaces part them), every
/// line within [`HELP_COLUMNS`].
fn help_entry(usage: &str, what: &str) -> Vec<String> {
    let head = format!("  {usage}");
    if head.len() + 2 <= HELP_INDENT {
        return wrapped(&format!("{head:<HELP_INDENT$}"), what, HELP_INDENT);
    }
    let mut lines = wrapped("  ", usage, 4);
    lines.extend(wrapped(&" ".repeat(HELP_INDENT), what, HELP_INDENT));
    lines
}

/// `first` then `text`'s words, cut into lines of at most [`HELP_COLUMNS`];
/// the lines after the first indented by `indent`.
fn wrapped(first: &str, text: &str, indent: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = first.to_string();
    let mut empty = true;
    for word in text.split_whitespace() {
        if !empty && line.len() + 1 + word.len() > HELP_COLUMNS {
            lines.push(std::mem::replace(&mut line, " ".repeat(indent)));
            empty = true;
        }
        if !empty {
            line.push(' ');
        }
        line.push_str(word);
        empty = false;
    }
    lines.push(line);
    lines
}

/// Whether a command makes, joins or watches a game, whose `START` follows
/// its answer (at once, but for a game with an open seat).
pub fn starts_a_game(command: &str) -> bool {
    let keyword = command.split_whitespace().next().unwrap_or("");
    ["NEW", "JOIN", "WATCH"]
        .iter()
        .any(|k| keyword.eq_ignore_ascii_case(k))
}

/// Whether a command is a move, which a script sends only on its turn.
pub fn is_move(line: &str) -> bool {
    let keyword = line
        .split_whitespace()
        .next()
        .unwrap_or("")
        .to_ascii_uppercase();
    matches!(keyword.as_str(), "MOVE" | "PASS")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::untrusted::CHAT_MARKER;

    /// A line typed with no game under review.
    fn plain(line: &str) -> Input {
        translate(line, &mut None, false)
    }

    fn new_command(loaded: Result<Loaded, String>) -> Result<String, String> {
        match loaded? {
            Loaded::New(command) => Ok(command),
            Loaded::Review(_) => Err("a review".to_string()),
        }
    }

    #[test]
    fn a_square_alone_is_a_move_and_help_is_local() {
        assert!(matches!(plain("d3"), Input::Send(s) if s == "MOVE d3"));
        assert!(matches!(plain(" D3 "), Input::Send(s) if s == "MOVE D3"));
        assert!(matches!(plain("pass"), Input::Send(s) if s == "pass"));
        assert!(matches!(plain("help"), Input::Show(_)));
        assert!(matches!(plain("QUIT"), Input::Quit));
        assert!(matches!(plain("   "), Input::Nothing));
        assert!(is_move("move d3") && is_move("PASS") && !is_move("board"));
        assert!(
            matches!(plain("Save my game.txt"), Input::Save(p) if p == Path::new("my game.txt"))
        );
        assert!(matches!(plain("save"), Input::Show(_)));
        // Only chat lines start with the chat marker; every line fits an
        // 80-column terminal.
        let help = help_lines();
        assert!(help.iter().all(|l| !l.starts_with(CHAT_MARKER)));
        assert!(help.iter().all(|l| l.len() <= HELP_COLUMNS), "{help:#?}");
        assert!(help.contains(&"  d3                    a square alone plays it".to_string()));
    }

    #[test]
    fn load_turns_a_saved_line_into_new_from() {
        let dir = std::env::temp_dir().join(format!("flip-load-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("game.txt");
        std::fs::write(&file, "\n7 othello ann bot:3 - f5d6c3\n").unwrap();
        let typed = format!("load {} vs bot:2 as X", file.display());
        assert!(
            matches!(plain(&typed), Input::Send(s) if s == "NEW othello vs bot:2 as X from f5d6c3")
        );
        std::fs::write(&file, "8 tictactoe ann ann - -\n").unwrap();
        assert_eq!(
            new_command(load_command(&file, "")).unwrap(),
            "NEW tictactoe"
        );
        std::fs::write(&file, "garbage\n").unwrap();
        assert!(
            new_command(load_command(&file, ""))
                .unwrap_err()
                .contains("1 fields")
        );
        assert!(
            new_command(load_command(&dir.join("none.txt"), ""))
                .unwrap_err()
                .contains("cannot read")
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_finished_game_loads_for_review_until_a_server_command() {
        let dir = std::env::temp_dir().join(format!("flip-review-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("over.txt");
        std::fs::write(&file, "e6f4e3f6g5d6e7f5c5\n").unwrap();
        let mut review = None;
        let mut typed = |line: &str| translate(line, &mut review, false);
        let load = typed(&format!("load {} vs bot:2", file.display()));
        assert!(
            matches!(&load, Input::Show(l) if l.len() > 10),
            "{:?}",
            shown(&load)
        );
        let shown_after = |input: &Input| shown(input).first().cloned().unwrap_or_default();
        assert_eq!(
            shown_after(&typed("goto 3")),
            "review othello: move 3 of 9, X e3"
        );
        assert_eq!(
            shown_after(&typed("p")),
            "review othello: move 2 of 9, O f4"
        );
        assert!(shown_after(&typed("goto 99")).starts_with("no move 99"));
        assert!(matches!(typed("help"), Input::Show(_)));
        assert!(
            matches!(typed("moves"), Input::Show(l) if l == ["1. e6 f4*  2. e3 f6  3. g5 d6  4. e7 f5  5. c5"])
        );
        assert!(matches!(typed("play"), Input::Send(s) if s == "NEW othello vs bot:2 from e6f4"),);
        // Once play has started a game, the review words are the server's.
        assert!(matches!(typed("next"), Input::Send(s) if s == "next"));
        typed(&format!("load {}", file.display()));
        assert!(matches!(typed("who"), Input::Send(_)));
        assert!(matches!(typed("last"), Input::Send(_)));
        typed(&format!("load {}", file.display()));
        assert!(matches!(typed("DONE"), Input::Show(l) if l == ["review closed"]));
        assert!(matches!(typed("done"), Input::Send(_)));
        let _ = std::fs::remove_dir_all(&dir);
    }

    fn shown(input: &Input) -> Vec<String> {
        match input {
            Input::Show(lines) => lines.clone(),
            _ => Vec::new(),
        }
    }
}
