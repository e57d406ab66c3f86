//! `LOGIN` on a cluster's node: once the lobby gave the name, it is taken
//! in the cluster's names online too (the store's `names_online`), so that
//! one connection holds it in the whole cluster, as on one daemon. A seat
//! the name keeps in a game in play on another node (its connection there
//! lost) is said in the `OK`, as a seat kept here is, and holds the name
//! here until that game is over; a guest's such seat goes only to its
//! secret. A seat in a game this node has just taken over, which its lobby
//! does not hold yet, is waited for: the `OK` says it too.

use std::time::Duration;

use actix::fut::{ActorFutureExt, WrapFuture};
use actix::{AsyncContext, Context};

use super::login::welcome;
use crate::messages::{Answer, AwaitTakenOver, GuestLogin, KeptElsewhere, LoggedIn, Name};
use crate::rules::lobby::check_kept_elsewhere;
use crate::rules::refusal::Refusal;
use crate::session::Session;
use crate::store::{NameClaim, SeatKept};

/// How long a login waits for its lobby to hold a game this node has just
/// taken over (the lobby hears of it milliseconds after the claim).
const TAKEN_OVER_WITHIN: Duration = Duration::from_secs(5);

impl Session {
    /// Takes the name the lobby gave in the cluster's names online:
    /// refused while a connection to another node holds it, as the lobby
    /// refuses a name held here.
    pub(super) fn claim_in_cluster(
        &mut self,
        ctx: &mut Context<Self>,
        (logged_in, guest): (LoggedIn, Option<GuestLogin>),
        password: Option<String>,
    ) {
        let claim = self.shared.store.claim_name(logged_in.name.to_string());
        ctx.wait(
            claim
                .into_actor(self)
                .map(move |claim, act, ctx| match claim {
                    Ok(NameClaim::Taken { kept: None }) => {
                        act.welcome_in(ctx, logged_in, password);
                    }
                    // A seat here too would be a fault; the one here is said.
                    Ok(NameClaim::Taken { kept: Some(_) }) if logged_in.kept_seat.is_some() => {
                        act.welcome_in(ctx, logged_in, password);
                    }
                    Ok(NameClaim::Taken { kept: Some(seat) }) => {
                        act.kept(ctx, (logged_in, guest), (seat, password));
                    }
                    Ok(NameClaim::HeldBy(node)) => {
                        act.give_name_back();
                        let name = Name::clone(&logged_in.name);
                        act.refuse(ctx, Refusal::NameInUseOn { name, node });
                    }
                    Err(e) => {
                        act.give_name_back();
                        tracing::warn!(error = %e, name = %logged_in.name, "a login's name was not taken in the cluster");
                        act.refuse(ctx, Refusal::NamesUnreachable);
                    }
                }),
        );
    }

    /// The name keeps `seat` in a game in play that its lobby did not
    /// report: a guest's goes only to its secret, then it is held here or
    /// elsewhere as its owner says.
    fn kept(
        &mut self,
        ctx: &mut Context<Self>,
        (logged_in, guest): (LoggedIn, Option<GuestLogin>),
        (seat, password): (SeatKept, Option<String>),
    ) {
        let stored = seat.secret.as_deref();
        if let Err(refusal) = check_kept_elsewhere(&logged_in.name, stored, guest.as_ref()) {
            self.give_name_back();
            return self.refuse(ctx, refusal);
        }
        match seat.here {
            true => self.kept_here(ctx, logged_in, (seat, password)),
            false => self.kept_elsewhere(ctx, logged_in, seat),
        }
    }

    /// The name keeps `seat` in a game another node owns: the lobby here
    /// holds the name for it, and the `OK` says it. Without the bus the
    /// seat cannot be taken from here: the login is refused, naming the
    /// game's node.
    fn kept_elsewhere(&mut self, ctx: &mut Context<Self>, mut logged_in: LoggedIn, seat: SeatKept) {
        let Some(elsewhere) = &self.shared.elsewhere else {
            self.give_name_back();
            let name = Name::clone(&logged_in.name);
            let (game, node) = (seat.game, seat.node);
            return self.refuse(ctx, Refusal::SeatOnNode { name, game, node });
        };
        let kept = elsewhere.kept.clone();
        let game = seat.game;
        let hold = KeptElsewhere {
            name: Name::clone(&logged_in.name),
            game,
        };
        self.ask(ctx, &kept, hold, move |act, ctx, held| match held {
            Ok(()) => {
                logged_in.kept_seat = Some(game);
                tracing::info!(id = act.id, name = %logged_in.name, game, "logged in, its seat kept on another node");
                act.reply(ctx, Ok(Answer::ok(welcome(logged_in))));
            }
            Err(e) => {
                act.give_name_back();
                act.reply(ctx, Err(e));
            }
        });
    }

    /// The name sits at a game this node has just taken over, which the
    /// lobby did not hold at the login: the `OK` waits until it does, so
    /// that it says the seat and the name holds it from then on. Past
    /// [`TAKEN_OVER_WITHIN`] the login is refused, to be tried again.
    fn kept_here(
        &mut self,
        ctx: &mut Context<Self>,
        mut logged_in: LoggedIn,
        (seat, password): (SeatKept, Option<String>),
    ) {
        let name = Name::clone(&logged_in.name);
        let game = seat.game;
        let asked = (self.shared.lobby.taken_over).send(AwaitTakenOver {
            name: Name::clone(&name),
            game,
        });
        let held = async move { tokio::time::timeout(TAKEN_OVER_WITHIN, asked).await };
        ctx.wait(held.into_actor(self).map(move |held, act, ctx| match held {
            Ok(Ok(seat_here)) => {
                logged_in.kept_seat = seat_here;
                act.welcome_in(ctx, logged_in, password);
            }
            _ => {
                act.give_name_back();
                let node = None;
                act.refuse(ctx, Refusal::SeatOnNode { name, game, node });
            }
        }));
    }

    /// Gives the name this connection holds back to the cluster's names
    /// online. Sent before the lobby hears the name is free, so that a
    /// later login's claim of it, here, comes after.
    pub(in crate::session) fn release_in_cluster(&self) {
        if let (true, Some(name)) = (self.shared.clustered, self.login_name()) {
            self.shared.store.release_name(name.to_string());
        }
    }
}
