//! What rustyline asks of flip while a line is edited: completion of
//! commands, variants and the squares legal now, and hints from the history,
//! drawn dimmed so that they cannot pass for what was typed (and not at all
//! where colour is off: plain, a hint would look typed).

use std::borrow::Cow;
use std::cell::Cell;
use std::sync::Arc;

use flipline::protocol::COMMAND_HELP;
use flipline::{Square, Variant};
use rustyline::completion::Completer;
use rustyline::highlight::{CmdKind, Highlighter};
use rustyline::hint::{Hinter, HistoryHinter};
use rustyline::{Completer, Helper, Validator};

use crate::play::link::Link;
use crate::play::render::CLOCK_BAR_WIDTH;
use std::time::Instant;

/// Completion of commands, variants and the squares that are legal right now;
/// hints from history.
#[derive(Helper, Completer, Validator)]
pub struct FlipHelper {
    #[rustyline(Completer)]
    completer: FlipCompleter,
    hinter: HistoryHinter,
    /// Whether hints are shown (dimmed): only where colour is on.
    color: bool,
    /// Whether the line was empty when last seen (Ctrl-C on an empty line
    /// says how to leave).
    empty: Cell<bool>,
    /// Whether this prompt has shown clocks: it keeps showing them (the
    /// final times) after the game ends, until the next prompt.
    clocks_shown: Cell<bool>,
}

impl FlipHelper {
    /// A helper completing from what `link`'s view knows.
    pub fn new(link: &Arc<Link>, color: bool) -> FlipHelper {
        FlipHelper {
            color,
            completer: FlipCompleter {
                link: Arc::clone(link),
            },
            hinter: HistoryHinter::new(),
            empty: Cell::new(true),
            clocks_shown: Cell::new(false),
        }
    }

    /// Whether the line being edited was empty when last seen.
    pub fn line_was_empty(&self) -> bool {
        self.empty.get()
    }

    /// A new prompt starts with an empty line, and shows clocks only once
    /// a clocked game is on.
    pub fn new_line(&self) {
        self.empty.set(true);
        self.clocks_shown.set(false);
    }
}

impl Hinter for FlipHelper {
    type Hint = String;

    fn hint(&self, line: &str, pos: usize, ctx: &rustyline::Context<'_>) -> Option<String> {
        self.empty.set(line.is_empty());
        if !self.color {
            return None;
        }
        self.hinter.hint(line, pos, ctx)
    }
}

/// Dim (faint) on, and every attribute off.
const DIM: &str = "\x1b[2m";
const RESET: &str = "\x1b[0m";

impl Highlighter for FlipHelper {
    /// Drawn before anything else of a refresh is written: where a leave
    /// asked by another thread happens (see `terminal::leave`).
    /// While a clocked game is on, the clocks as they are now go at the
    /// right end of the prompt's row (see [`with_clocks`]): a game that
    /// starts while this prompt is up shows them at once.
    fn highlight_prompt<'b, 's: 'b, 'p: 'b>(&'s self, prompt: &'p str, _: bool) -> Cow<'b, str> {
        crate::play::terminal::leave_if_asked();
        let view = self.completer.link.view();
        if !(view.clocked_game_on() || self.clocks_shown.get()) {
            return Cow::Borrowed(prompt);
        }
        match view.clock_bar(Instant::now(), self.color) {
            Some(bar) => {
                self.clocks_shown.set(true);
                Cow::Owned(with_clocks(prompt, &bar))
            }
            None => Cow::Borrowed(prompt),
        }
    }

    fn highlight_hint<'h>(&self, hint: &'h str) -> Cow<'h, str> {
        Cow::Owned(dimmed(hint))
    }

    /// A password or a secret typed in a `login` is never drawn: `*` in its
    /// place from the first character typed (the line is refused when
    /// entered, see `interactive.rs`).
    fn highlight<'l>(&self, line: &'l str, _: usize) -> Cow<'l, str> {
        crate::play::secret::masked(line).map_or(Cow::Borrowed(line), Cow::Owned)
    }

    /// So that each character of a password is drawn masked, not written as
    /// typed.
    fn highlight_char(&self, line: &str, _: usize, _: CmdKind) -> bool {
        crate::play::secret::shows_credential(line)
    }
}

/// The prompt for `prompt`: while a finished game is reviewed, where the
/// review is (`review 12/60`): the review words then mean what they do.
/// The clocks are not part of it: rustyline measures a prompt once, as its
/// line begins, and a game may start while it is up (a `SEEK` paired, a
/// challenge accepted, an open game joined); they are drawn beside it as
/// it is drawn (see [`with_clocks`]).
pub fn prompt_for(link: &Link, prompt: &str) -> String {
    match &*link.review() {
        Some(review) => format!("review {}/{} {prompt}", review.ply(), review.len()),
        None => prompt.to_string(),
    }
}

/// `prompt` with `bar` drawn at the right end of its row: the cursor saved,
/// moved to the right margin (a move past it stops there) and back the
/// bar's width, the bar written, the cursor put back. The prompt then takes
/// the columns rustyline measured, whatever the bar, and what is typed
/// starts where it always does.
fn with_clocks(prompt: &str, bar: &str) -> String {
    format!("\x1b7\x1b[999C\x1b[{CLOCK_BAR_WIDTH}D{bar}\x1b8{prompt}")
}

/// A hint as drawn after the cursor.
fn dimmed(hint: &str) -> String {
    format!("{DIM}{hint}{RESET}")
}

pub struct FlipCompleter {
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
        let (squares, reviewing) = {
            let view = self.link.view();
            let squares: Vec<String> = view.legal_now().iter().map(Square::to_string).collect();
            (squares, self.link.review().is_some())
        };
        let options: Vec<String> = if first_word {
            first_words(&word, squares, reviewing)
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
                "tourney" => {
                    let words = [
                        "new",
                        "join",
                        "leave",
                        "start",
                        "list",
                        "show",
                        "roundrobin",
                        "swiss",
                        "rounds",
                        "clock",
                        "rated",
                        "casual",
                        "random:8",
                    ];
                    (Variant::ALL.iter().map(|v| v.name()))
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

/// What a line's first word may complete to: a legal square first of all
/// (`d` completes to `d3` when d3 is legal, not to `decline`), else the
/// client's and the server's commands, the review's words while reviewing,
/// and the squares.
fn first_words(word: &str, squares: Vec<String>, reviewing: bool) -> Vec<String> {
    let legal: Vec<String> = (squares.iter())
        .filter(|s| s.starts_with(word))
        .cloned()
        .collect();
    if !word.is_empty() && !legal.is_empty() {
        return legal;
    }
    let commands = COMMAND_HELP
        .iter()
        .filter_map(|(usage, _)| usage.split(' ').next())
        .map(str::to_ascii_lowercase);
    let review_words = reviewing
        .then_some(crate::play::review::WORDS)
        .into_iter()
        .flatten();
    commands
        .chain(["save", "load", "moves", "register"].map(str::to_string))
        .chain(review_words.map(str::to_string))
        .chain(squares)
        .filter(|o| o.starts_with(word))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_legal_square_comes_before_a_command_that_starts_alike() {
        let squares = || vec!["d3".to_string(), "c4".to_string()];
        assert_eq!(first_words("d", squares(), false), ["d3"]);
        assert_eq!(first_words("c", squares(), false), ["c4"]);
        assert_eq!(first_words("de", squares(), false), ["decline"]);
        assert_eq!(first_words("d", Vec::new(), false), ["decline"]);
        assert_eq!(first_words("reg", Vec::new(), false), ["register"]);
        let all = first_words("", squares(), false);
        assert!(all.iter().any(|w| w == "d3") && all.iter().any(|w| w == "decline"));
    }

    #[test]
    fn the_clocks_are_drawn_aside_and_the_prompt_written_after() {
        let drawn = with_clocks("flip> ", "[X] 4:59.9  O  5:00.0  ");
        assert_eq!(
            drawn,
            "\x1b7\x1b[999C\x1b[23D[X] 4:59.9  O  5:00.0  \x1b8flip> "
        );
    }

    #[test]
    fn a_hint_is_dimmed_and_ends_every_attribute() {
        assert_eq!(dimmed("ng"), "\x1b[2mng\x1b[0m");
    }
}
