//! Challenges: one player asks a named other for a game on given terms; the
//! other accepts (the lobby then makes the game), declines with a reason, or
//! lets it expire; the challenger may withdraw it. This core keeps the open
//! challenges and decides each of those steps; whether a name is online, and
//! making the game, are the lobby's.
//!
//! Pure: time comes in as an argument, and every step answers the
//! challenge it settled, for the shell to tell both players.

use std::collections::BTreeMap;
use std::time::Duration;

use crate::clock::Moment;

use flipline::protocol::{ClockSpec, DeclineReason, SeatChoice};
use flipline::{Move, Variant};

use super::Name;
use crate::refusal::Refusal;

/// A challenge's number: challenges are numbered apart from games.
pub type ChallengeId = u64;

/// Open challenges one player may have out at once: enough for a bot that
/// challenges a field, few enough that nobody floods another's screen.
pub const MAX_OPEN_PER_CHALLENGER: usize = 16;

/// The game a challenge asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Terms {
    /// The game.
    pub variant: Variant,
    /// The challenger's side.
    pub side: SeatChoice,
    /// The clock, if any.
    pub clock: Option<ClockSpec>,
    /// Whether the game counts for the ratings.
    pub rated: bool,
    /// Moves to start from (a transcript, or a random start drawn when
    /// the challenge was made).
    pub start: Vec<Move>,
}

/// An open challenge; `L` says where its other party is when that is on
/// another node of a cluster (the lobby's to read).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Challenge<L = ()> {
    /// Its number.
    pub id: ChallengeId,
    /// Who asks.
    pub from: Name,
    /// Who is asked.
    pub to: Name,
    /// For what.
    pub terms: Terms,
    /// When it lapses unanswered.
    pub expires: Moment,
    /// Its other party's node, if another.
    pub across: Option<L>,
}

/// The open challenges (see the module docs).
#[derive(Debug)]
pub struct Challenges<L = ()> {
    /// The last number given.
    last: ChallengeId,
    open: BTreeMap<ChallengeId, Challenge<L>>,
}

impl<L> Default for Challenges<L> {
    fn default() -> Challenges<L> {
        Challenges {
            last: 0,
            open: BTreeMap::new(),
        }
    }
}

fn same(a: &str, b: &str) -> bool {
    a.eq_ignore_ascii_case(b)
}

impl<L> Challenges<L> {
    /// No challenges.
    pub fn new() -> Challenges<L> {
        Challenges::default()
    }

    /// `from` challenges `to` (online, as the lobby found, on another node
    /// if `across` says so) on `terms`, open until `timeout` from `now`.
    pub fn challenge(
        &mut self,
        (from, to): (&Name, &Name),
        to_online: bool,
        terms: Terms,
        (now, timeout): (Moment, Duration),
        across: Option<L>,
    ) -> Result<&Challenge<L>, Refusal> {
        self.check(from, to, to_online)?;
        self.last += 1;
        let challenge = Challenge {
            id: self.last,
            from: Name::clone(from),
            to: Name::clone(to),
            terms,
            expires: now + timeout,
            across,
        };
        Ok(self.open.entry(challenge.id).or_insert(challenge))
    }

    /// Whether `from` may challenge `to` now (nothing changes): what
    /// [`Challenges::challenge`] checks first, and what is asked before a
    /// random start is drawn for a challenge, so that one that would be
    /// refused costs the engine nothing.
    pub fn check(&self, from: &str, to: &str, to_online: bool) -> Result<(), Refusal> {
        if same(from, to) {
            return Err(Refusal::ChallengeSelf);
        }
        if !to_online {
            return Err(Refusal::NotOnline(Name::from(to)));
        }
        if let Some(open) = self.between(from, to) {
            let to = Name::from(to);
            return Err(Refusal::ChallengedAlready { to, id: open.id });
        }
        let out = self.open.values().filter(|c| same(&c.from, from)).count();
        if out >= MAX_OPEN_PER_CHALLENGER {
            return Err(Refusal::TooManyChallenges(MAX_OPEN_PER_CHALLENGER));
        }
        Ok(())
    }

    /// The open challenge from `from` to `to`, if any.
    fn between(&self, from: &str, to: &str) -> Option<&Challenge<L>> {
        self.open
            .values()
            .find(|c| same(&c.from, from) && same(&c.to, to))
    }

    /// Removes and gives an open challenge asked about by `by`, who must be
    /// its challenged (`challenged`) or its challenger.
    fn take(
        &mut self,
        id: ChallengeId,
        by: &str,
        challenged: bool,
    ) -> Result<Challenge<L>, Refusal> {
        let Some(challenge) = self.open.get(&id) else {
            return Err(Refusal::NoChallenge(id));
        };
        let party = if challenged {
            &challenge.to
        } else {
            &challenge.from
        };
        if !same(party, by) {
            return Err(Refusal::NotYourChallenge { id, challenged });
        }
        self.open.remove(&id).ok_or(Refusal::NoChallenge(id))
    }

    /// `ACCEPT id` from `by`: the challenge, for the lobby to make its game.
    /// (If the lobby cannot, it puts it back with [`Challenges::restore`].)
    pub fn accept(&mut self, id: ChallengeId, by: &str) -> Result<Challenge<L>, Refusal> {
        self.take(id, by, true)
    }

    /// `DECLINE id reason` from `by`: the challenge, for the challenger to
    /// hear of. Only a player's reasons may be given.
    pub fn decline(
        &mut self,
        id: ChallengeId,
        by: &str,
        reason: DeclineReason,
    ) -> Result<Challenge<L>, Refusal> {
        if !reason.is_a_players() {
            return Err(Refusal::DaemonsReason(reason));
        }
        self.take(id, by, true)
    }

    /// `CANCEL id` from `by`, who made it: the challenge, for the
    /// challenged to hear of (`cancelled`).
    pub fn cancel(&mut self, id: ChallengeId, by: &str) -> Result<Challenge<L>, Refusal> {
        self.take(id, by, false)
    }

    /// A challenge taken by [`Challenges::accept`] whose game could not be
    /// made (not stored): open again as it was.
    pub fn restore(&mut self, challenge: Challenge<L>) {
        self.open.insert(challenge.id, challenge);
    }

    /// The challenges that lapsed by `now`, removed (`timeout`).
    pub fn expire(&mut self, now: Moment) -> Vec<Challenge<L>> {
        let lapsed: Vec<ChallengeId> = (self.open.values())
            .filter(|c| c.expires <= now)
            .map(|c| c.id)
            .collect();
        lapsed
            .iter()
            .filter_map(|id| self.open.remove(id))
            .collect()
    }

    /// `name` went offline: the challenges it made are withdrawn
    /// (`cancelled`, to their challenged) and those made to it refused
    /// (`offline`, to their challengers), all removed.
    pub fn gone(&mut self, name: &str) -> Vec<(Challenge<L>, DeclineReason)> {
        let touched: Vec<ChallengeId> = (self.open.values())
            .filter(|c| same(&c.from, name) || same(&c.to, name))
            .map(|c| c.id)
            .collect();
        touched
            .iter()
            .filter_map(|id| self.open.remove(id))
            .map(|c| {
                let reason = if same(&c.from, name) {
                    DeclineReason::Cancelled
                } else {
                    DeclineReason::Offline
                };
                (c, reason)
            })
            .collect()
    }

    /// The open challenges, by number.
    pub fn open(&self) -> impl Iterator<Item = &Challenge<L>> {
        self.open.values()
    }

    /// Challenge `id`, if open.
    pub fn get(&self, id: ChallengeId) -> Option<&Challenge<L>> {
        self.open.get(&id)
    }

    /// Removes and gives the first open challenge that `fits`, if any:
    /// for a word about it from its other party's node, which names it by
    /// its number there.
    pub fn take_where(&mut self, fits: impl Fn(&Challenge<L>) -> bool) -> Option<Challenge<L>> {
        let id = self.open.values().find(|c| fits(c))?.id;
        self.open.remove(&id)
    }

    /// When the next challenge lapses, if any is open.
    pub fn next_expiry(&self) -> Option<Moment> {
        self.open.values().map(|c| c.expires).min()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flipline::protocol::ErrorCode;
    use proptest::prelude::*;

    const TIMEOUT: Duration = Duration::from_secs(60);

    fn terms() -> Terms {
        Terms {
            variant: Variant::Othello,
            side: SeatChoice::Random,
            clock: None,
            rated: true,
            start: Vec::new(),
        }
    }

    fn name(n: &str) -> Name {
        Name::from(n)
    }

    fn challenge(
        c: &mut Challenges,
        from: &str,
        to: &str,
        now: Moment,
    ) -> Result<ChallengeId, u16> {
        let made = c.challenge(
            (&name(from), &name(to)),
            true,
            terms(),
            (now, TIMEOUT),
            None,
        );
        made.map(|c| c.id).map_err(|e| e.code().number())
    }

    #[test]
    fn a_challenge_is_accepted_declined_or_cancelled_by_the_right_player_once() {
        let (mut c, now) = (Challenges::new(), Moment::from_micros(1_000_000));
        let one = challenge(&mut c, "ann", "bob", now).unwrap();
        let two = challenge(&mut c, "ann", "cid", now).unwrap();
        assert_ne!(one, two);
        assert_eq!(
            c.accept(one, "ann").unwrap_err().code(),
            ErrorCode::Forbidden
        );
        assert_eq!(
            c.cancel(one, "bob").unwrap_err().code(),
            ErrorCode::Forbidden
        );
        assert_eq!(
            c.accept(one, "BOB").unwrap().to.as_ref(),
            "bob",
            "in any case"
        );
        assert_eq!(
            c.accept(one, "bob").unwrap_err().code(),
            ErrorCode::NotFound,
            "once"
        );
        let daemons = c.decline(two, "cid", DeclineReason::Timeout).unwrap_err();
        assert_eq!(daemons.code(), ErrorCode::BadRequest);
        assert_eq!(c.decline(two, "cid", DeclineReason::Later).unwrap().id, two);
        let three = challenge(&mut c, "ann", "bob", now).unwrap();
        assert_eq!(c.cancel(three, "ann").unwrap().id, three);
        assert_eq!(c.open().count(), 0);
    }

    #[test]
    fn nobody_challenges_themself_the_offline_or_the_same_player_twice() {
        let (mut c, now) = (Challenges::new(), Moment::from_micros(1_000_000));
        assert_eq!(challenge(&mut c, "ann", "Ann", now), Err(400));
        let offline = c.challenge(
            (&name("ann"), &name("bob")),
            false,
            terms(),
            (now, TIMEOUT),
            None,
        );
        assert_eq!(
            offline.map(|c| c.id).map_err(|e| e.code()),
            Err(ErrorCode::NotFound)
        );
        let first = challenge(&mut c, "ann", "bob", now).unwrap();
        assert_eq!(challenge(&mut c, "ann", "BOB", now), Err(409));
        assert!(
            challenge(&mut c, "bob", "ann", now).is_ok(),
            "the other way is another"
        );
        for n in 1..MAX_OPEN_PER_CHALLENGER {
            challenge(&mut c, "ann", &format!("p{n}"), now).unwrap();
        }
        assert_eq!(challenge(&mut c, "ann", "zed", now), Err(429));
        let taken = c.accept(first, "bob").unwrap();
        c.restore(taken);
        assert_eq!(
            challenge(&mut c, "ann", "bob", now),
            Err(409),
            "restored, open again"
        );
    }

    #[test]
    fn challenges_lapse_at_their_time_and_go_with_their_players() {
        let (mut c, now) = (Challenges::new(), Moment::from_micros(1_000_000));
        let early = challenge(&mut c, "ann", "bob", now).unwrap();
        let later = challenge(&mut c, "cid", "ann", now + Duration::from_secs(30)).unwrap();
        let other = challenge(&mut c, "cid", "dan", now + Duration::from_secs(30)).unwrap();
        assert_eq!(c.next_expiry(), Some(now + TIMEOUT));
        assert!(
            c.expire(now + (TIMEOUT - Duration::from_millis(1)))
                .is_empty()
        );
        let lapsed: Vec<_> = c.expire(now + TIMEOUT).iter().map(|c| c.id).collect();
        assert_eq!(lapsed, [early]);
        let gone: Vec<_> = c.gone("ANN").into_iter().map(|(c, r)| (c.id, r)).collect();
        assert_eq!(gone, [(later, DeclineReason::Offline)]);
        let gone: Vec<_> = c.gone("cid").into_iter().map(|(c, r)| (c.id, r)).collect();
        assert_eq!(gone, [(other, DeclineReason::Cancelled)]);
        assert_eq!(c.next_expiry(), None);
    }

    proptest! {
        /// Whatever is asked, a challenge is settled at most once, numbers
        /// are never reused, and no pair has two open challenges.
        #[test]
        fn challenges_are_settled_once_and_pairs_stay_single(
            steps in prop::collection::vec((0u8..5, 0usize..4, 0usize..4, 0u64..12), 1..80)
        ) {
            let players = ["ann", "bob", "cid", "dan"];
            let (mut c, start) = (Challenges::new(), Moment::from_micros(1_000_000));
            let mut settled = std::collections::HashSet::new();
            let mut highest = 0;
            for (i, (step, a, b, id)) in steps.into_iter().enumerate() {
                let now = start + Duration::from_secs(i as u64 * 10);
                let (a, b) = (players[a], players[b]);
                let done: Vec<ChallengeId> = match step {
                    0 => {
                        if let Ok(made) = challenge(&mut c, a, b, now) {
                            prop_assert!(made > highest, "numbers are never reused");
                            highest = made;
                        }
                        Vec::new()
                    }
                    1 => c.accept(id, a).into_iter().map(|c| c.id).collect(),
                    2 => c.cancel(id, a).into_iter().map(|c| c.id).collect(),
                    3 => c.expire(now).into_iter().map(|c| c.id).collect(),
                    _ => c.gone(a).into_iter().map(|(c, _)| c.id).collect(),
                };
                for id in done {
                    prop_assert!(settled.insert(id), "challenge {} settled twice", id);
                }
                let open: Vec<_> = c.open().collect();
                for (x, first) in open.iter().enumerate() {
                    for second in open.iter().skip(x + 1) {
                        prop_assert!(
                            !(same(&first.from, &second.from) && same(&first.to, &second.to)),
                            "two open challenges from {} to {}", first.from, first.to
                        );
                    }
                }
            }
        }
    }
}
