//! The lobby actor's side of challenges: the core decides
//! (`rules::lobby`), this carries it out, and wakes the lobby when the
//! next open challenge lapses.

use actix::fut::{ActorFutureExt, WrapFuture};
use actix::{AsyncContext, Context, Handler, ResponseFuture};
use flipline::protocol::{ProtocolError, StartSpec};
use tokio::sync::oneshot;

use super::{Lobby, Reply, Waits, answered, coin};
use crate::messages::{ChallengeAnswer, ChallengeOp, ChallengeStep};
use crate::rules::Name;
use crate::rules::challenges::{ChallengeId, Terms};
use crate::rules::lobby::{AcceptRoute, StartPlan, no_random_start};
use crate::rules::refusal::Refusal;
use crate::service_time;
use crate::session::SessionRef;

/// Work on challenge `id` from `name`: it touches both parties, so it waits
/// for a held decision of either.
pub(super) fn touching_challenge(name: Name, id: Option<ChallengeId>) -> Waits {
    Box::new(move |core| {
        let other = id.and_then(|id| core.challenge_parties(id));
        core.waits_for(Some(&name), None).or_else(|| {
            other
                .iter()
                .flatten()
                .find_map(|party| core.waits_for(Some(party), None))
        })
    })
}

impl Handler<ChallengeOp<SessionRef>> for Lobby {
    type Result = ResponseFuture<Result<ChallengeAnswer<SessionRef>, ProtocolError>>;

    fn handle(&mut self, msg: ChallengeOp<SessionRef>, ctx: &mut Context<Self>) -> Self::Result {
        let (reply, answer) = oneshot::channel();
        let id = match &msg.op {
            ChallengeStep::Make(..) => None,
            ChallengeStep::Accept(id)
            | ChallengeStep::Decline(id, _)
            | ChallengeStep::Cancel(id) => Some(*id),
        };
        let waits = touching_challenge(Name::clone(&msg.name), id);
        self.when_free(ctx, waits, move |act, ctx| {
            let ChallengeOp { name, op, .. } = msg;
            match op {
                ChallengeStep::Make(to, terms, start) => {
                    let far = act.far.is_some() && act.core.holder(&to).is_none();
                    let who = (name, to);
                    match far && !who.0.eq_ignore_ascii_case(&who.1) {
                        true => act.challenge_elsewhere(ctx, who, (terms, start), reply),
                        false => act.challenge_here(ctx, who, (terms, start), reply),
                    }
                }
                ChallengeStep::Accept(id) => match act.core.accept_route(&name, id) {
                    Ok(AcceptRoute::Through {
                        node,
                        id: far_id,
                        challenger,
                    }) => act.accept_through(ctx, (name, id), (node, far_id, challenger), reply),
                    _ => {
                        let numbers = &mut act.numbers;
                        let decided = act.core.accept(&name, id, || numbers.take(), coin());
                        act.conclude(ctx, decided, reply, |act, game| {
                            act.route(game).map(ChallengeAnswer::Seat)
                        });
                    }
                },
                ChallengeStep::Decline(id, reason) => {
                    let decided = act.core.decline(&name, id, reason);
                    act.conclude(ctx, decided, reply, |_, ()| Ok(ChallengeAnswer::Done));
                }
                ChallengeStep::Cancel(id) => {
                    let decided = act.core.cancel_challenge(&name, id);
                    act.conclude(ctx, decided, reply, |_, ()| Ok(ChallengeAnswer::Done));
                }
            }
        });
        answered(answer)
    }
}

/// Where a challenge step's answer goes.
pub(super) type ChallengeReply = Reply<ChallengeAnswer<SessionRef>>;

impl Lobby {
    /// `CHALLENGE` from `name` to `to`, online here (or nowhere: refused).
    pub(super) fn challenge_here(
        &mut self,
        ctx: &mut Context<Self>,
        (name, to): (Name, String),
        (terms, start): (Terms, StartSpec),
        reply: ChallengeReply,
    ) {
        let planned = self.core.challenge_start(&name, &to, &terms, &start);
        self.challenge_planned(ctx, planned, (name, to, None), terms, reply);
    }

    /// A challenge whose start is `planned`: opened once its start is ready
    /// (drawn first, if random), here or, for a player on a node, with it.
    pub(super) fn challenge_planned(
        &mut self,
        ctx: &mut Context<Self>,
        planned: Result<StartPlan, Refusal>,
        who: (Name, String, Option<String>),
        terms: Terms,
        reply: ChallengeReply,
    ) {
        match planned {
            Err(refused) => {
                let _ = reply.send(Err(refused.into()));
            }
            Ok(StartPlan::Ready(moves)) => {
                let terms = Terms {
                    start: moves,
                    ..terms
                };
                self.open_challenge(ctx, who, terms, reply);
            }
            Ok(StartPlan::Draw(plies)) => self.draw_for_challenge(ctx, who, terms, plies, reply),
        }
    }

    /// Opens the challenge of `name` to `to`, its start ready: here, or
    /// with `node`, where `to` is online.
    fn open_challenge(
        &mut self,
        ctx: &mut Context<Self>,
        (name, to, node): (Name, String, Option<String>),
        terms: Terms,
        reply: ChallengeReply,
    ) {
        match node {
            Some(node) => self.send_far_challenge(ctx, (name, to, node), terms, reply),
            None => self.make_challenge(ctx, name, &to, terms, reply),
        }
    }

    /// `CHALLENGE` on `terms`, its start ready: decided, open until the
    /// timeout.
    fn make_challenge(
        &mut self,
        ctx: &mut Context<Self>,
        name: Name,
        to: &str,
        terms: Terms,
        reply: ChallengeReply,
    ) {
        let (now, timeout) = self.challenge_timeout();
        let decided = self.core.challenge(&name, to, terms, now, timeout);
        self.conclude(ctx, decided, reply, |_, id| Ok(ChallengeAnswer::Made(id)));
        self.arm_challenge_expiry(ctx);
    }

    /// Draws a random start of `plies` moves on the engine pool, then
    /// decides the challenge from it (once nothing it touches is held),
    /// here or, for a player on `node`, with that node.
    fn draw_for_challenge(
        &mut self,
        ctx: &mut Context<Self>,
        (name, to, node): (Name, String, Option<String>),
        terms: Terms,
        plies: u8,
        reply: ChallengeReply,
    ) {
        let variant = terms.variant;
        let request = self.draw_start(variant, plies);
        ctx.spawn(request.into_actor(self).map(move |drawn, act, ctx| {
            let Some(moves) = drawn else {
                let _ = reply.send(Err(no_random_start(variant, plies).into()));
                return;
            };
            let waits = touching_challenge(Name::clone(&name), None);
            act.when_free(ctx, waits, move |act, ctx| {
                let terms = Terms {
                    start: moves,
                    ..terms
                };
                act.open_challenge(ctx, (name, to, node), terms, reply);
            });
        }));
    }

    /// Wakes the lobby when the next open challenge lapses, unless it is
    /// woken already (challenges lapse in the order they were made, all
    /// after the same timeout, so the wake-up set is never too late).
    pub(super) fn arm_challenge_expiry(&mut self, ctx: &mut Context<Self>) {
        if self.expiry_armed {
            return;
        }
        let Some(at) = self.core.next_challenge_expiry() else {
            return;
        };
        self.expiry_armed = true;
        let wait = at.saturating_duration_since(service_time::now());
        ctx.run_later(wait, |act, ctx| {
            act.expiry_armed = false;
            let effects = act.core.expire_challenges(service_time::now());
            act.carry_out_all(effects);
            act.tell_far();
            act.arm_challenge_expiry(ctx);
        });
    }
}
