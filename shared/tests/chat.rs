//! Chat: whatever a client sends after `SAY`, the `CHAT` line the others
//! receive is one line, by every definition of a line break, and carries no
//! character that reorders or hides text.

use flipline::protocol::{Command, Event, ServerLine};
use proptest::prelude::*;

/// Every character Python's `str.splitlines()` splits at: the strictest
/// reader a client is likely to use (it splits at more than LF and CR).
const LINE_BREAKS: [char; 10] = [
    '\n', '\r', '\u{0B}', '\u{0C}', '\u{1C}', '\u{1D}', '\u{1E}', '\u{85}', '\u{2028}', '\u{2029}',
];

/// Characters named here, apart from the crate's own table, that must not
/// reach another client: bidi controls, zero-width characters, the BOM, a tag.
const HIDDEN: [char; 16] = [
    '\u{AD}',
    '\u{061C}',
    '\u{200B}',
    '\u{200C}',
    '\u{200D}',
    '\u{200E}',
    '\u{200F}',
    '\u{202A}',
    '\u{202D}',
    '\u{202E}',
    '\u{2060}',
    '\u{2066}',
    '\u{2069}',
    '\u{FEFF}',
    '\u{E0001}',
    '\u{E007F}',
];

/// Text with line breaks, hidden characters and forged protocol lines mixed
/// into ordinary text.
fn hostile_text() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        "[a-z ]{0,6}",
        proptest::sample::select(LINE_BREAKS.to_vec()).prop_map(String::from),
        proptest::sample::select(HIDDEN.to_vec()).prop_map(String::from),
        Just("OVER 2 X 64 0 resign".to_string()),
        Just("OK".to_string()),
        "\\PC{0,4}",
    ];
    proptest::collection::vec(piece, 1..12).prop_map(|pieces| pieces.concat())
}

/// The `CHAT` line the daemon would print for `SAY <text>` from `ann`, if the
/// command parses (text of spaces only does not).
fn chat_line(text: &str) -> Option<String> {
    match Command::parse(&format!("SAY {text}")) {
        Ok(Command::Say(said)) => Some(
            Event::Chat {
                game: 2,
                name: "ann".to_string(),
                text: said,
            }
            .to_string(),
        ),
        _ => None,
    }
}

fn assert_one_plain_line(line: &str) -> Result<(), TestCaseError> {
    prop_assert!(!line.contains(LINE_BREAKS), "a line break in {:?}", line);
    prop_assert!(!line.contains(HIDDEN), "a hidden character in {:?}", line);
    let separators = ['\u{2028}', '\u{2029}'];
    prop_assert!(!line.contains(separators), "{:?}", line);
    prop_assert!(
        matches!(
            ServerLine::parse(line),
            ServerLine::Event(Event::Chat { game: 2, .. })
        ),
        "{:?}",
        line
    );
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn chat_of_hostile_text_is_one_plain_line(text in hostile_text()) {
        if let Some(line) = chat_line(&text) {
            assert_one_plain_line(&line)?;
        }
    }

    #[test]
    fn chat_of_any_text_is_one_plain_line(text in any::<String>()) {
        if let Some(line) = chat_line(&text) {
            assert_one_plain_line(&line)?;
            prop_assert!(!line.chars().any(flipline::protocol::is_unsafe_in_a_line));
        }
    }
}

#[test]
fn a_forged_over_after_a_line_separator_stays_inside_the_chat() {
    let line = chat_line("x\u{2028}OVER 2 X 64 0 resign").unwrap();
    assert_eq!(line, "CHAT 2 ann x OVER 2 X 64 0 resign");
    let reversed = chat_line("gg \u{202E}niw I").unwrap();
    assert_eq!(reversed, "CHAT 2 ann gg  niw I");
}
