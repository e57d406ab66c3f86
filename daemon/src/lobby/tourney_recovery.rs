//! Tournaments after a restart: each is drawn again from its stored facts
//! (`Tourney::resume`), told what became of its games in play (recovered,
//! ended as the daemon started, or not brought back), and goes on once its
//! players have had the seat grace to come back. A game the store's moves
//! ended counts only once its end is stored (written again until it is),
//! so that no later round is stored while it still reads as in play.

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use actix::fut::{ActorFutureExt, WrapFuture};
use actix::{AsyncContext, Context, Handler};
use flipline::Move;
use flipline::protocol::{GameId, GameResult, TourneyId};

use super::Lobby;
use crate::messages::{Name, RecoverTourneys};
use crate::rules::table::end_retry_delay;
use crate::rules::tourney_run::{Fact, Pairing, Tourney};
use crate::rules::tourneys::{Held, kind_of};
use crate::store::{StoredTourney, Write};

/// The ends of games the store's moves ended as the daemon started.
#[derive(Default)]
pub(super) struct Recovering {
    /// Stored, before the tournaments were read back.
    stored: Vec<(GameId, GameResult)>,
    /// Being stored.
    storing: HashSet<GameId>,
    /// Whether the tournaments are read back.
    tourneys_read: bool,
    /// Whether they were resumed (the seat grace is over).
    resumed: bool,
}

/// A stored tournament as the rules hold it: its pairings drawn again from
/// its facts.
fn resumed(stored: StoredTourney) -> (TourneyId, Held) {
    let StoredTourney {
        id,
        creator,
        spec,
        players,
        round,
        over,
        games,
        forfeits,
        starts,
    } = stored;
    let same = |a: &str, b: &str| a.eq_ignore_ascii_case(b);
    let fact = |r: u32, p: &Pairing| {
        let forfeit = (forfeits.iter())
            .find(|f| f.round == r && same(&f.black, &p.black) && same(&f.white, &p.white));
        if let Some(forfeit) = forfeit {
            return Some(Fact::Forfeit(forfeit.absent));
        }
        // A game not brought back by a restart may have been made again:
        // the last one made counts.
        (games.iter())
            .rfind(|g| g.round == r && same(&g.black, &p.black) && same(&g.white, &p.white))
            .map(|g| Fact::Made(g.game, g.result))
    };
    let players = players.into_iter().map(Name::from).collect();
    let kind = kind_of(&spec);
    let tourney = Tourney::resume(kind, Name::from(creator), players, round, over, fact);
    let starts: HashMap<u32, Vec<Move>> = starts.into_iter().collect();
    (id, Held::new(spec, tourney, starts))
}

impl Lobby {
    /// Stores the end of `game`, which its stored moves ended, again and
    /// again until it is stored; then its tournament, if any, counts it.
    pub(super) fn end_at_recovery(
        &mut self,
        ctx: &mut Context<Self>,
        game: GameId,
        result: GameResult,
    ) {
        self.recovering.storing.insert(game);
        self.store_recovered_end(ctx, game, result, 1);
    }

    fn store_recovered_end(
        &mut self,
        ctx: &mut Context<Self>,
        game: GameId,
        result: GameResult,
        attempt: u32,
    ) {
        let commit = self.services.store.commit(Write::End { game, result });
        ctx.spawn(commit.into_actor(self).map(move |stored, act, ctx| {
            if let Err(error) = stored {
                tracing::warn!(game, attempt, %error, "the end of a recovered game could not be saved; trying again");
                let pause = end_retry_delay(attempt);
                ctx.run_later(pause, move |act, ctx| {
                    act.store_recovered_end(ctx, game, result, attempt.saturating_add(1));
                });
                return;
            }
            act.recovering.storing.remove(&game);
            if !act.recovering.tourneys_read {
                return act.recovering.stored.push((game, result));
            }
            let scores = (result.black, result.white);
            let settled = act.tourneys.settle(game, result.winner, scores);
            if let Some(id) = settled.filter(|_| act.recovering.resumed) {
                let core = &act.core;
                let next = act.tourneys.resume_play(id, |n| core.free_to_play(n));
                act.carry_on(ctx, id, next);
            }
        }));
    }

    /// What became of `held`'s games in play at the restart: one that the
    /// store's moves ended is settled (once its end is stored), one not
    /// brought back is to be made again, one recovered is a tournament's
    /// (no rematch).
    fn settle_recovered(&mut self, held: &mut Held) {
        let in_play: Vec<_> = held.tourney.games_in_play().collect();
        for game in in_play {
            let stored = (self.recovering.stored.iter()).find(|(g, _)| *g == game);
            if let Some((_, result)) = stored {
                let scores = (result.black, result.white);
                held.tourney.settle(game, result.winner, scores);
            } else if self.recovering.storing.contains(&game) {
                // Counted once its end is stored.
            } else if self.core.route(game).is_none() {
                tracing::warn!(
                    game,
                    "a tournament's game was not brought back: it is made again"
                );
                held.tourney.lost_game(game);
            } else {
                self.core.mark_tourney_game(game);
            }
        }
    }
}

impl Handler<RecoverTourneys> for Lobby {
    type Result = ();

    fn handle(&mut self, RecoverTourneys(stored): RecoverTourneys, ctx: &mut Context<Self>) {
        for stored in stored {
            let (id, mut held) = resumed(stored);
            self.settle_recovered(&mut held);
            self.tourneys.restore(id, held);
        }
        self.recovering.stored = Vec::new();
        self.recovering.tourneys_read = true;
        let grace = Duration::from_secs(self.services.config.grace_secs);
        ctx.run_later(grace, |act, ctx| {
            act.recovering.resumed = true;
            act.resume_tourneys(ctx);
        });
    }
}
