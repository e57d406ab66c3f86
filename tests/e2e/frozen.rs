//! A store in trouble, through the fault switch of an in-process daemon: a
//! store that stops answering (a hung disk) and one whose writes fail (a full
//! disk). Commands that need the store answer `ERR 503` within the store
//! deadline and the others answer at once; once it is healthy again, all
//! work as before.

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
/// the deadline has passed, and soon after it.
fn not_answering_in_time(client: &mut Client, line: &str) {
    let asked = Instant::now();
    let reply = client.err(line, 503);
    let took = asked.elapsed();
    assert!(reply.contains("not answering"), "{line} -> {reply}");
    assert!(
        took >= DEADLINE - Duration::from_millis(20),
        "{line} answered after {took:?}, before the deadline: it did not wait for the store"
    );
    assert!(
        took < DEADLINE + Duration::from_secs(2),
        "{line} answered after {took:?}"
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
    not_answering_in_time(&mut guest, "LOGIN gus");
    not_answering_in_time(&mut guest, "LOGIN reg pw");
    not_answering_in_time(&mut guest, &format!("HISTORY {g}"));
    // The store never answers while frozen: an answer proves no wait on it.
    let (players, who) = guest.ok("WHO");
    assert_eq!(
        (players, who.as_str()),
        (vec![format!("PLAYER ann playing {g}")], "OK 1")
    );
    let (games, list) = guest.ok("LIST");
    assert_eq!(
        (games, list.as_str()),
        (vec![format!("GAME {g} othello ann ann playing 1")], "OK 1")
    );
    assert_eq!(guest.ok("PING").1, "OK pong");
    assert_eq!(ann.ok("BOARD").0.len(), 2, "BOARD and TURN, from memory");

    faults.heal();
    guest.login("gus");
    let (history, _) = guest.ok(&format!("HISTORY {g}"));
    assert_eq!(
        history,
        [format!("HISTORY {g} othello ann ann - playing - f5")]
    );
    let mut reg = Client::connect(addr);
    assert_eq!(reg.ok("LOGIN reg pw").1, "OK reg");
    assert_eq!(ann.ok("MOVE d6").1, "OK");
}
