//! What `LIST` and `WHO` ask for: a filter and a place to start, so that a
//! lobby of any size is answered in bounded pages. An answer that stops at
//! its page's end says, in its last data line, the command that gets the
//! rest (`INFO more: LIST playing from 1234`), so a bot can page through
//! everything without knowing the page size.

use std::fmt;

use super::GameId;
use super::error::{ProtocolError, one_line};
use super::status::GameStatus;

/// `LIST [open|playing|over] [from GAME]`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ListQuery {
    /// Only the games of this status; every game if `None`.
    pub status: Option<GameStatus>,
    /// Only games numbered from this one on (0: from the first).
    pub from: GameId,
}

/// `WHO [from NAME]`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WhoQuery {
    /// Only names from this one on, in `WHO`'s order (by name).
    pub from: Option<String>,
}

impl ListQuery {
    /// Parses what follows `LIST`.
    pub fn parse<'a>(args: &mut impl Iterator<Item = &'a str>) -> Result<ListQuery, ProtocolError> {
        let mut query = ListQuery::default();
        let mut next = args.next();
        if let Some(word) = next
            && !word.eq_ignore_ascii_case("from")
        {
            query.status = match GameStatus::parse(&word.to_ascii_lowercase()) {
                Some(status) if status != GameStatus::Cancelled => Some(status),
                _ => {
                    return Err(ProtocolError::bad(format!(
                        "LIST takes open, playing or over, not '{}'",
                        one_line(word)
                    )));
                }
            };
            next = args.next();
        }
        if next.is_some() {
            query.from = parse_from(next, args, |word| {
                word.parse::<GameId>()
                    .map_err(|_| format!("not a game number: '{}'", one_line(word)))
            })?;
        }
        Ok(query)
    }

    /// The same query, from `game` on: what gets the rest of an answer.
    pub fn resumed_at(self, game: GameId) -> ListQuery {
        ListQuery { from: game, ..self }
    }
}

impl WhoQuery {
    /// Parses what follows `WHO`.
    pub fn parse<'a>(args: &mut impl Iterator<Item = &'a str>) -> Result<WhoQuery, ProtocolError> {
        let next = args.next();
        if next.is_none() {
            return Ok(WhoQuery::default());
        }
        let from = parse_from(next, args, |word| Ok(word.to_string()))?;
        Ok(WhoQuery { from: Some(from) })
    }
}

/// `from VALUE`, given its first word: the value, or why not.
fn parse_from<'a, T>(
    first: Option<&'a str>,
    args: &mut impl Iterator<Item = &'a str>,
    value: impl FnOnce(&'a str) -> Result<T, String>,
) -> Result<T, ProtocolError> {
    match first {
        Some(word) if word.eq_ignore_ascii_case("from") => {
            let arg = args
                .next()
                .ok_or_else(|| ProtocolError::bad("'from' needs what to start at"))?;
            value(arg).map_err(ProtocolError::bad)
        }
        Some(word) => Err(ProtocolError::bad(format!(
            "unexpected '{}' (expected 'from')",
            one_line(word)
        ))),
        None => Err(ProtocolError::bad("'from' needs what to start at")),
    }
}

impl fmt::Display for ListQuery {
    /// The command line that asks this.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("LIST")?;
        if let Some(status) = self.status {
            write!(f, " {status}")?;
        }
        if self.from > 0 {
            write!(f, " from {}", self.from)?;
        }
        Ok(())
    }
}

impl fmt::Display for WhoQuery {
    /// The command line that asks this.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("WHO")?;
        if let Some(from) = &self.from {
            write!(f, " from {from}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(args: &str) -> Result<ListQuery, ProtocolError> {
        ListQuery::parse(&mut args.split_whitespace())
    }

    #[test]
    fn list_takes_a_status_a_start_both_or_neither() {
        assert_eq!(list(""), Ok(ListQuery::default()));
        let playing = Some(GameStatus::Playing);
        assert_eq!(list("PLAYING").map(|q| q.status), Ok(playing));
        assert_eq!(list("from 40").map(|q| (q.status, q.from)), Ok((None, 40)));
        let both = list("open FROM 7").unwrap();
        assert_eq!((both.status, both.from), (Some(GameStatus::Open), 7));
        for bad in ["cancelled", "open 7", "from", "from x", "x from 3"] {
            assert!(list(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_query_prints_as_the_command_that_asks_it() {
        for line in ["LIST", "LIST over", "LIST from 12", "LIST playing from 3"] {
            let mut words = line.split_whitespace();
            words.next();
            let query = ListQuery::parse(&mut words).unwrap();
            assert_eq!(query.to_string(), line);
        }
        let who = WhoQuery::parse(&mut "from ann".split_whitespace()).unwrap();
        assert_eq!(who.to_string(), "WHO from ann");
        assert_eq!(WhoQuery::default().to_string(), "WHO");
        assert!(WhoQuery::parse(&mut "ann".split_whitespace()).is_err());
    }
}
