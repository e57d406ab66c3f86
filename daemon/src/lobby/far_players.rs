//! Players of two nodes in one game made here or there, beyond seeks and
//! challenges: a tournament's round game with a player of another node
//! (taken out there first, its seat held here, its node told what came of
//! it), a player here taken out for another node's game, and the lines a
//! tournament here has for a player there.

use actix::fut::{ActorFutureExt, WrapFuture};
use actix::{AsyncContext, Context, Handler, ResponseFuture};
use flipline::protocol::ProtocolError;
use tokio::sync::oneshot;

use super::tourneys::Settle;
use super::{Lobby, answered, touching};
use crate::messages::{FreeTakenOut, Name, TakeOut, TellName};
use crate::rules::lobby::TourneyTerms;
use crate::rules::tourney::Pairing;

impl Lobby {
    /// A round's game whose players `far` are not online here: each is
    /// looked up in the cluster's names online and taken out on its node;
    /// one that is not there or not free loses the game as absent (and the
    /// others taken out are let go).
    pub(super) fn make_far_tourney_game(
        &mut self,
        ctx: &mut Context<Self>,
        pairing: Pairing,
        terms: TourneyTerms,
        far: [bool; 2],
    ) {
        let Some(link) = self.far.clone() else {
            return;
        };
        let store = self.services.store.clone();
        let names = [Name::clone(&pairing.black), Name::clone(&pairing.white)];
        let far_names: Vec<Name> = (names.into_iter().zip(far))
            .filter_map(|(name, far)| far.then_some(name))
            .collect();
        let asker = std::sync::Arc::clone(&link);
        let taking = async move {
            let (mut taken, mut absent) = (Vec::new(), Vec::new());
            for name in far_names {
                let node = store.name_node(name.to_string()).await.ok().flatten();
                let out = match &node {
                    Some(node) => asker.take_out(node, &name).await.ok(),
                    None => None,
                };
                match (node, out) {
                    (Some(node), Some(pairing)) => taken.push((node, pairing, name)),
                    _ => absent.push(name),
                }
            }
            (taken, absent)
        };
        ctx.spawn(
            taking
                .into_actor(self)
                .map(move |(taken, absent), act, ctx| {
                    let settle: Settle = Box::new(move |game| {
                        for (node, pairing, name) in taken {
                            link.settle(&node, pairing, &name, game);
                        }
                    });
                    if absent.is_empty() {
                        return act.seat_round_game(ctx, (pairing, terms), far, settle);
                    }
                    settle(None);
                    let effects = act.with_desk_but(&absent, |desk, free| {
                        desk.game_unmade(pairing, &terms, free)
                    });
                    act.carry_out_desk(ctx, effects);
                }),
        );
    }

    /// Tells `name`, not online here, `text` on its node, if it is online.
    pub(super) fn tell_elsewhere(&mut self, ctx: &mut Context<Self>, name: Name, text: String) {
        let Some(link) = self.far.clone() else {
            return;
        };
        let node = self.services.store.name_node(name.to_string());
        ctx.spawn(node.into_actor(self).map(move |node, _, _| {
            if let Ok(Some(node)) = node {
                link.tell(&node, &name, text);
            }
        }));
    }
}

impl Handler<TakeOut> for Lobby {
    type Result = ResponseFuture<Result<(), ProtocolError>>;

    fn handle(&mut self, msg: TakeOut, ctx: &mut Context<Self>) -> Self::Result {
        let (reply, answer) = oneshot::channel();
        let name = Name::clone(&msg.name);
        self.when_free(ctx, touching(Some(name), None), move |act, ctx| {
            let taken = act.core.take_out(&msg.name);
            act.conclude(ctx, taken, reply, |_, ()| Ok(()));
        });
        answered(answer)
    }
}

impl Handler<FreeTakenOut> for Lobby {
    type Result = ();

    fn handle(&mut self, msg: FreeTakenOut, ctx: &mut Context<Self>) {
        let name = Name::clone(&msg.name);
        self.when_free(ctx, touching(Some(name), None), move |act, _| {
            act.core.free_taken_out(&msg.name);
        });
    }
}

impl Handler<TellName> for Lobby {
    type Result = ();

    fn handle(&mut self, msg: TellName, _: &mut Context<Self>) {
        self.tell_here(&msg.name, &msg.text);
    }
}
