//! The table core's rules, tested without actors: named cases, then random
//! runs of moves, resignations, disconnects, returns and timers against the
//! invariants in ARCHITECTURE.md.

use std::collections::HashMap;
use std::time::Duration;

use crate::clock::Moment;

use flipline::protocol::{ClockSpec, EndReason, Event, GameResult};
use flipline::{Color, Game, Move, Variant};
use proptest::prelude::*;

use super::table::{
    Effect, IfRefused, Played, Resent, Table, Timer, Turn, UndoStep, end_retry_delay,
};
use super::{Name, Phase, Sitter};
use crate::table::Hints;

/// A connection in these tests: a number.
type Conn = u32;

/// The moment a test starts from.
fn t0() -> Moment {
    Moment::from_micros(1_000_000)
}

/// Ann (connection 1) and Bob (2) in play with `base_ms` each and no
/// increment.
fn ann_and_bob_with_clock(base_ms: u64) -> Driver {
    let clock = ClockSpec {
        base_ms,
        increment_ms: 0,
    };
    Driver::new(
        [person("ann", Some(1)), person("bob", Some(2))],
        Some(clock),
        false,
    )
}

fn person(name: &str, conn: Option<Conn>) -> Sitter<Conn> {
    Sitter::Person(Name::from(name), conn)
}

/// Drives a table as its actor would: keeps the timers it asks for, answers
/// the engine, stores what it asks to store (ends only while `ends_stored`),
/// and records what each connection hears.
struct Driver {
    table: Table<Conn>,
    now: Moment,
    timers: HashMap<Timer, Moment>,
    heard: HashMap<Conn, Vec<Event>>,
    /// Ends stored.
    results: Vec<GameResult>,
    /// Whether the store takes ends.
    ends_stored: bool,
    /// Ends the store refused that are committed again until stored.
    pending: Vec<(GameResult, Vec<Effect<Conn>>)>,
    /// Resignations the store refused, taken back.
    taken_back: usize,
    /// `OVER` lines broadcast.
    overs: usize,
    ended: usize,
    stopped: bool,
    thinks: Vec<Turn>,
    /// Moves announced (`MOVED` broadcast).
    announced: usize,
    /// Engine questions and timers asked for after the game was over.
    late_asks: usize,
    /// The moves stored, with their times, as the store holds them.
    stored: Vec<(Move, Option<u64>)>,
}

impl Driver {
    fn new(seats: [Sitter<Conn>; 2], clock: Option<ClockSpec>, recovered: bool) -> Driver {
        let now = t0();
        let table = Table::new(7, Variant::Othello, clock, seats, &[], false, now);
        let mut driver = Driver {
            table,
            now,
            timers: HashMap::new(),
            heard: HashMap::new(),
            results: Vec::new(),
            ends_stored: true,
            pending: Vec::new(),
            taken_back: 0,
            overs: 0,
            ended: 0,
            stopped: false,
            thinks: Vec::new(),
            announced: 0,
            late_asks: 0,
            stored: Vec::new(),
        };
        let effects = driver.table.open(recovered, grace(), now);
        driver.run(effects);
        driver
    }

    /// Carries out effects; checks that a `CommitEnd` comes last.
    fn run(&mut self, effects: Vec<Effect<Conn>>) {
        let count = effects.len();
        for (i, effect) in effects.into_iter().enumerate() {
            let over = self.table.phase() == Phase::Over;
            if over && matches!(effect, Effect::Think { .. } | Effect::Schedule(..)) {
                self.late_asks += 1;
            }
            match effect {
                Effect::Broadcast(events) => {
                    let moved = events.iter().filter(|e| matches!(e, Event::Moved { .. }));
                    self.announced += moved.count();
                    let overs = events.iter().filter(|e| matches!(e, Event::Over { .. }));
                    self.overs += overs.count();
                    let audience: Vec<Conn> = self.table.audience().copied().collect();
                    for conn in audience {
                        self.heard.entry(conn).or_default().extend(events.clone());
                    }
                }
                Effect::Tell(conn, events) => self.heard.entry(conn).or_default().extend(events),
                Effect::Schedule(timer, after) => {
                    self.timers.insert(timer, self.now + after);
                }
                Effect::Unschedule(timer) => {
                    self.timers.remove(&timer);
                }
                Effect::Think { turn, .. } => self.thinks.push(turn),
                Effect::CommitEnd {
                    result,
                    then,
                    refused,
                } => {
                    assert_eq!(i + 1, count, "CommitEnd is the last effect");
                    match refused {
                        _ if self.ends_stored => self.store_end(result, then),
                        IfRefused::TakeBack => {
                            self.table.end_refused();
                            self.taken_back += 1;
                        }
                        IfRefused::Retry => self.pending.push((result, then)),
                    }
                }
                Effect::Ended(_) => self.ended += 1,
                // As the actor: not before its end is stored.
                Effect::Stop if !self.pending.is_empty() => {}
                Effect::Stop => self.stopped = true,
            }
        }
    }

    /// The end is stored: what followed it is carried out.
    fn store_end(&mut self, result: GameResult, then: Vec<Effect<Conn>>) {
        self.results.push(result);
        let then = self.table.end_stored(then, self.now);
        self.run(then);
    }

    /// The store takes ends again; those refused are stored, as the actor's
    /// retries would store them.
    fn heal(&mut self) {
        self.ends_stored = true;
        for (result, then) in std::mem::take(&mut self.pending) {
            self.store_end(result, then);
        }
    }

    /// `name` plays `mv`; the store takes it if `stored`.
    fn play(&mut self, name: &str, mv: Move, stored: bool) -> Result<(), String> {
        match self.table.play(name, mv, self.now) {
            Played::Commit(commit) => {
                let effects = if stored {
                    self.stored.push((commit.mv, Some(commit.ms)));
                    self.table.committed(&commit, self.now)
                } else {
                    self.table.rolled_back(commit, self.now)
                };
                self.run(effects);
                if stored { Ok(()) } else { Err("503".into()) }
            }
            Played::Refused(e, effects) => {
                self.run(effects);
                Err(e.to_string())
            }
        }
    }

    /// Answers the engine's oldest question with the first legal move.
    fn answer_bot(&mut self) {
        if self.thinks.is_empty() {
            return;
        }
        let turn = self.thinks.remove(0);
        if let Some(Played::Commit(commit)) = self.table.bot_answer(turn, None, self.now) {
            self.stored.push((commit.mv, Some(commit.ms)));
            let effects = self.table.committed(&commit, self.now);
            self.run(effects);
        }
    }

    /// Moves time on by `by`, firing every timer that falls due, in order.
    fn advance(&mut self, by: Duration) {
        let until = self.now + by;
        loop {
            let due = self
                .timers
                .iter()
                .filter(|(_, at)| **at <= until)
                .min_by_key(|(_, at)| **at)
                .map(|(timer, at)| (*timer, *at));
            let Some((timer, at)) = due else { break };
            self.timers.remove(&timer);
            self.now = self.now.max(at);
            let effects = self.table.timer_fired(timer, self.now);
            self.run(effects);
        }
        self.now = until;
    }

    /// `UNDO` from `name`, carried out as the actor does: the stored moves
    /// say how many stay, the store keeps those, then the table hears it.
    /// `Ok(true)` when moves were taken back, `Ok(false)` when the other
    /// player was asked.
    fn undo(&mut self, name: &str) -> Result<bool, String> {
        let take_back = self.table.undo(name).map_err(|e| e.to_string())?;
        let keep = match take_back.keep(&self.stored) {
            Ok(keep) => keep,
            Err(e) => {
                let effects = self.table.undo_failed();
                self.run(effects);
                return Err(e.to_string());
            }
        };
        match self.table.undo_allowed(name, &take_back) {
            UndoStep::Asked(effects) => {
                self.run(effects);
                Ok(false)
            }
            UndoStep::Store => {
                self.stored.truncate(keep as usize);
                let effects = self.table.taken_back(&self.stored, self.now);
                self.run(effects);
                Ok(true)
            }
        }
    }

    fn heard(&self, conn: Conn) -> &[Event] {
        self.heard.get(&conn).map_or(&[], Vec::as_slice)
    }

    fn over(&self) -> Option<(Option<Color>, EndReason)> {
        self.results.last().map(|r| (r.winner, r.reason))
    }
}

fn grace() -> Duration {
    Duration::from_secs(60)
}

fn two_people() -> Driver {
    Driver::new(
        [person("ann", Some(1)), person("bob", Some(2))],
        None,
        false,
    )
}

fn first_move(table: &Table<Conn>) -> Move {
    table
        .position()
        .legal_moves()
        .iter()
        .next()
        .map_or(Move::Pass, Move::Place)
}

#[test]
fn a_full_table_begins_with_the_whole_state_for_both() {
    let d = two_people();
    assert_eq!(d.table.phase(), Phase::Playing);
    for conn in [1, 2] {
        let heard = d.heard(conn);
        assert!(
            matches!(heard.first(), Some(Event::Start { black, white, .. }) if black == "ann" && white == "bob")
        );
        assert!(matches!(
            heard.last(),
            Some(Event::Turn {
                side: Color::Black,
                ..
            })
        ));
    }
}

#[test]
fn a_move_sent_again_is_played_once_whether_its_first_sending_was_played_or_not() {
    let mut d = two_people();
    let mv = first_move(&d.table);
    // Not played yet (its first sending never reached the game).
    assert_eq!(d.table.resent("ann", 0, mv), Resent::Play);
    assert_eq!(d.play("ann", mv, true), Ok(()));
    // Played and stored, its answer lost: played, by ann only, at that ply.
    assert_eq!(d.table.resent("ann", 0, mv), Resent::Played);
    assert_eq!(d.table.resent("bob", 0, mv), Resent::MovedOn { plies: 1 });
    let other = Move::Place("a1".parse().unwrap_or_else(|e| panic!("{e:?}")));
    assert_eq!(
        d.table.resent("ann", 0, other),
        Resent::MovedOn { plies: 1 }
    );
    // Bob moves: ann's move, sent again, is two plies back.
    let reply = first_move(&d.table);
    assert_eq!(d.play("bob", reply, true), Ok(()));
    assert_eq!(d.table.resent("ann", 0, mv), Resent::MovedOn { plies: 2 });
    assert_eq!(d.table.resent("ann", 2, first_move(&d.table)), Resent::Play);

    // A game taken over is rebuilt from its stored moves: the last one is
    // known there too.
    let stored: Vec<(Move, Option<u64>)> = vec![(mv, Some(5)), (reply, Some(7))];
    let seats = [person("ann", Some(1)), person("bob", Some(2))];
    let again = Table::new(7, Variant::Othello, None, seats, &stored, false, t0());
    assert_eq!(again.resent("bob", 1, reply), Resent::Played);
    assert_eq!(again.resent("ann", 1, reply), Resent::MovedOn { plies: 2 });
}

#[test]
fn an_undo_sent_again_is_carried_out_only_where_its_player_left_the_game() {
    let mut d = two_people();
    let mv = first_move(&d.table);
    assert_eq!(d.play("ann", mv, true), Ok(()));
    assert_eq!(d.table.undo_resent(1), Resent::Play);
    // A move since (or the take-back itself, stored by the dead node,
    // which leaves fewer plies): not carried out again.
    assert_eq!(d.table.undo_resent(0), Resent::MovedOn { plies: 1 });
    assert_eq!(d.table.undo_resent(2), Resent::MovedOn { plies: 1 });
}

#[test]
fn a_move_refused_by_the_store_is_not_taken_for_played_when_sent_again() {
    let mut d = two_people();
    let mv = first_move(&d.table);
    assert_eq!(d.play("ann", mv, false), Err("503".into()));
    assert_eq!(d.table.resent("ann", 0, mv), Resent::Play);
}

#[test]
fn a_move_is_announced_only_once_stored_and_undone_if_not() {
    let mut d = two_people();
    let mv = first_move(&d.table);
    let before = d.heard(2).len();
    assert_eq!(d.play("ann", mv, false), Err("503".into()));
    assert_eq!(
        d.heard(2).len(),
        before,
        "nothing heard of a move not stored"
    );
    assert_eq!(
        (d.table.plies(), d.table.position()),
        (0, Game::new(Variant::Othello))
    );
    assert_eq!(d.play("ann", mv, true), Ok(()));
    assert!(matches!(
        d.heard(2)[before],
        Event::Moved {
            side: Color::Black,
            ..
        }
    ));
    assert_eq!(d.table.plies(), 1);
    let refused = d.play("ann", first_move(&d.table), true);
    assert!(refused.is_err_and(|e| e.contains("not your turn")));
    assert!(
        d.play("eve", first_move(&d.table), true)
            .is_err_and(|e| e.contains("no seat"))
    );
}

#[test]
fn a_bot_to_move_is_asked_and_its_answer_for_a_past_ply_is_dropped() {
    let mut d = Driver::new([Sitter::Bot(1), person("ann", Some(1))], None, false);
    let first = Turn {
        ply: 0,
        takebacks: 0,
    };
    assert_eq!(d.thinks, [first]);
    let later = Turn { ply: 5, ..first };
    assert!(
        d.table.bot_answer(later, None, d.now).is_none(),
        "another ply"
    );
    d.answer_bot();
    assert_eq!(d.table.plies(), 1);
    assert!(
        d.table.bot_answer(first, None, d.now).is_none(),
        "ann's turn now"
    );
}

#[test]
fn in_hotseat_the_side_to_move_resigns() {
    let mut d = Driver::new(
        [person("solo", Some(1)), person("solo", Some(1))],
        None,
        false,
    );
    d.play("solo", first_move(&d.table), true)
        .unwrap_or_default();
    let effects = d.table.resign("solo").unwrap_or_default();
    d.run(effects);
    assert_eq!(d.over(), Some((Some(Color::Black), EndReason::Resign)));
    assert!(!d.stopped, "solo is still at the table");
    assert_eq!(
        d.heard(1)
            .iter()
            .filter(|e| matches!(e, Event::Over { .. }))
            .count(),
        1,
        "one person in both seats hears OVER once"
    );
}

#[test]
fn a_flag_falls_when_the_clock_runs_out_not_before() {
    let mut d = ann_and_bob_with_clock(1000);
    d.advance(Duration::from_millis(900));
    assert_eq!(d.over(), None);
    d.advance(Duration::from_millis(200));
    assert_eq!(d.over(), Some((Some(Color::White), EndReason::Time)));
    assert_eq!(d.ended, 1);
    assert!(d.timers.is_empty(), "no timer left: {:?}", d.timers);
}

#[test]
fn a_player_quitting_a_game_in_play_is_told_the_seat_is_kept_and_a_spectator_is_not() {
    let mut d = two_people();
    let told = d.table.seat_kept_on_quit("bob", grace());
    let told = told.unwrap_or_default();
    assert!(told.contains("is kept for 60s"), "{told}");
    assert!(told.contains("log in as bob and JOIN"), "{told}");
    assert_eq!(d.table.seat_kept_on_quit("eve", grace()), None);
    let effects = d.table.resign("ann").unwrap_or_default();
    d.run(effects);
    assert_eq!(d.table.seat_kept_on_quit("bob", grace()), None, "game over");
}

#[test]
fn a_seat_is_kept_for_the_grace_period_and_the_opponent_is_told() {
    let mut d = two_people();
    let effects = d.table.disconnected("bob", grace(), d.now);
    d.run(effects);
    assert!(
        matches!(d.heard(1).last(), Some(Event::Info(text)) if text.starts_with("bob disconnected"))
    );
    d.advance(grace() / 2);
    let effects = d.table.attach("bob", 3, d.now);
    d.run(effects);
    assert!(
        matches!(d.heard(3).first(), Some(Event::Start { .. })),
        "the state, at once"
    );
    d.advance(grace());
    assert_eq!(d.over(), None, "back in time: no abandon");
    let effects = d.table.disconnected("ann", grace(), d.now);
    d.run(effects);
    d.advance(grace());
    assert_eq!(d.over(), Some((Some(Color::White), EndReason::Abandon)));
}

#[test]
fn when_both_are_away_the_longer_away_loses_and_a_recovered_game_is_drawn() {
    let mut d = two_people();
    let effects = d.table.disconnected("ann", grace(), d.now);
    d.run(effects);
    d.advance(Duration::from_secs(1));
    let effects = d.table.disconnected("bob", grace(), d.now);
    d.run(effects);
    d.advance(grace() * 2);
    assert_eq!(d.over(), Some((Some(Color::White), EndReason::Abandon)));
    assert!(d.stopped, "nobody is left at the finished game");

    let mut r = Driver::new([person("ann", None), person("bob", None)], None, true);
    r.advance(grace() + Duration::from_millis(1));
    assert_eq!(r.over(), Some((None, EndReason::Abandon)));
    assert_eq!(r.results.len(), 1);
}

#[test]
fn the_last_one_to_leave_a_finished_game_stops_it_and_the_other_is_told() {
    let mut d = two_people();
    let effects = d.table.resign("ann").unwrap_or_default();
    d.run(effects);
    let effects = d.table.detach("bob", false);
    d.run(effects);
    assert!(matches!(d.heard(1).last(), Some(Event::Info(t)) if t == "bob left game 7"));
    assert!(!d.stopped);
    let effects = d.table.detach("ann", false);
    d.run(effects);
    assert!(d.stopped);
}

#[test]
fn hints_follow_the_policy_and_the_turn() {
    let bot = Driver::new([person("ann", Some(1)), Sitter::Bot(2)], None, false);
    let people = two_people();
    let policy = Hints {
        bot_games: true,
        hotseat_games: true,
        human_games: false,
    };
    assert!(bot.table.hint("ann", &policy).is_ok());
    assert!(
        people
            .table
            .hint("ann", &policy)
            .is_err_and(|e| e.to_string().contains("hints are off"))
    );
    assert!(
        people
            .table
            .hint(
                "bob",
                &Hints {
                    human_games: true,
                    ..policy
                }
            )
            .is_err_and(|e| e.to_string().contains("not your turn"))
    );
}

/// One step of a random run.
#[derive(Clone, Debug)]
enum Step {
    /// A person plays their first legal move (or tries out of turn).
    Move {
        who: usize,
        stored: bool,
    },
    /// A square that may be illegal.
    Square {
        who: usize,
        index: u8,
    },
    Resign {
        who: usize,
    },
    Disconnect {
        who: usize,
    },
    Attach {
        who: usize,
    },
    Advance {
        ms: u64,
    },
    Bot,
    /// The store refuses ends from now (`false`), or takes them again and
    /// those refused meanwhile are stored (`true`).
    StoreEnds {
        healthy: bool,
    },
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        4 => (0..2usize, prop::bool::weighted(0.9)).prop_map(|(who, stored)| Step::Move { who, stored }),
        1 => (0..2usize, 0..64u8).prop_map(|(who, index)| Step::Square { who, index }),
        1 => (0..2usize).prop_map(|who| Step::Resign { who }),
        1 => (0..2usize).prop_map(|who| Step::Disconnect { who }),
        1 => (0..2usize).prop_map(|who| Step::Attach { who }),
        2 => (0..90_000u64).prop_map(|ms| Step::Advance { ms }),
        2 => Just(Step::Bot),
        1 => prop::bool::ANY.prop_map(|healthy| Step::StoreEnds { healthy }),
    ]
}

const NAMES: [&str; 2] = ["ann", "bob"];

proptest! {
    /// Whatever happens: a game ends at most once, its end is stored before
    /// anyone hears it and the lobby is told first (of a resignation, once it
    /// is stored); a resignation the store refuses changes nothing; an ending
    /// nobody asked for that the store refuses leaves the game over, taking
    /// no move, until it is stored and announced; a move is heard only once
    /// stored; a game whose people are all away ends by abandon (or its
    /// clock) once their grace runs out; the opponent hears of every lost
    /// seat; after the end nothing more is asked of the engine or the clock.
    #[test]
    fn random_runs_keep_the_table_rules(
        bot in prop::bool::ANY,
        clocked in prop::bool::ANY,
        steps in prop::collection::vec(step(), 1..80),
    ) {
        let seats = if bot {
            [person("ann", Some(1)), Sitter::Bot(1)]
        } else {
            [person("ann", Some(1)), person("bob", Some(2))]
        };
        let clock = clocked.then_some(ClockSpec { base_ms: 60_000, increment_ms: 1000 });
        let mut d = Driver::new(seats, clock, false);
        let mut mirror = Game::new(Variant::Othello);
        let mut here = [true, !bot];
        let mut plies = 0;
        for step in steps {
            match step {
                Step::Move { who, stored } => {
                    let mv = first_move(&d.table);
                    let played = d.play(NAMES[who], mv, stored).is_ok();
                    prop_assert!(!played || d.pending.is_empty(), "no move while the end waits");
                    if played {
                        prop_assert!(mirror.apply(mv).is_ok());
                        // Sent again, it is played already; never again.
                        prop_assert_eq!(d.table.resent(NAMES[who], plies, mv), Resent::Played);
                        plies += 1;
                        // An UNDO sent again is carried out only at the
                        // plies its player heard of, never before or after.
                        prop_assert_eq!(d.table.undo_resent(plies), Resent::Play);
                        prop_assert_eq!(d.table.undo_resent(plies - 1), Resent::MovedOn { plies });
                    }
                }
                Step::Square { who, index } => {
                    if let Some(sq) = flipline::Square::new(index / 8, index % 8)
                        && d.play(NAMES[who], Move::Place(sq), true).is_ok()
                    {
                        prop_assert!(mirror.apply(Move::Place(sq)).is_ok());
                        plies += 1;
                    }
                }
                Step::Resign { who } => {
                    let before = (format!("{:?}", d.table), d.heard.clone(), d.timers.clone(), d.ended);
                    let taken_back = d.taken_back;
                    if let Ok(effects) = d.table.resign(NAMES[who]) {
                        d.run(effects);
                    }
                    if d.taken_back > taken_back {
                        let after = (format!("{:?}", d.table), d.heard.clone(), d.timers.clone(), d.ended);
                        prop_assert_eq!(before, after, "a refused resignation changes nothing");
                    }
                }
                Step::StoreEnds { healthy: true } => d.heal(),
                Step::StoreEnds { healthy: false } => d.ends_stored = false,
                Step::Disconnect { who } if here[who] && (who == 0 || !bot) => {
                    let playing = d.table.phase() == Phase::Playing;
                    let effects = d.table.disconnected(NAMES[who], grace(), d.now);
                    d.run(effects);
                    here[who] = false;
                    let other = 1 - who;
                    if playing && here[other] {
                        let told = d.heard(other as Conn + 1).iter().any(|e| matches!(e, Event::Info(t) if t.starts_with(NAMES[who])));
                        prop_assert!(told, "the opponent is told of the lost seat");
                    }
                }
                Step::Attach { who } if !here[who] && (who == 0 || !bot) => {
                    let effects = d.table.attach(NAMES[who], who as Conn + 1, d.now);
                    d.run(effects);
                    here[who] = true;
                }
                Step::Advance { ms } => d.advance(Duration::from_millis(ms)),
                Step::Bot => {
                    d.answer_bot();
                    if d.table.plies() > plies {
                        prop_assert!(mirror.apply(first_legal(&mirror)).is_ok());
                        plies += 1;
                    }
                }
                Step::Disconnect { .. } | Step::Attach { .. } => {}
            }
            prop_assert!(d.results.len() + d.pending.len() <= 1, "a game ends once");
            prop_assert_eq!(d.results.len() + d.pending.len(), d.ended);
            prop_assert_eq!(d.overs, d.results.len(), "OVER once, after the end is stored");
            prop_assert!(d.pending.is_empty() || d.table.phase() == Phase::Over);
            prop_assert_eq!(d.table.plies(), plies);
            prop_assert_eq!(d.announced as u32, plies, "each stored move announced once");
            prop_assert_eq!(d.table.position(), mirror);
            prop_assert_eq!(d.late_asks, 0);
        }
        // Everyone away: once the grace period has run out the game is over.
        d.heal();
        for who in 0..2 {
            if here[who] && (who == 0 || !bot) {
                let effects = d.table.disconnected(NAMES[who], grace(), d.now);
                d.run(effects);
            }
        }
        d.advance(grace() + Duration::from_millis(1));
        prop_assert_eq!(d.table.phase(), Phase::Over);
        prop_assert!(d.stopped, "a finished game nobody is at stops");
        prop_assert!(!d.timers.contains_key(&Timer::Flag) && !d.timers.contains_key(&Timer::Bot));
    }
}

fn first_legal(game: &Game) -> Move {
    game.legal_moves()
        .iter()
        .next()
        .map_or(Move::Pass, Move::Place)
}

#[test]
fn a_game_played_out_ends_normally_once_with_the_lobby_told_first() {
    let mut d = Driver::new(
        [person("solo", Some(1)), person("solo", Some(1))],
        None,
        false,
    );
    let mut moves = 0;
    while d.table.phase() == Phase::Playing {
        assert!(d.play("solo", first_move(&d.table), true).is_ok());
        moves += 1;
        assert!(moves <= 64, "a game of othello ends");
    }
    let score = first_legal_game_score();
    assert_eq!(d.over(), Some((score.winner, EndReason::Normal)));
    assert_eq!((d.results.len(), d.ended), (1, 1));
    let heard = d.heard(1);
    assert!(matches!(
        heard.last(),
        Some(Event::Over {
            reason: EndReason::Normal,
            ..
        })
    ));
    assert!(matches!(
        heard[heard.len() - 2],
        Event::Board { to_move: None, .. }
    ));
    assert!(
        d.play("solo", first_move(&d.table), true)
            .is_err_and(|e| e.contains("is over"))
    );
}

/// The score of othello played with the first legal move on every turn.
fn first_legal_game_score() -> flipline::Outcome {
    let mut game = Game::new(Variant::Othello);
    while !game.is_over() {
        let _ = game.apply(first_legal(&game));
    }
    game.score()
}

#[test]
fn a_resignation_the_store_refuses_is_taken_back_and_the_game_goes_on() {
    let mut d = ann_and_bob_with_clock(60_000);
    d.advance(Duration::from_secs(1));
    d.ends_stored = false;
    let before = format!("{:?}", d.table);
    let heard = (d.heard(1).len(), d.heard(2).len());
    let effects = d.table.resign("bob").unwrap_or_default();
    d.run(effects);
    assert_eq!(d.taken_back, 1);
    assert_eq!(format!("{:?}", d.table), before, "the table is as it was");
    assert_eq!(
        (d.heard(1).len(), d.heard(2).len()),
        heard,
        "nobody heard of it"
    );
    assert_eq!((d.ended, d.results.len()), (0, 0), "the lobby was not told");
    assert!(d.timers.contains_key(&Timer::Flag), "black's clock runs on");
    assert_eq!(d.play("ann", first_move(&d.table), true), Ok(()));
    d.heal();
    let effects = d.table.resign("bob").unwrap_or_default();
    d.run(effects);
    assert_eq!(d.over(), Some((Some(Color::Black), EndReason::Resign)));
    assert_eq!((d.ended, d.overs), (1, 1));
}

#[test]
fn an_ending_nobody_asked_for_is_announced_once_stored_and_takes_no_move_meanwhile() {
    let mut d = ann_and_bob_with_clock(1000);
    d.ends_stored = false;
    let heard = d.heard(2).len();
    d.advance(Duration::from_millis(1100));
    assert_eq!(
        (d.ended, d.results.len(), d.pending.len()),
        (1, 0, 1),
        "the lobby knows, the store not yet"
    );
    assert_eq!(
        d.heard(2).len(),
        heard,
        "nobody hears of it before it is stored"
    );
    assert_eq!(d.table.phase(), Phase::Over);
    let refused = d.play("ann", first_move(&d.table), true);
    assert!(refused.is_err_and(|e| e.contains("is over")));
    d.heal();
    assert_eq!(d.over(), Some((Some(Color::White), EndReason::Time)));
    assert_eq!(d.overs, 1);
    assert!(matches!(
        d.heard(2).last(),
        Some(Event::Over {
            reason: EndReason::Time,
            ..
        })
    ));
}

#[test]
fn a_table_stops_once_its_end_is_stored_unless_someone_came_back_meanwhile() {
    let mut back = Driver::new([person("ann", None), person("bob", None)], None, true);
    back.ends_stored = false;
    back.advance(grace() + Duration::from_millis(1));
    assert_eq!(back.pending.len(), 1);
    let effects = back.table.attach("ann", 1, back.now);
    back.run(effects);
    back.heal();
    assert!(!back.stopped, "ann is at the table");
    assert!(matches!(
        back.heard(1).last(),
        Some(Event::Over {
            reason: EndReason::Abandon,
            ..
        })
    ));

    let mut gone = Driver::new([person("ann", None), person("bob", None)], None, true);
    gone.ends_stored = false;
    gone.advance(grace() + Duration::from_millis(1));
    let effects = gone.table.detach("ann", false);
    gone.run(effects);
    assert!(!gone.stopped, "not before the end is stored");
    gone.heal();
    assert!(gone.stopped);
}

#[test]
fn an_ending_is_committed_again_ever_later_up_to_a_second_apart() {
    let ms: Vec<u128> = (1..=6).map(|n| end_retry_delay(n).as_millis()).collect();
    assert_eq!(ms, [100, 200, 400, 800, 1000, 1000]);
    assert_eq!(end_retry_delay(0).as_millis(), 100);
    assert_eq!(end_retry_delay(u32::MAX), Duration::from_secs(1));
}

/// The position the stored moves lead to, from the start.
fn replayed(moves: &[(Move, Option<u64>)]) -> Game {
    let mut game = Game::new(Variant::Othello);
    for &(mv, _) in moves {
        game.apply(mv).unwrap();
    }
    game
}

#[test]
fn against_a_bot_undo_takes_back_the_persons_move_and_the_bots_reply() {
    let mut d = Driver::new([person("ann", Some(1)), Sitter::Bot(1)], None, false);
    assert!(
        d.undo("ann").is_err_and(|e| e.contains("no move")),
        "nothing to take back yet"
    );
    for _ in 0..2 {
        d.play("ann", first_move(&d.table), true).unwrap();
        d.answer_bot();
    }
    assert_eq!(d.table.plies(), 4);
    assert_eq!(d.undo("ann"), Ok(true));
    assert_eq!(d.table.plies(), 2);
    assert_eq!(d.table.position(), replayed(&d.stored));
    assert_eq!(d.table.position().to_move(), Color::Black);
    let heard = d.heard(1);
    let undone = heard.iter().position(|e| {
        *e == Event::Undone {
            game: 7,
            plies: 2,
            taken: 2,
        }
    });
    let undone = undone.expect("UNDONE heard");
    assert!(matches!(heard.get(undone + 1), Some(Event::Board { .. })));
    assert!(matches!(
        heard.get(undone + 2),
        Some(Event::Turn {
            side: Color::Black,
            ..
        })
    ));
    assert!(d.undo("eve").is_err_and(|e| e.contains("no seat")));
}

#[test]
fn a_bots_answer_thought_before_a_take_back_is_dropped() {
    let mut d = Driver::new([person("ann", Some(1)), Sitter::Bot(1)], None, false);
    d.play("ann", first_move(&d.table), true).unwrap();
    d.answer_bot();
    d.play("ann", first_move(&d.table), true).unwrap();
    // The bot thinks about ply 3; ann takes her move back, then plays
    // another: ply 3 again, with another position.
    let stale = *d.thinks.last().unwrap();
    assert_eq!(d.undo("ann"), Ok(true));
    assert_eq!(d.table.plies(), 2);
    let moves = d.table.position().legal_moves();
    let other = moves.iter().last().map(Move::Place).unwrap();
    d.play("ann", other, true).unwrap();
    assert!(
        d.table.bot_answer(stale, None, d.now).is_none(),
        "the answer from before the take-back"
    );
    let fresh = *d.thinks.last().unwrap();
    assert_eq!(fresh.ply, stale.ply);
    assert!(d.table.bot_answer(fresh, None, d.now).is_some());
}

#[test]
fn between_two_people_undo_waits_for_the_other_and_a_move_declines_it() {
    let mut d = two_people();
    assert!(
        d.undo("ann").is_err_and(|e| e.contains("no move")),
        "nobody is asked to take back nothing"
    );
    assert_eq!(d.table.undo_asked_by(), None);
    d.play("ann", first_move(&d.table), true).unwrap();
    assert_eq!(d.undo("ann"), Ok(false), "bob is asked");
    assert!(d.heard(2).contains(&Event::UndoAsked {
        game: 7,
        name: "ann".into()
    }));
    assert!(d.undo("ann").is_err_and(|e| e.contains("asked already")));
    assert_eq!(d.table.plies(), 1, "nothing taken back before bob agrees");
    // Bob plays instead: the offer lapses.
    d.play("bob", first_move(&d.table), true).unwrap();
    assert_eq!(d.table.undo_asked_by(), None);
    assert_eq!(d.undo("ann"), Ok(false));
    // Bob agrees: ann's move and bob's reply are taken back.
    assert_eq!(d.undo("bob"), Ok(true));
    assert_eq!(d.table.plies(), 0);
    assert_eq!(d.table.position(), Game::new(Variant::Othello));
    assert_eq!(d.table.undo_asked_by(), None);
}

#[test]
fn moves_the_game_started_from_are_never_taken_back() {
    let start: Vec<(Move, Option<u64>)> = ["f5", "d6"]
        .iter()
        .map(|m| (m.parse().unwrap(), None))
        .collect();
    let seats = [person("ann", Some(1)), Sitter::Bot(1)];
    let mut table = Table::new(7, Variant::Othello, None, seats, &start, false, t0());
    let _ = table.open(false, grace(), t0());
    let take_back = table.undo("ann").expect("ann may take back in a bot game");
    assert!(
        take_back
            .keep(&start)
            .is_err_and(|e| e.to_string().contains("no move"))
    );
    let mut moved = start.clone();
    moved.push(("c3".parse().unwrap(), Some(10)));
    assert!(
        take_back
            .keep(&moved)
            .is_err_and(|e| e.to_string().contains("moved on")),
        "the stored moves are not what the table counted"
    );
}

#[test]
fn in_hotseat_undo_takes_back_the_last_placement_and_the_passes_after_it() {
    let solo = || person("solo", Some(1));
    let mut d = Driver::new([solo(), solo()], None, false);
    d.play("solo", first_move(&d.table), true).unwrap();
    d.play("solo", first_move(&d.table), true).unwrap();
    assert_eq!(d.undo("solo"), Ok(true));
    assert_eq!(d.table.plies(), 1, "one ply: solo plays both sides");
    // Play on, always the first legal move, to the first forced pass.
    while !d.table.position().must_pass() {
        d.play("solo", first_move(&d.table), true).unwrap();
        assert_eq!(d.table.phase(), Phase::Playing, "this line has a pass");
    }
    let before_placement = d.table.plies() - 1;
    d.play("solo", Move::Pass, true).unwrap();
    assert_eq!(d.undo("solo"), Ok(true));
    assert_eq!(d.table.plies(), before_placement);
    assert_eq!(d.table.position(), replayed(&d.stored));
}

#[test]
fn a_take_back_puts_the_clocks_back_and_tells_them() {
    let mut d = Driver::new(
        [person("ann", Some(1)), Sitter::Bot(1)],
        Some(ClockSpec {
            base_ms: 60_000,
            increment_ms: 1_000,
        }),
        false,
    );
    d.advance(Duration::from_secs(5));
    d.play("ann", first_move(&d.table), true).unwrap();
    d.answer_bot();
    d.advance(Duration::from_secs(7));
    d.play("ann", first_move(&d.table), true).unwrap();
    d.answer_bot();
    assert_eq!(d.undo("ann"), Ok(true));
    let clock = d.heard(1).iter().rev().find_map(|e| match e {
        Event::Clock {
            black_ms,
            white_ms,
            running,
            ..
        } => Some((*black_ms, *white_ms, *running)),
        _ => None,
    });
    // Ann's first move took 5 s (plus the 1 s increment); her second is gone.
    assert_eq!(clock, Some((56_000, 61_000, Some(Color::Black))));
}

#[test]
fn a_snapshot_tells_the_clocks_and_a_game_without_them_does_not() {
    let mut d = ann_and_bob_with_clock(60_000);
    d.advance(Duration::from_secs(2));
    let effects = d.table.watch(9, 9, d.now);
    d.run(effects);
    assert_eq!(
        d.heard(9).last(),
        Some(&Event::Clock {
            game: 7,
            black_ms: 58_000,
            white_ms: 60_000,
            running: Some(Color::Black)
        })
    );
    let mut plain = two_people();
    let effects = plain.table.watch(9, 9, plain.now);
    plain.run(effects);
    assert!(
        !plain
            .heard(9)
            .iter()
            .any(|e| matches!(e, Event::Clock { .. }))
    );
}

proptest! {
    /// Moves and take-backs in any order against a bot: the position is
    /// always what the stored moves lead to, and a take-back never leaves
    /// the bot to move.
    #[test]
    fn take_backs_keep_the_table_and_the_store_in_step(
        steps in proptest::collection::vec(0u8..4, 1..60),
    ) {
        let mut d = Driver::new([person("ann", Some(1)), Sitter::Bot(1)], None, false);
        for step in steps {
            if d.table.phase() != Phase::Playing {
                break;
            }
            match step {
                0 => {
                    if d.undo("ann") == Ok(true) {
                        prop_assert_eq!(d.table.position().to_move(), Color::Black);
                    }
                }
                _ if d.table.position().to_move() == Color::Black => {
                    let _ = d.play("ann", first_move(&d.table), true);
                }
                _ => d.answer_bot(),
            }
            prop_assert_eq!(d.table.plies() as usize, d.stored.len());
            prop_assert_eq!(d.table.position(), replayed(&d.stored));
        }
    }
}

#[test]
fn a_bots_answer_during_a_take_back_is_held_back_and_asked_again_if_it_fails() {
    let mut d = Driver::new([person("ann", Some(1)), Sitter::Bot(1)], None, false);
    d.play("ann", first_move(&d.table), true).unwrap();
    let thinking = *d.thinks.last().unwrap();
    // The take-back is under way (its moves being read) when the bot answers.
    let take_back = d.table.undo("ann").unwrap();
    assert!(
        d.table.bot_answer(thinking, None, d.now).is_none(),
        "held back"
    );
    assert_eq!(d.table.plies(), 1, "the bot's move was not applied");
    // The store refuses the take-back: the bot is asked again, and plays.
    let effects = d.table.undo_failed();
    assert!(
        matches!(effects.as_slice(), [Effect::Think { turn, .. }] if *turn == thinking),
        "{effects:?}"
    );
    assert!(d.table.bot_answer(thinking, None, d.now).is_some());
    // Had it been stored, the answer would have been for a position gone.
    let _ = take_back;
}
