//! The lobby's commands beyond seats: `CHALLENGE`, `ACCEPT`, `DECLINE`, `CANCEL`, a
//! rated `SEEK`, `RATING`, `TOP` and `ACCOUNT`. The lobby decides challenges
//! and pairings, the rules crate what the ratings show; this reads the store
//! (each read waits at most the store deadline) and passes them along.

use std::future::Future;
use std::marker::PhantomData;

use actix::fut::{ActorFutureExt, WrapFuture};
use actix::{AsyncContext, Context};
use flipline::Variant;
use flipline::protocol::{
    AccountMark, ChallengeSpec, ErrorCode, Event, ProtocolError, RatingLine, Reply, SeekSpec,
};

use crate::messages::{Answer, ChallengeAnswer, ChallengeOp, ChallengeStep, MarkedBot, Seek};
use crate::rules::challenges::Terms;
use crate::rules::lobby::SeekWanted;
use crate::rules::ratings::{StoredRating, rating_lines, seek_rating};
use crate::session::Session;
use crate::store::{StoreError, Write};
use crate::store_deadline::{StoreWait, not_answering, within};

/// A store read's failure as the client hears it.
fn store_refusal(what: &str, wait: StoreWait) -> ProtocolError {
    match wait {
        StoreWait::NotAnswering => {
            tracing::warn!(what, "the store did not answer in time");
            not_answering()
        }
        StoreWait::Failed(error) => {
            tracing::error!(%error, what, "could not read the store");
            ProtocolError::new(
                ErrorCode::Unavailable,
                "the store is not available, try again",
            )
        }
    }
}

impl Session {
    /// Reads the store (within the deadline), holding back everything else,
    /// then `then` with what it found or why not.
    fn read_store<T, F>(
        &mut self,
        ctx: &mut Context<Self>,
        what: &'static str,
        read: impl Future<Output = Result<T, StoreError>> + 'static,
        then: F,
    ) where
        T: 'static,
        F: FnOnce(&mut Session, &mut Context<Session>, T) -> Result<Answer, ProtocolError>
            + 'static,
    {
        let deadline = self.shared.live.store_deadline();
        let read = within(deadline, read);
        ctx.wait(read.into_actor(self).map(move |found, act, ctx| {
            let reply = found
                .map_err(|wait| store_refusal(what, wait))
                .and_then(|value| then(act, ctx, value));
            act.reply(ctx, reply);
        }));
    }

    /// `SEEK`: a rated one carries the seeker's rating in the variant (a new
    /// player's 1500 before any rated game), which the lobby pairs by.
    pub(super) fn seek(&mut self, ctx: &mut Context<Self>, spec: SeekSpec) {
        let Some(name) = self.logged_in(ctx) else {
            return;
        };
        if !spec.rated {
            return self.ask_seek(ctx, name, SeekWanted::asked(&spec, 0));
        }
        let read = self
            .shared
            .store
            .ratings_of(name.to_string(), Some(spec.variant));
        let deadline = self.shared.live.store_deadline();
        let read = within(deadline, read);
        ctx.wait(
            read.into_actor(self)
                .map(move |found, act, ctx| match found {
                    Ok(ratings) => {
                        let rating = seek_rating(ratings.first());
                        act.ask_seek(ctx, name, SeekWanted::asked(&spec, rating));
                    }
                    Err(wait) => act.reply(ctx, Err(store_refusal("SEEK", wait))),
                }),
        );
    }

    fn ask_seek(
        &mut self,
        ctx: &mut Context<Self>,
        name: crate::messages::Name,
        wanted: SeekWanted,
    ) {
        let seek = Seek {
            name,
            wanted,
            route: PhantomData,
        };
        self.ask_lobby(
            ctx,
            |l| &l.seek,
            seek,
            |act, seat| match seat {
                Some(seat) => act.take_seat(seat),
                None => {
                    act.seat = None;
                    Answer::ok(Reply::Seeking)
                }
            },
        );
    }

    /// `CHALLENGE`: the lobby checks its start (or draws one, for `from
    /// random:N`) and decides.
    pub(super) fn challenge(&mut self, ctx: &mut Context<Self>, spec: ChallengeSpec) {
        let Some(name) = self.logged_in(ctx) else {
            return;
        };
        let ChallengeSpec {
            name: to,
            variant,
            side,
            clock,
            rated,
            start,
        } = spec;
        let terms = Terms {
            variant,
            side,
            clock,
            rated,
            start: Vec::new(),
        };
        self.challenge_step(ctx, name, ChallengeStep::Make(to, terms, start));
    }

    /// `CHALLENGE`, `ACCEPT`, `DECLINE`, `CANCEL`: the lobby's answer.
    pub(super) fn challenge_step(
        &mut self,
        ctx: &mut Context<Self>,
        name: crate::messages::Name,
        op: ChallengeStep,
    ) {
        let msg = ChallengeOp {
            name,
            op,
            route: PhantomData,
        };
        self.ask_lobby(
            ctx,
            |l| &l.challenge,
            msg,
            |act, answer| match answer {
                ChallengeAnswer::Made(id) => Answer::ok(Reply::Challenge(id)),
                ChallengeAnswer::Seat(seat) => act.take_seat(seat),
                ChallengeAnswer::Done => Answer::default(),
            },
        );
    }

    /// The name a command that needs one goes with, or `LOGIN first`.
    pub(super) fn challenge_by(&mut self, ctx: &mut Context<Self>, op: ChallengeStep) {
        if let Some(name) = self.logged_in(ctx) {
            self.challenge_step(ctx, name, op);
        }
    }

    /// `RATING [name] [variant]`: a registered name's ratings, each variant
    /// it has one in (or a new player's in the variant asked about).
    pub(super) fn rating(
        &mut self,
        ctx: &mut Context<Self>,
        name: Option<String>,
        variant: Option<Variant>,
    ) {
        let Some(name) = name.or_else(|| self.login_name().map(|n| n.to_string())) else {
            return self.error(
                ctx,
                ErrorCode::Unauthorized,
                "RATING needs a name, or LOGIN first",
            );
        };
        let store = self.shared.store.clone();
        let asked = name.clone();
        let read = async move {
            let registration = store.registration(asked.clone()).await?;
            let ratings = store.ratings_of(asked, variant).await?;
            Ok((registration, ratings))
        };
        self.read_store(ctx, "RATING", read, move |_, _, (registration, ratings)| {
            let registered = registration.map(|r| r.name);
            let lines = rating_lines(&name, registered, variant, ratings)?;
            Ok(data_lines(lines))
        });
    }

    /// `TOP [variant] [count]`.
    pub(super) fn top(&mut self, ctx: &mut Context<Self>, variant: Option<Variant>, count: u32) {
        let variant = variant.unwrap_or(Variant::Othello);
        let read = self.shared.store.top(variant, count);
        self.read_store(ctx, "TOP", read, |_, _, top| {
            Ok(data_lines(top.iter().map(StoredRating::line).collect()))
        });
    }

    /// `ACCOUNT bot`: a registered name marks itself a program's, for good.
    pub(super) fn account(&mut self, ctx: &mut Context<Self>, mark: AccountMark) {
        let Some(name) = self.logged_in(ctx) else {
            return;
        };
        let AccountMark::Bot = mark;
        let commit = self.shared.store.commit(Write::MarkBot {
            name: name.to_string(),
        });
        ctx.wait(commit.into_actor(self).map(|marked, act, ctx| {
            let reply = match marked {
                Ok(0) => Err(ProtocolError::new(
                    ErrorCode::Forbidden,
                    "only a registered name can be marked: LOGIN name password registers one",
                )),
                Ok(_) => {
                    let name = act.login_name().cloned();
                    if let Some(name) = name {
                        act.shared.lobby.marked_bot.do_send(MarkedBot(name));
                    }
                    Ok(Answer::default())
                }
                Err(error) => {
                    tracing::error!(%error, "ACCOUNT could not be stored");
                    Err(ProtocolError::new(
                        ErrorCode::Unavailable,
                        "the mark could not be stored; try again",
                    ))
                }
            };
            act.reply(ctx, reply);
        }));
    }
}

fn data_lines(ratings: Vec<RatingLine>) -> Answer {
    let data: String = (ratings.into_iter())
        .map(|line| format!("{}\n", Event::Rating(line)))
        .collect();
    Answer::data(data)
}
