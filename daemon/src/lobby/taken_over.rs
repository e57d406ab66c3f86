//! Logins that wait for a game this node has just taken over: the claim
//! is stored before the lobby hears `Recover`, so a player logging in
//! meanwhile finds its seat in the store but not in the lobby. Its login
//! waits here until the lobby holds the game, so that the `OK` says the
//! seat and the name holds it (no `NEW` in between).

use std::collections::HashMap;

use actix::{Context, Handler, ResponseFuture};
use flipline::protocol::GameId;
use tokio::sync::oneshot;

use super::Lobby;
use crate::messages::{AwaitTakenOver, Name};

/// A login waiting: its name, and where it hears its seat.
type Wait = (Name, oneshot::Sender<Option<GameId>>);

/// Logins waiting, by the game each waits for.
#[derive(Default)]
pub(super) struct TakenOverWaits {
    waiting: HashMap<GameId, Vec<Wait>>,
}

impl TakenOverWaits {
    /// `name` waits for `game`. Waits whose login gave up (its deadline
    /// passed, its connection closed) are dropped first, so that a game
    /// never recovered holds nothing for long.
    fn wait(&mut self, name: Name, game: GameId) -> oneshot::Receiver<Option<GameId>> {
        self.waiting.retain(|_, waits| {
            waits.retain(|(_, told)| !told.is_closed());
            !waits.is_empty()
        });
        let (told, answer) = oneshot::channel();
        self.waiting.entry(game).or_default().push((name, told));
        answer
    }

    /// `game` is recovered here (or refused): each login waiting for it
    /// hears its seat as `seat_of` says.
    pub(super) fn recovered(&mut self, game: GameId, seat_of: impl Fn(&str) -> Option<GameId>) {
        for (name, told) in self.waiting.remove(&game).unwrap_or_default() {
            let _ = told.send(seat_of(&name));
        }
    }
}

impl Handler<AwaitTakenOver> for Lobby {
    type Result = ResponseFuture<Option<GameId>>;

    fn handle(&mut self, msg: AwaitTakenOver, _: &mut Context<Self>) -> Self::Result {
        if self.core.game(msg.game).is_some() {
            let seat = self.core.seat_of(&msg.name);
            return Box::pin(async move { seat });
        }
        let answer = self.taken_over.wait(msg.name, msg.game);
        Box::pin(async move { answer.await.ok().flatten() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(text: &str) -> Name {
        Name::from(text)
    }

    #[test]
    fn a_wait_hears_the_seat_once_its_game_is_recovered() {
        let mut waits = TakenOverWaits::default();
        let mut ann = waits.wait(name("ann"), 7);
        let mut bo = waits.wait(name("bo"), 8);
        waits.recovered(7, |who| (who == "ann").then_some(7));
        assert_eq!(ann.try_recv(), Ok(Some(7)));
        assert!(bo.try_recv().is_err(), "game 8 is not recovered yet");
        waits.recovered(8, |_| None);
        assert_eq!(bo.try_recv(), Ok(None));
    }

    #[test]
    fn waits_given_up_are_dropped() {
        let mut waits = TakenOverWaits::default();
        drop(waits.wait(name("ann"), 7));
        let _bo = waits.wait(name("bo"), 8);
        assert!(!waits.waiting.contains_key(&7));
        assert!(waits.waiting.contains_key(&8));
    }
}
