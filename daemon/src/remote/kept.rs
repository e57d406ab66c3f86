//! Seats kept elsewhere at a login: a name that logs in here while the
//! store keeps its seat in a game in play on another node (its connection
//! there lost) is held here for that game, as if it had joined it from
//! here, so that it cannot sit in a second game meanwhile. `JOIN` takes the
//! seat back from here; the hold lasts until the game's owner says the
//! game is over (`Body::Over`, to every node), or the connection goes.
//! The same word tells a tournament taken over here that one of its games
//! ended on another node (see `lobby/followed.rs`).

use std::sync::Arc;

use actix::{Context, Handler, ResponseFuture};
use flipline::protocol::{GameId, ProtocolError};

use super::{Directory, Remote, lock, unreachable_owner};
use crate::bus::Body;
use crate::messages::{AwayPass, BackFromAway, KeptElsewhere, Name, OverThere, SitAway};

impl Handler<KeptElsewhere> for Directory {
    type Result = ResponseFuture<Result<(), ProtocolError>>;

    fn handle(&mut self, msg: KeptElsewhere, _: &mut Context<Self>) -> Self::Result {
        let remote = Arc::clone(&self.remote);
        Box::pin(async move {
            let KeptElsewhere { name, game } = msg;
            remote.hold_away(&name, game).await?;
            lock(&remote.kept).entry(game).or_default().push(name);
            Ok(())
        })
    }
}

impl Remote {
    /// Has the lobby here hold `name` for its seat at `game`, another
    /// node's (see `LobbyCore::sit_away`): how the name logged in here.
    pub(super) async fn hold_away(
        &self,
        name: &Name,
        game: GameId,
    ) -> Result<AwayPass, ProtocolError> {
        let away = SitAway {
            name: Name::clone(name),
            game,
        };
        (self.doors.sit_away.send(away).await).map_err(|_| unreachable_owner("stopping"))?
    }

    /// `game`, on the node that said so, is over: the names held here for
    /// their seats in it since their login go free, and a tournament here
    /// that follows it reads its end.
    pub(super) fn over_there(&self, game: GameId) {
        self.doors.over_there.do_send(OverThere(game));
        let Some(names) = lock(&self.kept).remove(&game) else {
            return;
        };
        for name in names {
            self.doors.back.do_send(BackFromAway { name, game });
        }
    }

    /// Seats `name` at `game`, which this node holds, as `JOIN` does (a
    /// seat asked for elsewhere, whose game was taken over here since).
    pub(super) async fn join_here(
        &self,
        name: Name,
        game: GameId,
    ) -> Result<(crate::session::SeatRef, flipline::Color), ProtocolError> {
        let join = crate::messages::Join {
            name,
            game,
            route: std::marker::PhantomData,
        };
        (self.doors.join.send(join).await).map_err(|_| unreachable_owner("stopping"))?
    }

    /// Tells every node that `game`, here, is over.
    pub fn tell_over(&self, game: GameId) {
        self.bus.broadcast(Body::Over { game });
    }
}
