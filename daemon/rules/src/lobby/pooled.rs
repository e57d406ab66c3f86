//! Seeks on a node of a cluster: the node keeps its players' seeks (so
//! `WHO` shows them, and entering a game withdraws them as on one daemon)
//! but pairs none itself: the lobby leader pairs every node's seeks
//! (`crate::seek_pool`). What changed is noted for the leader; a pairing
//! the leader decides is made here when the older seek is this node's,
//! with the other seeker's seat held for it whether it is here or on
//! another node (its node seats it over the bus).

use flipline::protocol::GameId;

use super::{AwayPass, Done, GameTerms, LobbyCore, Origin, SeekWanted, done};
use crate::refusal::Refusal;
use crate::{ConnId, Name, Sitter};

/// A seek as the leader hears of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PooledSeek {
    /// Whose.
    pub name: Name,
    /// Its connection here.
    pub conn: ConnId,
    /// What it seeks.
    pub wanted: SeekWanted,
    /// How it logged in: what the game's node, if another, seats it by.
    pub pass: AwayPass,
}

/// What the leader is to hear of a name's seek.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PoolNote {
    /// It seeks (again, or anew).
    Sought(PooledSeek),
    /// It seeks no more.
    Withdrawn(Name),
}

/// The seeker a pairing made here sits with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Partner {
    /// One of this node's seekers.
    Here(Name),
    /// A seeker of another node, who logged in there as `pass` says: its
    /// seat is held for it (as a guest's, by its secret) until it comes.
    Far(Name, AwayPass),
}

impl<R: Clone> LobbyCore<R> {
    /// From now on this lobby's seeks are paired by the cluster's leader.
    pub fn pool_seeks(&mut self) {
        self.pooled = true;
    }

    /// A seek of `name` was added or removed: the leader is to hear.
    pub(super) fn note_seek(&mut self, name: &Name) {
        if self.pooled && !self.pool_dirty.iter().any(|n| n.eq_ignore_ascii_case(name)) {
            self.pool_dirty.push(Name::clone(name));
        }
    }

    /// What the leader has not heard yet, a note per name whose seek
    /// changed, as it stands now; empty unless pooled. Notes are sent for
    /// decisions still held too: the leader pairs what it is told, and a
    /// pairing of a seek put back is refused where it is made.
    pub fn pool_notes(&mut self) -> Vec<PoolNote> {
        let names = std::mem::take(&mut self.pool_dirty);
        names.into_iter().map(|name| self.pool_note(name)).collect()
    }

    /// Every seek here, for a new leader.
    pub fn pool_all(&self) -> Vec<PoolNote> {
        (self.seeks.iter())
            .map(|s| self.pool_note(Name::clone(&s.name)))
            .collect()
    }

    fn pool_note(&self, name: Name) -> PoolNote {
        let seek = self
            .seeks
            .iter()
            .find(|s| s.name.eq_ignore_ascii_case(&name));
        let person = self.people.get(&super::Caseless(&name));
        match (seek, person.and_then(|p| p.conn.map(|c| (p, c)))) {
            (Some(seek), Some((person, conn))) => PoolNote::Sought(PooledSeek {
                name: Name::clone(&seek.name),
                conn: conn.get(),
                wanted: seek.wanted(),
                pass: AwayPass {
                    secret: person.secret,
                    member: person.member,
                    marks: person.marks,
                },
            }),
            _ => PoolNote::Withdrawn(name),
        }
    }

    /// The leader paired `waiting`'s seek of `wanted`, here, with
    /// `partner`: the game, held until stored, both seeks gone (colours
    /// by `coin`: true gives `waiting` black). Refused if a seek is no
    /// longer here as the leader knew it, or the far partner sits in a
    /// game in play here.
    pub fn pair_pooled(
        &mut self,
        waiting: &Name,
        wanted: SeekWanted,
        partner: Partner,
        (coin, next_id): (bool, impl FnOnce() -> GameId),
    ) -> Result<Done<GameId, R>, Refusal> {
        self.transact(|core| core.decide_pooled(waiting, wanted, partner, coin, next_id))
    }

    fn decide_pooled(
        &mut self,
        waiting: &Name,
        wanted: SeekWanted,
        partner: Partner,
        coin: bool,
        next_id: impl FnOnce() -> GameId,
    ) -> Result<Done<GameId, R>, Refusal> {
        let mut effects = Vec::new();
        let waiting_conn = self.take_pooled_seek(waiting, |w| *w == wanted)?;
        let other = match partner {
            Partner::Here(name) => {
                let conn = self.take_pooled_seek(&name, |w| w.pairs_with(&wanted))?;
                Sitter::Person(name, Some(conn))
            }
            Partner::Far(name, pass) => self.hold_far_seat(name, pass, &mut effects)?,
        };
        let first = Sitter::Person(Name::clone(waiting), Some(waiting_conn));
        let seats = match coin {
            true => [first, other],
            false => [other, first],
        };
        let terms = GameTerms {
            variant: wanted.variant,
            clock: wanted.clock,
            rated: wanted.rated.is_some(),
            start: Vec::new(),
            tourney: None,
        };
        let game = next_id();
        // Nobody's command made it: each player here learns its seat.
        let origin = Origin {
            asker: None,
            near: Some(waiting_conn),
        };
        self.launch(game, terms, seats, origin, &mut effects);
        done(game, effects)
    }

    /// The leader pairs `name`'s seek of `wanted` here with a seek on the
    /// node that makes the game: it is taken out (refused if it is no
    /// longer here as the leader knew it), until that node seats it or the
    /// pairing comes to nothing ([`LobbyCore::release_pooled`]).
    pub fn reserve_pooled(&mut self, name: &Name, wanted: SeekWanted) -> Result<(), Refusal> {
        if self
            .people
            .get(&super::Caseless(name))
            .is_some_and(|p| p.pairing)
        {
            return Err(Refusal::BeingPaired);
        }
        self.take_pooled_seek(name, |w| *w == wanted)?;
        if let Some(person) = self.existing_person_mut(name) {
            person.pairing = true;
        }
        Ok(())
    }

    /// `name` logged in again while a pairing that took its seek here out
    /// is not settled yet: it takes no other seat meanwhile either.
    pub fn mark_pairing(&mut self, name: &Name) {
        if self.holder(name).is_some()
            && let Some(person) = self.existing_person_mut(name)
        {
            person.pairing = true;
        }
    }

    /// The game of the pairing that took `name`'s seek here was made on
    /// another node: the name is held for it as for a seat taken there
    /// (`sit_away`), which the player's session then takes. A pairing whose
    /// seek was put back meanwhile (its timer ran out) still seats a free
    /// player.
    pub fn paired_away(&mut self, name: &Name, game: GameId) -> Result<Done<AwayPass, R>, Refusal> {
        // A challenge taken out for that game is settled by it, and so is
        // the taking out, whether the seat is taken or refused.
        self.forget_accepting(name);
        if let Some(person) = self.existing_person_mut(name) {
            person.pairing = false;
        }
        self.transact(|core| core.decide_sit_away(name, game))
    }

    /// A pairing that took `name`'s seek of `wanted` came to nothing: it
    /// seeks again, if still logged in here, free and seeking nothing else.
    pub fn release_pooled(&mut self, name: &Name, wanted: SeekWanted) -> bool {
        if let Some(person) = self.existing_person_mut(name) {
            person.pairing = false;
        }
        let seeking = self.seeks.iter().any(|s| s.name.eq_ignore_ascii_case(name));
        let seated = self.seat_of(name).is_some() || self.away_of(name).is_some();
        if seeking || seated || self.holder(name).is_none() {
            return false;
        }
        self.push_seek(super::Seek {
            name: Name::clone(name),
            variant: wanted.variant,
            clock: wanted.clock,
            rated: wanted.rated,
        });
        true
    }

    /// Takes `name`'s seek here if `fits` its terms: its connection.
    fn take_pooled_seek(
        &mut self,
        name: &Name,
        fits: impl Fn(&SeekWanted) -> bool,
    ) -> Result<ConnId, Refusal> {
        let conn = self.logged_in(name)?;
        let index = self
            .seeks
            .iter()
            .position(|s| s.name.eq_ignore_ascii_case(name) && fits(&s.wanted()))
            .ok_or(Refusal::SeekGone)?;
        self.remove_seek(index);
        Ok(conn)
    }

    /// The seat of `name`, a seeker of another node: held for it here as
    /// for a player who has not come back yet (a guest's by its secret).
    /// A game over here that it had not left, it leaves. A connection here
    /// that holds the name can only be that player's, from its node (a
    /// name is online on one node): its seat from an earlier game here.
    pub(super) fn hold_far_seat(
        &mut self,
        name: Name,
        pass: AwayPass,
        effects: &mut Vec<super::LobbyEffect<R>>,
    ) -> Result<Sitter<ConnId>, Refusal> {
        self.check_free(&name)?;
        self.vacate(&name, effects);
        let held = self.holder(&name).is_some();
        let person = self.person_mut(&name);
        if !held {
            person.secret = pass.secret;
            person.member = pass.member;
            person.marks = pass.marks;
        }
        Ok(Sitter::Person(name, None))
    }
}
