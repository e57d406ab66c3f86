//! Acknowledgements after their commit: `NEW`, a `SEEK` that pairs, `JOIN`
//! and `REMATCH` answer `OK` only once the store has the game or its seats.
//! With the store refusing writes (the fault switch, as a full disk would)
//! they answer `ERR 503` and nothing changes; with the store frozen they
//! wait, and only they: the lobby goes on serving everyone else.

use std::time::Duration;

use flipd::store::Faults;
use flipline_tests::*;

/// An in-process daemon whose store the test can break and mend.
fn daemon_with_faults() -> (TestDaemon, Faults) {
    let faults = Faults::new();
    let mut config = test_config();
    config.store.faults = Some(faults.clone());
    (start(config), faults)
}

/// `WHO`'s line for `name`.
fn who_says(client: &mut Client, name: &str) -> String {
    let (lines, _) = client.ok("WHO");
    let prefix = format!("PLAYER {name} ");
    lines
        .into_iter()
        .find(|l| l.starts_with(&prefix))
        .unwrap_or_else(|| panic!("WHO does not list {name}"))
}

/// Polls `WHO` until `name` is no longer seeking (a pairing took the seek).
fn wait_until_not_seeking(client: &mut Client, name: &str) {
    let deadline = std::time::Instant::now() + READ_TIMEOUT;
    while who_says(client, name).ends_with(" seeking") {
        assert!(std::time::Instant::now() < deadline, "{name} still seeking");
        std::thread::yield_now();
    }
}

/// `LIST`'s data lines.
fn list(client: &mut Client) -> Vec<String> {
    client.ok("LIST").0
}

#[test]
fn a_game_the_store_refuses_is_not_created_and_nothing_changes() {
    let (daemon, faults) = daemon_with_faults();
    let mut ann = Client::login_as(daemon.addr, "ann");
    faults.fail_writes();
    for new in [
        "NEW othello hotseat",
        "NEW othello vs bot:1",
        "NEW othello as X",
    ] {
        let refused = ann.err(new, 503);
        assert!(refused.contains("nothing changed"), "{refused}");
    }
    ann.expect_silence(Duration::from_millis(100));
    assert_eq!(list(&mut ann), Vec::<String>::new(), "no game is listed");
    assert_eq!(who_says(&mut ann, "ann"), "PLAYER ann idle -");
    faults.heal();
    let g = ann.ok_game("NEW othello hotseat");
    ann.lines_through(&format!("TURN {g} X"));
    assert_eq!(ann.ok("MOVE f5").1, "OK");
    let (history, _) = ann.ok(&format!("HISTORY {g}"));
    assert!(
        history.last().is_some_and(|l| l.ends_with(" playing - f5")),
        "{history:?}"
    );
}

#[test]
fn a_join_the_store_refuses_leaves_the_seat_open_for_the_next() {
    let (daemon, faults) = daemon_with_faults();
    let mut ann = Client::login_as(daemon.addr, "ann");
    let mut bob = Client::login_as(daemon.addr, "bob");
    let mut cy = Client::login_as(daemon.addr, "cy");
    let g = ann.ok_game("NEW othello as X");
    faults.fail_writes();
    bob.err(&format!("JOIN {g}"), 503);
    ann.expect_silence(Duration::from_millis(100));
    assert_eq!(
        list(&mut bob),
        vec![format!("GAME {g} othello ann - open 0")]
    );
    assert_eq!(who_says(&mut bob, "bob"), "PLAYER bob idle -");
    faults.heal();
    assert_eq!(cy.ok(&format!("JOIN {g}")).1, format!("OK {g} O"));
    let start = ann.expect_event("START ");
    assert!(start.contains(" ann cy "), "{start}");
    // Bob's refused JOIN left him free to play elsewhere.
    bob.ok_game("NEW othello hotseat");
}

#[test]
fn a_pairing_the_store_refuses_keeps_the_first_seeker_waiting() {
    let (daemon, faults) = daemon_with_faults();
    let mut ann = Client::login_as(daemon.addr, "ann");
    let mut bob = Client::login_as(daemon.addr, "bob");
    assert_eq!(ann.ok("SEEK othello").1, "OK seeking");
    faults.fail_writes();
    bob.err("SEEK othello", 503);
    ann.expect_silence(Duration::from_millis(100));
    assert_eq!(who_says(&mut bob, "ann"), "PLAYER ann seeking -");
    assert_eq!(who_says(&mut bob, "bob"), "PLAYER bob idle -");
    faults.heal();
    let g = bob.ok_game("SEEK othello");
    let start = ann.expect_event("START ");
    assert!(start.starts_with(&format!("START {g} ")), "{start}");
}

#[test]
fn a_rematch_the_store_refuses_can_be_asked_again() {
    let (daemon, faults) = daemon_with_faults();
    let mut ann = Client::login_as(daemon.addr, "ann");
    let g = ann.ok_game("NEW othello as X vs bot:1");
    ann.lines_through(&format!("TURN {g} X"));
    ann.ok("END");
    ann.expect_event(&format!("OVER {g} "));
    faults.fail_writes();
    ann.err("REMATCH", 503);
    faults.heal();
    let next = ann.ok_game("REMATCH");
    assert_ne!(next, g);
    let start = ann.expect_event(&format!("START {next} "));
    assert!(start.contains(" bot:1 ann "), "colours swapped: {start}");
}

#[test]
fn a_frozen_store_holds_back_new_games_and_only_them() {
    let (daemon, faults) = daemon_with_faults();
    let mut ann = Client::login_as(daemon.addr, "ann");
    let mut bob = Client::login_as(daemon.addr, "bob");
    let mut cy = Client::login_as(daemon.addr, "cy");
    let mut dee = Client::login_as(daemon.addr, "dee");
    assert_eq!(cy.ok("SEEK othello").1, "OK seeking");
    faults.freeze();
    ann.send("NEW othello hotseat");
    // Dee pairs with the waiting Cy: held until the store answers; Cy's own
    // NEW meanwhile waits to see how that pairing went.
    dee.send("SEEK othello");
    wait_until_not_seeking(&mut bob, "cy");
    cy.send("NEW othello hotseat");
    // Everyone else is served while the disk is frozen.
    for line in ["PING", "WHO", "LIST"] {
        bob.ok(line);
    }
    assert_eq!(list(&mut bob), Vec::<String>::new(), "nothing stored yet");
    ann.expect_silence(Duration::from_millis(200));
    faults.heal();
    let (_, created) = ann.final_reply("NEW");
    assert!(created.starts_with("OK "), "{created}");
    let (_, paired) = dee.final_reply("SEEK");
    let g = reply_game("SEEK", &paired);
    let (before, refused) = cy.final_reply("NEW");
    assert!(
        refused.starts_with(&format!("ERR 409 game {g} is in play")),
        "Cy's NEW ran after the pairing: {before:?} {refused}"
    );
}

#[test]
fn seeks_left_side_by_side_by_a_refused_pairing_are_paired_once_it_works() {
    let (daemon, faults) = daemon_with_faults();
    let mut ann = Client::login_as(daemon.addr, "ann");
    let mut bob = Client::login_as(daemon.addr, "bob");
    let mut cy = Client::login_as(daemon.addr, "cy");
    let mut watcher = Client::login_as(daemon.addr, "dee");
    assert_eq!(ann.ok("SEEK othello").1, "OK seeking");
    faults.freeze();
    bob.send("SEEK othello");
    wait_until_not_seeking(&mut watcher, "ann");
    // Cy seeks the same game while Bob's pairing with Ann waits for the
    // disk, which then refuses it: Ann's seek is back, beside Cy's.
    assert_eq!(cy.ok("SEEK othello").1, "OK seeking");
    faults.fail_writes();
    let (_, refused) = bob.final_reply("SEEK");
    assert!(refused.starts_with("ERR 503 "), "{refused}");
    faults.heal();
    // A moment later the two are paired, without a word from either.
    let start = ann.expect_event("START ");
    assert_eq!(cy.expect_event("START "), start);
    assert!(start.contains(" ann ") && start.contains(" cy "), "{start}");
    assert_eq!(who_says(&mut watcher, "bob"), "PLAYER bob idle -");
}
