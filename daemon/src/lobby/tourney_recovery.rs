//! Tournaments after a restart: each is drawn again from its stored facts
//! (`Tourney::resume`), told what became of its games in play (recovered,
//! ended as the daemon started, or not brought back), and goes on once its
//! players have had the seat grace to come back.

use std::collections::HashMap;
use std::time::Duration;

use actix::{AsyncContext, Context, Handler};
use flipline::Move;
use flipline::protocol::TourneyId;

use super::Lobby;
use crate::messages::{Name, RecoverTourneys};
use crate::rules::tourney_run::{Fact, Pairing, Tourney};
use crate::rules::tourneys::{Held, kind_of};
use crate::store::StoredTourney;

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
    /// What became of `held`'s games in play at the restart: one that the
    /// store's moves ended is settled, one not brought back is to be made
    /// again, one recovered is a tournament's (no rematch).
    fn settle_recovered(&mut self, held: &mut Held) {
        let in_play: Vec<_> = held.tourney.games_in_play().collect();
        for game in in_play {
            if let Some(result) = (self.recovery_ends.iter()).find(|(g, _)| *g == game) {
                let (_, result) = result;
                let scores = (result.black, result.white);
                held.tourney.settle(game, result.winner, scores);
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
        self.recovery_ends = Vec::new();
        let grace = Duration::from_secs(self.services.config.grace_secs);
        ctx.run_later(grace, |act, ctx| act.resume_tourneys(ctx));
    }
}
