//! NBoard's lines, both ways (the protocol NBoard's documentation and its
//! GUI's parser describe): what the GUI sends an engine (`nboard 2`, `set
//! game <GGF>`, `move F5/1.00/0.5`, `hint 3`, `go`, `ping 4`, ...) and what
//! an engine answers (`=== F5/1.00/0.5`, `search F5 1.00 0 12`, `pong 4`,
//! `status ...`, `nodestats ...`). Moves are two characters, `F5`, or `PA`
//! for a pass.

use flipline::{Move, Square};

/// A command from the GUI.
#[derive(Clone, Debug, PartialEq)]
pub enum Command {
    /// `nboard <version>`, the first command.
    Nboard(String),
    /// `set depth <n>`: the midgame search depth.
    SetDepth(Option<i64>),
    /// `set game <GGF>`: the game from its start to the position in play.
    SetGame(String),
    /// `set contempt <n>`: the value of a draw, in discs.
    SetContempt(String),
    /// `set <other> ...`: a setting this engine does not know.
    SetOther(String),
    /// `move <mv>[/<eval>/<time>]`, or (NBoard 1.1) the move alone.
    Move(Option<MoveItem>),
    /// `hint <n>`: the evaluations of the n best moves.
    Hint(Option<u32>),
    /// `go`: the move the engine would play.
    Go,
    /// `ping <n>`: answered `pong <n>` once everything before it is done.
    Ping(String),
    /// `learn`: add the game to the engine's book.
    Learn,
    /// `analyze`: evaluate every position of the game.
    Analyze,
    /// `quit`.
    Quit,
    /// A line this engine does not know (the protocol says to ignore it).
    Unknown(String),
}

/// A move with what may come with it: `F5/1.25/0.50`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MoveItem {
    /// The move.
    pub mv: Move,
    /// The evaluation, in discs for the side that moved.
    pub eval: Option<f64>,
    /// The time it took, in seconds.
    pub seconds: Option<f64>,
}

/// Reads a line from the GUI; `None` for a blank line.
pub fn parse_command(line: &str) -> Option<Command> {
    let line = line.trim();
    let (word, rest) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
    let rest = rest.trim();
    Some(match word {
        "" => return None,
        "nboard" => Command::Nboard(rest.to_string()),
        "set" => parse_set(rest),
        "move" => Command::Move(parse_move_item(rest)),
        "hint" => Command::Hint(rest.parse().ok()),
        "go" => Command::Go,
        "ping" => Command::Ping(rest.to_string()),
        "learn" => Command::Learn,
        "analyze" => Command::Analyze,
        "quit" => Command::Quit,
        _ => match parse_move_item(line) {
            Some(item) if rest.is_empty() => Command::Move(Some(item)),
            _ => Command::Unknown(line.to_string()),
        },
    })
}

fn parse_set(rest: &str) -> Command {
    let (name, value) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
    let value = value.trim();
    match name {
        "depth" => Command::SetDepth(value.parse().ok()),
        "game" => Command::SetGame(value.to_string()),
        "contempt" => Command::SetContempt(value.to_string()),
        _ => Command::SetOther(rest.to_string()),
    }
}

/// Reads `F5`, `F5/1.25`, `F5/1.25/0.5`, `F5//0.5` or `PA`; `None` when the
/// move does not read (an evaluation or time that does not read is left
/// out, as NBoard's parser leaves it).
pub fn parse_move_item(text: &str) -> Option<MoveItem> {
    let mut parts = text.trim().split('/');
    let mv = parse_move(parts.next()?)?;
    let mut number = || {
        parts
            .next()
            .and_then(|p| p.trim().parse::<f64>().ok())
            .filter(|n| n.is_finite())
    };
    let eval = number();
    let seconds = number();
    Some(MoveItem { mv, eval, seconds })
}

/// A move as NBoard writes one, in any case: a square of the 8x8 board, or a
/// pass (`PA`, `PASS`, and Edax's `PS`, `--`).
pub fn parse_move(text: &str) -> Option<Move> {
    let lower = text.trim().to_ascii_lowercase();
    if matches!(lower.as_str(), "pa" | "pas" | "pass" | "ps" | "--") {
        return Some(Move::Pass);
    }
    let square: Square = lower.parse().ok()?;
    square.fits(8).then_some(Move::Place(square))
}

/// A move as NBoard writes it: `F5`, `PA`.
pub fn move_text(mv: Move) -> String {
    crate::archive::ggf_write::move_text(mv)
}

/// `F5/1.25/0.50`: the move, the evaluation, the seconds.
pub fn move_item_text(item: &MoveItem) -> String {
    let mut text = move_text(item.mv);
    if item.eval.is_some() || item.seconds.is_some() {
        text.push('/');
        if let Some(eval) = item.eval {
            text.push_str(&format!("{eval:.2}"));
        }
        if let Some(seconds) = item.seconds {
            text.push_str(&format!("/{seconds:.2}"));
        }
    }
    text
}

/// An engine's line, as a controller reads it.
#[derive(Clone, Debug, PartialEq)]
pub enum Reply {
    /// `=== <move>[/<eval>/<time>]` (Edax separates them with spaces).
    Move(Option<MoveItem>),
    /// `pong <n>`.
    Pong(String),
    /// Anything else (`status`, `nodestats`, `search`, `set myname`, ...).
    Other,
}

/// Reads a line from an engine.
pub fn parse_reply(line: &str) -> Reply {
    let line = line.trim();
    if let Some(rest) = line.strip_prefix("===") {
        let item: Vec<&str> = rest.split_whitespace().collect();
        return Reply::Move(parse_move_item(&item.join("/")));
    }
    match line.split_once(char::is_whitespace) {
        Some(("pong", n)) => Reply::Pong(n.trim().to_string()),
        _ => Reply::Other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn square(name: &str) -> Move {
        Move::Place(name.parse().unwrap())
    }

    #[test]
    fn the_gui_commands_read() {
        assert_eq!(parse_command("nboard 2"), Some(Command::Nboard("2".into())));
        assert_eq!(
            parse_command("set depth 12"),
            Some(Command::SetDepth(Some(12)))
        );
        assert_eq!(
            parse_command("set game (;GM[Othello];)"),
            Some(Command::SetGame("(;GM[Othello];)".into()))
        );
        let item = MoveItem {
            mv: square("f5"),
            eval: Some(-1.5),
            seconds: Some(0.25),
        };
        assert_eq!(
            parse_command("move F5/-1.50/0.25"),
            Some(Command::Move(Some(item)))
        );
        assert_eq!(
            parse_command("F5"),
            Some(Command::Move(Some(MoveItem {
                mv: square("f5"),
                eval: None,
                seconds: None
            })))
        );
        assert_eq!(parse_command("hint 3"), Some(Command::Hint(Some(3))));
        assert_eq!(parse_command("ping 7"), Some(Command::Ping("7".into())));
        assert_eq!(parse_command("  "), None);
        assert_eq!(
            parse_command("frobnicate"),
            Some(Command::Unknown("frobnicate".into()))
        );
        assert_eq!(parse_command("move zz"), Some(Command::Move(None)));
    }

    #[test]
    fn engine_replies_read_with_slashes_or_spaces() {
        let slashes = parse_reply("=== F5/1.00/0.5");
        let spaces = parse_reply("=== f5 1.00 0.5");
        assert_eq!(slashes, spaces);
        assert!(matches!(slashes, Reply::Move(Some(MoveItem { mv, .. })) if mv == square("f5")));
        assert!(matches!(
            parse_reply("=== pa"),
            Reply::Move(Some(MoveItem { mv: Move::Pass, .. }))
        ));
        assert_eq!(parse_reply("=== zz"), Reply::Move(None));
        assert_eq!(parse_reply("pong 3"), Reply::Pong("3".into()));
        assert_eq!(parse_reply("status thinking"), Reply::Other);
    }

    proptest! {
        #[test]
        fn any_line_reads_without_panicking(line in ".*") {
            let _ = parse_command(&line);
            let _ = parse_reply(&line);
            let _ = parse_move_item(&line);
        }

        #[test]
        fn a_move_item_reads_back(
            index in 0u32..64,
            pass: bool,
            eval in proptest::option::of(-64i32..=64),
            hundredths in proptest::option::of(0u32..100_000),
        ) {
            let mv = if pass { Move::Pass } else { Move::Place(Square::from_index(index, 8)) };
            let item = MoveItem {
                mv,
                eval: eval.map(f64::from),
                seconds: hundredths.map(|h| f64::from(h) / 100.0),
            };
            let read = parse_move_item(&move_item_text(&item)).unwrap();
            prop_assert_eq!(read.mv, mv);
            prop_assert_eq!(read.eval, item.eval);
            let close = match (read.seconds, item.seconds) {
                (Some(a), Some(b)) => (a - b).abs() < 0.006,
                (a, b) => a.is_none() && b.is_none(),
            };
            prop_assert!(close);
            prop_assert_eq!(parse_reply(&format!("=== {}", move_item_text(&item))), Reply::Move(Some(read)));
        }
    }
}
