//! The daemon's tournaments, as rules: each one's terms and its life
//! (`tourney`), which game belongs to which, the starts their pairs
//! share, the limits on how many a name runs, and the lines `TOURNEY LIST`
//! and `TOURNEY SHOW` answer with. The lobby actor is the shell: it says
//! who is free to play, makes the games and stores what happened.

use std::collections::{BTreeMap, HashMap};

use flipline::protocol::{
    GameId, StandingLine, TourneyId, TourneyKind, TourneyLine, TourneySpec, TourneyStage,
};
use flipline::{Color, Move};

use super::Name;
use super::tourney::{Kind, Next, Stage, Tourney};
use crate::refusal::Refusal;

/// Tournaments not over that one name may run at once.
pub const MAX_RUN_BY_ONE: usize = 4;

/// Tournaments not over the daemon holds at once.
pub const MAX_LIVE: usize = 256;

/// Over tournaments still held (and listed); older ones are in the store.
pub const OVER_HELD: usize = 100;

/// One tournament: its terms, its life and the starts drawn for it.
#[derive(Clone, Debug)]
pub struct Held {
    /// What `TOURNEY NEW` asked for.
    pub spec: TourneySpec,
    /// Its life.
    pub tourney: Tourney,
    starts: HashMap<u32, Vec<Move>>,
}

impl Held {
    /// A tournament on `spec`, as `tourney` stands, with the `starts` drawn.
    pub fn new(spec: TourneySpec, tourney: Tourney, starts: HashMap<u32, Vec<Move>>) -> Held {
        Held {
            spec,
            tourney,
            starts,
        }
    }
}

/// The kind a spec asks for.
pub fn kind_of(spec: &TourneySpec) -> Kind {
    match spec.kind {
        TourneyKind::RoundRobin => Kind::RoundRobin,
        TourneyKind::Swiss => Kind::Swiss(spec.rounds.unwrap_or(0)),
    }
}

/// Every tournament held, by number.
#[derive(Debug, Default)]
pub struct Tourneys {
    held: BTreeMap<TourneyId, Held>,
    by_game: HashMap<GameId, TourneyId>,
    next_id: TourneyId,
}

fn not_found(id: TourneyId) -> Refusal {
    Refusal::NoTourney(id)
}

impl Tourneys {
    /// No tournaments; the next is numbered `next_id`.
    pub fn new(next_id: TourneyId) -> Tourneys {
        Tourneys {
            next_id: next_id.max(1),
            ..Tourneys::default()
        }
    }

    /// Game `game`'s result counts in its tournament, if it has one, without
    /// beginning the next round (see `Tourney::settle`): its tournament.
    pub fn settle(
        &mut self,
        game: GameId,
        winner: Option<Color>,
        scores: (u32, u32),
    ) -> Option<TourneyId> {
        let id = self.by_game.remove(&game)?;
        let held = self.held.get_mut(&id)?;
        held.tourney.settle(game, winner, scores).then_some(id)
    }

    /// Holds a tournament read back from the store; its games in play are
    /// known by their numbers from now on.
    pub fn restore(&mut self, id: TourneyId, held: Held) {
        self.next_id = self.next_id.max(id.saturating_add(1));
        self.adopt(id, held);
    }

    /// Holds a tournament taken over from another cluster node: numbered
    /// from that node's block, so this one's numbering is not moved.
    pub fn adopt(&mut self, id: TourneyId, held: Held) {
        for game in held.tourney.games_in_play() {
            self.by_game.insert(game, id);
        }
        self.held.insert(id, held);
    }

    /// Game `game` ended without a result: its pairing waits to be made
    /// again. Its tournament, if it has one.
    pub fn lost(&mut self, game: GameId) -> Option<TourneyId> {
        let id = self.by_game.remove(&game)?;
        self.held.get_mut(&id)?.tourney.lost_game(game);
        Some(id)
    }

    /// The tournament game `game` is in play for, if any.
    pub fn of_game(&self, game: GameId) -> Option<TourneyId> {
        self.by_game.get(&game).copied()
    }

    /// `TOURNEY NEW` from `creator`, who runs it: its number.
    pub fn create(&mut self, creator: &Name, spec: TourneySpec) -> Result<TourneyId, Refusal> {
        let id = self.take_id(creator)?;
        self.made(id, creator, spec);
        Ok(id)
    }

    /// The number the next tournament gets, if `creator` may make one now
    /// (it is taken: a number lost to a failed write is not given again).
    pub fn take_id(&mut self, creator: &Name) -> Result<TourneyId, Refusal> {
        let live = self.live().count();
        if live >= MAX_LIVE {
            return Err(Refusal::TooManyTourneys(MAX_LIVE));
        }
        let own = (self.live())
            .filter(|(_, h)| h.tourney.creator().eq_ignore_ascii_case(creator))
            .count();
        if own >= MAX_RUN_BY_ONE {
            return Err(Refusal::RunsTooMany(MAX_RUN_BY_ONE));
        }
        let id = self.next_id;
        self.next_id = id.saturating_add(1);
        Ok(id)
    }

    /// Holds the tournament `creator` made as `id` on `spec` (stored).
    pub fn made(&mut self, id: TourneyId, creator: &Name, spec: TourneySpec) {
        let tourney = Tourney::new(kind_of(&spec), Name::clone(creator));
        (self.held).insert(id, Held::new(spec, tourney, HashMap::new()));
    }

    fn live(&self) -> impl Iterator<Item = (&TourneyId, &Held)> {
        (self.held.iter()).filter(|(_, h)| h.tourney.stage() != Stage::Over)
    }

    /// Keeps the last [`OVER_HELD`] over tournaments, and any that `busy`
    /// says the shell still works on (its end not yet told).
    fn forget_old(&mut self, busy: impl Fn(TourneyId) -> bool) {
        let over: Vec<TourneyId> = (self.held.iter())
            .filter(|(id, h)| h.tourney.stage() == Stage::Over && !busy(**id))
            .map(|(id, _)| *id)
            .collect();
        for id in over.iter().take(over.len().saturating_sub(OVER_HELD)) {
            self.held.remove(id);
        }
    }

    /// Tournament `id`.
    pub fn get(&self, id: TourneyId) -> Result<&Held, Refusal> {
        self.held.get(&id).ok_or_else(|| not_found(id))
    }

    fn get_mut(&mut self, id: TourneyId) -> Result<&mut Held, Refusal> {
        self.held.get_mut(&id).ok_or_else(|| not_found(id))
    }

    /// Whether `name` may join `id` now (nothing changes).
    pub fn may_join(&self, id: TourneyId, name: &Name) -> Result<(), Refusal> {
        self.get(id)?.tourney.may_join(name)
    }

    /// `TOURNEY JOIN`.
    pub fn join(&mut self, id: TourneyId, name: &Name) -> Result<(), Refusal> {
        self.get_mut(id)?.tourney.join(name)
    }

    /// Whether `name` may leave `id` now (nothing changes).
    pub fn may_leave(&self, id: TourneyId, name: &str) -> Result<(), Refusal> {
        self.get(id)?.tourney.may_leave(name)
    }

    /// `TOURNEY LEAVE`.
    pub fn leave(&mut self, id: TourneyId, name: &str) -> Result<(), Refusal> {
        self.get_mut(id)?.tourney.leave(name)
    }

    /// `TOURNEY START` from `by`: round 1, for those `free`.
    pub fn start(
        &mut self,
        id: TourneyId,
        by: &str,
        free: impl Fn(&str) -> bool,
    ) -> Result<Next, Refusal> {
        self.get_mut(id)?.tourney.start(by, free)
    }

    /// The round's game for `black` v `white` is `game`.
    pub fn game_made(&mut self, id: TourneyId, black: &str, white: &str, game: GameId) {
        if let Some(held) = self.held.get_mut(&id) {
            held.tourney.game_made(black, white, game);
            self.by_game.insert(game, id);
        }
    }

    /// The round's game for `black` v `white` could not be made; `None`
    /// if the round has no such game waiting to be made.
    pub fn unmade(
        &mut self,
        id: TourneyId,
        black: &str,
        white: &str,
        absent: [bool; 2],
        free: impl Fn(&str) -> bool,
    ) -> Option<Next> {
        let held = self.held.get_mut(&id)?;
        held.tourney.unmade(black, white, absent, free)
    }

    /// Tournament `id` goes on as `tourney` (a `START` decided on a copy,
    /// once stored).
    pub fn put(&mut self, id: TourneyId, tourney: Tourney) {
        if let Some(held) = self.held.get_mut(&id) {
            held.tourney = tourney;
        }
    }

    /// Game `game` ended: its tournament, if it has one, and what follows.
    pub fn game_over(
        &mut self,
        game: GameId,
        winner: Option<Color>,
        scores: (u32, u32),
        free: impl Fn(&str) -> bool,
    ) -> Option<(TourneyId, Next)> {
        let id = self.by_game.remove(&game)?;
        let held = self.held.get_mut(&id)?;
        Some((id, held.tourney.game_over(game, winner, scores, free)))
    }

    /// After a round whose games were all lost by abandon: the next.
    pub fn next_round(&mut self, id: TourneyId, free: impl Fn(&str) -> bool) -> Next {
        match self.held.get_mut(&id) {
            Some(held) => held.tourney.next_round(free),
            None => Next::Wait,
        }
    }

    /// After a restart: the round's games never made, or the next round.
    pub fn resume_play(&mut self, id: TourneyId, free: impl Fn(&str) -> bool) -> Next {
        match self.held.get_mut(&id) {
            Some(held) => held.tourney.resume_play(free),
            None => Next::Wait,
        }
    }

    /// The tournaments being played (to carry on after a restart).
    pub fn running(&self) -> Vec<TourneyId> {
        (self.held.iter())
            .filter(|(_, h)| matches!(h.tourney.stage(), Stage::Running(_)))
            .map(|(id, _)| *id)
            .collect()
    }

    /// The start drawn for `group` of `id`, if one was.
    pub fn start_of(&self, id: TourneyId, group: u32) -> Option<&[Move]> {
        let held = self.held.get(&id)?;
        held.starts.get(&group).map(Vec::as_slice)
    }

    /// `group` of `id` starts after `moves`.
    pub fn set_start(&mut self, id: TourneyId, group: u32, moves: Vec<Move>) {
        if let Some(held) = self.held.get_mut(&id) {
            held.starts.insert(group, moves);
        }
    }

    /// A tournament's end was told: the oldest over ones beyond
    /// [`OVER_HELD`] go, but for those `busy`.
    pub fn over(&mut self, busy: impl Fn(TourneyId) -> bool) {
        self.forget_old(busy);
    }

    /// `TOURNEY LIST`'s lines, by number.
    pub fn list(&self) -> Vec<TourneyLine> {
        (self.held.iter())
            .map(|(id, held)| line(*id, held))
            .collect()
    }

    /// `TOURNEY SHOW id`'s lines, best first; tied players share a rank.
    pub fn standings(&self, id: TourneyId) -> Result<Vec<StandingLine>, Refusal> {
        let table = self.get(id)?.tourney.standings();
        let mut lines: Vec<StandingLine> = Vec::with_capacity(table.len());
        for (i, standing) in table.iter().enumerate() {
            let score = |s: &super::tourney_pairing::Standing| (s.half_points, s.disc_difference);
            let previous = i
                .checked_sub(1)
                .and_then(|j| table.get(j).zip(lines.last()));
            let rank = match previous {
                Some((before, line)) if score(before) == score(standing) => line.rank,
                _ => u32::try_from(i + 1).unwrap_or(u32::MAX),
            };
            lines.push(StandingLine {
                id,
                rank,
                name: standing.name.to_string(),
                half_points: standing.half_points,
                games: standing.games,
                disc_difference: i32::try_from(standing.disc_difference).unwrap_or(i32::MAX),
            });
        }
        Ok(lines)
    }
}

/// A tournament's `LIST` line.
fn line(id: TourneyId, held: &Held) -> TourneyLine {
    let t = &held.tourney;
    let (stage, round) = match t.stage() {
        Stage::Open => (TourneyStage::Open, 0),
        Stage::Running(round) => (TourneyStage::Running, round),
        Stage::Over => (TourneyStage::Over, t.rounds()),
    };
    TourneyLine {
        id,
        kind: held.spec.kind,
        variant: held.spec.variant,
        clock: held.spec.clock,
        stage,
        players: u32::try_from(t.players().len()).unwrap_or(u32::MAX),
        round,
        rounds: t.rounds(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flipline::protocol::ErrorCode;

    fn spec(kind: TourneyKind) -> TourneySpec {
        TourneySpec::new(kind)
    }

    #[test]
    fn a_name_runs_a_bounded_number_and_numbers_climb() {
        let mut all = Tourneys::new(7);
        let ann = Name::from("ann");
        for expected in 7..7 + MAX_RUN_BY_ONE as u64 {
            assert_eq!(all.create(&ann, spec(TourneyKind::Swiss)), Ok(expected));
        }
        let refused = all.create(&Name::from("ANN"), spec(TourneyKind::Swiss));
        assert_eq!(refused.unwrap_err().code(), ErrorCode::TooMany);
        assert!(
            all.create(&Name::from("bob"), spec(TourneyKind::RoundRobin))
                .is_ok()
        );
        assert_eq!(all.get(99).unwrap_err().code(), ErrorCode::NotFound);
    }

    #[test]
    fn standings_share_a_rank_when_tied_and_list_says_the_stage() {
        let mut all = Tourneys::new(1);
        let id = all
            .create(&Name::from("p0"), spec(TourneyKind::RoundRobin))
            .unwrap();
        for p in ["p0", "p1", "p2"] {
            all.join(id, &Name::from(p)).unwrap();
        }
        let listed = all.list();
        assert_eq!(
            (listed[0].stage, listed[0].players, listed[0].rounds),
            (TourneyStage::Open, 3, 6)
        );
        let Next::Round { games, .. } = all.start(id, "p0", |_| true).unwrap() else {
            panic!("no round")
        };
        assert_eq!(games.len(), 1, "three players: one sits out");
        let lines = all.standings(id).unwrap();
        assert!(
            lines.iter().all(|l| l.rank == 1),
            "nobody has played: all first"
        );
        all.game_made(id, &games[0].black, &games[0].white, 40);
        let next = all.game_over(40, Some(Color::Black), (40, 24), |_| true);
        assert!(
            matches!(next, Some((1, Next::Round { round: 2, .. }))),
            "{next:?}"
        );
        let lines = all.standings(id).unwrap();
        let ranks: Vec<u32> = lines.iter().map(|l| l.rank).collect();
        assert_eq!(ranks, [1, 2, 3]);
        assert_eq!(lines[0].name, games[0].black.to_string());
        assert_eq!(all.list()[0].round, 2);
        assert_eq!(
            all.game_over(40, None, (32, 32), |_| true),
            None,
            "counted once"
        );
    }

    proptest::proptest! {
        /// Any field, kind, absences, games that could not be made and
        /// results: every tournament ends, its margins cancel, nobody
        /// plays more games than rounds, and no game is left known.
        #[test]
        fn every_tournament_ends_and_leaves_no_game_behind(
            count in 2usize..8,
            swiss in proptest::option::of(0u32..5),
            away in proptest::collection::vec(proptest::bool::weighted(0.15), 64),
            unmade in proptest::collection::vec(proptest::bool::weighted(0.1), 64),
            margins in proptest::collection::vec(-64i32..=64, 64),
        ) {
            let mut all = Tourneys::new(1);
            let kind = match swiss {
                Some(_) => TourneyKind::Swiss,
                None => TourneyKind::RoundRobin,
            };
            let most = u32::try_from(count - 1).unwrap_or(1);
            let spec = TourneySpec {
                rounds: swiss.filter(|r| *r > 0).map(|r| r.min(most)),
                ..TourneySpec::new(kind)
            };
            let id = all.create(&Name::from("p0"), spec).unwrap();
            for i in 0..count {
                all.join(id, &Name::from(format!("p{i}"))).unwrap();
            }
            let tick = std::cell::Cell::new(0usize);
            let free = |_: &str| {
                tick.set(tick.get() + 1);
                !away.get(tick.get() % away.len()).copied().unwrap_or(false)
            };
            let mut next = all.start(id, "p0", free).unwrap();
            let mut game = 0u64;
            let mut steps = 0;
            loop {
                steps += 1;
                proptest::prop_assert!(steps < 1000, "never ends");
                next = match next {
                    Next::Over(_) => break,
                    Next::Wait => {
                        return Err(proptest::test_runner::TestCaseError::fail("a round stalled"));
                    }
                    Next::Round { games, .. } if games.is_empty() => all.next_round(id, free),
                    Next::Round { games, .. } => {
                        let mut last = Next::Wait;
                        for pairing in games {
                            game += 1;
                            let g = usize::try_from(game).unwrap_or(0);
                            if unmade.get(g % unmade.len()).copied().unwrap_or(false) {
                                let (b, w) = (&pairing.black, &pairing.white);
                                last = all.unmade(id, b, w, [true, false], free).unwrap_or(Next::Wait);
                                continue;
                            }
                            all.game_made(id, &pairing.black, &pairing.white, game);
                            let margin = margins.get(g % margins.len()).copied().unwrap_or(0);
                            let black = u32::try_from(32 + margin / 2).unwrap_or(32);
                            let scores = (black, 64 - black);
                            let winner = match scores.0.cmp(&scores.1) {
                                std::cmp::Ordering::Greater => Some(Color::Black),
                                std::cmp::Ordering::Less => Some(Color::White),
                                std::cmp::Ordering::Equal => None,
                            };
                            if let Some((_, n)) = all.game_over(game, winner, scores, free) {
                                last = n;
                            }
                        }
                        last
                    }
                };
            }
            proptest::prop_assert!(all.by_game.is_empty(), "games left known: {:?}", all.by_game);
            let table = all.standings(id).unwrap();
            let discs: i32 = table.iter().map(|s| s.disc_difference).sum();
            proptest::prop_assert_eq!(discs, 0);
            let rounds = all.get(id).unwrap().tourney.rounds();
            proptest::prop_assert!(table.iter().all(|s| s.games <= rounds), "{:?}", table);
            proptest::prop_assert_eq!(all.list()[0].stage, TourneyStage::Over);
        }
    }
}
