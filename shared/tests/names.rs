//! Names: every name `LOGIN` accepts prints as one field of the lines that
//! carry it and reads back as itself, never as an open seat (`-`), a keyword
//! or a bot.

use flipline::Variant;
use flipline::protocol::{
    BOT_NAME_PREFIX, Command, CommandKind, Event, GameStatus, GameSummary, LoginOk, NameError,
    PlayerStatus, REPLY_KEYWORDS, Reply, ServerLine, check_name,
};
use proptest::prelude::*;
use proptest::sample::select;
use proptest::test_runner::TestCaseError;

/// Every keyword a protocol line may start with, from the crate's own lists.
fn keywords() -> Vec<&'static str> {
    CommandKind::ALL
        .map(CommandKind::keyword)
        .into_iter()
        .chain(Event::KEYWORDS)
        .chain(REPLY_KEYWORDS)
        .collect()
}

/// `word` with the case of each letter chosen by `upper`.
fn recased(word: &str, upper: &[bool]) -> String {
    word.chars()
        .zip(upper.iter().chain(std::iter::repeat(&false)))
        .map(|(c, &up)| {
            if up {
                c.to_ascii_uppercase()
            } else {
                c.to_ascii_lowercase()
            }
        })
        .collect()
}

/// Names in the alphabet of names, and names close to the ones refused:
/// keywords in any case and with a character more, dashes, bot names.
fn name_like() -> impl Strategy<Value = String> {
    let keyword = (
        select(keywords()),
        proptest::collection::vec(any::<bool>(), 8),
    );
    prop_oneof![
        "[A-Za-z0-9_-]{1,22}",
        keyword.clone().prop_map(|(k, upper)| recased(k, &upper)),
        (keyword, "[A-Za-z0-9_-]").prop_map(|((k, upper), c)| recased(k, &upper) + &c),
        "-{1,21}",
        "[bB][oO][tT]:[0-9a-z]{0,3}",
    ]
}

/// The lines that print a name, each read back by the client's parser.
fn lines_with(name: &str) -> Vec<(String, Event)> {
    let events = [
        Event::Start {
            game: 3,
            variant: Variant::Othello,
            black: name.to_string(),
            white: name.to_string(),
            clock: None,
        },
        Event::Chat {
            game: 3,
            name: name.to_string(),
            text: "hi".to_string(),
        },
        Event::Game {
            game: 3,
            variant: Variant::Othello,
            black: Some(name.to_string()),
            white: Some(name.to_string()),
            status: GameStatus::Playing,
            ply: 4,
        },
        Event::Player {
            name: name.to_string(),
            status: PlayerStatus::Idle,
            rating: Some(1500),
            bot: true,
        },
        Event::History(GameSummary {
            game: 3,
            variant: Variant::Othello,
            black: Some(name.to_string()),
            white: Some(name.to_string()),
            clock: None,
            status: GameStatus::Playing,
            result: None,
            moves: Vec::new(),
        }),
    ];
    events.into_iter().map(|e| (e.to_string(), e)).collect()
}

/// An accepted name reads back from every line as itself, and is read as
/// neither a command nor a server line when it starts one.
fn accepted_name_is_only_a_name(name: &str) -> Result<(), TestCaseError> {
    for (line, event) in lines_with(name) {
        prop_assert_eq!(
            ServerLine::parse(&line),
            ServerLine::Event(event),
            "{}",
            line
        );
    }
    let login = Reply::parse(CommandKind::Login, &format!("OK {name}"));
    prop_assert_eq!(login, Ok(Reply::Login(LoginOk::name(name))));
    prop_assert!(
        name.chars().any(|c| c != '-'),
        "{} reads as an open seat",
        name
    );
    prop_assert!(CommandKind::from_keyword(name).is_none());
    let as_command = Command::parse(name).map_err(|e| e.message);
    prop_assert!(
        matches!(&as_command, Err(m) if m.starts_with("unknown command")),
        "{:?}",
        as_command
    );
    for rest in [
        "",
        " 1",
        " 3 othello a b -",
        " 3 X d3",
        " 400 x",
        " flipline 1",
    ] {
        let line = format!("{name}{rest}");
        let read = ServerLine::parse(&line);
        prop_assert!(
            matches!(read, ServerLine::Unknown(_)),
            "{} read as {:?}",
            line,
            read
        );
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn accepted_names_round_trip_and_read_as_nothing_else(name in name_like()) {
        match check_name(&name) {
            Ok(()) => accepted_name_is_only_a_name(&name)?,
            Err(rule) => {
                let line = format!("LOGIN {name}");
                let err = Command::parse(&line).unwrap_err();
                prop_assert!(err.message.contains(&rule.to_string()), "{}", err);
            }
        }
    }

    #[test]
    fn keywords_dashes_and_bot_names_are_refused_in_any_case(name in name_like()) {
        let upper = name.to_ascii_uppercase();
        let expected = if upper.starts_with(&BOT_NAME_PREFIX.to_ascii_uppercase()) {
            Some(NameError::Bot)
        } else if name.len() > 20 {
            Some(NameError::Shape)
        } else if name.bytes().all(|b| b == b'-') {
            Some(NameError::Dashes)
        } else if keywords().contains(&upper.as_str()) {
            Some(NameError::Keyword)
        } else {
            None
        };
        if let Some(rule) = expected {
            prop_assert_eq!(check_name(&name), Err(rule));
        }
    }
}

#[test]
fn login_of_a_reserved_name_is_400_and_states_the_rule() {
    for (line, rule) in [
        ("LOGIN -", "a name of dashes only reads as an open seat"),
        ("LOGIN ok", "a protocol keyword is not a name"),
        ("LOGIN Moved", "a protocol keyword is not a name"),
        ("LOGIN bot:3", "names starting bot: are the daemon's bots"),
    ] {
        let err = Command::parse(line).unwrap_err();
        assert_eq!(err.code.number(), 400, "{line}");
        assert!(err.message.contains(rule), "{line}: {err}");
    }
}
