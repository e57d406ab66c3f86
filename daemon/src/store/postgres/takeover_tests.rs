//! What a dead node leaves on one PostgreSQL store
//! (`flipline_test_servers`) besides its games: its tournaments, taken over
//! by one live node, read back whole, no write of the dead node landing
//! after; and the seats its players hold in its games.

use flipline::protocol::{TourneyId, TourneySpec};
use flipline_test_servers::ScratchDatabase;

use super::cluster_tests::{node, pg_config};
use super::db::Db;
use crate::rules::lease::Standing;
use crate::store::test_support::block_on;
use crate::store::{StoredTourney, TourneyWrite, Write};

/// What `incarnation`'s claim of tournaments takes, on a connection of its
/// own (as the lease keeper's).
fn claim(db: &ScratchDatabase, incarnation: i64) -> Vec<StoredTourney> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let client = super::connect::connect(&pg_config(db)).await.unwrap();
        let mut conn = Db::new(client);
        super::tourneys::claim(&mut conn, incarnation)
            .await
            .unwrap()
    })
}

fn join(id: TourneyId, name: &str) -> Write {
    Write::Tourney(TourneyWrite::Join {
        id,
        name: name.into(),
    })
}

fn players(db: &ScratchDatabase, id: TourneyId) -> Option<String> {
    let sql = format!(
        "SELECT string_agg(name, ' ' ORDER BY seq) FROM tourney_players WHERE tourney = {id}"
    );
    db.query_text(&sql).unwrap()
}

#[test]
fn a_dead_node_s_tournament_is_taken_over_once_and_its_writes_refused_after() {
    let Some(db) = ScratchDatabase::new("claim_tourney") else {
        return;
    };
    let (a, a_member) = node(&db, "a");
    let (b, b_member) = node(&db, "b");
    let (c, c_member) = node(&db, "c");
    let id = a.next_tourney;
    let spec: TourneySpec = "roundrobin".parse().unwrap();
    let creator = "ann".to_string();
    block_on(
        a.store
            .commit(Write::Tourney(TourneyWrite::New { id, creator, spec })),
    )
    .unwrap();
    block_on(a.store.commit(join(id, "ann"))).unwrap();
    let b_number = b_member.incarnation.number;
    assert!(claim(&db, b_number).is_empty(), "a is live");

    let dead = format!(
        "UPDATE nodes SET state = 'dead' WHERE incarnation = {}",
        a_member.incarnation.number
    );
    db.execute(&dead).unwrap();
    let claimed = claim(&db, b_number);
    let [taken] = claimed.as_slice() else {
        panic!("{claimed:?}")
    };
    assert_eq!(
        (taken.id, taken.players.as_slice()),
        (id, ["ann".to_string()].as_slice())
    );
    assert_eq!(taken.spec, spec);
    assert!(
        claim(&db, c_member.incarnation.number).is_empty(),
        "taken by one node only"
    );

    // a, paused meanwhile, comes back: its write is refused, and it knows
    // it was declared dead; b's goes through.
    let late = block_on(a.store.commit(join(id, "bob")));
    assert!(late.is_err(), "{late:?}");
    assert_eq!(a_member.state.standing(), Standing::Lost);
    block_on(b.store.commit(join(id, "cy"))).unwrap();
    assert_eq!(players(&db, id).as_deref(), Some("ann cy"));

    // A new tournament is the node's that made it: c's is not b's to take.
    let theirs = c.next_tourney;
    let (creator, spec) = ("cy".to_string(), spec);
    let new = TourneyWrite::New {
        id: theirs,
        creator,
        spec,
    };
    block_on(c.store.commit(Write::Tourney(new))).unwrap();
    assert!(claim(&db, b_number).is_empty());
    block_on(c.store.commit(join(theirs, "dan"))).unwrap();
    assert_eq!(b_member.state.standing(), Standing::Held);
    for opened in [a, b, c] {
        opened.threads.close();
    }
}

/// What a node reads when a pairing's maker died before saying whether it
/// made the game: the one game in play its player sits in, whoever owns it.
#[test]
fn a_name_s_seat_in_play_is_read_whichever_node_owns_its_game() {
    let Some(db) = ScratchDatabase::new("seat_in_play") else {
        return;
    };
    let (a, a_member) = node(&db, "a");
    let (b, _) = node(&db, "b");
    let game = a.game_block.clone().map(|block| block.start).unwrap();
    let seat = |name: &str| block_on(b.store.seat_in_play(name.to_string())).unwrap();
    assert_eq!(seat("bob"), None);
    block_on(a.store.commit(crate::store::test_support::new_game(
        game,
        Some("Bob"),
        "f5",
    )))
    .unwrap();
    assert_eq!(
        (seat("BOB"), seat("ann"), seat("cy")),
        (Some(game), Some(game), None)
    );
    // Its owner declared dead: still the seat, until the game ends.
    let dead = format!(
        "UPDATE nodes SET state = 'dead' WHERE incarnation = {}",
        a_member.incarnation.number
    );
    db.execute(&dead).unwrap();
    assert_eq!(seat("bob"), Some(game));
    db.execute(&format!(
        "UPDATE games SET status = 'over' WHERE id = {game}"
    ))
    .unwrap();
    assert_eq!(seat("bob"), None);
    for opened in [a, b] {
        opened.threads.close();
    }
}

#[test]
fn a_login_s_seat_says_whether_this_node_owns_its_game() {
    let Some(db) = ScratchDatabase::new("kept_here") else {
        return;
    };
    let (a, _) = node(&db, "a");
    let (b, _) = node(&db, "b");
    let game = a.game_block.clone().map(|block| block.start).unwrap();
    block_on(a.store.commit(crate::store::test_support::new_game(
        game,
        Some("Bob"),
        "f5",
    )))
    .unwrap();
    let kept = |opened: &crate::store::Opened, name: &str| match block_on(
        opened.store.claim_name(name.to_string()),
    ) {
        Ok(crate::store::NameClaim::Taken { kept }) => kept.map(|k| (k.game, k.here, k.node)),
        other => panic!("{other:?}"),
    };
    // On the owner (as right after a takeover, before its lobby holds the
    // game) as well as on another node.
    assert_eq!(kept(&a, "bob"), Some((game, true, Some("a".to_string()))));
    assert_eq!(kept(&b, "ann"), Some((game, false, Some("a".to_string()))));
    assert_eq!(kept(&a, "cy"), None);
    for opened in [a, b] {
        opened.threads.close();
    }
}
