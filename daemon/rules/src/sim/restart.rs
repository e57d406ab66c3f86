//! The simulator's store, as far as a restart reads it, and the restart:
//! every connection drops, the lobby, the tables and the desk are made
//! again from what was stored (the games in play with their moves, the
//! tournaments' facts), and the players log in again and take their seats
//! back, as `flip` does after a lost connection.

use std::collections::{BTreeMap, HashMap};

use flipline::protocol::{ClockSpec, GameId, GameResult, TourneyId};
use flipline::{Move, Variant};

/// The moves of each game, as stored (the simulator's store takes a move
/// as it is played).
type StoredMoves = HashMap<GameId, Vec<(Move, Option<u64>)>>;

use super::{Cmd, Game, World};
use crate::lobby::{Launch, LobbyCore, Waiting};
use crate::table::Table;
use crate::tourney_desk::TourneyDesk;
use crate::tourney_facts::{StoredTourney, StoredTourneyGame, TourneyWrite};
use crate::{Name, Sitter};

/// A game as stored.
#[derive(Clone, Debug)]
pub(super) struct StoredGame {
    variant: Variant,
    clock: Option<ClockSpec>,
    seats: [Option<Name>; 2],
    /// Made with an open seat nobody has taken yet.
    open: bool,
    cancelled: bool,
    rated: bool,
    tourney: Option<(TourneyId, u32)>,
    result: Option<GameResult>,
}

/// What the store holds.
#[derive(Debug, Default)]
pub(super) struct Stored {
    games: BTreeMap<GameId, StoredGame>,
    /// The tournaments' facts, in the order stored.
    facts: Vec<TourneyWrite>,
}

impl Stored {
    /// A new game, its creation stored.
    pub(super) fn launched(&mut self, launch: &Launch) {
        let game = StoredGame {
            variant: launch.variant,
            clock: launch.clock,
            seats: launch.seats.clone().map(|s| s.name()),
            open: launch.seats.iter().any(|s| matches!(s, Sitter::Open)),
            cancelled: false,
            rated: launch.rated,
            tourney: launch.tourney,
            result: None,
        };
        self.games.insert(launch.id, game);
    }

    /// Who sits in `game` now.
    pub(super) fn seats(&mut self, game: GameId, seats: [Option<Name>; 2]) {
        if let Some(stored) = self.games.get_mut(&game) {
            stored.open = seats.iter().any(Option::is_none);
            stored.seats = seats;
        }
    }

    /// `game` closed before anyone joined.
    pub(super) fn cancelled(&mut self, game: GameId) {
        if let Some(stored) = self.games.get_mut(&game) {
            stored.cancelled = true;
        }
    }

    /// `game` ended so.
    pub(super) fn ended(&mut self, game: GameId, result: GameResult) {
        if let Some(stored) = self.games.get_mut(&game) {
            stored.result = Some(result);
        }
    }

    /// A tournament's fact, stored.
    pub(super) fn fact(&mut self, write: TourneyWrite) {
        self.facts.push(write);
    }

    /// The tournaments as the store reads them back.
    fn tourneys(&self) -> Vec<StoredTourney> {
        let mut all: BTreeMap<TourneyId, StoredTourney> = BTreeMap::new();
        for fact in &self.facts {
            apply_fact(&mut all, fact);
        }
        for (&game, stored) in &self.games {
            let Some((id, round)) = stored.tourney else {
                continue;
            };
            let Some(tourney) = all.get_mut(&id) else {
                continue;
            };
            let [black, white] = stored.seats.clone().map(|s| s.map(|n| n.to_string()));
            tourney.games.push(StoredTourneyGame {
                round,
                game,
                black: black.unwrap_or_default(),
                white: white.unwrap_or_default(),
                result: stored.result.map(|r| (r.winner, (r.black, r.white))),
            });
        }
        all.into_values().collect()
    }
}

/// What one fact does to the rows, as the store's statements do.
fn apply_fact(all: &mut BTreeMap<TourneyId, StoredTourney>, fact: &TourneyWrite) {
    let same = |a: &str, b: &str| a.eq_ignore_ascii_case(b);
    if let TourneyWrite::New { id, creator, spec } = fact {
        let tourney = StoredTourney {
            id: *id,
            creator: creator.clone(),
            spec: *spec,
            players: Vec::new(),
            round: 0,
            over: false,
            games: Vec::new(),
            forfeits: Vec::new(),
            starts: Vec::new(),
        };
        all.insert(*id, tourney);
        return;
    }
    let Some(t) = all.get_mut(&fact.tourney()) else {
        return;
    };
    match fact {
        TourneyWrite::New { .. } => {}
        TourneyWrite::Join { name, .. } => {
            if !t.players.iter().any(|p| same(p, name)) {
                t.players.push(name.clone());
            }
        }
        TourneyWrite::Leave { name, .. } => t.players.retain(|p| !same(p, name)),
        TourneyWrite::Round {
            round, forfeits, ..
        } => {
            t.round = t.round.max(*round);
            for forfeit in forfeits {
                replace_forfeit(t, forfeit.clone());
            }
        }
        TourneyWrite::Forfeit { forfeit, .. } => replace_forfeit(t, forfeit.clone()),
        TourneyWrite::Start { group, moves, .. } => {
            t.starts.retain(|(g, _)| g != group);
            t.starts.push((*group, moves.clone()));
        }
        TourneyWrite::Over { .. } => t.over = true,
    }
}

fn replace_forfeit(t: &mut StoredTourney, forfeit: crate::tourney_facts::StoredForfeit) {
    t.forfeits.retain(|f| {
        !(f.round == forfeit.round && f.black == forfeit.black && f.white == forfeit.white)
    });
    t.forfeits.push(forfeit);
}

impl Stored {
    /// Every pairing of every round an over tournament began ends in one
    /// stored result: its game's end, or a forfeit, never both nor two.
    pub(super) fn one_result_per_pairing(&self) -> Result<(), String> {
        for t in self.tourneys().into_iter().filter(|t| t.over) {
            let mut results: BTreeMap<(u32, String, String), usize> = BTreeMap::new();
            for g in &t.games {
                let key = (g.round, g.black.to_lowercase(), g.white.to_lowercase());
                *results.entry(key).or_default() += usize::from(g.result.is_some());
            }
            for f in &t.forfeits {
                let key = (f.round, f.black.to_lowercase(), f.white.to_lowercase());
                *results.entry(key).or_default() += 1;
            }
            if let Some((pairing, n)) = results.iter().find(|(_, n)| **n != 1) {
                return Err(format!("tournament {}: {pairing:?} has {n} results", t.id));
            }
        }
        Ok(())
    }
}

impl World {
    /// The daemon stops and starts again (see the module docs).
    pub(super) fn restart(&mut self) {
        self.restarted = true;
        let seated = self.drop_connections();
        self.lobby = LobbyCore::new();
        self.waiting = Waiting::default();
        self.lobby_mail.clear();
        self.store.clear();
        self.held.clear();
        self.timers.clear();
        self.alarms.clear();
        let moves: StoredMoves = (self.games.iter())
            .map(|(id, game)| (*id, game.moves.clone()))
            .collect();
        self.games.clear();
        let next_tourney = self.stored.facts.iter().map(TourneyWrite::tourney).max();
        self.desk = TourneyDesk::new(next_tourney.map_or(1, |id| id + 1));
        self.recover_games(&moves);
        let stored = self.stored.tourneys();
        let lobby = &self.lobby;
        let effects = self
            .desk
            .restore(stored, |g| lobby.route(g).is_some(), self.grace);
        self.desk_effects(effects);
        self.log_in_again(seated);
    }

    /// Every connection is gone: a command in flight is answered by its
    /// connection closing. The seat each session had, by session.
    fn drop_connections(&mut self) -> HashMap<usize, GameId> {
        let mut seated = HashMap::new();
        for (i, s) in self.sessions.iter_mut().enumerate() {
            if s.waiting {
                s.waiting = false;
                s.replies += 1;
            }
            s.reply = None;
            s.mailbox.clear();
            if let Some(game) = s.seat.take() {
                seated.insert(i, game);
            }
        }
        seated
    }

    /// The games the store holds as in play, their people away.
    fn recover_games(&mut self, moves: &StoredMoves) {
        let in_play: Vec<(GameId, StoredGame)> = (self.stored.games.iter())
            .filter(|(_, g)| !g.open && !g.cancelled && g.result.is_none())
            .map(|(id, g)| (*id, g.clone()))
            .collect();
        for (id, stored) in in_play {
            let names = stored.seats.clone();
            let seats = names.map(|n| Sitter::<u64>::from_stored(n.as_deref()));
            let (variant, clock, rated) = (stored.variant, stored.clock, stored.rated);
            let moves = moves.get(&id).cloned().unwrap_or_default();
            let played: Vec<Move> = moves.iter().map(|(mv, _)| *mv).collect();
            if let Ok(Some(result)) = crate::lobby::stored_game_state(variant, &played) {
                // Its end was not stored: stored now, then counted.
                let effects = self.desk.recovered_end(id, result);
                self.desk_effects(effects);
                continue;
            }
            let recovered =
                (self.lobby).recover(id, variant, clock, seats.clone(), [None, None], rated);
            if !recovered {
                continue;
            }
            let now = self.now;
            let mut table = Table::new(id, variant, clock, seats, &moves, rated, now);
            let effects = table.open(true, self.grace, now);
            let game = Game {
                table,
                mailbox: Default::default(),
                stopped: false,
                moves,
            };
            self.games.insert(id, game);
            self.lobby.set_route(id, id);
            self.table_effects(id, effects);
        }
    }

    /// The players still connected log in again; those seated take their
    /// seat back first.
    fn log_in_again(&mut self, seated: HashMap<usize, GameId>) {
        for i in 0..self.sessions.len() {
            if self.sessions[i].closed {
                continue;
            }
            let name = Name::clone(&self.sessions[i].name);
            let login = self.lobby.login(&name, super::conn_of(i), None);
            if let Err(e) = login {
                self.broken = Some(format!("{name} could not log in again: {e}"));
            }
            if let Some(&game) = seated.get(&i) {
                self.sessions[i].script.push_front(Cmd::Join(game));
            }
        }
    }
}
