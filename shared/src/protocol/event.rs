//! The lines the server sends besides final replies: events (`START`,
//! `MOVED`, `OVER`, ...) and the data lines of `LIST`, `WHO` and `HISTORY`.
//! The daemon prints them with `Event`'s `Display` (a few fixed `INFO` lines
//! aside); server_line.rs reads them back.

use std::fmt;

use super::GameId;
use super::clock::ClockSpec;
use super::decline::DeclineReason;
use super::result::EndReason;
use super::status::{GameStatus, PlayerStatus};
use super::summary::GameSummary;
use super::tourney::{StandingLine, TourneyId, TourneyLine, TourneyNews};
use super::words::SeatChoice;
use crate::square::Square;
use crate::variant::{Color, Variant};

/// A square played, or a pass, as `MOVED` carries it.
pub type Played = crate::square::Move;

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
        status: GameStatus,
        /// Plies played.
        ply: u32,
    },
    /// `PLAYER <name> <status> <rating|-> [bot]` (a `WHO` line).
    Player {
        /// The name.
        name: String,
        /// `idle`, `seeking` or `playing <game>`.
        status: PlayerStatus,
        /// The othello rating, rounded (a registered name's, once rated).
        rating: Option<i32>,
        /// Whether the name is marked a program's (`ACCOUNT bot`).
        bot: bool,
    },
    /// `CHALLENGE <challenge> <from> <variant> <X|O|random> <clock|-> <rated|casual>`:
    /// `from` asks you for a game, playing that side.
    Challenged {
        /// The challenge's number.
        id: u64,
        /// Who asks.
        from: String,
        /// The game.
        variant: Variant,
        /// The challenger's side.
        side: SeatChoice,
        /// The clock, if any.
        clock: Option<ClockSpec>,
        /// Whether it is rated.
        rated: bool,
    },
    /// `DECLINED <challenge> <name> <reason>`: the challenge will not be a
    /// game (`name` is the other party).
    Declined {
        /// The challenge's number.
        id: u64,
        /// The other party.
        name: String,
        /// Why.
        reason: DeclineReason,
    },
    /// `RATED <game> <name> <before> <after>`: a rated game's effect on a
    /// player's rating, rounded, after its `OVER`.
    Rated {
        /// The game.
        game: GameId,
        /// The player.
        name: String,
        /// The rating before it.
        before: i32,
        /// The rating after it.
        after: i32,
    },
    /// `RATING <name> <variant> <rating> <rd> <games> <provisional|established> [bot]`
    /// (a `RATING` or `TOP` line).
    Rating(RatingLine),
    /// `UNDO <game> <name>`: `name` asks to take back their last move; the
    /// other player's `UNDO` agrees, a move declines.
    UndoAsked {
        /// The game.
        game: GameId,
        /// Who asks.
        name: String,
    },
    /// `UNDONE <game> <plies> <taken>`: `taken` plies were taken back; the
    /// game goes on after its first `plies` (`BOARD` and `TURN` follow).
    Undone {
        /// The game.
        game: GameId,
        /// Plies kept.
        plies: u32,
        /// Plies taken back.
        taken: u32,
    },
    /// `CLOCK <game> <black-ms> <white-ms> <X|O|->`: the time left on each
    /// clock and whose runs (in every snapshot, after `BOARD`, and when the
    /// clocks start).
    Clock {
        /// The game.
        game: GameId,
        /// Black's milliseconds left.
        black_ms: u64,
        /// White's milliseconds left.
        white_ms: u64,
        /// The side whose clock runs, `None` when both stand.
        running: Option<Color>,
    },
    /// `TOURNEY <t> <kind> <variant> <clock|-> <open|running|over> <players>
    /// <round>/<rounds>` (a `TOURNEY LIST` line).
    Tourney(TourneyLine),
    /// `TOURNEY <t> round <n>` or `TOURNEY <t> over <winner|draw>`, to a
    /// tournament's players.
    TourneyNews {
        /// The tournament.
        id: TourneyId,
        /// What happened.
        news: TourneyNews,
    },
    /// `STANDING <t> <rank> <name> <points> <games> <disc-diff>` (a `TOURNEY
    /// SHOW` line).
    Standing(StandingLine),
    /// `INFO <text>`.
    Info(String),
    /// `HISTORY <game> <variant> <black|-> <white|-> <clock|-> <status> <result|-> <moves|->`
    /// (the data line of `HISTORY`).
    History(GameSummary),
}

impl Event {
    /// The keywords event and data lines start with, one per kind of event.
    pub const KEYWORDS: [&'static str; 19] = [
        "START",
        "BOARD",
        "TURN",
        "MOVED",
        "OVER",
        "CHAT",
        "GAME",
        "PLAYER",
        "INFO",
        "HISTORY",
        "UNDO",
        "UNDONE",
        "CLOCK",
        "CHALLENGE",
        "DECLINED",
        "RATED",
        "RATING",
        "TOURNEY",
        "STANDING",
    ];

    /// The keyword this event's line starts with: one of [`Event::KEYWORDS`],
    /// which `Display` writes, so that the list is what is printed.
    pub fn keyword(&self) -> &'static str {
        // Destructured rather than indexed: the list and the match cannot
        // disagree on the number of kinds.
        let [
            start,
            board,
            turn,
            moved,
            over,
            chat,
            game,
            player,
            info,
            history,
            undo,
            undone,
            clock,
            challenged,
            declined,
            rated,
            rating,
            tourney,
            standing,
        ] = Event::KEYWORDS;
        match self {
            Event::Start { .. } => start,
            Event::Board { .. } => board,
            Event::Turn { .. } => turn,
            Event::Moved { .. } => moved,
            Event::Over { .. } => over,
            Event::Chat { .. } => chat,
            Event::Game { .. } => game,
            Event::Player { .. } => player,
            Event::Info(_) => info,
            Event::History(_) => history,
            Event::UndoAsked { .. } => undo,
            Event::Undone { .. } => undone,
            Event::Clock { .. } => clock,
            Event::Challenged { .. } => challenged,
            Event::Declined { .. } => declined,
            Event::Rated { .. } => rated,
            Event::Rating(_) => rating,
            Event::Tourney(_) | Event::TourneyNews { .. } => tourney,
            Event::Standing(_) => standing,
        }
    }
}

impl fmt::Display for Event {
    /// The line without its line feed.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ", self.keyword())?;
        match self {
            Event::Start {
                game,
                variant,
                black,
                white,
                clock,
            } => {
                write!(f, "{game} {variant} {black} {white} ")?;
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
                write!(f, "{game} {cells} {side}")
            }
            Event::Turn { game, side, moves } => {
                write!(f, "{game} {side} ")?;
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
                write!(f, "{game} {side} {played} {black} {white}")?;
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
                write!(f, "{game} {winner} {black} {white} {}", reason.word())
            }
            Event::Chat { game, name, text } => write!(f, "{game} {name} {text}"),
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
                    "{game} {variant} {} {} {status} {ply}",
                    seat(black),
                    seat(white)
                )
            }
            Event::Player {
                name,
                status,
                rating,
                bot,
            } => {
                write!(f, "{name} {status} ")?;
                match rating {
                    Some(rating) => write!(f, "{rating}")?,
                    None => f.write_str("-")?,
                }
                if *bot { f.write_str(" bot") } else { Ok(()) }
            }
            Event::Challenged {
                id,
                from,
                variant,
                side,
                clock,
                rated,
            } => {
                let side = side.word();
                let clock = clock.map_or_else(|| "-".to_string(), |c| c.to_string());
                let rated = if *rated { "rated" } else { "casual" };
                write!(f, "{id} {from} {variant} {side} {clock} {rated}")
            }
            Event::Declined { id, name, reason } => write!(f, "{id} {name} {reason}"),
            Event::Rated {
                game,
                name,
                before,
                after,
            } => write!(f, "{game} {name} {before} {after}"),
            Event::Rating(line) => write!(f, "{line}"),
            Event::Tourney(line) => write!(f, "{line}"),
            Event::TourneyNews { id, news } => match news {
                TourneyNews::Round(round) => write!(f, "{id} round {round}"),
                TourneyNews::Over(Some(winner)) => write!(f, "{id} over {winner}"),
                TourneyNews::Over(None) => write!(f, "{id} over draw"),
            },
            Event::Standing(line) => write!(f, "{line}"),
            Event::Info(text) => f.write_str(text),
            Event::UndoAsked { game, name } => write!(f, "{game} {name}"),
            Event::Undone { game, plies, taken } => write!(f, "{game} {plies} {taken}"),
            Event::Clock {
                game,
                black_ms,
                white_ms,
                running,
            } => {
                let running = running.map_or('-', Color::letter);
                write!(f, "{game} {black_ms} {white_ms} {running}")
            }
            Event::History(GameSummary {
                game,
                variant,
                black,
                white,
                clock,
                status,
                result,
                moves,
            }) => {
                let dash = |s: Option<String>| s.unwrap_or_else(|| "-".to_string());
                let transcript = crate::notation::transcript_string(moves);
                write!(
                    f,
                    "{game} {variant} {} {} {} {status} {} {}",
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

/// One player's rating in one game, as `RATING` and `TOP` give it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RatingLine {
    /// The player.
    pub name: String,
    /// The game.
    pub variant: Variant,
    /// The rating, rounded.
    pub rating: i32,
    /// Its deviation, rounded.
    pub rd: i32,
    /// Rated games played.
    pub games: u32,
    /// Whether the deviation is still above 110.
    pub provisional: bool,
    /// Whether the name is marked a program's.
    pub bot: bool,
}

impl RatingLine {
    /// `provisional` or `established`, as the line writes it.
    pub fn standing(&self) -> &'static str {
        if self.provisional {
            "provisional"
        } else {
            "established"
        }
    }
}

impl fmt::Display for RatingLine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let standing = self.standing();
        write!(
            f,
            "{} {} {} {} {} {standing}",
            self.name, self.variant, self.rating, self.rd, self.games
        )?;
        if self.bot {
            f.write_str(" bot")
        } else {
            Ok(())
        }
    }
}
