//! The lobby actor's side of challenges: the core decides
//! (`rules::lobby`), this carries it out, and wakes the lobby when the
//! next open challenge lapses.

use std::time::Duration;

use actix::fut::{ActorFutureExt, WrapFuture};
use actix::{AsyncContext, Context, Handler, ResponseFuture};
use flipline::protocol::ProtocolError;
use tokio::sync::oneshot;

use super::{Lobby, Reply, Waits, answered, coin};
use crate::messages::{ChallengeAnswer, ChallengeOp, ChallengeStep};
use crate::rules::Name;
use crate::rules::challenges::{ChallengeId, Terms};
use crate::rules::lobby::{StartPlan, no_random_start};
use crate::service_time;
use crate::session::SessionRef;

/// Work on challenge `id` from `name`: it touches both parties, so it waits
/// for a held decision of either.
fn touching_challenge(name: Name, id: Option<ChallengeId>) -> Waits {
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
                    match act.core.challenge_start(&name, &to, &terms, &start) {
                        Err(refused) => {
                            let _ = reply.send(Err(refused.into()));
                        }
                        Ok(StartPlan::Ready(moves)) => {
                            let terms = Terms {
                                start: moves,
                                ..terms
                            };
                            act.make_challenge(ctx, name, &to, terms, reply);
                        }
                        Ok(StartPlan::Draw(plies)) => {
                            act.draw_for_challenge(ctx, name, to, terms, plies, reply);
                        }
                    }
                }
                ChallengeStep::Accept(id) => {
                    let numbers = &mut act.numbers;
                    let decided = act.core.accept(&name, id, || numbers.take(), coin());
                    act.conclude(ctx, decided, reply, |act, game| {
                        act.route(game).map(ChallengeAnswer::Seat)
                    });
                }
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
type ChallengeReply = Reply<ChallengeAnswer<SessionRef>>;

impl Lobby {
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
        let timeout = Duration::from_secs(self.services.config.challenge_timeout_secs);
        let now = service_time::now();
        let decided = self.core.challenge(&name, to, terms, now, timeout);
        self.conclude(ctx, decided, reply, |_, id| Ok(ChallengeAnswer::Made(id)));
        self.arm_challenge_expiry(ctx);
    }

    /// Draws a random start of `plies` moves on the engine pool, then
    /// decides the challenge from it (once nothing it touches is held).
    fn draw_for_challenge(
        &mut self,
        ctx: &mut Context<Self>,
        name: Name,
        to: String,
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
                act.make_challenge(ctx, name, &to, terms, reply);
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
            act.arm_challenge_expiry(ctx);
        });
    }
}
