//! The lobby actor's side of tournaments: the rules decide
//! (`rules::tourneys`, `rules::tourney_run`), this stores what happened
//! (`tourney_writes`: in order, each before it is acted on), tells the
//! players, and makes each round's games through the lobby core as an
//! accepted challenge's are. `TOURNEY NEW`, `JOIN`, `LEAVE` and `START`
//! are answered once stored; a round's games are stored with their link
//! to the tournament, in the game's own row.

use std::sync::Arc;
use std::time::Duration;

use actix::fut::{ActorFutureExt, WrapFuture};
use actix::{AsyncContext, Context, Handler, ResponseFuture};
use flipline::Move;
use flipline::protocol::{
    ErrorCode, Event, GameResult, ProtocolError, TourneyCommand, TourneyId, TourneyNews,
    TourneySpec,
};
use tokio::sync::oneshot;

use super::{Lobby, Waits, answered, take};
use crate::engine_pool::DrawStart;
use crate::messages::{Name, ToSession, TourneyAnswer, TourneyOp};
use crate::random::random_u64;
use crate::rules::lobby::TourneyTerms;
use crate::rules::tourney_run::{Forfeit, Next, Pairing};
use crate::session::Reach;
use crate::store::{StoredForfeit, TourneyWrite};

/// How long after a failed write a round's game is asked for again.
const MAKE_RETRY: Duration = Duration::from_secs(1);

fn only_registered() -> ProtocolError {
    ProtocolError::new(
        ErrorCode::Forbidden,
        "tournaments are for registered names: LOGIN name password registers one",
    )
}

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
        let (reply, answer) = oneshot::channel();
        let TourneyOp { name, op } = msg;
        let member = name.filter(|n| self.core.is_member(n));
        match (op, member) {
            (TourneyCommand::List, _) => {
                let lines = self.tourneys.list().into_iter().map(Event::Tourney);
                let _ = reply.send(Ok(TourneyAnswer::Lines(lines.collect())));
            }
            (TourneyCommand::Show(id), _) => {
                let shown = self.tourneys.standings(id).map(|lines| {
                    TourneyAnswer::Lines(lines.into_iter().map(Event::Standing).collect())
                });
                let _ = reply.send(shown);
            }
            (_, None) => {
                let _ = reply.send(Err(only_registered()));
            }
            (TourneyCommand::New(spec), Some(name)) => self.new_tourney(ctx, name, spec, reply),
            (TourneyCommand::Join(id), Some(name)) => {
                self.when_tourney_free(ctx, id, move |act, ctx| {
                    act.change_players(ctx, name, id, true, reply);
                });
            }
            (TourneyCommand::Leave(id), Some(name)) => {
                self.when_tourney_free(ctx, id, move |act, ctx| {
                    act.change_players(ctx, name, id, false, reply);
                });
            }
            (TourneyCommand::Start(id), Some(name)) => {
                self.when_tourney_free(ctx, id, move |act, ctx| {
                    act.start_tourney(ctx, name, id, reply);
                });
            }
        }
        answered(answer)
    }
}

type TourneyReply = oneshot::Sender<Result<TourneyAnswer, ProtocolError>>;

impl Lobby {
    /// `TOURNEY NEW`: numbered, stored, then held and answered.
    fn new_tourney(
        &mut self,
        ctx: &mut Context<Self>,
        name: Name,
        spec: TourneySpec,
        reply: TourneyReply,
    ) {
        let id = match self.tourneys.take_id(&name) {
            Ok(id) => id,
            Err(e) => {
                let _ = reply.send(Err(e));
                return;
            }
        };
        let write = TourneyWrite::New {
            id,
            creator: name.to_string(),
            spec,
        };
        self.commit_tourney(ctx, id, write, move |act, _, stored| {
            if stored {
                act.tourneys.made(id, &name, spec);
            }
            let _ = reply.send(answer_if(stored, TourneyAnswer::Made(id)));
        });
    }

    /// `TOURNEY JOIN` (`joining`) or `LEAVE`: checked, stored, then done.
    fn change_players(
        &mut self,
        ctx: &mut Context<Self>,
        name: Name,
        id: TourneyId,
        joining: bool,
        reply: TourneyReply,
    ) {
        let checked = if joining {
            self.tourneys.may_join(id, &name)
        } else {
            self.tourneys.may_leave(id, &name)
        };
        if let Err(e) = checked {
            let _ = reply.send(Err(e));
            return;
        }
        let player = name.to_string();
        let write = if joining {
            TourneyWrite::Join { id, name: player }
        } else {
            TourneyWrite::Leave { id, name: player }
        };
        self.commit_tourney(ctx, id, write, move |act, _, stored| {
            // Checked again: nothing of this tournament ran meanwhile.
            let changed = stored.then(|| match joining {
                true => act.tourneys.join(id, &name),
                false => act.tourneys.leave(id, &name),
            });
            let _ = reply.send(match changed {
                Some(Ok(())) => Ok(TourneyAnswer::Done),
                Some(Err(e)) => Err(e),
                None => answer_if(false, TourneyAnswer::Done),
            });
        });
    }

    /// `TOURNEY START`: its first round decided, stored with its forfeits,
    /// then answered and carried out; put back as it was if not stored.
    fn start_tourney(
        &mut self,
        ctx: &mut Context<Self>,
        name: Name,
        id: TourneyId,
        reply: TourneyReply,
    ) {
        let before = self.tourneys.snapshot(id);
        let core = &self.core;
        let next = match self.tourneys.start(id, &name, |n| core.free_to_play(n)) {
            Ok(next) => next,
            Err(e) => {
                let _ = reply.send(Err(e));
                return;
            }
        };
        let Some(write) = facts_of(id, &next) else {
            let _ = reply.send(Ok(TourneyAnswer::Done));
            return self.go_on(ctx, id, next);
        };
        self.commit_tourney(ctx, id, write, move |act, ctx, stored| {
            let _ = reply.send(answer_if(stored, TourneyAnswer::Done));
            match (stored, before) {
                (true, _) => act.go_on(ctx, id, next),
                (false, Some(before)) => act.tourneys.put_back(id, before),
                (false, None) => {}
            }
        });
    }

    /// What a tournament does next, once stored: see [`Lobby::go_on`].
    pub(super) fn carry_on(&mut self, ctx: &mut Context<Self>, id: TourneyId, next: Next) {
        match facts_of(id, &next) {
            Some(write) => self.store_fact(ctx, id, write, move |act, ctx| {
                act.go_on(ctx, id, next);
            }),
            None => self.go_on(ctx, id, next),
        }
    }

    /// Carries out what a tournament does next, its facts stored: a round
    /// (told to its players as it begins, its forfeits to who was there,
    /// its games made), or its end.
    fn go_on(&mut self, ctx: &mut Context<Self>, id: TourneyId, next: Next) {
        match next {
            Next::Wait => {}
            Next::Over(winner) => {
                let winner = winner.map(|w| w.to_string());
                tracing::info!(tourney = id, ?winner, "tournament over");
                self.tell_players(id, TourneyNews::Over(winner));
                let writes = &self.tourney_writes;
                self.tourneys.over(|t| writes.is_busy(t));
            }
            Next::Round {
                round,
                begins,
                games,
                forfeits,
            } => {
                tracing::info!(
                    tourney = id,
                    round,
                    begins,
                    games = games.len(),
                    "tournament round"
                );
                if begins {
                    self.tell_players(id, TourneyNews::Round(round));
                }
                for forfeit in &forfeits {
                    self.tell_forfeit(id, round, forfeit);
                }
                if games.is_empty() {
                    let core = &self.core;
                    let next = self.tourneys.next_round(id, |n| core.free_to_play(n));
                    return self.carry_on(ctx, id, next);
                }
                for pairing in games {
                    self.make_tourney_game(ctx, id, round, pairing);
                }
            }
        }
    }

    /// Tells the player who was there that the other lost their game by
    /// abandon.
    fn tell_forfeit(&self, id: TourneyId, round: u32, forfeit: &Forfeit) {
        let Forfeit { pairing, absent } = forfeit;
        let sides = [
            (&pairing.black, &pairing.white),
            (&pairing.white, &pairing.black),
        ];
        for (away, (present, other)) in absent.iter().zip(sides) {
            if *away {
                continue;
            }
            let text = format!(
                "tournament {id} round {round}: {other} is not free to play and loses your game by abandon"
            );
            self.tell(present, vec![Event::Info(text)]);
        }
    }

    /// Tells `name`, if online, `events`.
    fn tell(&self, name: &str, events: Vec<Event>) {
        let Some(session) = (self.core.holder(name)).and_then(|c| self.sessions.get(&c)) else {
            return;
        };
        let text: String = events.iter().map(|e| format!("{e}\n")).collect();
        session.addr.tell(ToSession::Deliver(Arc::from(text)));
    }

    /// Tells tournament `id`'s players online `news`.
    fn tell_players(&self, id: TourneyId, news: TourneyNews) {
        let Ok(held) = self.tourneys.get(id) else {
            return;
        };
        for player in held.tourney.players() {
            let news = news.clone();
            self.tell(player, vec![Event::TourneyNews { id, news }]);
        }
    }

    /// Makes the round's game for `pairing`, from the start its group
    /// shares (drawn now if it is the group's first game).
    fn make_tourney_game(
        &mut self,
        ctx: &mut Context<Self>,
        id: TourneyId,
        round: u32,
        pairing: Pairing,
    ) {
        let Ok(held) = self.tourneys.get(id) else {
            return;
        };
        let (variant, plies) = (held.spec.variant, held.spec.random_start);
        let group = pairing.start_group;
        let Some(plies) = plies else {
            return self.seat_tourney_game(ctx, id, round, pairing, Vec::new());
        };
        if let Some(start) = self.tourneys.start_of(id, group) {
            let start = start.to_vec();
            return self.seat_tourney_game(ctx, id, round, pairing, start);
        }
        let draw = DrawStart {
            variant,
            plies: usize::from(plies),
            seed: random_u64(),
        };
        let request = self.services.engine.send(draw);
        ctx.spawn(request.into_actor(self).map(move |drawn, act, ctx| {
            let start = drawn.ok().flatten().unwrap_or_else(|| {
                tracing::warn!(tourney = id, %variant, plies, "no random start drawn; the usual start instead");
                Vec::new()
            });
            act.tourneys.set_start(id, group, start.clone());
            let write = TourneyWrite::Start {
                id,
                group,
                moves: start.clone(),
            };
            act.store_fact(ctx, id, write, move |act, ctx| {
                act.seat_tourney_game(ctx, id, round, pairing, start);
            });
        }));
    }

    /// Seats the pairing at a new game (held until stored; asked again
    /// shortly if the store refused it), or, if either player is no longer
    /// free, scores it as lost by abandon.
    fn seat_tourney_game(
        &mut self,
        ctx: &mut Context<Self>,
        id: TourneyId,
        round: u32,
        pairing: Pairing,
        start: Vec<Move>,
    ) {
        let Ok(held) = self.tourneys.get(id) else {
            return;
        };
        let terms = TourneyTerms {
            tourney: id,
            round,
            variant: held.spec.variant,
            clock: held.spec.clock,
            rated: held.spec.rated,
            start,
        };
        let waits = touching_both(Name::clone(&pairing.black), Name::clone(&pairing.white));
        self.when_free(ctx, waits, move |act, ctx| {
            let (black, white) = (Name::clone(&pairing.black), Name::clone(&pairing.white));
            let next = &mut act.next_game;
            let decided = (act.core).tourney_game(&black, &white, terms.clone(), || take(next));
            let Ok(done) = decided else {
                let free = [&black, &white].map(|n| act.core.free_to_play(n));
                let absent = match free {
                    [true, true] => [true, true],
                    free => free.map(|f| !f),
                };
                return act.tourney_game_unmade(ctx, id, round, &pairing, absent);
            };
            let (reply, answer) = oneshot::channel();
            act.conclude(ctx, Ok(done), reply, move |act, game| {
                act.tourneys.game_made(id, &black, &white, game);
                Ok(())
            });
            let retry = async move { matches!(answer.await, Ok(Err(_))) };
            ctx.spawn(retry.into_actor(act).map(move |refused, _, ctx| {
                if refused {
                    ctx.run_later(MAKE_RETRY, move |act, ctx| {
                        act.seat_tourney_game(ctx, id, round, pairing, terms.start);
                    });
                }
            }));
        });
    }

    /// The pairing's game could not be made: scored as lost by abandon
    /// (if the round still waited for it), stored, then what follows.
    fn tourney_game_unmade(
        &mut self,
        ctx: &mut Context<Self>,
        id: TourneyId,
        round: u32,
        pairing: &Pairing,
        absent: [bool; 2],
    ) {
        let core = &self.core;
        let (black, white) = (&pairing.black, &pairing.white);
        let free = |n: &str| core.free_to_play(n);
        let Some(next) = self.tourneys.unmade(id, black, white, absent, free) else {
            return;
        };
        let forfeit = Forfeit {
            pairing: pairing.clone(),
            absent,
        };
        let write = TourneyWrite::Forfeit {
            id,
            forfeit: stored_forfeit(round, &forfeit),
        };
        self.store_fact(ctx, id, write, move |act, ctx| {
            act.tell_forfeit(id, round, &forfeit);
            act.carry_on(ctx, id, next);
        });
    }

    /// A game's end went out: if it is a tournament's, what follows.
    pub(super) fn tourney_game_over(
        &mut self,
        ctx: &mut Context<Self>,
        game: u64,
        result: GameResult,
    ) {
        let core = &self.core;
        let scores = (result.black, result.white);
        let over = (self.tourneys).game_over(game, result.winner, scores, |n| core.free_to_play(n));
        if let Some((id, next)) = over {
            self.carry_on(ctx, id, next);
        }
    }

    /// After a restart, once the players have had the seat grace to come
    /// back: each running tournament makes the games its round still needs,
    /// or begins its next round.
    pub(super) fn resume_tourneys(&mut self, ctx: &mut Context<Self>) {
        for id in self.tourneys.running() {
            let core = &self.core;
            let next = self.tourneys.resume_play(id, |n| core.free_to_play(n));
            self.carry_on(ctx, id, next);
        }
    }
}

/// The write that makes `next` a fact: a round (begun or gone on) with its
/// forfeits, or the end; nothing to wait for.
fn facts_of(id: TourneyId, next: &Next) -> Option<TourneyWrite> {
    match next {
        Next::Wait => None,
        Next::Over(winner) => Some(TourneyWrite::Over {
            id,
            winner: winner.as_ref().map(|w| w.to_string()),
        }),
        Next::Round {
            round, forfeits, ..
        } => Some(TourneyWrite::Round {
            id,
            round: *round,
            forfeits: forfeits.iter().map(|f| stored_forfeit(*round, f)).collect(),
        }),
    }
}

fn stored_forfeit(round: u32, forfeit: &Forfeit) -> StoredForfeit {
    StoredForfeit {
        round,
        black: forfeit.pairing.black.to_string(),
        white: forfeit.pairing.white.to_string(),
        absent: forfeit.absent,
    }
}

fn answer_if(stored: bool, answer: TourneyAnswer) -> Result<TourneyAnswer, ProtocolError> {
    if stored {
        Ok(answer)
    } else {
        Err(ProtocolError::new(
            ErrorCode::Unavailable,
            "the tournament change could not be saved, so nothing changed; try again",
        ))
    }
}
