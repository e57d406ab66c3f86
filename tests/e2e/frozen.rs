//! A store in trouble, through the fault switch of an in-process daemon: a
//! store that stops answering (a hung disk) and one whose writes fail (a full
//! disk). Commands that need the store answer `ERR 503` within the store
//! deadline and the others (a guest's `LOGIN` among them) answer at once;
//! once it is healthy again, all work as before.

use std::time::{Duration, Instant};

use flipd::store::Faults;
use flipline_tests::*;

/// The store deadline these daemons run with.
const DEADLINE: Duration = Duration::from_millis(300);

/// A daemon whose store obeys `faults`, with a short deadline. Dropping it
/// heals the store first: a daemon stops only once its store has taken what
/// is queued, so a test that fails while the store is frozen would
/// otherwise hang in the drop.
struct Troubled {
    daemon: TestDaemon,
    faults: Faults,
}

impl Troubled {
    fn start() -> Troubled {
        let faults = Faults::new();
        let mut config = test_config();
        config.store.faults = Some(faults.clone());
        config.store_deadline_ms = u64::try_from(DEADLINE.as_millis()).unwrap_or(u64::MAX);
        Troubled {
            daemon: start(config),
            faults,
        }
    }
}

impl Drop for Troubled {
    fn drop(&mut self) {
        self.faults.heal();
    }
}

/// Runs `line`, which must be answered `ERR 503 ... not answering ...` once
/// the deadline has passed. The store never answers while frozen, so the
/// answer itself shows that the deadline ended the wait; the read's own
/// bound is only a guard against a hang.
fn not_answering_in_time(client: &mut Client, line: &str) {
    let asked = Instant::now();
    let reply = client.err(line, 503);
    let took = asked.elapsed();
    assert!(reply.contains("not answering"), "{line} -> {reply}");
    assert!(
        took >= DEADLINE - Duration::from_millis(20),
        "{line} answered after {took:?}, before the deadline: it did not wait for the store"
    );
}

#[test]
fn a_frozen_store_is_503_within_the_deadline_and_nothing_else_waits_for_it() {
    let troubled = Troubled::start();
    let (addr, faults) = (troubled.daemon.addr, &troubled.faults);
    let mut ann = Client::connect(addr);
    ann.ok("LOGIN ann secret");
    let g = ann.ok_game("NEW othello hotseat");
    ann.lines_through(&format!("TURN {g} X"));
    ann.ok("MOVE f5");
    ann.lines_through(&format!("TURN {g} O"));

    faults.freeze();
    let mut guest = Client::connect(addr);
    not_answering_in_time(&mut guest, "LOGIN reg pw");
    // Registered or not is known without the store: a guest needs none.
    guest.login("gus");
    not_answering_in_time(&mut guest, &format!("HISTORY {g}"));
    // The store never answers while frozen: an answer proves no wait on it.
    let (players, who) = guest.ok("WHO");
    assert_eq!(
        (players, who.as_str()),
        (
            vec![
                format!("PLAYER ann playing {g} -"),
                "PLAYER gus idle -".to_string()
            ],
            "OK 2"
        )
    );
    let (games, list) = guest.ok("LIST");
    assert_eq!(
        (games, list.as_str()),
        (vec![format!("GAME {g} othello ann ann playing 1")], "OK 1")
    );
    assert_eq!(guest.ok("PING").1, "OK pong");
    assert_eq!(ann.ok("BOARD").0.len(), 2, "BOARD and TURN, from memory");

    faults.heal();
    let (history, _) = guest.ok(&format!("HISTORY {g}"));
    assert_eq!(
        history,
        [format!("HISTORY {g} othello ann ann - playing - f5")]
    );
    let mut reg = Client::connect(addr);
    assert_eq!(reg.ok("LOGIN reg pw").1, "OK reg");
    assert_eq!(ann.ok("MOVE d6").1, "OK");
}

#[test]
fn a_resignation_that_cannot_be_stored_is_503_and_the_game_goes_on() {
    let troubled = Troubled::start();
    let (addr, faults) = (troubled.daemon.addr, &troubled.faults);
    let (mut ann, mut bob, start) = new_and_join(addr, "othello", ["ea", "eb"]);
    let g = start.game;
    ann.lines_through(&format!("TURN {g} X"));
    bob.lines_through(&format!("TURN {g} X"));

    faults.fail_writes();
    let refused = bob.err("END", 503);
    assert!(refused.contains("the game goes on"), "{refused}");
    ann.expect_silence(Duration::from_millis(200));
    let (board, _) = bob.ok("BOARD");
    assert!(
        board.first().is_some_and(|b| b.ends_with(" X")) && board.len() == 2,
        "in play, black to move: {board:?}"
    );
    let (games, _) = bob.ok("LIST");
    assert_eq!(games, [format!("GAME {g} othello ea eb playing 0")]);

    faults.heal();
    assert_eq!(ann.ok("MOVE d3").1, "OK");
    bob.lines_through(&format!("TURN {g} O"));
    assert_eq!(bob.ok("END").1, "OK");
    let over = ann.expect_event(&format!("OVER {g} "));
    assert!(over.ends_with(" resign"), "{over}");
}

#[test]
fn a_flag_that_falls_while_writes_fail_is_announced_once_stored() {
    let troubled = Troubled::start();
    let (addr, faults) = (troubled.daemon.addr, &troubled.faults);
    let mut c = Client::login_as(addr, "fl");
    // Six seconds: black's flag must fall after the writes begin to fail,
    // however slowly a loaded machine takes the two round trips before.
    let g = c.ok_game("NEW othello hotseat clock 0.1+0");
    c.lines_through(&format!("TURN {g} X"));
    // Answered once the game's creation is committed (the store keeps order).
    c.ok(&format!("HISTORY {g}"));

    faults.fail_writes();
    let deadline = Instant::now() + HANG_GUARD;
    loop {
        let (board, _) = c.ok("BOARD");
        assert!(
            !board.iter().any(|l| l.starts_with("OVER ")),
            "announced before it was stored: {board:?}"
        );
        if board.first().is_some_and(|b| b.ends_with(" -")) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "hang guard: the flag never fell: {board:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let refused = c.err("MOVE d3", 409);
    assert!(
        refused.contains("is over"),
        "no move once the flag fell: {refused}"
    );
    c.expect_silence(Duration::from_millis(300));
    let (history, _) = c.ok(&format!("HISTORY {g}"));
    assert!(
        history.first().is_some_and(|h| h.contains(" playing ")),
        "{history:?}"
    );

    faults.heal();
    let over = c.expect_event(&format!("OVER {g} "));
    assert!(over.ends_with(" time"), "{over}");
    let (history, _) = c.ok(&format!("HISTORY {g}"));
    assert!(
        history.first().is_some_and(|h| h.contains(" over O:")),
        "{history:?}"
    );
}
