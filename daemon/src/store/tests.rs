//! The store's unit tests: batches and the writes that fail in them, restarts
//! and recovery, the files refused, the move log against a model. In a file
//! of their own: most cross the writer, the opening and the archive at once.

use std::path::Path;
use std::sync::mpsc::channel;

use flipline::Move;
use flipline::protocol::{EndReason, GameId, GameResult};
use rusqlite::Connection;
use tokio::sync::oneshot;

use super::move_log::{self, MoveLog};
use super::reader::open_reader;
use super::records::Registration;
use super::requests::run_writer;
use super::requests::{Then, ToWriter, WriteJob, next_batch};
use super::test_support::{block_on, config, new_game, temp_path};
use super::wal_watch::WalWatch;
use super::writer::Writer;
use super::*;

#[test]
fn the_writer_cache_is_set_in_mebibytes() {
    let path = temp_path("cache");
    let conn = writer(&path).conn;
    schema::set_cache(&conn, 3).unwrap();
    let kib: i64 = conn
        .pragma_query_value(None, "cache_size", |r| r.get(0))
        .unwrap();
    assert_eq!(kib, -3072);
}

/// The writer of a new store at `path`.
fn writer(path: &Path) -> Writer {
    let mut conn = Connection::open(path).unwrap();
    schema::prepare_writer(&mut conn, &config(path)).unwrap();
    let log = MoveLog::load(&conn).unwrap();
    let wal = WalWatch::new(&conn, path).unwrap();
    Writer {
        beside: None,
        conn,
        log,
        faults: None,
        disk_full: false,
        wal,
        rating_period_days: 1,
    }
}

fn job(write: Write) -> (WriteJob, oneshot::Receiver<Result<usize, StoreError>>) {
    let (tx, rx) = oneshot::channel();
    (
        WriteJob {
            write,
            done: Some(tx),
        },
        rx,
    )
}

#[test]
fn a_store_keeps_games_across_restarts_and_cancels_open_ones() {
    let path = temp_path("restart");
    let opened = Store::open(&config(&path)).unwrap();
    assert_eq!((opened.playing.len(), opened.next_game), (0, 1));
    let store = opened.store;
    store.write(new_game(1, Some("bot:3"), "f5d6"));
    store.write(new_game(2, None, ""));
    block_on(store.append_move(1, 3, "c3".parse().unwrap(), 1500)).unwrap();
    opened.threads.close();
    assert!(block_on(store.append_move(1, 4, Move::Pass, 1)).is_err());

    let opened = Store::open(&config(&path)).unwrap();
    assert_eq!(opened.next_game, 3);
    let [game] = opened.playing.as_slice() else {
        panic!("{:?}", opened.playing)
    };
    assert_eq!(game.id, 1);
    assert_eq!(game.white.as_deref(), Some("bot:3"));
    assert_eq!(game.clock.map(|c| c.to_string()).as_deref(), Some("5+3"));
    let ms: Vec<Option<u64>> = game.moves.iter().map(|m| m.ms).collect();
    assert_eq!(ms, [None, None, Some(1500)]);
    assert_eq!(
        flipline::notation::transcript_string(&game.transcript()),
        "f5d6c3"
    );
    let open = block_on(opened.store.history(2)).unwrap().unwrap();
    assert_eq!(open.status, Status::Cancelled);
    assert!(open.ended_at.is_some());
    assert_eq!(block_on(opened.store.history(9)).unwrap(), None);
    opened.threads.close();
}

#[test]
fn writes_queued_together_are_committed_in_one_transaction() {
    let path = temp_path("batch");
    let conn = writer(&path);
    let (requests, queue) = channel();
    let mut answers = Vec::new();
    let (first, _) = job(new_game(1, Some("bob"), ""));
    requests.send(ToWriter::Job(first)).unwrap();
    for ply in 1..=40 {
        let mv = if ply % 2 == 1 { "f5" } else { "d6" };
        let (job, answer) = job(Write::Move {
            game: 1,
            ply,
            mv: if ply <= 2 {
                mv.parse().unwrap()
            } else {
                Move::Pass
            },
            ms: 10,
        });
        requests.send(ToWriter::Job(job)).unwrap();
        answers.push(answer);
    }
    requests.send(ToWriter::Close).unwrap();
    let stats = StoreStats::default();
    run_writer(conn, &queue, 1000, &stats);
    assert_eq!(stats.snapshot(), (1, 41, 41));
    for mut answer in answers {
        assert_eq!(answer.try_recv().unwrap(), Ok(1));
    }
}

#[test]
fn a_failing_write_fails_alone_and_the_batch_bound_holds() {
    let path = temp_path("alone");
    let mut conn = writer(&path);
    let stats = StoreStats::default();
    let (create, _) = job(new_game(1, Some("bob"), ""));
    let (good, mut good_answer) = job(Write::Move {
        game: 1,
        ply: 1,
        mv: "f5".parse().unwrap(),
        ms: 5,
    });
    // No game 7: the move log refuses the move.
    let (bad, mut bad_answer) = job(Write::Move {
        game: 7,
        ply: 1,
        mv: "f5".parse().unwrap(),
        ms: 5,
    });
    let mut batch = vec![create, bad, good];
    conn.commit_batch(&mut batch, &stats);
    assert!(batch.is_empty(), "every job answered");
    assert_eq!(good_answer.try_recv().unwrap(), Ok(1));
    assert!(matches!(
        bad_answer.try_recv().unwrap(),
        Err(StoreError::Failed(_))
    ));
    assert_eq!(stats.snapshot().0, 2, "the two good writes, each alone");
    let (requests, queue) = channel();
    for _ in 0..5 {
        requests
            .send(ToWriter::Job(job(Write::Cancel { game: 1 }).0))
            .unwrap();
    }
    let mut batch = Vec::new();
    let then = next_batch(&queue, 3, &mut batch, &mut Vec::new(), None);
    assert!(matches!(then, Then::Go));
    assert_eq!(batch.len(), 3);
    batch.clear();
    requests.send(ToWriter::Close).unwrap();
    let then = next_batch(&queue, 3, &mut batch, &mut Vec::new(), None);
    assert!(matches!(then, Then::Close), "told to close");
    assert_eq!(batch.len(), 2);
    batch.clear();
    drop(requests);
    let then = next_batch(&queue, 3, &mut batch, &mut Vec::new(), None);
    assert!(matches!(then, Then::Gone), "every handle dropped");
}

#[test]
fn a_full_disk_refuses_writes_and_the_store_goes_on_after() {
    let path = temp_path("full");
    let mut conn = writer(&path);
    let stats = StoreStats::default();
    let (create, _) = job(new_game(1, Some("bob"), ""));
    conn.commit_batch(&mut vec![create], &stats);
    let pages: i64 = (conn.conn)
        .pragma_query_value(None, "page_count", |r| r.get(0))
        .unwrap();
    (conn.conn)
        .pragma_update(None, "max_page_count", pages)
        .unwrap();
    let mut refused = None;
    for ply in 1..=5000 {
        let (write, mut answer) = job(Write::Register {
            name: format!("player{ply}"),
            hash: "x".repeat(200),
        });
        conn.commit_batch(&mut vec![write], &stats);
        if let Err(e) = answer.try_recv().unwrap() {
            refused = Some(e);
            break;
        }
    }
    let refused = refused.expect("the page limit was never reached");
    assert!(refused.to_string().contains("disk is full"), "{refused}");
    (conn.conn)
        .pragma_update(None, "max_page_count", pages * 100)
        .unwrap();
    let (write, mut answer) = job(Write::Register {
        name: "later".into(),
        hash: "x".into(),
    });
    conn.commit_batch(&mut vec![write], &stats);
    assert_eq!(answer.try_recv().unwrap(), Ok(1));
}

/// The size of the store's WAL file (0 if there is none).
fn wal_bytes(path: &Path) -> u64 {
    let mut name = path.as_os_str().to_owned();
    name.push("-wal");
    std::fs::metadata(std::path::PathBuf::from(name)).map_or(0, |m| m.len())
}

#[test]
fn a_name_is_registered_once_whatever_its_case_and_found_in_any() {
    let path = temp_path("caseless");
    let opened = Store::open(&config(&path)).unwrap();
    let register = |name: &str, hash: &str| {
        let write = Write::Register {
            name: name.into(),
            hash: hash.into(),
        };
        block_on(opened.store.commit(write)).unwrap()
    };
    assert_eq!(register("Vic", "first"), 1);
    assert_eq!(
        register("vic", "second"),
        0,
        "another case is the same name"
    );
    let found = block_on(opened.store.registration("VIC".into())).unwrap();
    let first = Registration {
        name: "Vic".into(),
        hash: "first".into(),
        bot: false,
        othello_rating: None,
    };
    assert_eq!(found, Some(first));
    // A file from before caseless names may hold two spellings: each still
    // finds its own.
    let conn = Connection::open(&*path).unwrap();
    conn.execute(
        "INSERT INTO players (name, password_hash, created_at) VALUES ('vIc', 'older', 'then')",
        [],
    )
    .unwrap();
    let exact = block_on(opened.store.registration("vIc".into())).unwrap();
    assert_eq!(exact.map(|k| k.hash), Some("older".into()));
    let found = block_on(opened.store.registration("Vic".into())).unwrap();
    assert_eq!(found.map(|k| k.hash), Some("first".into()));
    opened.threads.close();
}

#[test]
fn guests_secrets_are_kept_with_their_seats_while_in_play_only() {
    let path = temp_path("secrets");
    let opened = Store::open(&config(&path)).unwrap();
    let store = opened.store;
    let Write::NewGame {
        id,
        variant,
        black,
        clock,
        start,
        ..
    } = new_game(1, None, "")
    else {
        unreachable!()
    };
    let ann = Some("0f".repeat(16));
    let open = Write::NewGame {
        id,
        variant,
        black,
        white: None,
        secrets: [ann.clone(), None],
        clock,
        status: Status::Open,
        start,
        rated: false,
        tourney: None,
    };
    block_on(store.commit(open)).unwrap();
    let bob = Some("1e".repeat(16));
    let seats = Write::Seats {
        game: 1,
        black: Some("ann".into()),
        white: Some("bob".into()),
        secrets: [ann.clone(), bob.clone()],
    };
    block_on(store.commit(seats)).unwrap();
    let playing = block_on(store.history(1)).unwrap().unwrap();
    assert_eq!(playing.secrets, [ann.clone(), bob]);
    block_on(store.commit(the_end(1))).unwrap();
    let over = block_on(store.history(1)).unwrap().unwrap();
    assert_eq!(
        over.secrets,
        [None, None],
        "forgotten once the game is over"
    );
    let Write::NewGame {
        variant,
        clock,
        start,
        ..
    } = new_game(2, None, "")
    else {
        unreachable!()
    };
    let open = Write::NewGame {
        id: 2,
        variant,
        black: Some("ann".into()),
        white: None,
        secrets: [ann, None],
        clock,
        status: Status::Open,
        start,
        rated: false,
        tourney: None,
    };
    block_on(store.commit(open)).unwrap();
    block_on(store.commit(Write::Cancel { game: 2 })).unwrap();
    let cancelled = block_on(store.history(2)).unwrap().unwrap();
    assert_eq!(cancelled.secrets, [None, None], "and once it is cancelled");
    opened.threads.close();
}

fn registration(n: usize) -> Write {
    Write::Register {
        name: format!("player{n}"),
        hash: "x".repeat(1000),
    }
}

#[test]
fn the_wal_stays_bounded_while_the_database_grows() {
    let path = temp_path("bounded");
    let opened = Store::open(&config(&path)).unwrap();
    let mut largest = 0;
    for n in 0..3000 {
        block_on(opened.store.commit(registration(n))).unwrap();
        largest = largest.max(wal_bytes(&path));
    }
    let database = std::fs::metadata(&*path).unwrap().len();
    assert!(
        database > 3_000_000,
        "{database} bytes in the database file"
    );
    // About a megabyte (a checkpoint interval and a commit past it);
    // SQLite's default (1000 pages) let it reach 4 MiB first.
    assert!(largest <= 1_250_000, "the WAL reached {largest} bytes");
    opened.threads.close();
}

/// The WAL is copied beside the writer: a thread of its own checkpoints
/// most of it, and the store closes leaving no WAL behind (the writer's
/// connection closes last).
#[test]
fn checkpoints_run_beside_the_writer_and_the_store_closes_without_a_wal() {
    let path = temp_path("beside");
    let opened = Store::open(&config(&path)).unwrap();
    let stats = opened.store.live_stats();
    for n in 0..3000 {
        block_on(opened.store.commit(registration(n))).unwrap();
    }
    let (beside, in_commit) = stats.checkpoints();
    // Commits back to back leave the thread beside no gap to catch up in,
    // so the writer still checkpoints at its bound, copying what is left.
    assert!(
        beside > in_commit,
        "{beside} checkpoints beside the writer, {in_commit} in its commits"
    );
    opened.threads.close();
    let mut wal = path.as_os_str().to_owned();
    wal.push("-wal");
    assert!(
        !std::path::Path::new(&wal).exists(),
        "the WAL outlived the store"
    );
}

#[test]
fn a_store_left_with_a_big_wal_is_checkpointed_and_emptied_at_start() {
    let path = temp_path("big-wal");
    Store::open(&config(&path)).unwrap().threads.close();
    // A daemon that wrote without checkpointing and died: a copy of the
    // files taken while its connection was open is what it left behind.
    let crashed = temp_path("crashed");
    let conn = Connection::open(&*path).unwrap();
    conn.pragma_update(None, "wal_autocheckpoint", 0).unwrap();
    for n in 0..2000 {
        let Write::Register { name, hash } = registration(n) else {
            unreachable!()
        };
        conn.execute(
            "INSERT INTO players (name, password_hash, created_at) VALUES (?1, ?2, 'then')",
            rusqlite::params![name, hash],
        )
        .unwrap();
    }
    for suffix in ["", "-wal"] {
        let mut from = path.as_os_str().to_owned();
        let mut to = crashed.as_os_str().to_owned();
        from.push(suffix);
        to.push(suffix);
        std::fs::copy(&from, &to).unwrap();
    }
    drop(conn);
    let left = wal_bytes(&crashed);
    assert!(left > 2_000_000, "a WAL of {left} bytes was left");
    let opened = Store::open(&config(&crashed)).unwrap();
    assert_eq!(wal_bytes(&crashed), 0, "the WAL is emptied before serving");
    let known = block_on(opened.store.registration("player1999".into())).unwrap();
    assert_eq!(
        known.map(|k| k.hash.len()),
        Some(1000),
        "what the WAL held is kept"
    );
    opened.threads.close();
}

/// The store's WAL file.
fn wal_of(path: &Path) -> std::path::PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push("-wal");
    std::path::PathBuf::from(name)
}

#[test]
fn a_wal_removed_under_a_running_store_stops_every_write() {
    let path = temp_path("wal-removed");
    let opened = Store::open(&config(&path)).unwrap();
    block_on(opened.store.commit(new_game(1, Some("bob"), "f5"))).unwrap();
    block_on(opened.store.commit(a_move(1, 2))).unwrap();
    let acknowledged = block_on(opened.store.history(1)).unwrap().unwrap();
    std::fs::remove_file(wal_of(&path)).unwrap();
    let refused = |ply| {
        let result = block_on(opened.store.commit(a_move(1, ply)));
        let Err(StoreError::Failed(why)) = result else {
            panic!("move {ply} after the WAL went: {result:?}")
        };
        assert!(why.contains(&wal_of(&path).display().to_string()), "{why}");
        assert!(why.contains("removed or replaced"), "{why}");
    };
    refused(3);
    // An empty file put back under the name does not make writes safe again.
    std::fs::write(wal_of(&path), b"").unwrap();
    refused(3);
    assert!(
        block_on(opened.store.history(1)).unwrap().is_some(),
        "reads go on"
    );
    // What was acknowledged was copied into the database file when the loss
    // was found: the file alone, as a crash would leave it, has it.
    let crashed = temp_path("wal-removed-crash");
    std::fs::copy(&*path, &*crashed).unwrap();
    let survivor = Store::open(&config(&crashed)).unwrap();
    let [game] = survivor.playing.as_slice() else {
        panic!("the database file alone holds {:?}", survivor.playing)
    };
    assert_eq!(game.moves, acknowledged.moves);
    assert_eq!(game.moves.len(), 2);
    survivor.threads.close();
    opened.threads.close();
}

#[test]
fn the_wal_watched_is_the_one_sqlite_names_after_a_symlinks_target() {
    let path = temp_path("wal-symlink");
    let link = path.parent().unwrap().join("link.db");
    std::os::unix::fs::symlink(&*path, &link).unwrap();
    let opened = Store::open(&config(&link)).unwrap();
    block_on(opened.store.commit(new_game(1, Some("bob"), ""))).unwrap();
    assert!(
        !wal_of(&link).exists(),
        "SQLite names the WAL after the target"
    );
    std::fs::remove_file(wal_of(&path)).unwrap();
    let refused = block_on(opened.store.commit(new_game(2, Some("bob"), "")));
    assert!(
        matches!(&refused, Err(StoreError::Failed(why)) if why.contains("removed or replaced")),
        "{refused:?}"
    );
    opened.threads.close();
}

#[test]
fn sqlite_changing_its_own_wal_is_not_taken_for_a_loss() {
    let path = temp_path("wal-kept");
    let mut writer = writer(&path);
    let stats = StoreStats::default();
    let (create, mut created) = job(new_game(1, Some("bob"), ""));
    writer.commit_batch(&mut vec![create], &stats);
    assert_eq!(created.try_recv().unwrap(), Ok(1));
    for ply in 1..=2000 {
        // Past several checkpoints, the WAL started over and cut back.
        let (write, mut answer) = job(Write::Register {
            name: format!("p{ply}"),
            hash: "x".repeat(500),
        });
        writer.commit_batch(&mut vec![write], &stats);
        assert_eq!(answer.try_recv().unwrap(), Ok(1), "write {ply}");
        if ply % 500 == 0 {
            checkpoint::empty_at_start(&writer.conn, 0);
            assert_eq!(wal_bytes(&path), 0, "truncated");
        }
    }
}

#[test]
fn a_fault_switch_fails_the_writes_of_a_running_store_until_healed() {
    let path = temp_path("switch");
    let faults = Faults::new();
    let mut with_faults = config(&path);
    with_faults.faults = Some(faults.clone());
    let opened = Store::open(&with_faults).unwrap();
    faults.fail_writes();
    let refused = block_on(opened.store.commit(new_game(1, Some("bob"), "")));
    assert!(
        matches!(&refused, Err(StoreError::Failed(why)) if why.contains("full")),
        "{refused:?}"
    );
    faults.heal();
    let stored = block_on(opened.store.commit(new_game(2, Some("bob"), "")));
    assert_eq!(stored, Ok(1));
    let history = block_on(opened.store.history(1)).unwrap();
    assert!(history.is_none(), "a refused creation was stored");
    opened.threads.close();
}

#[test]
fn files_that_are_not_a_store_are_refused_by_name_and_left_alone() {
    let garbage = temp_path("garbage");
    let bytes: Vec<u8> = (0..8192u32).map(|i| (i * 7 % 251) as u8).collect();
    std::fs::write(&garbage, &bytes).unwrap();
    let foreign = temp_path("foreign");
    Connection::open(&foreign)
        .unwrap()
        .execute_batch("CREATE TABLE accounts (id INTEGER); INSERT INTO accounts VALUES (1);")
        .unwrap();
    let newer = temp_path("newer");
    let conn = Connection::open(&newer).unwrap();
    conn.pragma_update(None, "application_id", schema::APPLICATION_ID)
        .unwrap();
    conn.pragma_update(None, "user_version", 99).unwrap();
    conn.execute_batch("CREATE TABLE t (x);").unwrap();
    drop(conn);
    for (path, why) in [
        (&garbage, "not a SQLite database"),
        (&foreign, "another program"),
        (&newer, "newer flipd"),
    ] {
        let before = std::fs::read(path).unwrap();
        let error = Store::open(&config(path)).err().unwrap();
        let text = error.to_string();
        assert!(text.contains(&path.display().to_string()), "{text}");
        assert!(text.contains(why), "{text}");
        assert_eq!(
            std::fs::read(path).unwrap(),
            before,
            "{} changed",
            path.display()
        );
        let error = Archive::open(path).err().unwrap();
        assert!(error.to_string().contains(why), "{error}");
    }
}

#[test]
fn a_damaged_store_is_refused_at_start() {
    let path = temp_path("damaged");
    let opened = Store::open(&config(&path)).unwrap();
    for id in 1..=300 {
        opened.store.write(new_game(id, Some("bob"), "f5d6c3d3c4"));
    }
    opened.threads.close();
    let mut bytes = std::fs::read(&path).unwrap();
    assert!(bytes.len() > 8 * 4096, "{} bytes", bytes.len());
    // Scribble over the pages after the first, as a bad disk might.
    for (i, byte) in bytes.iter_mut().enumerate().skip(4096 * 2).take(4096 * 4) {
        *byte = (i % 251) as u8;
    }
    std::fs::write(&path, &bytes).unwrap();
    let error = Store::open(&config(&path)).err().unwrap().to_string();
    assert!(error.contains(&path.display().to_string()), "{error}");
    assert!(error.contains("damaged"), "{error}");
    assert_eq!(std::fs::read(&path).unwrap(), bytes, "left as it was");
}

#[test]
fn a_second_store_on_the_same_file_is_refused() {
    let path = temp_path("twice");
    let opened = Store::open(&config(&path)).unwrap();
    let error = Store::open(&config(&path)).err().unwrap();
    assert!(error.to_string().contains("in use"), "{error}");
    opened.threads.close();
    Store::open(&config(&path)).unwrap().threads.close();
}

#[test]
fn a_second_store_through_a_link_to_the_same_file_is_refused() {
    let path = temp_path("links");
    let dir = path.parent().unwrap();
    let symlink = dir.join("symlink.db");
    let hard_link = dir.join("hard-link.db");
    let opened = Store::open(&config(&path)).unwrap();
    std::os::unix::fs::symlink(&*path, &symlink).unwrap();
    std::fs::hard_link(&*path, &hard_link).unwrap();
    block_on(opened.store.commit(new_game(1, Some("bob"), "f5"))).unwrap();
    for link in [&symlink, &hard_link] {
        let error = Store::open(&config(link)).err().unwrap().to_string();
        assert!(error.contains("in use by another flipd"), "{error}");
        assert!(error.contains(&link.display().to_string()), "{error}");
    }
    // The refusals left the first store as it was: it writes on.
    block_on(opened.store.commit(a_move(1, 2))).unwrap();
    opened.threads.close();
    // Closed, the file may be opened by any of its names, with its games.
    let opened = Store::open(&config(&hard_link)).unwrap();
    assert_eq!(opened.playing.len(), 1);
    assert_eq!(opened.playing[0].moves.len(), 2);
    opened.threads.close();
}

#[test]
fn a_store_file_locked_elsewhere_is_refused() {
    let path = temp_path("locked");
    Store::open(&config(&path)).unwrap().threads.close();
    // A lock on the file itself, as another flipd process holds it (a lock
    // of this process through a descriptor of its own is refused alike).
    let other = std::fs::File::open(&*path).unwrap();
    other.try_lock().unwrap();
    let error = Store::open(&config(&path)).err().unwrap().to_string();
    assert!(error.contains("in use by another flipd"), "{error}");
    drop(other);
    Store::open(&config(&path)).unwrap().threads.close();
}

#[test]
fn a_game_whose_rows_do_not_read_back_is_left_out_and_the_others_recovered() {
    let path = temp_path("damaged-rows");
    let opened = Store::open(&config(&path)).unwrap();
    for id in 1..=5 {
        opened.store.write(new_game(id, Some("bob"), "f5d6"));
    }
    opened.store.write(new_game(6, None, "f5"));
    block_on(opened.store.commit(a_move(1, 3))).unwrap();
    opened.threads.close();
    let conn = Connection::open(&*path).unwrap();
    conn.execute_batch(
        "UPDATE games SET clock = '99999999+0' WHERE id = 2;
         UPDATE games SET variant = 'chess' WHERE id = 3;
         UPDATE move_log SET move = 'zz' WHERE game = 4 AND ply = 2;
         UPDATE move_log SET move = 'not-a-move' WHERE game = 6;",
    )
    .unwrap();
    drop(conn);
    let opened = Store::open(&config(&path)).unwrap();
    let recovered: Vec<GameId> = opened.playing.iter().map(|g| g.id).collect();
    assert_eq!(recovered, [1, 5]);
    assert_eq!(opened.playing[0].moves.len(), 3);
    for damaged in [2, 3, 4] {
        let told = block_on(opened.store.history(damaged));
        assert!(told.is_err(), "HISTORY {damaged}: {told:?}");
    }
    block_on(opened.store.commit(a_move(1, 4))).unwrap();
    opened.threads.close();
    // Left as they were, for repair: not cancelled, not trimmed, not ended.
    let conn = Connection::open(&*path).unwrap();
    assert_eq!(
        rows(
            &conn,
            "SELECT count(*) FROM games WHERE id = 6 AND status = 'open'"
        ),
        1
    );
    assert_eq!(
        rows(
            &conn,
            "SELECT count(*) FROM move_log WHERE move IN ('zz', 'not-a-move')"
        ),
        2
    );
    let clock: String = conn
        .query_row("SELECT clock FROM games WHERE id = 2", [], |r| r.get(0))
        .unwrap();
    assert_eq!(clock, "99999999+0");
}

#[test]
fn the_archive_finds_finished_games_by_player_and_date() {
    let path = temp_path("archive");
    let opened = Store::open(&config(&path)).unwrap();
    let store = opened.store;
    let result = GameResult {
        winner: Some(flipline::Color::Black),
        black: 40,
        white: 24,
        reason: EndReason::Normal,
    };
    store.write(new_game(1, Some("bob"), "f5"));
    store.write(new_game(2, Some("cid"), "f5d6"));
    store.write(new_game(3, Some("bob"), ""));
    store.write(Write::End { game: 1, result });
    block_on(store.commit(Write::End { game: 2, result })).unwrap();
    let archive = Archive::open(&path).unwrap();
    let all = archive.finished_games(None, None, None).unwrap();
    assert_eq!(all.iter().map(|g| g.id).collect::<Vec<_>>(), [1, 2]);
    assert_eq!(all[1].result, Some(result));
    assert_eq!(all[1].moves.len(), 2);
    let bobs = archive.finished_games(Some("bob"), None, None).unwrap();
    assert_eq!(bobs.iter().map(|g| g.id).collect::<Vec<_>>(), [1]);
    assert!(
        archive
            .finished_games(None, Some("2999-01-01"), None)
            .unwrap()
            .is_empty()
    );
    assert_eq!(
        archive
            .finished_games(None, Some("2000-01-01"), None)
            .unwrap()
            .len(),
        2
    );
    assert_eq!(archive.playing_games().unwrap().len(), 1);
    opened.threads.close();
}

fn rows(conn: &Connection, sql: &str) -> i64 {
    conn.query_row(sql, [], |r| r.get(0)).unwrap()
}

fn a_move(game: GameId, ply: u32) -> Write {
    let mv = if ply.is_multiple_of(3) {
        Move::Pass
    } else {
        "f5".parse().unwrap()
    };
    Write::Move {
        game,
        ply,
        mv,
        ms: u64::from(ply) * 10,
    }
}

fn the_end(game: GameId) -> Write {
    let result = GameResult {
        winner: None,
        black: 32,
        white: 32,
        reason: EndReason::Resign,
    };
    Write::End { game, result }
}

#[test]
fn moves_stay_in_the_log_until_their_game_ends() {
    let path = temp_path("log");
    let opened = Store::open(&config(&path)).unwrap();
    let store = opened.store;
    store.write(new_game(1, Some("bob"), "f5d6"));
    for ply in 3..=6 {
        block_on(store.commit(a_move(1, ply))).unwrap();
    }
    let reader = open_reader(&path).unwrap();
    assert_eq!(rows(&reader, "SELECT count(*) FROM move_log"), 6);
    assert_eq!(rows(&reader, "SELECT count(*) FROM moves"), 0);
    let playing = block_on(store.history(1)).unwrap().unwrap();
    let scanned = records::game(&reader, 1).unwrap().unwrap();
    assert_eq!(playing, scanned, "the writer's memory and the log agree");
    block_on(store.commit(the_end(1))).unwrap();
    let over = block_on(store.history(1)).unwrap().unwrap();
    assert_eq!(over.moves, playing.moves);
    assert_eq!(over.moves.len(), 6);
    assert_eq!(over.moves[4].ms, Some(50));
    assert_eq!(
        rows(&reader, "SELECT count(*) FROM moves WHERE game = 1"),
        6
    );
    let late = block_on(store.commit(a_move(1, 7)));
    assert!(matches!(late, Err(StoreError::Failed(why)) if why.contains("not open or in play")));
    opened.threads.close();
}

#[test]
fn numbers_an_older_build_reserved_are_never_given_again() {
    let path = temp_path("reserved");
    {
        // An older build killed with numbers reserved ahead (it may have
        // handed them out) and one game written.
        let mut writer = writer(&path);
        writer
            .run_transaction([new_game(1, None, "")].iter())
            .unwrap();
        (writer.conn)
            .execute("UPDATE game_numbers SET reserved = 70", [])
            .unwrap();
    }
    for _ in 0..2 {
        // Not after the first start, nor after its clean close.
        let opened = Store::open(&config(&path)).unwrap();
        assert_eq!(opened.next_game, 71);
        opened.threads.close();
    }
}

#[test]
fn a_move_out_of_order_is_refused_and_the_game_goes_on() {
    let path = temp_path("order");
    let mut writer = writer(&path);
    let stats = StoreStats::default();
    let (create, _) = job(new_game(1, Some("bob"), "f5"));
    let (again, mut again_answer) = job(a_move(1, 1));
    let (next, mut next_answer) = job(a_move(1, 2));
    writer.commit_batch(&mut vec![create, again, next], &stats);
    let refused = again_answer.try_recv().unwrap().unwrap_err();
    assert!(refused.to_string().contains("out of order"), "{refused}");
    assert_eq!(next_answer.try_recv().unwrap(), Ok(1));
    assert_eq!(writer.log.held_moves(1).map(|m| m.len()), Some(2));
    assert_eq!(rows(&writer.conn, "SELECT count(*) FROM move_log"), 2);
}

#[test]
fn a_store_of_the_first_schema_moves_its_games_in_play_to_the_log() {
    let path = temp_path("upgrade");
    {
        let conn = Connection::open(&path).unwrap();
        conn.execute_batch(schema::first_schema()).unwrap();
        conn.execute_batch(
            "PRAGMA application_id = 1179404624; PRAGMA user_version = 1;
             INSERT INTO games (id, variant, black, white, status, result,
                                black_score, white_score, reason, started_at)
               VALUES (1, 'othello', 'ann', 'bob', 'over', 'X', 40, 24, 'resign', 'then'),
                      (2, 'othello', 'ann', 'cid', 'playing', NULL, NULL, NULL, NULL, 'then');
             INSERT INTO moves VALUES (1, 1, 'f5', 10), (1, 2, 'd6', 20),
               (2, 1, 'f5', 30), (2, 2, 'f6', 40), (2, 3, 'e6', 50);",
        )
        .unwrap();
    }
    let opened = Store::open(&config(&path)).unwrap();
    assert_eq!(opened.next_game, 3, "numbering goes on from the last game");
    let [game] = opened.playing.as_slice() else {
        panic!("{:?}", opened.playing)
    };
    assert_eq!(
        flipline::notation::transcript_string(&game.transcript()),
        "f5f6e6"
    );
    block_on(opened.store.commit(a_move(2, 4))).unwrap();
    let over = block_on(opened.store.history(1)).unwrap().unwrap();
    assert_eq!(
        flipline::notation::transcript_string(&over.transcript()),
        "f5d6"
    );
    opened.threads.close();
    let conn = Connection::open(&path).unwrap();
    assert_eq!(rows(&conn, "SELECT count(*) FROM move_log"), 4);
    assert_eq!(rows(&conn, "SELECT count(*) FROM moves"), 2);
    assert_eq!(rows(&conn, "SELECT reserved FROM game_numbers"), 2);
    assert_eq!(
        rows(&conn, "PRAGMA user_version"),
        i64::from(schema::SCHEMA_VERSION)
    );
}

/// What the log must match: the moves of each game in play and of each
/// finished one.
#[derive(Default)]
struct Model {
    playing: std::collections::BTreeMap<GameId, u32>,
    finished: Vec<(GameId, u32)>,
    next_game: GameId,
}

/// One step of [`the_move_log_matches_every_game_through_failures_and_restarts`]:
/// what to do and to which of the games in play.
#[derive(Clone, Copy, Debug)]
enum Step {
    Move(usize),
    End(usize),
    /// Commit the writes so far.
    Commit,
    /// Commit the writes so far with a bad one: all roll back.
    Fail,
    /// Read the log again from the file, as at a start.
    Restart,
}

fn step() -> impl proptest::strategy::Strategy<Value = Step> {
    use proptest::prelude::*;
    prop_oneof![
        12 => (0..5usize).prop_map(Step::Move),
        2 => (0..4usize).prop_map(Step::End),
        4 => Just(Step::Commit),
        1 => Just(Step::Fail),
        1 => Just(Step::Restart),
    ]
}

/// Runs `steps` on a writer whose log is kept short (16 rows, trimmed by
/// 4), against a model of the plies of each game.
fn run_steps(writer: &mut Writer, steps: &[Step]) -> Model {
    let mut model = Model {
        next_game: 1,
        ..Model::default()
    };
    let mut pending: Vec<Write> = Vec::new();
    let mut staged = Model::default();
    let start = |model: &Model, staged: &mut Model, pending: &mut Vec<Write>| {
        while staged.playing.len() < 5 {
            let id = model.next_game.max(staged.next_game);
            staged.next_game = id + 1;
            staged.playing.insert(id, 1);
            pending.push(new_game(id, Some("bob"), "f5"));
        }
    };
    staged.playing = model.playing.clone();
    staged.next_game = model.next_game;
    start(&model, &mut staged, &mut pending);
    for step in steps.iter().chain([Step::Commit].iter()) {
        let games: Vec<GameId> = staged.playing.keys().copied().collect();
        match *step {
            Step::Move(slot) => {
                let game = games[slot % games.len()];
                let plies = staged.playing.entry(game).or_default();
                *plies += 1;
                pending.push(a_move(game, *plies));
            }
            Step::End(slot) => {
                // The oldest game never ends: it would pin the log if it
                // were not logged again.
                let game = games[1 + slot % (games.len() - 1)];
                let plies = staged.playing.remove(&game).unwrap_or(0);
                staged.finished.push((game, plies));
                pending.push(the_end(game));
                start(&model, &mut staged, &mut pending);
            }
            Step::Commit | Step::Fail => {
                if matches!(step, Step::Fail) {
                    pending.push(a_move(999_999, 1));
                }
                let outcome = writer.run_transaction(pending.iter());
                let writes = i64::try_from(pending.len()).unwrap();
                pending.clear();
                assert_log_is_short(writer, writes);
                if outcome.is_ok() {
                    model.playing = staged.playing.clone();
                    model.finished = staged.finished.clone();
                    model.next_game = staged.next_game;
                } else {
                    staged.playing = model.playing.clone();
                    staged.finished = model.finished.clone();
                    staged.next_game = model.next_game;
                    start(&model, &mut staged, &mut pending);
                }
            }
            Step::Restart => {
                writer.log = MoveLog::load(&writer.conn).unwrap();
                writer.log.set_bounds(16, 4);
            }
        }
    }
    model
}

/// The log holds at most its bound (16 rows or twice the moves held), a
/// trim step, every game logged again, and the last batch's rows.
fn assert_log_is_short(writer: &Writer, last_batch: i64) {
    let held = i64::try_from(writer.log.held()).unwrap();
    let in_log = rows(&writer.conn, "SELECT count(*) FROM move_log");
    let most = 16.max(2 * held) + 4 + held + last_batch;
    assert!(
        in_log <= most,
        "{in_log} rows in the log, at most {most} expected"
    );
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(32))]

    #[test]
    fn the_move_log_matches_every_game_through_failures_and_restarts(
        steps in proptest::collection::vec(step(), 1..600),
    ) {
        let path = temp_path("model");
        let mut writer = writer(&path);
        writer.log.set_bounds(16, 4);
        let model = run_steps(&mut writer, &steps);
        let logged = move_log::logged_moves(&writer.conn).unwrap().moves;
        for (&game, &plies) in &model.playing {
            let expected: Vec<StoredMove> = (1..=plies)
                .map(|ply| match a_move(game, ply) {
                    Write::Move { mv, ms, .. } if ply > 1 => StoredMove { mv, ms: Some(ms) },
                    _ => StoredMove { mv: "f5".parse().unwrap(), ms: None },
                })
                .collect();
            proptest::prop_assert_eq!(writer.log.held_moves(game), Some(expected.clone()));
            proptest::prop_assert_eq!(logged.get(&game), Some(&expected));
        }
        proptest::prop_assert_eq!(logged.len(), model.playing.len());
        for &(game, plies) in &model.finished {
            let stored = rows(&writer.conn, &format!("SELECT count(*) FROM moves WHERE game = {game}"));
            proptest::prop_assert_eq!(stored, i64::from(plies));
        }
    }
}
