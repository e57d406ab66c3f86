//! A game's messages turned into table calls: players' actions, the
//! lobby's seating orders, and moves stored before they are announced.

use actix::Context;
use actix::fut::{self, ActorFutureExt, WrapFuture};
use flipline::Move;
use flipline::protocol::{ErrorCode, ProtocolError};
use std::sync::atomic::Ordering;

use super::effects::lines;
use super::{GameActor, GameResponse};
use crate::messages::*;
use crate::rules::lobby::Order;
use crate::rules::refusal::Refusal;
use crate::rules::table::{MoveCommit, Played, Resent};
use crate::service_time;
use crate::session::SessionRef;

impl GameActor {
    /// Stores a move the table applied; once committed the table announces it,
    /// if refused the table undoes it and the mover is told `ERR 503`. Awaited
    /// with `ctx.wait`, so that nothing else happens in the game meanwhile.
    pub(super) fn store_move(
        &mut self,
        commit: MoveCommit,
    ) -> impl fut::ActorFuture<GameActor, Output = Answered> + 'static {
        let saved = self
            .services
            .store
            .append_move(self.id(), commit.ply, commit.mv, commit.ms);
        saved
            .into_actor(self)
            .map(move |saved, act, ctx| match saved {
                Ok(()) => {
                    act.handle.ply.store(commit.ply, Ordering::Relaxed);
                    let effects = act.table.committed(&commit, service_time::now());
                    act.carry_out(ctx, effects);
                    Ok(Answer::default())
                }
                Err(error) => {
                    tracing::error!(game = act.id(), %error, "a move could not be saved");
                    let effects = act.table.rolled_back(commit, service_time::now());
                    act.carry_out(ctx, effects);
                    Err(ProtocolError::new(
                        ErrorCode::Unavailable,
                        "the move could not be saved and was not played; try again",
                    ))
                }
            })
    }

    pub(super) fn human_move(
        &mut self,
        ctx: &mut Context<Self>,
        name: &str,
        mv: Move,
    ) -> GameResponse {
        match self.table.play(name, mv, service_time::now()) {
            Played::Commit(commit) => GameResponse::AfterCommit(Box::pin(self.store_move(commit))),
            Played::Refused(e, effects) => {
                self.carry_out(ctx, effects);
                GameResponse::Now(Err(e.into()))
            }
        }
    }

    /// A move sent again at ply `at` after the game's last node died: played
    /// if it was not, answered as played if it was, refused if the game
    /// moved on past it.
    pub(super) fn again(
        &mut self,
        ctx: &mut Context<Self>,
        name: &str,
        act: Keyed,
        at: u32,
    ) -> GameResponse {
        let resent = match act {
            Keyed::Move(mv) => self.table.resent(name, at, mv),
            Keyed::Undo => self.table.undo_resent(at),
        };
        match resent {
            Resent::Play => match act {
                Keyed::Move(mv) => self.human_move(ctx, name, mv),
                Keyed::Undo => self.undo(name),
            },
            Resent::Played => GameResponse::Now(Ok(Answer::default())),
            Resent::MovedOn { plies } => {
                let game = self.id();
                GameResponse::Now(Err(Refusal::PastResent { game, at, plies }.into()))
            }
        }
    }

    pub(super) fn act(
        &mut self,
        ctx: &mut Context<Self>,
        name: &str,
        action: Action,
    ) -> GameResponse {
        let outcome = match action {
            Action::Move(square) => return self.human_move(ctx, name, Move::Place(square)),
            Action::Pass => return self.human_move(ctx, name, Move::Pass),
            Action::Resign => return self.resign(ctx, name),
            Action::Undo => return self.undo(name),
            Action::Say(text) => self.table.say(name, text),
            Action::Quit => {
                let kept = self.table.seat_kept_on_quit(name, self.grace());
                let data = kept.map(|text| format!("INFO {text}\n"));
                let bye = Answer::ok(flipline::protocol::Reply::Bye);
                return GameResponse::Now(Ok(Answer {
                    data: data.unwrap_or_default(),
                    ..bye
                }));
            }
            Action::Board => {
                let data = lines(&self.table.board(service_time::now())).to_string();
                return GameResponse::Now(Ok(Answer::data(data)));
            }
        };
        GameResponse::Now(outcome.map_err(Into::into).map(|effects| {
            self.carry_out(ctx, effects);
            Answer::default()
        }))
    }

    pub(super) fn seating(&mut self, ctx: &mut Context<Self>, order: Order<Option<SessionRef>>) {
        let now = service_time::now();
        let effects = match order {
            Order::Fill { color, name, conn } => {
                let effects = self.table.fill(color, name, conn, now);
                self.carry_out(ctx, effects);
                return self.log_begun();
            }
            Order::Attach { name, conn } => match conn {
                Some(conn) => self.table.attach(&name, conn, now),
                None => Vec::new(),
            },
            Order::Detach { name, quiet } => self.table.detach(&name, quiet),
            Order::Disconnected { name } => self.table.disconnected(&name, self.grace(), now),
            Order::Cancel => self.table.cancel(),
            Order::OfferRematch { name } => self.table.offer_rematch(&name),
            Order::Rematched { game } => self.table.rematched(game),
        };
        self.carry_out(ctx, effects);
    }
}
