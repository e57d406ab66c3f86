//! [`CommandKind`]: a command without its arguments, its keyword. Apart from
//! the parser, so that the name rules (which refuse every keyword as a name)
//! and the parser (which checks names) do not import each other.

/// A command without its arguments: its keyword. A reply is read knowing the
/// command it answers (`OK 12` is a game after `NEW` and a count after
/// `LIST`), and a client knows that much of every line it sent, also of one it
/// could not parse itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CommandKind {
    /// `LOGIN`.
    Login,
    /// `SEEK`.
    Seek,
    /// `CHALLENGE`.
    Challenge,
    /// `ACCEPT`.
    Accept,
    /// `DECLINE`.
    Decline,
    /// `CANCEL`.
    Cancel,
    /// `NEW`.
    New,
    /// `JOIN`.
    Join,
    /// `WATCH`.
    Watch,
    /// `HISTORY`.
    History,
    /// `LEAVE`.
    Leave,
    /// `LIST`.
    List,
    /// `WHO`.
    Who,
    /// `MOVE`.
    Move,
    /// `PASS`.
    Pass,
    /// `END`.
    End,
    /// `UNDO`.
    Undo,
    /// `BOARD`.
    Board,
    /// `HINT`.
    Hint,
    /// `SAY`.
    Say,
    /// `REMATCH`.
    Rematch,
    /// `PING`.
    Ping,
    /// `HELP`.
    Help,
    /// `RATING`.
    Rating,
    /// `TOP`.
    Top,
    /// `ACCOUNT`.
    Account,
    /// `TOURNEY`.
    Tourney,
    /// `QUIT`.
    Quit,
}

impl CommandKind {
    /// Every command, in the order of [`COMMAND_HELP`](super::COMMAND_HELP).
    pub const ALL: [CommandKind; 28] = [
        CommandKind::Login,
        CommandKind::Seek,
        CommandKind::Challenge,
        CommandKind::Accept,
        CommandKind::Decline,
        CommandKind::Cancel,
        CommandKind::New,
        CommandKind::Join,
        CommandKind::Watch,
        CommandKind::History,
        CommandKind::Leave,
        CommandKind::List,
        CommandKind::Who,
        CommandKind::Move,
        CommandKind::Pass,
        CommandKind::End,
        CommandKind::Undo,
        CommandKind::Board,
        CommandKind::Hint,
        CommandKind::Say,
        CommandKind::Rematch,
        CommandKind::Rating,
        CommandKind::Top,
        CommandKind::Account,
        CommandKind::Tourney,
        CommandKind::Ping,
        CommandKind::Help,
        CommandKind::Quit,
    ];

    /// The keyword, in capitals as the protocol writes it.
    pub fn keyword(self) -> &'static str {
        match self {
            CommandKind::Login => "LOGIN",
            CommandKind::Seek => "SEEK",
            CommandKind::Challenge => "CHALLENGE",
            CommandKind::Accept => "ACCEPT",
            CommandKind::Decline => "DECLINE",
            CommandKind::Cancel => "CANCEL",
            CommandKind::New => "NEW",
            CommandKind::Join => "JOIN",
            CommandKind::Watch => "WATCH",
            CommandKind::History => "HISTORY",
            CommandKind::Leave => "LEAVE",
            CommandKind::List => "LIST",
            CommandKind::Who => "WHO",
            CommandKind::Move => "MOVE",
            CommandKind::Pass => "PASS",
            CommandKind::End => "END",
            CommandKind::Undo => "UNDO",
            CommandKind::Board => "BOARD",
            CommandKind::Hint => "HINT",
            CommandKind::Say => "SAY",
            CommandKind::Rematch => "REMATCH",
            CommandKind::Rating => "RATING",
            CommandKind::Top => "TOP",
            CommandKind::Account => "ACCOUNT",
            CommandKind::Tourney => "TOURNEY",
            CommandKind::Ping => "PING",
            CommandKind::Help => "HELP",
            CommandKind::Quit => "QUIT",
        }
    }

    /// The command a keyword names, in any case; `None` for a word that names
    /// none.
    pub fn from_keyword(word: &str) -> Option<CommandKind> {
        CommandKind::ALL
            .into_iter()
            .find(|kind| kind.keyword().eq_ignore_ascii_case(word))
    }

    /// The command a line starts with (its first word), as
    /// [`Command::parse`](super::Command::parse) would read it; `None` for an empty line or an
    /// unknown keyword.
    pub fn of_line(line: &str) -> Option<CommandKind> {
        CommandKind::from_keyword(line.split_whitespace().next()?)
    }
}
