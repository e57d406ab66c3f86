//! The lobby actor's side of tournaments: a shell around the desk
//! (`rules::tourney_desk`), which decides everything and holds each write
//! until stored. This feeds it commands, game ends, store outcomes, drawn
//! starts and alarms, and carries out what it returns: store, tell, draw a
//! start, make a round's game through the lobby core, wake it later.

use std::sync::Arc;
use std::time::Duration;

use actix::fut::{ActorFutureExt, WrapFuture};
use actix::{AsyncContext, Context, Handler, ResponseFuture};
use flipline::protocol::{Event, GameId, GameResult, ProtocolError, TourneyCommand};
use tokio::sync::oneshot;

use super::{Lobby, Waits, answered};
use crate::messages::{Name, RecoverTourneys, ToSession, TourneyAnswer, TourneyFromFar, TourneyOp};
use crate::rules::lobby::TourneyTerms;
use crate::rules::tourney::Pairing;
use crate::rules::tourney_desk::{DeskEffect, Effects, Free, TourneyDesk};
use crate::session::Reach;
use crate::store::{TourneyWrite, Write};

/// Where a `TOURNEY` command's answer goes.
pub(super) type TourneyReply = oneshot::Sender<Result<TourneyAnswer, ProtocolError>>;

/// Work on a game for `black` and `white`: it waits for a held decision of
/// either.
fn touching_both(black: Name, white: Name) -> Waits {
    Box::new(move |core| {
        core.waits_for(Some(&black), None)
            .or_else(|| core.waits_for(Some(&white), None))
    })
}

impl Handler<TourneyOp> for Lobby {
    type Result = ResponseFuture<Result<TourneyAnswer, ProtocolError>>;

    fn handle(&mut self, msg: TourneyOp, ctx: &mut Context<Self>) -> Self::Result {
        let TourneyOp { name, op } = msg;
        let member = name.filter(|n| self.core.is_member(n));
        let Some(far) = self.far.clone() else {
            return self.at_desk(ctx, member, op);
        };
        match op {
            // Every node's tournaments, this node's first asked.
            TourneyCommand::List => {
                let here = self.at_desk(ctx, member.clone(), op);
                let there = far.tourney(op, member);
                Box::pin(async move {
                    let (here, there) = futures_util::future::join(here, there).await;
                    let mut lines = match here? {
                        TourneyAnswer::Lines(lines) => lines,
                        _ => Vec::new(),
                    };
                    if let Ok(TourneyAnswer::Lines(more)) = there {
                        lines.extend(more);
                    }
                    lines.sort_by_key(|event| match event {
                        Event::Tourney(line) => line.id,
                        _ => u64::MAX,
                    });
                    Ok(TourneyAnswer::Lines(lines))
                })
            }
            op if named(op).is_some_and(|id| !self.desk.holds(id)) => far.tourney(op, member),
            op => self.at_desk(ctx, member, op),
        }
    }
}

impl Handler<TourneyFromFar> for Lobby {
    type Result = ResponseFuture<Result<TourneyAnswer, ProtocolError>>;

    fn handle(&mut self, msg: TourneyFromFar, ctx: &mut Context<Self>) -> Self::Result {
        self.at_desk(ctx, msg.member, msg.op)
    }
}

/// The tournament a command names, if any.
fn named(op: TourneyCommand) -> Option<flipline::protocol::TourneyId> {
    match op {
        TourneyCommand::Join(id)
        | TourneyCommand::Leave(id)
        | TourneyCommand::Start(id)
        | TourneyCommand::Show(id) => Some(id),
        TourneyCommand::List | TourneyCommand::New(_) => None,
    }
}

impl Handler<RecoverTourneys> for Lobby {
    type Result = ();

    fn handle(&mut self, RecoverTourneys(stored): RecoverTourneys, ctx: &mut Context<Self>) {
        self.take_up(ctx, |desk, in_lobby, grace| {
            desk.restore(stored, in_lobby, grace)
        });
    }
}

/// Which games this lobby holds.
pub(super) type InLobby<'a> = &'a dyn Fn(GameId) -> bool;

impl Lobby {
    /// Tournaments read back from the store (at a start, or taken over
    /// from a dead node) handed to the desk by `take`, with which games
    /// this lobby holds and the seat grace; what follows is carried out.
    pub(super) fn take_up(
        &mut self,
        ctx: &mut Context<Self>,
        take: impl FnOnce(&mut TourneyDesk<TourneyReply>, InLobby, Duration) -> Effects<TourneyReply>,
    ) {
        let grace = Duration::from_secs(self.services.config.grace_secs);
        let core = &self.core;
        let in_lobby = |game| core.route(game).is_some();
        let effects = take(&mut self.desk, &in_lobby, grace);
        self.carry_out_desk(ctx, effects);
    }
}

impl Lobby {
    /// `op` of `member` (if a registered name) at this node's desk.
    fn at_desk(
        &mut self,
        ctx: &mut Context<Self>,
        member: Option<Name>,
        op: TourneyCommand,
    ) -> ResponseFuture<Result<TourneyAnswer, ProtocolError>> {
        let (reply, answer) = oneshot::channel();
        let effects = self.with_desk(|desk, free| desk.command(member, op, reply, free));
        self.carry_out_desk(ctx, effects);
        answered(answer)
    }

    /// Calls the desk with who is free to play, as the lobby core says: on
    /// a cluster's node with a bus, a name not online here may be on
    /// another node, which says when its game is made.
    pub(super) fn with_desk(
        &mut self,
        call: impl FnOnce(&mut TourneyDesk<TourneyReply>, Free) -> Effects<TourneyReply>,
    ) -> Effects<TourneyReply> {
        self.with_desk_but(&[], call)
    }

    /// [`Lobby::with_desk`], with `absent` known not to be free.
    pub(super) fn with_desk_but(
        &mut self,
        absent: &[Name],
        call: impl FnOnce(&mut TourneyDesk<TourneyReply>, Free) -> Effects<TourneyReply>,
    ) -> Effects<TourneyReply> {
        let (core, far) = (&self.core, self.far.is_some());
        let free = |name: &str| {
            let gone = absent.iter().any(|a| a.eq_ignore_ascii_case(name));
            let maybe_elsewhere = far && core.holder(name).is_none();
            !gone && (core.free_to_play(name) || maybe_elsewhere)
        };
        call(&mut self.desk, &free)
    }

    /// A game's end went out: if it is a tournament's, what follows.
    pub(super) fn tourney_game_over(
        &mut self,
        ctx: &mut Context<Self>,
        game: GameId,
        result: GameResult,
    ) {
        let effects = self.with_desk(|desk, free| desk.game_over(game, &result, free));
        self.carry_out_desk(ctx, effects);
    }

    /// A game its stored moves ended at a restart: its end is stored, then
    /// its tournament counts it.
    pub(super) fn end_at_recovery(
        &mut self,
        ctx: &mut Context<Self>,
        game: GameId,
        result: GameResult,
    ) {
        let effects = self.desk.recovered_end(game, result);
        self.carry_out_desk(ctx, effects);
    }

    /// Carries out the desk's effects, in order.
    pub(super) fn carry_out_desk(
        &mut self,
        ctx: &mut Context<Self>,
        effects: Effects<TourneyReply>,
    ) {
        for effect in effects {
            self.carry_out_for_desk(ctx, effect);
        }
    }

    fn carry_out_for_desk(&mut self, ctx: &mut Context<Self>, effect: DeskEffect<TourneyReply>) {
        match effect {
            DeskEffect::Store(write) => self.store_for_desk(ctx, write),
            DeskEffect::StoreEnd(game, result, attempt) => {
                self.store_end_for_desk(ctx, game, result, attempt);
            }
            DeskEffect::Reply(reply, answer) => {
                let _ = reply.send(answer.map_err(Into::into));
            }
            DeskEffect::Tell(name, event) => self.tell(ctx, &name, &event),
            DeskEffect::DrawStart {
                tourney,
                round,
                pairing,
                variant,
                plies,
            } => {
                let request = self.draw_start(variant, plies);
                ctx.spawn(request.into_actor(self).map(move |drawn, act, ctx| {
                    let start = drawn.unwrap_or_else(|| {
                        tracing::warn!(tourney, %variant, plies, "no random start drawn; the usual start instead");
                        Vec::new()
                    });
                    let effects = act.with_desk(|desk, free| {
                        desk.start_drawn(tourney, round, pairing, start, free)
                    });
                    act.carry_out_desk(ctx, effects);
                }));
            }
            DeskEffect::MakeGame(pairing, terms) => self.make_tourney_game(ctx, pairing, terms),
            DeskEffect::Wake(after, alarm) => {
                ctx.run_later(after, move |act, ctx| {
                    let effects = act.with_desk(|desk, free| desk.wake(alarm, free));
                    act.carry_out_desk(ctx, effects);
                });
            }
            DeskEffect::MarkGame(game) => self.core.mark_tourney_game(game),
            DeskEffect::Follow(game) => self.follow(ctx, game),
            DeskEffect::Remade(game) => {
                tracing::warn!(
                    game,
                    "a tournament's game was not brought back: it is made again"
                );
            }
        }
    }

    /// Commits a tournament's write, then tells the desk whether it was
    /// stored.
    fn store_for_desk(&mut self, ctx: &mut Context<Self>, write: TourneyWrite) {
        let (id, what) = (write.tourney(), write.summary());
        let commit = self.services.store.commit(Write::Tourney(write));
        ctx.spawn(commit.into_actor(self).map(move |stored, act, ctx| {
            match &stored {
                Ok(_) => tracing::debug!(what, "stored"),
                Err(error) => {
                    tracing::error!(%error, what, "a tournament's change could not be saved")
                }
            }
            let effects = act.with_desk(|desk, free| desk.stored(id, stored.is_ok(), free));
            act.carry_out_desk(ctx, effects);
        }));
    }

    /// Commits the end of a game its stored moves ended at a restart.
    fn store_end_for_desk(
        &mut self,
        ctx: &mut Context<Self>,
        game: GameId,
        result: GameResult,
        attempt: u32,
    ) {
        let commit = self.services.store.commit(Write::End { game, result });
        ctx.spawn(commit.into_actor(self).map(move |stored, act, ctx| {
            if let Err(error) = &stored {
                tracing::warn!(game, attempt, %error, "the end of a recovered game could not be saved; trying again");
            }
            let effects = act.with_desk(|desk, free| {
                desk.end_stored(game, result, attempt, stored.is_ok(), free)
            });
            act.carry_out_desk(ctx, effects);
        }));
    }

    /// Tells `name`, if online, `event`: here, or on its node.
    fn tell(&mut self, ctx: &mut Context<Self>, name: &Name, event: &Event) {
        let text = format!("{event}\n");
        if !self.tell_here(name, &text) {
            self.tell_elsewhere(ctx, Name::clone(name), text);
        }
    }

    /// Tells `name` `text` if it is online here: whether it is.
    pub(super) fn tell_here(&self, name: &str, text: &str) -> bool {
        let holder = self.core.holder(name);
        let Some(session) = holder.and_then(|conn| self.sessions.get(&conn)) else {
            return false;
        };
        session.addr.tell(ToSession::Deliver(Arc::from(text)));
        true
    }

    /// Seats the pairing at a new game through the lobby core (held until
    /// stored), once neither player has a decision held; the desk hears
    /// whether it was made, refused by the store, or could not be made. A
    /// player of another node is taken out there first.
    fn make_tourney_game(
        &mut self,
        ctx: &mut Context<Self>,
        pairing: Pairing,
        terms: TourneyTerms,
    ) {
        let names = [&pairing.black, &pairing.white];
        let far = names.map(|name| self.far.is_some() && self.core.holder(name).is_none());
        match far.contains(&true) {
            true => self.make_far_tourney_game(ctx, pairing, terms, far),
            false => self.seat_round_game(ctx, (pairing, terms), far, Box::new(|_| {})),
        }
    }

    /// [`Lobby::make_tourney_game`] once its players of other nodes (`far`)
    /// are taken out there; `settle` tells their nodes what came of it.
    pub(super) fn seat_round_game(
        &mut self,
        ctx: &mut Context<Self>,
        (pairing, terms): (Pairing, TourneyTerms),
        far: [bool; 2],
        settle: Settle,
    ) {
        let waits = touching_both(Name::clone(&pairing.black), Name::clone(&pairing.white));
        self.when_free(ctx, waits, move |act, ctx| {
            let numbers = &mut act.numbers;
            let names = (&pairing.black, &pairing.white);
            let decided = (act.core).tourney_game(names, far, terms.clone(), || numbers.take());
            let Ok(done) = decided else {
                settle(None);
                let absent = act.not_free(&pairing, far);
                let effects = act.with_desk_but(&absent, |desk, free| {
                    desk.game_unmade(pairing, &terms, free)
                });
                return act.carry_out_desk(ctx, effects);
            };
            let (reply, answer) = oneshot::channel();
            let (made, made_terms) = (pairing.clone(), terms.clone());
            act.conclude(ctx, Ok(done), reply, move |act, game| {
                act.desk.game_made(&made, &made_terms, game);
                Ok(game)
            });
            ctx.spawn(answer.into_actor(act).map(move |answer, act, ctx| {
                settle(
                    answer
                        .as_ref()
                        .ok()
                        .and_then(|made| made.as_ref().ok())
                        .copied(),
                );
                if matches!(answer, Ok(Err(_))) {
                    let effects = act.desk.game_refused(pairing, terms);
                    act.carry_out_desk(ctx, effects);
                }
            }));
        });
    }
}

impl Lobby {
    /// Who of `pairing` kept its game from being made: a player here not
    /// free, else the players of other nodes (whose seats could not be
    /// held).
    fn not_free(&self, pairing: &Pairing, far: [bool; 2]) -> Vec<Name> {
        let names = [&pairing.black, &pairing.white];
        let here: Vec<Name> = (names.into_iter().zip(far))
            .filter(|(name, far)| !far && !self.core.free_to_play(name))
            .map(|(name, _)| Name::clone(name))
            .collect();
        if !here.is_empty() {
            return here;
        }
        (names.into_iter().zip(far))
            .filter(|(_, far)| *far)
            .map(|(name, _)| Name::clone(name))
            .collect()
    }
}

/// What tells the nodes of a round's far players whether its game was
/// made (its number) or not.
pub(super) type Settle = Box<dyn FnOnce(Option<GameId>)>;
