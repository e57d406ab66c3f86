//! `WATCH`, `HISTORY`, `LIST` and `WHO`: the commands that look at games
//! rather than play them. `WATCH` finds the game's route in the lobby, the one
//! directory of games, and keeps it; `HISTORY` reads the store, waiting at
//! most the store deadline; `LIST` and `WHO` are the lobby's lists, which
//! never touch the disk. Here too is `unwatch_all`, which `LEAVE` and
//! the session's stop use to tell the games watched that it has gone.

use std::marker::PhantomData;
use std::sync::Arc;

use actix::fut::{ActorFutureExt, WrapFuture};
use actix::{AsyncContext, Context, Message, Recipient};
use flipline::protocol::{ErrorCode, Event, ProtocolError};

use crate::messages::{Answer, Find, FindElsewhere, ToGame};
use crate::rules::refusal::Refusal;
use crate::session::{SeatRef, Session};
use crate::store_deadline::{StoreWait, not_answering, within};

impl Session {
    /// Looks a game up in the lobby (and, on a cluster's node, among the
    /// other nodes' games), then goes on with its route.
    fn find_game<F>(&mut self, ctx: &mut Context<Self>, game: flipline::protocol::GameId, then: F)
    where
        F: FnOnce(&mut Session, &mut Context<Session>, SeatRef) + 'static,
    {
        let shared = Arc::clone(&self.shared);
        self.ask(
            ctx,
            &shared.lobby.find,
            Find(game, PhantomData),
            move |act, ctx, found| match (found, &act.shared.elsewhere) {
                (Some(seat), _) => then(act, ctx, seat),
                (None, Some(elsewhere)) => {
                    let elsewhere = elsewhere.find.clone();
                    act.ask(
                        ctx,
                        &elsewhere,
                        FindElsewhere(game, PhantomData),
                        move |act, ctx, found| match found {
                            Some(seat) => then(act, ctx, seat),
                            None => act.refuse(ctx, Refusal::NoGame(game)),
                        },
                    );
                }
                (None, None) => act.refuse(ctx, Refusal::NoGame(game)),
            },
        );
    }

    pub(super) fn watch(&mut self, ctx: &mut Context<Self>, game: flipline::protocol::GameId) {
        let session = Session::own_ref(ctx);
        self.find_game(ctx, game, move |act, ctx, seat| {
            let request = seat.tx.send(ToGame::Watch {
                id: act.id,
                session,
            });
            act.await_answer(ctx, request, move |act, ctx, result| {
                if result.is_ok() && !act.watching.iter().any(|w| w.game == game) {
                    act.watching.push(seat);
                }
                act.reply(ctx, result);
            });
        });
    }

    pub(in crate::session) fn unwatch_all(&mut self) {
        for seat in self.watching.take() {
            seat.tx.do_send(ToGame::Unwatch { id: self.id });
        }
    }

    /// `HISTORY`: the game as the store has it (committed moves only),
    /// waited for at most the store deadline.
    pub(super) fn history(&mut self, ctx: &mut Context<Self>, game: flipline::protocol::GameId) {
        let deadline = self.shared.live.store_deadline();
        let read = within(deadline, self.shared.store.history(game));
        ctx.wait(read.into_actor(self).map(move |found, act, ctx| {
            let reply = match found {
                Ok(Some(record)) => Ok(Answer::data(format!(
                    "{}\n",
                    Event::History(record.summary())
                ))),
                Ok(None) => Err(Refusal::NoGame(game).into()),
                Err(StoreWait::NotAnswering) => {
                    tracing::warn!(game, "HISTORY: the store did not answer in time");
                    Err(not_answering())
                }
                Err(StoreWait::Failed(e)) => {
                    tracing::error!(error = %e, "HISTORY could not read the store");
                    Err(ProtocolError::new(
                        ErrorCode::Unavailable,
                        "the store is not available, try again",
                    ))
                }
            };
            act.reply(ctx, reply);
        }));
    }

    pub(super) fn list<M>(&mut self, ctx: &mut Context<Self>, to: Recipient<M>, msg: M)
    where
        M: Message<Result = Vec<Event>> + Send + 'static,
    {
        self.ask(ctx, &to, msg, |act, ctx, events| {
            act.reply(ctx, Ok(Answer::listing(&events)));
        });
    }
}
