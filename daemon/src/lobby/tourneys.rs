//! The lobby actor's side of tournaments: the rules decide
//! (`rules::tourneys`, `rules::tourney_run`), this stores what happened,
//! tells the players, and makes each round's games through the lobby core
//! as an accepted challenge's are.
//!
//! `TOURNEY NEW`, `JOIN` and `LEAVE` are answered once stored, and the
//! lobby waits for that write (at most the store deadline): they are rare,
//! and waiting keeps a tournament's players exactly what the store holds
//! without tracking half-done joins. What a round does (its start, its
//! forfeits, its end) is written without waiting, in order; its games are
//! stored with their link to the tournament, in the game's own row.

use std::collections::HashMap;
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
use crate::messages::{Name, RecoverTourneys, ToSession, TourneyAnswer, TourneyOp};
use crate::random::random_u64;
use crate::rules::lobby::TourneyTerms;
use crate::rules::tourney_run::{Fact, Forfeit, Next, Pairing, Tourney};
use crate::rules::tourneys::{Held, kind_of};
use crate::session::Reach;
use crate::store::{StoredTourney, TourneyWrite, Write};
use crate::store_deadline::within;

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
                self.change_players(ctx, name, id, true, reply);
            }
            (TourneyCommand::Leave(id), Some(name)) => {
                self.change_players(ctx, name, id, false, reply);
            }
            (TourneyCommand::Start(id), Some(name)) => {
                let core = &self.core;
                let started = self.tourneys.start(id, &name, |n| core.free_to_play(n));
                match started {
                    Ok(next) => {
                        let _ = reply.send(Ok(TourneyAnswer::Done));
                        self.carry_on(ctx, id, next);
                    }
                    Err(e) => {
                        let _ = reply.send(Err(e));
                    }
                }
            }
        }
        answered(answer)
    }
}

type TourneyReply = oneshot::Sender<Result<TourneyAnswer, ProtocolError>>;

impl Lobby {
    /// Commits `write`, holding the lobby until it is stored or the store
    /// deadline passes, then `then` with whether it was stored.
    fn store_then(
        &mut self,
        ctx: &mut Context<Self>,
        write: TourneyWrite,
        then: impl FnOnce(&mut Lobby, bool) + 'static,
    ) {
        let what = write.summary();
        let commit = within(
            self.live.store_deadline(),
            self.services.store.commit(Write::Tourney(write)),
        );
        ctx.wait(commit.into_actor(self).map(move |stored, act, _| {
            if let Err(error) = &stored {
                tracing::error!(%error, what, "a tournament change could not be saved");
            }
            then(act, stored.is_ok());
        }));
    }

    fn new_tourney(
        &mut self,
        ctx: &mut Context<Self>,
        name: Name,
        spec: TourneySpec,
        reply: TourneyReply,
    ) {
        let id = match self.tourneys.create(&name, spec) {
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
        self.store_then(ctx, write, move |act, stored| {
            if !stored {
                act.tourneys.uncreate(id);
            }
            let _ = reply.send(answer_if(stored, TourneyAnswer::Made(id)));
        });
    }

    /// `TOURNEY JOIN` (`joining`) or `LEAVE`: checked, stored, then done
    /// (checked again: nothing else ran while the lobby waited).
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
        self.store_then(ctx, write, move |act, stored| {
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

    /// Carries out what a tournament does next: a round (told, its
    /// forfeits stored, its games made), or its end.
    fn carry_on(&mut self, ctx: &mut Context<Self>, id: TourneyId, next: Next) {
        let mut next = next;
        loop {
            match next {
                Next::Wait => return,
                Next::Over(winner) => {
                    let winner = winner.map(|w| w.to_string());
                    tracing::info!(tourney = id, ?winner, "tournament over");
                    let write = TourneyWrite::Over {
                        id,
                        winner: winner.clone(),
                    };
                    self.services.store.write(Write::Tourney(write));
                    self.tell_players(id, TourneyNews::Over(winner));
                    self.tourneys.over();
                    return;
                }
                Next::Round {
                    round,
                    games,
                    forfeits,
                } => {
                    tracing::info!(tourney = id, round, games = games.len(), "tournament round");
                    let write = TourneyWrite::Round { id, round };
                    self.services.store.write(Write::Tourney(write));
                    self.tell_players(id, TourneyNews::Round(round));
                    for forfeit in &forfeits {
                        self.forfeited(id, round, forfeit);
                    }
                    if games.is_empty() {
                        let core = &self.core;
                        next = self.tourneys.next_round(id, |n| core.free_to_play(n));
                        continue;
                    }
                    for pairing in games {
                        self.make_tourney_game(ctx, id, round, pairing);
                    }
                    return;
                }
            }
        }
    }

    /// Stores a game lost by abandon before a move, and tells the player
    /// who was there.
    fn forfeited(&mut self, id: TourneyId, round: u32, forfeit: &Forfeit) {
        let Forfeit { pairing, absent } = forfeit;
        let write = TourneyWrite::Forfeit {
            id,
            round,
            black: pairing.black.to_string(),
            white: pairing.white.to_string(),
            absent: *absent,
        };
        self.services.store.write(Write::Tourney(write));
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
            act.services.store.write(Write::Tourney(write));
            act.seat_tourney_game(ctx, id, round, pairing, start);
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

    fn tourney_game_unmade(
        &mut self,
        ctx: &mut Context<Self>,
        id: TourneyId,
        round: u32,
        pairing: &Pairing,
        absent: [bool; 2],
    ) {
        let forfeit = Forfeit {
            pairing: pairing.clone(),
            absent,
        };
        self.forfeited(id, round, &forfeit);
        let core = &self.core;
        let (black, white) = (&pairing.black, &pairing.white);
        let next = (self.tourneys).unmade(id, black, white, absent, |n| core.free_to_play(n));
        self.carry_on(ctx, id, next);
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
    fn resume_tourneys(&mut self, ctx: &mut Context<Self>) {
        for id in self.tourneys.running() {
            let core = &self.core;
            let next = self.tourneys.resume_play(id, |n| core.free_to_play(n));
            self.carry_on(ctx, id, next);
        }
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

/// A stored tournament as the rules hold it: its pairings drawn again from
/// its facts.
fn resumed(stored: StoredTourney) -> (TourneyId, Held) {
    let StoredTourney {
        id,
        creator,
        spec,
        players,
        round,
        over,
        games,
        forfeits,
        starts,
    } = stored;
    let same = |a: &str, b: &str| a.eq_ignore_ascii_case(b);
    let fact = |r: u32, p: &Pairing| {
        let forfeit = (forfeits.iter())
            .find(|f| f.round == r && same(&f.black, &p.black) && same(&f.white, &p.white));
        if let Some(forfeit) = forfeit {
            return Some(Fact::Forfeit(forfeit.absent));
        }
        (games.iter())
            .rfind(|g| g.round == r && same(&g.black, &p.black) && same(&g.white, &p.white))
            .map(|g| Fact::Made(g.game, g.result))
    };
    let players = players.into_iter().map(Name::from).collect();
    let tourney = Tourney::resume(
        kind_of(&spec),
        Name::from(creator),
        players,
        round,
        over,
        fact,
    );
    let starts: HashMap<u32, Vec<Move>> = starts.into_iter().collect();
    (id, Held::new(spec, tourney, starts))
}

impl Handler<RecoverTourneys> for Lobby {
    type Result = ();

    fn handle(&mut self, RecoverTourneys(stored): RecoverTourneys, ctx: &mut Context<Self>) {
        for stored in stored {
            let (id, held) = resumed(stored);
            for game in held.tourney.games_in_play() {
                self.core.mark_tourney_game(game);
            }
            self.tourneys.restore(id, held);
        }
        let grace = Duration::from_secs(self.services.config.grace_secs);
        ctx.run_later(grace, |act, ctx| act.resume_tourneys(ctx));
    }
}
