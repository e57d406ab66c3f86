//! The lobby actor's side of challenges between players of two nodes: the
//! core decides (`rules::lobby::Across`), the bus carries the words
//! (`remote::challenging`), this carries out each side's part: a challenge
//! made to a name online on another node, one made here from another node,
//! their words, and an `ACCEPT` that has the challenger's node take its
//! player out before the game is made here.

use std::sync::Arc;

use actix::fut::{ActorFutureExt, WrapFuture};
use actix::{AsyncContext, Context, Handler, ResponseFuture};
use flipline::protocol::{ErrorCode, ProtocolError, StartSpec};
use tokio::sync::oneshot;

use super::challenging::{ChallengeReply, touching_challenge};
use super::{Lobby, Waits, answered, coin, touching};
use crate::messages::{
    ChallengeAnswer, ChallengedFromFar, FarChallengeWord, FarNodesGone, ReachNodes,
    ReleaseChallenger, ReserveChallenger,
};
use crate::rules::Name;
use crate::rules::challenges::{ChallengeId, Terms};
use crate::rules::lobby::start_plan;
use crate::rules::refusal::Refusal;
use crate::service_time;

impl Lobby {
    /// Tells the other nodes of challenges across what was settled here.
    pub(super) fn tell_far(&mut self) {
        let notes = self.core.far_notes();
        if let Some(far) = &self.far {
            for note in notes {
                far.note(note);
            }
        }
    }

    /// `CHALLENGE` from `name` to `to`, not online here: on another node
    /// if the cluster's names say so (else refused as here).
    pub(super) fn challenge_elsewhere(
        &mut self,
        ctx: &mut Context<Self>,
        (name, to): (Name, String),
        (terms, start): (Terms, StartSpec),
        reply: ChallengeReply,
    ) {
        let node = self.services.store.name_node(to.clone());
        ctx.spawn(node.into_actor(self).map(move |node, act, ctx| {
            let waits = touching_challenge(Name::clone(&name), None);
            act.when_free(ctx, waits, move |act, ctx| match node {
                Ok(Some(node)) if act.core.holder(&to).is_none() => {
                    act.challenge_far(ctx, (name, to, node), (terms, start), reply);
                }
                Ok(_) => act.challenge_here(ctx, (name, to), (terms, start), reply),
                Err(error) => {
                    tracing::warn!(%error, "the cluster's names online could not be read");
                    let _ = reply.send(Err(Refusal::NamesUnreachable.into()));
                }
            });
        }));
    }

    /// `CHALLENGE` from `name` to `to`, online on `node`: checked here,
    /// its start drawn if random, then told to that node.
    fn challenge_far(
        &mut self,
        ctx: &mut Context<Self>,
        (name, to, node): (Name, String, String),
        (terms, start): (Terms, StartSpec),
        reply: ChallengeReply,
    ) {
        let checked = self.core.may_challenge_far(&name, &to, terms.rated);
        let planned = checked.and_then(|()| start_plan(terms.variant, &start));
        self.challenge_planned(ctx, planned, (name, to, Some(node)), terms, reply);
    }

    /// Opens the challenge of `name` to `to` on `node` here and tells that
    /// node: `name` hears its answer.
    pub(super) fn send_far_challenge(
        &mut self,
        ctx: &mut Context<Self>,
        (name, to, node): (Name, String, String),
        terms: Terms,
        reply: ChallengeReply,
    ) {
        let Some(far) = self.far.clone() else {
            let _ = reply.send(Err(Refusal::NotOnlineWho(Name::from(to.as_str())).into()));
            return;
        };
        let timeout = self.challenge_timeout();
        let made = (self.core).challenge_far((&name, &to, &node), terms.clone(), timeout);
        let (id, pass) = match made {
            Ok(made) => made,
            Err(refused) => {
                let _ = reply.send(Err(refused.into()));
                return;
            }
        };
        self.arm_challenge_expiry(ctx);
        let told = far.challenge((&node, id), (&name, pass), &to, &terms);
        ctx.spawn(told.into_actor(self).map(move |told, act, _| {
            let answer = match told {
                Ok(()) => Ok(ChallengeAnswer::Made(id)),
                Err(e) => {
                    act.core.far_challenge_refused(id);
                    act.tell_far();
                    Err(e)
                }
            };
            let _ = reply.send(answer);
        }));
    }

    /// `ACCEPT id` from `name` of a challenge whose challenger is on
    /// `node` (its number there `far_id`): that node takes the challenger
    /// out, then the game is made here, and that node hears either way.
    pub(super) fn accept_through(
        &mut self,
        ctx: &mut Context<Self>,
        (name, id): (Name, ChallengeId),
        (node, far_id, challenger): (String, ChallengeId, Name),
        reply: ChallengeReply,
    ) {
        let Some(far) = self.far.clone() else {
            let _ = reply.send(Err(Refusal::ChallengerGone(challenger).into()));
            return;
        };
        let reserved = far.reserve(&node, far_id);
        ctx.spawn(reserved.into_actor(self).map(move |reserved, act, ctx| {
            let pairing = match reserved {
                Ok(pairing) => pairing,
                Err(e) => return act.not_reserved(id, e, reply),
            };
            let waits = touching_challenge(Name::clone(&name), Some(id));
            act.when_free(ctx, waits, move |act, ctx| {
                let numbers = &mut act.numbers;
                let decided = act.core.accept(&name, id, || numbers.take(), coin());
                let (made, outcome) = oneshot::channel();
                // Made once stored: the challenger's node hears the game
                // even if this session's seat is gone meanwhile.
                act.conclude(ctx, decided, made, |act, game| Ok((game, act.route(game))));
                ctx.spawn(outcome.into_actor(act).map(move |outcome, _, _| {
                    let outcome = outcome.unwrap_or_else(|_| Err(Refusal::NotSaved.into()));
                    let game = outcome.as_ref().ok().map(|(game, _)| *game);
                    far.settle(&node, pairing, &challenger, game);
                    let answer = outcome.and_then(|(_, seat)| Ok(ChallengeAnswer::Seat(seat?)));
                    let _ = reply.send(answer);
                }));
            });
        }));
    }

    /// The challenger's node refused to take its player out: a challenge
    /// no longer open there goes here too (the words of that node's number
    /// would not be this one's).
    fn not_reserved(&mut self, id: ChallengeId, refused: ProtocolError, reply: ChallengeReply) {
        let refused = match refused.code {
            ErrorCode::NotFound => {
                self.core.far_challenge_gone(id);
                Refusal::NoChallenge(id).into()
            }
            _ => refused,
        };
        let _ = reply.send(Err(refused));
    }

    /// When a challenge made now lapses: now and the timeout.
    pub(super) fn challenge_timeout(&self) -> (crate::rules::clock::Moment, std::time::Duration) {
        let timeout = self.services.config.challenge_timeout_secs;
        (service_time::now(), std::time::Duration::from_secs(timeout))
    }
}

impl Handler<ReachNodes> for Lobby {
    type Result = ();

    fn handle(&mut self, msg: ReachNodes, _: &mut Context<Self>) {
        self.far = Some(msg.0);
    }
}

impl Handler<ChallengedFromFar> for Lobby {
    type Result = ResponseFuture<Result<ChallengeId, ProtocolError>>;

    fn handle(&mut self, msg: ChallengedFromFar, ctx: &mut Context<Self>) -> Self::Result {
        let (reply, answer) = oneshot::channel();
        let to = Name::from(msg.to.as_str());
        self.when_free(ctx, touching(Some(to), None), move |act, ctx| {
            let ChallengedFromFar {
                node,
                id,
                from,
                pass,
                to,
                terms,
            } = msg;
            let far = (&from, node.as_str(), id, pass);
            let timeout = act.challenge_timeout();
            let decided = act.core.challenged_from_far(far, &to, terms, timeout);
            act.conclude(ctx, decided, reply, |_, id| Ok(id));
            act.arm_challenge_expiry(ctx);
        });
        answered(answer)
    }
}

impl Handler<FarChallengeWord> for Lobby {
    type Result = ();

    fn handle(&mut self, msg: FarChallengeWord, _: &mut Context<Self>) {
        let effects = self.core.heard_from_far(&msg.node, msg.word);
        self.carry_out_all(effects);
    }
}

impl Handler<ReserveChallenger> for Lobby {
    type Result = ResponseFuture<Result<Name, ProtocolError>>;

    fn handle(&mut self, msg: ReserveChallenger, ctx: &mut Context<Self>) -> Self::Result {
        let (reply, answer) = oneshot::channel();
        let id = msg.id;
        let waits: Waits = Box::new(move |core| {
            let parties = core.challenge_parties(id);
            (parties.iter().flatten()).find_map(|party| core.waits_for(Some(party), None))
        });
        self.when_free(ctx, waits, move |act, ctx| {
            let reserved = act.core.reserve_challenger(&msg.node, msg.id);
            act.conclude(ctx, reserved, reply, |_, name| Ok(name));
        });
        answered(answer)
    }
}

impl Handler<ReleaseChallenger> for Lobby {
    type Result = ();

    fn handle(&mut self, msg: ReleaseChallenger, ctx: &mut Context<Self>) {
        let name = msg.name.clone();
        self.when_free(ctx, touching(Some(name), None), move |act, ctx| {
            act.core.release_challenger(&msg.name, msg.id);
            act.arm_challenge_expiry(ctx);
        });
    }
}

impl Handler<FarNodesGone> for Lobby {
    type Result = ();

    fn handle(&mut self, msg: FarNodesGone, _: &mut Context<Self>) {
        let effects = self.core.far_nodes_gone(&msg.0);
        self.carry_out_all(effects);
    }
}

/// The lobby's way to other nodes for challenges, once it has a bus.
pub(super) type FarLink = Option<Arc<dyn crate::messages::FarLobby>>;
