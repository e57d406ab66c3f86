//! Challenges in the lobby: who may challenge whom (both online, neither in
//! a game in play, rated games between registered names only), and the game
//! an accepted challenge starts, made as any other new game is (held until
//! stored; a challenge whose game could not be stored is open again). The
//! open challenges themselves are `rules::challenges`.

use std::time::Duration;

use crate::clock::Moment;

use flipline::protocol::{DeclineReason, Event, GameId, SeatChoice, StartSpec};
use flipline::{Move, Variant};

use super::caseless::Caseless;
use super::{AwayPass, Done, GameTerms, LobbyCore, LobbyEffect, Origin, checked_start, done};
use crate::challenges::{Challenge, ChallengeId, Terms};
use crate::refusal::Refusal;
use crate::{Name, Phase, Sitter};

/// Where the other party of a challenge is, when on another node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Across {
    /// The challenged plays on this node (this is the challenger's).
    To(String),
    /// The challenger plays on `node`, where the challenge is numbered
    /// `id`, logged in there as `pass` says (what seats it here).
    From {
        node: String,
        id: ChallengeId,
        pass: AwayPass,
    },
}

/// A challenge as the lobby keeps it.
pub type LobbyChallenge = Challenge<Across>;

/// Where a challenge's start comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StartPlan {
    /// These moves (none: the usual start).
    Ready(Vec<Move>),
    /// A random start of this many moves, to be drawn.
    Draw(u8),
}

/// Where the start of a challenge of `variant` from `start` comes from.
pub fn start_plan(variant: Variant, start: &StartSpec) -> Result<StartPlan, Refusal> {
    match start {
        StartSpec::Initial => Ok(StartPlan::Ready(Vec::new())),
        StartSpec::Moves(moves) => checked_start(variant, moves).map(StartPlan::Ready),
        StartSpec::Random(plies) => Ok(StartPlan::Draw(*plies)),
    }
}

/// The refusal when no random start of `plies` moves could be drawn.
pub fn no_random_start(variant: Variant, plies: u8) -> Refusal {
    Refusal::NoRandomStart { variant, plies }
}

impl<R: Clone> LobbyCore<R> {
    /// Whether `name` is logged in with a password.
    pub fn is_member(&self, name: &str) -> bool {
        self.people
            .get(&Caseless(name))
            .is_some_and(|p| p.conn.is_some() && p.member)
    }

    /// The game in play `name` sits at, if any.
    pub(super) fn playing(&self, name: &str) -> Option<GameId> {
        self.seat_of(name)
            .filter(|g| self.games.get(g).is_some_and(|e| e.phase == Phase::Playing))
            .or_else(|| self.away_of(name))
    }

    /// Whether `from` may challenge `to` now (a rated game if `rated`):
    /// nothing changes. Asked before a random start is drawn.
    pub fn may_challenge(&self, from: &Name, to: &str, rated: bool) -> Result<(), Refusal> {
        self.logged_in(from)?;
        self.check_free(from)?;
        let to_conn = self.holder(to);
        if let Some(game) = self.playing(to).filter(|_| to_conn.is_some()) {
            return Err(Refusal::Playing {
                name: Name::from(to),
                game,
            });
        }
        if rated && (!self.is_member(from) || (to_conn.is_some() && !self.is_member(to))) {
            return Err(Refusal::RatedForMembers);
        }
        self.challenges.check(from, to, to_conn.is_some())
    }

    /// How a `CHALLENGE` from `from` to `to` gets its start: ready (the
    /// usual one, or `from MOVES` checked), or to be drawn at random, asked
    /// only once the challenge would be taken, so that a refused one costs
    /// the engine nothing. Nothing changes.
    pub fn challenge_start(
        &self,
        from: &Name,
        to: &str,
        terms: &Terms,
        start: &StartSpec,
    ) -> Result<StartPlan, Refusal> {
        if let StartSpec::Random(_) = start {
            self.may_challenge(from, to, terms.rated)?;
        }
        start_plan(terms.variant, start)
    }

    /// `CHALLENGE` from `from` to `to` on `terms`, open until `timeout` from
    /// `now`; `to` hears `CHALLENGE`. The answer is the challenge's number.
    pub fn challenge(
        &mut self,
        from: &Name,
        to: &str,
        terms: Terms,
        now: Moment,
        timeout: Duration,
    ) -> Result<Done<ChallengeId, R>, Refusal> {
        self.may_challenge(from, to, terms.rated)?;
        let known = self.people.get_key_value(&Caseless(to));
        let to_name = known.map_or_else(|| Name::from(to), |(key, _)| Name::clone(&key.0));
        let to_conn = self.holder(to);
        let online = to_conn.is_some();
        let challenge =
            (self.challenges).challenge((from, &to_name), online, terms, (now, timeout), None)?;
        let event = challenged(challenge);
        let id = challenge.id;
        let effects = to_conn
            .map(|conn| LobbyEffect::Tell(conn, vec![event]))
            .into_iter()
            .collect();
        done(id, effects)
    }

    /// `ACCEPT id` from `by`: the challenge's game starts (held until
    /// stored; the challenger learns its seat as a paired seeker does).
    /// The challenger's side, when random, is black if `coin`.
    pub fn accept(
        &mut self,
        by: &Name,
        id: ChallengeId,
        next_id: impl FnOnce() -> GameId,
        coin: bool,
    ) -> Result<Done<GameId, R>, Refusal> {
        self.transact(|core| core.decide_accept(by, id, next_id, coin))
    }

    fn decide_accept(
        &mut self,
        by: &Name,
        id: ChallengeId,
        next_id: impl FnOnce() -> GameId,
        coin: bool,
    ) -> Result<Done<GameId, R>, Refusal> {
        let conn = self.logged_in(by)?;
        let challenge = self.take_challenge(id, by)?;
        let from = Name::clone(&challenge.from);
        let mut effects = Vec::new();
        let (challenger, near) = match &challenge.across {
            // Its node took it out for this game: its seat is held for it.
            Some(Across::From { pass, .. }) => {
                self.check_free(by)?;
                (self.hold_far_seat(from, *pass, &mut effects)?, None)
            }
            _ => {
                let Some(from_conn) = self.holder(&from) else {
                    return Err(Refusal::ChallengerGone(from));
                };
                if self.people.get(&Caseless(&from)).is_some_and(|p| p.pairing) {
                    return Err(Refusal::ChallengerBusy(from));
                }
                self.check_free(by)?;
                if let Some(game) = self.playing(&from) {
                    return Err(Refusal::Playing { name: from, game });
                }
                self.vacate(&from, &mut effects);
                self.withdraw_seek(&from);
                (Sitter::Person(from, Some(from_conn)), Some(from_conn))
            }
        };
        self.vacate(by, &mut effects);
        self.withdraw_seek(by);
        let accepter = Sitter::Person(Name::clone(by), Some(conn));
        let challenger_black = match challenge.terms.side {
            SeatChoice::Black => true,
            SeatChoice::White => false,
            SeatChoice::Random => coin,
        };
        let seats = if challenger_black {
            [challenger, accepter]
        } else {
            [accepter, challenger]
        };
        let terms = GameTerms {
            variant: challenge.terms.variant,
            clock: challenge.terms.clock,
            rated: challenge.terms.rated,
            start: challenge.terms.start,
            tourney: None,
        };
        let game = next_id();
        let origin = Origin {
            asker: Some(conn),
            near,
        };
        self.launch(game, terms, seats, origin, &mut effects);
        done(game, effects)
    }

    /// `DECLINE id reason` from `by`: the challenger hears `DECLINED`.
    pub fn decline(
        &mut self,
        by: &Name,
        id: ChallengeId,
        reason: DeclineReason,
    ) -> Result<Done<(), R>, Refusal> {
        self.logged_in(by)?;
        let challenge = self.challenges.decline(id, by, reason)?;
        let mut effects = Vec::new();
        self.tell_declined(&challenge.from, id, &challenge.to, reason, &mut effects);
        self.note_across(&challenge, reason);
        done((), effects)
    }

    /// `CANCEL id` from `by`, who made it: the challenged hears `DECLINED
    /// ... cancelled`.
    pub fn cancel_challenge(&mut self, by: &Name, id: ChallengeId) -> Result<Done<(), R>, Refusal> {
        self.logged_in(by)?;
        let challenge = self.challenges.cancel(id, by)?;
        let mut effects = Vec::new();
        let reason = DeclineReason::Cancelled;
        self.tell_declined(&challenge.to, id, &challenge.from, reason, &mut effects);
        self.note_across(&challenge, reason);
        done((), effects)
    }

    /// The challenges unanswered by `now` lapse: both sides hear `DECLINED
    /// ... timeout`.
    pub fn expire_challenges(&mut self, now: Moment) -> Vec<LobbyEffect<R>> {
        let mut effects = Vec::new();
        for challenge in self.challenges.expire(now) {
            let (id, reason) = (challenge.id, DeclineReason::Timeout);
            self.tell_declined(&challenge.from, id, &challenge.to, reason, &mut effects);
            self.tell_declined(&challenge.to, id, &challenge.from, reason, &mut effects);
            self.note_across(&challenge, reason);
        }
        effects
    }

    /// The challenger and the challenged of open challenge `id`.
    pub fn challenge_parties(&self, id: ChallengeId) -> Option<[Name; 2]> {
        (self.challenges.open())
            .find(|c| c.id == id)
            .map(|c| [Name::clone(&c.from), Name::clone(&c.to)])
    }

    /// When the next open challenge lapses.
    pub fn next_challenge_expiry(&self) -> Option<Moment> {
        self.challenges.next_expiry()
    }

    /// `name` went offline: its challenges are withdrawn (`cancelled`, to
    /// their challenged), those to it refused (`offline`, to their
    /// challengers).
    pub(super) fn drop_challenges(&mut self, name: &str, effects: &mut Vec<LobbyEffect<R>>) {
        for (challenge, reason) in self.challenges.gone(name) {
            let id = challenge.id;
            match reason {
                DeclineReason::Cancelled => {
                    self.tell_declined(&challenge.to, id, &challenge.from, reason, effects);
                }
                _ => self.tell_declined(&challenge.from, id, &challenge.to, reason, effects),
            }
            self.note_across(&challenge, reason);
        }
        // Its side of an accept on another node: that node's game, if made,
        // keeps its seat for the grace period.
        for challenge in self.forget_accepting(name) {
            self.note_across(&challenge, DeclineReason::Cancelled);
        }
    }

    /// Tells `whom`, if online, `DECLINED id other reason`.
    pub(super) fn tell_declined(
        &self,
        whom: &str,
        id: ChallengeId,
        other: &str,
        reason: DeclineReason,
        effects: &mut Vec<LobbyEffect<R>>,
    ) {
        if let Some(conn) = self.holder(whom) {
            let event = Event::Declined {
                id,
                name: other.to_string(),
                reason,
            };
            effects.push(LobbyEffect::Tell(conn, vec![event]));
        }
    }

    /// Takes challenge `id`, addressed to `by`, for accepting: the running
    /// command's journal keeps it, so that a game not stored opens it again.
    fn take_challenge(&mut self, id: ChallengeId, by: &str) -> Result<LobbyChallenge, Refusal> {
        let challenge = self.challenges.accept(id, by)?;
        self.note_accepted(&challenge);
        Ok(challenge)
    }

    /// A challenge accepted by a command put back: open again.
    pub(super) fn reopen_challenge(&mut self, challenge: LobbyChallenge) {
        self.challenges.restore(challenge);
    }

    /// The open challenges (for the tests).
    #[cfg(test)]
    pub fn open_challenges(&self) -> Vec<ChallengeId> {
        self.challenges.open().map(|c| c.id).collect()
    }
}

/// The `CHALLENGE` event the challenged hears.
pub(super) fn challenged(challenge: &LobbyChallenge) -> Event {
    Event::Challenged {
        id: challenge.id,
        from: challenge.from.to_string(),
        variant: challenge.terms.variant,
        side: challenge.terms.side,
        clock: challenge.terms.clock,
        rated: challenge.terms.rated,
    }
}

/// A challenge to a name not online is refused with `ERR 404`; the words
/// say how to find who is.
pub fn not_online(name: &str) -> Refusal {
    Refusal::NotOnlineWho(Name::from(name))
}
