//! GTP's lines (GTP version 2, section 2), commands read and responses
//! written: a command is `[id] name [arguments]`; a response is `=[id]
//! result` or `?[id] message`, one or more lines, ended by an empty line.
//! Squares are Othello's (`d3`, `a1`
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

/// A colour argument: `b`, `black`, `w`, `white`, in any case.
pub fn parse_color(word: &str) -> Option<Color> {
    match word.to_ascii_lowercase().as_str() {
        "b" | "black" => Some(Color::Black),
        "w" | "white" => Some(Color::White),
        _ => None,
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
            let _ = parse_vertex(&line);
            let _ = parse_color(&line);
        }

        #[test]
        fn every_vertex_reads_back(index in 0u32..64, pass: bool) {
            let mv = if pass { Move::Pass } else { Move::Place(Square::from_index(index, 8)) };
            prop_assert_eq!(parse_vertex(&vertex(mv)), Some(mv));
        }

    }
}
