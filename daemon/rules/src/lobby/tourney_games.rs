//! Tournament games in the lobby: who is free to play one when a round
//! begins (online, and in no game in play), and the game a round makes for
//! two players, made as an accepted challenge's is (held until stored; the
//! store links it to its tournament in the same write).

use flipline::protocol::{ClockSpec, GameId, TourneyId};
use flipline::{Move, Variant};

use super::{Done, GameTerms, LobbyCore, Origin, done};
use crate::refusal::Refusal;
use crate::{Name, Sitter};

/// What a tournament's game is: its tournament and round, its game, clock
/// and start, and whether it is rated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TourneyTerms {
    /// The tournament.
    pub tourney: TourneyId,
    /// The round.
    pub round: u32,
    /// The game.
    pub variant: Variant,
    /// Its clock.
    pub clock: Option<ClockSpec>,
    /// Whether it counts for the ratings.
    pub rated: bool,
    /// The moves it starts after.
    pub start: Vec<Move>,
}

impl<R: Clone> LobbyCore<R> {
    /// Whether `name` can play a tournament game now: online, and seated at
    /// no game in play.
    pub fn free_to_play(&self, name: &str) -> bool {
        self.holder(name).is_some() && self.playing(name).is_none() && self.check_free(name).is_ok()
    }

    /// Game `game`, recovered after a restart, is a tournament's.
    pub fn mark_tourney_game(&mut self, game: GameId) {
        if let Some(entry) = self.games.get_mut(&game) {
            entry.tourney = true;
        }
    }

    /// The game a tournament round makes for `black` and `white` (held
    /// until stored; both learn their seat as a paired seeker does). Refused
    /// if either is not [`free_to_play`](Self::free_to_play) by now.
    pub fn tourney_game(
        &mut self,
        black: &Name,
        white: &Name,
        terms: TourneyTerms,
        next_id: impl FnOnce() -> GameId,
    ) -> Result<Done<GameId, R>, Refusal> {
        self.transact(|core| core.decide_tourney_game(black, white, terms, next_id))
    }

    fn decide_tourney_game(
        &mut self,
        black: &Name,
        white: &Name,
        terms: TourneyTerms,
        next_id: impl FnOnce() -> GameId,
    ) -> Result<Done<GameId, R>, Refusal> {
        let mut conns = Vec::new();
        for name in [black, white] {
            if !self.free_to_play(name) {
                return Err(Refusal::NotFree(Name::clone(name)));
            }
            conns.extend(self.holder(name));
        }
        let mut effects = Vec::new();
        for name in [black, white] {
            self.vacate(name, &mut effects);
            self.withdraw_seek(name);
        }
        let seats = [black, white].map(|name| Sitter::Person(Name::clone(name), self.holder(name)));
        let game_terms = GameTerms {
            variant: terms.variant,
            clock: terms.clock,
            rated: terms.rated,
            start: terms.start,
            tourney: Some((terms.tourney, terms.round)),
        };
        let game = next_id();
        // Nobody's command made it: every player learns their seat.
        let origin = Origin {
            asker: None,
            near: conns.first().copied(),
        };
        self.launch(game, game_terms, seats, origin, &mut effects);
        done(game, effects)
    }
}
