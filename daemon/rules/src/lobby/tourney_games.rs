//! Tournament games in the lobby: who is free to play one when a round
//! begins (online, and in no game in play), and the game a round makes for
//! two players, made as an accepted challenge's is (held until stored; the
//! store links it to its tournament in the same write).

use flipline::protocol::{ClockSpec, GameId, TourneyId};
use flipline::{Move, Variant};

use super::{AwayPass, Done, GameTerms, LobbyCore, Marks, Origin, done};
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
    /// if either is not [`free_to_play`](Self::free_to_play) by now. A
    /// player of another node (`far`: black's, white's), taken out there
    /// for this game, has its seat held for it here instead.
    pub fn tourney_game(
        &mut self,
        (black, white): (&Name, &Name),
        far: [bool; 2],
        terms: TourneyTerms,
        next_id: impl FnOnce() -> GameId,
    ) -> Result<Done<GameId, R>, Refusal> {
        self.transact(|core| core.decide_tourney_game([black, white], far, terms, next_id))
    }

    fn decide_tourney_game(
        &mut self,
        names: [&Name; 2],
        far: [bool; 2],
        terms: TourneyTerms,
        next_id: impl FnOnce() -> GameId,
    ) -> Result<Done<GameId, R>, Refusal> {
        let mut conns = Vec::new();
        for (name, far) in names.into_iter().zip(far) {
            if !far && !self.free_to_play(name) {
                return Err(Refusal::NotFree(Name::clone(name)));
            }
            conns.extend(self.holder(name).filter(|_| !far));
        }
        let mut effects = Vec::new();
        let black = self.tourney_seat(names[0], far[0], &mut effects)?;
        let white = self.tourney_seat(names[1], far[1], &mut effects)?;
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
        self.launch(game, game_terms, [black, white], origin, &mut effects);
        done(game, effects)
    }

    /// `name`'s seat at a round's game: here, or held for it when it is on
    /// another node (`far`; tournaments are for registered names: a
    /// member's pass).
    fn tourney_seat(
        &mut self,
        name: &Name,
        far: bool,
        effects: &mut Vec<super::LobbyEffect<R>>,
    ) -> Result<Sitter<crate::ConnId>, Refusal> {
        if far {
            let pass = AwayPass {
                secret: None,
                member: true,
                marks: Marks::default(),
            };
            return self.hold_far_seat(Name::clone(name), pass, effects);
        }
        self.vacate(name, effects);
        self.withdraw_seek(name);
        Ok(Sitter::Person(Name::clone(name), self.holder(name)))
    }
}
