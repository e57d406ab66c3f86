//! Challenges between players of two nodes, over the bus. The lobbies
//! decide (`rules::lobby::Across`); this carries their words:
//!
//! - the challenger's node tells the challenged's of a challenge
//!   (`Challenge`), and the challenger hears that node's answer as
//!   `CHALLENGE`'s;
//! - each tells the other what it settled (`ChallengeWord`): withdrawn,
//!   declined, lapsed, its player gone;
//! - an `ACCEPT` has the challenger's node take its player out first
//!   (`Accepting`), as the leader has a seek taken out for a pairing; the
//!   challenged's node then makes the game and alone settles the pairing
//!   with the challenger's node (`Paired`, `Unpaired`, `AskPairing`: see
//!   `pairing`).

use std::sync::Arc;

use flipline::Variant;
use flipline::protocol::{
    ClockSpec, CommandKind, DeclineReason, ErrorCode, ProtocolError, Reply, SeatChoice,
};

use super::pairing::{Reservation, Reserved};
use super::seats::stopping;
use super::{ANSWER_WITHIN, RawAnswer, Remote, answered, lock};
use crate::bus::{Body, FarPass, FarTerms};
use crate::messages::{
    Answer, ChallengedFromFar, FarChallengeWord, Name, ReserveChallenger, TakeOut,
};
use crate::rules::challenges::{ChallengeId, Terms};
use crate::rules::lobby::FarWord;

impl FarTerms {
    /// `terms` on the bus.
    pub fn of(terms: &Terms) -> FarTerms {
        FarTerms {
            variant: terms.variant.to_string(),
            side: match terms.side {
                SeatChoice::Black => 0,
                SeatChoice::White => 1,
                SeatChoice::Random => 2,
            },
            clock: terms.clock.map(|c| (c.base_ms, c.increment_ms)),
            rated: terms.rated,
            start: terms.start.iter().map(ToString::to_string).collect(),
        }
    }

    /// The terms, if they read.
    pub fn terms(&self) -> Option<Terms> {
        let variant: Variant = self.variant.parse().ok()?;
        let side = match self.side {
            0 => SeatChoice::Black,
            1 => SeatChoice::White,
            2 => SeatChoice::Random,
            _ => return None,
        };
        let start = self.start.iter().map(|m| m.parse().ok());
        Some(Terms {
            variant,
            side,
            clock: self.clock.map(|(base_ms, increment_ms)| ClockSpec {
                base_ms,
                increment_ms,
            }),
            rated: self.rated,
            start: start.collect::<Option<Vec<_>>>()?,
        })
    }
}

fn unreadable(what: &str) -> ProtocolError {
    ProtocolError::new(ErrorCode::BadRequest, format!("{what} that does not read"))
}

/// `node`'s answer to a request of a command of `kind`, waited for at most
/// [`ANSWER_WITHIN`].
async fn node_answer(
    node: &str,
    kind: CommandKind,
    answer: tokio::sync::oneshot::Receiver<RawAnswer>,
) -> Result<Answer, ProtocolError> {
    match tokio::time::timeout(ANSWER_WITHIN, answer).await {
        Ok(Ok(raw)) => answered(kind, raw),
        _ => Err(ProtocolError::new(
            ErrorCode::Unavailable,
            format!("node {node} did not answer in time, try again"),
        )),
    }
}

impl Remote {
    /// Sends `node` the request `body` makes of a request number: its
    /// answer to come.
    pub(super) fn ask(
        &self,
        node: &str,
        body: impl FnOnce(u64) -> Body,
    ) -> (u64, tokio::sync::oneshot::Receiver<RawAnswer>) {
        let (request, answer) = self.pending_request();
        self.bus.send(node, body(request));
        (request, answer)
    }

    /// The answer to request `request` of `node`, forgotten if none came.
    pub(super) async fn answer_of(
        &self,
        node: &str,
        kind: CommandKind,
        (request, answer): (u64, tokio::sync::oneshot::Receiver<RawAnswer>),
    ) -> Result<Answer, ProtocolError> {
        let answered = node_answer(node, kind, answer).await;
        if answered.is_err() {
            lock(&self.pending).remove(&request);
        }
        answered
    }

    /// The challenged's node: `from`'s player `pass` challenges `to` here
    /// on `terms`, its number there `id`.
    pub(super) async fn challenged(
        self: Arc<Self>,
        from: String,
        (request, id): (u64, ChallengeId),
        pass: FarPass,
        to: String,
        terms: FarTerms,
    ) {
        let result = match terms.terms() {
            Some(terms) => {
                let challenge = ChallengedFromFar {
                    node: from.clone(),
                    id,
                    from: Name::from(pass.name.as_str()),
                    pass: pass.away_pass(),
                    to,
                    terms,
                };
                let made = self.doors.challenged.send(challenge).await;
                made.map_err(stopping).and_then(|made| made)
            }
            None => Err(unreadable("a challenge's terms")),
        };
        let answer = result.map(|id| Answer::ok(Reply::Challenge(id)));
        self.answer(&from, request, answer);
    }

    /// Word from `from` about challenge `id` (its challenger's number).
    pub(super) fn challenge_word(
        &self,
        from: String,
        id: ChallengeId,
        withdrawn: bool,
        reason: &str,
    ) {
        let Some(reason) = DeclineReason::from_word(reason) else {
            tracing::warn!(
                from,
                reason,
                "a challenge's word from another node does not read"
            );
            return;
        };
        let word = match withdrawn {
            true => FarWord::Withdrawn { id, reason },
            false => FarWord::Declined { id, reason },
        };
        let node = from;
        self.doors
            .challenge_word
            .do_send(FarChallengeWord { node, word });
    }

    /// The challenger's node: `from` accepts challenge `id` there, for
    /// pairing `pairing`, whose game it makes: the challenger here is
    /// taken out until `from` settles it.
    pub(super) async fn accepting(
        self: Arc<Self>,
        from: String,
        request: u64,
        id: ChallengeId,
        pairing: u64,
    ) {
        let reserve = ReserveChallenger {
            node: from.clone(),
            id,
        };
        let reserved = self.doors.reserve_challenger.send(reserve).await;
        let reserved = reserved.map_err(stopping).and_then(|r| r);
        if let Ok(name) = &reserved {
            let reservation = Reservation {
                name: name.to_string(),
                what: Reserved::Challenge(id),
                maker: from.clone(),
            };
            self.reserved_for(pairing, reservation);
        }
        let answer = reserved.map(|_| Answer::ok(Reply::Seeking));
        self.answer(&from, request, answer);
    }
}

impl Remote {
    /// The player's node: `from` makes a game with `name` here (a
    /// tournament's round), settled as pairing `pairing`: it is taken out
    /// until `from` settles it.
    pub(super) async fn taken_out(
        self: Arc<Self>,
        from: String,
        request: u64,
        name: String,
        pairing: u64,
    ) {
        let take = TakeOut {
            name: Name::from(name.as_str()),
        };
        let taken = self.doors.take_out.send(take).await;
        let taken = taken.map_err(stopping).and_then(|t| t);
        if taken.is_ok() {
            let reservation = Reservation {
                name,
                what: Reserved::Player,
                maker: from.clone(),
            };
            self.reserved_for(pairing, reservation);
        }
        self.answer(&from, request, taken.map(|()| Answer::ok(Reply::Seeking)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_challenge_s_terms_read_back_as_they_were_sent() {
        let terms = Terms {
            variant: Variant::Reversi,
            side: SeatChoice::White,
            clock: Some(ClockSpec {
                base_ms: 300_000,
                increment_ms: 3_000,
            }),
            rated: true,
            start: ["d3", "c5"].iter().filter_map(|m| m.parse().ok()).collect(),
        };
        assert_eq!(terms.start.len(), 2);
        assert_eq!(FarTerms::of(&terms).terms(), Some(terms.clone()));
        let mut bad = FarTerms::of(&terms);
        bad.side = 7;
        assert_eq!(bad.terms(), None);
        let mut bad = FarTerms::of(&terms);
        bad.start.push("z9".into());
        assert_eq!(bad.terms(), None);
    }
}
