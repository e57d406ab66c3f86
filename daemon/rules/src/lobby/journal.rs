//! Decisions held until their write commits.
//!
//! A command that creates a game or fills a seat is answered only once the
//! store has that write: an `OK` for a game the disk refused would be a lie a
//! restart exposes. The lobby must not wait for the disk meanwhile, so it
//! decides at once and *holds* the decision: what the command changed is kept
//! in a [`Journal`], its names and games are busy, and the shell commits the
//! write. Committed, the decision stands ([`LobbyCore::stored`]); refused, the
//! journal puts everything back as it was ([`LobbyCore::not_stored`]).
//!
//! While a decision is held, nothing else may change what it touched, or
//! putting it back would undo that too: a command or event that touches a
//! busy name or game waits ([`LobbyCore::waits_for`], [`Waiting`]) and runs
//! once the decision is settled, seeing its outcome. A pairing put back
//! brings back the seek it took, which may then wait beside another seek
//! for the same game that came meanwhile: [`LobbyCore::pair_waiting`] pairs
//! them (the shell calls it a moment after a failed write).
//!
//! Only what touches the held names and games waits: a `SEEK` does not
//! wait for other players' pairings. When it did, every pairing of a game
//! waited for the one before it, a commit each.

use std::collections::HashMap;
use std::num::NonZeroU64;

use flipline::protocol::GameId;

use super::caseless::{Caseless, NameKey};
use super::{Done, Entry, LobbyCore, LobbyEffect, Person, Seek};
use crate::Name;
use crate::refusal::Refusal;

/// A decision held until its write commits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Held(NonZeroU64);

/// What one command changed: the first value of everything it touched.
#[derive(Debug)]
pub(super) struct Journal<R> {
    people: Vec<(Name, Option<Person>)>,
    games: Vec<(GameId, Option<Entry<R>>)>,
    seeks: Vec<SeekChange>,
    /// The challenge the command accepted, open again if it is put back.
    pub(super) accepted: Option<super::LobbyChallenge>,
}

impl<R> Default for Journal<R> {
    fn default() -> Journal<R> {
        Journal {
            people: Vec::new(),
            games: Vec::new(),
            seeks: Vec::new(),
            accepted: None,
        }
    }
}

/// A change to the seeks, to be undone in reverse order.
#[derive(Debug)]
enum SeekChange {
    Added(Name),
    Removed(usize, Seek),
}

/// The decisions held and what each keeps busy.
#[derive(Debug)]
pub(super) struct Holds<R> {
    /// The command running now records here.
    running: Option<Journal<R>>,
    held: HashMap<Held, Journal<R>>,
    names: hashbrown::HashMap<NameKey, Held>,
    games: HashMap<GameId, Held>,
    next: u64,
}

impl<R> Default for Holds<R> {
    fn default() -> Holds<R> {
        Holds {
            running: None,
            held: HashMap::new(),
            names: hashbrown::HashMap::new(),
            games: HashMap::new(),
            next: 0,
        }
    }
}

impl<R> LobbyEffect<R> {
    /// Whether the command's answer must wait for this effect's write: a new
    /// game, and the seats of a game someone joined.
    fn needs_commit(&self) -> bool {
        matches!(
            self,
            LobbyEffect::Launch(_) | LobbyEffect::StoreSeats { .. }
        )
    }
}

impl<R: Clone> LobbyCore<R> {
    /// Runs a command that may change the lobby: a refusal puts back whatever
    /// it had changed; a decision that needs a write is held (`Done::held`).
    pub(super) fn transact<T>(
        &mut self,
        command: impl FnOnce(&mut Self) -> Result<Done<T, R>, Refusal>,
    ) -> Result<Done<T, R>, Refusal> {
        self.holds.running = Some(Journal::default());
        let result = command(self);
        let journal = self.holds.running.take().unwrap_or_default();
        match result {
            Err(refused) => {
                self.put_back(journal);
                Err(refused)
            }
            Ok(mut done) => {
                if done.effects.iter().any(LobbyEffect::needs_commit) {
                    done.held = Some(self.hold(journal));
                }
                Ok(done)
            }
        }
    }

    fn hold(&mut self, journal: Journal<R>) -> Held {
        self.holds.next += 1;
        let held = Held(NonZeroU64::MIN.saturating_add(self.holds.next - 1));
        for (name, _) in &journal.people {
            self.holds.names.insert(NameKey(Name::clone(name)), held);
        }
        for &(game, _) in &journal.games {
            self.holds.games.insert(game, held);
        }
        self.holds.held.insert(held, journal);
        held
    }

    /// The held decision's write committed: it stands.
    pub fn stored(&mut self, held: Held) {
        self.release(held);
    }

    /// The held decision's write failed: the lobby is put back as it was
    /// before the command.
    pub fn not_stored(&mut self, held: Held) {
        if let Some(journal) = self.release(held) {
            self.put_back(journal);
        }
        self.unpaired |= self.matching_seeks().is_some();
    }

    fn release(&mut self, held: Held) -> Option<Journal<R>> {
        let journal = self.holds.held.remove(&held)?;
        for (name, _) in &journal.people {
            if self.holds.names.get(&Caseless(name)) == Some(&held) {
                self.holds.names.remove(&Caseless(name));
            }
        }
        for (game, _) in &journal.games {
            if self.holds.games.get(game) == Some(&held) {
                self.holds.games.remove(game);
            }
        }
        Some(journal)
    }

    /// The held decision a command or event must wait for: one that touched
    /// `name`, the game `name` sits at, or `game`.
    pub fn waits_for(&self, name: Option<&str>, game: Option<GameId>) -> Option<Held> {
        if self.holds.held.is_empty() {
            return None;
        }
        let by_name = name.and_then(|n| self.holds.names.get(&Caseless(n)));
        let by_seat = || {
            name.and_then(|n| self.seat_of(n))
                .and_then(|g| self.holds.games.get(&g))
        };
        let by_game = || game.and_then(|g| self.holds.games.get(&g));
        by_name.or_else(by_seat).or_else(by_game).copied()
    }

    /// How many decisions are held (the tests check that none is left).
    #[cfg(test)]
    pub fn held_count(&self) -> usize {
        self.holds.held.len()
    }

    fn put_back(&mut self, journal: Journal<R>) {
        if let Some(challenge) = journal.accepted {
            self.reopen_challenge(challenge);
        }
        for change in journal.seeks.into_iter().rev() {
            match change {
                SeekChange::Added(name) => {
                    self.note_seek(&name);
                    if let Some(index) = self
                        .seeks
                        .iter()
                        .rposition(|s| s.name.eq_ignore_ascii_case(&name))
                    {
                        self.seeks.remove(index);
                    }
                }
                SeekChange::Removed(index, seek) => {
                    self.note_seek(&seek.name);
                    let index = index.min(self.seeks.len());
                    self.seeks.insert(index, seek);
                }
            }
        }
        for (name, old) in journal.people {
            match old {
                Some(person) => self.people.insert(NameKey(name), person),
                None => self.people.remove(&Caseless(&name)),
            };
        }
        for (game, old) in journal.games {
            match old {
                Some(entry) => self.games.insert(game, entry),
                None => self.games.remove(&game),
            };
        }
    }

    // Every change to the people, games and seeks goes through these, so that
    // a running command's journal sees it.

    fn note_person(&mut self, name: &str) {
        let Some(journal) = &mut self.holds.running else {
            return;
        };
        if journal
            .people
            .iter()
            .any(|(n, _)| n.eq_ignore_ascii_case(name))
        {
            return;
        }
        let old = self.people.get_key_value(&Caseless(name));
        let key = old.map_or_else(|| Name::from(name), |(k, _)| Name::clone(&k.0));
        journal.people.push((key, old.map(|(_, p)| *p)));
    }

    fn note_game(&mut self, game: GameId) {
        let Some(journal) = &mut self.holds.running else {
            return;
        };
        if journal.games.iter().any(|(g, _)| *g == game) {
            return;
        }
        journal.games.push((game, self.games.get(&game).cloned()));
    }

    /// `name`'s record, made if new.
    pub(super) fn person_mut(&mut self, name: &Name) -> &mut Person {
        self.note_person(name);
        (self.people.entry(NameKey(Name::clone(name)))).or_default()
    }

    /// `name`'s record, if there is one.
    pub(super) fn existing_person_mut(&mut self, name: &str) -> Option<&mut Person> {
        if !self.people.contains_key(&Caseless(name)) {
            return None;
        }
        self.note_person(name);
        self.people.get_mut(&Caseless(name))
    }

    pub(super) fn remove_person(&mut self, name: &str) {
        self.note_person(name);
        self.people.remove(&Caseless(name));
    }

    pub(super) fn game_mut(&mut self, game: GameId) -> Option<&mut Entry<R>> {
        if !self.games.contains_key(&game) {
            return None;
        }
        self.note_game(game);
        self.games.get_mut(&game)
    }

    pub(super) fn insert_game(&mut self, game: GameId, entry: Entry<R>) {
        self.note_game(game);
        self.games.insert(game, entry);
    }

    pub(super) fn remove_game(&mut self, game: GameId) -> Option<Entry<R>> {
        self.note_game(game);
        self.games.remove(&game)
    }

    /// Notes, in the running command's journal, the challenge it accepted.
    pub(super) fn note_accepted(&mut self, challenge: &super::LobbyChallenge) {
        if let Some(journal) = &mut self.holds.running {
            journal.accepted = Some(challenge.clone());
        }
    }

    pub(super) fn push_seek(&mut self, seek: Seek) {
        if let Some(journal) = &mut self.holds.running {
            journal
                .seeks
                .push(SeekChange::Added(Name::clone(&seek.name)));
        }
        self.note_seek(&seek.name);
        self.seeks.push(seek);
    }

    pub(super) fn remove_seek(&mut self, index: usize) -> Option<Seek> {
        if index >= self.seeks.len() {
            return None;
        }
        let seek = self.seeks.remove(index);
        self.note_seek(&seek.name);
        if let Some(journal) = &mut self.holds.running {
            journal.seeks.push(SeekChange::Removed(index, seek.clone()));
        }
        Some(seek)
    }
}

/// Work that waits for held decisions, each kept until its decision is
/// settled and then handed back in the order it came.
#[derive(Debug)]
pub struct Waiting<J> {
    jobs: HashMap<Held, Vec<J>>,
}

impl<J> Default for Waiting<J> {
    fn default() -> Waiting<J> {
        Waiting {
            jobs: HashMap::new(),
        }
    }
}

impl<J> Waiting<J> {
    /// `job` waits for `held`.
    pub fn push(&mut self, held: Held, job: J) {
        self.jobs.entry(held).or_default().push(job);
    }

    /// The jobs that waited for `held`, in the order they came.
    pub fn take(&mut self, held: Held) -> Vec<J> {
        self.jobs.remove(&held).unwrap_or_default()
    }

    /// Whether no job waits.
    pub fn is_empty(&self) -> bool {
        self.jobs.is_empty()
    }
}
