//! Challenges between players of two nodes of a cluster. Each node keeps
//! the challenge as its own player sees it, numbered there: the
//! challenger's node as made to a name on another node ([`Across::To`]),
//! the challenged's node as made by one ([`Across::From`], with the
//! challenger's number there and how it logged in). Only the challenger's
//! number crosses between them.
//!
//! What one side settles (declined, withdrawn, lapsed, its player gone) is
//! noted for the other ([`FarNote`]), which settles its own copy. An
//! `ACCEPT` on the challenged's node first has the challenger's node take
//! its side out ([`LobbyCore::reserve_challenger`]): from then on the
//! challenger takes no other seat, as for a pairing of seeks, until the
//! challenged's node has made the game, with the challenger's seat held for
//! it, or has not ([`LobbyCore::release_challenger`]). Either node may say
//! no first; neither makes a game the other did not agree to.

use std::time::Duration;

use flipline::protocol::DeclineReason;

use super::challenging::{Across, LobbyChallenge, challenged};
use super::{AwayPass, Done, LobbyCore, LobbyEffect, done};
use crate::Name;
use crate::challenges::{ChallengeId, Terms};
use crate::clock::Moment;
use crate::refusal::Refusal;

/// A word for the other node of a challenge across.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FarNote {
    /// The node it is for.
    pub node: String,
    pub word: FarWord,
}

/// What one node of a challenge across tells the other. Both name the
/// challenge by the challenger's number.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FarWord {
    /// To the challenged's node: the challenger withdrew challenge `id`,
    /// went offline (`cancelled`), or it lapsed there.
    Withdrawn {
        id: ChallengeId,
        reason: DeclineReason,
    },
    /// To the challenger's node: challenge `id` will not be a game: the
    /// challenged declined it, went offline, or it lapsed there.
    Declined {
        id: ChallengeId,
        reason: DeclineReason,
    },
}

/// How an `ACCEPT` goes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AcceptRoute {
    /// Both players are here.
    Here,
    /// The challenger is on `node`, where the challenge is numbered `id`:
    /// that node takes its side out first.
    Through {
        node: String,
        id: ChallengeId,
        challenger: Name,
    },
}

fn same(a: &str, b: &str) -> bool {
    a.eq_ignore_ascii_case(b)
}

// ---- the challenger's node ----

impl<R: Clone> LobbyCore<R> {
    /// Whether `from` may challenge `to`, online on another node, for a
    /// rated game if `rated`: what this node checks (that node checks
    /// `to`). Nothing changes.
    pub fn may_challenge_far(&self, from: &Name, to: &str, rated: bool) -> Result<(), Refusal> {
        self.logged_in(from)?;
        self.check_free(from)?;
        if rated && !self.is_member(from) {
            return Err(Refusal::RatedForMembers);
        }
        self.challenges.check(from, to, true)
    }

    /// `CHALLENGE` from `from` to `to`, online on `node`: open here until
    /// `timeout` from `now`, for `node` to be told of. The answer is its
    /// number and how `from` logged in (what seats it on `node`).
    pub fn challenge_far(
        &mut self,
        (from, to, node): (&Name, &str, &str),
        terms: Terms,
        (now, timeout): (Moment, Duration),
    ) -> Result<(ChallengeId, AwayPass), Refusal> {
        self.may_challenge_far(from, to, terms.rated)?;
        let pass = self.pass_of(from).ok_or(Refusal::NotLoggedIn)?;
        let across = Some(Across::To(node.to_string()));
        let to = Name::from(to);
        let made = (self.challenges).challenge((from, &to), true, terms, (now, timeout), across)?;
        Ok((made.id, pass))
    }

    /// How `name`, logged in here, would be seated on another node.
    fn pass_of(&self, name: &str) -> Option<AwayPass> {
        let person = self.people.get(&super::Caseless(name))?;
        person.conn?;
        Some(AwayPass {
            secret: person.secret,
            member: person.member,
            marks: person.marks,
        })
    }

    /// The challenged's node refused challenge `id` (made here to a player
    /// there), or did not answer: it goes without a word, its challenger
    /// hearing the refusal as `CHALLENGE`'s answer. That node hears it is
    /// withdrawn, in case it took it after all.
    pub fn far_challenge_refused(&mut self, id: ChallengeId) {
        let taken = (self.challenges).take_where(|c| c.id == id && is_to(c).is_some());
        if let Some(challenge) = taken {
            self.note_across(&challenge, DeclineReason::Cancelled);
        }
    }

    /// The challenged's node `node` accepts challenge `id` (this node's
    /// number): its challenger is taken out, and takes no other seat until
    /// that node made the game or did not ([`LobbyCore::paired_away`],
    /// [`LobbyCore::release_challenger`]); an open game it made closes, and
    /// its seek goes, as for an accept on one node. The answer is the
    /// challenger. Refused, as the challenged is to hear it, if the
    /// challenge is no longer open here (withdrawn, lapsed), or its
    /// challenger is gone, is being seated in another game, or plays one.
    pub fn reserve_challenger(
        &mut self,
        node: &str,
        id: ChallengeId,
    ) -> Result<Done<Name, R>, Refusal> {
        let accepting = self.accepting.iter().find(|c| c.id == id);
        if let Some(challenge) = accepting.filter(|c| is_to(c) == Some(node)) {
            return Err(Refusal::ChallengerBusy(Name::clone(&challenge.from)));
        }
        let challenge = self.challenges.get(id);
        let from = challenge
            .filter(|c| is_to(c).is_some_and(|n| n == node))
            .map(|c| Name::clone(&c.from))
            .ok_or(Refusal::NoChallenge(id))?;
        if self.holder(&from).is_none() {
            return Err(Refusal::ChallengerGone(from));
        }
        if self
            .people
            .get(&super::Caseless(&from))
            .is_some_and(|p| p.pairing)
        {
            return Err(Refusal::ChallengerBusy(from));
        }
        if let Some(game) = self.playing(&from) {
            return Err(Refusal::Playing { name: from, game });
        }
        let challenge = self.challenges.cancel(id, &from)?;
        self.accepting.push(challenge);
        let mut effects = Vec::new();
        self.mark_taken_out(&from, &mut effects);
        done(from, effects)
    }

    /// The accept of challenge `id` by its challenged's node came to
    /// nothing there: its challenger `name` is free again, and the
    /// challenge open again if the challenger is still here.
    pub fn release_challenger(&mut self, name: &Name, id: ChallengeId) {
        self.free_taken_out(name);
        let Some(index) = self.accepting.iter().position(|c| c.id == id) else {
            return;
        };
        let challenge = self.accepting.swap_remove(index);
        if self.holder(&challenge.from).is_some() {
            self.challenges.restore(challenge);
        }
    }

    /// `name`'s challenges taken out for an accept elsewhere are settled:
    /// it sits at their game, or it went.
    pub(super) fn forget_accepting(&mut self, name: &str) -> Vec<LobbyChallenge> {
        let (gone, kept) = std::mem::take(&mut self.accepting)
            .into_iter()
            .partition(|c| same(&c.from, name));
        self.accepting = kept;
        gone
    }
}

/// The node of a challenge's challenged, if it is on another.
fn is_to(challenge: &LobbyChallenge) -> Option<&str> {
    match &challenge.across {
        Some(Across::To(node)) => Some(node),
        _ => None,
    }
}

/// The node of a challenge's challenger and its number there, if it is on
/// another.
fn is_from(challenge: &LobbyChallenge) -> Option<(&str, ChallengeId)> {
    match &challenge.across {
        Some(Across::From { node, id, .. }) => Some((node, *id)),
        _ => None,
    }
}

// ---- the challenged's node ----

impl<R: Clone> LobbyCore<R> {
    /// `from`, on `node` where the challenge is numbered `far_id` and where
    /// it logged in as `pass` says, challenges `to` here on `terms`, open
    /// until `timeout` from `now`; `to` hears `CHALLENGE`. The answer is its
    /// number here. Refused as on one node: `to` not online here, playing,
    /// a rated game with a guest, a challenge between them open already.
    pub fn challenged_from_far(
        &mut self,
        (from, node, far_id, pass): (&Name, &str, ChallengeId, AwayPass),
        to: &str,
        terms: Terms,
        (now, timeout): (Moment, Duration),
    ) -> Result<Done<ChallengeId, R>, Refusal> {
        if self.was_withdrawn(node, far_id) {
            return Err(Refusal::NoChallenge(far_id));
        }
        let to_conn = self
            .holder(to)
            .ok_or_else(|| Refusal::NotOnline(Name::from(to)))?;
        let known = self.people.get_key_value(&super::Caseless(to));
        let to = known.map_or_else(|| Name::from(to), |(key, _)| Name::clone(&key.0));
        if let Some(game) = self.playing(&to) {
            return Err(Refusal::Playing { name: to, game });
        }
        if terms.rated && !(pass.member && self.is_member(&to)) {
            return Err(Refusal::RatedForMembers);
        }
        let across = Some(Across::From {
            node: node.to_string(),
            id: far_id,
            pass,
        });
        // The challenger's node found none open between them: one here is
        // a copy whose withdrawal was lost, replaced by this one.
        let mut effects = Vec::new();
        let orphan = |c: &LobbyChallenge| {
            same(&c.from, from) && same(&c.to, &to) && is_from(c).is_some_and(|(n, _)| n == node)
        };
        if let Some(old) = self.challenges.take_where(orphan) {
            self.tell_declined(&to, old.id, from, DeclineReason::Cancelled, &mut effects);
        }
        let made = (self.challenges).challenge((from, &to), true, terms, (now, timeout), across)?;
        effects.push(LobbyEffect::Tell(to_conn, vec![challenged(made)]));
        done(made.id, effects)
    }

    /// How `ACCEPT id` from `by` goes (nothing changes): here, or through
    /// the challenger's node first. Refused as the accept itself would be.
    pub fn accept_route(&self, by: &Name, id: ChallengeId) -> Result<AcceptRoute, Refusal> {
        self.logged_in(by)?;
        let challenge = self.challenges.get(id).ok_or(Refusal::NoChallenge(id))?;
        if !same(&challenge.to, by) {
            let challenged = true;
            return Err(Refusal::NotYourChallenge { id, challenged });
        }
        match &challenge.across {
            Some(Across::From { node, id, .. }) => {
                self.check_free(by)?;
                let (node, id) = (node.clone(), *id);
                let challenger = Name::clone(&challenge.from);
                Ok(AcceptRoute::Through {
                    node,
                    id,
                    challenger,
                })
            }
            _ => Ok(AcceptRoute::Here),
        }
    }

    /// Challenge `id` is no longer open on its challenger's node (withdrawn
    /// or lapsed there, its word on the way): it goes here too, without a
    /// word to its challenged, whose `ACCEPT` hears the refusal.
    pub fn far_challenge_gone(&mut self, id: ChallengeId) {
        self.challenges.take_where(|c| c.id == id);
    }
}

/// How many withdrawals that came before their challenge a node keeps.
const WITHDRAWN_EARLY: usize = 1024;

impl<R: Clone> LobbyCore<R> {
    /// Challenge `id` of `node` was withdrawn before it arrived here (the
    /// words crossed): it is refused when it comes.
    fn withdrawn_early(&mut self, node: &str, id: ChallengeId) {
        if self.withdrawn_early.len() >= WITHDRAWN_EARLY {
            self.withdrawn_early.pop_front();
        }
        self.withdrawn_early.push_back((node.to_string(), id));
    }

    /// Whether challenge `id` of `node` was withdrawn before it came.
    fn was_withdrawn(&mut self, node: &str, id: ChallengeId) -> bool {
        let early = (self.withdrawn_early.iter()).position(|(n, i)| n == node && *i == id);
        early.and_then(|i| self.withdrawn_early.remove(i)).is_some()
    }
}

// ---- both ----

impl<R: Clone> LobbyCore<R> {
    /// Challenge `challenge` across nodes was settled here for `reason`:
    /// its other node is to hear.
    pub(super) fn note_across(&mut self, challenge: &LobbyChallenge, reason: DeclineReason) {
        let note = match &challenge.across {
            Some(Across::To(node)) => FarNote {
                node: node.clone(),
                word: FarWord::Withdrawn {
                    id: challenge.id,
                    reason,
                },
            },
            Some(Across::From { node, id, .. }) => FarNote {
                node: node.clone(),
                word: FarWord::Declined { id: *id, reason },
            },
            None => return,
        };
        self.far_notes.push(note);
    }

    /// What the other nodes of challenges across are to hear, in order.
    pub fn far_notes(&mut self) -> Vec<FarNote> {
        std::mem::take(&mut self.far_notes)
    }

    /// `word` from node `node` about a challenge across: its player here
    /// hears `DECLINED`. A challenge no longer open here is not heard of.
    pub fn heard_from_far(&mut self, node: &str, word: FarWord) -> Vec<LobbyEffect<R>> {
        let (taken, reason) = match word {
            FarWord::Withdrawn { id, reason } => {
                let fits = |c: &LobbyChallenge| is_from(c) == Some((node, id));
                let taken = self.challenges.take_where(fits);
                if taken.is_none() {
                    self.withdrawn_early(node, id);
                }
                (taken, reason)
            }
            FarWord::Declined { id, reason } => {
                let fits = |c: &LobbyChallenge| c.id == id && is_to(c) == Some(node);
                // One being accepted there is not put back if that comes
                // to nothing.
                let accepting = self.accepting.iter().position(fits);
                let accepting = accepting.map(|i| self.accepting.swap_remove(i));
                (self.challenges.take_where(fits).or(accepting), reason)
            }
        };
        let mut effects = Vec::new();
        if let Some(challenge) = taken {
            self.tell_settled(&challenge, reason, &mut effects);
        }
        effects
    }

    /// `nodes` are gone (declared dead, or started again): the challenges
    /// across with a party there go, their players here hearing `DECLINED
    /// ... offline` (a challenged gone) or `cancelled` (a challenger gone).
    pub fn far_nodes_gone(&mut self, nodes: &[String]) -> Vec<LobbyEffect<R>> {
        let far_node = |c: &LobbyChallenge| match &c.across {
            Some(Across::To(node) | Across::From { node, .. }) => nodes.contains(node),
            None => false,
        };
        let mut effects = Vec::new();
        while let Some(challenge) = self.challenges.take_where(far_node) {
            let reason = match challenge.across {
                Some(Across::To(_)) => DeclineReason::Offline,
                _ => DeclineReason::Cancelled,
            };
            self.tell_settled(&challenge, reason, &mut effects);
        }
        effects
    }

    /// Tells the party here of a challenge across, settled by the other
    /// node for `reason`, `DECLINED`.
    fn tell_settled(
        &self,
        challenge: &LobbyChallenge,
        reason: DeclineReason,
        effects: &mut Vec<LobbyEffect<R>>,
    ) {
        let (here, there) = match &challenge.across {
            Some(Across::To(_)) => (&challenge.from, &challenge.to),
            _ => (&challenge.to, &challenge.from),
        };
        self.tell_declined(here, challenge.id, there, reason, effects);
    }
}
