//! One tournament's life, as rules: who is in it, its rounds, the games of
//! each, their results, and when it is over. `rules::tourney_pairing` pairs the
//! players and ranks them; this keeps the state between those steps.
//!
//! Pure, like the other cores: the shell makes the games a round asks for,
//! says which players are connected when a round starts (an absent player
//! loses that game by abandon, as PROTOCOL.md says), and reports each game's end.
//!
//! - Round robin: each round of the circle method is played twice, colours
//!   swapped and from the same start, one game after the other (a player
//!   plays one game at a time): `2 (n - 1)` rounds for `n` players (`n`
//!   rounds of the circle for an odd field), so every pair plays twice.
//! - Swiss: the rounds asked for (at most the field less one), each paired
//!   from the standings so far; with an odd field one player has a bye.

use flipline::Color;
use flipline::protocol::GameId;

use super::Name;
use super::tourney_pairing::{Played, Standing, round_robin, standings, swiss_round};
use crate::refusal::Refusal;

/// The most players one tournament takes.
pub const MAX_PLAYERS: usize = 64;

/// The kind of a tournament.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Every pair twice, colours swapped.
    RoundRobin,
    /// This many rounds, paired by points; 0: as many as it takes to part
    /// the field (log2 of it, rounded up), decided at the start.
    Swiss(u32),
}

/// Where a tournament stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    /// Taking players.
    Open,
    /// Playing this round (from 1).
    Running(u32),
    /// Done.
    Over,
}

/// A game a round asks for: its players, and which start it shares (the
/// two games of a round-robin pair share one; `from random:N`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pairing {
    /// Black.
    pub black: Name,
    /// White.
    pub white: Name,
    /// Games with the same start group begin from the same position.
    pub start_group: u32,
}

/// A game of the current round: what it was asked for, and once made, its
/// number.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Board {
    pairing: Pairing,
    game: Option<GameId>,
    result: Option<Played>,
    /// Whether a `Next::Round` of this run asked the shell for its game
    /// (not yet, for a board read back after a restart): it is asked for
    /// once only.
    requested: bool,
}

/// What the shell does next.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Next {
    /// Round `round` begins, or goes on after a restart: make these games
    /// (each player connected; `forfeits` are the games whose absent
    /// players lost, already scored).
    Round {
        /// Its number, from 1.
        round: u32,
        /// Whether it begins now (else it began before a restart, and
        /// these are the games it still needs).
        begins: bool,
        /// The games to make.
        games: Vec<Pairing>,
        /// The games lost by abandon before they began, already scored.
        forfeits: Vec<Forfeit>,
    },
    /// Games of the round are still being played.
    Wait,
    /// The tournament is over: its winner (`None`: a tie on points and
    /// disc difference at the top).
    Over(Option<Name>),
}

/// One tournament (see the module docs).
#[derive(Clone, Debug)]
pub struct Tourney {
    kind: Kind,
    creator: Name,
    players: Vec<Name>,
    stage: Stage,
    boards: Vec<Board>,
    played: Vec<Played>,
    byes: Vec<Name>,
    /// The round robin's rounds, planned at the start.
    plan: Vec<Vec<(Name, Name)>>,
}

fn same(a: &str, b: &str) -> bool {
    a.eq_ignore_ascii_case(b)
}

/// A finished game's result with the winner's number the larger: in anti
/// the winner has fewer discs, and the standings count margins.
pub fn oriented(
    black: Name,
    white: Name,
    winner: Option<Color>,
    black_score: u32,
    white_score: u32,
) -> Played {
    let (low, high) = (black_score.min(white_score), black_score.max(white_score));
    let (black_discs, white_discs) = match winner {
        Some(Color::Black) => (high, low),
        Some(Color::White) => (low, high),
        None => (black_score, white_score),
    };
    Played {
        black,
        white,
        black_discs,
        white_discs,
    }
}

/// A game lost by abandon before it began: its pairing, and which sides
/// were away (black, white).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Forfeit {
    /// The game asked for.
    pub pairing: Pairing,
    /// Black away, white away.
    pub absent: [bool; 2],
}

/// What became of a stored pairing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fact {
    /// Lost by abandon before it began: which sides were absent (black,
    /// white).
    Forfeit([bool; 2]),
    /// Made as this game, and once over, its winner and its `OVER` scores.
    Made(GameId, Option<(Option<Color>, (u32, u32))>),
}

/// A Swiss's rounds when none were asked for: enough to part a field of
/// `players` (log2, rounded up), at least one, at most the field less one.
pub fn swiss_rounds_for(players: usize) -> u32 {
    let parting = usize::BITS - players.saturating_sub(1).leading_zeros();
    let most = u32::try_from(players.saturating_sub(1)).unwrap_or(u32::MAX);
    parting.clamp(1, most.max(1))
}

/// The result of a pairing lost by abandon before a move: the whole board
/// to the side present, a 32-32 draw if both were absent.
fn forfeited(pairing: &Pairing, absent: [bool; 2]) -> (Played, Forfeit) {
    let (black, white) = (Name::clone(&pairing.black), Name::clone(&pairing.white));
    let (winner, scores) = match absent {
        [true, false] => (Some(Color::White), (0, 64)),
        [false, true] => (Some(Color::Black), (64, 0)),
        _ => (None, (32, 32)),
    };
    let forfeit = Forfeit {
        pairing: pairing.clone(),
        absent,
    };
    (oriented(black, white, winner, scores.0, scores.1), forfeit)
}

impl Tourney {
    /// A tournament `creator` runs, open for players.
    pub fn new(kind: Kind, creator: Name) -> Tourney {
        Tourney {
            kind,
            creator,
            players: Vec::new(),
            stage: Stage::Open,
            boards: Vec::new(),
            played: Vec::new(),
            byes: Vec::new(),
            plan: Vec::new(),
        }
    }

    /// Where it stands.
    pub fn stage(&self) -> Stage {
        self.stage
    }

    /// Its players, in the order they joined.
    pub fn players(&self) -> &[Name] {
        &self.players
    }

    /// The rounds it has: a Swiss's as asked (or, asked for none, as its
    /// field now gives them), a round robin's as its field gives them.
    pub fn rounds(&self) -> u32 {
        match self.kind {
            Kind::Swiss(0) => swiss_rounds_for(self.players.len()),
            Kind::Swiss(rounds) => rounds,
            Kind::RoundRobin if self.stage == Stage::Open => {
                u32::try_from(round_robin(&self.players).len() * 2).unwrap_or(u32::MAX)
            }
            Kind::RoundRobin => u32::try_from(self.plan.len() * 2).unwrap_or(u32::MAX),
        }
    }

    /// Who runs it.
    pub fn creator(&self) -> &Name {
        &self.creator
    }

    /// How it pairs.
    pub fn kind(&self) -> Kind {
        self.kind
    }

    /// Whether `name` may join now (nothing changes).
    pub fn may_join(&self, name: &str) -> Result<(), Refusal> {
        if self.stage != Stage::Open {
            return Err(Refusal::TourneyStarted);
        }
        if self.players.iter().any(|p| same(p, name)) {
            return Err(Refusal::AlreadyIn);
        }
        if self.players.len() >= MAX_PLAYERS {
            return Err(Refusal::TourneyFull(MAX_PLAYERS));
        }
        Ok(())
    }

    /// `TOURNEY JOIN` from `name`.
    pub fn join(&mut self, name: &Name) -> Result<(), Refusal> {
        self.may_join(name)?;
        self.players.push(Name::clone(name));
        Ok(())
    }

    /// Whether `name` may leave now, before the start (nothing changes).
    pub fn may_leave(&self, name: &str) -> Result<(), Refusal> {
        if self.stage != Stage::Open {
            return Err(Refusal::TourneyStartedLeave);
        }
        if !self.players.iter().any(|p| same(p, name)) {
            return Err(Refusal::NotIn);
        }
        Ok(())
    }

    /// `TOURNEY LEAVE` from `name`, before the start.
    pub fn leave(&mut self, name: &str) -> Result<(), Refusal> {
        self.may_leave(name)?;
        self.players.retain(|p| !same(p, name));
        Ok(())
    }

    /// `TOURNEY START` from `by`: the first round, for the players
    /// `connected` says are online.
    pub fn start(&mut self, by: &str, connected: impl Fn(&str) -> bool) -> Result<Next, Refusal> {
        if !same(by, &self.creator) {
            return Err(Refusal::OnlyCreatorStarts);
        }
        if self.stage != Stage::Open {
            return Err(Refusal::TourneyStarted);
        }
        if self.players.len() < 2 {
            return Err(Refusal::NeedsTwo);
        }
        if self.kind == Kind::Swiss(0) {
            self.kind = Kind::Swiss(swiss_rounds_for(self.players.len()));
        }
        if let Kind::Swiss(rounds) = self.kind {
            let most = u32::try_from(self.players.len() - 1).unwrap_or(u32::MAX);
            if rounds == 0 || rounds > most {
                let players = self.players.len();
                return Err(Refusal::SwissRounds { rounds, players });
            }
        }
        self.plan = round_robin(&self.players);
        Ok(self.begin_round(1, &connected))
    }

    /// The games of round `round` (from 1).
    fn pairings(&mut self, round: u32) -> Option<Vec<Pairing>> {
        let index = usize::try_from(round.checked_sub(1)?).ok()?;
        match self.kind {
            Kind::RoundRobin => {
                let circle = self.plan.get(index / 2)?;
                let swapped = index % 2 == 1;
                let group = u32::try_from(index / 2).unwrap_or(u32::MAX);
                Some(
                    circle
                        .iter()
                        .zip(0u32..)
                        .map(|((a, b), i)| {
                            let (black, white) = if swapped { (b, a) } else { (a, b) };
                            Pairing {
                                black: Name::clone(black),
                                white: Name::clone(white),
                                start_group: group.saturating_mul(64).saturating_add(i),
                            }
                        })
                        .collect(),
                )
            }
            Kind::Swiss(_) => {
                let next = swiss_round(&self.players, &self.played, &self.byes)?;
                self.byes.extend(next.bye);
                let base = round.saturating_mul(64);
                Some(
                    next.games
                        .into_iter()
                        .zip(0u32..)
                        .map(|((black, white), i)| Pairing {
                            black,
                            white,
                            start_group: base.saturating_add(i),
                        })
                        .collect(),
                )
            }
        }
    }

    fn begin_round(&mut self, round: u32, connected: &dyn Fn(&str) -> bool) -> Next {
        if round > self.rounds() {
            return self.finish();
        }
        let Some(pairings) = self.pairings(round) else {
            return self.finish();
        };
        self.stage = Stage::Running(round);
        self.boards.clear();
        let mut games = Vec::new();
        let mut forfeits = Vec::new();
        for pairing in pairings {
            let absent = [&pairing.black, &pairing.white].map(|p| !connected(p));
            if absent.iter().any(|a| *a) {
                let (result, loser) = forfeited(&pairing, absent);
                self.played.push(result);
                forfeits.push(loser);
                continue;
            }
            games.push(pairing.clone());
            self.boards.push(Board {
                pairing,
                game: None,
                result: None,
                requested: true,
            });
        }
        // With every game forfeited the round is over at once: the shell
        // tells the forfeits, then asks for the next round.
        Next::Round {
            round,
            begins: true,
            games,
            forfeits,
        }
    }

    /// The shell made the round's game for `black` v `white` as `game`.
    pub fn game_made(&mut self, black: &str, white: &str, game: GameId) {
        if let Some(board) = self.boards.iter_mut().find(|b| {
            b.game.is_none()
                && b.result.is_none()
                && same(&b.pairing.black, black)
                && same(&b.pairing.white, white)
        }) {
            board.game = Some(game);
        }
    }

    /// The round's game for `black` v `white` could not be made (a player
    /// was busy or gone by then): whoever is `absent` loses it by abandon.
    /// Once the round's last game is decided, the next round begins for
    /// those `connected`, or the tournament ends. `None` if the round has
    /// no such game waiting to be made (nothing changes).
    pub fn unmade(
        &mut self,
        black: &str,
        white: &str,
        absent: [bool; 2],
        connected: impl Fn(&str) -> bool,
    ) -> Option<Next> {
        let Stage::Running(round) = self.stage else {
            return None;
        };
        let board = self.boards.iter_mut().find(|b| {
            b.game.is_none()
                && b.result.is_none()
                && same(&b.pairing.black, black)
                && same(&b.pairing.white, white)
        })?;
        let (result, _) = forfeited(&board.pairing, absent);
        board.result = Some(result.clone());
        self.played.push(result);
        if self.boards.iter().any(|b| b.result.is_none()) {
            return Some(Next::Wait);
        }
        Some(self.begin_round(round.saturating_add(1), &connected))
    }

    /// Whether `game` is one of the current round's.
    pub fn has_game(&self, game: GameId) -> bool {
        self.boards.iter().any(|b| b.game == Some(game))
    }

    /// After a round whose games were all forfeited (`Next::Round` with no
    /// games): the next round, for those `connected`, or the end.
    pub fn next_round(&mut self, connected: impl Fn(&str) -> bool) -> Next {
        match self.stage {
            Stage::Running(round) if self.boards.iter().all(|b| b.result.is_some()) => {
                self.begin_round(round.saturating_add(1), &connected)
            }
            _ => Next::Wait,
        }
    }

    /// Game `game` of the round ended (`winner`, the scores of its `OVER`);
    /// once the round's last game has, the next round begins for those
    /// `connected`, or the tournament ends.
    pub fn game_over(
        &mut self,
        game: GameId,
        winner: Option<Color>,
        scores: (u32, u32),
        connected: impl Fn(&str) -> bool,
    ) -> Next {
        let Stage::Running(round) = self.stage else {
            return Next::Wait;
        };
        if !self.settle(game, winner, scores) || self.boards.iter().any(|b| b.result.is_none()) {
            return Next::Wait;
        }
        self.begin_round(round.saturating_add(1), &connected)
    }

    /// Game `game` of the round ended so: its result counts (whether it
    /// was one of the round's games not over yet). The next round is not
    /// begun: after a restart, [`resume_play`](Self::resume_play) does so.
    pub fn settle(&mut self, game: GameId, winner: Option<Color>, scores: (u32, u32)) -> bool {
        let Some(board) = self
            .boards
            .iter_mut()
            .find(|b| b.game == Some(game) && b.result.is_none())
        else {
            return false;
        };
        let (black, white) = (
            Name::clone(&board.pairing.black),
            Name::clone(&board.pairing.white),
        );
        let result = oriented(black, white, winner, scores.0, scores.1);
        board.result = Some(result.clone());
        self.played.push(result);
        true
    }

    /// Game `game` of the round is gone without a result (a restart did
    /// not bring it back): its pairing waits to be made again.
    pub fn lost_game(&mut self, game: GameId) {
        let lost = (self.boards.iter_mut()).find(|b| b.game == Some(game) && b.result.is_none());
        if let Some(board) = lost {
            board.game = None;
            board.requested = false;
        }
    }

    /// Whether the round being played has nothing to make: each of its
    /// games undecided is in play (so the players are at their boards, and
    /// what follows comes from their ends).
    pub fn only_games_in_play(&self) -> bool {
        matches!(self.stage, Stage::Running(_))
            && self.boards.iter().any(|b| b.result.is_none())
            && (self.boards.iter()).all(|b| b.result.is_some() || b.game.is_some())
    }

    /// Carries on after a restart: the round's games never made are made
    /// now (for those `connected`; the others lose them by abandon), as a
    /// `Next::Round` of the round being played; a round all decided goes
    /// on to the next. Games made and not over are played on where they
    /// stand.
    pub fn resume_play(&mut self, connected: impl Fn(&str) -> bool) -> Next {
        let Stage::Running(round) = self.stage else {
            return Next::Wait;
        };
        let mut games = Vec::new();
        let mut forfeits = Vec::new();
        for board in &mut self.boards {
            if board.requested || board.game.is_some() || board.result.is_some() {
                continue;
            }
            board.requested = true;
            let pairing = &board.pairing;
            let absent = [&pairing.black, &pairing.white].map(|p| !connected(p));
            if absent.iter().any(|a| *a) {
                let (result, loser) = forfeited(pairing, absent);
                board.result = Some(result.clone());
                self.played.push(result);
                forfeits.push(loser);
            } else {
                games.push(pairing.clone());
            }
        }
        if self.boards.iter().all(|b| b.result.is_some()) {
            return self.begin_round(round.saturating_add(1), &connected);
        }
        if games.is_empty() && forfeits.is_empty() {
            return Next::Wait;
        }
        Next::Round {
            round,
            begins: false,
            games,
            forfeits,
        }
    }

    /// A tournament as the store holds it: `kind` run by `creator`, with
    /// `players` in the order they joined, `round` rounds begun (0: still
    /// open) and `over` if it ended. `fact` says what became of a pairing
    /// of a round begun. The pairings are drawn again as they were (they
    /// follow from the results before them), so only facts are stored.
    pub fn resume(
        kind: Kind,
        creator: Name,
        players: Vec<Name>,
        round: u32,
        over: bool,
        fact: impl Fn(u32, &Pairing) -> Option<Fact>,
    ) -> Tourney {
        let mut t = Tourney::new(kind, creator);
        t.players = players;
        if round == 0 {
            return t;
        }
        if t.kind == Kind::Swiss(0) {
            t.kind = Kind::Swiss(swiss_rounds_for(t.players.len()));
        }
        t.plan = round_robin(&t.players);
        for r in 1..=round.min(t.rounds()) {
            let Some(pairings) = t.pairings(r) else {
                break;
            };
            t.stage = Stage::Running(r);
            t.boards.clear();
            for pairing in pairings {
                let (game, result) = match fact(r, &pairing) {
                    Some(Fact::Forfeit(absent)) => (None, Some(forfeited(&pairing, absent).0)),
                    Some(Fact::Made(game, end)) => {
                        let result = end.map(|(winner, scores)| {
                            let (black, white) = (&pairing.black, &pairing.white);
                            let (b, w) = (Name::clone(black), Name::clone(white));
                            oriented(b, w, winner, scores.0, scores.1)
                        });
                        (Some(game), result)
                    }
                    None => (None, None),
                };
                if let Some(result) = &result {
                    t.played.push(result.clone());
                }
                t.boards.push(Board {
                    pairing,
                    game,
                    result,
                    requested: false,
                });
            }
        }
        if over {
            t.stage = Stage::Over;
            t.boards.clear();
        }
        t
    }

    /// The round's games made and not yet over.
    pub fn games_in_play(&self) -> impl Iterator<Item = GameId> + '_ {
        (self.boards.iter())
            .filter(|b| b.result.is_none())
            .filter_map(|b| b.game)
    }

    fn finish(&mut self) -> Next {
        self.stage = Stage::Over;
        self.boards.clear();
        let table = self.standings();
        let winner = match table.as_slice() {
            [first, second, ..]
                if (first.half_points, first.disc_difference)
                    == (second.half_points, second.disc_difference) =>
            {
                None
            }
            [first, ..] => Some(Name::clone(&first.name)),
            [] => None,
        };
        Next::Over(winner)
    }

    /// The standings so far, best first.
    pub fn standings(&self) -> Vec<Standing> {
        standings(&self.players, &self.played, &self.byes)
    }

    /// The games played so far (forfeits included).
    pub fn played(&self) -> &[Played] {
        &self.played
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flipline::protocol::ErrorCode;
    use proptest::prelude::*;

    fn names(count: usize) -> Vec<Name> {
        (0..count).map(|i| Name::from(format!("p{i}"))).collect()
    }

    /// Runs a tournament to its end with everyone connected, black winning
    /// every game by `margin`; the number of games made.
    fn run(kind: Kind, players: &[Name], margin: u32) -> (Tourney, usize, Option<Name>) {
        let mut t = Tourney::new(kind, Name::clone(&players[0]));
        for p in players {
            t.join(p).unwrap();
        }
        let mut next = t.start(&players[0], |_| true).unwrap();
        let (mut game, mut made) = (0, 0);
        loop {
            match next {
                Next::Round { games, .. } if games.is_empty() => next = t.next_round(|_| true),
                Next::Round { games, .. } => {
                    let mut numbers = Vec::new();
                    for g in &games {
                        game += 1;
                        t.game_made(&g.black, &g.white, game);
                        numbers.push(game);
                        made += 1;
                    }
                    next = Next::Wait;
                    for n in numbers {
                        let scores = (32 + margin / 2, 32 - margin / 2);
                        next = t.game_over(n, Some(Color::Black), scores, |_| true);
                    }
                }
                Next::Wait => panic!("a round left a game unfinished"),
                Next::Over(winner) => return (t, made, winner),
            }
        }
    }

    #[test]
    fn a_round_robin_of_four_plays_every_pair_twice_colours_swapped() {
        let players = names(4);
        let (t, made, _) = run(Kind::RoundRobin, &players, 2);
        assert_eq!(t.rounds(), 6);
        assert_eq!(made, 12, "six pairs, twice each");
        for a in &players {
            for b in &players {
                if a != b {
                    let as_black = t
                        .played()
                        .iter()
                        .filter(|p| p.black == *a && p.white == *b)
                        .count();
                    assert_eq!(as_black, 1, "{a} v {b}");
                }
            }
        }
        let table = t.standings();
        assert!(table.iter().all(|s| s.games == 6 && s.half_points == 6));
        assert_eq!(t.stage(), Stage::Over);
    }

    #[test]
    fn a_swiss_of_six_in_three_rounds_plays_nine_games_and_no_pair_twice() {
        let players = names(6);
        let (t, made, winner) = run(Kind::Swiss(3), &players, 10);
        assert_eq!(made, 9);
        let mut pairs: Vec<(String, String)> = (t.played().iter())
            .map(|p| {
                let mut pair = [p.black.to_string(), p.white.to_string()];
                pair.sort();
                (pair[0].clone(), pair[1].clone())
            })
            .collect();
        pairs.sort();
        pairs.dedup();
        assert_eq!(pairs.len(), 9, "no pair twice");
        assert!(t.standings().iter().all(|s| s.games == 3));
        let top = &t.standings()[0];
        assert_eq!(
            winner.as_deref(),
            Some(&*top.name).filter(|_| {
                t.standings()[1].half_points < top.half_points
                    || t.standings()[1].disc_difference < top.disc_difference
            })
        );
    }

    #[test]
    fn an_absent_player_loses_by_abandon_and_the_round_goes_on() {
        let players = names(2);
        let mut t = Tourney::new(Kind::RoundRobin, Name::clone(&players[0]));
        for p in &players {
            t.join(p).unwrap();
        }
        let next = t.start("p0", |name| name != "p1").unwrap();
        let Next::Round {
            round,
            forfeits,
            games,
            ..
        } = next
        else {
            panic!("{next:?}")
        };
        assert_eq!((round, games.len()), (1, 0), "round 1 forfeited");
        assert_eq!(forfeits.len(), 1);
        let away = &forfeits[0];
        let p1_black = away.pairing.black.as_ref() == "p1";
        assert_eq!(away.absent, [p1_black, !p1_black], "p1 away");
        let first = &t.standings()[0];
        assert_eq!(
            (&*first.name, first.half_points, first.disc_difference),
            ("p0", 2, 64)
        );
        // p1 is back for round 2: its game is made.
        let next = t.next_round(|_| true);
        assert!(
            matches!(&next, Next::Round { round: 2, games, .. } if games.len() == 1),
            "{next:?}"
        );
    }

    #[test]
    fn only_the_creator_starts_and_nobody_joins_after() {
        let mut t = Tourney::new(Kind::Swiss(2), Name::from("ann"));
        t.join(&Name::from("ann")).unwrap();
        assert!(t.join(&Name::from("ANN")).is_err(), "once, in any case");
        assert!(t.start("ann", |_| true).is_err(), "one player");
        t.join(&Name::from("bob")).unwrap();
        t.join(&Name::from("cy")).unwrap();
        assert_eq!(
            t.start("bob", |_| true).unwrap_err().code(),
            ErrorCode::Forbidden
        );
        assert!(t.start("ann", |_| true).is_ok());
        assert!(t.join(&Name::from("dee")).is_err());
        assert!(t.leave("bob").is_err());
    }

    #[test]
    fn a_game_that_could_not_be_made_is_lost_by_the_absent_side() {
        let players = names(2);
        let mut t = Tourney::new(Kind::RoundRobin, Name::clone(&players[0]));
        for p in &players {
            t.join(p).unwrap();
        }
        let Next::Round { games, .. } = t.start("p0", |_| true).unwrap() else {
            panic!("no round")
        };
        let game = &games[0];
        let white_absent = [false, true];
        let next = t.unmade(&game.black, &game.white, white_absent, |_| true);
        assert!(
            matches!(next, Some(Next::Round { round: 2, .. })),
            "{next:?}"
        );
        let again = t.unmade(&game.black, &game.white, white_absent, |_| true);
        assert_eq!(again, None, "decided once");
        let first = &t.standings()[0];
        assert_eq!((&first.name, first.half_points), (&game.black, 2));
    }

    #[test]
    fn a_swiss_resumes_from_its_stored_facts_as_it_stood() {
        use std::collections::HashMap;
        let players = names(6);
        let mut t = Tourney::new(Kind::Swiss(0), Name::clone(&players[0]));
        for p in &players {
            t.join(p).unwrap();
        }
        assert_eq!(t.rounds(), 3, "six players part in three rounds");
        let mut facts: HashMap<(u32, String, String), Fact> = HashMap::new();
        let mut next = t.start("p0", |name| name != "p5").unwrap();
        let mut game = 0;
        // Two rounds played out (p5 away for the first), the third begun
        // with one game over, one in play and one not yet made.
        for round in 1..=3u32 {
            let Next::Round {
                games, forfeits, ..
            } = next
            else {
                panic!("{next:?}")
            };
            for Forfeit { pairing, absent } in forfeits {
                let key = (round, pairing.black.to_string(), pairing.white.to_string());
                facts.insert(key, Fact::Forfeit(absent));
            }
            next = Next::Wait;
            for (i, g) in games.iter().enumerate() {
                let key = (round, g.black.to_string(), g.white.to_string());
                if round == 3 && i == 2 {
                    continue;
                }
                game += 1;
                t.game_made(&g.black, &g.white, game);
                if round == 3 && i == 1 {
                    facts.insert(key, Fact::Made(game, None));
                    continue;
                }
                let end = (Some(Color::White), (20 + i as u32, 44 - i as u32));
                facts.insert(key, Fact::Made(game, Some(end)));
                next = t.game_over(game, end.0, end.1, |_| true);
            }
        }
        let again = Tourney::resume(
            Kind::Swiss(0),
            Name::from("p0"),
            players,
            3,
            false,
            |r, p| {
                facts
                    .get(&(r, p.black.to_string(), p.white.to_string()))
                    .copied()
            },
        );
        assert_eq!(again.standings(), t.standings());
        assert_eq!(again.stage(), Stage::Running(3));
        assert_eq!(again.games_in_play().collect::<Vec<_>>(), [game]);
        let mut again = again;
        let Next::Round { round, games, .. } = again.resume_play(|_| true) else {
            panic!("the unmade game is made on resuming")
        };
        assert_eq!((round, games.len()), (3, 1));
    }

    #[test]
    fn after_a_restart_a_pairing_is_asked_for_once_and_a_lost_game_again() {
        let players = names(4);
        let made = |round: u32, p: &Pairing| {
            let game = u64::from(round) * 10 + u64::from(p.start_group % 64);
            // Round 1's first game is over, its second in play.
            let over = p.start_group.is_multiple_of(64);
            Some(Fact::Made(
                game,
                over.then_some((Some(Color::Black), (40, 24))),
            ))
        };
        let mut t = Tourney::resume(Kind::RoundRobin, Name::from("p0"), players, 1, false, made);
        assert_eq!(t.games_in_play().collect::<Vec<_>>(), [11]);
        assert_eq!(
            t.resume_play(|_| true),
            Next::Wait,
            "the game in play plays on"
        );
        t.lost_game(11);
        let Next::Round {
            round,
            begins,
            games,
            ..
        } = t.resume_play(|_| true)
        else {
            panic!("the lost game is made again")
        };
        assert_eq!((round, begins, games.len()), (1, false, 1));
        assert_eq!(t.resume_play(|_| true), Next::Wait, "asked for once");
        let (black, white) = (&games[0].black, &games[0].white);
        t.game_made(black, white, 12);
        assert!(t.settle(12, None, (32, 32)), "its result counts");
        assert!(!t.settle(12, None, (32, 32)), "once");
        let next = t.resume_play(|_| true);
        assert!(
            matches!(
                next,
                Next::Round {
                    round: 2,
                    begins: true,
                    ..
                }
            ),
            "{next:?}"
        );
    }

    #[test]
    fn anti_results_count_the_winners_margin() {
        let played = oriented(Name::from("a"), Name::from("b"), Some(Color::White), 41, 23);
        assert_eq!((played.black_discs, played.white_discs), (23, 41));
    }

    proptest! {
        /// Any field and kind runs to its end with every player in the
        /// standings and the games a round robin or Swiss promises.
        #[test]
        fn every_tournament_ends_with_the_games_its_kind_promises(
            count in 2usize..9,
            swiss in proptest::option::of(1u32..8),
            margin in 0u32..20,
        ) {
            let players = names(count);
            let kind = match swiss {
                Some(rounds) => Kind::Swiss(rounds.min(u32::try_from(count - 1).unwrap_or(1))),
                None => Kind::RoundRobin,
            };
            let (t, made, _) = run(kind, &players, margin * 2);
            prop_assert_eq!(t.stage(), Stage::Over);
            prop_assert_eq!(t.standings().len(), count);
            if kind == Kind::RoundRobin {
                prop_assert_eq!(made, count * (count - 1));
            } else if let Kind::Swiss(rounds) = kind {
                prop_assert!(made <= usize::try_from(rounds).unwrap_or(0) * (count / 2));
            }
        }
    }
}
