//! Who may take a name: one player per name whatever its case, and a
//! guest's seat held through a disconnect given back only to the guest's
//! secret.

use flipline::protocol::{ErrorCode, Opponent};

use super::lobby::{GuestLogin, GuestSecret, LoggedIn};
use super::lobby_tests::Harness;
use super::{ConnId, Name};
use crate::refusal::Refusal;

const FIRST: GuestSecret = secret(1);
const SECOND: GuestSecret = secret(2);

const fn secret(byte: u8) -> GuestSecret {
    GuestSecret::from_bytes([byte; 16])
}

/// A guest's login showing `shown`, given `fresh` should it take a free name.
fn as_guest(
    h: &mut Harness,
    name: &str,
    conn: ConnId,
    shown: Option<GuestSecret>,
    fresh: GuestSecret,
) -> Result<LoggedIn, Refusal> {
    let guest = GuestLogin { shown, fresh };
    h.core.login(&Name::from(name), conn, Some(guest))
}

/// `ann` (a guest, secret [`FIRST`]) sits in a game in play against `bob`
/// and has lost her connection: her seat is held.
fn ann_away_from_her_seat() -> (Harness, u64) {
    let mut h = Harness::new();
    let ann = as_guest(&mut h, "ann", 1, None, FIRST).unwrap();
    assert_eq!(ann.secret, Some(FIRST));
    assert_eq!(ann.kept_seat, None, "nothing kept yet");
    h.login("bob", 2);
    let game = h.new_game("ann", Opponent::Open).unwrap();
    assert!(h.join("bob", game).is_ok());
    h.gone("ann", 1);
    assert_eq!(h.core.seat_of("ann"), Some(game), "the seat is held");
    (h, game)
}

#[test]
fn a_held_guest_seat_is_given_back_only_to_its_secret() {
    let (mut h, game) = ann_away_from_her_seat();
    let stranger = as_guest(&mut h, "ann", 3, None, SECOND).unwrap_err();
    assert_eq!(stranger.code(), ErrorCode::Conflict);
    assert!(
        stranger.to_string().contains("LOGIN ann secret"),
        "{}",
        stranger.to_string()
    );
    let guess = as_guest(&mut h, "ANN", 3, Some(SECOND), SECOND).unwrap_err();
    assert_eq!(guess.code(), ErrorCode::Conflict);
    assert!(
        guess.to_string().contains("not the secret"),
        "{}",
        guess.to_string()
    );
    let registered = h.core.login(&Name::from("ann"), 3, None).unwrap_err();
    assert_eq!(
        registered.code(),
        ErrorCode::Conflict,
        "a password is no secret"
    );
    assert_eq!(h.core.holder("ann"), None, "refusals took nothing");
    let back = as_guest(&mut h, "ann", 4, Some(FIRST), SECOND).unwrap();
    assert_eq!(back.secret, Some(FIRST), "the secret stays the guest's");
    assert_eq!(
        back.kept_seat,
        Some(game),
        "the login says which seat is kept"
    );
    assert_eq!(h.core.holder("ann"), Some(4));
    assert!(h.join("ann", game).is_ok(), "and the seat is hers again");
}

#[test]
fn a_login_names_the_seat_kept_until_it_is_taken_back() {
    let (mut h, game) = ann_away_from_her_seat();
    let back = as_guest(&mut h, "ann", 4, Some(FIRST), SECOND).unwrap();
    assert_eq!(back.kept_seat, Some(game));
    assert!(h.join("ann", game).is_ok());
    h.gone("ann", 4);
    h.core.ended(game);
    let after = as_guest(&mut h, "ann", 5, Some(FIRST), SECOND).unwrap();
    assert_eq!(after.kept_seat, None, "no seat is kept in a game over");
}

#[test]
fn a_guest_name_held_for_nothing_is_free_again() {
    let mut h = Harness::new();
    as_guest(&mut h, "ann", 1, None, FIRST).unwrap();
    h.gone("ann", 1);
    let next = as_guest(&mut h, "ann", 2, None, SECOND).unwrap();
    assert_eq!(next.secret, Some(SECOND), "a new guest, a new secret");
}

#[test]
fn a_guest_taking_a_free_name_keeps_the_secret_it_shows() {
    let mut h = Harness::new();
    let shown = as_guest(&mut h, "ann", 1, Some(FIRST), SECOND).unwrap();
    assert_eq!(shown.secret, Some(FIRST));
}

fn recover_hotseat(h: &mut Harness, game: u64, name: &str, secret: Option<GuestSecret>) {
    use crate::Sitter;
    let seat = || Sitter::Person(Name::from(name), None);
    let recovered = (h.core).recover(
        game,
        flipline::Variant::Othello,
        None,
        [seat(), seat()],
        [secret, secret],
        false,
    );
    assert!(recovered);
}

#[test]
fn a_seat_taken_over_while_its_guest_waits_online_is_hers() {
    let mut h = Harness::new();
    // Back on a node before her game is taken over there, showing her secret.
    as_guest(&mut h, "ann", 1, Some(FIRST), SECOND).unwrap();
    recover_hotseat(&mut h, 7, "ann", Some(FIRST));
    assert!(h.join("ann", 7).is_ok());
}

#[test]
fn a_seat_taken_over_is_not_given_to_someone_else_online_under_its_name() {
    let mut h = Harness::new();
    as_guest(&mut h, "ann", 1, None, SECOND).unwrap();
    recover_hotseat(&mut h, 7, "ann", Some(FIRST));
    assert!(
        h.join("ann", 7).is_err(),
        "another guest took the free name"
    );
    h.gone("ann", 1);
    let other = as_guest(&mut h, "ann", 2, Some(SECOND), SECOND);
    assert!(other.is_err(), "the name is held for the seat's secret now");
    as_guest(&mut h, "ann", 3, Some(FIRST), SECOND).unwrap();
    assert!(h.join("ann", 7).is_ok(), "the seat's own guest takes it");
}

#[test]
fn names_that_differ_in_case_are_one_name_spelled_the_first_way() {
    let mut h = Harness::new();
    h.login("Vic", 1);
    let taken = h.core.login(&Name::from("vic"), 2, None).unwrap_err();
    assert_eq!(taken.to_string(), "name 'Vic' is in use");
    let again = h.core.login(&Name::from("VIC"), 1, None).unwrap();
    assert_eq!(&*again.name, "Vic");
    let game = h.new_game("Vic", Opponent::Bot(1)).unwrap();
    assert_eq!(h.core.seat_of("vIC"), Some(game));
    h.gone("vic", 1);
    assert_eq!(h.core.holder("Vic"), None, "gone in any case");
    let back = h.core.login(&Name::from("VIC"), 3, None).unwrap();
    assert_eq!(&*back.name, "Vic", "the seat's spelling stays");
    let who: Vec<String> = h
        .core
        .who()
        .into_iter()
        .map(|(n, _, _)| n.to_string())
        .collect();
    assert_eq!(who, ["Vic"]);
    assert!(h.core.check_invariants().is_ok());
}

#[test]
fn a_seat_kept_on_another_node_goes_only_to_its_guest_s_secret() {
    use super::lobby::check_kept_elsewhere;
    let stored = FIRST.to_string();
    let showing = |shown| GuestLogin {
        shown,
        fresh: SECOND,
    };
    let held = |wrong_secret| {
        Err(Refusal::HeldForGuest {
            name: Name::from("ann"),
            wrong_secret,
        })
    };
    let own = showing(Some(FIRST));
    assert_eq!(
        check_kept_elsewhere("ann", Some(&stored), Some(&own)),
        Ok(())
    );
    let wrong = showing(Some(SECOND));
    assert_eq!(
        check_kept_elsewhere("ann", Some(&stored), Some(&wrong)),
        held(true)
    );
    let none = showing(None);
    assert_eq!(
        check_kept_elsewhere("ann", Some(&stored), Some(&none)),
        held(false)
    );
    // A registered name's login (its password checked) is no guest's.
    assert_eq!(
        check_kept_elsewhere("ann", Some(&stored), None),
        held(false)
    );
    // A registered name's seat has no secret: its password was enough.
    assert_eq!(check_kept_elsewhere("ann", None, None), Ok(()));
    assert_eq!(check_kept_elsewhere("ann", None, Some(&none)), Ok(()));
    // A stored secret that does not read goes to nobody.
    assert_eq!(
        check_kept_elsewhere("ann", Some("zz"), Some(&own)),
        held(false)
    );
}
