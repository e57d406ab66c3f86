//! The tournament desk: every decision about tournaments, and the one way
//! each is held until stored.
//!
//! The desk owns the tournaments ([`Tourneys`]) and, per tournament, one
//! line of writes in the order they were decided. Nothing the
//! desk decides is acted on or answered before its write is stored:
//! - a command's write (`TOURNEY NEW`, `JOIN`, `LEAVE`, `START`) is tried
//!   once; stored, it is applied and answered `OK`; refused, it is answered
//!   `ERR 503` and nothing changed (`START` is decided on a copy of the
//!   tournament, kept only once stored);
//! - a fact the tournament goes on from (a round begun with its forfeits, a
//!   forfeit, a start drawn, its end) is written again after a growing
//!   pause until it is stored, then acted on.
//!
//! While a tournament's write is not stored, its later commands and facts
//! wait in its line, so what a command checks is what the store holds and
//! the store never holds a later fact without an earlier one.
//!
//! Pure: the shell passes in who is free to play (the lobby core knows),
//! carries out the [`DeskEffect`]s in order, and reports back what became of
//! each: a write stored or not ([`TourneyDesk::stored`]), a start drawn, a
//! game made or not, an alarm gone off. `T` is whatever the shell answers a
//! command through; the desk only hands it back.
//!
//! The lobby core keeps the same promise another way: it applies a decision
//! at once and keeps a journal to put it back (`lobby/journal.rs`). The
//! lobby's state is too large to copy and every player's commands go
//! through it, so it must not stop; a tournament's state is small and its
//! commands few, so the desk applies a command only once its write is
//! stored (deciding `START` on a copy).

use std::collections::{HashMap, VecDeque};
use std::time::Duration;

use flipline::protocol::{
    Event, GameId, GameResult, TourneyCommand, TourneyId, TourneyNews, TourneySpec,
};
use flipline::{Move, Variant};

use crate::Name;
use crate::lobby::TourneyTerms;
use crate::table::end_retry_delay;
use crate::tourney::{Forfeit, Next, Pairing};
use crate::tourney_facts::{StoredForfeit, TourneyWrite};
use crate::tourneys::Tourneys;

#[cfg(test)]
mod adopt_tests;
mod recovery;
#[cfg(test)]
mod tests;

use crate::refusal::Refusal;
use recovery::Recovering;

/// How long after the store refused a round's game it is asked for again.
pub const MAKE_RETRY: Duration = Duration::from_secs(1);

/// Who is free to play a tournament game now (online, in no game in play):
/// the lobby core's answer, passed in.
pub type Free<'a> = &'a dyn Fn(&str) -> bool;

/// The answer to a `TOURNEY` command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TourneyAnswer {
    /// `NEW`: the tournament made.
    Made(TourneyId),
    /// `JOIN`, `LEAVE`, `START`.
    Done,
    /// `LIST`, `SHOW`: the data lines.
    Lines(Vec<Event>),
}

/// What the shell does for the desk, in the order given.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DeskEffect<T> {
    /// Store this write of its tournament, then call
    /// [`TourneyDesk::stored`] with whether it was.
    Store(TourneyWrite),
    /// Store the end of a game that the stored moves ended at a restart
    /// (the attempt it is), then call [`TourneyDesk::end_stored`].
    StoreEnd(GameId, GameResult, u32),
    /// Answer a command.
    Reply(T, Result<TourneyAnswer, Refusal>),
    /// Tell `name`, if online.
    Tell(Name, Event),
    /// Draw a random start of `plies` moves in `variant` for `pairing`'s
    /// group, then call [`TourneyDesk::start_drawn`].
    DrawStart {
        /// The tournament.
        tourney: TourneyId,
        /// The round.
        round: u32,
        /// The game it is for.
        pairing: Pairing,
        /// The tournament's game.
        variant: Variant,
        /// How many random moves.
        plies: u8,
    },
    /// Make the round's game for `pairing` through the lobby core (held
    /// until stored), then call [`TourneyDesk::game_made`],
    /// [`TourneyDesk::game_refused`] or [`TourneyDesk::game_unmade`].
    MakeGame(Pairing, TourneyTerms),
    /// Call [`TourneyDesk::wake`] with this alarm after the pause.
    Wake(Duration, Alarm),
    /// Game `game`, recovered at a restart, is a tournament's: the lobby
    /// core marks it so (no rematch).
    MarkGame(GameId),
    /// Game `game` of a tournament was not brought back at a restart: its
    /// pairing's game is made again (worth a line in the log).
    Remade(GameId),
    /// Game `game` of a tournament taken over is in play on another node
    /// (or not yet taken over): the shell reads its end from the store
    /// when it hears it is over, and now and then, then calls
    /// [`TourneyDesk::game_over`] or [`TourneyDesk::game_gone`].
    Follow(GameId),
}

/// What the desk is to be woken for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Alarm {
    /// Write tournament `id`'s refused fact again.
    Rewrite(TourneyId),
    /// Ask for the round's game again.
    Make(Pairing, TourneyTerms),
    /// Store a recovered game's end again (the attempt it will be).
    RewriteEnd(GameId, GameResult, u32),
    /// The players have had the seat grace after a restart: the running
    /// tournaments go on.
    Resume,
    /// The players have had the seat grace after these tournaments were
    /// taken over: they go on.
    ResumeAdopted(Vec<TourneyId>),
}

/// What follows a fact once it is stored.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Then {
    /// The tournament goes on as `next` says.
    GoOn(Next),
    /// The round's game for the pairing is made from the stored start.
    Make(Pairing, TourneyTerms),
    /// The player who was there hears of the forfeit; then `next`.
    Forfeited(u32, Forfeit, Next),
}

/// A command that changes a tournament.
#[derive(Clone, Copy, Debug)]
enum Order {
    New(TourneySpec),
    Join,
    Leave,
    Start,
}

/// What waits in a tournament's line.
#[derive(Clone, Debug)]
enum Queued<T> {
    /// A command, checked when its turn comes.
    Command(Name, Order, T),
    /// A fact, written until stored.
    Fact(TourneyWrite, Then),
}

/// The write a tournament waits on.
#[derive(Clone, Debug)]
enum Writing<T> {
    /// A command's, tried once; `apply` is what it does once stored.
    Command(TourneyWrite, Apply, T),
    /// A fact's, the attempt it is on; written again after a pause if
    /// refused (`paused` meanwhile).
    Fact {
        write: TourneyWrite,
        then: Then,
        attempt: u32,
        paused: bool,
    },
}

/// What a command's write does once stored.
#[derive(Clone, Debug)]
enum Apply {
    Made(Name, TourneySpec),
    Joined(Name),
    Left(Name),
    /// The tournament as `START` left it, and what it does first.
    Started(Box<crate::tourney::Tourney>, Next),
}

/// One tournament's writes: the one not yet stored, and what waits behind it.
#[derive(Debug)]
struct Line<T> {
    writing: Option<Writing<T>>,
    waiting: VecDeque<Queued<T>>,
}

impl<T> Default for Line<T> {
    fn default() -> Line<T> {
        Line {
            writing: None,
            waiting: VecDeque::new(),
        }
    }
}

/// The tournaments and their writes not yet stored (see the module docs).
#[derive(Debug)]
pub struct TourneyDesk<T> {
    tourneys: Tourneys,
    lines: HashMap<TourneyId, Line<T>>,
    recovering: Recovering,
}

/// Effects, in order.
pub type Effects<T> = Vec<DeskEffect<T>>;

impl<T> TourneyDesk<T> {
    /// No tournaments; the next is numbered `next_id`.
    pub fn new(next_id: TourneyId) -> TourneyDesk<T> {
        TourneyDesk {
            tourneys: Tourneys::new(next_id),
            lines: HashMap::new(),
            recovering: Recovering::default(),
        }
    }

    /// The tournaments as they stand (what `LIST` and `SHOW` read).
    pub fn tourneys(&self) -> &Tourneys {
        &self.tourneys
    }

    /// Whether tournament `id` is this desk's.
    pub fn holds(&self, id: TourneyId) -> bool {
        self.tourneys.get(id).is_ok()
    }

    /// A `TOURNEY` command; `member` is who asks if a registered name
    /// (tournaments are for them; anyone may list and show).
    pub fn command(
        &mut self,
        member: Option<Name>,
        command: TourneyCommand,
        reply: T,
        free: Free,
    ) -> Effects<T> {
        let (id, order) = match command {
            TourneyCommand::List => return vec![DeskEffect::Reply(reply, Ok(self.list()))],
            TourneyCommand::Show(id) => return vec![DeskEffect::Reply(reply, self.show(id))],
            TourneyCommand::New(spec) => (None, Order::New(spec)),
            TourneyCommand::Join(id) => (Some(id), Order::Join),
            TourneyCommand::Leave(id) => (Some(id), Order::Leave),
            TourneyCommand::Start(id) => (Some(id), Order::Start),
        };
        let Some(name) = member else {
            return vec![DeskEffect::Reply(reply, Err(Refusal::TourneysForMembers))];
        };
        // A new tournament's number is taken now: its line is its own.
        let line = match id.map_or_else(|| self.tourneys.take_id(&name), Ok) {
            Ok(line) => line,
            Err(e) => return vec![DeskEffect::Reply(reply, Err(e))],
        };
        let queued = Queued::Command(name, order, reply);
        self.lines
            .entry(line)
            .or_default()
            .waiting
            .push_back(queued);
        let mut effects = Vec::new();
        self.pump(line, free, &mut effects);
        effects
    }

    /// `TOURNEY LIST`'s lines.
    fn list(&self) -> TourneyAnswer {
        let lines = self.tourneys.list().into_iter().map(Event::Tourney);
        TourneyAnswer::Lines(lines.collect())
    }

    /// `TOURNEY SHOW`'s lines.
    fn show(&self, id: TourneyId) -> Result<TourneyAnswer, Refusal> {
        let standings = self.tourneys.standings(id)?;
        Ok(TourneyAnswer::Lines(
            standings.into_iter().map(Event::Standing).collect(),
        ))
    }

    /// Runs what waits in `id`'s line, in order, until a write is sent.
    fn pump(&mut self, id: TourneyId, free: Free, effects: &mut Effects<T>) {
        loop {
            let Some(line) = self.lines.get_mut(&id) else {
                return;
            };
            if line.writing.is_some() {
                return;
            }
            let Some(queued) = line.waiting.pop_front() else {
                self.lines.remove(&id);
                return;
            };
            let writing = match queued {
                Queued::Fact(write, then) => Some(Writing::Fact {
                    write,
                    then,
                    attempt: 1,
                    paused: false,
                }),
                Queued::Command(name, order, reply) => {
                    self.check(id, name, order, reply, free, effects)
                }
            };
            if let Some(writing) = writing {
                effects.push(DeskEffect::Store(write_of(&writing).clone()));
                if let Some(line) = self.lines.get_mut(&id) {
                    line.writing = Some(writing);
                }
            }
        }
    }

    /// A command's turn: refused (answered now), or its write to send.
    fn check(
        &mut self,
        id: TourneyId,
        name: Name,
        order: Order,
        reply: T,
        free: Free,
        effects: &mut Effects<T>,
    ) -> Option<Writing<T>> {
        let player = name.to_string();
        let decided = match order {
            Order::New(spec) => Ok((
                TourneyWrite::New {
                    id,
                    creator: player,
                    spec,
                },
                Apply::Made(name, spec),
            )),
            Order::Join => (self.tourneys.may_join(id, &name))
                .map(|()| (TourneyWrite::Join { id, name: player }, Apply::Joined(name))),
            Order::Leave => (self.tourneys.may_leave(id, &name))
                .map(|()| (TourneyWrite::Leave { id, name: player }, Apply::Left(name))),
            Order::Start => self.decide_start(id, &name, free),
        };
        match decided {
            Ok((write, apply)) => Some(Writing::Command(write, apply, reply)),
            Err(e) => {
                effects.push(DeskEffect::Reply(reply, Err(e)));
                None
            }
        }
    }

    /// `START` decided on a copy of the tournament: kept once stored.
    fn decide_start(
        &self,
        id: TourneyId,
        by: &str,
        free: Free,
    ) -> Result<(TourneyWrite, Apply), Refusal> {
        let mut copy = self.tourneys.get(id)?.tourney.clone();
        let next = copy.start(by, free)?;
        let write = facts_of(id, &next).unwrap_or(TourneyWrite::Round {
            id,
            round: 1,
            forfeits: Vec::new(),
        });
        Ok((write, Apply::Started(Box::new(copy), next)))
    }

    /// The write of tournament `id` sent last was stored (`stored`) or not.
    pub fn stored(&mut self, id: TourneyId, stored: bool, free: Free) -> Effects<T> {
        let mut effects = Vec::new();
        let Some(line) = self.lines.get_mut(&id) else {
            return effects;
        };
        match line.writing.take() {
            Some(Writing::Command(_, apply, reply)) => {
                let answer = match stored {
                    true => self.apply(id, apply, free, &mut effects),
                    false => Err(Refusal::NotSaved),
                };
                // The answer first, then what the command set going.
                effects.insert(0, DeskEffect::Reply(reply, answer));
            }
            Some(Writing::Fact { then, .. }) if stored => self.then(id, then, free, &mut effects),
            Some(Writing::Fact {
                write,
                then,
                attempt,
                ..
            }) => {
                let pause = end_retry_delay(attempt);
                line.writing = Some(Writing::Fact {
                    write,
                    then,
                    attempt: attempt.saturating_add(1),
                    paused: true,
                });
                effects.push(DeskEffect::Wake(pause, Alarm::Rewrite(id)));
                return effects;
            }
            None => {}
        }
        self.pump(id, free, &mut effects);
        effects
    }

    /// A command's write is stored: it is carried out.
    fn apply(
        &mut self,
        id: TourneyId,
        apply: Apply,
        free: Free,
        effects: &mut Effects<T>,
    ) -> Result<TourneyAnswer, Refusal> {
        match apply {
            Apply::Made(creator, spec) => {
                self.tourneys.made(id, &creator, spec);
                Ok(TourneyAnswer::Made(id))
            }
            Apply::Joined(name) => (self.tourneys.join(id, &name)).map(|()| TourneyAnswer::Done),
            Apply::Left(name) => (self.tourneys.leave(id, &name)).map(|()| TourneyAnswer::Done),
            Apply::Started(tourney, next) => {
                self.tourneys.put(id, *tourney);
                self.go_on(id, next, free, effects);
                Ok(TourneyAnswer::Done)
            }
        }
    }

    /// What a stored fact lets follow.
    fn then(&mut self, id: TourneyId, then: Then, free: Free, effects: &mut Effects<T>) {
        match then {
            Then::GoOn(next) => self.go_on(id, next, free, effects),
            Then::Make(pairing, terms) => effects.push(DeskEffect::MakeGame(pairing, terms)),
            Then::Forfeited(round, forfeit, next) => {
                tell_forfeit(id, round, &forfeit, effects);
                self.carry_on(id, next, free, effects);
            }
        }
    }

    /// An alarm the desk asked for went off.
    pub fn wake(&mut self, alarm: Alarm, free: Free) -> Effects<T> {
        let mut effects = Vec::new();
        match alarm {
            Alarm::Rewrite(id) => {
                let writing = (self.lines.get_mut(&id)).and_then(|l| l.writing.as_mut());
                if let Some(Writing::Fact { write, paused, .. }) = writing
                    && *paused
                {
                    *paused = false;
                    effects.push(DeskEffect::Store(write.clone()));
                }
            }
            Alarm::Make(pairing, terms) => effects.push(DeskEffect::MakeGame(pairing, terms)),
            Alarm::RewriteEnd(game, result, attempt) => {
                effects.push(DeskEffect::StoreEnd(game, result, attempt));
            }
            Alarm::Resume => self.resume(free, &mut effects),
            Alarm::ResumeAdopted(ids) => self.resume_adopted(&ids, free, &mut effects),
        }
        effects
    }

    /// Stores `next`'s facts first, if it has any, then goes on.
    fn carry_on(&mut self, id: TourneyId, next: Next, free: Free, effects: &mut Effects<T>) {
        match facts_of(id, &next) {
            Some(write) => self.queue_fact(id, write, Then::GoOn(next), free, effects),
            None => self.go_on(id, next, free, effects),
        }
    }

    fn queue_fact(
        &mut self,
        id: TourneyId,
        write: TourneyWrite,
        then: Then,
        free: Free,
        effects: &mut Effects<T>,
    ) {
        let line = self.lines.entry(id).or_default();
        line.waiting.push_back(Queued::Fact(write, then));
        self.pump(id, free, effects);
    }

    /// Carries out what a tournament does next, its facts stored: a round
    /// (told to its players as it begins, its forfeits to who was there,
    /// its games asked for), or its end.
    fn go_on(&mut self, id: TourneyId, next: Next, free: Free, effects: &mut Effects<T>) {
        match next {
            Next::Wait => {}
            Next::Over(winner) => {
                self.tell_players(
                    id,
                    TourneyNews::Over(winner.map(|w| w.to_string())),
                    effects,
                );
                let lines = &self.lines;
                self.tourneys.over(|t| lines.contains_key(&t));
            }
            Next::Round {
                round,
                begins,
                games,
                forfeits,
            } => {
                if begins {
                    self.tell_players(id, TourneyNews::Round(round), effects);
                }
                for forfeit in &forfeits {
                    tell_forfeit(id, round, forfeit, effects);
                }
                if games.is_empty() {
                    let next = self.tourneys.next_round(id, free);
                    return self.carry_on(id, next, free, effects);
                }
                for pairing in games {
                    self.make_game(id, round, pairing, effects);
                }
            }
        }
    }

    /// Asks for the round's game for `pairing`, from the start its group
    /// shares (drawn first if it is the group's first game).
    fn make_game(&mut self, id: TourneyId, round: u32, pairing: Pairing, effects: &mut Effects<T>) {
        let Ok(held) = self.tourneys.get(id) else {
            return;
        };
        let (variant, plies) = (held.spec.variant, held.spec.random_start);
        let start = self.tourneys.start_of(id, pairing.start_group);
        match (plies, start) {
            (Some(plies), None) => effects.push(DeskEffect::DrawStart {
                tourney: id,
                round,
                pairing,
                variant,
                plies,
            }),
            (_, start) => {
                let start = start.map(<[Move]>::to_vec).unwrap_or_default();
                if let Some(terms) = self.terms(id, round, start) {
                    effects.push(DeskEffect::MakeGame(pairing, terms));
                }
            }
        }
    }

    fn terms(&self, id: TourneyId, round: u32, start: Vec<Move>) -> Option<TourneyTerms> {
        let held = self.tourneys.get(id).ok()?;
        Some(TourneyTerms {
            tourney: id,
            round,
            variant: held.spec.variant,
            clock: held.spec.clock,
            rated: held.spec.rated,
            start,
        })
    }

    /// The start for `pairing`'s group was drawn (empty: none could be,
    /// the usual start instead): stored, then its game is made.
    pub fn start_drawn(
        &mut self,
        id: TourneyId,
        round: u32,
        pairing: Pairing,
        moves: Vec<Move>,
        free: Free,
    ) -> Effects<T> {
        let mut effects = Vec::new();
        let group = pairing.start_group;
        self.tourneys.set_start(id, group, moves.clone());
        let write = TourneyWrite::Start {
            id,
            group,
            moves: moves.clone(),
        };
        if let Some(terms) = self.terms(id, round, moves) {
            let then = Then::Make(pairing, terms);
            self.queue_fact(id, write, then, free, &mut effects);
        }
        effects
    }

    /// The round's game for `pairing` is stored as `game`.
    pub fn game_made(&mut self, pairing: &Pairing, terms: &TourneyTerms, game: GameId) {
        let id = terms.tourney;
        self.tourneys
            .game_made(id, &pairing.black, &pairing.white, game);
    }

    /// The store refused the round's game: it is asked for again shortly.
    pub fn game_refused(&mut self, pairing: Pairing, terms: TourneyTerms) -> Effects<T> {
        vec![DeskEffect::Wake(MAKE_RETRY, Alarm::Make(pairing, terms))]
    }

    /// The round's game could not be made, a player no longer being free:
    /// the absent lose it by abandon (both, if both seemed free yet the
    /// game could not be made), stored, then what follows.
    pub fn game_unmade(
        &mut self,
        pairing: Pairing,
        terms: &TourneyTerms,
        free: Free,
    ) -> Effects<T> {
        let mut effects = Vec::new();
        let (id, round) = (terms.tourney, terms.round);
        let absent = match [free(&pairing.black), free(&pairing.white)] {
            [true, true] => [true, true],
            present => present.map(|here| !here),
        };
        let (black, white) = (&pairing.black, &pairing.white);
        let Some(next) = self.tourneys.unmade(id, black, white, absent, free) else {
            return effects;
        };
        let forfeit = Forfeit { pairing, absent };
        let write = TourneyWrite::Forfeit {
            id,
            forfeit: stored_forfeit(round, &forfeit),
        };
        let then = Then::Forfeited(round, forfeit, next);
        self.queue_fact(id, write, then, free, &mut effects);
        effects
    }

    /// A game's end went out (`OVER` and `RATED` told): if it is a
    /// tournament's, what follows.
    pub fn game_over(&mut self, game: GameId, result: &GameResult, free: Free) -> Effects<T> {
        let mut effects = Vec::new();
        let scores = (result.black, result.white);
        // Taken over and waiting for its players: it counts, nothing follows
        // until the tournament resumes.
        if (self.tourneys.of_game(game)).is_some_and(|id| self.adopting(id)) {
            self.tourneys.settle(game, result.winner, scores);
            return effects;
        }
        if let Some((id, next)) = self.tourneys.game_over(game, result.winner, scores, free) {
            self.carry_on(id, next, free, &mut effects);
        }
        effects
    }

    /// Tells tournament `id`'s players `news`.
    fn tell_players(&self, id: TourneyId, news: TourneyNews, effects: &mut Effects<T>) {
        let Ok(held) = self.tourneys.get(id) else {
            return;
        };
        for player in held.tourney.players() {
            let news = news.clone();
            let event = Event::TourneyNews { id, news };
            effects.push(DeskEffect::Tell(Name::clone(player), event));
        }
    }

    /// Whether tournament `id` has writes not yet stored.
    pub fn is_busy(&self, id: TourneyId) -> bool {
        self.lines.contains_key(&id)
    }
}

/// The write a tournament waits on.
fn write_of<T>(writing: &Writing<T>) -> &TourneyWrite {
    match writing {
        Writing::Command(write, ..) | Writing::Fact { write, .. } => write,
    }
}

/// Tells the player who was there that the other lost their game by
/// abandon.
fn tell_forfeit<T>(id: TourneyId, round: u32, forfeit: &Forfeit, effects: &mut Effects<T>) {
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
        effects.push(DeskEffect::Tell(Name::clone(present), Event::Info(text)));
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
