//! The typed replies and statuses: what they print reads back as the same value,
//! a line is read only in the form they print, and no input makes their parsers
//! panic.

use flipline::protocol::{
    ClockSpec, CommandKind, EndReason, Event, GameResult, GameStatus, GameSummary, LoginOk,
    PlayerStatus, Reply, ServerLine, valid_name,
};
use flipline::{Color, Move, Square, Variant};
use proptest::collection::vec;
use proptest::prelude::*;
use proptest::sample::select;
use proptest::test_runner::TestCaseError;

/// A name `LOGIN` accepts (never a lone `-`, which lines write for an open
/// seat, nor a keyword).
fn name() -> impl Strategy<Value = String> {
    "[A-Za-z0-9_-]{1,20}".prop_filter("not a name", |n| valid_name(n))
}

fn any_move() -> impl Strategy<Value = Move> {
    prop_oneof![
        8 => (0u8..10, 0u8..10).prop_map(|(row, col)| Move::Place(Square { row, col })),
        1 => Just(Move::Pass),
    ]
}

fn kinds(kinds: &[CommandKind]) -> impl Strategy<Value = CommandKind> + use<> {
    select(kinds.to_vec())
}

/// A command and a reply it may get, as PROTOCOL.md lists them.
fn answered() -> impl Strategy<Value = (CommandKind, Reply)> {
    use CommandKind as K;
    prop_oneof![
        (
            name(),
            proptest::option::of("[0-9a-f]{32}"),
            any::<bool>(),
            proptest::option::of(any::<u64>())
        )
            .prop_map(|(name, secret, registered, seat)| {
                let login = LoginOk {
                    name,
                    secret,
                    registered,
                    seat,
                };
                (K::Login, Reply::Login(login))
            }),
        (
            kinds(&[K::Seek, K::New, K::Watch, K::Rematch]),
            any::<u64>()
        )
            .prop_map(|(k, game)| (k, Reply::Game(game))),
        Just((K::Seek, Reply::Seeking)),
        Just((K::Rematch, Reply::Waiting)),
        (any::<u64>(), select(vec![Color::Black, Color::White]))
            .prop_map(|(game, side)| (K::Join, Reply::Joined(game, side))),
        Just((K::Leave, Reply::SeekWithdrawn)),
        (kinds(&[K::List, K::Who]), any::<usize>()).prop_map(|(k, n)| (k, Reply::Count(n))),
        (any_move(), any::<i32>(), any::<bool>())
            .prop_map(|(mv, score, exact)| (K::Hint, Reply::Hint(mv, score, exact))),
        Just((K::Ping, Reply::Pong)),
        Just((K::Quit, Reply::Bye)),
        kinds(&[
            K::Leave,
            K::Move,
            K::Pass,
            K::End,
            K::Say,
            K::Board,
            K::Help,
            K::History,
        ])
        .prop_map(|k| (k, Reply::Done)),
    ]
}

/// Lines that look like replies: `OK` (or a near miss) and tokens that are
/// often the right kind, so that the parser gets past its first checks.
fn reply_line() -> impl Strategy<Value = String> {
    let head = prop_oneof![
        8 => Just("OK"),
        1 => select(vec!["ERR", "ok", "OKAY", "", "OK\t", "HELLO"]),
    ];
    let token = prop_oneof![
        3 => (0u64..40).prop_map(|n| n.to_string()),
        1 => any::<i64>().prop_map(|n| n.to_string()),
        1 => any::<u64>().prop_map(|n| format!("{n}0")),
        2 => select(vec![
            "seeking", "waiting", "seek", "withdrawn", "pong", "bye", "X", "O", "x", "-", "d3",
            "D3", "j10", "k11", "pass", "pa", "+3", "03", "-0", "ann", "bot:3", "", "409", "seat",
            "registered", "secret",
        ])
        .prop_map(String::from),
        1 => name(),
        1 => any::<String>(),
    ];
    let sep = select(vec![" ", " ", " ", "  ", "\t"]);
    let end = select(vec!["", "", "\r\n", "\n", " "]);
    (head, vec((sep, token), 0..4), end).prop_map(|(head, tokens, end)| {
        let mut line = head.to_string();
        for (sep, token) in tokens {
            line.push_str(sep);
            line.push_str(&token);
        }
        line.push_str(end);
        line
    })
}

/// Reads `line` as the reply to every command: nothing panics, what is read
/// prints as the line itself, and an error quotes its token on one line.
fn parse_as_every_reply(line: &str) -> Result<(), TestCaseError> {
    for kind in CommandKind::ALL {
        match Reply::parse(kind, line) {
            Ok(reply) => prop_assert_eq!(reply.to_string(), line.trim_end_matches(['\r', '\n'])),
            Err(err) => {
                prop_assert_eq!(err.answering, kind);
                prop_assert!(!err.token.chars().any(char::is_control), "{:?}", err);
                let message = err.to_string();
                prop_assert!(message.contains(&format!("'{}'", err.token)), "{}", message);
                prop_assert!(message.contains(kind.keyword()), "{}", message);
            }
        }
    }
    Ok(())
}

/// A seat as `HISTORY` writes it: a name or open.
fn any_seat() -> impl Strategy<Value = Option<String>> {
    proptest::option::of(name())
}

/// Any clock `M+S` can write: thousandths of a minute up to a day, whole
/// seconds up to an hour.
fn any_clock() -> impl Strategy<Value = ClockSpec> {
    (1u64..=24 * 60 * 1000, 0u64..=3600).prop_map(|(thousandths, seconds)| ClockSpec {
        base_ms: thousandths * 60,
        increment_ms: seconds * 1000,
    })
}

fn any_result() -> impl Strategy<Value = GameResult> {
    let winner = select(vec![None, Some(Color::Black), Some(Color::White)]);
    let reason = select(vec![
        EndReason::Normal,
        EndReason::Resign,
        EndReason::Time,
        EndReason::Abandon,
    ]);
    (winner, any::<u32>(), any::<u32>(), reason).prop_map(|(winner, black, white, reason)| {
        GameResult {
            winner,
            black,
            white,
            reason,
        }
    })
}

fn any_summary() -> impl Strategy<Value = GameSummary> {
    (
        (
            any::<u64>(),
            select(Variant::ALL.to_vec()),
            any_seat(),
            any_seat(),
        ),
        (
            proptest::option::of(any_clock()),
            select(GameStatus::ALL.to_vec()),
            proptest::option::of(any_result()),
            vec(any_move(), 0..70),
        ),
    )
        .prop_map(
            |((game, variant, black, white), (clock, status, result, moves))| GameSummary {
                game,
                variant,
                black,
                white,
                clock,
                status,
                result,
                moves,
            },
        )
}

fn any_player_status() -> impl Strategy<Value = PlayerStatus> {
    prop_oneof![
        Just(PlayerStatus::Idle),
        Just(PlayerStatus::Seeking),
        any::<u64>().prop_map(PlayerStatus::Playing),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]

    #[test]
    fn every_reply_reads_back_as_itself((kind, reply) in answered()) {
        let line = reply.to_string();
        prop_assert!(line == "OK" || line.starts_with("OK "), "{}", line);
        prop_assert_eq!(Reply::parse(kind, &line), Ok(reply.clone()));
        prop_assert_eq!(Reply::parse(kind, &format!("{line}\n")), Ok(reply.clone()));
        prop_assert_eq!(Reply::parse(kind, &format!("{line}\r\n")), Ok(reply));
        // Read as the reply to any other command, the line is refused or is
        // the same bytes.
        parse_as_every_reply(&line)?;
    }

    #[test]
    fn no_reply_like_line_makes_the_reply_parser_panic(line in reply_line()) {
        parse_as_every_reply(&line)?;
    }

    #[test]
    fn no_string_makes_the_reply_parser_panic(text in any::<String>()) {
        parse_as_every_reply(&text)?;
        parse_as_every_reply(&format!("OK {text}"))?;
    }

    #[test]
    fn statuses_read_back_as_themselves(
        game in select(GameStatus::ALL.to_vec()),
        player in any_player_status(),
    ) {
        prop_assert_eq!(GameStatus::parse(&game.to_string()), Some(game));
        prop_assert_eq!(GameStatus::parse(game.word()), Some(game));
        prop_assert_eq!(PlayerStatus::parse(&player.to_string()), Some(player));
    }

    #[test]
    fn no_string_makes_a_status_parser_panic(text in any::<String>(), game in any::<u64>()) {
        if let Some(status) = GameStatus::parse(&text) {
            prop_assert_eq!(status.word(), text.as_str());
        }
        let _ = PlayerStatus::parse(&text);
        for near in [format!("playing {text}"), format!("playing {game}{text}"), format!("{text} {game}")] {
            if let Some(PlayerStatus::Playing(read)) = PlayerStatus::parse(&near) {
                prop_assert_eq!(near.strip_prefix("playing ").and_then(|n| n.parse().ok()), Some(read));
            }
        }
    }

    #[test]
    fn a_game_summary_reads_back_from_its_history_line(summary in any_summary()) {
        let event = Event::History(summary);
        let line = event.to_string();
        prop_assert!(line.starts_with("HISTORY "), "{}", line);
        prop_assert_eq!(line.split(' ').count(), 9, "{}", line);
        prop_assert_eq!(ServerLine::parse(&line), ServerLine::Event(event.clone()), "{}", line);
        prop_assert_eq!(ServerLine::parse(&format!("{line}\r\n")), ServerLine::Event(event), "{}", line);
    }

    #[test]
    fn status_lines_round_trip_through_the_client_parser(
        game in any::<u64>(),
        status in select(GameStatus::ALL.to_vec()),
        player in any_player_status(),
        who in name(),
        ply in any::<u32>(),
        rating in proptest::option::of(-500i32..4000),
        bot in any::<bool>(),
    ) {
        let events = [
            Event::Game {
                game,
                variant: Variant::Othello,
                black: Some(who.clone()),
                white: None,
                status,
                ply,
            },
            Event::Player { name: who.clone(), status: player, rating, bot },
            Event::History(GameSummary {
                game,
                variant: Variant::TicTacToe,
                black: None,
                white: Some(who),
                clock: None,
                status,
                result: None,
                moves: Vec::new(),
            }),
        ];
        for event in events {
            let line = event.to_string();
            prop_assert_eq!(ServerLine::parse(&line), ServerLine::Event(event), "{}", line);
        }
    }
}
