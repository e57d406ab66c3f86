//! A node's link to NATS cut and healed: what was lost on the bus while it
//! was cut is made good once it is back (rosters, seats taken again, seeks
//! told again). Real processes on loopback; the cut node reaches the tests'
//! NATS server through a proxy the test cuts.

use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

use flipline_test_servers::ScratchDatabase;
use flipline_tests::*;

use crate::cluster::{LEASE_SECS, counter, metrics_of, node_config_with};

const WITHIN: Duration = Duration::from_secs(30);

/// The lease of these tests' nodes: long enough that the cuts here (short,
/// refused: noticed at once) never cost a node its lease.
const LONG_LEASE_SECS: u64 = 20;

/// A node's configuration reaching NATS at `nats`, with a long lease.
fn long_lease_node(dir: &Path, node: &str, url: &str, nats: &str) -> ChildDaemon {
    let config = node_config_with(dir, node, url, nats);
    let text = std::fs::read_to_string(&config).unwrap_or_else(|e| panic!("{e}"));
    let text = text.replace(
        &format!("lease_secs: {LEASE_SECS}"),
        &format!("lease_secs: {LONG_LEASE_SECS}"),
    );
    std::fs::write(&config, text).unwrap_or_else(|e| panic!("{e}"));
    ChildDaemon::start_with(&config)
}

/// The NATS server's address in `url` (`nats://user:password@host:port`).
fn server_of(url: &str) -> SocketAddr {
    let server = url.rsplit_once('@').map_or(url, |(_, server)| server);
    let server = server.trim_start_matches("nats://");
    server
        .parse()
        .unwrap_or_else(|_| panic!("no address in {url}"))
}

/// `url` with `addr` in its server's place, its user kept.
fn via(url: &str, addr: SocketAddr) -> String {
    match url.rsplit_once('@') {
        Some((user, _)) => format!("{user}@{addr}"),
        None => format!("nats://{addr}"),
    }
}

/// Waits until `node`'s link to NATS is `up`, as its metrics say.
fn wait_for_bus(metrics: SocketAddr, up: bool) {
    let want = u64::from(up);
    wait_until("the bus's link as wanted", WITHIN, || {
        counter(metrics, "flipline_bus_up") == want
    });
}

#[test]
fn a_player_gone_while_its_game_s_node_was_cut_from_nats_takes_its_seat_again_after_the_heal() {
    let Some(nats) = nats_server() else {
        return;
    };
    let Some(db) = ScratchDatabase::new("cluster_cut_away") else {
        return;
    };
    let dir = temp_dir("cluster-cut-away");
    let proxy = Proxy::start(server_of(&nats));
    let owner = long_lease_node(&dir, "a", &db.url, &via(&nats, proxy.addr));
    let other = long_lease_node(&dir, "b", &db.url, &nats);
    let (owner_metrics, other_metrics) = (metrics_of(&owner), metrics_of(&other));
    wait_for_bus(owner_metrics, true);

    let mut ann = Client::login_as(owner.addr, "ann");
    let game = ann.ok_game("NEW othello as X");
    let mut bob = Client::login_as(other.addr, "bob");
    assert_eq!(bob.ok(&format!("JOIN {game}")).1, format!("OK {game} O"));
    ann.expect_event("START ");

    // The owner is cut off; bob's connection closes meanwhile: his node's
    // word of it is lost on the bus.
    proxy.refuse();
    wait_for_bus(owner_metrics, false);
    drop(bob);
    wait_until("bob's connection closed on his node", WITHIN, || {
        counter(other_metrics, "flipline_connections") == 0
    });
    proxy.heal();
    wait_for_bus(owner_metrics, true);

    // After the heal the owner knows bob is gone: his seat is kept for
    // him, and he takes it again from his node.
    let mut bob = Client::login_as(other.addr, "bob");
    let mut last = String::new();
    wait_until("bob takes his seat again", WITHIN, || {
        last = bob.command(&format!("JOIN {game}")).1;
        last == format!("OK {game} O")
    });
    assert_eq!(last, format!("OK {game} O"));
    // And the game goes on between them.
    let (_, moved) = ann.command("MOVE d3");
    assert_eq!(moved, "OK", "ann's move after the heal");
    bob.expect_event(&format!("MOVED {game} "));
    drop((owner, other));
    remove_temp_dir(&dir);
}

/// The final reply `client` reads next (`OK ...` or `ERR ...`), past the
/// game's lines.
fn next_reply(client: &mut Client) -> String {
    loop {
        let line = client.line();
        if line.starts_with("OK") || line.starts_with("ERR ") {
            return line;
        }
    }
}

/// Two nodes, `ann` on `a` with game `game`, `bob` seated there from `b`,
/// whose link to NATS goes through `proxy`.
struct Seated {
    nodes: Vec<ChildDaemon>,
    proxy: Proxy,
    ann: Client,
    bob: Client,
    game: u64,
    other_metrics: SocketAddr,
    dir: std::path::PathBuf,
    _db: ScratchDatabase,
}

impl Seated {
    fn across(test: &str) -> Option<Seated> {
        let nats = nats_server()?;
        let db = ScratchDatabase::new(test)?;
        let dir = temp_dir(test);
        let proxy = Proxy::start(server_of(&nats));
        let owner = long_lease_node(&dir, "a", &db.url, &nats);
        let other = long_lease_node(&dir, "b", &db.url, &via(&nats, proxy.addr));
        let other_metrics = metrics_of(&other);
        wait_for_bus(other_metrics, true);
        let mut ann = Client::login_as(owner.addr, "ann");
        let game = ann.ok_game("NEW othello as X");
        let mut bob = Client::login_as(other.addr, "bob");
        assert_eq!(bob.ok(&format!("JOIN {game}")).1, format!("OK {game} O"));
        ann.expect_event("START ");
        Some(Seated {
            nodes: vec![owner, other],
            proxy,
            ann,
            bob,
            game,
            other_metrics,
            dir,
            _db: db,
        })
    }
}

impl Drop for Seated {
    fn drop(&mut self) {
        self.nodes.clear();
        remove_temp_dir(&self.dir);
    }
}

#[test]
fn a_move_from_another_node_whose_answer_is_lost_is_answered_as_played() {
    let Some(mut seated) = Seated::across("cluster_lost_answer") else {
        return;
    };
    let Seated {
        ref proxy,
        ref mut ann,
        ref mut bob,
        game,
        other_metrics,
        ..
    } = seated;
    assert_eq!(ann.command("MOVE d3").1, "OK");
    bob.expect_event(&format!("MOVED {game} "));

    // Bob's move reaches the game's node, which plays it; its answer to
    // bob's node is held on the way and then lost with the connection.
    proxy.silence_replies();
    bob.send("MOVE c3");
    let moved = ann.expect_event(&format!("MOVED {game} O "));
    assert!(moved.contains(" c3 "), "{moved}");
    proxy.refuse();
    wait_for_bus(other_metrics, false);
    proxy.heal();

    // Asked again, the game's node says what it did: played.
    assert_eq!(next_reply(bob), "OK", "the lost answer, asked again");
    // Played once, and nothing after it.
    let (lines, _) = ann.command(&format!("HISTORY {game}"));
    let history = lines.join(" ");
    assert!(history.ends_with(" d3c3"), "{history}");
}

/// The PostgreSQL server's address in `url` (`postgres://user:pw@host:port/db`).
fn postgres_of(url: &str) -> SocketAddr {
    let after = url.rsplit_once('@').map_or(url, |(_, rest)| rest);
    let server = after.split('/').next().unwrap_or_default();
    server
        .parse()
        .unwrap_or_else(|_| panic!("no address in {url}"))
}

#[test]
fn a_node_whose_lease_lapsed_says_nothing_of_its_games_until_it_is_renewed() {
    let Some(db) = ScratchDatabase::new("cluster_lapsed_quiet") else {
        return;
    };
    let dir = temp_dir("cluster-lapsed-quiet");
    let server = postgres_of(&db.url);
    let proxy = Proxy::start(server);
    let url = db
        .url
        .replacen(&server.to_string(), &proxy.addr.to_string(), 1);
    let node = ChildDaemon::start_with(&node_config_with(&dir, "a", &url, ""));
    let mut ann = Client::login_as(node.addr, "ann");
    let mut bo = Client::login_as(node.addr, "bo");
    let game = ann.ok_game("NEW othello as X");
    assert_eq!(ann.command("BOARD").1, "OK");

    // Its link to the database silent, its lease lapses: another node may
    // have the game now, so this one no longer says where it stands.
    proxy.silence();
    let mut last = String::new();
    wait_until("BOARD refused once the lease lapsed", WITHIN, || {
        last = ann.command("BOARD").1;
        last.starts_with("ERR 503")
    });
    assert!(last.contains(&format!("game {game} stands")), "{last}");
    // Nor does it seat anyone there (a seat taken is answered with the
    // game's snapshot).
    let joined = bo.command(&format!("JOIN {game}")).1;
    assert!(joined.starts_with("ERR 503"), "{joined}");
    assert!(joined.contains(&format!("game {game} stands")), "{joined}");
    proxy.heal();
    wait_until("BOARD answered again once renewed", WITHIN, || {
        ann.command("BOARD").1 == "OK"
    });
    drop(node);
    remove_temp_dir(&dir);
}

#[test]
fn a_game_that_ended_while_its_player_s_node_was_cut_from_nats_holds_the_player_no_more() {
    let Some(mut seated) = Seated::across("cluster_missed_over") else {
        return;
    };
    let Seated {
        ref proxy,
        ref mut ann,
        ref mut bob,
        game,
        other_metrics,
        ..
    } = seated;

    // The game ends while bob's node is cut off: its OVER never reaches it.
    proxy.refuse();
    wait_for_bus(other_metrics, false);
    assert_eq!(ann.command("END").1, "OK");
    ann.expect_event(&format!("OVER {game} "));
    proxy.heal();
    wait_for_bus(other_metrics, true);

    // Bob's node learns the game is over: he may start another.
    let mut last = String::new();
    wait_until("bob free to start a game", WITHIN, || {
        last = bob.command("NEW othello as X").1;
        last.starts_with("OK ")
    });
    assert!(last.starts_with("OK "), "{last}");
}
