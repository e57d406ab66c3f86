//! The final `OK` replies, typed: one grammar for the daemon, the client, the
//! tests and the load tool instead of a string built in one place and taken
//! apart by hand in the others.
//!
//! What follows `OK` depends on the command answered: `OK 12` is a game after
//! `NEW` and a count after `LIST`, and a name may be all digits. So a reply is
//! read knowing its command, [`Reply::parse`] takes the [`CommandKind`] along
//! with the line. The `ERR` side is [`ProtocolError`](super::ProtocolError),
//! which [`ServerLine`](super::ServerLine) reads.

use std::fmt;
use std::str::FromStr;

use super::GameId;
use super::command_kind::CommandKind;
use super::credential::{SECRET_KEYWORD, valid_secret};
use super::error::one_line;
use super::name::valid_name;
use crate::square::Move;
use crate::variant::Color;

/// A final `OK` reply: what each command answers when it succeeds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reply {
    /// `OK`: done, with nothing to tell (`MOVE`, `PASS`, `END`, `SAY`,
    /// `BOARD`, `HELP`, `HISTORY`, and `LEAVE` of a game or of watching).
    Done,
    /// `OK <name> [secret <token>] [registered] [seat <game>]`: logged in
    /// under the name (`LOGIN`); see [`LoginOk`].
    Login(LoginOk),
    /// `OK <game>`: the game made (`NEW`), paired into (`SEEK`), watched
    /// (`WATCH`), or started once everyone asked for a rematch (`REMATCH`).
    Game(GameId),
    /// `OK <challenge>`: the challenge made, numbered apart from games
    /// (`CHALLENGE`).
    Challenge(u64),
    /// `OK <tourney>`: the tournament made (`TOURNEY NEW`).
    Tourney(u64),
    /// `OK <game> <X|O>`: seated in the game, playing that colour (`JOIN`).
    Joined(GameId, Color),
    /// `OK seeking`: nobody to pair with yet; `START` comes when someone is
    /// (`SEEK`).
    Seeking,
    /// `OK waiting`: the rematch is offered and waits for the others
    /// (`REMATCH`).
    Waiting,
    /// `OK asked`: the other player is asked to agree to take back a move;
    /// `UNDONE` comes if they do (`UNDO`).
    Asked,
    /// `OK seek withdrawn`: the seek is withdrawn (`LEAVE`).
    SeekWithdrawn,
    /// `OK <count>`: the number of data lines sent before the reply (`LIST`,
    /// `WHO`).
    Count(usize),
    /// `OK <square|pass> <score> [exact]`: the engine's move for the side to
    /// move and its evaluation for that side, higher is better, and whether
    /// that score is proven (`exact`, appended: a proven draw scores 0, which
    /// says nothing by itself); nothing is played (`HINT`).
    Hint(Move, i32, bool),
    /// `OK pong` (`PING`).
    Pong,
    /// `OK bye`: the server closes the connection next (`QUIT`).
    Bye,
}

impl Reply {
    /// Reads the final reply to an `answering` command. It takes exactly what
    /// `Display` writes, as the daemon sends it, with or without the line
    /// ending (LF or CRLF). Anything else, an `ERR` line among them, is a
    /// [`ReplyError`] that names the offending token.
    pub fn parse(answering: CommandKind, line: &str) -> Result<Reply, ReplyError> {
        let mut tokens = Tokens::new(answering, line.trim_end_matches(['\r', '\n']))?;
        let reply = match answering {
            CommandKind::Login => Reply::Login(tokens.logged_in()?),
            CommandKind::Seek if tokens.peek() == Some("seeking") => {
                tokens.word("seeking")?;
                Reply::Seeking
            }
            CommandKind::Rematch if tokens.peek() == Some("waiting") => {
                tokens.word("waiting")?;
                Reply::Waiting
            }
            CommandKind::Undo if tokens.peek() == Some("asked") => {
                tokens.word("asked")?;
                Reply::Asked
            }
            CommandKind::Challenge => Reply::Challenge(tokens.value()?),
            CommandKind::Tourney if tokens.peek().is_some() => Reply::Tourney(tokens.value()?),
            CommandKind::Seek
            | CommandKind::New
            | CommandKind::Watch
            | CommandKind::Rematch
            | CommandKind::Accept => Reply::Game(tokens.value()?),
            CommandKind::Join => {
                let game = tokens.value()?;
                Reply::Joined(game, tokens.side()?)
            }
            CommandKind::Leave if tokens.peek().is_some() => {
                tokens.word("seek")?;
                tokens.word("withdrawn")?;
                Reply::SeekWithdrawn
            }
            CommandKind::List | CommandKind::Who => Reply::Count(tokens.value()?),
            CommandKind::Hint => {
                let mv = tokens.value()?;
                let score = tokens.value()?;
                let exact = tokens.peek() == Some("exact");
                if exact {
                    tokens.word("exact")?;
                }
                Reply::Hint(mv, score, exact)
            }
            CommandKind::Ping => {
                tokens.word("pong")?;
                Reply::Pong
            }
            CommandKind::Quit => {
                tokens.word("bye")?;
                Reply::Bye
            }
            CommandKind::Leave
            | CommandKind::Move
            | CommandKind::Pass
            | CommandKind::End
            | CommandKind::Undo
            | CommandKind::Say
            | CommandKind::Board
            | CommandKind::Help
            | CommandKind::History
            | CommandKind::Decline
            | CommandKind::Cancel
            | CommandKind::Rating
            | CommandKind::Top
            | CommandKind::Account
            | CommandKind::Tourney => Reply::Done,
        };
        tokens.end()?;
        Ok(reply)
    }
}

impl fmt::Display for Reply {
    /// The reply line without its line feed, as the daemon sends it: `OK`,
    /// `OK ann`, `OK 12`, `OK 12 X`, `OK seek withdrawn`, `OK d3 -120`, ...
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("OK")?;
        match self {
            Reply::Done => Ok(()),
            Reply::Login(login) => write_login(f, login),
            Reply::Challenge(id) | Reply::Tourney(id) => write!(f, " {id}"),
            Reply::Game(game) => write!(f, " {game}"),
            Reply::Joined(game, color) => write!(f, " {game} {color}"),
            Reply::Seeking => f.write_str(" seeking"),
            Reply::Waiting => f.write_str(" waiting"),
            Reply::Asked => f.write_str(" asked"),
            Reply::SeekWithdrawn => f.write_str(" seek withdrawn"),
            Reply::Count(count) => write!(f, " {count}"),
            Reply::Hint(mv, score, false) => write!(f, " {mv} {score}"),
            Reply::Hint(mv, score, true) => write!(f, " {mv} {score} exact"),
            Reply::Pong => f.write_str(" pong"),
            Reply::Bye => f.write_str(" bye"),
        }
    }
}

/// What the `OK` of a `LOGIN` says beyond the name. The words after the
/// name were added to protocol 1 one at a time, each only where it applies,
/// so `OK ann` is still the whole reply of a plain login.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LoginOk {
    /// The name, spelled as the daemon holds it.
    pub name: String,
    /// `secret <token>`: a guest's; the token is what `LOGIN <name> secret
    /// <token>` shows to take the name back while the daemon holds it.
    pub secret: Option<String>,
    /// `registered`: this login registered the name, which from now on
    /// needs its password.
    pub registered: bool,
    /// `seat <game>`: the name has a seat kept in that game in play (after
    /// a disconnect or a restart); `JOIN <game>` takes it back.
    pub seat: Option<GameId>,
}

impl LoginOk {
    /// A plain login's: the name alone.
    pub fn name(name: impl Into<String>) -> LoginOk {
        LoginOk {
            name: name.into(),
            ..LoginOk::default()
        }
    }
}

/// The word of `OK <name> registered`.
pub const REGISTERED_WORD: &str = "registered";

/// The word of `OK <name> seat <game>`.
pub const SEAT_WORD: &str = "seat";

/// The words of a `LOGIN`'s `OK` after `OK`, in their order.
fn write_login(f: &mut fmt::Formatter<'_>, login: &LoginOk) -> fmt::Result {
    write!(f, " {}", login.name)?;
    if let Some(secret) = &login.secret {
        write!(f, " {SECRET_KEYWORD} {secret}")?;
    }
    if login.registered {
        write!(f, " {REGISTERED_WORD}")?;
    }
    if let Some(game) = login.seat {
        write!(f, " {SEAT_WORD} {game}")?;
    }
    Ok(())
}

/// A line that is not a reply to its command, and the token that shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReplyError {
    /// The command the line was read as the reply to.
    pub answering: CommandKind,
    /// The offending token: the first word of a line that is no `OK` line, a
    /// token that is not what the reply has there, or the first one too many;
    /// the whole line when it stops short. Shortened if long, with control
    /// characters as spaces.
    pub token: String,
}

/// Longest token quoted in an error message: a line can be arbitrarily long.
const MAX_QUOTED: usize = 40;

impl ReplyError {
    fn new(answering: CommandKind, token: &str) -> ReplyError {
        let token = match token.char_indices().nth(MAX_QUOTED) {
            Some((cut, _)) => format!("{}...", token.get(..cut).unwrap_or(token)),
            None => token.to_string(),
        };
        ReplyError {
            answering,
            token: one_line(&token),
        }
    }
}

impl fmt::Display for ReplyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "bad reply to {} '{}' (expected {})",
            self.answering.keyword(),
            self.token,
            expected(self.answering)
        )
    }
}

impl std::error::Error for ReplyError {}

/// The replies a command may get, for error messages.
fn expected(answering: CommandKind) -> &'static str {
    match answering {
        CommandKind::Login => "OK <name> [secret <token>] [registered] [seat <game>]",
        CommandKind::Seek => "OK <game> or OK seeking",
        CommandKind::New | CommandKind::Watch | CommandKind::Accept => "OK <game>",
        CommandKind::Challenge => "OK <challenge>",
        CommandKind::Tourney => "OK <tourney> after NEW, else OK",
        CommandKind::Join => "OK <game> <X|O>",
        CommandKind::Leave => "OK or OK seek withdrawn",
        CommandKind::List | CommandKind::Who => "OK <count>",
        CommandKind::Hint => "OK <square|pass> <score>",
        CommandKind::Rematch => "OK waiting or OK <game>",
        CommandKind::Undo => "OK or OK asked",
        CommandKind::Ping => "OK pong",
        CommandKind::Quit => "OK bye",
        CommandKind::Move
        | CommandKind::Pass
        | CommandKind::End
        | CommandKind::Say
        | CommandKind::Board
        | CommandKind::Help
        | CommandKind::History
        | CommandKind::Decline
        | CommandKind::Cancel
        | CommandKind::Rating
        | CommandKind::Top
        | CommandKind::Account => "OK",
    }
}

/// The tokens after `OK`, read one at a time; each error names its token.
struct Tokens<'a> {
    answering: CommandKind,
    line: &'a str,
    tokens: Vec<&'a str>,
    at: usize,
}

impl<'a> Tokens<'a> {
    /// The tokens of an `OK` line (none for a bare `OK`); an error naming the
    /// first word for any other line.
    fn new(answering: CommandKind, line: &'a str) -> Result<Tokens<'a>, ReplyError> {
        let tokens = match line.strip_prefix("OK") {
            Some("") => Vec::new(),
            Some(rest) if rest.starts_with(' ') => rest.split(' ').skip(1).collect(),
            _ => {
                let first = line.split(' ').next().unwrap_or(line);
                return Err(ReplyError::new(answering, first));
            }
        };
        Ok(Tokens {
            answering,
            line,
            tokens,
            at: 0,
        })
    }

    fn bad(&self, token: &str) -> ReplyError {
        ReplyError::new(self.answering, token)
    }

    fn peek(&self) -> Option<&'a str> {
        self.tokens.get(self.at).copied()
    }

    /// The next token; the whole line is the offending token when there is
    /// none.
    fn next(&mut self) -> Result<&'a str, ReplyError> {
        let token = self.peek().ok_or_else(|| self.bad(self.line))?;
        self.at += 1;
        Ok(token)
    }

    /// The next token, which must be `word`.
    fn word(&mut self, word: &str) -> Result<(), ReplyError> {
        match self.next()? {
            token if token == word => Ok(()),
            token => Err(self.bad(token)),
        }
    }

    /// The next token as a value written the way `Display` writes it (no `+`,
    /// no leading zeros, squares in lower case, `pass` in full).
    fn value<T: FromStr + fmt::Display>(&mut self) -> Result<T, ReplyError> {
        let token = self.next()?;
        match token.parse::<T>() {
            Ok(value) if value.to_string() == token => Ok(value),
            _ => Err(self.bad(token)),
        }
    }

    /// The next token as a side, `X` or `O`.
    fn side(&mut self) -> Result<Color, ReplyError> {
        match self.next()? {
            "X" => Ok(Color::Black),
            "O" => Ok(Color::White),
            token => Err(self.bad(token)),
        }
    }

    /// The words of a `LOGIN`'s `OK`, each optional, in the order
    /// [`write_login`] writes them.
    fn logged_in(&mut self) -> Result<LoginOk, ReplyError> {
        let name = self.next()?;
        if !valid_name(name) {
            return Err(self.bad(name));
        }
        let mut login = LoginOk::name(name);
        if self.peek() == Some(SECRET_KEYWORD) {
            self.word(SECRET_KEYWORD)?;
            let secret = self.next()?;
            if !valid_secret(secret) {
                return Err(self.bad(secret));
            }
            login.secret = Some(secret.to_string());
        }
        if self.peek() == Some(REGISTERED_WORD) {
            self.word(REGISTERED_WORD)?;
            login.registered = true;
        }
        if self.peek() == Some(SEAT_WORD) {
            self.word(SEAT_WORD)?;
            login.seat = Some(self.value()?);
        }
        Ok(login)
    }

    /// Nothing may follow the reply.
    fn end(&self) -> Result<(), ReplyError> {
        match self.peek() {
            Some(extra) => Err(self.bad(extra)),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::square::Square;

    fn login(name: &str, secret: Option<&str>, registered: bool, seat: Option<u64>) -> Reply {
        Reply::Login(LoginOk {
            name: name.into(),
            secret: secret.map(String::from),
            registered,
            seat,
        })
    }

    fn d3() -> Move {
        Move::Place(Square::new(2, 3).unwrap())
    }

    #[test]
    fn replies_print_as_the_daemon_sends_them_and_read_back() {
        for (kind, reply, line) in [
            (
                CommandKind::Login,
                login("ann", None, false, None),
                "OK ann",
            ),
            (CommandKind::Login, login("42", None, false, None), "OK 42"),
            (
                CommandKind::Login,
                login("ann", Some("0f3a9c"), false, None),
                "OK ann secret 0f3a9c",
            ),
            (
                CommandKind::Login,
                login("ann", None, true, None),
                "OK ann registered",
            ),
            (
                CommandKind::Login,
                login("ann", None, false, Some(24)),
                "OK ann seat 24",
            ),
            (
                CommandKind::Login,
                login("ann", Some("0f3a9c"), false, Some(3)),
                "OK ann secret 0f3a9c seat 3",
            ),
            (CommandKind::Seek, Reply::Game(12), "OK 12"),
            (CommandKind::Seek, Reply::Seeking, "OK seeking"),
            (CommandKind::New, Reply::Game(12), "OK 12"),
            (
                CommandKind::Join,
                Reply::Joined(12, Color::Black),
                "OK 12 X",
            ),
            (CommandKind::Join, Reply::Joined(3, Color::White), "OK 3 O"),
            (CommandKind::Watch, Reply::Game(1), "OK 1"),
            (CommandKind::Leave, Reply::Done, "OK"),
            (
                CommandKind::Leave,
                Reply::SeekWithdrawn,
                "OK seek withdrawn",
            ),
            (CommandKind::List, Reply::Count(0), "OK 0"),
            (CommandKind::Who, Reply::Count(2), "OK 2"),
            (CommandKind::Move, Reply::Done, "OK"),
            (CommandKind::History, Reply::Done, "OK"),
            (
                CommandKind::Hint,
                Reply::Hint(d3(), -120, false),
                "OK d3 -120",
            ),
            (
                CommandKind::Hint,
                Reply::Hint(Move::Pass, 0, false),
                "OK pass 0",
            ),
            (
                CommandKind::Hint,
                Reply::Hint(d3(), 0, true),
                "OK d3 0 exact",
            ),
            (
                CommandKind::Hint,
                Reply::Hint(d3(), -120000, true),
                "OK d3 -120000 exact",
            ),
            (CommandKind::Rematch, Reply::Waiting, "OK waiting"),
            (CommandKind::Undo, Reply::Asked, "OK asked"),
            (CommandKind::Challenge, Reply::Challenge(4), "OK 4"),
            (CommandKind::Accept, Reply::Game(9), "OK 9"),
            (CommandKind::Undo, Reply::Done, "OK"),
            (CommandKind::Rematch, Reply::Game(13), "OK 13"),
            (CommandKind::Ping, Reply::Pong, "OK pong"),
            (CommandKind::Quit, Reply::Bye, "OK bye"),
        ] {
            assert_eq!(reply.to_string(), line);
            assert_eq!(Reply::parse(kind, line), Ok(reply.clone()), "{line}");
            assert_eq!(Reply::parse(kind, &format!("{line}\r\n")), Ok(reply));
        }
        // The same line is a game or a count, as the command says.
        assert_eq!(Reply::parse(CommandKind::New, "OK 2"), Ok(Reply::Game(2)));
        assert_eq!(Reply::parse(CommandKind::List, "OK 2"), Ok(Reply::Count(2)));
        assert_eq!(
            Reply::parse(CommandKind::Login, "OK 2"),
            Ok(login("2", None, false, None))
        );
    }

    #[test]
    fn a_line_that_does_not_fit_its_command_names_the_token() {
        for (kind, line, token) in [
            (
                CommandKind::New,
                "ERR 409 game 3 is in play: END resigns it",
                "ERR",
            ),
            (CommandKind::New, "OKAY 3", "OKAY"),
            (CommandKind::New, "OK", "OK"),
            (CommandKind::New, "OK seeking", "seeking"),
            (CommandKind::New, "OK 012", "012"),
            (CommandKind::New, "OK +12", "+12"),
            (CommandKind::New, "OK 12 X", "X"),
            (CommandKind::New, "OK 12 ", ""),
            (CommandKind::Seek, "OK  12", ""),
            (CommandKind::Join, "OK 12", "OK 12"),
            (CommandKind::Join, "OK 12 x", "x"),
            (CommandKind::Login, "OK bad!name", "bad!name"),
            (CommandKind::Login, "OK ann bob", "bob"),
            (CommandKind::Login, "OK ann seat", "OK ann seat"),
            (CommandKind::Login, "OK ann seat x", "x"),
            (CommandKind::Login, "OK ann seat 3 registered", "registered"),
            (CommandKind::Leave, "OK seek", "OK seek"),
            (CommandKind::Leave, "OK seek withdrew", "withdrew"),
            (CommandKind::List, "OK -1", "-1"),
            (CommandKind::Hint, "OK D3 5", "D3"),
            (CommandKind::Hint, "OK pa 5", "pa"),
            (CommandKind::Hint, "OK d3 five", "five"),
            (CommandKind::Hint, "OK d3 5 exactly", "exactly"),
            (CommandKind::Hint, "OK d3", "OK d3"),
            (CommandKind::Rematch, "OK wait", "wait"),
            (CommandKind::Move, "OK 3", "3"),
            (CommandKind::Ping, "OK", "OK"),
            (CommandKind::Ping, "OK pong\tx", "pong x"),
            (CommandKind::Quit, "OK pong", "pong"),
        ] {
            let err = Reply::parse(kind, line).unwrap_err();
            assert_eq!(err.answering, kind, "{line}");
            assert_eq!(err.token, token, "{line}");
            assert!(err.to_string().contains(&format!("'{token}'")), "{err}");
            assert!(err.to_string().contains(kind.keyword()), "{err}");
        }
        let long = format!("OK {}", "7".repeat(100));
        let err = Reply::parse(CommandKind::List, &long).unwrap_err();
        assert_eq!(err.token, format!("{}...", "7".repeat(40)));
    }
}
