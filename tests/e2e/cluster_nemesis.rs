//! The cluster under a nemesis: three nodes on loopback whose links to
//! PostgreSQL and to NATS go through proxies, cut (refused or silently
//! dropped) and healed, nodes paused, killed and started again, PostgreSQL
//! cut from every node at once, while pairs of players on different nodes
//! play as fast as replies come and record every reply. Afterwards every
//! promise is checked (see `check`): acknowledged moves stored at their
//! ply, never two at one ply, stored plies contiguous and legal, nothing
//! answered "not played" stored, nobody in two games in play, every game
//! in play owned by a live node and moving again after the last heal.
//!
//! Run by `tests/tools/nemesis.sh` (`FLIPLINE_NEMESIS_FAULTS`,
//! `FLIPLINE_NEMESIS_SEED`, `FLIPLINE_NEMESIS_PAIRS`), which prints the
//! figures per fault. Not yet in every test run: the seed fixes the
//! faults but not their timing against the players, and some runs still
//! leave games unmoved for more than the guard after the last heal (a
//! player's name held on the node of its dropped connection, `ERR 409
//! name ... is in use`); until that is understood and fixed the run is
//! asked for by name.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use flipline_test_servers::ScratchDatabase;
use flipline_tests::*;

mod check;
mod faults;
mod players;

use check::StoredGame;
use faults::{Cluster, Fault};
use players::{Pair, ReadGame, Reply, Said, Stored};

/// How long, after the last heal, every game in play may take to move
/// again before the run is taken for hung (a guard, not a measurement).
const MOVING_AGAIN_GUARD: Duration = Duration::from_secs(90);

fn setting(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

#[test]
#[ignore = "run by tests/tools/nemesis.sh: some runs still leave a game unmoved past the guard"]
fn the_cluster_keeps_every_promise_through_cuts_pauses_and_kills() {
    let Some(nats) = nats_server() else {
        return;
    };
    let Some(db) = ScratchDatabase::new("cluster_nemesis") else {
        return;
    };
    let seed = setting("FLIPLINE_NEMESIS_SEED", 47);
    let faults = setting("FLIPLINE_NEMESIS_FAULTS", 6);
    let pairs = usize::try_from(setting("FLIPLINE_NEMESIS_PAIRS", 6)).unwrap_or(6);
    eprintln!("nemesis: seed {seed}, {faults} faults, {pairs} pairs");
    let dir = temp_dir("cluster-nemesis");
    let postgres = address_after_at(&db.url);
    let nats_addr = address_after_at(&nats);
    let mut cluster = Cluster::start(
        &dir,
        (&db.url, postgres),
        (&nats, nats_addr),
        &["a", "b", "c"],
    );

    let read = reader(&db.url);
    let stop = Arc::new(AtomicBool::new(false));
    let last_played: Arc<Mutex<Vec<Option<Instant>>>> = Arc::new(Mutex::new(vec![None; pairs]));
    let players: Vec<_> = (0..pairs)
        .map(|i| {
            let pair = Pair::new(i, &cluster.addrs, Arc::clone(&read), seed ^ (i as u64 + 1));
            let (stop, last) = (Arc::clone(&stop), Arc::clone(&last_played));
            std::thread::spawn(move || pair.play(&stop, &|at| lock(&last)[i] = Some(at)))
        })
        .collect();

    let mut rng = Rng(seed);
    let done: Vec<Fault> = (0..faults).map(|_| cluster.strike(&mut rng)).collect();
    cluster.heal_all();
    cluster.restart_stopped();
    let healed = Instant::now();
    // Every pair moves again after the last heal.
    let stuck = loop {
        let stuck: Vec<usize> = (lock(&last_played).iter().enumerate())
            .filter(|(_, at)| at.is_none_or(|at| at <= healed))
            .map(|(i, _)| i)
            .collect();
        if stuck.is_empty() || healed.elapsed() > MOVING_AGAIN_GUARD {
            break stuck;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let moving_again = healed.elapsed();
    stop.store(true, Ordering::Release);
    let pairs: Vec<Pair> = players
        .into_iter()
        .map(|p| {
            p.join()
                .unwrap_or_else(|_| panic!("a pair of players failed"))
        })
        .collect();

    for (i, pair) in pairs.iter().enumerate() {
        let first = (pair.replies.iter()).find(|r| r.said == Said::Played && r.at > healed);
        let after = first.map(|r| (r.at - healed).as_millis());
        eprintln!(
            "nemesis: pair {i} moving again after {after:?} ms; heard {:?}",
            pair.heard
        );
    }
    let replies: Vec<Reply> = pairs
        .iter()
        .flat_map(|p| p.replies.iter().cloned())
        .collect();
    let games: Vec<u64> = pairs.iter().flat_map(|p| p.games.iter().copied()).collect();
    let stored = stored_games(&db, &games);
    let mut broken = check::violations(&replies, &stored);
    broken.extend(cluster_wide(&db));
    for i in stuck {
        let pair = pairs.get(i);
        let (game, heard) = (pair.and_then(|p| p.games.last()), pair.map(|p| &p.heard));
        broken.push(format!(
            "pair {i} (game {game:?}) did not move within {MOVING_AGAIN_GUARD:?} of the last heal; last heard {heard:?}"
        ));
    }
    report(&done, &replies, moving_again);
    assert!(broken.is_empty(), "promises broken: {broken:#?}");
    let acked = replies.iter().filter(|r| r.said == Said::Played).count();
    assert!(
        acked > 100 * faults as usize / 6,
        "{acked} moves acknowledged"
    );
    drop(cluster);
    remove_temp_dir(&dir);
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The server's address in `url` (`scheme://user:password@host:port/...`).
fn address_after_at(url: &str) -> std::net::SocketAddr {
    let after = url.rsplit_once('@').map_or(url, |(_, rest)| rest);
    let after = after.trim_start_matches("nats://");
    let server = after.split('/').next().unwrap_or_default();
    server
        .parse()
        .unwrap_or_else(|_| panic!("no address in {url}"))
}

/// Reads a game's status and moves straight from the database.
fn reader(url: &str) -> ReadGame {
    let url = url.to_string();
    Arc::new(move |game| {
        let sql = format!(
            "SELECT g.status || '|' || coalesce((SELECT string_agg(move, ' ' ORDER BY ply) \
             FROM moves m WHERE m.game = g.id), '') FROM games g WHERE g.id = {game}"
        );
        let text = flipline_test_servers::query_text(&url, &sql).ok()??;
        let (status, moves) = text.split_once('|')?;
        let moves = moves
            .split_whitespace()
            .map(check::parse_move)
            .collect::<Option<Vec<_>>>()?;
        Some(Stored {
            over: status != "playing" && status != "open",
            moves,
        })
    })
}

/// Every game the players made, as stored.
fn stored_games(db: &ScratchDatabase, games: &[u64]) -> HashMap<u64, StoredGame> {
    let read = |game: u64| {
        let plies = db.query_text(&format!(
            "SELECT string_agg(ply || '=' || move, ' ' ORDER BY ply) FROM moves WHERE game = {game}"
        ));
        let plies = (plies.ok().flatten().unwrap_or_default().split_whitespace())
            .filter_map(|p| p.split_once('='))
            .map(|(ply, mv)| (ply.parse().unwrap_or(0), mv.to_string()))
            .collect();
        (game, StoredGame { plies })
    };
    games.iter().map(|&g| read(g)).collect()
}

/// What holds of the whole store: nobody in two games in play, every game
/// in play owned by a live node.
fn cluster_wide(db: &ScratchDatabase) -> Vec<String> {
    let count = |sql: &str| db.query_text(sql).ok().flatten().unwrap_or_default();
    let twice = count(
        "SELECT count(*) FROM (SELECT lower(name) FROM (SELECT black AS name FROM games \
         WHERE status = 'playing' UNION ALL SELECT white FROM games WHERE status = 'playing') s \
         GROUP BY lower(name) HAVING count(*) > 1) d",
    );
    let orphans = count(
        "SELECT count(*) FROM games g LEFT JOIN nodes n ON n.incarnation = g.owner \
         WHERE g.status = 'playing' AND n.state IS DISTINCT FROM 'live'",
    );
    let mut broken = Vec::new();
    if twice != "0" {
        broken.push(format!("{twice} names seated in two games in play"));
    }
    if orphans != "0" {
        broken.push(format!("{orphans} games in play owned by no live node"));
    }
    broken
}

/// Per fault: the longest time any game went without an acknowledged move
/// across it, and the moves answered 503 from its start to the next.
fn report(faults: &[Fault], replies: &[Reply], moving_again: Duration) {
    let mut by_game: HashMap<u64, Vec<Instant>> = HashMap::new();
    for reply in replies.iter().filter(|r| r.said == Said::Played) {
        by_game.entry(reply.game).or_default().push(reply.at);
    }
    for (i, fault) in faults.iter().enumerate() {
        let until = faults.get(i + 1).map(|f| f.began);
        let within = |at: Instant| at >= fault.began && until.is_none_or(|u| at < u);
        let refused = replies
            .iter()
            .filter(|r| r.said == Said::NotPlayed && within(r.at))
            .count();
        let stall = by_game
            .values()
            .filter_map(|ats| {
                let before = ats.iter().rev().find(|&&at| at <= fault.began)?;
                let after = ats.iter().find(|&&at| at > fault.began)?;
                Some(*after - *before)
            })
            .max()
            .unwrap_or_default();
        eprintln!(
            "nemesis: {:?} node {} for {} ms: longest stall {} ms, {} refused (503)",
            fault.kind,
            fault.node,
            fault.length.as_millis(),
            stall.as_millis(),
            refused
        );
    }
    let acked = replies.iter().filter(|r| r.said == Said::Played).count();
    let refused = replies.iter().filter(|r| r.said == Said::NotPlayed).count();
    eprintln!(
        "nemesis: {} faults, {acked} moves acknowledged, {refused} refused; every game moving again {} ms after the last heal",
        faults.len(),
        moving_again.as_millis()
    );
}
