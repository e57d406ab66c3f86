//! GTP's lines, both ways (GTP version 2, section 2): a command is `[id]
//! name [arguments]`; a response is `=[id] result` or `?[id] message`, one
//! or more lines, ended by an empty line. Squares are Othello's (`d3`, `a1`
//! the top-left corner, as Edax and Egaroucid read them: not Go's letters
//! without `I` counted from the bottom), case-insensitive, and `pass`.

use flipline::{Color, Move, Square};

/// One command line, after GTP's preprocessing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Request {
    /// The optional numeric id, as given (digits only), echoed in the
    /// response; kept as text so that no id is too long to echo.
    pub id: Option<String>,
    /// The command's name, as given (GTP's names are lower case).
    pub name: String,
    /// The arguments.
    pub args: Vec<String>,
}

/// Reads a command line; `None` for a line GTP ignores (empty, blank, or a
/// comment only). Preprocessing as GTP's section 2.1 has it: control
/// characters other than tab and line feed dropped, everything from `#` on
/// dropped, tabs as spaces.
pub fn parse_request(line: &str) -> Option<Request> {
    let text = preprocess(line);
    let mut words = text.split(' ').filter(|w| !w.is_empty());
    let first = words.next()?;
    let (id, name) = if first.bytes().all(|b| b.is_ascii_digit()) {
        (Some(first.to_string()), words.next().unwrap_or(""))
    } else {
        (None, first)
    };
    Some(Request {
        id,
        name: name.to_string(),
        args: words.map(str::to_string).collect(),
    })
}

fn preprocess(line: &str) -> String {
    let before_comment = line.split('#').next().unwrap_or("");
    before_comment
        .chars()
        .filter(|c| !c.is_control() || *c == '\t')
        .map(|c| if c == '\t' { ' ' } else { c })
        .collect()
}

/// A command as a line, for an engine: `genmove b`.
pub fn request_line(name: &str, args: &[&str]) -> String {
    std::iter::once(name)
        .chain(args.iter().copied())
        .collect::<Vec<_>>()
        .join(" ")
}

/// The lines of a response, the empty line that ends it included: `=12 D3`,
/// then the result's further lines, then `""`. An empty line inside the
/// result would end it early, so such lines are written as a space.
pub fn response_lines(id: Option<&str>, success: bool, result: &[String]) -> Vec<String> {
    let mut head = String::from(if success { "=" } else { "?" });
    head.push_str(id.unwrap_or(""));
    let mut lines = Vec::with_capacity(result.len() + 2);
    match result.split_first() {
        Some((first, _)) if !first.is_empty() => lines.push(format!("{head} {first}")),
        _ => lines.push(head),
    }
    let rest = result.get(1..).unwrap_or(&[]);
    lines.extend(
        rest.iter()
            .map(|l| if l.is_empty() { " ".into() } else { l.clone() }),
    );
    lines.push(String::new());
    lines
}

/// A response as a controller reads it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Response {
    /// `=` rather than `?`.
    pub success: bool,
    /// The id the engine echoed, if any.
    pub id: Option<String>,
    /// The result or the error message, its lines joined by `\n`.
    pub text: String,
}

/// Reads a response from its lines (the one that starts it and the ones up
/// to the empty line that ends it); `None` when the first line is not one.
/// A space between the mark and the id (`= 1 d3`, as Edax writes it) is
/// not GTP's: such a response reads as having no id, which is how a
/// controller that sends none takes it anyway.
pub fn parse_response(lines: &[String]) -> Option<Response> {
    let (first, rest) = lines.split_first()?;
    let success = match first.chars().next()? {
        '=' => true,
        '?' => false,
        _ => return None,
    };
    let after_mark = first.get(1..)?;
    let digits = after_mark.bytes().take_while(u8::is_ascii_digit).count();
    let id = (digits > 0).then(|| after_mark.get(..digits).unwrap_or("").to_string());
    let head = after_mark.get(digits..).unwrap_or("").trim();
    let mut text: Vec<&str> = vec![head];
    text.extend(rest.iter().map(|l| l.trim_end()));
    while text.last().is_some_and(|l| l.is_empty()) {
        text.pop();
    }
    Some(Response {
        success,
        id,
        text: text.join("\n"),
    })
}

/// A colour argument: `b`, `black`, `w`, `white`, in any case.
pub fn parse_color(word: &str) -> Option<Color> {
    match word.to_ascii_lowercase().as_str() {
        "b" | "black" => Some(Color::Black),
        "w" | "white" => Some(Color::White),
        _ => None,
    }
}

/// A colour as a controller writes it.
pub fn color_word(color: Color) -> &'static str {
    match color {
        Color::Black => "b",
        Color::White => "w",
    }
}

/// A vertex: a square of the 8x8 board (`d3`, `D3`) or `pass`.
pub fn parse_vertex(word: &str) -> Option<Move> {
    if word.eq_ignore_ascii_case("pass") {
        return Some(Move::Pass);
    }
    let square: Square = word.parse().ok()?;
    square.fits(8).then_some(Move::Place(square))
}

/// A move as GTP writes a vertex: `D3`, `pass`.
pub fn vertex(mv: Move) -> String {
    match mv {
        Move::Pass => "pass".to_string(),
        Move::Place(square) => square.to_string().to_ascii_uppercase(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn ids_comments_tabs_and_blank_lines_read_as_gtp_says() {
        let r = parse_request("12 play\tb D3 # a comment").unwrap();
        assert_eq!(r.id.as_deref(), Some("12"));
        assert_eq!(
            (r.name.as_str(), r.args),
            ("play", vec!["b".into(), "D3".into()])
        );
        assert_eq!(parse_request("   "), None);
        assert_eq!(parse_request("# only a comment"), None);
        assert_eq!(parse_request("name\r").unwrap().name, "name");
        let bare_id = parse_request("7").unwrap();
        assert_eq!(
            (bare_id.id.as_deref(), bare_id.name.as_str()),
            (Some("7"), "")
        );
    }

    #[test]
    fn responses_are_framed_with_the_id_and_an_empty_line() {
        assert_eq!(
            response_lines(Some("3"), true, &["D3".into()]),
            ["=3 D3", ""]
        );
        assert_eq!(response_lines(None, true, &[]), ["=", ""]);
        assert_eq!(
            response_lines(None, false, &["illegal move".into()]),
            ["? illegal move", ""]
        );
        let board = response_lines(None, true, &["".into(), "a".into(), "".into()]);
        assert_eq!(board, ["=", "a", " ", ""]);
    }

    #[test]
    fn responses_of_other_engines_read() {
        let edax = parse_response(&["= d3".into(), "".into()]).unwrap();
        assert_eq!(
            (edax.success, edax.id, edax.text.as_str()),
            (true, None, "d3")
        );
        let failed = parse_response(&["?12 unknown command".into()]).unwrap();
        assert_eq!((failed.success, failed.id.as_deref()), (false, Some("12")));
        assert_eq!(failed.text, "unknown command");
        let empty = parse_response(&["=".into(), "".into()]).unwrap();
        assert_eq!(empty.text, "");
        assert_eq!(parse_response(&["nonsense".into()]), None);
        assert_eq!(parse_response(&[]), None);
    }

    #[test]
    fn vertices_are_othello_squares_or_pass() {
        assert_eq!(parse_vertex("d3"), Some(Move::Place("d3".parse().unwrap())));
        assert_eq!(parse_vertex("H8"), Some(Move::Place("h8".parse().unwrap())));
        assert_eq!(parse_vertex("PASS"), Some(Move::Pass));
        assert_eq!(parse_vertex("j10"), None);
        assert_eq!(parse_vertex("i1"), None);
        assert_eq!(parse_vertex("resign"), None);
        assert_eq!(parse_color("WHITE"), Some(Color::White));
        assert_eq!(parse_color("x"), None);
    }

    proptest! {
        #[test]
        fn any_line_reads_without_panicking(line in ".*") {
            let _ = parse_request(&line);
            let _ = parse_response(std::slice::from_ref(&line));
            let _ = parse_vertex(&line);
            let _ = parse_color(&line);
        }

        #[test]
        fn a_written_response_reads_back(
            id in proptest::option::of("[0-9]{1,12}"),
            success: bool,
            result in proptest::collection::vec("[ -~]{0,20}", 0..4),
        ) {
            let lines = response_lines(id.as_deref(), success, &result);
            prop_assert_eq!(lines.last().map(String::as_str), Some(""));
            let read = parse_response(&lines).unwrap();
            prop_assert_eq!(read.success, success);
            prop_assert_eq!(read.id, id);
            let first = result.first().map(|l| l.trim()).unwrap_or("");
            prop_assert!(read.text.starts_with(first));
        }

        #[test]
        fn every_vertex_reads_back(index in 0u32..64, pass: bool) {
            let mv = if pass { Move::Pass } else { Move::Place(Square::from_index(index, 8)) };
            prop_assert_eq!(parse_vertex(&vertex(mv)), Some(mv));
        }

        #[test]
        fn a_written_request_reads_back(name in "[a-z_]{1,12}", args in proptest::collection::vec("[a-z0-9]{1,5}", 0..3)) {
            let refs: Vec<&str> = args.iter().map(String::as_str).collect();
            let read = parse_request(&request_line(&name, &refs)).unwrap();
            prop_assert_eq!(read.name, name);
            prop_assert_eq!(read.args, args);
        }
    }
}
