//! The lobby's way to the other nodes (`messages::FarLobby`), over the
//! bus: challenges across nodes (`challenging`), and players of other
//! nodes taken out for a game made here (a tournament's round), each such
//! game then settled with their node as a pairing is (`pairing`).

use std::sync::{Arc, Weak};

use flipline::protocol::{CommandKind, ErrorCode, GameId, ProtocolError, TourneyCommand};

use super::Remote;
use crate::bus::{Body, FarPass, FarTerms};
use crate::messages::{AwayPass, FarAnswer, FarLobby, Name, TourneyAnswer};
use crate::random::random_u64;
use crate::rules::challenges::{ChallengeId, Terms};
use crate::rules::lobby::{FarNote, FarWord};

/// The lobby's way to the other nodes: weakly, so that the bus stops
/// with the [`Remote`].
pub struct LobbyLink(Weak<Remote>);

impl LobbyLink {
    pub fn new(remote: &Arc<Remote>) -> LobbyLink {
        LobbyLink(Arc::downgrade(remote))
    }

    fn remote(&self) -> Result<Arc<Remote>, ProtocolError> {
        let stopping = || ProtocolError::new(ErrorCode::Unavailable, "the daemon is stopping");
        self.0.upgrade().ok_or_else(stopping)
    }
}

impl FarLobby for LobbyLink {
    fn challenge(
        &self,
        (node, id): (&str, ChallengeId),
        (from, pass): (&Name, AwayPass),
        to: &str,
        terms: &Terms,
    ) -> FarAnswer<()> {
        let remote = self.remote();
        let node = node.to_string();
        let body = |request| Body::Challenge {
            request,
            id,
            pass: FarPass::of(from, pass),
            to: to.to_string(),
            terms: FarTerms::of(terms),
        };
        let asked = remote.map(|remote| (remote.ask(&node, body), remote));
        Box::pin(async move {
            let (answer, remote) = asked?;
            remote
                .answer_of(&node, CommandKind::Challenge, answer)
                .await?;
            Ok(())
        })
    }

    fn note(&self, note: FarNote) {
        let Ok(remote) = self.remote() else {
            return;
        };
        let (id, withdrawn, reason) = match note.word {
            FarWord::Withdrawn { id, reason } => (id, true, reason),
            FarWord::Declined { id, reason } => (id, false, reason),
        };
        let reason = reason.word().to_string();
        let body = Body::ChallengeWord {
            id,
            withdrawn,
            reason,
        };
        remote.bus.send(&note.node, body);
    }

    fn reserve(&self, node: &str, id: ChallengeId) -> FarAnswer<u64> {
        self.take_out_as(node, move |request, pairing| Body::Accepting {
            request,
            id,
            pairing,
        })
    }

    fn take_out(&self, node: &str, name: &Name) -> FarAnswer<u64> {
        let name = name.to_string();
        self.take_out_as(node, move |request, pairing| Body::TakeOut {
            request,
            name,
            pairing,
        })
    }

    fn tourney(&self, op: TourneyCommand, member: Option<Name>) -> FarAnswer<TourneyAnswer> {
        let remote = self.remote();
        Box::pin(async move { remote?.far_tourney(op, member).await })
    }

    fn tell(&self, node: &str, name: &Name, text: String) {
        if let Ok(remote) = self.remote() {
            let name = name.to_string();
            remote.bus.send(node, Body::TellName { name, text });
        }
    }

    fn settle(&self, node: &str, pairing: u64, player: &Name, game: Option<GameId>) {
        let Ok(remote) = self.remote() else {
            return;
        };
        remote.made(pairing, game);
        let name = player.to_string();
        let body = match game {
            Some(game) => Body::Paired {
                pairing,
                conn: 0,
                name,
                game,
            },
            None => Body::Unpaired { pairing, name },
        };
        remote.bus.send(node, body);
    }
}

impl LobbyLink {
    /// Has `node` take a player out for a game made here, by the request
    /// `body` makes of a request and a pairing number: the pairing, noted
    /// as being made before that node hears, so that its questions wait
    /// for the outcome.
    fn take_out_as(
        &self,
        node: &str,
        body: impl FnOnce(u64, u64) -> Body + Send + 'static,
    ) -> FarAnswer<u64> {
        let remote = self.remote();
        let node = node.to_string();
        Box::pin(async move {
            let remote = remote?;
            let pairing = random_u64();
            remote.to_make(pairing);
            let answer = remote.ask(&node, |request| body(request, pairing));
            match remote.answer_of(&node, CommandKind::Seek, answer).await {
                Ok(_) => Ok(pairing),
                Err(e) => {
                    remote.made(pairing, None);
                    Err(e)
                }
            }
        })
    }
}
