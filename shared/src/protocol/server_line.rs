//! Server lines as clients and bots read them: `ServerLine::parse` never
//! fails, so that a client keeps working when a newer server adds events; a
//! line it does not know is `ServerLine::Unknown`. Fields a newer server
//! appends after those a line is known to have are passed over, and an older
//! server's `PLAYER` lines, without a rating, read too.

use super::GameId;
use super::clock::ClockSpec;
use super::decline::DeclineReason;
use super::error::{ErrorCode, ProtocolError};
use super::event::{Event, RatingLine};
use super::result::{EndReason, GameResult, optional_word};
use super::status::{GameStatus, PlayerStatus};
use super::summary::GameSummary;
use super::tourney::{parse_standing, parse_tourney_line};
use super::words::SeatChoice;
use crate::square::Square;
use crate::variant::Color;

/// The keywords the lines that are not events start with: the greeting and
/// the final replies (the events' are [`Event::KEYWORDS`]).
pub const REPLY_KEYWORDS: [&str; 3] = ["HELLO", "OK", "ERR"];

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
        "START" if f.len() >= 5 => ServerLine::Event(Event::Start {
            game: game()?,
            variant: f.get(1)?.parse().ok()?,
            black: f.get(2)?.to_string(),
            white: f.get(3)?.to_string(),
            clock: optional(f.get(4)?, |c| ClockSpec::parse(c).ok())?,
        }),
        "BOARD" if f.len() >= 3 => ServerLine::Event(Event::Board {
            game: game()?,
            cells: f.get(1)?.to_string(),
            to_move: optional(f.get(2)?, Color::from_letter)?,
        }),
        "TURN" if f.len() >= 3 => ServerLine::Event(Event::Turn {
            game: game()?,
            side: Color::from_letter(f.get(1)?)?,
            moves: parse_move_list(f.get(2)?)?,
        }),
        "MOVED" if f.len() >= 5 => ServerLine::Event(parse_moved(&f)?),
        "HISTORY" if f.len() >= 8 => ServerLine::Event(parse_history(&f)?),
        "OVER" if f.len() >= 5 => ServerLine::Event(Event::Over {
            game: game()?,
            winner: optional_word(f.get(1)?, "draw", Color::from_letter)?,
            black: f.get(2)?.parse().ok()?,
            white: f.get(3)?.parse().ok()?,
            reason: EndReason::from_word(f.get(4)?)?,
        }),
        "GAME" if f.len() >= 6 => ServerLine::Event(Event::Game {
            game: game()?,
            variant: f.get(1)?.parse().ok()?,
            black: optional(f.get(2)?, |s| Some(s.to_string()))?,
            white: optional(f.get(3)?, |s| Some(s.to_string()))?,
            status: GameStatus::parse(f.get(4)?)?,
            ply: f.get(5)?.parse().ok()?,
        }),
        "UNDO" if f.len() >= 2 => ServerLine::Event(Event::UndoAsked {
            game: game()?,
            name: f.get(1)?.to_string(),
        }),
        "UNDONE" if f.len() >= 3 => ServerLine::Event(Event::Undone {
            game: game()?,
            plies: f.get(1)?.parse().ok()?,
            taken: f.get(2)?.parse().ok()?,
        }),
        "CLOCK" if f.len() >= 4 => ServerLine::Event(Event::Clock {
            game: game()?,
            black_ms: f.get(1)?.parse().ok()?,
            white_ms: f.get(2)?.parse().ok()?,
            running: optional(f.get(3)?, Color::from_letter)?,
        }),
        "PLAYER" => ServerLine::Event(parse_player(rest)?),
        "CHALLENGE" if f.len() >= 6 => ServerLine::Event(Event::Challenged {
            id: game()?,
            from: f.get(1)?.to_string(),
            variant: f.get(2)?.parse().ok()?,
            side: SeatChoice::from_word(f.get(3)?)?,
            clock: optional(f.get(4)?, |c| ClockSpec::parse(c).ok())?,
            rated: optional_word(f.get(5)?, "casual", |w| (w == "rated").then_some(()))?.is_some(),
        }),
        "DECLINED" if f.len() >= 3 => ServerLine::Event(Event::Declined {
            id: game()?,
            name: f.get(1)?.to_string(),
            reason: DeclineReason::from_word(f.get(2)?)?,
        }),
        "RATED" if f.len() >= 4 => ServerLine::Event(Event::Rated {
            game: game()?,
            name: f.get(1)?.to_string(),
            before: f.get(2)?.parse().ok()?,
            after: f.get(3)?.parse().ok()?,
        }),
        "RATING" if f.len() >= 6 => ServerLine::Event(Event::Rating(RatingLine {
            name: f.first()?.to_string(),
            variant: f.get(1)?.parse().ok()?,
            rating: f.get(2)?.parse().ok()?,
            rd: f.get(3)?.parse().ok()?,
            games: f.get(4)?.parse().ok()?,
            provisional: match *f.get(5)? {
                "provisional" => true,
                "established" => false,
                _ => return None,
            },
            bot: f.get(6) == Some(&"bot"),
        })),
        "TOURNEY" => ServerLine::Event(match parse_tourney_line(&f)? {
            Ok(line) => Event::Tourney(line),
            Err((id, news)) => Event::TourneyNews { id, news },
        }),
        "STANDING" => ServerLine::Event(Event::Standing(parse_standing(&f)?)),
        _ => return None,
    })
}

/// `PLAYER <name> <status> [<rating|-> [bot]]`: the status is one word or
/// two (`playing 7`), and a server before ratings sends neither field after
/// it, so the fields are taken from the end while what is left reads as a
/// status.
fn parse_player(rest: &str) -> Option<Event> {
    let (name, tail) = rest.split_once(' ')?;
    let mut words: Vec<&str> = tail.split(' ').collect();
    let bot = words.len() > 1 && words.last() == Some(&"bot");
    if bot {
        words.pop();
    }
    let player = |status: PlayerStatus, rating: Option<i32>| Event::Player {
        name: name.to_string(),
        status,
        rating,
        bot,
    };
    if let Some((&last, before)) = words.split_last()
        && let Some(status) = PlayerStatus::parse(&before.join(" "))
    {
        let rating = optional(last, |r| r.parse::<i32>().ok())?;
        return Some(player(status, rating));
    }
    PlayerStatus::parse(&words.join(" ")).map(|status| player(status, None))
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
    Some(Event::History(GameSummary {
        game: f.first()?.parse().ok()?,
        variant: f.get(1)?.parse().ok()?,
        black: optional(f.get(2)?, name)?,
        white: optional(f.get(3)?, name)?,
        clock: optional(f.get(4)?, |c| ClockSpec::parse(c).ok())?,
        status: GameStatus::parse(f.get(5)?)?,
        result: optional(f.get(6)?, GameResult::parse)?,
        moves,
    }))
}

/// `-` for none, else the parsed value; `None` when the value does not parse.
fn optional<T>(field: &str, parse: impl Fn(&str) -> Option<T>) -> Option<Option<T>> {
    optional_word(field, "-", parse)
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
    use crate::protocol::{
        GREETING, Played, StandingLine, TourneyKind, TourneyLine, TourneyNews, TourneyStage,
    };
    use crate::variant::Variant;

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
                status: GameStatus::Open,
                ply: 0,
            },
            Event::Player {
                name: "ann".into(),
                status: PlayerStatus::Playing(7),
                rating: Some(1623),
                bot: true,
            },
            Event::Player {
                name: "42".into(),
                status: PlayerStatus::Idle,
                rating: None,
                bot: false,
            },
            Event::Player {
                name: "idle".into(),
                status: PlayerStatus::Seeking,
                rating: Some(-3),
                bot: false,
            },
            Event::Challenged {
                id: 3,
                from: "ann".into(),
                variant: Variant::Reversi,
                side: SeatChoice::Random,
                clock: None,
                rated: true,
            },
            Event::Challenged {
                id: 4,
                from: "bob".into(),
                variant: Variant::Othello,
                side: SeatChoice::White,
                clock: Some(ClockSpec {
                    base_ms: 60_000,
                    increment_ms: 0,
                }),
                rated: false,
            },
            Event::Declined {
                id: 3,
                name: "bob".into(),
                reason: DeclineReason::Timeout,
            },
            Event::Rated {
                game: 7,
                name: "ann".into(),
                before: 1500,
                after: 1662,
            },
            Event::Rating(RatingLine {
                name: "ann".into(),
                variant: Variant::Othello,
                rating: 1662,
                rd: 290,
                games: 1,
                provisional: true,
                bot: false,
            }),
            Event::Rating(RatingLine {
                name: "zebra".into(),
                variant: Variant::Anti,
                rating: 1400,
                rd: 60,
                games: 300,
                provisional: false,
                bot: true,
            }),
            Event::Info("shutting down".into()),
            Event::Tourney(TourneyLine {
                id: 2,
                kind: TourneyKind::Swiss,
                variant: Variant::Anti,
                clock: Some(ClockSpec {
                    base_ms: 60_000,
                    increment_ms: 1000,
                }),
                stage: TourneyStage::Running,
                players: 6,
                round: 2,
                rounds: 3,
            }),
            Event::Tourney(TourneyLine {
                id: 3,
                kind: TourneyKind::RoundRobin,
                variant: Variant::Othello,
                clock: None,
                stage: TourneyStage::Open,
                players: 0,
                round: 0,
                rounds: 0,
            }),
            Event::TourneyNews {
                id: 2,
                news: TourneyNews::Round(3),
            },
            Event::TourneyNews {
                id: 2,
                news: TourneyNews::Over(Some("ann".into())),
            },
            Event::TourneyNews {
                id: 2,
                news: TourneyNews::Over(None),
            },
            Event::Standing(StandingLine {
                id: 2,
                rank: 1,
                name: "ann".into(),
                half_points: 5,
                games: 3,
                disc_difference: -12,
            }),
            Event::UndoAsked {
                game: 7,
                name: "ann".into(),
            },
            Event::Undone {
                game: 7,
                plies: 12,
                taken: 2,
            },
            Event::Clock {
                game: 7,
                black_ms: 59_000,
                white_ms: 0,
                running: Some(Color::White),
            },
            Event::Clock {
                game: 7,
                black_ms: 1,
                white_ms: 2,
                running: None,
            },
            Event::History(GameSummary {
                game: 7,
                variant: Variant::Othello,
                black: Some("ann".into()),
                white: Some("bot:3".into()),
                clock: None,
                status: GameStatus::Over,
                result: Some(GameResult {
                    winner: Some(Color::White),
                    black: 20,
                    white: 44,
                    reason: EndReason::Resign,
                }),
                moves: crate::notation::parse_transcript("f5d6c3passd3").unwrap(),
            }),
            Event::History(GameSummary {
                game: 8,
                variant: Variant::TicTacToe,
                black: Some("ann".into()),
                white: None,
                clock: Some(ClockSpec {
                    base_ms: 60_000,
                    increment_ms: 0,
                }),
                status: GameStatus::Open,
                result: None,
                moves: Vec::new(),
            }),
        ];
        let printed: std::collections::BTreeSet<_> = events.iter().map(Event::keyword).collect();
        assert_eq!(printed, Event::KEYWORDS.into_iter().collect());
        for event in events {
            let line = event.to_string();
            assert_eq!(line.split(' ').next(), Some(event.keyword()), "{line}");
            assert_eq!(ServerLine::parse(&line), ServerLine::Event(event), "{line}");
        }
        assert_eq!(ServerLine::parse(GREETING), ServerLine::Hello(1));
        for (keyword, line) in REPLY_KEYWORDS
            .into_iter()
            .zip([GREETING, "OK", "ERR 400 x"])
        {
            assert!(line.starts_with(keyword), "{line}");
            assert!(
                !matches!(ServerLine::parse(line), ServerLine::Unknown(_)),
                "{line}"
            );
        }
        assert!(matches!(
            ServerLine::parse("TURN 7 X d3"),
            ServerLine::Event(Event::Turn { .. })
        ));
        // A server before ratings: PLAYER without them still reads.
        let old = Event::Player {
            name: "ann".into(),
            status: PlayerStatus::Playing(7),
            rating: None,
            bot: false,
        };
        assert_eq!(
            ServerLine::parse("PLAYER ann playing 7"),
            ServerLine::Event(old)
        );
        // A newer server's fields appended at the end are ignored.
        for line in [
            "START 7 othello ann bob - later",
            "MOVED 7 X d3 4 1 100 200 later",
            "OVER 7 X 40 24 normal later",
            "CLOCK 7 1 2 X later",
        ] {
            assert!(
                matches!(ServerLine::parse(line), ServerLine::Event(_)),
                "{line}"
            );
        }
        // A status this version does not know makes the line unknown, as an
        // unknown variant does.
        for line in [
            "NEWS flash",
            "PLAYER ann watching 7",
            "GAME 7 othello ann - paused 3",
            "HISTORY 7 othello ann - - lost - -",
        ] {
            assert!(
                matches!(ServerLine::parse(line), ServerLine::Unknown(_)),
                "{line}"
            );
        }
    }
}
