//! Cluster nodes on one PostgreSQL store (`flipline_test_servers`): who
//! owns a game, fenced writes, claims, number blocks, and a restart within
//! the lease.

use std::time::Duration;

use flipline::Move;
use flipline_test_servers::ScratchDatabase;

use super::nodes::Member;
use super::{Joining, open};
use crate::config::{StoreConfig, StoreUrl};
use crate::rules::lease::Standing;
use crate::store::opened::Opened;
use crate::store::test_support::{block_on, config, new_game, temp_path};
use crate::store::{NameClaim, Store, StoreError};

pub(super) fn pg_config(db: &ScratchDatabase) -> StoreConfig {
    let mut config = config(&temp_path("unused"));
    config.url = StoreUrl::new(db.url.clone());
    config
}

/// A node whose lease passes only when a test says so (by changing its
/// row), however slow the machine: a node claims games and tournaments
/// only while its lease is live by the database's clock.
pub(super) fn node(db: &ScratchDatabase, name: &str) -> (Opened, Member) {
    node_for(db, name, Duration::from_secs(60))
}

/// A node whose lease, never renewed here, lasts `lease`.
fn node_for(db: &ScratchDatabase, name: &str, lease: Duration) -> (Opened, Member) {
    let joining = Joining {
        node: name.to_string(),
        lease,
    };
    let opened = open(&pg_config(db), Some(joining)).unwrap();
    let member = opened.joined.as_ref().map(|j| j.member.clone()).unwrap();
    (opened, member)
}

fn first_number(opened: &Opened) -> u64 {
    opened.game_block.clone().map(|b| b.start).unwrap()
}

#[test]
fn a_dead_node_s_games_are_claimed_and_its_writes_refused_after() {
    let Some(db) = ScratchDatabase::new("claim") else {
        return;
    };
    let (a, a_member) = node(&db, "a");
    let (b, b_member) = node(&db, "b");
    let game = first_number(&a);
    block_on(a.store.commit(new_game(game, Some("bot:3"), "f5"))).unwrap();
    block_on(a.store.append_move(game, 2, "d6".parse().unwrap(), 900)).unwrap();
    assert!(block_on(b.store.claim()).unwrap().is_empty(), "a is live");

    // a's lease passes (as if it stopped renewing) and b declares it dead.
    let dead = format!(
        "UPDATE nodes SET state = 'dead' WHERE incarnation = {}",
        a_member.incarnation.number
    );
    db.execute(&dead).unwrap();
    let claimed = block_on(b.store.claim()).unwrap();
    let [taken] = claimed.as_slice() else {
        panic!("{claimed:?}")
    };
    assert_eq!((taken.id, taken.moves.len()), (game, 2));
    block_on(b.store.append_move(game, 3, "c3".parse().unwrap(), 700)).unwrap();

    // a, paused meanwhile, comes back: nothing of the game is written by it,
    // and it knows it was declared dead.
    let late = block_on(a.store.append_move(game, 3, Move::Pass, 1));
    assert!(matches!(late, Err(StoreError::Failed(_))), "{late:?}");
    assert_eq!(a_member.state.standing(), Standing::Lost);
    let later = block_on(a.store.append_move(game, 4, Move::Pass, 1));
    assert!(later.is_err(), "a lost node acknowledges nothing");
    let moves = db
        .query_text(&format!(
            "SELECT string_agg(move, ' ' ORDER BY ply) FROM moves WHERE game = {game}"
        ))
        .unwrap();
    assert_eq!(moves.as_deref(), Some("f5 d6 c3"));
    assert_eq!(b_member.state.standing(), Standing::Held);
    a.threads.close();
    b.threads.close();
}

#[test]
fn open_games_of_a_dead_node_are_cancelled_not_claimed() {
    let Some(db) = ScratchDatabase::new("claim_open") else {
        return;
    };
    let (a, a_member) = node(&db, "a");
    let (b, _) = node(&db, "b");
    let game = first_number(&a);
    block_on(a.store.commit(new_game(game, None, ""))).unwrap();
    let dead = format!(
        "UPDATE nodes SET state = 'dead' WHERE incarnation = {}",
        a_member.incarnation.number
    );
    db.execute(&dead).unwrap();
    assert!(block_on(b.store.claim()).unwrap().is_empty());
    let status = db
        .query_text(&format!("SELECT status FROM games WHERE id = {game}"))
        .unwrap();
    assert_eq!(status.as_deref(), Some("cancelled"));
    a.threads.close();
    b.threads.close();
}

#[test]
fn each_node_numbers_games_from_a_block_of_its_own() {
    let Some(db) = ScratchDatabase::new("blocks") else {
        return;
    };
    let (a, _) = node(&db, "a");
    let (b, _) = node(&db, "b");
    let (block_a, block_b) = (a.game_block.clone().unwrap(), b.game_block.clone().unwrap());
    assert!(block_a.end <= block_b.start || block_b.end <= block_a.start);
    let more = block_on(a.store.game_numbers()).unwrap();
    for block in [&block_a, &block_b] {
        assert!(more.end <= block.start || block.end <= more.start);
    }
    a.threads.close();
    b.threads.close();
}

#[test]
fn a_restarted_node_waits_out_its_lease_and_takes_its_games_back() {
    let Some(db) = ScratchDatabase::new("restart_node") else {
        return;
    };
    let lease = Duration::from_secs(2);
    let (a, first) = node_for(&db, "a", lease);
    let game = first_number(&a);
    block_on(a.store.commit(new_game(game, Some("bot:1"), "f5d6"))).unwrap();
    // Stopped without leaving, as a crash would.
    a.threads.close();
    let (again, second) = node_for(&db, "a", lease);
    assert!(second.incarnation.number > first.incarnation.number);
    let ids: Vec<u64> = again.playing.iter().map(|g| g.id).collect();
    assert_eq!(ids, [game]);
    block_on(again.store.append_move(game, 3, "c3".parse().unwrap(), 5)).unwrap();
    again.threads.close();
}

#[test]
fn a_single_daemon_and_cluster_nodes_never_write_one_database_together() {
    let Some(db) = ScratchDatabase::new("single_or_cluster") else {
        return;
    };
    let single = Store::open(&pg_config(&db)).unwrap();
    let joining = Joining {
        node: "a".into(),
        lease: Duration::from_secs(2),
    };
    let refused = open(&pg_config(&db), Some(joining)).err().unwrap();
    assert!(refused.to_string().contains("single flipd"), "{refused}");
    single.threads.close();
    let (a, _) = node(&db, "a");
    let refused = Store::open(&pg_config(&db)).err().unwrap();
    assert!(refused.to_string().contains("another flipd"), "{refused}");
    a.threads.close();
}

fn claim_name(opened: &Opened, name: &str) -> Result<NameClaim, StoreError> {
    block_on(opened.store.claim_name(name.to_string()))
}

fn held_by(node: &str) -> Result<NameClaim, StoreError> {
    Ok(NameClaim::HeldBy(node.to_string()))
}

#[test]
fn a_name_online_is_one_node_s_until_given_back_or_its_lease_passes() {
    let Some(db) = ScratchDatabase::new("names_online") else {
        return;
    };
    // Leases long enough never to pass on their own during the test.
    let minute = Duration::from_secs(60);
    let (a, _) = node_for(&db, "a", minute);
    let (b, b_member) = node_for(&db, "b", minute);
    assert_eq!(claim_name(&a, "Ann"), Ok(NameClaim::Taken { kept: None }));
    assert_eq!(claim_name(&b, "ANN"), held_by("a"));
    // The node's own lobby decides between its own connections.
    assert_eq!(claim_name(&a, "ann"), Ok(NameClaim::Taken { kept: None }));

    a.store.release_name("aNN".into());
    // Answered after the release, which a's writer took first.
    assert_eq!(claim_name(&a, "zed"), Ok(NameClaim::Taken { kept: None }));
    assert_eq!(claim_name(&b, "ann"), Ok(NameClaim::Taken { kept: None }));
    assert_eq!(claim_name(&a, "Ann"), held_by("b"));
    assert_eq!(claim_name(&b, "bo"), Ok(NameClaim::Taken { kept: None }));
    let spelled = db.query_text("SELECT name FROM names_online WHERE folded = 'ann'");
    assert_eq!(spelled, Ok(Some("ann".to_string())));
    // Releasing a name another node holds changes nothing.
    a.store.release_name("ann".into());
    assert_eq!(claim_name(&a, "zed"), Ok(NameClaim::Taken { kept: None }));
    assert_eq!(claim_name(&a, "ann"), held_by("b"));

    // b's lease passes: b acknowledges nothing any more, so its names go
    // to whoever logs in, and b itself takes none.
    let passed = format!(
        "UPDATE nodes SET lease_until = clock_timestamp() - interval '1 second' \
         WHERE incarnation = {}",
        b_member.incarnation.number
    );
    db.execute(&passed).unwrap();
    assert_eq!(claim_name(&a, "ann"), Ok(NameClaim::Taken { kept: None }));
    assert!(claim_name(&b, "bea").is_err());
    b.threads.close();
    db.execute(&passed).unwrap();

    // b started again declares its last start dead, and its names are
    // forgotten with it.
    let (c, _) = node_for(&db, "c", minute);
    assert_eq!(claim_name(&c, "cy"), Ok(NameClaim::Taken { kept: None }));
    let held_by_b = || {
        db.query_text(&format!(
            "SELECT string_agg(folded, ' ') FROM names_online WHERE incarnation = {}",
            b_member.incarnation.number
        ))
    };
    assert_eq!(held_by_b(), Ok(Some("bo".to_string())));
    let (again, _) = node_for(&db, "b", minute);
    assert_eq!(held_by_b(), Ok(None));
    assert_eq!(claim_name(&again, "cy"), held_by("c"));
    for opened in [a, c, again] {
        opened.threads.close();
    }
}

/// Who leads the lobby, as `member`'s keeper would take and read it (its
/// bus up).
fn lead(db: &ScratchDatabase, member: &Member, judge: bool) -> Option<(String, i64)> {
    lead_hearing(db, member, (judge, true))
}

/// As [`lead`], with `member`'s bus up or not (`hears`); leases of a
/// minute.
fn lead_hearing(
    db: &ScratchDatabase,
    member: &Member,
    (judge, hears): (bool, bool),
) -> Option<(String, i64)> {
    let number = member.incarnation.number;
    on_connection(db, async |conn| {
        let lease = Duration::from_secs(60);
        let leader = super::nodes::lead(conn, number, (judge, hears), lease).await;
        leader.unwrap().map(|l| (l.node, l.epoch))
    })
}

/// `member`'s renewal with its bus as `bus` says, leases of a minute: what
/// it says of the others' (`None`: refused).
fn renew_with(
    db: &ScratchDatabase,
    member: &Member,
    bus: Option<(bool, Duration)>,
) -> Option<bool> {
    let number = member.incarnation.number;
    on_connection(db, async |conn| {
        let lease = Duration::from_secs(60);
        super::nodes::renew(conn, number, lease, bus).await.unwrap()
    })
}

#[test]
fn a_renewal_says_whether_another_live_node_has_heard_the_bus_for_a_lease() {
    let Some(db) = ScratchDatabase::new("bus_heard") else {
        return;
    };
    let (_a, a_member) = node(&db, "a");
    let (_b, b_member) = node(&db, "b");
    let seconds = Duration::from_secs;
    let cut = Some((false, seconds(0)));
    assert_eq!(
        renew_with(&db, &b_member, cut),
        Some(false),
        "nobody said yet"
    );
    renew_with(&db, &a_member, Some((true, seconds(50))));
    assert_eq!(renew_with(&db, &b_member, cut), Some(false), "up only 50 s");
    renew_with(&db, &a_member, Some((true, seconds(61))));
    assert_eq!(renew_with(&db, &b_member, cut), Some(true));
    renew_with(&db, &a_member, Some((false, seconds(1))));
    assert_eq!(renew_with(&db, &b_member, cut), Some(false), "a is cut now");
    renew_with(&db, &a_member, None);
    assert_eq!(renew_with(&db, &b_member, cut), Some(false), "a has no bus");
}

#[test]
fn a_leader_cut_off_from_the_bus_for_half_a_lease_loses_the_lead_to_a_node_that_hears_it() {
    let Some(db) = ScratchDatabase::new("deaf_leader") else {
        return;
    };
    let (_a, a_member) = node(&db, "a");
    let (_b, b_member) = node(&db, "b");
    let first = Some(("a".to_string(), 1));
    assert_eq!(lead(&db, &a_member, true), first);
    let deaf_since = |seconds: u32| {
        format!(
            "UPDATE nodes SET bus_up = false, \
             bus_changed = clock_timestamp() - interval '{seconds} seconds' \
             WHERE incarnation = {}",
            a_member.incarnation.number
        )
    };
    db.execute(&deaf_since(10)).unwrap();
    assert_eq!(lead(&db, &b_member, true), first, "cut off only a moment");
    db.execute(&deaf_since(31)).unwrap();
    assert_eq!(
        lead_hearing(&db, &b_member, (true, false)),
        first,
        "b is cut off too: it may not lead either"
    );
    let second = Some(("b".to_string(), 2));
    assert_eq!(lead(&db, &b_member, true), second);
}

#[test]
fn the_lobby_s_lead_is_taken_once_and_taken_over_only_once_its_holder_s_lease_passed() {
    let Some(db) = ScratchDatabase::new("leader") else {
        return;
    };
    let (_a, a_member) = node(&db, "a");
    let (_b, b_member) = node(&db, "b");
    let first = Some(("a".to_string(), 1));
    assert_eq!(
        lead(&db, &a_member, false),
        first,
        "free: the first takes it"
    );
    assert_eq!(lead(&db, &b_member, true), first, "held by a live node");
    assert_eq!(
        lead(&db, &a_member, true),
        first,
        "its holder keeps its epoch"
    );

    // a's lease passes: b takes the lead only once it may judge others.
    let lapsed = format!(
        "UPDATE nodes SET lease_until = clock_timestamp() - interval '1 second' \
         WHERE incarnation = {}",
        a_member.incarnation.number
    );
    db.execute(&lapsed).unwrap();
    assert_eq!(lead(&db, &b_member, false), first, "b may not judge yet");
    let second = Some(("b".to_string(), 2));
    assert_eq!(lead(&db, &b_member, true), second);
    assert_eq!(
        lead(&db, &a_member, true),
        second,
        "a, back, does not take it back"
    );
}

#[test]
fn a_node_declared_dead_makes_no_new_game_even_before_it_knows() {
    let Some(db) = ScratchDatabase::new("dead_new_game") else {
        return;
    };
    let (a, a_member) = node(&db, "a");
    let first = first_number(&a);
    block_on(a.store.commit(new_game(first, Some("bot:3"), "f5"))).unwrap();
    // Declared dead by the others while it was paused: its own lease
    // keeper has not said so yet.
    let dead = format!(
        "UPDATE nodes SET state = 'dead' WHERE incarnation = {}",
        a_member.incarnation.number
    );
    db.execute(&dead).unwrap();
    assert_eq!(a_member.state.standing(), Standing::Held);
    let late = block_on(a.store.commit(new_game(first + 1, Some("bot:3"), "f5")));
    assert!(late.is_err(), "{late:?}");
    assert_eq!(a_member.state.standing(), Standing::Lost, "it knows now");
    let stored = db
        .query_text(&format!(
            "SELECT count(*)::text FROM games WHERE id = {}",
            first + 1
        ))
        .unwrap();
    assert_eq!(stored.as_deref(), Some("0"));
}

/// Runs `work` on a connection of its own to `db` (as the lease keeper's).
fn on_connection<T>(db: &ScratchDatabase, work: impl AsyncFnOnce(&mut super::db::Db) -> T) -> T {
    let config = pg_config(db);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let client = super::connect::connect(&config).await.unwrap();
        let mut conn = super::db::Db::new(client);
        work(&mut conn).await
    })
}

#[test]
fn only_a_node_live_by_its_own_lease_declares_others_dead_or_claims() {
    let Some(db) = ScratchDatabase::new("judge_live_only") else {
        return;
    };
    let (a, a_member) = node(&db, "a");
    let (b, b_member) = node(&db, "b");
    let (a_number, b_number) = (a_member.incarnation.number, b_member.incarnation.number);
    let game = first_number(&a);
    block_on(a.store.commit(new_game(game, Some("bot:3"), "f5"))).unwrap();
    // PostgreSQL was away: every lease passed, b's too. A declaration b
    // sent before the cut and that runs now declares nobody.
    db.execute("UPDATE nodes SET lease_until = clock_timestamp() - interval '1 second'")
        .unwrap();
    let declared = on_connection(&db, async |c| {
        super::nodes::declare_expired(c, b_number).await
    });
    assert_eq!(declared, Ok(vec![]));
    let live = "SELECT count(*) FROM nodes WHERE state = 'live'";
    assert_eq!(db.query_text(live), Ok(Some("2".into())));

    // b renews; a does not: b declares a dead, never itself.
    let renewed = format!(
        "UPDATE nodes SET lease_until = clock_timestamp() + interval '1 minute' \
         WHERE incarnation = {b_number}"
    );
    db.execute(&renewed).unwrap();
    let declared = on_connection(&db, async |c| {
        super::nodes::declare_expired(c, b_number).await
    });
    let numbers: Vec<i64> = declared.unwrap().iter().map(|n| n.number).collect();
    assert_eq!(numbers, [a_number]);

    // a, declared dead but not yet knowing it, claims nothing (not even
    // its own games back); b takes them.
    let claimed = on_connection(&db, async |c| super::nodes::claim(c, a_number, 64).await);
    assert!(claimed.unwrap().playing.is_empty());
    let claimed = block_on(b.store.claim()).unwrap();
    let ids: Vec<u64> = claimed.iter().map(|g| g.id).collect();
    assert_eq!(ids, [game]);
    a.threads.close();
    b.threads.close();
}
