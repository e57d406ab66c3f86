//! What a client may send: `Command` and its arguments, and `Command::parse`,
//! with which the daemon reads every input line. Its errors are 400 and name
//! the offending token, so that a person or a bot sees what to fix.

use super::GameId;
use super::challenge::{
    AccountMark, ChallengeSpec, SeekSpec, parse_account, parse_challenge, parse_challenge_id,
    parse_rating, parse_seek, parse_top,
};
use super::clock::ClockSpec;
use super::command_kind::CommandKind;
use super::credential::{Credential, SECRET_KEYWORD, valid_secret};
use super::decline::DeclineReason;
use super::error::{ProtocolError, one_line};
use super::list_query::{ListQuery, WhoQuery};
use super::name::check_name;
use super::tourney::{TourneyCommand, parse_tourney};
use super::words::{SeatChoice, parse_seat, parse_variant};
use crate::square::Square;
use crate::variant::Variant;

/// Who the creator of a game plays against.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Opponent {
    /// Another connection, which takes the free seat with `JOIN`.
    #[default]
    Open,
    /// The built-in engine at a level (1 random, 2 greedy, 3 and up search).
    Bot(u8),
    /// The same connection plays both sides.
    Hotseat,
}

/// The arguments of `NEW`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewGame {
    /// The game to play.
    pub variant: Variant,
    /// The creator's colour.
    pub seat: SeatChoice,
    /// The other side.
    pub opponent: Opponent,
    /// The clock, if any.
    pub clock: Option<ClockSpec>,
    /// Moves to play from the start before the game begins (`from TRANSCRIPT`).
    pub from: Vec<crate::square::Move>,
}

/// A command from a client.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Command {
    /// `LOGIN name [password | secret TOKEN]`.
    Login {
        /// A name [`check_name`](super::check_name) accepts.
        name: String,
        /// A password, a guest's secret, or nothing (a new guest).
        credential: Option<Credential>,
    },
    /// `SEEK [variant] [clock M+S] [rated] [range LOW-HIGH]`.
    Seek(SeekSpec),
    /// `CHALLENGE name [variant] [as X|O|random] [clock M+S] [rated|casual]
    /// [from MOVES | from random:N]`.
    Challenge(ChallengeSpec),
    /// `ACCEPT challenge`.
    Accept(u64),
    /// `DECLINE challenge [reason]`.
    Decline(u64, DeclineReason),
    /// `CANCEL challenge`.
    Cancel(u64),
    /// `RATING [name] [variant]`.
    Rating {
        /// Whose (the asker's without one).
        name: Option<String>,
        /// Which game's (every variant the name has a rating in without one).
        variant: Option<Variant>,
    },
    /// `TOP [variant] [count]`.
    Top {
        /// Which game's table (othello without one).
        variant: Option<Variant>,
        /// How many lines.
        count: u32,
    },
    /// `ACCOUNT bot`.
    Account(AccountMark),
    /// `TOURNEY NEW|JOIN|LEAVE|START|LIST|SHOW ...`.
    Tourney(TourneyCommand),
    /// `NEW [variant] [as X|O|random] [vs bot[:level] | hotseat] [clock M+S] [from TRANSCRIPT]`.
    New(NewGame),
    /// `JOIN game`.
    Join(GameId),
    /// `WATCH game`.
    Watch(GameId),
    /// `HISTORY game`: the stored record of a game.
    History(GameId),
    /// `LEAVE`.
    Leave,
    /// `LIST [open|playing|over] [from GAME]`.
    List(ListQuery),
    /// `WHO [from NAME]`.
    Who(WhoQuery),
    /// `MOVE square`.
    Move(Square),
    /// `PASS`.
    Pass,
    /// `END`: resign.
    End,
    /// `UNDO`: take back your last move, or agree to the other player's.
    Undo,
    /// `BOARD`.
    Board,
    /// `HINT`.
    Hint,
    /// `SAY text`.
    Say(String),
    /// `REMATCH`.
    Rematch,
    /// `PING`.
    Ping,
    /// `HELP`.
    Help,
    /// `QUIT`.
    Quit,
}

/// Bytes of the longest keyword, with room to spare; a longer word is no
/// keyword.
const KEYWORD_MAX: usize = 16;

/// `word` in capitals, in `buffer` (every line has a keyword: no allocation
/// for it); a word too long to be a keyword comes back as it is, and is
/// reported as unknown.
fn uppercase_keyword<'a>(word: &'a str, buffer: &'a mut [u8; KEYWORD_MAX]) -> &'a str {
    let Some(upper) = buffer.get_mut(..word.len()) else {
        return word;
    };
    upper.copy_from_slice(word.as_bytes());
    upper.make_ascii_uppercase();
    std::str::from_utf8(upper).unwrap_or(word)
}

impl Command {
    /// Parses one line (without its line ending). Errors are 400 and name the
    /// offending token.
    pub fn parse(line: &str) -> Result<Command, ProtocolError> {
        let line = line.trim();
        let (keyword, rest) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
        let rest = rest.trim_start();
        let mut args = rest.split_whitespace();
        let mut upper = [0u8; KEYWORD_MAX];
        let command = match uppercase_keyword(keyword, &mut upper) {
            "LOGIN" => parse_login(&mut args)?,
            "SEEK" => Command::Seek(parse_seek(&mut args)?),
            "CHALLENGE" => Command::Challenge(parse_challenge(&mut args)?),
            "ACCEPT" => Command::Accept(parse_challenge_id(args.next())?),
            "DECLINE" => parse_decline(&mut args)?,
            "CANCEL" => Command::Cancel(parse_challenge_id(args.next())?),
            "RATING" => {
                let (name, variant) = parse_rating(&mut args)?;
                Command::Rating { name, variant }
            }
            "TOP" => {
                let (variant, count) = parse_top(&mut args)?;
                Command::Top { variant, count }
            }
            "ACCOUNT" => Command::Account(parse_account(&mut args)?),
            "TOURNEY" => Command::Tourney(parse_tourney(&mut args)?),
            "NEW" => Command::New(parse_new(&mut args)?),
            "JOIN" => Command::Join(parse_game_id(args.next())?),
            "WATCH" => Command::Watch(parse_game_id(args.next())?),
            "HISTORY" => Command::History(parse_game_id(args.next())?),
            "MOVE" => Command::Move(parse_square_arg(args.next())?),
            "SAY" if !rest.is_empty() => return Ok(Command::Say(one_line(rest))),
            "SAY" => return Err(ProtocolError::bad("SAY needs text")),
            "" => return Err(ProtocolError::bad("empty command")),
            other => match other {
                "LEAVE" => Command::Leave,
                "LIST" => Command::List(ListQuery::parse(&mut args)?),
                "WHO" => Command::Who(WhoQuery::parse(&mut args)?),
                "PASS" => Command::Pass,
                "END" => Command::End,
                "UNDO" => Command::Undo,
                "BOARD" => Command::Board,
                "HINT" => Command::Hint,
                "REMATCH" => Command::Rematch,
                "PING" => Command::Ping,
                "HELP" => Command::Help,
                "QUIT" => Command::Quit,
                _ => {
                    return Err(ProtocolError::bad(format!(
                        "unknown command '{}'",
                        one_line(keyword)
                    )));
                }
            },
        };
        match args.next() {
            Some(extra) => Err(ProtocolError::bad(format!(
                "unexpected '{}'",
                one_line(extra)
            ))),
            None => Ok(command),
        }
    }

    /// Whether the command needs a name (sent after `LOGIN`).
    pub fn needs_login(&self) -> bool {
        if let Command::Tourney(tourney) = self {
            return tourney.needs_login();
        }
        !matches!(
            self,
            Command::Login { .. }
                | Command::Watch(_)
                | Command::History(_)
                | Command::List(_)
                | Command::Who(_)
                | Command::Ping
                | Command::Help
                | Command::Quit
                | Command::Board
                | Command::Leave
                | Command::Rating { .. }
                | Command::Top { .. }
        )
    }

    /// Which command this is, without its arguments: what its reply is read as
    /// (see [`Reply::parse`](super::Reply::parse)).
    pub fn kind(&self) -> CommandKind {
        match self {
            Command::Login { .. } => CommandKind::Login,
            Command::Seek(_) => CommandKind::Seek,
            Command::Challenge(_) => CommandKind::Challenge,
            Command::Accept(_) => CommandKind::Accept,
            Command::Decline(..) => CommandKind::Decline,
            Command::Cancel(_) => CommandKind::Cancel,
            Command::Rating { .. } => CommandKind::Rating,
            Command::Top { .. } => CommandKind::Top,
            Command::Account(_) => CommandKind::Account,
            Command::Tourney(_) => CommandKind::Tourney,
            Command::New(_) => CommandKind::New,
            Command::Join(_) => CommandKind::Join,
            Command::Watch(_) => CommandKind::Watch,
            Command::History(_) => CommandKind::History,
            Command::Leave => CommandKind::Leave,
            Command::List(_) => CommandKind::List,
            Command::Who(_) => CommandKind::Who,
            Command::Move(_) => CommandKind::Move,
            Command::Pass => CommandKind::Pass,
            Command::End => CommandKind::End,
            Command::Board => CommandKind::Board,
            Command::Hint => CommandKind::Hint,
            Command::Say(_) => CommandKind::Say,
            Command::Rematch => CommandKind::Rematch,
            Command::Undo => CommandKind::Undo,
            Command::Ping => CommandKind::Ping,
            Command::Help => CommandKind::Help,
            Command::Quit => CommandKind::Quit,
        }
    }
}

fn parse_login<'a>(args: &mut impl Iterator<Item = &'a str>) -> Result<Command, ProtocolError> {
    let name = args
        .next()
        .ok_or_else(|| ProtocolError::bad("LOGIN needs a name"))?;
    if let Err(rule) = check_name(name) {
        return Err(ProtocolError::bad(format!(
            "bad name '{}' ({rule})",
            one_line(name)
        )));
    }
    let mut args = args.peekable();
    let credential = match args.next() {
        None => None,
        // `secret` alone is a password like any other word.
        Some(word) if word.eq_ignore_ascii_case(SECRET_KEYWORD) && args.peek().is_some() => {
            let token = args.next().unwrap_or_default();
            if !valid_secret(token) {
                return Err(ProtocolError::bad(format!(
                    "bad secret '{}' (the letters and digits a guest's OK gave)",
                    one_line(token)
                )));
            }
            Some(Credential::Secret(token.to_string()))
        }
        Some(password) => Some(Credential::Password(password.to_string())),
    };
    Ok(Command::Login {
        name: name.to_string(),
        credential,
    })
}

fn parse_new<'a>(args: &mut impl Iterator<Item = &'a str>) -> Result<NewGame, ProtocolError> {
    let mut new = NewGame {
        variant: Variant::Othello,
        seat: SeatChoice::Random,
        opponent: Opponent::Open,
        clock: None,
        from: Vec::new(),
    };
    let mut variant_given = false;
    while let Some(token) = args.next() {
        match token.to_ascii_lowercase().as_str() {
            "as" => new.seat = parse_seat(args.next())?,
            "vs" => new.opponent = parse_opponent(args.next())?,
            "hotseat" => new.opponent = Opponent::Hotseat,
            "clock" => new.clock = Some(ClockSpec::parse(args.next().unwrap_or(""))?),
            "from" => {
                let moves = args
                    .next()
                    .ok_or_else(|| ProtocolError::bad("from needs moves, e.g. f5d6c3"))?;
                new.from = crate::notation::parse_transcript(moves)
                    .map_err(|e| ProtocolError::bad(e.to_string()))?;
            }
            _ if !variant_given => {
                new.variant = parse_variant(token)?;
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
    Ok(new)
}

/// `DECLINE challenge [reason]`: no reason is `generic`.
fn parse_decline<'a>(args: &mut impl Iterator<Item = &'a str>) -> Result<Command, ProtocolError> {
    let id = parse_challenge_id(args.next())?;
    let reason = match args.next() {
        None => DeclineReason::Generic,
        Some(word) => DeclineReason::from_word(word)
            .filter(|r| r.is_a_players())
            .ok_or_else(|| {
                ProtocolError::bad(format!(
                    "bad reason '{}' (expected generic, later, rated, casual, variant or clock)",
                    one_line(word)
                ))
            })?,
    };
    Ok(Command::Decline(id, reason))
}

fn parse_opponent(token: Option<&str>) -> Result<Opponent, ProtocolError> {
    let token = token.unwrap_or("");
    let lower = token.to_ascii_lowercase();
    let bad = || {
        ProtocolError::bad(format!(
            "bad opponent '{}' (expected bot, bot:1..10 or hotseat)",
            one_line(token)
        ))
    };
    match lower.split_once(':') {
        None if lower == "bot" => Ok(Opponent::Bot(DEFAULT_BOT_LEVEL)),
        None if lower == "hotseat" => Ok(Opponent::Hotseat),
        Some(("bot", level)) => match level.parse::<u8>() {
            Ok(level @ 1..=10) => Ok(Opponent::Bot(level)),
            _ => Err(bad()),
        },
        _ => Err(bad()),
    }
}

/// The level of `vs bot` without a number.
pub const DEFAULT_BOT_LEVEL: u8 = 3;

fn parse_game_id(token: Option<&str>) -> Result<GameId, ProtocolError> {
    let token = token.ok_or_else(|| ProtocolError::bad("a game number is needed"))?;
    token.parse().map_err(|_| {
        ProtocolError::bad(format!(
            "bad game '{}' (expected a number)",
            one_line(token)
        ))
    })
}

fn parse_square_arg(token: Option<&str>) -> Result<Square, ProtocolError> {
    let token = token.ok_or_else(|| ProtocolError::bad("MOVE needs a square"))?;
    token
        .parse()
        .map_err(|e: crate::ParseError| ProtocolError::bad(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{COMMAND_HELP, ErrorCode};

    #[test]
    fn commands_parse_case_insensitively_with_their_arguments() {
        assert_eq!(
            Command::parse("move D3").unwrap(),
            Command::Move("d3".parse().unwrap())
        );
        let new = Command::parse("NEW reversi as o vs BOT:5 clock 0.5+2").unwrap();
        let Command::New(new) = new else {
            panic!("{new:?}")
        };
        assert_eq!(new.variant, Variant::Reversi);
        assert_eq!(new.seat, SeatChoice::White);
        assert_eq!(new.opponent, Opponent::Bot(5));
        assert_eq!(
            new.clock,
            Some(ClockSpec {
                base_ms: 30_000,
                increment_ms: 2000
            })
        );
        assert_eq!(
            Command::parse("say  hello there ").unwrap(),
            Command::Say("hello there".to_string())
        );
        assert_eq!(
            Command::parse("SEEK").unwrap(),
            Command::Seek(SeekSpec::default())
        );
        assert_eq!(Command::parse("history 12").unwrap(), Command::History(12));
        assert!(!Command::History(12).needs_login());
        assert_eq!(
            Command::parse("LOGIN ann pass word").unwrap_err().message,
            "unexpected 'word'"
        );
    }

    #[test]
    fn login_takes_a_password_or_a_guests_secret() {
        let login = |line| match Command::parse(line) {
            Ok(Command::Login { name, credential }) => (name, credential),
            other => panic!("{line}: {other:?}"),
        };
        assert_eq!(login("LOGIN ann"), ("ann".into(), None));
        let password = Some(Credential::Password("tiger".into()));
        assert_eq!(login("login ann tiger"), ("ann".into(), password));
        let secret = Some(Credential::Secret("0f3a9c".into()));
        assert_eq!(
            login("LOGIN ann secret 0f3a9c"),
            ("ann".into(), secret.clone())
        );
        assert_eq!(login("LOGIN ann SECRET 0f3a9c"), ("ann".into(), secret));
        let word = Some(Credential::Password("secret".into()));
        assert_eq!(login("LOGIN ann secret"), ("ann".into(), word));
        let bad = Command::parse("LOGIN ann secret 0f-3a").unwrap_err();
        assert!(
            bad.message.starts_with("bad secret '0f-3a'"),
            "{}",
            bad.message
        );
        let extra = Command::parse("LOGIN ann secret 0f3a more").unwrap_err();
        assert_eq!(extra.message, "unexpected 'more'");
    }

    #[test]
    fn kinds_are_the_keywords_of_help_and_of_parsed_commands() {
        for (kind, (usage, _)) in CommandKind::ALL.into_iter().zip(COMMAND_HELP) {
            assert!(usage.starts_with(kind.keyword()), "{usage}");
            assert_eq!(CommandKind::from_keyword(kind.keyword()), Some(kind));
            let lower = kind.keyword().to_ascii_lowercase();
            assert_eq!(CommandKind::from_keyword(&lower), Some(kind));
        }
        for (line, kind) in [
            ("login ann", CommandKind::Login),
            ("SEEK", CommandKind::Seek),
            ("NEW reversi vs bot", CommandKind::New),
            ("JOIN 3", CommandKind::Join),
            ("  say hi", CommandKind::Say),
            ("history 12", CommandKind::History),
            ("Rematch", CommandKind::Rematch),
        ] {
            assert_eq!(Command::parse(line).unwrap().kind(), kind, "{line}");
            assert_eq!(CommandKind::of_line(line), Some(kind), "{line}");
        }
        assert_eq!(CommandKind::of_line("FROB 1"), None);
        assert_eq!(CommandKind::of_line(" "), None);
        assert_eq!(CommandKind::from_keyword("LOGINS"), None);
    }

    #[test]
    fn bad_commands_are_400_and_name_the_token() {
        for (line, token) in [
            ("FROB", "'FROB'"),
            ("MOVE z9", "'z9'"),
            ("NEW chess", "'chess'"),
            ("NEW vs bot:11", "'bot:11'"),
            ("JOIN x1", "'x1'"),
            ("LOGIN bad!name", "'bad!name'"),
            ("SEEK clock 5", "'5'"),
            ("PASS now", "'now'"),
            ("NEW from f5z9", "'z9'"),
        ] {
            let err = Command::parse(line).unwrap_err();
            assert_eq!(err.code, ErrorCode::BadRequest, "{line}");
            assert!(err.message.contains(token), "{line}: {err}");
        }
    }
}
