//! Challenges and tournament games between players of two nodes: two
//! lobby cores, node "a" (ann's, the challenger's) and node "b" (bob's),
//! and the words between them carried by hand.

use std::time::Duration;

use flipline::Variant;
use flipline::protocol::{DeclineReason, Event, Opponent, SeatChoice};

use super::Name;
use super::challenges::{ChallengeId, Terms};
use super::clock::Moment;
use super::lobby::{AcceptRoute, AwayPass, FarNote, FarWord, GuestLogin, GuestSecret, LobbyEffect};
use super::lobby_tests::{Harness, take, tourney_terms};
use super::refusal::Refusal;

const TIMEOUT: Duration = Duration::from_secs(60);

fn now() -> Moment {
    Moment::from_micros(1_000_000)
}

fn terms(rated: bool) -> Terms {
    Terms {
        variant: Variant::Othello,
        side: SeatChoice::Black,
        clock: None,
        rated,
        start: Vec::new(),
    }
}

fn ann() -> Name {
    Name::from("ann")
}

fn bob() -> Name {
    Name::from("bob")
}

/// Node a with ann (connection 1), node b with bob (connection 2).
fn two_nodes() -> (Harness, Harness) {
    let (mut a, mut b) = (Harness::new(), Harness::new());
    a.login("ann", 1);
    b.login("bob", 2);
    // b's challenge numbers run ahead of a's, so that a number of the
    // wrong node shows.
    b.login("zed", 8);
    b.login("yan", 9);
    let made = b
        .core
        .challenge(&Name::from("zed"), "yan", terms(false), now(), TIMEOUT);
    assert!(made.is_ok());
    // Game numbers of the two nodes apart, as a cluster's blocks are.
    b.next = 1_000;
    (a, b)
}

/// ann on a challenges bob on b, and b takes it: both numbers.
fn challenge(a: &mut Harness, b: &mut Harness, rated: bool) -> (ChallengeId, ChallengeId) {
    let when = (now(), TIMEOUT);
    let (id_a, pass) = a
        .core
        .challenge_far((&ann(), "bob", "b"), terms(rated), when)
        .unwrap();
    let done = b
        .core
        .challenged_from_far((&ann(), "a", id_a, pass), "bob", terms(rated), when);
    let done = done.unwrap();
    assert_eq!(
        told(&done.effects, 2),
        [format!("CHALLENGE {} ann", done.reply)]
    );
    (id_a, done.reply)
}

/// What `conn` is told among `effects`: each event's kind, number and name.
fn told(effects: &[LobbyEffect<u64>], conn: u64) -> Vec<String> {
    let mut lines = Vec::new();
    for effect in effects {
        let LobbyEffect::Tell(to, events) = effect else {
            continue;
        };
        for event in events.iter().filter(|_| *to == conn) {
            match event {
                Event::Challenged { id, from, .. } => lines.push(format!("CHALLENGE {id} {from}")),
                Event::Declined { id, name, reason } => {
                    lines.push(format!("DECLINED {id} {name} {reason}"));
                }
                other => lines.push(format!("{other:?}")),
            }
        }
    }
    lines
}

fn note(node: &str, word: FarWord) -> FarNote {
    let node = node.to_string();
    FarNote { node, word }
}

#[test]
fn a_challenge_declined_on_the_challenged_s_node_is_heard_on_the_challenger_s() {
    let (mut a, mut b) = two_nodes();
    let (id_a, id_b) = challenge(&mut a, &mut b, false);
    assert_ne!(id_a, id_b, "each node numbers it");
    assert!(a.core.far_notes().is_empty() && b.core.far_notes().is_empty());
    let reason = DeclineReason::Later;
    assert!(b.core.decline(&bob(), id_b, reason).is_ok());
    let word = FarWord::Declined { id: id_a, reason };
    assert_eq!(b.core.far_notes(), [note("a", word)]);
    let heard = a.core.heard_from_far("b", word);
    assert_eq!(told(&heard, 1), [format!("DECLINED {id_a} bob later")]);
    assert!(a.core.heard_from_far("b", word).is_empty(), "heard once");
    assert!(a.core.heard_from_far("c", word).is_empty());
    assert_eq!(a.core.open_challenges(), Vec::<ChallengeId>::new());
}

#[test]
fn a_challenge_withdrawn_lapsed_or_left_on_one_node_goes_on_the_other() {
    let (mut a, mut b) = two_nodes();
    let (id_a, id_b) = challenge(&mut a, &mut b, false);
    assert!(a.core.cancel_challenge(&ann(), id_a).is_ok());
    let cancelled = DeclineReason::Cancelled;
    let word = FarWord::Withdrawn {
        id: id_a,
        reason: cancelled,
    };
    assert_eq!(a.core.far_notes(), [note("b", word)]);
    let heard = b.core.heard_from_far("a", word);
    assert_eq!(told(&heard, 2), [format!("DECLINED {id_b} ann cancelled")]);

    // Lapsed on the challenged's node: the challenger's hears it.
    let (id_a, id_b) = challenge(&mut a, &mut b, false);
    let later = now() + TIMEOUT;
    assert_eq!(told(&b.core.expire_challenges(later), 2).len(), 1);
    let timeout = DeclineReason::Timeout;
    let word = FarWord::Declined {
        id: id_a,
        reason: timeout,
    };
    assert_eq!(b.core.far_notes(), [note("a", word)]);
    let heard = a.core.heard_from_far("b", word);
    assert_eq!(told(&heard, 1), [format!("DECLINED {id_a} bob timeout")]);
    assert!(b.core.open_challenges().iter().all(|&id| id != id_b));

    // Each player going offline.
    let (id_a, _) = challenge(&mut a, &mut b, false);
    b.core.gone(2, &bob());
    let word = FarWord::Declined {
        id: id_a,
        reason: DeclineReason::Offline,
    };
    assert_eq!(b.core.far_notes(), [note("a", word)]);
    let heard = a.core.heard_from_far("b", word);
    assert_eq!(told(&heard, 1), [format!("DECLINED {id_a} bob offline")]);
    b.login("bob", 2);
    let (id_a, _) = challenge(&mut a, &mut b, false);
    a.core.gone(1, &ann());
    let word = FarWord::Withdrawn {
        id: id_a,
        reason: cancelled,
    };
    assert_eq!(a.core.far_notes(), [note("b", word)]);
    assert_eq!(a.core.check_invariants(), Ok(()));
    assert_eq!(b.core.check_invariants(), Ok(()));
}

#[test]
fn an_accept_takes_the_challenger_out_on_its_node_then_seats_it_at_the_game_made_there() {
    let (mut a, mut b) = two_nodes();
    let (id_a, id_b) = challenge(&mut a, &mut b, false);
    let route = b.core.accept_route(&bob(), id_b);
    let through = AcceptRoute::Through {
        node: "a".into(),
        id: id_a,
        challenger: ann(),
    };
    assert_eq!(route, Ok(through));
    let open = a.new_game("ann", Opponent::Open).unwrap();
    assert_eq!(a.core.seat_of("ann"), Some(open));
    let wrong_node = a.core.reserve_challenger("c", id_a).map(|d| d.reply);
    assert_eq!(wrong_node.map_err(code), Err(404));
    assert_eq!(reserve(&mut a, id_a), Ok(ann()));
    assert_eq!(a.core.seat_of("ann"), None, "its open game closes");
    // Taken out: no other seat, no second accept, no cancel meanwhile.
    assert_eq!(a.new_game("ann", Opponent::Open), Err(409));
    let again = a.core.reserve_challenger("b", id_a).map(|d| d.reply);
    assert_eq!(again, Err(Refusal::ChallengerBusy(ann())), "busy, not gone");
    let cancel = a.core.cancel_challenge(&ann(), id_a);
    assert_eq!(cancel.map(|_| ()).map_err(code), Err(404));

    let next = &mut b.next;
    let done = b.core.accept(&bob(), id_b, move || take(next), true);
    let game = b.settle(done.unwrap()).unwrap();
    assert_eq!(b.core.seat_of("ann"), Some(game), "its seat is held for it");
    assert_eq!(b.core.seat_of("bob"), Some(game));
    assert!(
        b.core.far_notes().is_empty(),
        "an accepted challenge is no news"
    );

    let done = a.core.paired_away(&ann(), game).unwrap();
    assert!(a.settle(done).is_ok());
    assert_eq!(a.core.away_of("ann"), Some(game));
    assert_eq!(
        a.new_game("ann", Opponent::Open),
        Err(409),
        "it plays there"
    );
    a.core.gone(1, &ann());
    assert!(a.core.far_notes().is_empty(), "nothing left to withdraw");
    assert_eq!(a.core.check_invariants(), Ok(()));
    assert_eq!(b.core.check_invariants(), Ok(()));
}

#[test]
fn an_accept_that_came_to_nothing_leaves_the_challenge_open_on_both_nodes() {
    let (mut a, mut b) = two_nodes();
    let (id_a, id_b) = challenge(&mut a, &mut b, false);
    assert_eq!(reserve(&mut a, id_a), Ok(ann()));
    // The game's write fails on b: the challenge is open there again.
    b.failing = true;
    let next = &mut b.next;
    let done = b.core.accept(&bob(), id_b, move || take(next), true);
    assert_eq!(b.settle(done.unwrap()), Err(503));
    assert!(b.core.open_challenges().contains(&id_b));
    a.core.release_challenger(&ann(), id_a);
    assert_eq!(a.core.open_challenges(), [id_a]);
    assert!(a.new_game("ann", Opponent::Open).is_ok(), "free again");
    assert_eq!(a.core.check_invariants(), Ok(()));
}

#[test]
fn a_challenger_busy_or_gone_on_its_node_refuses_the_accept_and_changes_nothing() {
    let (mut a, mut b) = two_nodes();
    let (id_a, _) = challenge(&mut a, &mut b, false);
    a.login("cy", 3);
    let game = a.new_game("cy", Opponent::Open).unwrap();
    assert!(a.join("ann", game).is_ok());
    let before = a.core.snapshot();
    assert_eq!(
        a.core
            .reserve_challenger("b", id_a)
            .map(|d| d.reply)
            .map_err(code),
        Err(409)
    );
    assert_eq!(a.core.snapshot(), before);
    assert_eq!(a.core.open_challenges(), [id_a]);

    // Taken out for one accept, a second challenge's accept is refused.
    let (mut a, mut b) = two_nodes();
    let (first, _) = challenge(&mut a, &mut b, false);
    b.login("dee", 4);
    let when = (now(), TIMEOUT);
    let (second, _) = a
        .core
        .challenge_far((&ann(), "dee", "b"), terms(false), when)
        .unwrap();
    assert_eq!(reserve(&mut a, first), Ok(ann()));
    let refused = a.core.reserve_challenger("b", second).map(|d| d.reply);
    assert_eq!(refused, Err(Refusal::ChallengerBusy(ann())));
}

#[test]
fn rated_challenges_across_nodes_are_for_registered_names_on_both() {
    let (mut a, mut b) = two_nodes();
    let secret = GuestSecret::parse("00112233445566778899aabbccddeeff").unwrap();
    let guest = GuestLogin {
        shown: None,
        fresh: secret,
    };
    assert!(a.core.login(&Name::from("gus"), 5, Some(guest)).is_ok());
    let when = (now(), TIMEOUT);
    let refused = a
        .core
        .challenge_far((&Name::from("gus"), "bob", "b"), terms(true), when);
    assert_eq!(refused.map(|_| ()).map_err(code), Err(403));
    let pass = AwayPass {
        secret: Some(secret),
        member: false,
        marks: Default::default(),
    };
    let far = (&Name::from("gus"), "a", 9, pass);
    let refused = b.core.challenged_from_far(far, "bob", terms(true), when);
    assert_eq!(refused.map(|_| ()).map_err(code), Err(403));
    let refused = b
        .core
        .challenged_from_far(far, "nobody", terms(false), when);
    assert_eq!(
        refused.map(|_| ()).map_err(code),
        Err(404),
        "not online here"
    );
    assert!(
        b.core
            .challenged_from_far(far, "bob", terms(false), when)
            .is_ok()
    );
}

#[test]
fn a_node_gone_settles_its_challenges_across_for_the_players_here() {
    let (mut a, mut b) = two_nodes();
    let (id_a, _) = challenge(&mut a, &mut b, false);
    let gone = a.core.far_nodes_gone(&["b".to_string()]);
    assert_eq!(told(&gone, 1), [format!("DECLINED {id_a} bob offline")]);
    let mut from_ann = b.core.open_challenges();
    from_ann.retain(|id| {
        b.core
            .challenge_parties(*id)
            .is_some_and(|[f, _]| f == ann())
    });
    let [id_b] = <[ChallengeId; 1]>::try_from(from_ann).unwrap_or_default();
    let gone = b.core.far_nodes_gone(&["a".to_string()]);
    assert_eq!(told(&gone, 2), [format!("DECLINED {id_b} ann cancelled")]);
    assert!(a.core.far_nodes_gone(&["c".to_string()]).is_empty());
}

#[test]
fn a_seek_taken_out_while_its_player_s_challenge_is_being_accepted_is_refused() {
    let (mut a, mut b) = two_nodes();
    let (id_a, _) = challenge(&mut a, &mut b, false);
    a.core.pool_seeks();
    assert_eq!(reserve(&mut a, id_a), Ok(ann()));
    let wanted = super::lobby::SeekWanted::casual(Variant::Othello, None);
    assert_eq!(
        a.core.reserve_pooled(&ann(), wanted).map_err(code),
        Err(409)
    );
}

/// Node b's accept of `id` (a's number) takes its challenger out on a.
fn reserve(a: &mut Harness, id: ChallengeId) -> Result<Name, u16> {
    let done = a.core.reserve_challenger("b", id).map_err(code)?;
    a.settle(done)
}

fn code(refusal: Refusal) -> u16 {
    refusal.code().number()
}

#[test]
fn a_player_taken_out_for_another_node_s_game_is_free_and_then_takes_no_other_seat() {
    let (mut a, _) = two_nodes();
    assert_eq!(
        a.core.take_out(&bob()).map(|_| ()).map_err(code),
        Err(409),
        "not here"
    );
    let open = a.new_game("ann", Opponent::Open).unwrap();
    let done = a.core.take_out(&ann()).unwrap();
    assert!(a.settle(done).is_ok());
    assert_eq!(a.core.seat_of("ann"), None, "its open game closes");
    assert!(
        a.core
            .game(open)
            .is_none_or(|e| e.phase != super::Phase::Open)
    );
    assert_eq!(a.new_game("ann", Opponent::Open), Err(409));
    let again = a.core.take_out(&ann()).map(|_| ()).map_err(code);
    assert_eq!(again, Err(409), "taken out once");
    a.core.free_taken_out(&ann());
    assert!(a.new_game("ann", Opponent::Open).is_ok(), "free again");

    // In a game in play: not free.
    let (mut a, _) = two_nodes();
    a.login("cy", 3);
    let game = a.new_game("cy", Opponent::Open).unwrap();
    assert!(a.join("ann", game).is_ok());
    let before = a.core.snapshot();
    assert_eq!(a.core.take_out(&ann()).map(|_| ()).map_err(code), Err(409));
    assert_eq!(a.core.snapshot(), before);
    assert_eq!(a.core.check_invariants(), Ok(()));
}

#[test]
fn a_tournament_s_game_holds_the_seat_of_a_player_of_another_node() {
    let (mut a, mut b) = two_nodes();
    // bob plays from node b a round's game that node a makes.
    let done = b.core.take_out(&bob()).unwrap();
    assert!(b.settle(done).is_ok());
    let next = &mut a.next;
    let made = a
        .core
        .tourney_game((&ann(), &bob()), [false, true], tourney_terms(), || {
            take(next)
        });
    let game = a.settle(made.unwrap()).unwrap();
    assert_eq!(a.core.seat_of("ann"), Some(game));
    assert_eq!(a.core.seat_of("bob"), Some(game), "held for bob");
    assert_eq!(a.core.holder("bob"), None);
    let done = b.core.paired_away(&bob(), game).unwrap();
    assert!(b.settle(done).is_ok());
    assert_eq!(b.core.away_of("bob"), Some(game));
    // A local player who is not free is refused, changing nothing.
    let before = a.core.snapshot();
    let next = &mut a.next;
    let made = a
        .core
        .tourney_game((&ann(), &bob()), [false, true], tourney_terms(), || {
            take(next)
        });
    assert_eq!(made.map(|_| ()).map_err(code), Err(409));
    assert_eq!(a.core.snapshot(), before);
    assert_eq!(a.core.check_invariants(), Ok(()));
    assert_eq!(b.core.check_invariants(), Ok(()));
}

#[test]
fn a_challenger_taken_out_for_another_node_s_accept_accepts_no_challenge_here() {
    let (mut a, mut b) = two_nodes();
    let (id_a, _) = challenge(&mut a, &mut b, false);
    a.login("cy", 3);
    let local = a.core.challenge(&ann(), "cy", terms(false), now(), TIMEOUT);
    let local = a.settle(local.unwrap()).unwrap();
    assert_eq!(reserve(&mut a, id_a), Ok(ann()));
    let next = &mut a.next;
    let accepted = a
        .core
        .accept(&Name::from("cy"), local, move || take(next), true);
    assert_eq!(accepted.map(|_| ()), Err(Refusal::ChallengerBusy(ann())));
    assert_eq!(a.core.seat_of("ann"), None);
    assert_eq!(a.core.check_invariants(), Ok(()));
}

#[test]
fn a_challenge_declined_there_while_being_accepted_is_not_opened_again() {
    let (mut a, mut b) = two_nodes();
    let (id_a, _) = challenge(&mut a, &mut b, false);
    assert_eq!(reserve(&mut a, id_a), Ok(ann()));
    let offline = DeclineReason::Offline;
    let word = FarWord::Declined {
        id: id_a,
        reason: offline,
    };
    let heard = a.core.heard_from_far("b", word);
    assert_eq!(told(&heard, 1), [format!("DECLINED {id_a} bob offline")]);
    a.core.release_challenger(&ann(), id_a);
    assert_eq!(a.core.open_challenges(), Vec::<ChallengeId>::new());
    assert!(a.new_game("ann", Opponent::Open).is_ok(), "free again");
}

#[test]
fn a_withdrawal_that_overtakes_its_challenge_keeps_it_from_being_opened() {
    let (mut a, mut b) = two_nodes();
    let when = (now(), TIMEOUT);
    let (id_a, pass) = a
        .core
        .challenge_far((&ann(), "bob", "b"), terms(false), when)
        .unwrap();
    assert!(a.core.cancel_challenge(&ann(), id_a).is_ok());
    let notes = a.core.far_notes();
    assert_eq!(notes.len(), 1);
    for note in notes {
        assert!(
            b.core.heard_from_far("a", note.word).is_empty(),
            "nothing to withdraw yet"
        );
    }
    let late = b
        .core
        .challenged_from_far((&ann(), "a", id_a, pass), "bob", terms(false), when);
    assert_eq!(late.map(|_| ()).map_err(code), Err(404));
    // A later challenge of theirs is taken.
    assert!(challenge(&mut a, &mut b, false).0 > id_a);
}

#[test]
fn a_copy_whose_withdrawal_was_lost_is_replaced_by_the_next_challenge() {
    let (mut a, mut b) = two_nodes();
    let (id_a, old) = challenge(&mut a, &mut b, false);
    // ann withdraws it; the word to b is lost.
    assert!(a.core.cancel_challenge(&ann(), id_a).is_ok());
    a.core.far_notes();
    let when = (now(), TIMEOUT);
    let (id_a, pass) = a
        .core
        .challenge_far((&ann(), "bob", "b"), terms(false), when)
        .unwrap();
    let done = b
        .core
        .challenged_from_far((&ann(), "a", id_a, pass), "bob", terms(false), when);
    let done = done.unwrap();
    let fresh = done.reply;
    assert_eq!(
        told(&done.effects, 2),
        [
            format!("DECLINED {old} ann cancelled"),
            format!("CHALLENGE {fresh} ann")
        ]
    );
    let mut open = b.core.open_challenges();
    open.retain(|id| {
        b.core
            .challenge_parties(*id)
            .is_some_and(|[f, _]| f == ann())
    });
    assert_eq!(open, [fresh]);
}
