//! Tournaments taken over from a cluster node declared dead: held from
//! their stored facts under their own numbers, their games elsewhere
//! followed, nothing made before the seat grace is over, and played on to
//! their end from here.

use flipline::Color;
use flipline::protocol::{EndReason, GameResult, TourneyCommand, TourneyKind, TourneySpec};

use super::*;
use crate::tourney_facts::{StoredTourney, StoredTourneyGame};

type Desk = TourneyDesk<u32>;

fn all_free(_: &str) -> bool {
    true
}

const PLAYERS: [&str; 4] = ["p0", "p1", "p2", "p3"];
/// The dead node's tournament: numbered from its block, not this one's.
const THEIRS: TourneyId = 1001;
/// This node's first number.
const OURS: TourneyId = 1;

/// The games `effects` ask for.
fn asked(effects: &Effects<u32>) -> Vec<(Pairing, TourneyTerms)> {
    (effects.iter())
        .filter_map(|e| match e {
            DeskEffect::MakeGame(pairing, terms) => Some((pairing.clone(), terms.clone())),
            _ => None,
        })
        .collect()
}

fn won_by_black() -> GameResult {
    GameResult {
        winner: Some(Color::Black),
        black: 40,
        white: 24,
        reason: EndReason::Normal,
    }
}

/// Round 1 of a round robin of four as another node stored it: its first
/// game over (41), its second (42) in play.
fn stored_round_one() -> StoredTourney {
    // The same pairings a desk draws: ask one.
    let mut other = Desk::new(THEIRS);
    let spec = TourneySpec::new(TourneyKind::RoundRobin);
    other.command(
        Some(Name::from("p0")),
        TourneyCommand::New(spec),
        0,
        &all_free,
    );
    other.stored(THEIRS, true, &all_free);
    for p in PLAYERS {
        other.command(
            Some(Name::from(p)),
            TourneyCommand::Join(THEIRS),
            0,
            &all_free,
        );
        other.stored(THEIRS, true, &all_free);
    }
    other.command(
        Some(Name::from("p0")),
        TourneyCommand::Start(THEIRS),
        0,
        &all_free,
    );
    let games = asked(&other.stored(THEIRS, true, &all_free));
    let [(first, _), (second, _)] = games.as_slice() else {
        panic!("two games in round 1: {games:?}")
    };
    let game = |game, pairing: &Pairing, result| StoredTourneyGame {
        round: 1,
        game,
        black: pairing.black.to_string(),
        white: pairing.white.to_string(),
        result,
    };
    StoredTourney {
        id: THEIRS,
        creator: "p0".into(),
        spec,
        players: PLAYERS.map(String::from).to_vec(),
        round: 1,
        over: false,
        games: vec![
            game(41, first, Some((Some(Color::Black), (40, 24)))),
            game(42, second, None),
        ],
        forfeits: Vec::new(),
        starts: Vec::new(),
    }
}

/// The alarm that resumes what was adopted, among `effects`.
fn resume_alarm(effects: &Effects<u32>) -> Alarm {
    let alarm = effects.iter().find_map(|e| match e {
        DeskEffect::Wake(_, alarm @ Alarm::ResumeAdopted(_)) => Some(alarm.clone()),
        _ => None,
    });
    alarm.unwrap_or_else(|| panic!("no resume: {effects:?}"))
}

#[test]
fn a_taken_over_tournament_follows_its_game_elsewhere_and_keeps_this_node_s_numbers() {
    let mut desk = Desk::new(OURS);
    let adopted = desk.adopt(vec![stored_round_one()], |_| false, Duration::from_secs(5));
    assert!(adopted.contains(&DeskEffect::Follow(42)), "{adopted:?}");
    assert!(!adopted.contains(&DeskEffect::Follow(41)), "41 is over");
    assert!(asked(&adopted).is_empty(), "nothing made before the grace");
    assert!(desk.holds(THEIRS) && desk.plays(42) && !desk.plays(41));
    // This node's own next tournament is numbered from its own block.
    let spec = TourneySpec::new(TourneyKind::Swiss);
    let made = desk.command(
        Some(Name::from("p9")),
        TourneyCommand::New(spec),
        1,
        &all_free,
    );
    let [DeskEffect::Store(write)] = made.as_slice() else {
        panic!("{made:?}")
    };
    assert_eq!(write.tourney(), OURS);
    // Adopted twice (claimed again), it is not held twice.
    let again = desk.adopt(vec![stored_round_one()], |_| false, Duration::from_secs(5));
    assert!(again.is_empty(), "{again:?}");
}

#[test]
fn a_game_here_is_marked_and_the_round_goes_on_only_after_the_grace() {
    let mut desk = Desk::new(OURS);
    let adopted = desk.adopt(
        vec![stored_round_one()],
        |g| g == 42,
        Duration::from_secs(5),
    );
    assert!(adopted.contains(&DeskEffect::MarkGame(42)), "{adopted:?}");
    // The game ends before the grace is over: counted, nothing follows.
    let early = desk.game_over(42, &won_by_black(), &all_free);
    assert!(early.is_empty(), "{early:?}");
    assert!(!desk.plays(42));
    // Then the tournament resumes: round 1 is decided, round 2 begins.
    let resumed = desk.wake(resume_alarm(&adopted), &all_free);
    let [TourneyWrite::Round { id, round: 2, .. }] = stores(&resumed)[..] else {
        panic!("round 2 not stored: {resumed:?}")
    };
    assert_eq!(id, THEIRS);
    let made = desk.stored(THEIRS, true, &all_free);
    let games = asked(&made);
    assert_eq!(games.len(), 2, "{made:?}");
    assert!(
        games
            .iter()
            .all(|(_, t)| (t.tourney, t.round) == (THEIRS, 2))
    );
}

#[test]
fn a_followed_game_that_ended_after_the_grace_carries_the_tournament_on() {
    let mut desk = Desk::new(OURS);
    let adopted = desk.adopt(vec![stored_round_one()], |_| false, Duration::from_secs(5));
    let resumed = desk.wake(resume_alarm(&adopted), &all_free);
    assert!(
        stores(&resumed).is_empty() && asked(&resumed).is_empty(),
        "42 is in play"
    );
    let over = desk.game_over(42, &won_by_black(), &all_free);
    assert!(matches!(
        stores(&over)[..],
        [TourneyWrite::Round { round: 2, .. }]
    ));
}

#[test]
fn a_followed_game_gone_without_a_result_is_made_again_once_resumed() {
    let mut desk = Desk::new(OURS);
    let adopted = desk.adopt(vec![stored_round_one()], |_| false, Duration::from_secs(5));
    // Gone during the grace: only forgotten.
    let gone = desk.game_gone(42, &all_free);
    assert!(gone.is_empty(), "{gone:?}");
    assert!(!desk.plays(42));
    let resumed = desk.wake(resume_alarm(&adopted), &all_free);
    assert!(matches!(
        stores(&resumed)[..],
        [TourneyWrite::Round { round: 1, .. }]
    ));
    let made = desk.stored(THEIRS, true, &all_free);
    let games = asked(&made);
    let [(pairing, terms)] = games.as_slice() else {
        panic!("42's pairing not made again: {made:?}")
    };
    assert_eq!((terms.tourney, terms.round), (THEIRS, 1));
    let first_two = &stored_round_one().games[1];
    assert_eq!(
        (pairing.black.as_ref(), pairing.white.as_ref()),
        (first_two.black.as_str(), first_two.white.as_str())
    );
}

fn stores(effects: &Effects<u32>) -> Vec<TourneyWrite> {
    (effects.iter())
        .filter_map(|e| match e {
            DeskEffect::Store(write) => Some(write.clone()),
            _ => None,
        })
        .collect()
}
