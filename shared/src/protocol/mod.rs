//! Protocol v1: commands parsed from client lines, events and replies printed for
//! them, and the same events and replies parsed back for clients and bots.
//!
//! Pure text in, values out: the daemon and the client both use this module, so the
//! two sides cannot disagree on the format. Keywords are case-insensitive on input;
//! the server writes keywords in upper case and squares in lower case.
//!
//! # Layout
//! The files are private; everything public is re-exported here, so
//! `flipline::protocol::Command` and the like are the paths to use.
//! - command.rs: [`Command`] and its arguments, [`Command::parse`],
//!   [`CommandKind`] (a command without its arguments).
//! - name.rs: [`check_name`], [`valid_name`]: which names may log in (none
//!   that reads as an open seat, a keyword or a bot).
//! - reply.rs: [`Reply`], the final `OK` replies, printed and parsed
//!   ([`Reply::parse`] knowing the command answered), and [`ReplyError`].
//! - event.rs: [`Event`], the lines besides final replies, and their `Display`.
//! - server_line.rs: [`ServerLine`], any server line as a client reads it.
//! - error.rs: [`ErrorCode`] and [`ProtocolError`], the `ERR` side.
//! - clock.rs: [`ClockSpec`], the `M+S` clock.
//! - result.rs: [`EndReason`] and [`GameResult`], how a game ended.
//! - reason.rs: [`Reason`], the stable word an `ERR` or `INFO` line ends in
//!   where a program acts on it.
//! - status.rs: [`GameStatus`] and [`PlayerStatus`], the status words of
//!   `LIST`, `HISTORY` and `WHO` lines.
//! - summary.rs: [`GameSummary`], one game's record, as `HISTORY` carries it.
//! - tourney.rs: [`TourneyCommand`] and the `TOURNEY` and `STANDING` lines.
//! - words.rs: [`SeatChoice`] and the argument words several commands share.
//! - this file: [`GREETING`], [`GameId`], [`COMMAND_HELP`].

mod challenge;
mod clock;
mod command;
mod command_kind;
mod credential;
mod decline;
mod error;
mod event;
mod list_query;
mod name;
mod reason;
mod reply;
mod result;
mod server_line;
mod status;
mod summary;
mod tourney;
mod words;

pub use challenge::{
    AccountMark, ChallengeSpec, MAX_TOP, RatingRange, SeekSpec, StartSpec, parse_start,
};
pub use clock::ClockSpec;
pub use command::{Command, DEFAULT_BOT_LEVEL, NewGame, Opponent};
pub use command_kind::CommandKind;
pub use credential::{Credential, MAX_SECRET_LEN, SECRET_KEYWORD, valid_secret};
pub use decline::DeclineReason;
pub use error::{ErrorCode, ProtocolError, is_unsafe_in_a_line, one_line};
pub use event::{Event, Played, RatingLine};
pub use list_query::{ListQuery, WhoQuery};
pub use name::{BOT_NAME_PREFIX, MAX_NAME_LEN, NameError, check_name, is_line_keyword, valid_name};
pub use reason::Reason;
pub use reply::{LoginOk, REGISTERED_WORD, Reply, ReplyError, SEAT_WORD};
pub use result::{EndReason, GameResult};
pub use server_line::{REPLY_KEYWORDS, ServerLine};
pub use status::{GameStatus, PlayerStatus};
pub use summary::GameSummary;
pub use tourney::{
    MAX_SWISS_ROUNDS, Points, StandingLine, TourneyCommand, TourneyId, TourneyKind, TourneyLine,
    TourneyNews, TourneySpec, TourneyStage,
};
pub use words::{MAX_RANDOM_START, SeatChoice};

/// The first line a server sends.
pub const GREETING: &str = "HELLO flipline 1";

/// Game ids are small numbers, unique for the daemon's life.
pub type GameId = u64;

/// One line of help per command, for `HELP` and the client.
pub const COMMAND_HELP: [(&str, &str); 28] = [
    (
        "LOGIN name [password | secret TOKEN]",
        "take a name; a password registers it, a guest's secret resumes it",
    ),
    (
        "SEEK [variant] [clock M+S] [rated] [range LOW-HIGH]",
        "pair with another seeker (rated: by rating, within the range)",
    ),
    (
        "CHALLENGE name [variant] [as X|O] [clock M+S] [rated] [from ...]",
        "ask a player online for a game, from MOVES or from random:N",
    ),
    ("ACCEPT challenge", "play the game a challenge asks for"),
    (
        "DECLINE challenge [reason]",
        "refuse it: generic later rated casual variant clock",
    ),
    ("CANCEL challenge", "withdraw a challenge you made"),
    (
        "NEW [variant] [as X|O|random] [vs bot[:N]|hotseat] [clock M+S] [from MOVES]",
        "create a game, from a position reached by MOVES (f5d6c3...)",
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
    ("LIST [open|playing|over] [from GAME]", "games, 100 a page"),
    ("WHO [from NAME]", "players online, 100 a page"),
    ("MOVE square", "play a move (d3)"),
    ("PASS", "pass, when you have no move"),
    ("END", "resign the current game"),
    (
        "UNDO",
        "take back your last move; between two people, ask or agree",
    ),
    ("BOARD", "show the board"),
    ("HINT", "ask the engine for a move"),
    ("SAY text", "chat to everyone in the game"),
    ("REMATCH", "play again, colours swapped"),
    (
        "RATING [name] [variant]",
        "a player's ratings (yours without a name)",
    ),
    (
        "TOP [variant] [count]",
        "the best rated players, 10 by default",
    ),
    (
        "ACCOUNT bot",
        "mark your registered name as a program's, for good",
    ),
    (
        "TOURNEY NEW|JOIN|LEAVE|START|LIST|SHOW ...",
        "tournaments: NEW roundrobin|swiss [rounds N] ..., SHOW t",
    ),
    ("PING", "check the connection"),
    ("HELP", "this list"),
    ("QUIT", "close the connection"),
];
