//! A cluster node's lobby whose seeks the leader pairs: the node pairs
//! none itself, tells the leader each change, and makes the games the
//! leader pairs with the older seek here.

use flipline::Variant;

use super::Name;
use super::lobby::{
    AwayPass, GuestLogin, GuestSecret, Marks, Partner, PoolNote, SeekWanted, Sought,
};
use super::lobby_tests::{Harness, take};

fn pooled() -> Harness {
    let mut h = Harness::new();
    h.core.pool_seeks();
    h
}

fn othello() -> SeekWanted {
    SeekWanted::casual(Variant::Othello, None)
}

fn sought(notes: &[PoolNote]) -> Vec<(String, u64)> {
    notes
        .iter()
        .filter_map(|n| match n {
            PoolNote::Sought(s) => Some((s.name.to_string(), s.conn)),
            PoolNote::Withdrawn(_) => None,
        })
        .collect()
}

fn withdrawn(notes: &[PoolNote]) -> Vec<String> {
    notes
        .iter()
        .filter_map(|n| match n {
            PoolNote::Withdrawn(name) => Some(name.to_string()),
            PoolNote::Sought(_) => None,
        })
        .collect()
}

fn pair(h: &mut Harness, waiting: &str, partner: Partner) -> Result<u64, u16> {
    let next = &mut h.next;
    let done = h
        .core
        .pair_pooled(
            &Name::from(waiting),
            othello(),
            partner,
            (true, move || take(next)),
        )
        .map_err(|e| e.code().number())?;
    h.settle(done)
}

#[test]
fn seeks_of_one_game_wait_side_by_side_for_the_leader_and_it_hears_each() {
    let mut h = pooled();
    h.login("ann", 1);
    h.login("bob", 2);
    assert_eq!(h.seek("ann", Variant::Othello), Ok(Sought::Seeking));
    assert_eq!(h.seek("bob", Variant::Othello), Ok(Sought::Seeking));
    assert_eq!(h.core.check_invariants(), Ok(()));
    let notes = h.core.pool_notes();
    assert_eq!(sought(&notes), [("ann".into(), 1), ("bob".into(), 2)]);
    assert!(h.core.pool_notes().is_empty(), "each change is told once");
    assert_eq!(
        sought(&h.core.pool_all()).len(),
        2,
        "a new leader hears all"
    );
    assert!(h.leave("bob", false).is_ok());
    assert_eq!(withdrawn(&h.core.pool_notes()), ["bob"]);
}

#[test]
fn the_leader_s_pairing_of_two_seeks_here_seats_both_and_withdraws_them() {
    let mut h = pooled();
    h.login("ann", 1);
    h.login("bob", 2);
    h.seek("ann", Variant::Othello).unwrap();
    h.seek("bob", Variant::Othello).unwrap();
    h.core.pool_notes();
    let game = pair(&mut h, "ann", Partner::Here(Name::from("bob")));
    assert_eq!(game, Ok(1));
    assert_eq!((h.seated.get(&1), h.seated.get(&2)), (Some(&1), Some(&1)));
    let mut gone = withdrawn(&h.core.pool_notes());
    gone.sort();
    assert_eq!(gone, ["ann", "bob"]);
    assert_eq!(h.core.check_invariants(), Ok(()));
}

#[test]
fn a_pairing_with_a_seek_withdrawn_or_changed_meanwhile_is_refused_and_changes_nothing() {
    let mut h = pooled();
    h.login("ann", 1);
    h.login("bob", 2);
    h.seek("ann", Variant::Othello).unwrap();
    h.seek("bob", Variant::Reversi).unwrap();
    let before = h.core.snapshot();
    assert_eq!(
        pair(&mut h, "ann", Partner::Here(Name::from("bob"))),
        Err(409)
    );
    assert_eq!(
        pair(&mut h, "bob", Partner::Here(Name::from("ann"))),
        Err(409)
    );
    assert_eq!(h.core.snapshot(), before);
    h.core.pool_notes();
    h.failing = true;
    h.seek("bob", Variant::Othello).unwrap();
    assert_eq!(
        pair(&mut h, "ann", Partner::Here(Name::from("bob"))),
        Err(503)
    );
    let mut back: Vec<_> = sought(&h.core.pool_notes())
        .into_iter()
        .map(|s| s.0)
        .collect();
    back.sort();
    assert_eq!(back, ["ann", "bob"], "seeks put back are told again");
    assert_eq!(h.core.check_invariants(), Ok(()));
}

#[test]
fn a_far_seeker_s_seat_is_held_for_it_and_a_guest_s_only_for_its_secret() {
    let mut h = pooled();
    h.login("ann", 1);
    h.seek("ann", Variant::Othello).unwrap();
    let secret = GuestSecret::parse("00112233445566778899aabbccddeeff").unwrap();
    let pass = AwayPass {
        secret: Some(secret),
        member: false,
        marks: Marks::default(),
    };
    let game = pair(&mut h, "ann", Partner::Far(Name::from("cy"), pass)).unwrap();
    assert_eq!(h.core.seat_of("cy"), Some(game));
    assert_eq!(h.core.check_invariants(), Ok(()));
    let impostor = GuestLogin {
        shown: None,
        fresh: GuestSecret::parse("ffeeddccbbaa99887766554433221100").unwrap(),
    };
    assert!(h.core.login(&Name::from("cy"), 7, Some(impostor)).is_err());
    let owner = GuestLogin {
        shown: Some(secret),
        fresh: secret,
    };
    let logged = h.core.login(&Name::from("cy"), 8, Some(owner)).unwrap();
    assert_eq!(logged.kept_seat, Some(game), "its seat waits for it");
    assert_eq!(
        pair(&mut h, "ann", Partner::Far(Name::from("dee"), pass)),
        Err(409)
    );

    // Once that game is over, cy (still connected here from its node) is
    // paired into another game here: its seat is held the same way.
    h.core.ended(game);
    h.login("eve", 3);
    h.seek("eve", Variant::Othello).unwrap();
    let again = pair(&mut h, "eve", Partner::Far(Name::from("cy"), pass)).unwrap();
    assert_eq!(h.core.seat_of("cy"), Some(again));
    assert_eq!(h.core.check_invariants(), Ok(()));
}

#[test]
fn a_seek_reserved_for_a_pairing_elsewhere_is_out_until_released_and_back_only_if_free() {
    let mut h = pooled();
    h.login("ann", 1);
    h.seek("ann", Variant::Othello).unwrap();
    let ann = Name::from("ann");
    assert_eq!(
        h.core
            .reserve_pooled(&ann, SeekWanted::casual(Variant::Reversi, None))
            .map_err(|e| e.code().number()),
        Err(409),
        "not the seek the leader knew"
    );
    assert!(h.core.reserve_pooled(&ann, othello()).is_ok());
    assert!(
        h.core.reserve_pooled(&ann, othello()).is_err(),
        "taken once"
    );
    assert_eq!(withdrawn(&h.core.pool_notes()), ["ann"]);
    assert!(h.core.release_pooled(&ann, othello()));
    assert_eq!(sought(&h.core.pool_notes()), [("ann".into(), 1)]);
    assert!(h.core.reserve_pooled(&ann, othello()).is_ok());
    assert_eq!(h.core.check_invariants(), Ok(()));
    let open = flipline::protocol::Opponent::Open;
    assert_eq!(h.new_game("ann", open), Err(409), "no other seat meanwhile");
    let done = h.core.paired_away(&ann, 77).map_err(|e| e.code().number());
    assert!(h.settle(done.unwrap()).is_ok());
    assert_eq!(h.core.away_of("ann"), Some(77), "held for the game there");
    assert!(
        !h.core.release_pooled(&ann, othello()),
        "it sits at a game now"
    );
    assert_eq!(h.core.check_invariants(), Ok(()));
}

#[test]
fn a_pairing_seated_after_its_seek_was_put_back_seats_a_free_player_only() {
    let mut h = pooled();
    h.login("ann", 1);
    h.login("bob", 2);
    h.seek("ann", Variant::Othello).unwrap();
    let ann = Name::from("ann");
    h.core.reserve_pooled(&ann, othello()).unwrap();
    assert!(h.core.release_pooled(&ann, othello()), "its timer ran out");
    assert_eq!(h.new_game("bob", flipline::protocol::Opponent::Open), Ok(1));
    assert_eq!(h.join("ann", 1).map(|(g, _)| g), Ok(1));
    let late = h
        .core
        .paired_away(&ann, 77)
        .map(|_| ())
        .map_err(|e| e.code().number());
    assert_eq!(late, Err(409), "in play here: the late pairing is refused");
    assert_eq!(h.core.away_of("ann"), None);
    assert_eq!(h.core.check_invariants(), Ok(()));
}
