//! External engines that misbehave, as tiny `sh` scripts: each failure is
//! named, and none is waited for past its deadline.

use std::time::{Duration, Instant};

use flipline::{Game, Move, Variant};

use super::budget::{Budget, GtpTime};
use super::{EngineFailure, EngineSpec, ExternalPlayer, Turn};
use crate::engine_tools::engine_protocols::Protocol;

fn player(script: &str, protocol: Protocol) -> ExternalPlayer {
    let command = format!("sh -c '{script}'");
    ExternalPlayer::new(EngineSpec::new(&command, protocol, Variant::Othello).unwrap())
}

/// A GTP engine that answers everything `=` and `genmove` with `reply`.
fn gtp_script(genmove: &str) -> String {
    format!(
        "while read c rest; do case \"$c\" in genmove) {genmove};; *) printf \"=\\n\\n\";; esac; done"
    )
}

fn quick_turn(moves: &[Move]) -> Turn<'_> {
    Turn {
        start: Game::new(Variant::Othello),
        moves,
        side: flipline::Color::Black,
        budget: Budget {
            share: Duration::from_millis(100),
            gtp: GtpTime {
                settings: (0, 1, 1),
                left: (1, 1),
            },
            wait: Duration::from_millis(300),
        },
    }
}

fn start() -> Game {
    Game::new(Variant::Othello)
}

#[test]
fn a_gtp_engine_that_answers_plays_its_move() {
    let mut p = player(&gtp_script("printf \"= D3\\n\\n\""), Protocol::Gtp);
    assert_eq!(
        p.choose(&quick_turn(&[]), &start()),
        Ok(Move::Place("d3".parse().unwrap()))
    );
    // The same engine, still running, for the next move.
    assert_eq!(
        p.choose(&quick_turn(&[]), &start()),
        Ok(Move::Place("d3".parse().unwrap()))
    );
}

#[test]
fn nonsense_an_illegal_move_a_refusal_and_a_resignation_are_failures() {
    let cases = [
        ("printf \"= zz\\n\\n\"", "nonsense"),
        ("printf \"= A1\\n\\n\"", "illegal"),
        ("printf \"? no\\n\\n\"", "refused"),
        ("printf \"= resign\\n\\n\"", "resigned"),
    ];
    for (genmove, named) in cases {
        let mut p = player(&gtp_script(genmove), Protocol::Gtp);
        let failure = p.choose(&quick_turn(&[]), &start()).unwrap_err();
        assert!(failure.to_string().contains(named), "{genmove}: {failure}");
    }
}

#[test]
fn an_engine_that_hangs_is_given_up_on_at_its_deadline() {
    // The engine sleeps ten minutes: the failure being a timeout (not a
    // death) shows that the deadline ended the wait; the bound on the time
    // taken is only a guard against a hang.
    let mut p = player(&gtp_script("exec sleep 600"), Protocol::Gtp);
    let began = Instant::now();
    let failure = p.choose(&quick_turn(&[]), &start()).unwrap_err();
    assert!(matches!(failure, EngineFailure::TimedOut(_)), "{failure}");
    assert!(failure.to_string().contains("genmove b"), "{failure}");
    assert!(
        began.elapsed() < Duration::from_secs(60),
        "hang guard: given up on after {:?}",
        began.elapsed()
    );
}

#[test]
fn an_engine_that_exits_is_said_to_have_died_with_its_status() {
    let mut p = player("read line; exit 3", Protocol::Gtp);
    let failure = p.choose(&quick_turn(&[]), &start()).unwrap_err();
    assert!(matches!(failure, EngineFailure::Died(_)), "{failure}");
    assert!(failure.to_string().contains("boardsize"), "{failure}");
    assert_eq!(p.given_up(), None, "it is started again for the next game");
}

#[test]
fn a_command_that_cannot_start_gives_up_and_failed_games_in_a_row_do_too() {
    let spec =
        EngineSpec::new("/nonexistent/engine -gtp", Protocol::Gtp, Variant::Othello).unwrap();
    let mut p = ExternalPlayer::new(spec);
    let failure = p.choose(&quick_turn(&[]), &start()).unwrap_err();
    assert!(
        matches!(failure, EngineFailure::CannotStart(_)),
        "{failure}"
    );
    assert!(
        p.given_up()
            .is_some_and(|why| why.contains("cannot be started"))
    );

    let mut p = player("exit 0", Protocol::Gtp);
    for game in 1..=3 {
        assert_eq!(p.given_up(), None, "game {game}");
        assert!(p.choose(&quick_turn(&[]), &start()).is_err());
        p.game_over();
    }
    assert!(
        p.given_up()
            .is_some_and(|why| why.contains("3 games in a row"))
    );
}

#[test]
fn an_nboard_engine_answers_after_its_pong() {
    let script = "while read c n; do case \"$c\" in \
                  ping) echo \"=== C4/0/0\"; echo \"pong $n\";; \
                  go) echo \"status thinking\"; echo \"=== d3 0.50 0.1\";; esac; done";
    let mut p = player(script, Protocol::Nboard);
    // The move written before the pong belongs to an earlier command.
    assert_eq!(
        p.choose(&quick_turn(&[]), &start()),
        Ok(Move::Place("d3".parse().unwrap()))
    );
    let silent = "while read c n; do case \"$c\" in ping) echo \"pong $n\";; esac; done";
    let mut p = player(silent, Protocol::Nboard);
    let failure = p.choose(&quick_turn(&[]), &start()).unwrap_err();
    assert!(failure.to_string().contains("'go'"), "{failure}");
}

#[test]
fn only_othellos_eight_by_eight_variants_are_played() {
    for variant in [
        Variant::Othello6,
        Variant::Freeplace,
        Variant::Anti,
        Variant::TicTacToe,
    ] {
        let refused = EngineSpec::new("edax", Protocol::Nboard, variant).unwrap_err();
        assert!(refused.contains(variant.name()), "{refused}");
    }
    assert!(EngineSpec::new("edax", Protocol::Nboard, Variant::Reversi).is_ok());
    let gtp = EngineSpec::new("edax", Protocol::Gtp, Variant::Reversi).unwrap_err();
    assert!(gtp.contains("--protocol nboard"), "{gtp}");
}
