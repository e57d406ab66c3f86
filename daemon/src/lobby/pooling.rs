//! The lobby actor's side of seeks on a cluster's node: the leader pairs
//! them (`rules::seek_pool`), this lobby tells it each change and carries
//! out its part of a pairing: a seek taken out for a game another node
//! makes (or put back), a game made here, a seat taken there. The core
//! decides each (`LobbyCore::pair_pooled` and its neighbours).

use std::time::Duration;

use actix::fut::{ActorFutureExt, WrapFuture};
use actix::{AsyncContext, Context, Handler, ResponseFuture};
use flipline::protocol::{GameId, ProtocolError};
use tokio::sync::oneshot;

use super::{Lobby, Waits, answered, touching};
use crate::messages::{
    PairSeeks, PairedThere, PoolSeeks, Reannounce, ReleaseSeek, ReserveSeek, ToSession,
};
use crate::rules::lobby::Partner;
use crate::session::Reach;

impl Lobby {
    /// Tells the leader what changed among the seeks here.
    pub(super) fn tell_pool(&mut self) {
        let Some(tell) = self.pool.as_ref().filter(|_| !self.pool_paused) else {
            return;
        };
        for note in self.core.pool_notes() {
            tell(note);
        }
    }

    /// Tells the leader every seek here.
    fn reannounce(&self) {
        if let Some(tell) = &self.pool {
            for note in self.core.pool_all() {
                tell(note);
            }
        }
    }
}

/// How often every seek is told to the leader again, should a message
/// have been lost (the bus restarted): the leader keeps a seek told again
/// in its place.
const REANNOUNCE_EVERY: Duration = Duration::from_secs(10);

impl Handler<PoolSeeks> for Lobby {
    type Result = ();

    fn handle(&mut self, msg: PoolSeeks, ctx: &mut Context<Self>) {
        self.core.pool_seeks();
        self.pool = Some(msg.tell);
        self.pairing_pending = Some(msg.pending);
        ctx.run_interval(REANNOUNCE_EVERY, |act, _| act.reannounce());
    }
}

impl Handler<Reannounce> for Lobby {
    type Result = ();

    fn handle(&mut self, _: Reannounce, _: &mut Context<Self>) {
        self.reannounce();
    }
}

impl Handler<ReserveSeek> for Lobby {
    type Result = ResponseFuture<Result<(), ProtocolError>>;

    fn handle(&mut self, msg: ReserveSeek, ctx: &mut Context<Self>) -> Self::Result {
        let (reply, answer) = oneshot::channel();
        let name = msg.name.clone();
        self.when_free(ctx, touching(Some(name), None), move |act, _| {
            let reserved = act.core.reserve_pooled(&msg.name, msg.wanted);
            let _ = reply.send(reserved.map_err(Into::into));
        });
        answered(answer)
    }
}

impl Handler<ReleaseSeek> for Lobby {
    type Result = ();

    fn handle(&mut self, msg: ReleaseSeek, ctx: &mut Context<Self>) {
        let name = msg.name.clone();
        self.when_free(ctx, touching(Some(name), None), move |act, _| {
            act.core.release_pooled(&msg.name, msg.wanted);
        });
    }
}

impl Handler<PairSeeks> for Lobby {
    type Result = ResponseFuture<Result<GameId, ProtocolError>>;

    fn handle(&mut self, msg: PairSeeks, ctx: &mut Context<Self>) -> Self::Result {
        let (reply, answer) = oneshot::channel();
        // Both seekers, if both are here: either may have a decision held.
        let waiting = msg.waiting.clone();
        let partner = match &msg.partner {
            Partner::Here(name) => Some(name.clone()),
            Partner::Far(..) => None,
        };
        let waits: Waits = Box::new(move |core| {
            let others = partner.as_deref();
            core.waits_for(Some(&waiting), None)
                .or_else(|| others.and_then(|name| core.waits_for(Some(name), None)))
        });
        self.when_free(ctx, waits, move |act, ctx| {
            let numbers = &mut act.numbers;
            let decided = act.core.pair_pooled(
                &msg.waiting,
                msg.wanted,
                msg.partner,
                (msg.coin, || numbers.take()),
            );
            act.conclude(ctx, decided, reply, |_, game| Ok(game));
        });
        answered(answer)
    }
}

impl Handler<PairedThere> for Lobby {
    type Result = ();

    fn handle(&mut self, msg: PairedThere, ctx: &mut Context<Self>) {
        let name = msg.name.clone();
        self.when_free(ctx, touching(Some(name), None), move |act, ctx| {
            // Whichever connection holds the name now (it may have logged
            // in again meanwhile).
            let holder = act.core.holder(&msg.name);
            let session = holder.and_then(|conn| act.sessions.get(&conn));
            let Some(session) = session.map(|s| s.addr.clone()) else {
                // Not to be seated from here: free for other seats.
                act.core.free_taken_out(&msg.name);
                tracing::warn!(
                    name = %msg.name,
                    game = msg.game,
                    "a player paired at another node's game is no longer here: its seat there \
                     is kept for the grace period"
                );
                return;
            };
            // The name is held for that game first, then the session takes
            // the seat (as `JOIN` of a game elsewhere does).
            let (reply, held) = oneshot::channel();
            let decided = act.core.paired_away(&msg.name, msg.game);
            act.conclude(ctx, decided, reply, |_, _| Ok(()));
            let game = msg.game;
            ctx.spawn(held.into_actor(act).map(move |held, _, _| match held {
                Ok(Ok(())) => session.tell(ToSession::SitThere(game)),
                _ => tracing::warn!(
                    name = %msg.name,
                    game,
                    "a player paired at another node's game sits in a game here: its seat \
                     there is kept for the grace period"
                ),
            }));
        });
    }
}
