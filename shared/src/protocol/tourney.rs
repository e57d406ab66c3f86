//! Tournaments on the wire: `TOURNEY NEW|JOIN|LEAVE|START|LIST|SHOW`'s
//! arguments, and the lines they answer with (`TOURNEY <t> <kind> ...` for
//! `LIST`, `STANDING` for `SHOW`, `TOURNEY <t> round <n>` and `TOURNEY <t>
//! over <winner|draw>` to the players). Parsed and printed here so that
//! command.rs and event.rs stay dispatchers.

use std::fmt;

use super::clock::ClockSpec;
use super::error::{ProtocolError, one_line};
use super::words::{MAX_RANDOM_START, parse_variant};
use crate::variant::Variant;

/// Tournaments are numbered apart from games and challenges.
pub type TourneyId = u64;

/// The most rounds a Swiss asks for (`rounds N`); the field bounds it too.
pub const MAX_SWISS_ROUNDS: u32 = 63;

/// How a tournament pairs its players.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TourneyKind {
    /// `roundrobin`: every pair twice, colours swapped, from the same start.
    RoundRobin,
    /// `swiss`: rounds paired by points, no pair twice.
    Swiss,
}

impl TourneyKind {
    /// The word on the wire.
    pub fn word(self) -> &'static str {
        match self {
            TourneyKind::RoundRobin => "roundrobin",
            TourneyKind::Swiss => "swiss",
        }
    }

    /// Reads the word, in any case.
    pub fn from_word(word: &str) -> Option<TourneyKind> {
        [TourneyKind::RoundRobin, TourneyKind::Swiss]
            .into_iter()
            .find(|k| k.word().eq_ignore_ascii_case(word))
    }
}

impl fmt::Display for TourneyKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.word())
    }
}

/// `TOURNEY NEW roundrobin|swiss [rounds N] [variant] [clock M+S]
/// [rated|casual] [start random:N]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TourneySpec {
    /// How it pairs.
    pub kind: TourneyKind,
    /// A Swiss's rounds, if given (a round robin's follow from its field).
    pub rounds: Option<u32>,
    /// The game its games are.
    pub variant: Variant,
    /// Their clock, if any.
    pub clock: Option<ClockSpec>,
    /// Whether its games are rated.
    pub rated: bool,
    /// Random plies each pairing starts after (`start random:N`), if any.
    pub random_start: Option<u8>,
}

impl TourneySpec {
    /// A tournament of `kind` on the defaults: othello, no clock, casual,
    /// the usual start (and a Swiss's rounds decided at its start).
    pub fn new(kind: TourneyKind) -> TourneySpec {
        TourneySpec {
            kind,
            rounds: None,
            variant: Variant::Othello,
            clock: None,
            rated: false,
            random_start: None,
        }
    }
}

/// A `TOURNEY` command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TourneyCommand {
    /// `TOURNEY NEW ...`.
    New(TourneySpec),
    /// `TOURNEY JOIN t`.
    Join(TourneyId),
    /// `TOURNEY LEAVE t`.
    Leave(TourneyId),
    /// `TOURNEY START t`.
    Start(TourneyId),
    /// `TOURNEY LIST`.
    List,
    /// `TOURNEY SHOW t`.
    Show(TourneyId),
}

impl TourneyCommand {
    /// Whether it needs a name: all but `LIST` and `SHOW`, which anyone may
    /// read.
    pub fn needs_login(self) -> bool {
        !matches!(self, TourneyCommand::List | TourneyCommand::Show(_))
    }
}

/// `TOURNEY`'s arguments: a subcommand, then its own.
pub(super) fn parse_tourney<'a>(
    args: &mut impl Iterator<Item = &'a str>,
) -> Result<TourneyCommand, ProtocolError> {
    let word = args.next().ok_or_else(|| {
        ProtocolError::bad("TOURNEY needs what to do: NEW, JOIN, LEAVE, START, LIST or SHOW")
    })?;
    Ok(match word.to_ascii_uppercase().as_str() {
        "NEW" => TourneyCommand::New(parse_spec(args)?),
        "JOIN" => TourneyCommand::Join(parse_tourney_id(args.next())?),
        "LEAVE" => TourneyCommand::Leave(parse_tourney_id(args.next())?),
        "START" => TourneyCommand::Start(parse_tourney_id(args.next())?),
        "SHOW" => TourneyCommand::Show(parse_tourney_id(args.next())?),
        "LIST" => TourneyCommand::List,
        _ => {
            return Err(ProtocolError::bad(format!(
                "unknown TOURNEY '{}' (expected NEW, JOIN, LEAVE, START, LIST or SHOW)",
                one_line(word)
            )));
        }
    })
}

fn parse_tourney_id(token: Option<&str>) -> Result<TourneyId, ProtocolError> {
    let token = token.ok_or_else(|| ProtocolError::bad("a tournament number is needed"))?;
    token.parse().map_err(|_| {
        ProtocolError::bad(format!(
            "bad tournament '{}' (expected a number)",
            one_line(token)
        ))
    })
}

/// `NEW`'s terms: the kind first, then the rest in any order, each once.
fn parse_spec<'a>(args: &mut impl Iterator<Item = &'a str>) -> Result<TourneySpec, ProtocolError> {
    let kind = args
        .next()
        .and_then(TourneyKind::from_word)
        .ok_or_else(|| ProtocolError::bad("TOURNEY NEW needs its kind: roundrobin or swiss"))?;
    let mut spec = TourneySpec::new(kind);
    let (mut variant_given, mut rated_given) = (false, false);
    while let Some(token) = args.next() {
        match token.to_ascii_lowercase().as_str() {
            "rounds" if spec.rounds.is_none() => spec.rounds = Some(parse_rounds(args.next())?),
            "clock" if spec.clock.is_none() => {
                spec.clock = Some(ClockSpec::parse(args.next().unwrap_or(""))?);
            }
            "rated" | "casual" if !rated_given => {
                spec.rated = token.eq_ignore_ascii_case("rated");
                rated_given = true;
            }
            "start" if spec.random_start.is_none() => {
                spec.random_start = Some(parse_random_start(args.next())?);
            }
            _ if !variant_given => {
                spec.variant = parse_variant(token)?;
                variant_given = true;
            }
            _ => {
                return Err(ProtocolError::bad(format!(
                    "unexpected '{}'",
                    one_line(token)
                )));
            }
        }
    }
    if spec.kind == TourneyKind::RoundRobin && spec.rounds.is_some() {
        return Err(ProtocolError::bad(
            "a round robin's rounds follow from its players: rounds is for swiss",
        ));
    }
    Ok(spec)
}

fn parse_rounds(token: Option<&str>) -> Result<u32, ProtocolError> {
    let token = token.unwrap_or("");
    match token.parse::<u32>() {
        Ok(n @ 1..=MAX_SWISS_ROUNDS) => Ok(n),
        _ => Err(ProtocolError::bad(format!(
            "bad rounds '{}' (1 to {MAX_SWISS_ROUNDS})",
            one_line(token)
        ))),
    }
}

fn parse_random_start(token: Option<&str>) -> Result<u8, ProtocolError> {
    let token = token.unwrap_or("");
    let count = token
        .get(..7)
        .filter(|p| p.eq_ignore_ascii_case("random:"))
        .and_then(|_| token.get(7..))
        .and_then(|n| n.parse::<u8>().ok());
    match count {
        Some(n @ 1..=MAX_RANDOM_START) => Ok(n),
        _ => Err(ProtocolError::bad(format!(
            "bad start '{}' (expected random:1 to random:{MAX_RANDOM_START})",
            one_line(token)
        ))),
    }
}

impl std::str::FromStr for TourneySpec {
    type Err = ProtocolError;

    /// Reads the terms as `Display` writes them (and `TOURNEY NEW` takes
    /// them, after `NEW`).
    fn from_str(text: &str) -> Result<TourneySpec, ProtocolError> {
        let mut words = text.split_whitespace();
        let spec = parse_spec(&mut words)?;
        Ok(spec)
    }
}

impl fmt::Display for TourneySpec {
    /// The terms as `TOURNEY NEW` takes them, after `NEW`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.kind)?;
        if let Some(rounds) = self.rounds {
            write!(f, " rounds {rounds}")?;
        }
        write!(f, " {}", self.variant)?;
        if let Some(clock) = self.clock {
            write!(f, " clock {clock}")?;
        }
        f.write_str(if self.rated { " rated" } else { " casual" })?;
        if let Some(n) = self.random_start {
            write!(f, " start random:{n}")?;
        }
        Ok(())
    }
}

/// Where a tournament stands, as `LIST` writes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TourneyStage {
    /// `open`: taking players.
    Open,
    /// `running`: its rounds are being played.
    Running,
    /// `over`: done.
    Over,
}

impl TourneyStage {
    /// The word on the wire.
    pub fn word(self) -> &'static str {
        match self {
            TourneyStage::Open => "open",
            TourneyStage::Running => "running",
            TourneyStage::Over => "over",
        }
    }

    fn from_word(word: &str) -> Option<TourneyStage> {
        [
            TourneyStage::Open,
            TourneyStage::Running,
            TourneyStage::Over,
        ]
        .into_iter()
        .find(|s| s.word() == word)
    }
}

/// `TOURNEY <t> <kind> <variant> <clock|-> <open|running|over> <players>
/// <round>/<rounds>`: a `LIST` line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TourneyLine {
    /// The tournament.
    pub id: TourneyId,
    /// How it pairs.
    pub kind: TourneyKind,
    /// Its game.
    pub variant: Variant,
    /// Its clock.
    pub clock: Option<ClockSpec>,
    /// Where it stands.
    pub stage: TourneyStage,
    /// Its players.
    pub players: u32,
    /// The round being played (0 before the start).
    pub round: u32,
    /// Its rounds (a round robin's as its field stands while open).
    pub rounds: u32,
}

impl fmt::Display for TourneyLine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let clock = self
            .clock
            .map_or_else(|| "-".to_string(), |c| c.to_string());
        write!(
            f,
            "{} {} {} {clock} {} {} {}/{}",
            self.id,
            self.kind,
            self.variant,
            self.stage.word(),
            self.players,
            self.round,
            self.rounds
        )
    }
}

/// What a tournament's players hear of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TourneyNews {
    /// `round <n>`: round `n` begins (its games follow with `START`).
    Round(u32),
    /// `over <winner|draw>`: it is over; `None` for a tie at the top.
    Over(Option<String>),
}

/// Points as DESIGN writes them: whole, or with `.5`.
pub struct Points(pub u32);

impl fmt::Display for Points {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let whole = self.0 / 2;
        if self.0 % 2 == 1 {
            write!(f, "{whole}.5")
        } else {
            write!(f, "{whole}")
        }
    }
}

fn parse_points(word: &str) -> Option<u32> {
    let (whole, half) = match word.split_once('.') {
        None => (word, 0),
        Some((whole, "0")) => (whole, 0),
        Some((whole, "5")) => (whole, 1),
        Some(_) => return None,
    };
    whole.parse::<u32>().ok()?.checked_mul(2)?.checked_add(half)
}

/// `STANDING <t> <rank> <name> <points> <games> <disc-diff>`: a `SHOW` line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StandingLine {
    /// The tournament.
    pub id: TourneyId,
    /// The place, from 1; players tied on points and discs share one.
    pub rank: u32,
    /// The player.
    pub name: String,
    /// Points in halves (a win 2, a draw 1), written `1.5`.
    pub half_points: u32,
    /// Games played (forfeits included).
    pub games: u32,
    /// Discs won less discs lost, over those games.
    pub disc_difference: i32,
}

impl fmt::Display for StandingLine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {} {} {} {} {}",
            self.id,
            self.rank,
            self.name,
            Points(self.half_points),
            self.games,
            self.disc_difference
        )
    }
}

/// Reads the fields after `TOURNEY`: a `LIST` line or news (told apart by
/// the word after the number, which no kind shares).
pub(super) fn parse_tourney_line(
    f: &[&str],
) -> Option<Result<TourneyLine, (TourneyId, TourneyNews)>> {
    let id = f.first()?.parse().ok()?;
    match *f.get(1)? {
        "round" => Some(Err((id, TourneyNews::Round(f.get(2)?.parse().ok()?)))),
        "over" => {
            let winner = match *f.get(2)? {
                "draw" => None,
                name => Some(name.to_string()),
            };
            Some(Err((id, TourneyNews::Over(winner))))
        }
        kind => {
            let (round, rounds) = f.get(6)?.split_once('/')?;
            Some(Ok(TourneyLine {
                id,
                kind: TourneyKind::from_word(kind)?,
                variant: f.get(2)?.parse().ok()?,
                clock: match *f.get(3)? {
                    "-" => None,
                    clock => Some(ClockSpec::parse(clock).ok()?),
                },
                stage: TourneyStage::from_word(f.get(4)?)?,
                players: f.get(5)?.parse().ok()?,
                round: round.parse().ok()?,
                rounds: rounds.parse().ok()?,
            }))
        }
    }
}

/// Reads the fields after `STANDING`.
pub(super) fn parse_standing(f: &[&str]) -> Option<StandingLine> {
    Some(StandingLine {
        id: f.first()?.parse().ok()?,
        rank: f.get(1)?.parse().ok()?,
        name: f.get(2)?.to_string(),
        half_points: parse_points(f.get(3)?)?,
        games: f.get(4)?.parse().ok()?,
        disc_difference: f.get(5)?.parse().ok()?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tourney(line: &str) -> Result<TourneyCommand, ProtocolError> {
        parse_tourney(&mut line.split_whitespace())
    }

    #[test]
    fn new_takes_its_kind_then_terms_in_any_order() {
        let TourneyCommand::New(spec) =
            tourney("new swiss rated start random:8 rounds 3 clock 1+0 anti").unwrap()
        else {
            panic!("not NEW")
        };
        assert_eq!(spec.kind, TourneyKind::Swiss);
        assert_eq!(spec.rounds, Some(3));
        assert_eq!(spec.variant, Variant::Anti);
        assert!(spec.rated);
        assert_eq!(spec.random_start, Some(8));
        assert_eq!(spec.clock.map(|c| c.base_ms), Some(60_000));
        let again = tourney(&format!("NEW {spec}")).unwrap();
        assert_eq!(again, TourneyCommand::New(spec), "printed as it parses");
        assert_eq!(spec.to_string().parse::<TourneySpec>(), Ok(spec));
        for bad in [
            "",
            "new",
            "new knockout",
            "new roundrobin rounds 3",
            "new swiss rounds 0",
            "new swiss rounds 99",
            "new swiss start random:0",
            "new swiss start f5d6",
            "new swiss rated casual",
            "new swiss othello anti",
            "join",
            "join x",
            "dance 3",
        ] {
            assert!(tourney(bad).is_err(), "{bad}");
        }
        assert_eq!(tourney("join 4").unwrap(), TourneyCommand::Join(4));
        assert_eq!(tourney("Show 4").unwrap(), TourneyCommand::Show(4));
        assert_eq!(tourney("list").unwrap(), TourneyCommand::List);
    }

    #[test]
    fn points_are_written_whole_or_with_a_half() {
        assert_eq!(Points(5).to_string(), "2.5");
        assert_eq!(Points(4).to_string(), "2");
        assert_eq!(Points(1).to_string(), "0.5");
        for halves in [0, 1, 2, 7, 100] {
            assert_eq!(parse_points(&Points(halves).to_string()), Some(halves));
        }
        assert_eq!(parse_points("2.0"), Some(4));
        assert_eq!(parse_points("2.25"), None);
        assert_eq!(parse_points("x"), None);
    }

    proptest::proptest! {
        #[test]
        fn no_arguments_panic_the_parser(words in proptest::collection::vec("[ -~]{0,12}", 0..8)) {
            let line = words.join(" ");
            let _ = tourney(&line);
            let fields: Vec<&str> = line.split(' ').collect();
            let _ = parse_tourney_line(&fields);
            let _ = parse_standing(&fields);
        }
    }
}
