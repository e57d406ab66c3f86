//! Tournaments after a restart: each is drawn again from its stored facts
//! (`Tourney::resume`), told what became of its games in play (recovered,
//! ended as the daemon started, or not brought back), and goes on once its
//! players have had the seat grace to come back. A game the store's moves
//! ended counts only once its end is stored (written again until it is),
//! so that no later round is stored while it still reads as in play.

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use flipline::Move;
use flipline::protocol::{GameId, GameResult, TourneyId};

use super::{Alarm, DeskEffect, Effects, Free, TourneyDesk};
use crate::Name;
use crate::table::end_retry_delay;
use crate::tourney::{Fact, Pairing, Tourney};
use crate::tourney_facts::StoredTourney;
use crate::tourneys::{Held, kind_of};

/// The ends of games the store's moves ended as the daemon started.
#[derive(Debug, Default)]
pub(super) struct Recovering {
    /// Stored, before the tournaments were read back.
    stored: Vec<(GameId, GameResult)>,
    /// Being stored.
    storing: HashSet<GameId>,
    /// Whether the tournaments are read back.
    tourneys_read: bool,
    /// Whether they were resumed (the seat grace is over).
    resumed: bool,
    /// Tournaments taken over from another node, not yet resumed: their
    /// games' ends count, and nothing more is made until the seat grace is
    /// over.
    adopting: HashSet<TourneyId>,
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

impl<T> TourneyDesk<T> {
    /// Game `game`'s stored moves ended it while the daemon was down: its
    /// end is stored (again and again until it is), then its tournament,
    /// if any, counts it.
    pub fn recovered_end(&mut self, game: GameId, result: GameResult) -> Effects<T> {
        self.recovering.storing.insert(game);
        vec![DeskEffect::StoreEnd(game, result, 1)]
    }

    /// The end of a recovered game was stored (`stored`) or not; `attempt`
    /// is the attempt it was.
    pub fn end_stored(
        &mut self,
        game: GameId,
        result: GameResult,
        attempt: u32,
        stored: bool,
        free: Free,
    ) -> Effects<T> {
        let mut effects = Vec::new();
        if !stored {
            let again = Alarm::RewriteEnd(game, result, attempt.saturating_add(1));
            effects.push(DeskEffect::Wake(end_retry_delay(attempt), again));
            return effects;
        }
        self.recovering.storing.remove(&game);
        if !self.recovering.tourneys_read {
            self.recovering.stored.push((game, result));
            return effects;
        }
        let scores = (result.black, result.white);
        let settled = self.tourneys.settle(game, result.winner, scores);
        let going_on = |id: &TourneyId| self.recovering.resumed && !self.adopting(*id);
        if let Some(id) = settled.filter(going_on) {
            let next = self.tourneys.resume_play(id, free);
            self.carry_on(id, next, free, &mut effects);
        }
        effects
    }

    /// The tournaments read back from the store, once the games in play
    /// are (`in_lobby` says which the lobby brought back): held again, and
    /// resumed after `grace`.
    pub fn restore(
        &mut self,
        stored: Vec<StoredTourney>,
        in_lobby: impl Fn(GameId) -> bool,
        grace: Duration,
    ) -> Effects<T> {
        let mut effects = Vec::new();
        for stored in stored {
            let (id, mut held) = resumed(stored);
            self.settle_recovered(&mut held, &in_lobby, &mut effects);
            self.tourneys.restore(id, held);
        }
        self.recovering.stored = Vec::new();
        self.recovering.tourneys_read = true;
        effects.push(DeskEffect::Wake(grace, Alarm::Resume));
        effects
    }

    /// Tournaments taken over from a cluster node declared dead, as stored:
    /// held here from now on, under their numbers. Each game in play is
    /// followed ([`DeskEffect::Follow`]) until the store says how it ended,
    /// wherever it is played; one here (`here`: taken over by this node) is
    /// also marked a tournament's. One
    /// whose round waits only for games in play goes on as they end; one
    /// with games to make waits `grace` first, so that the dead node's
    /// players have had the seat grace to come back to some node.
    pub fn adopt(
        &mut self,
        stored: Vec<StoredTourney>,
        here: impl Fn(GameId) -> bool,
        grace: Duration,
    ) -> Effects<T> {
        let mut effects = Vec::new();
        let mut adopted = Vec::new();
        for stored in stored {
            if self.holds(stored.id) {
                continue;
            }
            let (id, held) = resumed(stored);
            // A game here is followed too: it may have ended here before
            // the tournament came (its end then went to no tournament).
            for game in held.tourney.games_in_play() {
                if here(game) {
                    effects.push(DeskEffect::MarkGame(game));
                }
                effects.push(DeskEffect::Follow(game));
            }
            let playing = held.tourney.only_games_in_play();
            self.tourneys.adopt(id, held);
            if !playing {
                self.recovering.adopting.insert(id);
                adopted.push(id);
            }
        }
        if !adopted.is_empty() {
            effects.push(DeskEffect::Wake(grace, Alarm::ResumeAdopted(adopted)));
        }
        effects
    }

    /// Game `game` of a tournament, followed elsewhere, ended without a
    /// result (it was never seated: its pairing's game is made again, or
    /// lost by abandon by whoever is not free).
    pub fn game_gone(&mut self, game: GameId, free: Free) -> Effects<T> {
        let mut effects = Vec::new();
        let lost = self.tourneys.lost(game);
        if let Some(id) = lost.filter(|id| !self.recovering.adopting.contains(id)) {
            let next = self.tourneys.resume_play(id, free);
            self.carry_on(id, next, free, &mut effects);
        }
        effects
    }

    /// Whether tournament `id`, taken over, waits for its players to come
    /// back before it goes on.
    pub(super) fn adopting(&self, id: TourneyId) -> bool {
        self.recovering.adopting.contains(&id)
    }

    /// Whether game `game` is a tournament's game in play here.
    pub fn plays(&self, game: GameId) -> bool {
        self.tourneys.of_game(game).is_some()
    }

    /// Tournaments `ids`, taken over, go on: the games their round still
    /// needs, or their next round.
    pub(super) fn resume_adopted(
        &mut self,
        ids: &[TourneyId],
        free: Free,
        effects: &mut Effects<T>,
    ) {
        for &id in ids {
            self.recovering.adopting.remove(&id);
            let next = self.tourneys.resume_play(id, free);
            self.carry_on(id, next, free, effects);
        }
    }

    /// What became of `held`'s games in play at the restart: one that the
    /// store's moves ended is settled (once its end is stored), one not
    /// brought back is to be made again, one recovered is a tournament's
    /// (no rematch).
    fn settle_recovered(
        &mut self,
        held: &mut Held,
        in_lobby: &impl Fn(GameId) -> bool,
        effects: &mut Effects<T>,
    ) {
        let in_play: Vec<_> = held.tourney.games_in_play().collect();
        for game in in_play {
            let stored = (self.recovering.stored.iter()).find(|(g, _)| *g == game);
            if let Some((_, result)) = stored {
                let scores = (result.black, result.white);
                held.tourney.settle(game, result.winner, scores);
            } else if self.recovering.storing.contains(&game) {
                // Counted once its end is stored.
            } else if !in_lobby(game) {
                held.tourney.lost_game(game);
                effects.push(DeskEffect::Remade(game));
            } else {
                effects.push(DeskEffect::MarkGame(game));
            }
        }
    }

    /// After a restart, once the players have had the seat grace to come
    /// back: each running tournament makes the games its round still needs,
    /// or begins its next round.
    pub(super) fn resume(&mut self, free: Free, effects: &mut Effects<T>) {
        self.recovering.resumed = true;
        // One taken over meanwhile waits for its own grace.
        let mut running = self.tourneys.running();
        running.retain(|id| !self.adopting(*id));
        for id in running {
            let next = self.tourneys.resume_play(id, free);
            self.carry_on(id, next, free, effects);
        }
    }
}
