//! The desk against a store that refuses writes and games that are not
//! made: answers and announcements only after their writes are stored, one
//! write of a tournament at a time, and every tournament ends, even when
//! its node dies mid-run and another node's desk takes it over from what
//! was stored.

use std::collections::{HashSet, VecDeque};
use std::time::Duration;

use flipline::Color;
use flipline::protocol::{
    EndReason, ErrorCode, Event, GameResult, TourneyCommand, TourneyKind, TourneyNews, TourneySpec,
};
use proptest::prelude::*;

use super::*;
use crate::tourney_facts::{StoredTourney, StoredTourneyGame};

type Desk = TourneyDesk<u32>;

fn name(n: &str) -> Option<Name> {
    Some(Name::from(n))
}

fn all_free(_: &str) -> bool {
    true
}

/// The replies among `effects`, in order.
fn replies(effects: &Effects<u32>) -> Vec<(u32, Result<TourneyAnswer, ErrorCode>)> {
    (effects.iter())
        .filter_map(|e| match e {
            DeskEffect::Reply(to, answer) => Some((*to, answer.clone().map_err(|e| e.code()))),
            _ => None,
        })
        .collect()
}

pub(super) fn stores(effects: &Effects<u32>) -> Vec<TourneyWrite> {
    (effects.iter())
        .filter_map(|e| match e {
            DeskEffect::Store(write) => Some(write.clone()),
            _ => None,
        })
        .collect()
}

/// A round robin made by p0 and joined by `players`, every write stored.
fn open_with(desk: &mut Desk, players: &[&str]) -> TourneyId {
    open_kind(desk, TourneyKind::RoundRobin, players)
}

fn open_kind(desk: &mut Desk, kind: TourneyKind, players: &[&str]) -> TourneyId {
    let spec = TourneySpec::new(kind);
    let made = desk.command(name("p0"), TourneyCommand::New(spec), 0, &all_free);
    let id = stores(&made)[0].tourney();
    desk.stored(id, true, &all_free);
    for p in players {
        desk.command(name(p), TourneyCommand::Join(id), 0, &all_free);
        desk.stored(id, true, &all_free);
    }
    id
}

/// The first game `effects` ask for.
fn first_game(effects: &Effects<u32>) -> (&Pairing, &TourneyTerms) {
    let asked = effects.iter().find_map(|e| match e {
        DeskEffect::MakeGame(pairing, terms) => Some((pairing, terms)),
        _ => None,
    });
    asked.unwrap_or_else(|| panic!("no game asked for: {effects:?}"))
}

#[test]
fn a_command_is_answered_once_stored_and_a_refused_one_changes_nothing() {
    let mut desk = Desk::new(1);
    let spec = TourneySpec::new(TourneyKind::Swiss);
    let asked = desk.command(name("ann"), TourneyCommand::New(spec), 7, &all_free);
    assert!(replies(&asked).is_empty(), "not answered before stored");
    assert_eq!(stores(&asked).len(), 1);
    let refused = desk.stored(1, false, &all_free);
    assert_eq!(replies(&refused), [(7, Err(ErrorCode::Unavailable))]);
    assert_eq!(desk.tourneys().list(), [], "nothing made");
    let again = desk.command(name("ann"), TourneyCommand::New(spec), 8, &all_free);
    assert_eq!(
        stores(&again)[0].tourney(),
        2,
        "a number is not given twice"
    );
    let made = desk.stored(2, true, &all_free);
    assert_eq!(replies(&made), [(8, Ok(TourneyAnswer::Made(2)))]);
    let guest = desk.command(None, TourneyCommand::Join(2), 9, &all_free);
    assert_eq!(replies(&guest), [(9, Err(ErrorCode::Forbidden))]);
}

#[test]
fn commands_sent_together_wait_for_each_write_in_turn() {
    let mut desk = Desk::new(1);
    let id = open_with(&mut desk, &[]);
    let mut sent = Vec::new();
    for (n, command) in [
        TourneyCommand::Join(id),
        TourneyCommand::Leave(id),
        TourneyCommand::Join(id),
        TourneyCommand::Join(id),
    ]
    .into_iter()
    .enumerate()
    {
        let n = u32::try_from(n).unwrap_or(0);
        sent.extend(desk.command(name("bob"), command, n, &all_free));
    }
    assert_eq!(stores(&sent).len(), 1, "one write at a time");
    let mut answers = replies(&sent);
    while desk.is_busy(id) {
        answers.extend(replies(&desk.stored(id, true, &all_free)));
    }
    let codes: Vec<_> = answers.iter().map(|(n, a)| (*n, a.is_ok())).collect();
    assert_eq!(codes, [(0, true), (1, true), (2, true), (3, false)]);
    assert_eq!(
        desk.tourneys().get(id).map(|h| h.tourney.players().len()),
        Ok(1),
        "bob, once"
    );
}

#[test]
fn a_start_not_stored_leaves_the_tournament_open_and_tells_nobody() {
    let mut desk = Desk::new(1);
    let id = open_with(&mut desk, &["p0", "p1", "p2", "p3"]);
    let asked = desk.command(name("p0"), TourneyCommand::Start(id), 5, &all_free);
    assert!(matches!(
        stores(&asked)[..],
        [TourneyWrite::Round { round: 1, .. }]
    ));
    let refused = desk.stored(id, false, &all_free);
    assert_eq!(refused.len(), 1, "only the answer: {refused:?}");
    assert_eq!(replies(&refused), [(5, Err(ErrorCode::Unavailable))]);
    assert_eq!(
        desk.tourneys().list()[0].stage,
        flipline::protocol::TourneyStage::Open
    );
    desk.command(name("p0"), TourneyCommand::Start(id), 6, &all_free);
    let started = desk.stored(id, true, &all_free);
    assert_eq!(replies(&started), [(6, Ok(TourneyAnswer::Done))]);
    let games = started
        .iter()
        .filter(|e| matches!(e, DeskEffect::MakeGame(..)));
    assert_eq!(games.count(), 2);
}

#[test]
fn a_refused_fact_is_written_again_and_acted_on_only_once_stored() {
    let mut desk = Desk::new(1);
    let id = open_with(&mut desk, &["p0", "p1"]);
    desk.command(name("p0"), TourneyCommand::Start(id), 1, &all_free);
    let started = desk.stored(id, true, &all_free);
    let (pairing, terms) = first_game(&started);
    desk.game_made(pairing, terms, 40);
    let result = GameResult {
        winner: Some(Color::Black),
        black: 40,
        white: 24,
        reason: EndReason::Normal,
    };
    let over = desk.game_over(40, &result, &all_free);
    assert!(matches!(
        stores(&over)[..],
        [TourneyWrite::Round { round: 2, .. }]
    ));
    assert!(
        !over
            .iter()
            .any(|e| matches!(e, DeskEffect::Tell(..) | DeskEffect::MakeGame(..)))
    );
    let refused = desk.stored(id, false, &all_free);
    let [DeskEffect::Wake(_, alarm)] = &refused[..] else {
        panic!("no retry: {refused:?}");
    };
    let rewritten = desk.wake(alarm.clone(), &all_free);
    assert!(matches!(
        stores(&rewritten)[..],
        [TourneyWrite::Round { round: 2, .. }]
    ));
    let stored = desk.stored(id, true, &all_free);
    let told = stored.iter().filter(|e| {
        matches!(
            e,
            DeskEffect::Tell(
                _,
                Event::TourneyNews {
                    news: TourneyNews::Round(2),
                    ..
                }
            )
        )
    });
    assert_eq!(
        told.count(),
        2,
        "both players hear of round 2 once it is stored"
    );
}

#[test]
fn a_game_that_cannot_be_made_is_lost_by_whoever_is_away() {
    let mut desk = Desk::new(1);
    let id = open_with(&mut desk, &["p0", "p1"]);
    desk.command(name("p0"), TourneyCommand::Start(id), 1, &all_free);
    let started = desk.stored(id, true, &all_free);
    let (pairing, terms) = first_game(&started);
    let away = Name::clone(&pairing.white);
    let free = move |n: &str| n != &*away;
    let unmade = desk.game_unmade(pairing.clone(), terms, &free);
    let [TourneyWrite::Forfeit { forfeit, .. }] = &stores(&unmade)[..] else {
        panic!("no forfeit stored: {unmade:?}");
    };
    assert_eq!(forfeit.absent, [false, true]);
    let stored = desk.stored(id, true, &free);
    let told_black = stored
        .iter()
        .any(|e| matches!(e, DeskEffect::Tell(to, Event::Info(_)) if *to == pairing.black));
    assert!(told_black, "the player who was there hears why: {stored:?}");
}

/// What the property test's world does with each effect, by the choices
/// it is given.
struct World {
    desk: Desk,
    choices: VecDeque<u8>,
    effects: VecDeque<DeskEffect<u32>>,
    stored_rounds: HashSet<(TourneyId, u32)>,
    games_made: HashSet<(u32, Name, Name)>,
    in_play: Vec<(GameId, Color)>,
    next_game: GameId,
    writes_in_flight: HashSet<TourneyId>,
    over: bool,
    /// The tournament as the store holds it: what a desk taking it over
    /// reads.
    stored: StoredTourney,
}

impl World {
    /// A world whose desk runs tournament `id` of `kind`, made by p0 and
    /// joined by `players`, started, its first round stored.
    fn started(kind: TourneyKind, players: usize, choices: Vec<u8>) -> World {
        let mut desk = Desk::new(1);
        let names: Vec<String> = (0..players).map(|i| format!("p{i}")).collect();
        let joining: Vec<&str> = names.iter().map(String::as_str).collect();
        let id = open_kind(&mut desk, kind, &joining);
        desk.command(name("p0"), TourneyCommand::Start(id), 1, &all_free);
        let started = desk.stored(id, true, &all_free);
        let mut world = World {
            desk,
            choices: choices.into_iter().collect(),
            effects: VecDeque::new(),
            stored_rounds: HashSet::from([(id, 1)]),
            games_made: HashSet::new(),
            in_play: Vec::new(),
            next_game: 0,
            writes_in_flight: HashSet::new(),
            over: false,
            stored: StoredTourney {
                id,
                creator: "p0".into(),
                spec: TourneySpec::new(kind),
                players: names,
                round: 1,
                over: false,
                games: Vec::new(),
                forfeits: Vec::new(),
                starts: Vec::new(),
            },
        };
        world.run(started);
        world
    }

    /// The desk's node dies: what it had not carried out is lost, and a
    /// desk on another node takes the tournament over from the store, its
    /// games in play elsewhere. Its grace for the players passes at once.
    fn node_dies(&mut self) {
        self.effects.clear();
        let mut desk = Desk::new(900);
        let adopted = desk.adopt(vec![self.stored.clone()], |_| false, Duration::ZERO);
        self.desk = desk;
        self.run(adopted);
    }

    /// Runs until nothing is left to do, the node dying after `dies_after`
    /// steps if its tournament is not over by then (never if `None`).
    fn settle(&mut self, dies_after: Option<usize>) -> Result<(), TestCaseError> {
        let mut steps = 0;
        while self.step() {
            steps += 1;
            prop_assert!(steps < 100_000, "never settles");
            if dies_after == Some(steps) && !self.stored.over {
                self.node_dies();
            }
        }
        Ok(())
    }

    fn choose(&mut self, below: u8) -> u8 {
        let choice = self.choices.pop_front().unwrap_or(0);
        self.choices
            .push_back(choice.wrapping_mul(31).wrapping_add(7));
        choice % below.max(1)
    }

    fn run(&mut self, effects: Effects<u32>) {
        self.effects.extend(effects);
    }

    /// One effect, or a game ending if none is left.
    fn step(&mut self) -> bool {
        if let Some(effect) = self.effects.pop_front() {
            self.carry_out(effect);
            return true;
        }
        if self.in_play.is_empty() {
            return false;
        }
        let at = usize::from(self.choose(8)) % self.in_play.len();
        let (game, _) = self.in_play.swap_remove(at);
        let black = u32::from(self.choose(65));
        let winner = match black.cmp(&32) {
            std::cmp::Ordering::Greater => Some(Color::Black),
            std::cmp::Ordering::Less => Some(Color::White),
            std::cmp::Ordering::Equal => None,
        };
        let result = GameResult {
            winner,
            black,
            white: 64 - black,
            reason: EndReason::Normal,
        };
        if let Some(stored) = self.stored.games.iter_mut().find(|g| g.game == game) {
            stored.result = Some((winner, (black, 64 - black)));
        }
        let effects = self.desk.game_over(game, &result, &all_free);
        self.run(effects);
        true
    }

    fn carry_out(&mut self, effect: DeskEffect<u32>) {
        match effect {
            DeskEffect::Store(write) => self.store(write),
            DeskEffect::Tell(_, Event::TourneyNews { id, news }) => match news {
                TourneyNews::Round(r) => {
                    assert!(
                        self.stored_rounds.contains(&(id, r)),
                        "round {r} told before stored"
                    );
                }
                TourneyNews::Over(_) => self.over = true,
            },
            DeskEffect::MakeGame(pairing, terms) => self.make(pairing, terms),
            DeskEffect::DrawStart {
                tourney,
                round,
                pairing,
                ..
            } => {
                let effects = self
                    .desk
                    .start_drawn(tourney, round, pairing, Vec::new(), &all_free);
                self.run(effects);
            }
            DeskEffect::Wake(_, alarm) => {
                let effects = self.desk.wake(alarm, &all_free);
                self.run(effects);
            }
            _ => {}
        }
    }

    fn store(&mut self, write: TourneyWrite) {
        let id = write.tourney();
        assert!(
            self.writes_in_flight.insert(id),
            "two writes of {id} at once"
        );
        let stored = self.choose(4) != 0;
        if let (true, TourneyWrite::Round { round, .. }) = (stored, &write) {
            self.stored_rounds.insert((id, *round));
        }
        if stored {
            self.keep(write);
        }
        self.writes_in_flight.remove(&id);
        let effects = self.desk.stored(id, stored, &all_free);
        self.run(effects);
    }

    /// What a stored write leaves in the store.
    fn keep(&mut self, write: TourneyWrite) {
        let stored = &mut self.stored;
        match write {
            TourneyWrite::Round {
                round, forfeits, ..
            } => {
                stored.round = round;
                stored.forfeits.extend(forfeits);
            }
            TourneyWrite::Forfeit { forfeit, .. } => stored.forfeits.push(forfeit),
            TourneyWrite::Start { group, moves, .. } => stored.starts.push((group, moves)),
            TourneyWrite::Over { .. } => stored.over = true,
            TourneyWrite::Join { name, .. } => stored.players.push(name),
            TourneyWrite::Leave { name, .. } => stored.players.retain(|p| *p != name),
            TourneyWrite::New { .. } => {}
        }
    }

    fn make(&mut self, pairing: Pairing, terms: TourneyTerms) {
        assert!(
            self.stored_rounds.contains(&(terms.tourney, terms.round)),
            "a game made for a round not stored"
        );
        match self.choose(6) {
            0 => {
                let effects = self.desk.game_refused(pairing, terms);
                self.run(effects);
            }
            1 => {
                let effects = self.desk.game_unmade(pairing, &terms, &|_| false);
                self.run(effects);
            }
            _ => {
                let key = (
                    terms.round,
                    Name::clone(&pairing.black),
                    Name::clone(&pairing.white),
                );
                assert!(
                    self.games_made.insert(key),
                    "a pairing made twice: {pairing:?}"
                );
                self.next_game += 1;
                self.stored.games.push(StoredTourneyGame {
                    round: terms.round,
                    game: self.next_game,
                    black: pairing.black.to_string(),
                    white: pairing.white.to_string(),
                    result: None,
                });
                self.desk.game_made(&pairing, &terms, self.next_game);
                self.in_play.push((self.next_game, Color::Black));
            }
        }
    }
}

proptest! {
    #[test]
    fn every_tournament_ends_whatever_the_store_and_the_players_do(
        players in 2usize..7,
        swiss in any::<bool>(),
        choices in proptest::collection::vec(any::<u8>(), 1..64),
    ) {
        let kind = if swiss { TourneyKind::Swiss } else { TourneyKind::RoundRobin };
        let mut world = World::started(kind, players, choices);
        world.settle(None)?;
        world.ended()?;
    }

    #[test]
    fn every_tournament_ends_when_its_node_dies_and_another_takes_it_over(
        players in 2usize..7,
        swiss in any::<bool>(),
        choices in proptest::collection::vec(any::<u8>(), 1..64),
        dies_after in 1usize..60,
    ) {
        let kind = if swiss { TourneyKind::Swiss } else { TourneyKind::RoundRobin };
        let mut world = World::started(kind, players, choices);
        world.settle(Some(dies_after))?;
        world.ended()?;
    }
}

impl World {
    /// The tournament ended, was told so, and left no write behind.
    fn ended(&self) -> Result<(), TestCaseError> {
        let id = self.stored.id;
        prop_assert!(self.over, "the tournament ended");
        prop_assert!(!self.desk.is_busy(id), "writes left");
        let listed = self.desk.tourneys().list();
        prop_assert_eq!(listed.len(), 1);
        let stage = listed.first().map(|t| t.stage);
        prop_assert_eq!(stage, Some(flipline::protocol::TourneyStage::Over));
        Ok(())
    }
}
