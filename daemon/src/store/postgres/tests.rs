//! The PostgreSQL store against a real server (`flipline_test_servers`):
//! the same promises as the SQLite store's tests hold, through the same
//! handle.

use flipline::protocol::{EndReason, GameResult, TourneySpec};
use flipline::{Color, Move};
use flipline_test_servers::ScratchDatabase;

use crate::config::{StoreConfig, StoreUrl};
use crate::store::test_support::{block_on, config, new_game, temp_path};
use crate::store::{Status, Store, StoreError, TourneyWrite, Write};

fn pg_config(db: &ScratchDatabase) -> StoreConfig {
    let mut config = config(&temp_path("unused"));
    config.url = StoreUrl::new(db.url.clone());
    config
}

fn ended(game: u64, winner: Option<Color>) -> Write {
    Write::End {
        game,
        result: GameResult {
            winner,
            black: 40,
            white: 24,
            reason: EndReason::Normal,
        },
    }
}

#[test]
fn games_and_moves_come_back_after_a_restart_and_open_games_are_cancelled() {
    let Some(db) = ScratchDatabase::new("restart") else {
        return;
    };
    let opened = Store::open(&pg_config(&db)).unwrap();
    assert_eq!((opened.playing.len(), opened.next_game), (0, 1));
    let store = opened.store;
    store.write(new_game(1, Some("bot:3"), "f5d6"));
    store.write(new_game(2, None, ""));
    block_on(store.append_move(1, 3, "c3".parse().unwrap(), 1500)).unwrap();
    let held = block_on(store.history(1)).unwrap().unwrap();
    assert_eq!(held.moves.len(), 3, "a game in play's moves, from memory");
    opened.threads.close();
    assert!(block_on(store.append_move(1, 4, Move::Pass, 1)).is_err());

    let opened = Store::open(&pg_config(&db)).unwrap();
    assert_eq!(opened.next_game, 3);
    let [game] = opened.playing.as_slice() else {
        panic!("{:?}", opened.playing)
    };
    assert_eq!((game.id, game.white.as_deref()), (1, Some("bot:3")));
    assert_eq!(game.clock.map(|c| c.to_string()).as_deref(), Some("5+3"));
    let ms: Vec<Option<u64>> = game.moves.iter().map(|m| m.ms).collect();
    assert_eq!(ms, [None, None, Some(1500)]);
    let open = block_on(opened.store.history(2)).unwrap().unwrap();
    assert_eq!(open.status, Status::Cancelled);
    assert!(
        open.ended_at.as_ref().is_some_and(|at| at.ends_with('Z')),
        "{open:?}"
    );
    assert_eq!(block_on(opened.store.history(9)).unwrap(), None);

    // The recovered game goes on where it stood, and ends.
    block_on(opened.store.append_move(1, 4, Move::Pass, 7)).unwrap();
    block_on(opened.store.commit(ended(1, Some(Color::Black)))).unwrap();
    let over = block_on(opened.store.history(1)).unwrap().unwrap();
    assert_eq!(over.status, Status::Over);
    assert_eq!(over.moves.len(), 4, "read back from the table once over");
    assert_eq!(over.result.map(|r| r.winner), Some(Some(Color::Black)));
    opened.threads.close();
}

#[test]
fn a_move_out_of_order_fails_alone_and_a_take_back_must_fit() {
    let Some(db) = ScratchDatabase::new("order") else {
        return;
    };
    let opened = Store::open(&pg_config(&db)).unwrap();
    let store = opened.store;
    block_on(store.commit(new_game(1, Some("bob"), ""))).unwrap();
    let good = store.append_move(1, 1, "f5".parse().unwrap(), 5);
    let skipped = store.append_move(1, 3, "c3".parse().unwrap(), 5);
    let unknown = store.append_move(7, 1, "f5".parse().unwrap(), 5);
    assert_eq!(block_on(good), Ok(()));
    assert!(matches!(block_on(skipped), Err(StoreError::Failed(_))));
    assert!(matches!(block_on(unknown), Err(StoreError::Failed(_))));
    block_on(store.append_move(1, 2, "d6".parse().unwrap(), 5)).unwrap();
    assert!(block_on(store.take_back(1, 0, 3)).is_err(), "it holds two");
    block_on(store.take_back(1, 1, 2)).unwrap();
    block_on(store.append_move(1, 2, "f6".parse().unwrap(), 5)).unwrap();
    let game = block_on(store.history(1)).unwrap().unwrap();
    let moves = flipline::notation::transcript_string(&game.transcript());
    assert_eq!(moves, "f5f6");
    assert_eq!(
        db.query_text("SELECT string_agg(move, '' ORDER BY ply) FROM moves WHERE game = 1"),
        Ok(Some("f5f6".to_string())),
        "the table holds what was answered"
    );
    opened.threads.close();
}

#[test]
fn names_are_registered_once_whatever_their_case_and_marked_as_programs() {
    let Some(db) = ScratchDatabase::new("names") else {
        return;
    };
    let opened = Store::open(&pg_config(&db)).unwrap();
    let store = opened.store;
    let register = |name: &str| Write::Register {
        name: name.to_string(),
        hash: "$argon2id$not-checked-here".to_string(),
    };
    assert_eq!(block_on(store.commit(register("Vic"))), Ok(1));
    assert_eq!(block_on(store.commit(register("vic"))), Ok(0));
    let mark = Write::MarkBot { name: "VIC".into() };
    assert_eq!(block_on(store.commit(mark)), Ok(1));
    let found = block_on(store.registration("VIC".into())).unwrap().unwrap();
    assert_eq!((found.name.as_str(), found.bot), ("Vic", true));
    assert_eq!(block_on(store.registration("bob".into())), Ok(None));
    opened.threads.close();
    let opened = Store::open(&pg_config(&db)).unwrap();
    assert_eq!(opened.registered.registered("vIc"), Some("Vic"));
    opened.threads.close();
}

fn rated(store: &Store, id: u64, black: &str, white: &str, winner: Option<Color>) {
    let mut write = new_game(id, Some(white), "");
    if let Write::NewGame {
        black: b, rated, ..
    } = &mut write
    {
        *b = Some(black.to_string());
        *rated = true;
    }
    block_on(store.commit(write)).unwrap();
    block_on(store.commit(ended(id, winner))).unwrap();
}

#[test]
fn a_rated_end_changes_the_ratings_and_a_recomputation_gives_them_again() {
    let Some(db) = ScratchDatabase::new("ratings") else {
        return;
    };
    let config = pg_config(&db);
    let opened = Store::open(&config).unwrap();
    let store = opened.store;
    rated(&store, 1, "ann", "bob", Some(Color::Black));
    rated(&store, 2, "bob", "cy", None);
    rated(&store, 3, "Ann", "cy", Some(Color::White));
    let changes = block_on(store.rating_changes(1)).unwrap();
    let names: Vec<&str> = changes.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["ann", "bob"]);
    assert!(changes[0].after > changes[0].before, "the winner gains");
    let ann = block_on(store.ratings_of("ANN".into(), None)).unwrap();
    assert_eq!(ann.len(), 1);
    assert_eq!(ann[0].games, 2, "Ann and ann are one player");
    let top = block_on(store.top(flipline::Variant::Othello, 10)).unwrap();
    let before: Vec<(String, u64)> = top
        .iter()
        .map(|r| (r.name.clone(), (r.rating.rating * 1000.0) as u64))
        .collect();
    assert_eq!(before.len(), 3);
    opened.threads.close();

    assert_eq!(super::recompute_ratings(&config), Ok(3));
    let opened = Store::open(&config).unwrap();
    let top = block_on(opened.store.top(flipline::Variant::Othello, 10)).unwrap();
    let after: Vec<(String, u64)> = top
        .iter()
        .map(|r| (r.name.clone(), (r.rating.rating * 1000.0) as u64))
        .collect();
    assert_eq!(after, before);
    opened.threads.close();
}

#[test]
fn a_tournaments_facts_are_read_back_after_a_restart() {
    let Some(db) = ScratchDatabase::new("tourneys") else {
        return;
    };
    let opened = Store::open(&pg_config(&db)).unwrap();
    let store = opened.store;
    let id = opened.next_tourney;
    let spec: TourneySpec = "swiss rounds 2 anti rated start random:6".parse().unwrap();
    let creator = "ann".to_string();
    let mut writes = vec![TourneyWrite::New { id, creator, spec }];
    for name in ["ann", "bob", "BOB", "cy"] {
        writes.push(TourneyWrite::Join {
            id,
            name: name.into(),
        });
    }
    writes.push(TourneyWrite::Start {
        id,
        group: 1,
        moves: flipline::notation::parse_transcript("f5d6").unwrap(),
    });
    writes.push(TourneyWrite::Round {
        id,
        round: 1,
        forfeits: vec![],
    });
    for write in writes {
        block_on(store.commit(Write::Tourney(write))).unwrap();
    }
    let mut game = new_game(1, Some("bob"), "f5d6");
    if let Write::NewGame { tourney, .. } = &mut game {
        *tourney = Some((id, 1));
    }
    block_on(store.commit(game)).unwrap();
    opened.threads.close();
    let opened = Store::open(&pg_config(&db)).unwrap();
    let [tourney] = opened.tourneys.as_slice() else {
        panic!("{:?}", opened.tourneys)
    };
    assert_eq!(tourney.players, ["ann", "bob", "cy"]);
    assert_eq!((tourney.round, tourney.over), (1, false));
    assert_eq!(tourney.starts.len(), 1);
    assert_eq!(tourney.games.len(), 1);
    assert_eq!(opened.next_tourney, id + 1);
    opened.threads.close();
}

#[test]
fn a_foreign_or_newer_database_is_refused_and_left_as_it_is() {
    let Some(foreign) = ScratchDatabase::new("foreign") else {
        return;
    };
    foreign.execute("CREATE TABLE invoices (id int)").unwrap();
    let error = Store::open(&pg_config(&foreign)).err().unwrap().to_string();
    assert!(error.contains("not a flipline store"), "{error}");
    assert_eq!(
        foreign.query_text("SELECT count(*) FROM pg_tables WHERE schemaname = 'public'"),
        Ok(Some("1".into())),
        "nothing was added"
    );

    let Some(newer) = ScratchDatabase::new("newer") else {
        return;
    };
    Store::open(&pg_config(&newer)).unwrap().threads.close();
    newer
        .execute("UPDATE flipline_schema SET version = 99")
        .unwrap();
    let error = Store::open(&pg_config(&newer)).err().unwrap().to_string();
    assert!(error.contains("newer flipd"), "{error}");
    assert_eq!(
        newer.query_text("SELECT version FROM flipline_schema"),
        Ok(Some("99".into()))
    );
}

#[test]
fn a_wrong_password_is_refused_naming_the_url_without_it() {
    let Some(db) = ScratchDatabase::new("password") else {
        return;
    };
    let mut config = pg_config(&db);
    let wrong = db
        .url
        .replacen("://flipd:", "://flipd:not-the-Password-", 1);
    assert_ne!(
        wrong, db.url,
        "the test server's URL names user flipd with a password"
    );
    config.url = StoreUrl::new(wrong);
    let error = Store::open(&config).err().unwrap().to_string();
    assert!(error.contains("password"), "{error}");
    assert!(!error.contains("not-the-Password-"), "{error}");
    assert!(error.contains("flipd:***@127.0.0.1"), "{error}");
}

#[test]
fn a_password_file_gives_the_password_and_a_second_daemon_is_refused() {
    let Some(db) = ScratchDatabase::new("password_file") else {
        return;
    };
    let (user_info, _) = db.url.split_once('@').unwrap();
    let password = user_info.rsplit(':').next().unwrap().to_string();
    let dir = temp_path("password-file");
    let file = dir.with_file_name("pgpass");
    std::fs::write(&file, format!("{password}\n")).unwrap();
    let mut config = pg_config(&db);
    config.url = StoreUrl::new(db.url.replacen(&format!(":{password}@"), "@", 1));
    config.password_file = file;
    let opened = Store::open(&config).unwrap();
    let second = Store::open(&config).err().unwrap().to_string();
    assert!(second.contains("another flipd"), "{second}");
    opened.threads.close();
}

/// `db`'s URL through `proxy`, and the server's address it replaces.
pub(super) fn through(db: &ScratchDatabase) -> (super::cut_proxy::CutProxy, StoreUrl) {
    let (_, rest) = db.url.split_once('@').unwrap();
    let (server, _) = rest.split_once('/').unwrap();
    let proxy = super::cut_proxy::CutProxy::start(server.parse().unwrap());
    // In clear, so that the proxy can see a COMMIT go by.
    let url = db.url.replacen(server, &proxy.addr.to_string(), 1);
    (proxy, StoreUrl::new(format!("{url}?sslmode=disable")))
}

pub(super) fn register(name: &str) -> Write {
    Write::Register {
        name: name.to_string(),
        hash: "$argon2id$not-checked-here".to_string(),
    }
}

/// A store through a cutting proxy, with game 1 in play and game 2 a move
/// into it (so that the statement of a batch of moves is prepared: what the
/// proxy cuts next is its execution).
fn cut_store(db: &ScratchDatabase) -> (super::cut_proxy::CutProxy, crate::store::Opened) {
    let (proxy, url) = through(db);
    let mut config = pg_config(db);
    config.url = url;
    let opened = Store::open(&config).unwrap();
    block_on(opened.store.commit(new_game(1, Some("bob"), ""))).unwrap();
    block_on(opened.store.commit(new_game(2, Some("bob"), ""))).unwrap();
    block_on(opened.store.append_move(2, 1, "f5".parse().unwrap(), 5)).unwrap();
    (proxy, opened)
}

#[test]
fn a_commit_whose_answer_is_lost_is_answered_as_committed_and_never_written_twice() {
    use super::cut_proxy::Cut;
    let Some(db) = ScratchDatabase::new("in_doubt_committed") else {
        return;
    };
    let (proxy, opened) = cut_store(&db);
    let store = opened.store;
    // A batch of moves alone is one statement.
    proxy.arm(Cut::AfterNext);
    let answered = block_on(store.append_move(1, 1, "f5".parse().unwrap(), 5));
    assert_eq!(answered, Ok(()), "the server committed it");
    // The next move is the game's second: the first was held as committed.
    block_on(store.append_move(1, 2, "d6".parse().unwrap(), 5)).unwrap();
    assert_eq!(
        db.query_text("SELECT string_agg(move, '' ORDER BY ply) FROM moves WHERE game = 1"),
        Ok(Some("f5d6".to_string()))
    );
    // Any other write is a transaction, cut at its COMMIT.
    proxy.arm(Cut::AfterCommit);
    assert_eq!(block_on(store.commit(register("ann"))), Ok(1));
    assert_eq!(
        block_on(store.commit(register("ann"))),
        Ok(0),
        "stored once"
    );
    opened.threads.close();
}

#[test]
fn a_commit_lost_on_its_way_is_refused_and_the_write_can_be_made_again() {
    use super::cut_proxy::Cut;
    let Some(db) = ScratchDatabase::new("in_doubt_rolled_back") else {
        return;
    };
    let (proxy, opened) = cut_store(&db);
    let store = opened.store;
    proxy.arm(Cut::BeforeNext);
    let answered = block_on(store.append_move(1, 1, "f5".parse().unwrap(), 5));
    assert!(
        matches!(answered, Err(StoreError::Failed(_))),
        "{answered:?}"
    );
    assert_eq!(
        db.query_text("SELECT count(*) FROM moves WHERE game = 1"),
        Ok(Some("0".to_string())),
        "nothing was written"
    );
    block_on(store.append_move(1, 1, "f5".parse().unwrap(), 5)).unwrap();
    let game = block_on(store.history(1)).unwrap().unwrap();
    assert_eq!(game.moves.len(), 1);
    proxy.arm(Cut::BeforeCommit);
    let answered = block_on(store.commit(register("ann")));
    assert!(
        matches!(answered, Err(StoreError::Failed(_))),
        "{answered:?}"
    );
    assert_eq!(block_on(store.registration("ann".into())), Ok(None));
    assert_eq!(block_on(store.commit(register("ann"))), Ok(1));
    opened.threads.close();
}

#[test]
fn a_daemon_stopping_with_a_commit_in_doubt_and_the_server_down_stops() {
    use super::cut_proxy::Cut;
    let Some(db) = ScratchDatabase::new("in_doubt_closing") else {
        return;
    };
    let (proxy, opened) = cut_store(&db);
    let store = opened.store;
    proxy.go_down();
    proxy.arm(Cut::AfterNext);
    let answer = store.append_move(1, 1, "f5".parse().unwrap(), 5);
    // The writer is in doubt once it says the store refuses.
    let stats = store.live_stats();
    let began = std::time::Instant::now();
    while !stats.refusing() {
        assert!(
            began.elapsed() < std::time::Duration::from_secs(30),
            "never in doubt"
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    opened.threads.close();
    assert_eq!(block_on(answer), Err(StoreError::Closed), "left unanswered");
}

#[test]
fn a_sqlite_store_is_copied_whole_into_an_empty_database_and_checked() {
    let Some(db) = ScratchDatabase::new("copy") else {
        return;
    };
    let path = temp_path("copy-source");
    let sqlite = config(&path);
    let opened = Store::open(&sqlite).unwrap();
    let store = opened.store;
    let register = Write::Register {
        name: "Ann".into(),
        hash: "$argon2id$v=19$copied".into(),
    };
    block_on(store.commit(register)).unwrap();
    rated(&store, 1, "Ann", "bob", Some(Color::White));
    block_on(store.commit(new_game(2, Some("bot:2"), "f5d6"))).unwrap();
    block_on(store.append_move(2, 3, "c3".parse().unwrap(), 900)).unwrap();
    let spec: TourneySpec = "roundrobin othello".parse().unwrap();
    let creator = "Ann".to_string();
    let tourney = TourneyWrite::New {
        id: 1,
        creator,
        spec,
    };
    block_on(store.commit(Write::Tourney(tourney))).unwrap();
    let join = TourneyWrite::Join {
        id: 1,
        name: "bob".into(),
    };
    block_on(store.commit(Write::Tourney(join))).unwrap();
    let finished = block_on(store.history(1)).unwrap().unwrap();
    let ratings = block_on(store.ratings_of("ann".into(), None)).unwrap();
    opened.threads.close();

    let mut target = sqlite.clone();
    target.url = StoreUrl::new(db.url.clone());
    let copied = super::copy_store(&target).unwrap();
    let count = |table: &str| copied.rows.iter().find(|(t, _)| *t == table).map(|r| r.1);
    assert_eq!(count("games"), Some(2));
    assert_eq!(
        count("moves"),
        Some(3),
        "the game in play's moves from the log"
    );
    assert_eq!(count("players"), Some(1));
    assert_eq!(count("rating_changes"), Some(2));

    let opened = Store::open(&pg_config(&db)).unwrap();
    let [playing] = opened.playing.as_slice() else {
        panic!("{:?}", opened.playing)
    };
    assert_eq!(
        flipline::notation::transcript_string(&playing.transcript()),
        "f5d6c3"
    );
    assert_eq!(playing.moves[2].ms, Some(900));
    assert_eq!(opened.next_game, 3);
    assert_eq!(opened.registered.registered("ANN"), Some("Ann"));
    assert_eq!(opened.tourneys.len(), 1);
    assert_eq!(opened.tourneys[0].players, ["bob"]);
    let store = opened.store;
    assert_eq!(block_on(store.history(1)).unwrap().unwrap(), finished);
    assert_eq!(
        block_on(store.ratings_of("ann".into(), None)).unwrap(),
        ratings
    );
    let hash = block_on(store.registration("ann".into()))
        .unwrap()
        .unwrap()
        .hash;
    assert_eq!(hash, "$argon2id$v=19$copied");
    opened.threads.close();

    let again = super::copy_store(&target).err().unwrap().to_string();
    assert!(again.contains("empty database only"), "{again}");
}

/// Whether a connection made as `url` says is encrypted, or why it failed.
fn encrypted(config: &StoreConfig, url: &str) -> Result<bool, String> {
    let mut config = config.clone();
    config.url = StoreUrl::new(url);
    let runtime = super::runtime(&config).map_err(|e| e.to_string())?;
    runtime.block_on(async {
        let client = super::connect::connect(&config).await?;
        let sql = "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()";
        let row = client
            .query_one(sql, &[])
            .await
            .map_err(|e| e.to_string())?;
        Ok(row.get(0))
    })
}

#[test]
fn tls_is_used_and_checked_as_the_urls_sslmode_asks() {
    let Some(ca) = flipline_test_servers::postgres_ca() else {
        return;
    };
    let ca = ca.display();
    let Some(db) = ScratchDatabase::new("tls") else {
        return;
    };
    let config = pg_config(&db);
    let url = |query: &str| format!("{}?{query}", db.url);
    assert_eq!(encrypted(&config, &url("sslmode=disable")), Ok(false));
    assert_eq!(encrypted(&config, &url("sslmode=prefer")), Ok(true));
    assert_eq!(encrypted(&config, &url("sslmode=require")), Ok(true));
    let chain = url(&format!("sslmode=verify-ca&sslrootcert={ca}"));
    assert_eq!(
        encrypted(&config, &chain),
        Ok(true),
        "a chain to the authority named"
    );
    // The server's certificate names flipline-test, not 127.0.0.1.
    let full = url(&format!("sslmode=verify-full&sslrootcert={ca}"));
    let refused = encrypted(&config, &full).expect_err("the host is not the certificate's");
    assert!(refused.contains("certificate"), "{refused}");
    let unknown = encrypted(&config, &url("sslmode=verify-ca")).expect_err("the system's roots");
    assert!(unknown.contains("certificate"), "{unknown}");
    // The store itself on an encrypted, checked connection.
    let mut checked = config.clone();
    checked.url = StoreUrl::new(chain);
    let opened = Store::open(&checked).unwrap();
    block_on(opened.store.commit(register("tls"))).unwrap();
    opened.threads.close();
}
