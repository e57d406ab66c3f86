//! The arguments of the commands for bots and rated play: `CHALLENGE`'s
//! terms, `SEEK`'s rating range, `RATING` and `TOP`'s questions. Parsed here
//! so that command.rs stays a dispatcher.

use super::clock::ClockSpec;
use super::error::{ProtocolError, one_line};
use super::name::check_name;
use super::words::{MAX_RANDOM_START, SeatChoice, parse_seat, parse_variant};
use crate::square::Move;
use crate::variant::Variant;

/// Where a challenged game starts.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub enum StartSpec {
    /// The usual start.
    #[default]
    Initial,
    /// After these moves (`from MOVES`).
    Moves(Vec<Move>),
    /// After N random legal moves the engine judges balanced (`from random:N`).
    Random(u8),
}

/// `CHALLENGE name [variant] [as X|O|random] [clock M+S] [rated|casual]
/// [from MOVES | from random:N]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChallengeSpec {
    /// Who is challenged.
    pub name: String,
    /// The game.
    pub variant: Variant,
    /// The challenger's side.
    pub side: SeatChoice,
    /// The clock, if any.
    pub clock: Option<ClockSpec>,
    /// Whether the game is rated.
    pub rated: bool,
    /// Where it starts.
    pub start: StartSpec,
}

/// A rating range (`range LOW-HIGH`): whom a rated seek pairs with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RatingRange {
    /// The lowest rating, included.
    pub low: u16,
    /// The highest rating, included.
    pub high: u16,
}

impl RatingRange {
    /// Whether `rating` lies within the range.
    pub fn holds(self, rating: i32) -> bool {
        (i32::from(self.low)..=i32::from(self.high)).contains(&rating)
    }

    fn parse(token: &str) -> Result<RatingRange, ProtocolError> {
        let bad = || {
            ProtocolError::bad(format!(
                "bad range '{}' (expected LOW-HIGH, e.g. 1400-1700)",
                one_line(token)
            ))
        };
        let (low, high) = token.split_once('-').ok_or_else(bad)?;
        let (low, high) = (
            low.parse().map_err(|_| bad())?,
            high.parse().map_err(|_| bad())?,
        );
        if low > high {
            return Err(bad());
        }
        Ok(RatingRange { low, high })
    }
}

/// `SEEK [variant] [clock M+S] [rated] [range LOW-HIGH]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SeekSpec {
    /// The game wanted.
    pub variant: Variant,
    /// The clock wanted.
    pub clock: Option<ClockSpec>,
    /// Whether the game is to be rated.
    pub rated: bool,
    /// Whom to pair with, by rating (rated seeks only).
    pub range: Option<RatingRange>,
}

impl Default for SeekSpec {
    fn default() -> SeekSpec {
        SeekSpec {
            variant: Variant::Othello,
            clock: None,
            rated: false,
            range: None,
        }
    }
}

fn unexpected(token: &str) -> ProtocolError {
    ProtocolError::bad(format!("unexpected '{}'", one_line(token)))
}

fn needs_name(keyword: &str, token: Option<&str>) -> Result<String, ProtocolError> {
    let name = token.ok_or_else(|| ProtocolError::bad(format!("{keyword} needs a name")))?;
    if let Err(rule) = check_name(name) {
        return Err(ProtocolError::bad(format!(
            "bad name '{}' ({rule})",
            one_line(name)
        )));
    }
    Ok(name.to_string())
}

/// `SEEK`'s arguments, in any order, each once.
pub(super) fn parse_seek<'a>(
    args: &mut impl Iterator<Item = &'a str>,
) -> Result<SeekSpec, ProtocolError> {
    let mut seek = SeekSpec::default();
    let mut variant_given = false;
    while let Some(token) = args.next() {
        match token.to_ascii_lowercase().as_str() {
            "clock" if seek.clock.is_none() => {
                seek.clock = Some(ClockSpec::parse(args.next().unwrap_or(""))?);
            }
            "rated" if !seek.rated => seek.rated = true,
            "casual" if !seek.rated => {}
            "range" if seek.range.is_none() => {
                seek.range = Some(RatingRange::parse(args.next().unwrap_or(""))?);
            }
            _ if !variant_given => {
                seek.variant = parse_variant(token)?;
                variant_given = true;
            }
            _ => return Err(unexpected(token)),
        }
    }
    if seek.range.is_some() && !seek.rated {
        return Err(ProtocolError::bad(
            "a range pairs by rating: only a rated SEEK takes one",
        ));
    }
    Ok(seek)
}

/// `CHALLENGE`'s arguments: the name first, then the terms in any order.
pub(super) fn parse_challenge<'a>(
    args: &mut impl Iterator<Item = &'a str>,
) -> Result<ChallengeSpec, ProtocolError> {
    let name = needs_name("CHALLENGE", args.next())?;
    let mut spec = ChallengeSpec {
        name,
        variant: Variant::Othello,
        side: SeatChoice::Random,
        clock: None,
        rated: false,
        start: StartSpec::Initial,
    };
    let mut variant_given = false;
    while let Some(token) = args.next() {
        match token.to_ascii_lowercase().as_str() {
            "as" => spec.side = parse_seat(args.next())?,
            "clock" => spec.clock = Some(ClockSpec::parse(args.next().unwrap_or(""))?),
            "rated" => spec.rated = true,
            "casual" => spec.rated = false,
            "from" => spec.start = parse_start(args.next())?,
            _ if !variant_given => {
                spec.variant = parse_variant(token)?;
                variant_given = true;
            }
            _ => return Err(unexpected(token)),
        }
    }
    Ok(spec)
}

/// `from MOVES` or `from random:N`.
pub fn parse_start(token: Option<&str>) -> Result<StartSpec, ProtocolError> {
    let token = token.ok_or_else(|| ProtocolError::bad("from needs moves (f5d6c3) or random:N"))?;
    let lower = token.to_ascii_lowercase();
    if let Some(count) = lower.strip_prefix("random:") {
        return match count.parse::<u8>() {
            Ok(n @ 1..=MAX_RANDOM_START) => Ok(StartSpec::Random(n)),
            _ => Err(ProtocolError::bad(format!(
                "bad random start '{}' (expected random:1 to random:{MAX_RANDOM_START})",
                one_line(token)
            ))),
        };
    }
    let moves =
        crate::notation::parse_transcript(token).map_err(|e| ProtocolError::bad(e.to_string()))?;
    Ok(StartSpec::Moves(moves))
}

/// `RATING [name] [variant]`: with one word, a variant's name is read as
/// the variant (`RATING anti othello` asks for a player named `anti`).
pub(super) fn parse_rating<'a>(
    args: &mut impl Iterator<Item = &'a str>,
) -> Result<(Option<String>, Option<Variant>), ProtocolError> {
    let (first, second) = (args.next(), args.next());
    match (first, second) {
        (None, _) => Ok((None, None)),
        (Some(word), None) => match word.parse::<Variant>() {
            Ok(variant) => Ok((None, Some(variant))),
            Err(_) => Ok((Some(needs_name("RATING", Some(word))?), None)),
        },
        (Some(name), Some(variant)) => Ok((
            Some(needs_name("RATING", Some(name))?),
            Some(parse_variant(variant)?),
        )),
    }
}

/// The most lines `TOP` gives.
pub const MAX_TOP: u32 = 100;

/// `TOP [variant] [count]`.
pub(super) fn parse_top<'a>(
    args: &mut impl Iterator<Item = &'a str>,
) -> Result<(Option<Variant>, u32), ProtocolError> {
    let mut variant = None;
    let mut count = None;
    for token in args.by_ref() {
        match token.parse::<u32>() {
            Ok(n @ 1..=MAX_TOP) if count.is_none() => count = Some(n),
            Ok(_) if count.is_none() => {
                return Err(ProtocolError::bad(format!(
                    "bad count '{}' (1 to {MAX_TOP})",
                    one_line(token)
                )));
            }
            _ if variant.is_none() && count.is_none() => variant = Some(parse_variant(token)?),
            _ => return Err(unexpected(token)),
        }
    }
    Ok((variant, count.unwrap_or(10)))
}

/// What `ACCOUNT` marks a registered name as.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AccountMark {
    /// `ACCOUNT bot`: a program, for good.
    Bot,
}

pub(super) fn parse_account<'a>(
    args: &mut impl Iterator<Item = &'a str>,
) -> Result<AccountMark, ProtocolError> {
    match args.next() {
        Some(word) if word.eq_ignore_ascii_case("bot") => Ok(AccountMark::Bot),
        Some(word) => Err(ProtocolError::bad(format!(
            "bad account mark '{}' (expected bot)",
            one_line(word)
        ))),
        None => Err(ProtocolError::bad("ACCOUNT needs what to mark: bot")),
    }
}

/// `ACCEPT`, `DECLINE` and `CANCEL`'s challenge number.
pub(super) fn parse_challenge_id(token: Option<&str>) -> Result<u64, ProtocolError> {
    let token = token.ok_or_else(|| ProtocolError::bad("a challenge number is needed"))?;
    token.parse().map_err(|_| {
        ProtocolError::bad(format!(
            "bad challenge '{}' (expected a number)",
            one_line(token)
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn challenge(line: &str) -> Result<ChallengeSpec, ProtocolError> {
        parse_challenge(&mut line.split_whitespace())
    }

    #[test]
    fn a_challenge_takes_its_terms_in_any_order() {
        let spec = challenge("bob reversi rated clock 5+3 as O from random:8").unwrap();
        assert_eq!(spec.name, "bob");
        assert_eq!(spec.variant, Variant::Reversi);
        assert!(spec.rated);
        assert_eq!(spec.side, SeatChoice::White);
        assert_eq!(spec.start, StartSpec::Random(8));
        assert_eq!(spec.clock.map(|c| c.base_ms), Some(300_000));
        let plain = challenge("bob").unwrap();
        assert_eq!(
            (plain.variant, plain.rated, plain.start),
            (Variant::Othello, false, StartSpec::Initial)
        );
        let moves = challenge("bob from f5d6").unwrap();
        assert!(matches!(moves.start, StartSpec::Moves(m) if m.len() == 2));
        for bad in [
            "",
            "bob from random:0",
            "bob from random:99",
            "bob chess",
            "bob othello anti",
        ] {
            assert!(challenge(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_seek_range_needs_a_rated_seek_and_holds_its_ends() {
        let seek = |line: &str| parse_seek(&mut line.split_whitespace());
        let rated = seek("rated range 1400-1700 clock 1+0").unwrap();
        let range = rated.range.unwrap();
        assert!(range.holds(1400) && range.holds(1700) && !range.holds(1701));
        assert!(seek("range 1400-1700").is_err());
        assert!(seek("rated range 1700-1400").is_err());
        assert!(seek("rated range x-1").is_err());
        assert_eq!(seek("").unwrap(), SeekSpec::default());
    }

    #[test]
    fn rating_and_top_read_their_optional_words() {
        let rating = |line: &str| parse_rating(&mut line.split_whitespace()).unwrap();
        assert_eq!(rating(""), (None, None));
        assert_eq!(rating("anti"), (None, Some(Variant::Anti)));
        assert_eq!(rating("ann"), (Some("ann".into()), None));
        assert_eq!(
            rating("anti othello"),
            (Some("anti".into()), Some(Variant::Othello))
        );
        let top = |line: &str| parse_top(&mut line.split_whitespace());
        assert_eq!(top("").unwrap(), (None, 10));
        assert_eq!(top("reversi 5").unwrap(), (Some(Variant::Reversi), 5));
        assert!(top("0").is_err() && top("101").is_err() && top("5 othello").is_err());
    }

    proptest::proptest! {
        #[test]
        fn no_arguments_panic_the_parsers(words in proptest::collection::vec("[ -~]{0,12}", 0..8)) {
            let line = words.join(" ");
            let _ = challenge(&line);
            let _ = parse_seek(&mut line.split_whitespace());
            let _ = parse_rating(&mut line.split_whitespace());
            let _ = parse_top(&mut line.split_whitespace());
            let _ = parse_account(&mut line.split_whitespace());
        }
    }
}
