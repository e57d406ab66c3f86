//! Reading GGF text (the Generic Game Format of GGS, which `flip export`
//! writes) into games, each a list of properties (`PB[ann]` is `("PB",
//! "ann")`), for `flip import`. What the properties mean is `ggf_game`'s job;
//! this file only finds the games and their properties.
//!
//! A game is `(;` then properties then `;)`. A file may hold one game a line,
//! several on a line, or GGS's archive lines, which put a count before the
//! games (`1 (;...;)`, `2 (;...;)(;...;)` for the two games of a synchro
//! match); the counts and the space between games are skipped. Anything else
//! outside a game, and a game that is not closed, is an error naming where
//! it is; the games after it are still read.

use std::fmt;

/// One game's properties, in the order written, with where it was found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GgfGame {
    /// Which game of the text, from 1.
    pub ordinal: usize,
    /// The line it starts on, from 1.
    pub line: usize,
    /// `(name, value)` in order; a name may repeat (`B`, `W`).
    pub properties: Vec<(String, String)>,
}

impl GgfGame {
    /// The first value of `name`, if it has one.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.properties
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// Where and why a game could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GgfError {
    /// Which game of the text (from 1), counting this one.
    pub ordinal: usize,
    /// The line the trouble is on, from 1.
    pub line: usize,
    /// What is wrong, naming the token.
    pub why: String,
}

impl fmt::Display for GgfError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "game {} (line {}): {}",
            self.ordinal, self.line, self.why
        )
    }
}

/// Every game of `text`, in order, each read or the reason it was not.
pub fn games(text: &str) -> Vec<Result<GgfGame, GgfError>> {
    let mut reader = Reader {
        text,
        at: 0,
        line: 1,
    };
    let mut out = Vec::new();
    loop {
        let ordinal = out.len() + 1;
        match reader.skip_between() {
            Between::End => return out,
            Between::Game => out.push(reader.game(ordinal)),
            Between::Junk(token) => {
                out.push(Err(reader.error(
                    ordinal,
                    format!("'{token}' outside a game (a game starts with '(;')"),
                )));
                reader.skip_to_next_game();
            }
        }
    }
}

enum Between {
    End,
    Game,
    Junk(String),
}

struct Reader<'a> {
    text: &'a str,
    at: usize,
    line: usize,
}

/// The longest piece of text an error quotes.
const QUOTE: usize = 24;

fn quote(text: &str) -> String {
    let mut quoted: String = text.chars().take(QUOTE).collect();
    if quoted.len() < text.len() {
        quoted.push_str("...");
    }
    quoted.escape_debug().to_string()
}

impl Reader<'_> {
    fn rest(&self) -> &str {
        self.text.get(self.at..).unwrap_or("")
    }

    fn peek(&self) -> Option<char> {
        self.rest().chars().next()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.at += c.len_utf8();
        if c == '\n' {
            self.line += 1;
        }
        Some(c)
    }

    fn error(&self, ordinal: usize, why: String) -> GgfError {
        GgfError {
            ordinal,
            line: self.line,
            why,
        }
    }

    fn skip_space(&mut self) {
        while self.peek().is_some_and(char::is_whitespace) {
            self.bump();
        }
    }

    /// Skips space and archive counts up to the next `(;`.
    fn skip_between(&mut self) -> Between {
        loop {
            self.skip_space();
            let rest = self.rest();
            if rest.is_empty() {
                return Between::End;
            }
            if rest.starts_with("(;") {
                self.bump();
                self.bump();
                return Between::Game;
            }
            let word: String = rest.chars().take_while(|c| !c.is_whitespace()).collect();
            let count = word.chars().take_while(char::is_ascii_digit).count();
            let then_game = word
                .get(count..)
                .is_some_and(|r| r.is_empty() || r.starts_with("(;"));
            if count > 0 && then_game {
                for _ in 0..count {
                    self.bump();
                }
                continue;
            }
            return Between::Junk(quote(&word));
        }
    }

    /// After an error: on to the next line that may hold a game, or the next
    /// `(;` on this one.
    fn skip_to_next_game(&mut self) {
        while let Some(c) = self.peek() {
            if self.rest().starts_with("(;") {
                return;
            }
            self.bump();
            if c == '\n' {
                return;
            }
        }
    }

    /// The properties up to `;)`, the `(;` read.
    fn game(&mut self, ordinal: usize) -> Result<GgfGame, GgfError> {
        let line = self.line;
        let mut properties = Vec::new();
        loop {
            self.skip_space();
            if self.rest().starts_with(";)") {
                self.bump();
                self.bump();
                return Ok(GgfGame {
                    ordinal,
                    line,
                    properties,
                });
            }
            match self.property(ordinal) {
                Ok(property) => properties.push(property),
                Err(error) => {
                    self.skip_to_next_game();
                    return Err(error);
                }
            }
        }
    }

    /// `NAME[value]`: upper-case letters, then a value in brackets, on one
    /// line (a `\` keeps the character after it, so `\]` is a bracket in the
    /// value).
    fn property(&mut self, ordinal: usize) -> Result<(String, String), GgfError> {
        let name: String = self
            .rest()
            .chars()
            .take_while(char::is_ascii_uppercase)
            .collect();
        if name.is_empty() {
            let found = match self.peek() {
                None => "the end of the file".to_string(),
                Some(_) => {
                    let token: String = self
                        .rest()
                        .chars()
                        .take_while(|c| !c.is_whitespace())
                        .collect();
                    format!("'{}'", quote(&token))
                }
            };
            return Err(self.error(
                ordinal,
                format!("expected a property like PB[name] or ';)', found {found}"),
            ));
        }
        self.at += name.len();
        self.skip_space();
        if self.bump() != Some('[') {
            return Err(self.error(ordinal, format!("property {name} has no '[value]'")));
        }
        let mut value = String::new();
        loop {
            match self.bump() {
                // A value never spans lines: an unclosed one must not
                // swallow the games on the lines after it.
                None | Some('\n') => {
                    return Err(self.error(
                        ordinal,
                        format!("{name}[{}: no closing ']' on its line", quote(&value)),
                    ));
                }
                Some(']') => return Ok((name, value)),
                Some('\\') => {
                    if let Some(c) = self.bump() {
                        value.push(c);
                    }
                }
                Some(c) => value.push(c),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn names(game: &GgfGame) -> Vec<&str> {
        game.properties.iter().map(|(n, _)| n.as_str()).collect()
    }

    #[test]
    fn an_archive_line_with_a_count_and_two_games_reads_as_two_games() {
        let text = "1 (;GM[Othello]PB[a]PW[b]B[F5//1.0];)\n\
                    2 (;GM[Othello]PB[c]PW[d];)(;GM[Othello]PB[d]PW[c];)\n";
        let games: Vec<GgfGame> = games(text).into_iter().map(Result::unwrap).collect();
        assert_eq!(games.len(), 3);
        assert_eq!(names(&games[0]), ["GM", "PB", "PW", "B"]);
        assert_eq!(games[0].get("B"), Some("F5//1.0"));
        assert_eq!((games[1].get("PB"), games[1].line), (Some("c"), 2));
        assert_eq!((games[2].get("PB"), games[2].ordinal), (Some("d"), 3));
    }

    #[test]
    fn errors_name_the_game_and_token_and_the_rest_is_read() {
        let text = "(;GM[Othello] junk;)\nhello (;PB[ok];)\n(;PB[a\n(;PB[open]";
        let read = games(text);
        assert_eq!(read.len(), 5, "{read:?}");
        let error = |i: usize| read[i].clone().unwrap_err().to_string();
        assert!(
            error(0).contains("game 1 (line 1)") && error(0).contains("'junk;)'"),
            "{}",
            error(0)
        );
        assert!(
            error(1).contains("game 2 (line 2)") && error(1).contains("'hello'"),
            "{}",
            error(1)
        );
        assert_eq!(read[2].clone().unwrap().get("PB"), Some("ok"));
        assert!(error(3).contains("PB[a: no closing"), "{}", error(3));
        assert!(error(4).contains("the end of the file"), "{}", error(4));
    }

    #[test]
    fn a_backslash_keeps_a_bracket_in_a_value() {
        let read = games(r"(;PB[a\]b]PW[c\\];)");
        let game = read[0].clone().unwrap();
        assert_eq!((game.get("PB"), game.get("PW")), (Some("a]b"), Some("c\\")));
    }

    proptest! {
        #[test]
        fn any_text_reads_without_panicking(text in ".{0,200}") {
            let _ = games(&text);
        }

        #[test]
        fn any_bytes_read_without_panicking(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
            let _ = games(&String::from_utf8_lossy(&bytes));
        }

        #[test]
        fn written_properties_read_back(
            values in proptest::collection::vec(("[A-Z]{1,2}", "[^\\]\\\\\n]{0,12}"), 0..8),
            count in 0u32..3,
        ) {
            let body: String = values.iter().map(|(n, v)| format!("{n}[{v}]")).collect();
            let text = format!("{count} (;{body};)");
            let read = games(&text);
            prop_assert_eq!(read.len(), 1);
            let game = read[0].clone().unwrap();
            prop_assert_eq!(game.properties, values);
        }
    }
}
