//! Game numbers, handed out in order by the lobby.
//!
//! A new game's number reaches its players at once, while the write that
//! creates the game waits in the store's queue. Were the daemon killed in
//! between, the next start (numbering from the last game stored) would give
//! the same number to another game, and a client holding it would find a
//! stranger's game. So numbers are reserved in the store before they are
//! handed out: a block at a time, asked for ahead of need so that the lobby
//! seldom waits, and given back at a clean close so that restarts leave no
//! gaps.

use std::future::Future;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};

use flipline::protocol::GameId;

use crate::store::{Store, StoreError, Write};

/// Numbers reserved per write.
pub const BLOCK: GameId = 64;

/// A new block is asked for when fewer than this many numbers are left: at
/// thousands of games a second, a commit's few milliseconds use a handful.
const LOW: GameId = BLOCK / 2;

/// The numbering: the next number and how far the store has reserved.
pub struct GameNumbers {
    next: GameId,
    /// Every number up to this one is reserved (committed).
    reserved: GameId,
    /// A reservation is on its way.
    asking: bool,
    store: Store,
}

/// The answer to a reservation asked ahead: the number reserved through.
pub type Reserved = Result<GameId, StoreError>;

impl GameNumbers {
    /// Numbering from `next` (past every number stored or reserved); nothing
    /// is reserved until asked.
    pub fn new(next: GameId, store: Store) -> GameNumbers {
        let next = next.max(1);
        GameNumbers {
            next,
            reserved: next - 1,
            asking: false,
            store,
        }
    }

    /// The next number. When none is left reserved (the first game after a
    /// start, or a burst faster than the store), waits for a reservation:
    /// blocking, since the store's writer never waits on the caller.
    pub fn take(&mut self) -> GameId {
        if self.next > self.reserved {
            let through = self.next.saturating_add(BLOCK - 1);
            // Unconstrained: on an actor's thread, tokio's budget for the
            // task running now could keep the answer pending for ever.
            let commit = self.store.commit(Write::ReserveGames { through });
            let reserved = wait_for(tokio::task::unconstrained(commit));
            self.record(reserved.map(|_| through));
        }
        if self.next > self.reserved {
            tracing::error!(
                game = self.next,
                "game number not reserved (the store failed): it may be given again after a crash"
            );
        }
        let game = self.next;
        self.next = self.next.saturating_add(1);
        game
    }

    /// A number taken elsewhere (a game recovered at start) is never handed
    /// out again.
    pub fn skip_past(&mut self, game: GameId) {
        self.next = self.next.max(game.saturating_add(1));
    }

    /// A reservation to ask for now, if the numbers left run low and none is
    /// on its way; its answer goes to [`GameNumbers::reserved`].
    pub fn ask_ahead(&mut self) -> Option<impl Future<Output = Reserved> + Send + 'static + use<>> {
        let left = self.reserved.saturating_add(1).saturating_sub(self.next);
        if self.asking || left >= LOW {
            return None;
        }
        self.asking = true;
        let through = self.reserved.max(self.next - 1).saturating_add(BLOCK);
        let commit = self.store.commit(Write::ReserveGames { through });
        Some(async move { commit.await.map(|_| through) })
    }

    /// The answer to the reservation asked ahead.
    pub fn reserved(&mut self, answer: Reserved) {
        self.asking = false;
        self.record(answer);
    }

    /// A reservation's answer, whichever asked for it.
    fn record(&mut self, answer: Reserved) {
        match answer {
            Ok(through) => self.reserved = self.reserved.max(through),
            Err(error) => tracing::error!(%error, "cannot reserve game numbers"),
        }
    }
}

/// Runs `future` to its end on this thread, parked while it waits. Only for
/// futures woken from another thread (the store's answers).
fn wait_for<F: Future>(future: F) -> F::Output {
    struct Unpark(std::thread::Thread);
    impl Wake for Unpark {
        fn wake(self: Arc<Self>) {
            self.0.unpark();
        }
    }
    let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
    let mut context = Context::from_waker(&waker);
    let mut future = std::pin::pin!(future);
    loop {
        if let Poll::Ready(output) = future.as_mut().poll(&mut context) {
            return output;
        }
        std::thread::park();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::test_support::{block_on, config, new_game, temp_path};
    use crate::store::{Opened, Store};
    use rusqlite::Connection;

    fn reserved_in(path: &std::path::Path) -> GameId {
        let conn = Connection::open(path).unwrap();
        conn.query_row("SELECT reserved FROM game_numbers", [], |r| r.get(0))
            .unwrap()
    }

    #[test]
    fn numbers_follow_on_and_each_is_reserved_before_it_is_given() {
        let path = temp_path("numbers");
        let Opened { store, threads, .. } = Store::open(&config(&path)).unwrap();
        let mut numbers = GameNumbers::new(1, store.clone());
        for expected in 1..=200 {
            let game = numbers.take();
            assert_eq!(game, expected);
            assert!(reserved_in(&path) >= game, "game {game} given unreserved");
            if let Some(reservation) = numbers.ask_ahead() {
                numbers.reserved(block_on(reservation));
            }
        }
        let (_, writes, _) = store.stats();
        // The first number waits for a block; the rest come from blocks asked
        // for ahead, one per half block used.
        assert!(
            writes <= 200 / LOW + 1,
            "{writes} reservations for 200 games"
        );
        threads.close();
    }

    #[test]
    fn a_reservation_is_asked_for_only_when_numbers_run_low_and_one_at_a_time() {
        let path = temp_path("ahead");
        let opened = Store::open(&config(&path)).unwrap();
        let mut numbers = GameNumbers::new(10, opened.store.clone());
        let first = numbers.ask_ahead().expect("nothing is reserved at first");
        assert!(numbers.ask_ahead().is_none(), "one is on its way");
        numbers.reserved(block_on(first));
        assert_eq!(reserved_in(&path), 9 + BLOCK);
        assert!(numbers.ask_ahead().is_none(), "a whole block is left");
        let handed: Vec<GameId> = (0..=LOW).map(|_| numbers.take()).collect();
        assert_eq!(handed.first(), Some(&10));
        assert_eq!(handed.last(), Some(&(10 + LOW)));
        let second = numbers.ask_ahead().expect("fewer than half a block left");
        numbers.reserved(block_on(second));
        assert_eq!(reserved_in(&path), 9 + 2 * BLOCK);
        opened.threads.close();
    }

    #[test]
    fn a_failed_reservation_is_asked_again_and_numbers_still_come() {
        let path = temp_path("failing");
        let opened = Store::open(&config(&path)).unwrap();
        let mut numbers = GameNumbers::new(5, opened.store.clone());
        opened.threads.close();
        assert_eq!(numbers.take(), 5, "a closed store does not stop numbering");
        assert_eq!(numbers.take(), 6);
        let refused = numbers.ask_ahead().expect("nothing is reserved");
        numbers.reserved(block_on(refused));
        assert!(numbers.ask_ahead().is_some(), "asked again after a failure");
    }

    #[test]
    fn a_recovered_game_is_never_numbered_again() {
        let path = temp_path("recovered");
        let opened = Store::open(&config(&path)).unwrap();
        opened.store.write(new_game(1, Some("bob"), ""));
        let mut numbers = GameNumbers::new(1, opened.store.clone());
        numbers.skip_past(7);
        numbers.skip_past(3);
        assert_eq!(numbers.take(), 8);
        opened.threads.close();
    }
}
