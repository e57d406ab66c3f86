//! What a line typed (or piped) becomes: a command for the server, or one of
//! the client's own (`help`, `quit`, `save FILE`, `load FILE`), shared by the
//! interactive client and the script mode.

use std::path::{Path, PathBuf};
use std::time::Duration;

use flipline::protocol::COMMAND_HELP;
use flipline::{Square, Variant};

use crate::export::GameLine;
use crate::link::Link;
use crate::render::move_list;
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
    /// Nothing to do.
    Nothing,
}

/// A square alone means `MOVE`; `help`, `quit` and `save FILE` are done
/// locally; `load FILE [options]` becomes the `NEW` that replays the file's
/// game.
pub fn translate(line: &str) -> Input {
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

/// `load FILE [options]`: `NEW <variant> <options> from <moves>` for the first
/// game of the file (a line written by `save` or `flip export`, or a bare
/// move string: see saved_game.rs).
fn load_command(path: &Path, options: &str) -> Result<String, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    // The error quotes the file, which may come from anyone.
    let game = crate::saved_game::parse(&text)
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

/// The widest a help line may be: an 80-column terminal, less one so that
/// no line makes it wrap.
const HELP_COLUMNS: usize = 79;

/// Where a command's description starts.
const HELP_INDENT: usize = 24;

pub fn help_lines() -> Vec<String> {
    let own = [
        ("d3", "a square alone plays it"),
        ("moves", "the current game's moves, the last marked *"),
        ("save FILE", "write the current game to FILE"),
        (
            "load FILE [as/vs/clock ...]",
            "a new game from the moves saved in FILE",
        ),
    ];
    let mut lines = vec!["commands (keywords in any case):".to_string()];
    for (usage, what) in COMMAND_HELP.iter().chain(&own) {
        lines.extend(help_entry(usage, what));
    }
    let variants = Variant::ALL.map(|v| v.name()).join(", ");
    lines.extend(wrapped("  variants: ", &variants, 4));
    lines
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
