//! Tournament games in play on other nodes. A tournament taken over from a
//! node declared dead runs here, but its games in play were taken over by
//! whichever live nodes claimed them. Their ends are read from the store
//! when a node says one is over (`OverThere`, from the bus), and every
//! [`FOLLOW_POLL`] in case that word was lost (the bus keeps nothing).

use std::collections::HashSet;
use std::time::Duration;

use actix::fut::{ActorFutureExt, WrapFuture};
use actix::{AsyncContext, Context, Handler};
use flipline::protocol::GameId;

use super::Lobby;
use crate::messages::{AdoptTourneys, OverThere};
use crate::store::{GameRecord, Status};

/// How often the ends of followed games are read, whatever the bus says.
const FOLLOW_POLL: Duration = Duration::from_secs(2);

/// The games followed, those being read, and whether a read of them all
/// is due.
#[derive(Default)]
pub(super) struct Followed {
    games: HashSet<GameId>,
    /// One read a game at a time: a slow store does not pile them up.
    reading: HashSet<GameId>,
    polling: bool,
}

impl Handler<AdoptTourneys> for Lobby {
    type Result = ();

    fn handle(&mut self, AdoptTourneys(stored): AdoptTourneys, ctx: &mut Context<Self>) {
        self.take_up(ctx, |desk, here, grace| desk.adopt(stored, here, grace));
    }
}

impl Handler<OverThere> for Lobby {
    type Result = ();

    fn handle(&mut self, OverThere(game): OverThere, ctx: &mut Context<Self>) {
        if self.followed.games.contains(&game) {
            self.read_end(ctx, game);
        }
    }
}

impl Lobby {
    /// Follows tournament game `game`, in play elsewhere, to its end.
    pub(super) fn follow(&mut self, ctx: &mut Context<Self>, game: GameId) {
        self.followed.games.insert(game);
        // It may have ended before the tournament came here.
        self.read_end(ctx, game);
        self.poll_followed(ctx);
    }

    /// Reads every followed game's end after [`FOLLOW_POLL`], while any is.
    fn poll_followed(&mut self, ctx: &mut Context<Self>) {
        if self.followed.polling || self.followed.games.is_empty() {
            return;
        }
        self.followed.polling = true;
        ctx.run_later(FOLLOW_POLL, |act, ctx| {
            act.followed.polling = false;
            let games: Vec<GameId> = act.followed.games.iter().copied().collect();
            for game in games {
                act.read_end(ctx, game);
            }
            act.poll_followed(ctx);
        });
    }

    /// Reads how `game` stands in the store, unless its tournament no
    /// longer waits for it (it ended here, taken over by this node).
    fn read_end(&mut self, ctx: &mut Context<Self>, game: GameId) {
        if !self.desk.plays(game) {
            self.followed.games.remove(&game);
            return;
        }
        if !self.followed.reading.insert(game) {
            return;
        }
        let read = self.services.store.game_as_stored(game);
        ctx.spawn(read.into_actor(self).map(move |read, act, ctx| {
            act.followed.reading.remove(&game);
            match read {
                Ok(record) => act.followed_stands(ctx, game, record),
                Err(error) => tracing::debug!(game, %error, "a followed game could not be read"),
            }
        }));
    }

    /// `game` stands as `record` says: over, its result counts; gone
    /// without a result, its pairing is made again; in play, still followed.
    fn followed_stands(
        &mut self,
        ctx: &mut Context<Self>,
        game: GameId,
        record: Option<GameRecord>,
    ) {
        if !self.followed.games.contains(&game) || !self.desk.plays(game) {
            self.followed.games.remove(&game);
            return;
        }
        let stands = record.map(|r| (r.status, r.result));
        match stands {
            Some((Status::Over, Some(result))) => {
                self.followed.games.remove(&game);
                self.tourney_game_over(ctx, game, result);
            }
            Some((Status::Open | Status::Playing, _)) => {}
            _ => {
                self.followed.games.remove(&game);
                tracing::warn!(
                    game,
                    "a tournament's game ended without a result: it is made again"
                );
                let effects = self.with_desk(|desk, free| desk.game_gone(game, free));
                self.carry_out_desk(ctx, effects);
            }
        }
    }
}
