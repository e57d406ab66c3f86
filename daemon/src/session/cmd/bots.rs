//! The commands bots rely on: `CHALLENGE`, `ACCEPT`, `DECLINE`, `CANCEL`, a
//! rated `SEEK`, `RATING`, `TOP` and `ACCOUNT`. The lobby decides challenges and pairings; the store keeps the
//! ratings and marks (each read waits at most the store deadline); the
//! engine pool draws random starts.

use std::future::Future;
use std::marker::PhantomData;

use actix::fut::{ActorFutureExt, WrapFuture};
use actix::{AsyncContext, Context};
use flipline::Variant;
use flipline::notation::replay_with_passes;
use flipline::protocol::{
    AccountMark, ChallengeSpec, ErrorCode, Event, ProtocolError, Reply, SeekSpec, StartSpec,
};

use crate::engine_pool::DrawStart;
use crate::messages::{Answer, ChallengeAnswer, ChallengeOp, ChallengeStep, MarkedBot, Seek};
use crate::random::random_u64;
use crate::rules::challenges::Terms;
use crate::rules::lobby::{RatedSeek, SeekWanted};
use crate::session::Session;
use crate::store::{StoreError, StoredRating, Write, rounded};
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
            return self.ask_seek(ctx, name, seek_wanted(&spec, None));
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
                        let rating = ratings.first().map_or(1500, |r| rounded(r.rating.rating));
                        act.ask_seek(ctx, name, seek_wanted(&spec, Some(rating)));
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

    /// `CHALLENGE`: its start checked (or drawn, for `from random:N`), then
    /// the lobby's decision.
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
        let terms = move |start| Terms {
            variant,
            side,
            clock,
            rated,
            start,
        };
        match start {
            StartSpec::Initial => {
                self.challenge_step(ctx, name, ChallengeStep::Make(to, terms(vec![])))
            }
            StartSpec::Moves(moves) => match checked_start(variant, &moves) {
                Ok(start) => self.challenge_step(ctx, name, ChallengeStep::Make(to, terms(start))),
                Err(e) => self.reply(ctx, Err(e)),
            },
            StartSpec::Random(plies) => {
                // Asked first, so that a challenge the lobby would refuse
                // costs the engine nothing.
                let check = ChallengeOp {
                    name: crate::messages::Name::clone(&name),
                    op: ChallengeStep::Check(to.clone(), rated),
                    route: PhantomData,
                };
                let shared = std::sync::Arc::clone(&self.shared);
                self.ask(
                    ctx,
                    &shared.lobby.challenge,
                    check,
                    move |act, ctx, checked| match checked {
                        Ok(_) => act.draw_and_challenge(ctx, name, to, terms, plies),
                        Err(e) => act.reply(ctx, Err(e)),
                    },
                );
            }
        }
    }

    /// Draws a random start of `plies` moves on the engine pool, then makes
    /// the challenge from it.
    fn draw_and_challenge(
        &mut self,
        ctx: &mut Context<Self>,
        name: crate::messages::Name,
        to: String,
        terms: impl Fn(Vec<flipline::Move>) -> Terms + Copy + 'static,
        plies: u8,
    ) {
        let variant = terms(Vec::new()).variant;
        let draw = DrawStart {
            variant,
            plies: usize::from(plies),
            seed: random_u64(),
        };
        let request = self.shared.engine.send(draw);
        self.await_answer(ctx, request, move |act, ctx, drawn| match drawn {
            Some(start) => {
                act.challenge_step(ctx, name, ChallengeStep::Make(to, terms(start)));
            }
            None => act.error(
                ctx,
                ErrorCode::BadRequest,
                format!("{variant} has no start of {plies} random moves"),
            ),
        });
    }

    /// `ACCEPT`, `DECLINE`, `CANCEL` and a checked `CHALLENGE`: the lobby's
    /// answer.
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
            let Some(registration) = registration else {
                return Err(ProtocolError::new(
                    ErrorCode::NotFound,
                    format!("'{name}' is not a registered name: only those are rated"),
                ));
            };
            let lines = if ratings.is_empty() {
                vec![StoredRating {
                    name: registration.name,
                    variant: variant.unwrap_or(Variant::Othello),
                    rating: crate::rules::glicko::START,
                    games: 0,
                    bot: false,
                }]
            } else {
                ratings
            };
            Ok(rating_lines(&lines))
        });
    }

    /// `TOP [variant] [count]`.
    pub(super) fn top(&mut self, ctx: &mut Context<Self>, variant: Option<Variant>, count: u32) {
        let variant = variant.unwrap_or(Variant::Othello);
        let read = self.shared.store.top(variant, count);
        self.read_store(ctx, "TOP", read, |_, _, top| Ok(rating_lines(&top)));
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

fn seek_wanted(spec: &SeekSpec, rating: Option<i32>) -> SeekWanted {
    SeekWanted {
        variant: spec.variant,
        clock: spec.clock,
        rated: rating.map(|rating| RatedSeek {
            rating,
            range: spec.range,
        }),
    }
}

/// A `from MOVES` start, as `NEW` takes one: legal, passes written out, not
/// the end of the game.
fn checked_start(
    variant: Variant,
    moves: &[flipline::Move],
) -> Result<Vec<flipline::Move>, ProtocolError> {
    let (position, start) =
        replay_with_passes(variant, moves).map_err(|e| ProtocolError::bad(format!("from: {e}")))?;
    if position.is_over() {
        return Err(ProtocolError::bad("from: those moves end the game"));
    }
    Ok(start)
}

fn rating_lines(ratings: &[StoredRating]) -> Answer {
    let data: String = (ratings.iter())
        .map(|r| format!("{}\n", Event::Rating(r.line())))
        .collect();
    Answer::data(data)
}
