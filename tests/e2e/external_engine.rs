//! flip's engine over NBoard's and GTP's protocols: `flip engine` on its
//! standard streams, a script in and the replies asserted. Every process is
//! waited for with a bound.

use std::io::Write;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use flipline_tests::{wait_bounded, workspace_binary};

/// The `flip` binary, as a path a command line can hold.
fn flip_path() -> String {
    workspace_binary("flip", "flip").display().to_string()
}

/// `flip args...` with `input` on its standard input, its output when it
/// has ended (at most 30 s).
fn flip_with_input(args: &[&str], input: &str) -> Output {
    let mut child = Command::new(flip_path())
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start flip: {e}"));
    let mut stdin = child.stdin.take().unwrap_or_else(|| panic!("no stdin"));
    stdin
        .write_all(input.as_bytes())
        .unwrap_or_else(|e| panic!("cannot write: {e}"));
    drop(stdin);
    wait_bounded(child, Duration::from_secs(30))
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn flip_engine_answers_gtp_on_its_standard_streams() {
    let script = "1 protocol_version\nboardsize 8\nclear_board\n2 play b d3\ngenmove w\nplay b a1\nnonsense\nquit\nname\n";
    let out = flip_with_input(&["engine", "--protocol", "gtp", "--level", "2"], script);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let lines: Vec<String> = text(&out.stdout).lines().map(str::to_string).collect();
    let (head, tail) = lines.split_at(8);
    assert_eq!(head, ["=1 2", "", "=", "", "=", "", "=2", ""]);
    let [
        genmove,
        blank,
        illegal,
        blank2,
        unknown,
        blank3,
        quit,
        blank4,
    ] = tail
    else {
        panic!("{lines:?}");
    };
    assert!(
        [blank, blank2, blank3, blank4].iter().all(|l| l.is_empty()),
        "{lines:?}"
    );
    // White's answers to d3: c3, e3 or c5.
    assert!(
        ["= C3", "= E3", "= C5"].contains(&genmove.as_str()),
        "{genmove}"
    );
    assert_eq!(
        (illegal.as_str(), unknown.as_str()),
        ("? illegal move", "? unknown command")
    );
    assert_eq!(quit, "=", "nothing is read after quit");
}

#[test]
fn flip_engine_answers_nboard_on_its_standard_streams() {
    let game = "(;GM[Othello]PC[NBoard]TY[8]BO[8 ---------------------------O*------*O--------------------------- *]B[F5];)";
    let script = format!("nboard 2\nset depth 2\nset game {game}\nping 1\ngo\nmove zz\nping 2\n");
    let out = flip_with_input(&["engine", "--protocol", "nboard"], &script);
    assert!(
        out.status.success(),
        "the end of input ends it: {}",
        text(&out.stderr)
    );
    let stdout = text(&out.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.first(), Some(&"set myname flip"), "{stdout}");
    assert_eq!(lines.get(1), Some(&"pong 1"), "{stdout}");
    let go = lines
        .iter()
        .find(|l| l.starts_with("=== "))
        .unwrap_or_else(|| panic!("{stdout}"));
    // White's answers to f5: d6, f4 or f6.
    let mv = go
        .trim_start_matches("=== ")
        .split('/')
        .next()
        .unwrap_or("");
    assert!(["D6", "F4", "F6"].contains(&mv), "{go}");
    assert_eq!(lines.last(), Some(&"pong 2"), "{stdout}");
    assert!(text(&out.stderr).contains("move"), "the bad move is noted");
}
