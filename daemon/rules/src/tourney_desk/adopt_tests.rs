//! Tournaments taken over from a cluster node declared dead: held from
//! their stored facts under their own numbers, their games elsewhere
//! followed, nothing made before the seat grace is over, and played on to
//! their end from here.

use flipline::Color;
use flipline::protocol::{EndReason, GameResult, TourneyCommand, TourneyKind, TourneySpec};

use super::tests::stores;
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

/// Round 1's two pairings, as a desk draws them.
fn round_one() -> [Pairing; 2] {
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
    [first.clone(), second.clone()]
}

/// A stored game's result: its winner and scores, once over.
type StoredResult = Option<(Option<Color>, (u32, u32))>;

/// Round 1 of a round robin of four as another node stored it, with
/// `games`: (game, which pairing, its result if over).
fn stored_with(games: &[(GameId, usize, StoredResult)]) -> StoredTourney {
    let pairings = round_one();
    let games = (games.iter())
        .map(|&(game, pairing, result)| StoredTourneyGame {
            round: 1,
            game,
            black: pairings[pairing].black.to_string(),
            white: pairings[pairing].white.to_string(),
            result,
        })
        .collect();
    StoredTourney {
        id: THEIRS,
        creator: "p0".into(),
        spec: TourneySpec::new(TourneyKind::RoundRobin),
        players: PLAYERS.map(String::from).to_vec(),
        round: 1,
        over: false,
        games,
        forfeits: Vec::new(),
        starts: Vec::new(),
    }
}

const BLACK_WON: StoredResult = Some((Some(Color::Black), (40, 24)));

/// Game 41 over, 42 in play: the round waits only for 42.
fn playing_42() -> StoredTourney {
    stored_with(&[(41, 0, BLACK_WON), (42, 1, None)])
}

/// Game 41 in play, the second pairing's game never made.
fn one_to_make() -> StoredTourney {
    stored_with(&[(41, 0, None)])
}

/// The alarm that resumes what was adopted, among `effects`.
fn resume_alarm(effects: &Effects<u32>) -> Option<Alarm> {
    effects.iter().find_map(|e| match e {
        DeskEffect::Wake(_, alarm @ Alarm::ResumeAdopted(_)) => Some(alarm.clone()),
        _ => None,
    })
}

const GRACE: Duration = Duration::from_secs(5);

#[test]
fn a_taken_over_tournament_follows_its_game_elsewhere_and_keeps_this_node_s_numbers() {
    let mut desk = Desk::new(OURS);
    let adopted = desk.adopt(vec![playing_42()], |_| false, GRACE);
    assert!(adopted.contains(&DeskEffect::Follow(42)), "{adopted:?}");
    assert!(!adopted.contains(&DeskEffect::Follow(41)), "41 is over");
    assert!(asked(&adopted).is_empty(), "nothing to make");
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
    let again = desk.adopt(vec![playing_42()], |_| false, GRACE);
    assert!(again.is_empty(), "{again:?}");
}

#[test]
fn a_round_waiting_only_for_games_in_play_goes_on_as_they_end() {
    let mut desk = Desk::new(OURS);
    let adopted = desk.adopt(vec![playing_42()], |g| g == 42, GRACE);
    assert!(adopted.contains(&DeskEffect::MarkGame(42)), "{adopted:?}");
    assert!(
        adopted.contains(&DeskEffect::Follow(42)),
        "followed here too"
    );
    assert_eq!(resume_alarm(&adopted), None, "no wait: {adopted:?}");
    let over = desk.game_over(42, &won_by_black(), &all_free);
    let [TourneyWrite::Round { id, round: 2, .. }] = stores(&over)[..] else {
        panic!("round 2 not stored: {over:?}")
    };
    assert_eq!(id, THEIRS);
    let games = asked(&desk.stored(THEIRS, true, &all_free));
    assert_eq!(games.len(), 2);
    assert!(
        games
            .iter()
            .all(|(_, t)| (t.tourney, t.round) == (THEIRS, 2))
    );
}

#[test]
fn a_round_with_a_game_to_make_waits_for_the_grace_and_counts_ends_meanwhile() {
    let mut desk = Desk::new(OURS);
    let adopted = desk.adopt(vec![one_to_make()], |_| false, GRACE);
    let alarm = resume_alarm(&adopted).unwrap_or_else(|| panic!("no wait: {adopted:?}"));
    assert!(asked(&adopted).is_empty(), "nothing made before the grace");
    // Game 41 ends before the grace is over: counted, nothing follows.
    let early = desk.game_over(41, &won_by_black(), &all_free);
    assert!(early.is_empty(), "{early:?}");
    assert!(!desk.plays(41));
    // Then the second pairing's game is made (its round stored again first).
    let resumed = desk.wake(alarm, &all_free);
    assert!(matches!(
        stores(&resumed)[..],
        [TourneyWrite::Round { round: 1, .. }]
    ));
    let games = asked(&desk.stored(THEIRS, true, &all_free));
    let [(pairing, terms)] = games.as_slice() else {
        panic!("{games:?}")
    };
    assert_eq!((terms.tourney, terms.round), (THEIRS, 1));
    assert_eq!(*pairing, round_one()[1]);
}

#[test]
fn a_followed_game_gone_without_a_result_is_made_again() {
    // During the grace: only forgotten, made once the grace is over.
    let mut desk = Desk::new(OURS);
    let adopted = desk.adopt(vec![one_to_make()], |_| false, GRACE);
    let gone = desk.game_gone(41, &all_free);
    assert!(gone.is_empty(), "{gone:?}");
    assert!(!desk.plays(41));
    let alarm = resume_alarm(&adopted).unwrap_or_else(|| panic!("no wait: {adopted:?}"));
    desk.wake(alarm, &all_free);
    let games = asked(&desk.stored(THEIRS, true, &all_free));
    assert_eq!(games.len(), 2, "both pairings: {games:?}");
    // Once going on: made again at once.
    let mut desk = Desk::new(OURS);
    desk.adopt(vec![playing_42()], |_| false, GRACE);
    let gone = desk.game_gone(42, &all_free);
    assert!(matches!(
        stores(&gone)[..],
        [TourneyWrite::Round { round: 1, .. }]
    ));
    let games = asked(&desk.stored(THEIRS, true, &all_free));
    let [(pairing, _)] = games.as_slice() else {
        panic!("{games:?}")
    };
    assert_eq!(*pairing, round_one()[1]);
}

#[test]
fn a_game_ended_at_its_takeover_counts_without_cutting_the_grace_short() {
    let mut desk = Desk::new(OURS);
    // The node's own start is over: its restart grace has passed.
    desk.restore(Vec::new(), |_| false, GRACE);
    desk.wake(Alarm::Resume, &all_free);
    let adopted = desk.adopt(vec![one_to_make()], |_| false, GRACE);
    let alarm = resume_alarm(&adopted).unwrap_or_else(|| panic!("no wait: {adopted:?}"));
    // Game 41 comes here, its stored moves ending it: its end is stored.
    let store = desk.recovered_end(41, won_by_black());
    assert!(
        matches!(store[..], [DeskEffect::StoreEnd(41, ..)]),
        "{store:?}"
    );
    let stored = desk.end_stored(41, won_by_black(), 1, true, &all_free);
    assert!(
        stored.is_empty(),
        "nothing made before the grace: {stored:?}"
    );
    // Another start's grace ending does not resume it either.
    let other = desk.wake(Alarm::Resume, &all_free);
    assert!(other.is_empty(), "{other:?}");
    let resumed = desk.wake(alarm, &all_free);
    assert!(matches!(
        stores(&resumed)[..],
        [TourneyWrite::Round { round: 1, .. }]
    ));
    let games = asked(&desk.stored(THEIRS, true, &all_free));
    assert_eq!(games.len(), 1, "the second pairing's game: {games:?}");
}
