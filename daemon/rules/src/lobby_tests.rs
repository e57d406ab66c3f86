//! The lobby core's rules, tested without actors: named cases for each
//! command, then random sequences of commands from several players, as
//! pipelined and concurrent clients would interleave them, against the
//! lobby's invariants.

use std::collections::HashMap;

use flipline::protocol::{ErrorCode, GameId, NewGame, Opponent, SeatChoice};
use flipline::{Color, Variant};
use proptest::prelude::*;

use super::lobby::{Done, Left, LobbyCore, LobbyEffect, Order, Rematched, SeekWanted, Sought};
use super::{ConnId, Name, Phase};

/// A lobby whose routes are the game numbers themselves, numbering from 1.
pub(super) struct Harness {
    pub(super) core: LobbyCore<GameId>,
    pub(super) next: GameId,
    /// What each connection was told it sits in (`Seated`).
    pub(super) seated: HashMap<ConnId, GameId>,
    /// Orders to each game, in order.
    orders: HashMap<GameId, Vec<Order>>,
    /// Rematches each finished game started.
    rematches: HashMap<GameId, usize>,
    /// Whether the store refuses the writes of held decisions.
    pub(super) failing: bool,
}

/// Round 1 of tournament 1: a casual othello game from the usual start.
pub(super) fn tourney_terms() -> super::lobby::TourneyTerms {
    super::lobby::TourneyTerms {
        tourney: 1,
        round: 1,
        variant: Variant::Othello,
        clock: None,
        rated: false,
        start: Vec::new(),
    }
}

impl Harness {
    pub(super) fn new() -> Harness {
        Harness {
            core: LobbyCore::new(),
            next: 1,
            seated: HashMap::new(),
            orders: HashMap::new(),
            rematches: HashMap::new(),
            failing: false,
        }
    }

    /// Carries out a decision as the shell does: a held one once its write
    /// is stored, or not at all (503) when the store refuses it.
    pub(super) fn settle<T>(&mut self, done: Done<T, GameId>) -> Result<T, u16> {
        if let Some(held) = done.held {
            if self.failing {
                self.core.not_stored(held);
                return Err(503);
            }
            self.core.stored(held);
        }
        self.carry_out(done.effects);
        Ok(done.reply)
    }

    fn carry_out(&mut self, effects: Vec<LobbyEffect<GameId>>) {
        for effect in effects {
            match effect {
                LobbyEffect::Launch(launch) => {
                    for conn in launch.seated {
                        self.seated.insert(conn, launch.id);
                    }
                    self.core.set_route(launch.id, launch.id);
                }
                LobbyEffect::ToGame(game, order) => {
                    self.orders.entry(game).or_default().push(order)
                }
                LobbyEffect::StoreSeats { .. }
                | LobbyEffect::StoreCancel(_)
                | LobbyEffect::Tell(..) => {}
            }
        }
    }

    pub(super) fn login(&mut self, name: &str, conn: ConnId) {
        assert!(self.core.login(&Name::from(name), conn, None).is_ok());
    }

    pub(super) fn new_game(&mut self, name: &str, opponent: Opponent) -> Result<GameId, u16> {
        let spec = NewGame {
            variant: Variant::Othello,
            seat: SeatChoice::Black,
            opponent,
            clock: None,
            from: Vec::new(),
        };
        let next = &mut self.next;
        let id = move || take(next);
        let done = self
            .core
            .new_game(&Name::from(name), &spec, id, true)
            .map_err(code)?;
        self.settle(done)
    }

    pub(super) fn seek(&mut self, name: &str, variant: Variant) -> Result<Sought, u16> {
        let next = &mut self.next;
        let id = move || take(next);
        let done = self
            .core
            .seek(
                &Name::from(name),
                SeekWanted::casual(variant, None),
                id,
                true,
            )
            .map_err(code)?;
        self.settle(done)
    }

    pub(super) fn join(&mut self, name: &str, game: GameId) -> Result<(GameId, Color), u16> {
        let done = self.core.join(&Name::from(name), game).map_err(code)?;
        self.settle(done)
    }

    fn sit_away(&mut self, name: &str, game: GameId) -> Result<(), u16> {
        let done = self.core.sit_away(&Name::from(name), game).map_err(code)?;
        self.settle(done).map(|_| ())
    }

    pub(super) fn leave(&mut self, name: &str, watching: bool) -> Result<Left, u16> {
        let done = self.core.leave(&Name::from(name), watching).map_err(code)?;
        self.settle(done)
    }

    /// A tournament's round asks for a game between `black` and `white`.
    fn tourney_game(&mut self, black: &str, white: &str) -> Result<GameId, u16> {
        let next = &mut self.next;
        let id = move || take(next);
        let terms = tourney_terms();
        let (black, white) = (Name::from(black), Name::from(white));
        let done = (self.core)
            .tourney_game((&black, &white), [false; 2], terms, id)
            .map_err(code)?;
        self.settle(done)
    }

    fn rematch(&mut self, name: &str) -> Result<Rematched, String> {
        let from = self.core.seat_of(name);
        let next = &mut self.next;
        let id = move || take(next);
        let done = self
            .core
            .rematch(&Name::from(name), id)
            .map_err(|e| e.to_string())?;
        let reply = self.settle(done).map_err(|code| code.to_string())?;
        if let (Rematched::Game(_), Some(from)) = (reply, from) {
            *self.rematches.entry(from).or_default() += 1;
        }
        Ok(reply)
    }

    pub(super) fn gone(&mut self, name: &str, conn: ConnId) {
        let effects = self.core.gone(conn, &Name::from(name));
        self.carry_out(effects);
    }

    fn phase(&self, game: GameId) -> Option<Phase> {
        self.core.game(game).map(|e| e.phase)
    }
}

/// The next game number, taken only when the core asks for one.
pub(super) fn take(next: &mut GameId) -> GameId {
    *next += 1;
    *next - 1
}

fn code(e: crate::refusal::Refusal) -> u16 {
    e.code().number()
}

#[test]
fn seeks_left_side_by_side_by_a_pairing_put_back_are_paired() {
    let mut h = Harness::new();
    for (name, conn) in [("ann", 1), ("bob", 2), ("cy", 3)] {
        h.login(name, conn);
    }
    assert_eq!(h.seek("ann", Variant::Othello), Ok(Sought::Seeking));
    let next = &mut h.next;
    let paired = (h.core)
        .seek(
            &Name::from("bob"),
            SeekWanted::casual(Variant::Othello, None),
            move || take(next),
            true,
        )
        .unwrap();
    let held = paired.held.expect("a pairing waits for its write");
    // Cy seeks the same game while the pairing waits, then the store
    // refuses it: Ann's seek is back, beside Cy's.
    assert_eq!(h.seek("cy", Variant::Othello), Ok(Sought::Seeking));
    h.core.not_stored(held);
    assert_eq!(h.core.check_invariants(), Ok(()));
    let next = &mut h.next;
    let done = h
        .core
        .pair_waiting(move || take(next), true)
        .expect("two seeks match");
    assert!(done.held.is_some(), "held like any pairing");
    let launch = done.effects.iter().find_map(|e| match e {
        LobbyEffect::Launch(launch) => Some(launch.clone()),
        _ => None,
    });
    let launch = launch.expect("a game starts");
    assert_eq!(launch.seated, vec![1, 3], "both are told their seat");
    assert_eq!(h.settle(done), Ok(launch.id));
    assert_eq!(h.core.seat_of("ann"), Some(launch.id));
    assert_eq!(h.core.seat_of("cy"), Some(launch.id));
    let next = &mut h.next;
    assert!(h.core.pair_waiting(move || take(next), true).is_none());
    assert_eq!(h.core.check_invariants(), Ok(()));
}

#[test]
fn a_seeker_is_paired_with_the_next_and_both_sit_in_the_game() {
    let mut h = Harness::new();
    h.login("ann", 1);
    h.login("bob", 2);
    assert_eq!(h.seek("ann", Variant::Othello), Ok(Sought::Seeking));
    assert_eq!(
        h.seek("bob", Variant::Anti),
        Ok(Sought::Seeking),
        "another game: both wait"
    );
    assert_eq!(
        h.seek("bob", Variant::Othello),
        Ok(Sought::Paired(1)),
        "a new seek replaces the old"
    );
    assert_eq!(
        (h.core.seat_of("ann"), h.core.seat_of("bob")),
        (Some(1), Some(1))
    );
    assert_eq!(h.seated.get(&1), Some(&1), "the waiting one is told");
    assert_eq!(h.phase(1), Some(Phase::Playing));
    assert_eq!(h.core.check_invariants(), Ok(()));
}

#[test]
fn nobody_in_a_game_in_play_gets_another() {
    let mut h = Harness::new();
    h.login("ann", 1);
    h.login("bob", 2);
    h.login("cy", 3);
    let g = h.new_game("ann", Opponent::Bot(1)).unwrap_or_default();
    assert_eq!(h.new_game("ann", Opponent::Hotseat), Err(409));
    assert_eq!(h.seek("ann", Variant::Othello), Err(409));
    let open = h.new_game("bob", Opponent::Open).unwrap_or_default();
    assert_eq!(h.join("ann", open), Err(409));
    assert_eq!(h.leave("ann", false), Err(409));
    assert_eq!(h.join("cy", g), Err(409), "no free seat");
    assert_eq!(h.join("cy", 99), Err(404));
    assert_eq!(h.join("cy", open), Ok((open, Color::White)));
    assert!(matches!(
        h.orders[&open].last(),
        Some(Order::Fill {
            color: Color::White,
            ..
        })
    ));
    assert_eq!(h.core.check_invariants(), Ok(()));
}

#[test]
fn making_or_joining_a_game_leaves_an_open_one_and_a_finished_one() {
    let mut h = Harness::new();
    h.login("ann", 1);
    h.login("bob", 2);
    let open = h.new_game("ann", Opponent::Open).unwrap_or_default();
    let bot = h.new_game("ann", Opponent::Bot(2)).unwrap_or_default();
    assert_eq!(h.phase(open), None, "the open game closed");
    assert_eq!(h.orders[&open], [Order::Cancel]);
    h.core.ended(bot);
    assert_eq!(h.seek("ann", Variant::Othello), Ok(Sought::Seeking));
    assert!(matches!(
        h.orders[&bot].last(),
        Some(Order::Detach { quiet: false, .. })
    ));
    assert_eq!(h.core.seat_of("ann"), None);
    assert_eq!(
        h.leave("ann", true),
        Ok(Left::StopWatching),
        "watching before the seek"
    );
    assert_eq!(h.leave("ann", false), Ok(Left::SeekWithdrawn));
    assert_eq!(h.leave("ann", false), Err(409));
}

#[test]
fn a_rematch_needs_every_person_and_happens_once() {
    let mut h = Harness::new();
    h.login("ann", 1);
    h.login("bob", 2);
    let g = h.new_game("ann", Opponent::Open).unwrap_or_default();
    assert!(h.join("bob", g).is_ok());
    assert_eq!(h.rematch("ann"), Err(format!("game {g} is not over")));
    h.core.ended(g);
    assert_eq!(h.rematch("ann"), Ok(Rematched::Waiting));
    assert_eq!(
        h.rematch("ann"),
        Ok(Rematched::Waiting),
        "asking twice is one vote"
    );
    let Ok(Rematched::Game(next)) = h.rematch("bob") else {
        panic!("bob's vote completes the rematch");
    };
    let seats = &h.core.game(next).map(|e| e.seats.clone());
    let names = seats
        .as_ref()
        .map(|[b, w]| (b.as_ref().map(|o| o.name()), w.as_ref().map(|o| o.name())));
    assert_eq!(
        names,
        Some((Some(Name::from("bob")), Some(Name::from("ann")))),
        "colours swapped"
    );
    assert_eq!(h.seated.get(&1), Some(&next), "ann is told");
    assert_eq!(h.core.game(g).and_then(|e| e.rematch()), Some(next));
    assert_eq!(h.rematch("bob"), Err(format!("game {next} is not over")));
}

#[test]
fn a_rematch_after_the_opponent_left_or_went_is_refused() {
    let mut h = Harness::new();
    for (name, conn) in [("ann", 1), ("bob", 2), ("cy", 3), ("dee", 4)] {
        h.login(name, conn);
    }
    let g = h.new_game("ann", Opponent::Open).unwrap_or_default();
    assert!(h.join("bob", g).is_ok());
    h.core.ended(g);
    assert_eq!(h.leave("bob", false), Ok(Left::Game(g)));
    assert_eq!(h.rematch("ann"), Err("your opponent has left".to_string()));
    let k = h.new_game("cy", Opponent::Open).unwrap_or_default();
    assert!(h.join("dee", k).is_ok());
    h.core.ended(k);
    assert_eq!(h.rematch("cy"), Ok(Rematched::Waiting));
    h.gone("dee", 4);
    assert_eq!(h.rematch("cy"), Err("your opponent has left".to_string()));
}

#[test]
fn a_seat_on_another_node_holds_the_name_until_that_game_is_over_or_the_connection_goes() {
    let mut h = Harness::new();
    h.login("ann", 1);
    h.login("bob", 2);
    let open = h.new_game("ann", Opponent::Open).expect("NEW");
    assert_eq!(h.seek("ann", Variant::Anti), Ok(Sought::Seeking));
    // JOIN of game 1000, which another node owns: the open game here
    // closes and the seek goes, as for a seat here.
    assert_eq!(h.sit_away("ann", 1000), Ok(()));
    assert_eq!(h.phase(open), None);
    assert_eq!(h.core.away_of("ann"), Some(1000));
    let who = h.core.who();
    assert_eq!(who[0].1, flipline::protocol::PlayerStatus::Playing(1000));
    // Nothing else while it is in play: no seek, game, seat or leave.
    let in_play = ErrorCode::Conflict.number();
    assert_eq!(h.seek("ann", Variant::Othello), Err(in_play));
    assert_eq!(h.new_game("ann", Opponent::Bot(1)), Err(in_play));
    let bobs = h.new_game("bob", Opponent::Open).expect("NEW");
    assert_eq!(h.join("ann", bobs), Err(in_play));
    assert_eq!(h.leave("ann", false), Err(in_play));
    assert_eq!(h.sit_away("ann", 1001), Err(in_play));
    // Joining the same game again changes nothing.
    assert_eq!(h.sit_away("ann", 1000), Ok(()));
    // Over there: free here again (another game's end changes nothing).
    h.core.back_from_away("ann", 1001);
    assert_eq!(h.core.away_of("ann"), Some(1000));
    h.core.back_from_away("ann", 1000);
    assert_eq!(h.join("ann", bobs).map(|(g, _)| g), Ok(bobs));
    assert_eq!(h.core.check_invariants(), Ok(()));
    // Seated here in play: no seat away.
    assert_eq!(h.sit_away("ann", 1000), Err(in_play));
    // A connection that goes leaves its seat away to the owner's grace.
    h.login("cy", 3);
    assert_eq!(h.sit_away("cy", 1000), Ok(()));
    h.gone("cy", 3);
    assert_eq!(h.core.away_of("cy"), None);
    assert_eq!(h.core.check_invariants(), Ok(()));
}

#[test]
fn a_lost_connection_keeps_a_seat_in_play_and_closes_an_open_game() {
    let mut h = Harness::new();
    h.login("ann", 1);
    h.login("bob", 2);
    let open = h.new_game("ann", Opponent::Open).unwrap_or_default();
    let playing = h.new_game("bob", Opponent::Bot(1)).unwrap_or_default();
    h.gone("ann", 1);
    h.gone("bob", 2);
    assert_eq!(h.phase(open), None);
    assert_eq!(
        h.orders[&playing],
        [Order::Disconnected {
            name: Name::from("bob")
        }]
    );
    assert_eq!(h.core.seat_of("bob"), Some(playing), "the seat is kept");
    // Back on another connection: the name is free, the seat is theirs.
    h.login("bob", 5);
    let spec = NewGame {
        variant: Variant::Othello,
        seat: SeatChoice::Black,
        opponent: Opponent::Hotseat,
        clock: None,
        from: Vec::new(),
    };
    let refused = h.core.new_game(&Name::from("bob"), &spec, || 99, true);
    let message = refused.map(|_| ()).map_err(|e| e.to_string());
    assert_eq!(
        message,
        Err(format!(
            "game {playing} is in play: JOIN {playing} takes your seat back"
        ))
    );
    assert_eq!(h.join("bob", playing), Ok((playing, Color::Black)));
    assert!(matches!(
        h.orders[&playing].last(),
        Some(Order::Attach { conn: 5, .. })
    ));
    // A stale goodbye from the old connection changes nothing.
    h.gone("bob", 2);
    assert_eq!(h.core.holder("bob"), Some(5));
    assert!(
        h.core
            .login(&Name::from("bob"), 6, None)
            .is_err_and(|e| e.code() == ErrorCode::Conflict)
    );
}

/// One command of a random run.
#[derive(Clone, Debug)]
enum Op {
    Login(usize),
    Gone(usize),
    Seek(usize, bool),
    New(usize, u8),
    Join(usize, GameId),
    Leave(usize, bool),
    Rematch(usize),
    /// `JOIN` of a game another node owns (numbered past this lobby's).
    JoinAway(usize, GameId),
    /// The game away is over, or its owner refused the seat.
    BackFromAway(usize, GameId),
    /// A tournament's round makes a game for two players.
    TourneyGame(usize, usize),
    /// A game's table says it ended.
    End(GameId),
    /// A game's actor stops (only a game not in play ever does).
    Close(GameId),
    /// The store starts or stops refusing writes.
    Disk(bool),
    /// The shell's retry after a failed write: seeks left side by side pair.
    PairWaiting,
}

const PLAYERS: [&str; 4] = ["ann", "bob", "cy", "dee"];

/// Games another node owns: numbered apart from this lobby's.
const AWAY: GameId = 1000;

fn op() -> impl Strategy<Value = Op> {
    let who = 0..PLAYERS.len();
    let game = 1..12u64;
    prop_oneof![
        2 => who.clone().prop_map(Op::Login),
        1 => who.clone().prop_map(Op::Gone),
        3 => (who.clone(), any::<bool>()).prop_map(|(p, anti)| Op::Seek(p, anti)),
        3 => (who.clone(), 0..3u8).prop_map(|(p, kind)| Op::New(p, kind)),
        3 => (who.clone(), game.clone()).prop_map(|(p, g)| Op::Join(p, g)),
        1 => (who.clone(), any::<bool>()).prop_map(|(p, w)| Op::Leave(p, w)),
        3 => who.clone().prop_map(Op::Rematch),
        2 => (who.clone(), AWAY..AWAY + 2).prop_map(|(p, g)| Op::JoinAway(p, g)),
        1 => (who.clone(), AWAY..AWAY + 2).prop_map(|(p, g)| Op::BackFromAway(p, g)),
        2 => (who.clone(), who).prop_map(|(a, b)| Op::TourneyGame(a, b)),
        2 => game.clone().prop_map(Op::End),
        1 => game.prop_map(Op::Close),
        1 => any::<bool>().prop_map(Op::Disk),
        1 => Just(Op::PairWaiting),
    ]
}

proptest! {
    /// Commands from four players in any order: after each, every player
    /// sits in at most one game that is open or in play (and the lobby's
    /// seat for them says which), no seeker sits in one, every seat points
    /// at a game with that player in it, and no finished game starts more
    /// than one rematch. A refused command changes nothing, nor does one
    /// whose write the store refuses.
    #[test]
    fn any_order_of_commands_keeps_the_lobby_invariants(ops in prop::collection::vec(op(), 1..120)) {
        let mut h = Harness::new();
        let mut conns: [Option<ConnId>; 4] = [None; 4];
        let mut next_conn = 1;
        for op in ops {
            let before = h.core.snapshot();
            let refused = match op {
                Op::Login(p) => {
                    let conn = conns[p].unwrap_or(next_conn);
                    next_conn += 1;
                    let ok = h.core.login(&Name::from(PLAYERS[p]), conn, None).is_ok();
                    if ok { conns[p] = Some(conn); }
                    !ok
                }
                Op::Gone(p) => {
                    if let Some(conn) = conns[p].take() { h.gone(PLAYERS[p], conn); }
                    false
                }
                Op::Seek(p, anti) => {
                    let variant = if anti { Variant::Anti } else { Variant::Othello };
                    h.seek(PLAYERS[p], variant).is_err()
                }
                Op::New(p, kind) => {
                    let opponent = [Opponent::Open, Opponent::Bot(1), Opponent::Hotseat][kind as usize % 3];
                    h.new_game(PLAYERS[p], opponent).is_err()
                }
                Op::Join(p, g) => h.join(PLAYERS[p], g).is_err(),
                Op::Leave(p, watching) => h.leave(PLAYERS[p], watching).is_err(),
                Op::Rematch(p) => h.rematch(PLAYERS[p]).is_err(),
                Op::JoinAway(p, g) => h.sit_away(PLAYERS[p], g).is_err(),
                Op::BackFromAway(p, g) => {
                    h.core.back_from_away(PLAYERS[p], g);
                    false
                }
                Op::TourneyGame(a, b) if a == b => false,
                Op::TourneyGame(a, b) => {
                    let free = [a, b].map(|p| h.core.free_to_play(PLAYERS[p]));
                    let made = h.tourney_game(PLAYERS[a], PLAYERS[b]);
                    if made.is_ok() {
                        prop_assert_eq!(free, [true, true], "made for a player not free");
                    }
                    made.is_err()
                }
                Op::End(g) => {
                    if h.phase(g) == Some(Phase::Playing) { h.core.ended(g); }
                    false
                }
                Op::Close(g) => {
                    if h.phase(g) == Some(Phase::Over) { h.core.closed(g); }
                    false
                }
                Op::Disk(failing) => {
                    h.failing = failing;
                    false
                }
                Op::PairWaiting => {
                    let next = &mut h.next;
                    if let Some(done) = h.core.pair_waiting(move || take(next), true) {
                        let _ = h.settle(done);
                    }
                    false
                }
            };
            if refused {
                prop_assert_eq!(h.core.snapshot(), before, "a refused {:?} changed the lobby", op);
            }
            prop_assert_eq!(h.core.held_count(), 0, "a decision left held");
            prop_assert_eq!(h.core.check_invariants(), Ok(()), "after {:?}", op);
            prop_assert!(h.rematches.values().all(|&n| n <= 1), "{:?}", h.rematches);
        }
    }
}

#[test]
fn a_stored_game_its_moves_ended_is_ended_at_a_restart_and_others_resume() {
    use crate::lobby::stored_game_state;
    use flipline::notation::parse_transcript;
    let won = parse_transcript("a1 b1 a2 b2 a3").unwrap();
    let ended = stored_game_state(Variant::TicTacToe, &won).unwrap();
    assert_eq!(ended.map(|r| r.winner), Some(Some(Color::Black)));
    let going = parse_transcript("a1 b1").unwrap();
    assert_eq!(stored_game_state(Variant::TicTacToe, &going), Ok(None));
    let bad = parse_transcript("a1 a1").unwrap();
    assert!(stored_game_state(Variant::TicTacToe, &bad).is_err());
}
