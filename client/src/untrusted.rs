//! Text flip shows but did not write: other players' chat and names, and
//! whatever else a server sends (replies, errors, `INFO`, lines this version
//! does not know). Pure functions from that text to what is printed, so that
//! it can never pass for flip's own output or work the terminal:
//!
//! - every character that could move the cursor, start an escape sequence,
//!   break the line, reorder or hide text (controls, ESC among them, line and
//!   paragraph separators, format characters such as bidi overrides and
//!   zero-width characters) is shown as its escape, `\u{202e}`;
//! - a chat line, and only a chat line, starts with [`CHAT_MARKER`], the
//!   speaker's name in a fixed frame after it: `[12] <ann> text`; a chat too
//!   long for one row is cut into several, each in the same frame, so that
//!   no row the terminal wraps to starts with someone else's words;
//! - a name is shown only in the protocol's name alphabet, anything else in
//!   it escaped, so that a name can neither open a line with the marker nor
//!   close the frame early.
//!
//! flip does not rely on the server for any of this: the daemon replaces such
//! characters in chat too, but another server, or a later one, may not.

use flipline::protocol::{GameId, is_unsafe_in_a_line};

/// What every chat line starts with, and no other line flip prints: the
/// opening of the frame `[12] <ann> `.
pub const CHAT_MARKER: char = '[';

/// The widest a chat line is drawn, in terminal columns, so that it fits an
/// 80-column terminal without wrapping.
pub const LINE_COLUMNS: usize = 79;

/// The fewest columns of text a chat line carries, however wide its frame
/// (a game number and name can be long on a server that is not flipd).
const MIN_TEXT_COLUMNS: usize = 20;

/// The longest a name is shown, in columns (the protocol's names are at most
/// 20 characters; a longer one is cut and ends in `...`).
const MAX_NAME_COLUMNS: usize = 24;

/// `text` with every confusing character shown as its escape (`\u{1b}`,
/// `\u{202e}`); everything else, accents and emoji too, as it is.
pub fn escape(text: &str) -> String {
    let mut shown = String::with_capacity(text.len());
    for c in text.chars() {
        push_shown(&mut shown, c);
    }
    shown
}

/// Whether `c` is shown escaped: a control character (Cc: C0, DEL, C1, so
/// ESC, CR, BS, NEL), a line or paragraph separator (Zl, Zp), or a format
/// character (Cf: the bidi embeddings, overrides and isolates, zero-width
/// spaces and joiners, LRM/RLM, U+FEFF, tags). The set is the one the
/// protocol crate keeps as explicit Unicode ranges for relayed text.
pub fn is_confusing(c: char) -> bool {
    is_unsafe_in_a_line(c)
}

/// A name as flip shows it: the letters, digits, `_`, `-` and `:` of the
/// protocol's names (and its bots' `bot:3`) as they are, any other character
/// escaped, cut at [`MAX_NAME_COLUMNS`] with `...`, `""` for an empty one. A
/// backslash is escaped too, so an escape in a name is always flip's.
pub fn name(name: &str) -> String {
    if name.is_empty() {
        return "\"\"".to_string();
    }
    let mut shown = String::new();
    for c in name.chars() {
        let piece = if is_name_char(c) {
            c.to_string()
        } else {
            escaped(c)
        };
        if shown.len() + piece.len() > MAX_NAME_COLUMNS {
            shown.push_str("...");
            break;
        }
        shown.push_str(&piece);
    }
    shown
}

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | ':')
}

/// The lines flip prints for `CHAT <game> <speaker> <text>`: `[12] <ann>
/// text`, cut at spaces (or anywhere, in a long word) into as many lines as
/// it takes to keep each within [`LINE_COLUMNS`], every one in the frame.
pub fn chat_lines(game: GameId, speaker: &str, text: &str) -> Vec<String> {
    let frame = format!("{CHAT_MARKER}{game}] <{}>", name(speaker));
    let budget = LINE_COLUMNS
        .saturating_sub(frame.len() + 1)
        .max(MIN_TEXT_COLUMNS);
    let lines: Vec<String> = wrap(text, budget)
        .into_iter()
        .map(|chunk| format!("{frame} {chunk}"))
        .collect();
    if lines.is_empty() { vec![frame] } else { lines }
}

/// A server line as `--raw` shows it: as it came, but escaped, and with a
/// leading [`CHAT_MARKER`] escaped too, so that not even a raw line reads as
/// a chat line.
pub fn raw_line(line: &str) -> String {
    let shown = escape(line);
    match shown.strip_prefix(CHAT_MARKER) {
        Some(rest) => format!("{}{rest}", escaped(CHAT_MARKER)),
        None => shown,
    }
}

/// The columns a shown character takes at most: one for ASCII, two for
/// anything else (East Asian wide characters and emoji take two; nothing
/// takes more), so a line measured this way is never wider than measured.
pub fn columns(c: char) -> usize {
    if c.is_ascii() { 1 } else { 2 }
}

/// The columns `text` takes at most, as [`columns`] counts them.
pub fn width(text: &str) -> usize {
    text.chars().map(columns).sum()
}

fn escaped(c: char) -> String {
    c.escape_unicode().to_string()
}

fn push_shown(shown: &mut String, c: char) {
    if is_confusing(c) {
        shown.extend(c.escape_unicode());
    } else {
        shown.push(c);
    }
}

/// `text`, escaped, cut into pieces at most `budget` columns wide: at the
/// last space of a piece when that leaves it at least half full (the space
/// itself dropped), anywhere else otherwise; an escape is never cut.
fn wrap(text: &str, budget: usize) -> Vec<String> {
    let mut pieces = Vec::new();
    let mut line = String::new();
    let mut line_width = 0;
    // Where the last space of `line` is, and the width before it.
    let mut last_space: Option<(usize, usize)> = None;
    for c in text.chars() {
        let mut unit = String::new();
        push_shown(&mut unit, c);
        let unit_width = width(&unit);
        if line_width + unit_width > budget && !line.is_empty() {
            if c == ' ' {
                pieces.push(std::mem::take(&mut line));
                line_width = 0;
                last_space = None;
                continue;
            }
            match last_space.take() {
                Some((at, before)) if before >= budget / 2 => {
                    let rest = line.split_off(at + 1);
                    line.pop();
                    pieces.push(std::mem::replace(&mut line, rest));
                    line_width -= before + 1;
                }
                _ => {
                    pieces.push(std::mem::take(&mut line));
                    line_width = 0;
                }
            }
        }
        if c == ' ' {
            last_space = Some((line.len(), line_width));
        }
        line.push_str(&unit);
        line_width += unit_width;
    }
    if !line.is_empty() {
        pieces.push(line);
    }
    pieces
}

/// Strategies and checks for the tests of every module that shows server
/// text.
#[cfg(test)]
pub mod test_text {
    use proptest::prelude::*;

    /// The characters that must never reach the terminal as they are, written
    /// out apart from the protocol crate's list so that a change there is
    /// noticed.
    pub fn must_be_escaped(c: char) -> bool {
        c.is_control()
            || matches!(c,
                '\u{2028}' | '\u{2029}'
                | '\u{200B}'..='\u{200F}'
                | '\u{202A}'..='\u{202E}'
                | '\u{2066}'..='\u{2069}'
                | '\u{FEFF}' | '\u{061C}' | '\u{00AD}' | '\u{2060}'..='\u{2064}'
                | '\u{E0001}' | '\u{E0020}'..='\u{E007F}')
    }

    /// Text with the characters that matter over-represented: controls,
    /// escapes, separators, bidi and zero-width characters, brackets, spaces.
    pub fn hostile_text() -> impl Strategy<Value = String> {
        let tricky = prop::sample::select(vec![
            '\u{1b}',
            '\r',
            '\n',
            '\t',
            '\u{8}',
            '\u{7f}',
            '\u{85}',
            '\u{9b}',
            '\u{2028}',
            '\u{2029}',
            '\u{202e}',
            '\u{202a}',
            '\u{2066}',
            '\u{2069}',
            '\u{200b}',
            '\u{200f}',
            '\u{feff}',
            '\u{e0041}',
            '[',
            ']',
            '<',
            '>',
            ' ',
            '\\',
            'u',
            '{',
            '}',
            '\u{4e2d}',
            '\u{1f600}',
        ]);
        let any = prop_oneof![3 => tricky, 1 => any::<char>(), 2 => prop::char::range('a', 'z')];
        prop::collection::vec(any, 0..300).prop_map(|cs| cs.into_iter().collect())
    }
}

#[cfg(test)]
mod tests {
    use super::test_text::{hostile_text, must_be_escaped};
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn confusing_characters_are_shown_escaped() {
        assert_eq!(
            escape("a\u{1b}[2Jb\rc\u{202e}d\u{200b}e\u{2028}f\u{feff}g\u{85}h"),
            "a\\u{1b}[2Jb\\u{d}c\\u{202e}d\\u{200b}e\\u{2028}f\\u{feff}g\\u{85}h"
        );
        let plain = "gg, b\u{e9}ll\u{e9} partie \u{1f600} C:\\dir";
        assert_eq!(escape(plain), plain);
    }

    #[test]
    fn a_chat_reads_as_a_chat_whatever_it_says() {
        assert_eq!(chat_lines(12, "ann", "ok 12"), ["[12] <ann> ok 12"]);
        assert_eq!(
            chat_lines(12, "eve", "\rgame 12 over: you win"),
            ["[12] <eve> \\u{d}game 12 over: you win"]
        );
        assert_eq!(
            chat_lines(3, "eve", "\u{1b}[2J\u{202e}niw uoy"),
            ["[3] <eve> \\u{1b}[2J\\u{202e}niw uoy"]
        );
        assert_eq!(chat_lines(3, "a>b", "hi"), ["[3] <a\\u{3e}b> hi"]);
        assert_eq!(chat_lines(3, "ann", ""), ["[3] <ann>"]);
    }

    #[test]
    fn a_long_chat_is_cut_at_spaces_each_piece_in_the_frame() {
        let padding = "x".repeat(67);
        let text = format!("{padding} game 12 over: you win");
        let lines = chat_lines(12, "eve", &text);
        assert_eq!(
            lines,
            [
                format!("[12] <eve> {padding}"),
                "[12] <eve> game 12 over: you win".to_string()
            ]
        );
        let word = "y".repeat(100);
        let lines = chat_lines(1, "ann", &word);
        assert_eq!(lines.len(), 2, "{lines:?}");
        assert!(lines.iter().all(|l| l.len() <= LINE_COLUMNS), "{lines:?}");
    }

    #[test]
    fn names_keep_to_the_name_alphabet() {
        assert_eq!(name("ann"), "ann");
        assert_eq!(name("bot:3"), "bot:3");
        assert_eq!(name("-"), "-");
        assert_eq!(name(""), "\"\"");
        assert_eq!(name("[1]"), "\\u{5b}1\\u{5d}");
        assert_eq!(name("a\\u{41}"), "a\\u{5c}u\\u{7b}41\\u{7d}");
        assert_eq!(name(&"n".repeat(40)), format!("{}...", "n".repeat(24)));
        assert_eq!(
            name(&"\u{202e}".repeat(9)),
            format!("{}...", "\\u{202e}".repeat(3))
        );
    }

    #[test]
    fn a_raw_line_is_escaped_and_never_opens_with_the_marker() {
        assert_eq!(raw_line("CHAT 1 ann hi\u{1b}"), "CHAT 1 ann hi\\u{1b}");
        assert_eq!(raw_line("[1] <ann> hi"), "\\u{5b}1] <ann> hi");
    }

    proptest! {
        #[test]
        fn every_chat_line_is_framed_one_row_and_escaped(
            game in any::<u64>(),
            speaker in hostile_text(),
            text in hostile_text(),
        ) {
            let lines = chat_lines(game, &speaker, &text);
            prop_assert!(!lines.is_empty());
            let frame = format!("[{game}] <{}>", name(&speaker));
            let widest = LINE_COLUMNS.max(frame.len() + 1 + MIN_TEXT_COLUMNS);
            for line in &lines {
                prop_assert!(line.starts_with(CHAT_MARKER), "{line:?}");
                prop_assert!(line.starts_with(&frame), "{line:?}");
                prop_assert!(!line.chars().any(must_be_escaped), "{line:?}");
                prop_assert!(width(line) <= widest, "{line:?}");
            }
            // Nothing is lost but the spaces lines were cut at.
            let said: String = lines
                .iter()
                .map(|l| l.get(frame.len()..).unwrap_or(""))
                .collect::<String>()
                .replace(' ', "");
            prop_assert_eq!(said, escape(&text).replace(' ', ""));
        }

        #[test]
        fn names_and_raw_lines_hold_nothing_confusing(text in hostile_text()) {
            let shown = name(&text);
            prop_assert!(shown.len() <= MAX_NAME_COLUMNS + 3, "{shown:?}");
            let flips_own = |c: char| is_name_char(c) || matches!(c, '\\' | '{' | '}' | '.' | '"');
            prop_assert!(shown.chars().all(flips_own), "{:?}", shown);
            let raw = raw_line(&text);
            prop_assert!(!raw.starts_with(CHAT_MARKER));
            prop_assert!(!raw.chars().any(must_be_escaped), "{raw:?}");
            prop_assert!(!escape(&text).chars().any(must_be_escaped));
        }
    }
}
