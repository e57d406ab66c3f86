//! Protocol v1: commands parsed from client lines, events and replies printed for
//! them, and the same events parsed back for clients and bots.
//!
//! Pure text in, values out: the daemon and the client both use this module, so the
//! two sides cannot disagree on the format. Keywords are case-insensitive on input;
//! the server writes keywords in upper case and squares in lower case.

use std::fmt;

use crate::square::Square;
use crate::variant::{Color, Variant};

/// The first line a server sends.
pub const GREETING: &str = "HELLO flipline 1";

/// Longest name a player may log in with.
pub const MAX_NAME_LEN: usize = 20;

/// The error codes of `ERR` replies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ErrorCode {
    /// 400: unknown command or bad arguments.
    BadRequest,
    /// 401: not logged in, or wrong password.
    Unauthorized,
    /// 403: not allowed (not your game, not your turn, hints off).
    Forbidden,
    /// 404: no such game or player.
    NotFound,
    /// 409: conflict (seat taken, name in use, game over).
    Conflict,
    /// 413: line too long.
    TooLong,
    /// 422: illegal move.
    IllegalMove,
    /// 429: too many commands.
    TooMany,
    /// 503: server full or shutting down.
    Unavailable,
}

impl ErrorCode {
    /// Every code, in numeric order.
    pub const ALL: [ErrorCode; 9] = [
        ErrorCode::BadRequest,
        ErrorCode::Unauthorized,
        ErrorCode::Forbidden,
        ErrorCode::NotFound,
        ErrorCode::Conflict,
        ErrorCode::TooLong,
        ErrorCode::IllegalMove,
        ErrorCode::TooMany,
        ErrorCode::Unavailable,
    ];

    /// The number on the wire.
    pub fn number(self) -> u16 {
        match self {
            ErrorCode::BadRequest => 400,
            ErrorCode::Unauthorized => 401,
            ErrorCode::Forbidden => 403,
            ErrorCode::NotFound => 404,
            ErrorCode::Conflict => 409,
            ErrorCode::TooLong => 413,
            ErrorCode::IllegalMove => 422,
            ErrorCode::TooMany => 429,
            ErrorCode::Unavailable => 503,
        }
    }

    /// The code for a number on the wire.
    pub fn from_number(number: u16) -> Option<ErrorCode> {
        ErrorCode::ALL.into_iter().find(|c| c.number() == number)
    }
}

/// A refused command: the code and a message for people.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProtocolError {
    /// What kind of refusal.
    pub code: ErrorCode,
    /// Why, in words (one line).
    pub message: String,
}

impl ProtocolError {
    /// An error with `code` and `message` (line breaks are replaced by spaces).
    pub fn new(code: ErrorCode, message: impl Into<String>) -> ProtocolError {
        let message = one_line(&message.into());
        ProtocolError { code, message }
    }

    /// A 400 error.
    pub fn bad(message: impl Into<String>) -> ProtocolError {
        ProtocolError::new(ErrorCode::BadRequest, message)
    }
}

impl fmt::Display for ProtocolError {
    /// The reply line without its line feed: `ERR <code> <message>`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ERR {} {}", self.code.number(), self.message)
    }
}

impl std::error::Error for ProtocolError {}

/// Replaces control characters (line breaks among them) by spaces, so that text
/// from one client cannot forge lines for another.
pub fn one_line(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

/// A clock: minutes of base time plus seconds added after each move.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ClockSpec {
    /// Base time per side, in milliseconds.
    pub base_ms: u64,
    /// Increment per move, in milliseconds.
    pub increment_ms: u64,
}

/// Longest base time a clock may have: a day.
const MAX_CLOCK_MS: u64 = 24 * 60 * 60 * 1000;

impl ClockSpec {
    /// Reads `M+S`: minutes (a decimal, `0.5` is 30 s) plus whole seconds.
    pub fn parse(text: &str) -> Result<ClockSpec, ProtocolError> {
        let bad = || {
            ProtocolError::bad(format!(
                "bad clock '{}' (expected minutes+seconds, e.g. 5+3)",
                one_line(text)
            ))
        };
        let (minutes, seconds) = text.split_once('+').ok_or_else(bad)?;
        let base_ms = parse_minutes_ms(minutes).ok_or_else(bad)?;
        let increment_ms = seconds
            .parse::<u64>()
            .ok()
            .filter(|s| *s <= 3600)
            .ok_or_else(bad)?
            * 1000;
        if base_ms == 0 || base_ms > MAX_CLOCK_MS {
            return Err(bad());
        }
        Ok(ClockSpec {
            base_ms,
            increment_ms,
        })
    }
}

/// Minutes with up to three decimals as milliseconds.
fn parse_minutes_ms(text: &str) -> Option<u64> {
    let (whole, fraction) = text.split_once('.').unwrap_or((text, ""));
    if whole.is_empty() && fraction.is_empty() || fraction.len() > 3 {
        return None;
    }
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if !digits(whole) || !digits(fraction) || whole.len() > 4 {
        return None;
    }
    let whole: u64 = if whole.is_empty() {
        0
    } else {
        whole.parse().ok()?
    };
    let thousandths: u64 = format!("{fraction:0<3}").parse().ok()?;
    Some(whole * 60_000 + thousandths * 60)
}

impl fmt::Display for ClockSpec {
    /// `M+S` as [`ClockSpec::parse`] reads it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (whole, rest) = (self.base_ms / 60_000, self.base_ms % 60_000);
        if rest == 0 {
            write!(f, "{whole}")?;
        } else {
            let fraction = format!("{:03}", rest / 60);
            write!(f, "{whole}.{}", fraction.trim_end_matches('0'))?;
        }
        write!(f, "+{}", self.increment_ms / 1000)
    }
}

/// Which colour the creator of a game takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum SeatChoice {
    /// Black.
    Black,
    /// White.
    White,
    /// Either, at random.
    #[default]
    Random,
}

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

/// Game ids are small numbers, unique for the daemon's life.
pub type GameId = u64;

/// A command from a client.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Command {
    /// `LOGIN name [password]`.
    Login {
        /// 1-20 letters, digits, `_` or `-`.
        name: String,
        /// Optional password.
        password: Option<String>,
    },
    /// `SEEK [variant] [clock M+S]`.
    Seek {
        /// The game wanted.
        variant: Variant,
        /// The clock wanted.
        clock: Option<ClockSpec>,
    },
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
    /// `LIST`.
    List,
    /// `WHO`.
    Who,
    /// `MOVE square`.
    Move(Square),
    /// `PASS`.
    Pass,
    /// `END`: resign.
    End,
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

/// One line of help per command, for `HELP` and the client.
pub const COMMAND_HELP: [(&str, &str); 19] = [
    (
        "LOGIN name [password]",
        "take a name (1-20 letters, digits, _ or -); a password registers it",
    ),
    ("SEEK [variant] [clock M+S]", "pair with another seeker"),
    (
        "NEW [variant] [as X|O|random] [vs bot[:level] | hotseat] [clock M+S]",
        "create a game",
    ),
    (
        "JOIN game",
        "take the free seat of a game, or your own seat back",
    ),
    ("WATCH game", "follow a game as a spectator"),
    (
        "HISTORY game",
        "a game's players, result and moves, from the store",
    ),
    ("LEAVE", "leave the current game, seek or watch"),
    ("LIST", "games open and in play"),
    ("WHO", "players online"),
    (
        "MOVE square",
        "play a move (a square alone also works in the client)",
    ),
    ("PASS", "pass, when you have no move"),
    ("END", "resign the current game"),
    ("BOARD", "show the board"),
    ("HINT", "ask the engine for a move"),
    ("SAY text", "chat to everyone in the game"),
    ("REMATCH", "play again, colours swapped"),
    ("PING", "check the connection"),
    ("HELP", "this list"),
    ("QUIT", "close the connection"),
];

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
            "SEEK" => parse_seek(&mut args)?,
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
                "LIST" => Command::List,
                "WHO" => Command::Who,
                "PASS" => Command::Pass,
                "END" => Command::End,
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
        !matches!(
            self,
            Command::Login { .. }
                | Command::Watch(_)
                | Command::History(_)
                | Command::List
                | Command::Who
                | Command::Ping
                | Command::Help
                | Command::Quit
                | Command::Board
                | Command::Leave
        )
    }
}

/// Whether `name` may be logged in with: 1-20 ASCII letters, digits, `_` or `-`.
pub fn valid_name(name: &str) -> bool {
    (1..=MAX_NAME_LEN).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

fn parse_login<'a>(args: &mut impl Iterator<Item = &'a str>) -> Result<Command, ProtocolError> {
    let name = args
        .next()
        .ok_or_else(|| ProtocolError::bad("LOGIN needs a name"))?;
    if !valid_name(name) {
        return Err(ProtocolError::bad(format!(
            "bad name '{}' (1-20 letters, digits, _ or -)",
            one_line(name)
        )));
    }
    let password = args.next().map(str::to_string);
    Ok(Command::Login {
        name: name.to_string(),
        password,
    })
}

fn parse_seek<'a>(args: &mut impl Iterator<Item = &'a str>) -> Result<Command, ProtocolError> {
    let (mut variant, mut clock) = (None, None);
    while let Some(token) = args.next() {
        if token.eq_ignore_ascii_case("clock") && clock.is_none() {
            clock = Some(ClockSpec::parse(args.next().unwrap_or(""))?);
        } else if variant.is_none() && clock.is_none() {
            variant = Some(parse_variant(token)?);
        } else {
            return Err(ProtocolError::bad(format!(
                "unexpected '{}'",
                one_line(token)
            )));
        }
    }
    Ok(Command::Seek {
        variant: variant.unwrap_or(Variant::Othello),
        clock,
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

fn parse_variant(token: &str) -> Result<Variant, ProtocolError> {
    token
        .parse()
        .map_err(|e: crate::ParseError| ProtocolError::bad(e.to_string()))
}

fn parse_seat(token: Option<&str>) -> Result<SeatChoice, ProtocolError> {
    match token.map(str::to_ascii_lowercase).as_deref() {
        Some("x" | "black") => Ok(SeatChoice::Black),
        Some("o" | "white") => Ok(SeatChoice::White),
        Some("random") => Ok(SeatChoice::Random),
        other => Err(ProtocolError::bad(format!(
            "bad seat '{}' (expected X, O or random)",
            one_line(other.unwrap_or(""))
        ))),
    }
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

/// Why a game ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EndReason {
    /// Neither side could move (or the board filled, or three in a row).
    Normal,
    /// A player resigned (`END`).
    Resign,
    /// A clock ran out.
    Time,
    /// A player left and did not come back within the grace period.
    Abandon,
}

impl EndReason {
    /// The word on the wire.
    pub fn word(self) -> &'static str {
        match self {
            EndReason::Normal => "normal",
            EndReason::Resign => "resign",
            EndReason::Time => "time",
            EndReason::Abandon => "abandon",
        }
    }

    /// The reason for a word on the wire.
    pub fn from_word(word: &str) -> Option<EndReason> {
        [
            EndReason::Normal,
            EndReason::Resign,
            EndReason::Time,
            EndReason::Abandon,
        ]
        .into_iter()
        .find(|r| r.word() == word)
    }
}

/// A square played, or a pass, as `MOVED` carries it.
pub type Played = crate::square::Move;

/// How a finished game ended, as one token: `<X|O|draw>:<black>-<white>:<reason>`
/// (`X:40-24:normal`), the form `HISTORY` and the archives use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct GameResult {
    /// The winner, `None` for a draw.
    pub winner: Option<Color>,
    /// Black's score.
    pub black: u32,
    /// White's score.
    pub white: u32,
    /// Why it ended.
    pub reason: EndReason,
}

impl GameResult {
    /// Reads the token [`GameResult`]'s `Display` writes; `None` for anything else.
    pub fn parse(token: &str) -> Option<GameResult> {
        let mut parts = token.split(':');
        let (winner, scores, reason) = (parts.next()?, parts.next()?, parts.next()?);
        if parts.next().is_some() {
            return None;
        }
        let (black, white) = scores.split_once('-')?;
        Some(GameResult {
            winner: optional_word(winner, "draw", Color::from_letter)?,
            black: black.parse().ok()?,
            white: white.parse().ok()?,
            reason: EndReason::from_word(reason)?,
        })
    }
}

impl fmt::Display for GameResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.winner {
            Some(color) => write!(f, "{}", color.letter())?,
            None => f.write_str("draw")?,
        }
        write!(f, ":{}-{}:{}", self.black, self.white, self.reason.word())
    }
}

/// A line the server sends that is not a final reply.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    /// `START <game> <variant> <black> <white> <clock|->`.
    Start {
        /// The game.
        game: GameId,
        /// Its variant.
        variant: Variant,
        /// Black's name.
        black: String,
        /// White's name.
        white: String,
        /// The clock, if any.
        clock: Option<ClockSpec>,
    },
    /// `BOARD <game> <cells> <side|->`.
    Board {
        /// The game.
        game: GameId,
        /// The cells, row by row from a1 (OBF alphabet).
        cells: String,
        /// The side to move, `None` when the game is over.
        to_move: Option<Color>,
    },
    /// `TURN <game> <side> <moves|pass>`.
    Turn {
        /// The game.
        game: GameId,
        /// The side to move.
        side: Color,
        /// Its legal moves; empty means it must pass.
        moves: Vec<Square>,
    },
    /// `MOVED <game> <side> <square|pass> <black> <white> [<black-ms> <white-ms>]`.
    Moved {
        /// The game.
        game: GameId,
        /// Who moved.
        side: Color,
        /// What was played.
        played: Played,
        /// Black's discs after the move.
        black: u32,
        /// White's discs after the move.
        white: u32,
        /// Both clocks (black, white) in milliseconds, when the game has one.
        clocks: Option<(u64, u64)>,
    },
    /// `OVER <game> <X|O|draw> <black-score> <white-score> <reason>`.
    Over {
        /// The game.
        game: GameId,
        /// The winner, `None` for a draw.
        winner: Option<Color>,
        /// Black's score.
        black: u32,
        /// White's score.
        white: u32,
        /// Why it ended.
        reason: EndReason,
    },
    /// `CHAT <game> <name> <text>`.
    Chat {
        /// The game.
        game: GameId,
        /// Who spoke.
        name: String,
        /// What they said.
        text: String,
    },
    /// `GAME <game> <variant> <black|-> <white|-> <status> <ply>` (a `LIST` line).
    Game {
        /// The game.
        game: GameId,
        /// Its variant.
        variant: Variant,
        /// Black's name, if seated.
        black: Option<String>,
        /// White's name, if seated.
        white: Option<String>,
        /// `open`, `playing` or `over`.
        status: String,
        /// Plies played.
        ply: u32,
    },
    /// `PLAYER <name> <status>` (a `WHO` line).
    Player {
        /// The name.
        name: String,
        /// `idle`, `seeking`, `playing` or `watching`, with the game where there is one.
        status: String,
    },
    /// `INFO <text>`.
    Info(String),
    /// `HISTORY <game> <variant> <black|-> <white|-> <clock|-> <status> <result|-> <moves|->`
    /// (the data line of `HISTORY`).
    History {
        /// The game.
        game: GameId,
        /// Its variant.
        variant: Variant,
        /// Black's name, if seated.
        black: Option<String>,
        /// White's name, if seated.
        white: Option<String>,
        /// The clock, if any.
        clock: Option<ClockSpec>,
        /// `open`, `playing`, `over` or `cancelled`.
        status: String,
        /// The result, once over.
        result: Option<GameResult>,
        /// Every move from the start, passes written out.
        moves: Vec<crate::square::Move>,
    },
}

impl fmt::Display for Event {
    /// The line without its line feed.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Event::Start {
                game,
                variant,
                black,
                white,
                clock,
            } => {
                write!(f, "START {game} {variant} {black} {white} ")?;
                match clock {
                    Some(clock) => write!(f, "{clock}"),
                    None => f.write_str("-"),
                }
            }
            Event::Board {
                game,
                cells,
                to_move,
            } => {
                let side = to_move.map_or('-', Color::letter);
                write!(f, "BOARD {game} {cells} {side}")
            }
            Event::Turn { game, side, moves } => {
                write!(f, "TURN {game} {side} ")?;
                if moves.is_empty() {
                    return f.write_str("pass");
                }
                for (i, square) in moves.iter().enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    write!(f, "{square}")?;
                }
                Ok(())
            }
            Event::Moved {
                game,
                side,
                played,
                black,
                white,
                clocks,
            } => {
                write!(f, "MOVED {game} {side} {played} {black} {white}")?;
                match clocks {
                    Some((b, w)) => write!(f, " {b} {w}"),
                    None => Ok(()),
                }
            }
            Event::Over {
                game,
                winner,
                black,
                white,
                reason,
            } => {
                let winner = winner.map_or("draw".to_string(), |c| c.letter().to_string());
                write!(f, "OVER {game} {winner} {black} {white} {}", reason.word())
            }
            Event::Chat { game, name, text } => write!(f, "CHAT {game} {name} {text}"),
            Event::Game {
                game,
                variant,
                black,
                white,
                status,
                ply,
            } => {
                let seat = |s: &Option<String>| s.clone().unwrap_or_else(|| "-".to_string());
                write!(
                    f,
                    "GAME {game} {variant} {} {} {status} {ply}",
                    seat(black),
                    seat(white)
                )
            }
            Event::Player { name, status } => write!(f, "PLAYER {name} {status}"),
            Event::Info(text) => write!(f, "INFO {text}"),
            Event::History {
                game,
                variant,
                black,
                white,
                clock,
                status,
                result,
                moves,
            } => {
                let dash = |s: Option<String>| s.unwrap_or_else(|| "-".to_string());
                let transcript = crate::notation::transcript_string(moves);
                write!(
                    f,
                    "HISTORY {game} {variant} {} {} {} {status} {} {}",
                    dash(black.clone()),
                    dash(white.clone()),
                    dash(clock.map(|c| c.to_string())),
                    dash(result.map(|r| r.to_string())),
                    if transcript.is_empty() {
                        "-"
                    } else {
                        &transcript
                    },
                )
            }
        }
    }
}

/// Any line a server sends, as a client reads it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ServerLine {
    /// The greeting, with the protocol version.
    Hello(u32),
    /// `OK [text]`.
    Ok(String),
    /// `ERR <code> <message>`.
    Err(ProtocolError),
    /// An event or data line.
    Event(Event),
    /// A line this version does not know (newer servers may add events).
    Unknown(String),
}

impl ServerLine {
    /// Reads a server line; a line of an unknown shape is [`ServerLine::Unknown`],
    /// never an error, so that clients keep working when events are added.
    pub fn parse(line: &str) -> ServerLine {
        parse_server_line(line.trim_end_matches(['\r', '\n']))
            .unwrap_or_else(|| ServerLine::Unknown(line.to_string()))
    }
}

fn parse_server_line(line: &str) -> Option<ServerLine> {
    let (keyword, rest) = line.split_once(' ').unwrap_or((line, ""));
    let f: Vec<&str> = rest.split(' ').collect();
    let game = || f.first()?.parse::<GameId>().ok();
    Some(match keyword {
        "HELLO" => ServerLine::Hello(rest.strip_prefix("flipline ")?.parse().ok()?),
        "OK" => ServerLine::Ok(rest.to_string()),
        "ERR" => {
            let (code, message) = rest.split_once(' ').unwrap_or((rest, ""));
            let code = ErrorCode::from_number(code.parse().ok()?)?;
            ServerLine::Err(ProtocolError::new(code, message))
        }
        "INFO" => ServerLine::Event(Event::Info(rest.to_string())),
        "CHAT" => {
            let mut parts = rest.splitn(3, ' ');
            let (game, name) = (parts.next()?.parse().ok()?, parts.next()?.to_string());
            let text = parts.next().unwrap_or("").to_string();
            ServerLine::Event(Event::Chat { game, name, text })
        }
        "START" if f.len() == 5 => ServerLine::Event(Event::Start {
            game: game()?,
            variant: f.get(1)?.parse().ok()?,
            black: f.get(2)?.to_string(),
            white: f.get(3)?.to_string(),
            clock: optional(f.get(4)?, |c| ClockSpec::parse(c).ok())?,
        }),
        "BOARD" if f.len() == 3 => ServerLine::Event(Event::Board {
            game: game()?,
            cells: f.get(1)?.to_string(),
            to_move: optional(f.get(2)?, Color::from_letter)?,
        }),
        "TURN" if f.len() == 3 => ServerLine::Event(Event::Turn {
            game: game()?,
            side: Color::from_letter(f.get(1)?)?,
            moves: parse_move_list(f.get(2)?)?,
        }),
        "MOVED" if f.len() == 5 || f.len() == 7 => ServerLine::Event(parse_moved(&f)?),
        "HISTORY" if f.len() == 8 => ServerLine::Event(parse_history(&f)?),
        "OVER" if f.len() == 5 => ServerLine::Event(Event::Over {
            game: game()?,
            winner: optional_word(f.get(1)?, "draw", Color::from_letter)?,
            black: f.get(2)?.parse().ok()?,
            white: f.get(3)?.parse().ok()?,
            reason: EndReason::from_word(f.get(4)?)?,
        }),
        "GAME" if f.len() == 6 => ServerLine::Event(Event::Game {
            game: game()?,
            variant: f.get(1)?.parse().ok()?,
            black: optional(f.get(2)?, |s| Some(s.to_string()))?,
            white: optional(f.get(3)?, |s| Some(s.to_string()))?,
            status: f.get(4)?.to_string(),
            ply: f.get(5)?.parse().ok()?,
        }),
        "PLAYER" => {
            let (name, status) = rest.split_once(' ')?;
            ServerLine::Event(Event::Player {
                name: name.to_string(),
                status: status.to_string(),
            })
        }
        _ => return None,
    })
}

fn parse_moved(f: &[&str]) -> Option<Event> {
    let clocks = match (f.get(5), f.get(6)) {
        (Some(b), Some(w)) => Some((b.parse().ok()?, w.parse().ok()?)),
        _ => None,
    };
    Some(Event::Moved {
        game: f.first()?.parse().ok()?,
        side: Color::from_letter(f.get(1)?)?,
        played: f.get(2)?.parse().ok()?,
        black: f.get(3)?.parse().ok()?,
        white: f.get(4)?.parse().ok()?,
        clocks,
    })
}

fn parse_history(f: &[&str]) -> Option<Event> {
    let name = |s: &str| Some(s.to_string());
    let moves = match *f.get(7)? {
        "-" => Vec::new(),
        text => crate::notation::parse_transcript(text).ok()?,
    };
    Some(Event::History {
        game: f.first()?.parse().ok()?,
        variant: f.get(1)?.parse().ok()?,
        black: optional(f.get(2)?, name)?,
        white: optional(f.get(3)?, name)?,
        clock: optional(f.get(4)?, |c| ClockSpec::parse(c).ok())?,
        status: f.get(5)?.to_string(),
        result: optional(f.get(6)?, GameResult::parse)?,
        moves,
    })
}

/// `-` for none, else the parsed value; `None` when the value does not parse.
fn optional<T>(field: &str, parse: impl Fn(&str) -> Option<T>) -> Option<Option<T>> {
    optional_word(field, "-", parse)
}

fn optional_word<T>(
    field: &str,
    none: &str,
    parse: impl Fn(&str) -> Option<T>,
) -> Option<Option<T>> {
    if field == none {
        Some(None)
    } else {
        parse(field).map(Some)
    }
}

fn parse_move_list(field: &str) -> Option<Vec<Square>> {
    if field == "pass" {
        return Some(Vec::new());
    }
    field.split(',').map(|s| s.parse().ok()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

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
            Command::Seek {
                variant: Variant::Othello,
                clock: None
            }
        );
        assert_eq!(Command::parse("history 12").unwrap(), Command::History(12));
        assert!(!Command::History(12).needs_login());
        assert_eq!(
            Command::parse("LOGIN ann pass word").unwrap_err().message,
            "unexpected 'word'"
        );
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

    #[test]
    fn results_round_trip_as_one_token() {
        let result = GameResult {
            winner: None,
            black: 32,
            white: 32,
            reason: EndReason::Normal,
        };
        assert_eq!(result.to_string(), "draw:32-32:normal");
        assert_eq!(GameResult::parse("draw:32-32:normal"), Some(result));
        let won = GameResult::parse("X:40-24:time").unwrap();
        assert_eq!(won.winner, Some(Color::Black));
        assert_eq!(won.to_string(), "X:40-24:time");
        for bad in [
            "",
            "X",
            "X:40-24",
            "X:40:normal",
            "Y:1-2:normal",
            "X:1-2:nap",
            "X:1-2:normal:",
        ] {
            assert_eq!(GameResult::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn clocks_round_trip() {
        for text in ["5+3", "0.5+0", "0.05+1", "90+30"] {
            let clock = ClockSpec::parse(text).unwrap();
            assert_eq!(clock.to_string(), text);
        }
        for bad in ["", "5", "+3", "0+0", "-1+3", "5+-3", "1.2345+0", "99999+0"] {
            assert!(ClockSpec::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn events_round_trip_through_the_client_parser() {
        let events = [
            Event::Start {
                game: 7,
                variant: Variant::Othello,
                black: "ann".into(),
                white: "bot:3".into(),
                clock: Some(ClockSpec {
                    base_ms: 300_000,
                    increment_ms: 3000,
                }),
            },
            Event::Board {
                game: 7,
                cells: "-".repeat(64),
                to_move: None,
            },
            Event::Turn {
                game: 7,
                side: Color::White,
                moves: vec![],
            },
            Event::Moved {
                game: 7,
                side: Color::Black,
                played: Played::Pass,
                black: 3,
                white: 60,
                clocks: Some((1200, 55)),
            },
            Event::Over {
                game: 7,
                winner: None,
                black: 32,
                white: 32,
                reason: EndReason::Time,
            },
            Event::Chat {
                game: 7,
                name: "ann".into(),
                text: "good game".into(),
            },
            Event::Game {
                game: 7,
                variant: Variant::TicTacToe,
                black: Some("ann".into()),
                white: None,
                status: "open".into(),
                ply: 0,
            },
            Event::Player {
                name: "ann".into(),
                status: "playing 7".into(),
            },
            Event::Info("shutting down".into()),
            Event::History {
                game: 7,
                variant: Variant::Othello,
                black: Some("ann".into()),
                white: Some("bot:3".into()),
                clock: None,
                status: "over".into(),
                result: Some(GameResult {
                    winner: Some(Color::White),
                    black: 20,
                    white: 44,
                    reason: EndReason::Resign,
                }),
                moves: crate::notation::parse_transcript("f5d6c3passd3").unwrap(),
            },
            Event::History {
                game: 8,
                variant: Variant::TicTacToe,
                black: Some("ann".into()),
                white: None,
                clock: Some(ClockSpec {
                    base_ms: 60_000,
                    increment_ms: 0,
                }),
                status: "open".into(),
                result: None,
                moves: Vec::new(),
            },
        ];
        for event in events {
            let line = event.to_string();
            assert_eq!(ServerLine::parse(&line), ServerLine::Event(event), "{line}");
        }
        assert_eq!(ServerLine::parse(GREETING), ServerLine::Hello(1));
        assert!(matches!(
            ServerLine::parse("TURN 7 X d3"),
            ServerLine::Event(Event::Turn { .. })
        ));
        assert!(matches!(
            ServerLine::parse("NEWS flash"),
            ServerLine::Unknown(_)
        ));
    }
}
