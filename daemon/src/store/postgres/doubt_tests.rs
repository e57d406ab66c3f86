//! Commits in doubt on a cluster node (see `writer` and `writer_session`):
//! nothing else is written while one waits, and it is settled only once
//! the transaction that made it can no longer commit.

use std::sync::mpsc;
use std::time::{Duration, Instant};

use flipline_test_servers::ScratchDatabase;

use super::cut_proxy::{Cut, CutProxy};
use super::tests::{register, through};
use super::{Joining, open};
use crate::store::opened::Opened;
use crate::store::test_support::{block_on, new_game};
use crate::store::{Store, StoreError};

/// A cluster node whose store goes through a cutting proxy, with a lease
/// of `lease` (never renewed here; its deadlines follow it).
fn node_through(db: &ScratchDatabase, lease: Duration) -> (CutProxy, Opened) {
    let (proxy, url) = through(db);
    let mut config = super::cluster_tests::pg_config(db);
    config.url = url;
    let joining = Joining {
        node: "a".into(),
        lease,
    };
    (proxy, open(&config, Some(joining)).unwrap())
}

/// Waits until the writer says it refuses writes: a commit is in doubt.
fn until_in_doubt(store: &Store) {
    let stats = store.live_stats();
    let began = Instant::now();
    while !stats.refusing() {
        assert!(began.elapsed() < Duration::from_secs(60), "never in doubt");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// `future`'s output, unless it takes longer than `bound`.
fn within<F: std::future::Future>(bound: Duration, future: F) -> Option<F::Output> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async { tokio::time::timeout(bound, future).await.ok() })
}

/// A connection of the test's own, on a thread of its own, that runs
/// `hold` and keeps its transaction open until told to end it (by
/// dropping the sender).
fn hold_with(url: &str, hold: &'static str) -> mpsc::Sender<()> {
    let (end_tx, end_rx) = mpsc::channel::<()>();
    let (held_tx, held_rx) = mpsc::channel();
    let url = url.to_string();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async move {
            let (client, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
                .await
                .unwrap();
            tokio::spawn(connection);
            client.batch_execute(hold).await.unwrap();
            held_tx.send(()).unwrap();
            // Until the test drops its end: then the transaction ends.
            let _ = tokio::task::spawn_blocking(move || end_rx.recv()).await;
            let _ = client.batch_execute("ROLLBACK").await;
        });
    });
    held_rx
        .recv_timeout(Duration::from_secs(60))
        .expect("the test's lock is held");
    end_tx
}

#[test]
fn no_claim_is_served_while_a_commit_is_in_doubt_and_its_moves_are_undone_after() {
    let Some(db) = ScratchDatabase::new("doubt_claim") else {
        return;
    };
    // Reading the mark waits for the test (it holds the table), up to the
    // writer's deadline on it: half the lease, twice.
    let (proxy, opened) = node_through(&db, Duration::from_secs(4));
    let store = opened.store.clone();
    let game = opened.game_block.clone().map(|b| b.start).unwrap();
    block_on(store.commit(new_game(game, Some("bob"), ""))).unwrap();
    block_on(store.commit(new_game(game + 1, Some("bob"), ""))).unwrap();
    block_on(store.append_move(game + 1, 1, "f5".parse().unwrap(), 5)).unwrap();

    // The first attempt to settle the doubt cannot read the mark.
    let holding = hold_with(
        &db.url,
        "BEGIN; LOCK TABLE writer_commits IN ACCESS EXCLUSIVE MODE",
    );
    proxy.arm(Cut::BeforeNext);
    let lost = store.append_move(game, 1, "f5".parse().unwrap(), 5);
    until_in_doubt(&store);
    // Bounded: a writer that waited on the mark with no deadline would
    // never answer (the test holds the table until the claim's answer).
    let claimed = within(Duration::from_secs(120), store.claim())
        .expect("the claim is answered while the doubt waits");
    assert!(
        matches!(&claimed, Err(StoreError::Failed(why)) if why.contains("in doubt")),
        "{claimed:?}"
    );
    drop(holding);
    let answered = block_on(lost);
    assert!(
        matches!(answered, Err(StoreError::Failed(_))),
        "{answered:?}"
    );
    // The move answered "not played" was undone: the game's first move
    // is still to come, and what the store holds is what it stored.
    block_on(store.append_move(game, 1, "d3".parse().unwrap(), 5)).unwrap();
    let history = block_on(store.history(game)).unwrap().unwrap();
    let moves: Vec<String> = history.moves.iter().map(|m| m.mv.to_string()).collect();
    assert_eq!(moves, ["d3"]);
    let stored = db.query_text(&format!(
        "SELECT string_agg(move, ' ' ORDER BY ply) FROM moves WHERE game = {game}"
    ));
    assert_eq!(stored, Ok(Some("d3".to_string())));
    opened.threads.close();
}

#[test]
fn a_commit_in_doubt_is_settled_only_once_its_transaction_cannot_commit() {
    let Some(db) = ScratchDatabase::new("doubt_still_committing") else {
        return;
    };
    let (proxy, opened) = node_through(&db, Duration::from_secs(60));
    let store = opened.store.clone();
    // The batch's COMMIT waits, on the server, for a lock the test holds:
    // as a commit stalled by a slow disk or a synchronous standby would.
    db.execute(
        "CREATE FUNCTION hold_commit() RETURNS trigger LANGUAGE plpgsql AS \
         $$ BEGIN PERFORM pg_advisory_xact_lock(77); RETURN NULL; END $$; \
         CREATE CONSTRAINT TRIGGER hold_commit AFTER INSERT OR UPDATE ON writer_commits \
         DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION hold_commit()",
    )
    .unwrap();
    let holding = hold_with(&db.url, "BEGIN; SELECT pg_advisory_xact_lock(77)");
    proxy.arm(Cut::AfterCommit);
    let answered = block_on(store.commit(register("ann")));
    // Whatever the answer, it must be what the store holds once the
    // stalled commit is let go and has ended.
    drop(holding);
    let began = Instant::now();
    let running = "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() \
         AND pid <> pg_backend_pid() AND state = 'active' AND query ILIKE 'COMMIT%'";
    while db.query_text(running) != Ok(Some("0".to_string())) {
        assert!(
            began.elapsed() < Duration::from_secs(60),
            "the commit never ended"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    let stored = db.query_text("SELECT count(*) FROM players WHERE name = 'ann'");
    match answered {
        Ok(1) => assert_eq!(stored, Ok(Some("1".into())), "answered stored"),
        Err(StoreError::Failed(_)) => {
            assert_eq!(stored, Ok(Some("0".into())), "answered not stored");
        }
        other => panic!("{other:?}"),
    }
    opened.threads.close();
}

#[test]
fn a_batch_on_a_connection_gone_silent_is_settled_on_a_new_one_within_its_deadline() {
    let Some(db) = ScratchDatabase::new("doubt_silent") else {
        return;
    };
    let (proxy, opened) = node_through(&db, Duration::from_secs(3));
    let store = opened.store.clone();
    let game = opened.game_block.clone().map(|b| b.start).unwrap();
    block_on(store.commit(new_game(game, Some("bob"), ""))).unwrap();
    block_on(store.append_move(game, 1, "f5".parse().unwrap(), 5)).unwrap();
    // The writer's connection is forgotten on the way: its packets are
    // dropped without a word. New connections pass.
    proxy.silence();
    // Bounded well past the deadlines: without them the writer would wait
    // for the system to give the connection up (minutes).
    let answered = within(
        Duration::from_secs(60),
        store.append_move(game, 2, "d6".parse().unwrap(), 5),
    )
    .expect("the move is answered once the batch's deadline passes");
    // It never reached the server: answered not played, and stored so.
    assert!(
        matches!(answered, Err(StoreError::Failed(_))),
        "{answered:?}"
    );
    within(
        Duration::from_secs(60),
        store.append_move(game, 2, "f6".parse().unwrap(), 5),
    )
    .expect("answered")
    .unwrap();
    let stored = db.query_text(&format!(
        "SELECT string_agg(move, ' ' ORDER BY ply) FROM moves WHERE game = {game}"
    ));
    assert_eq!(stored, Ok(Some("f5 f6".to_string())));
    opened.threads.close();
}
