//! A pairing of seeks on two nodes, settled between the node that makes
//! its game (the maker) and the node whose seek the leader took out for it
//! (the asker's): only the maker decides whether the game is made, once,
//! and it tells the asker's node either way (`Paired`, `Unpaired`). The
//! asker's player takes no other seat meanwhile (`LobbyCore::
//! reserve_pooled`). Should no word come (a message lost, the maker's
//! disk slow), the asker's node asks the maker every [`ASK_EVERY`]; a
//! maker that never heard of the pairing then refuses it for good, so a
//! seek put back can never also be seated by a late game. A maker
//! declared dead settles nothing more: the store then says whether it
//! stored the game (the player is seated in a game in play), which comes
//! back on a live node and is sat at from here.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::Duration;

use flipline::protocol::{ErrorCode, GameId, ProtocolError, Reply};

use super::seats::stopping;
use super::{ANSWER_WITHIN, RawAnswer, Remote, lock};
use crate::bus::{Body, FarPartner, FarSeek};
use crate::messages::{
    Answer, FreeTakenOut, Name, PairSeeks, PairedThere, ReleaseChallenger, ReleaseSeek, ReserveSeek,
};
use crate::rules::challenges::ChallengeId;
use crate::rules::lobby::Partner;

/// How long the asker's node waits for the maker's word before asking.
const ASK_EVERY: Duration = Duration::from_secs(10);

/// How many pairings a maker remembers the outcome of, for late questions.
const REMEMBERED: usize = 65_536;

/// A player here taken out for a pairing another node settles.
pub(super) struct Reservation {
    pub(super) name: String,
    pub(super) what: Reserved,
    pub(super) maker: String,
}

/// What a player was taken out by.
pub(super) enum Reserved {
    /// Its seek, paired by the leader.
    Seek(FarSeek),
    /// Its challenge (this node's number), accepted on the maker.
    Challenge(ChallengeId),
    /// Itself, for a game the maker makes with it (a tournament's round).
    Player,
}

/// What a maker knows of a pairing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Outcome {
    /// Its game is being made.
    Making,
    Made(GameId),
    /// Not made, or asked about before it came: never to be made.
    None,
}

/// The maker's memory of pairings, the oldest forgotten first.
#[derive(Default)]
pub(super) struct Making {
    outcomes: HashMap<u64, Outcome>,
    order: VecDeque<u64>,
}

impl Making {
    fn get(&self, pairing: u64) -> Option<Outcome> {
        self.outcomes.get(&pairing).copied()
    }

    fn set(&mut self, pairing: u64, outcome: Outcome) {
        if self.outcomes.insert(pairing, outcome).is_none() {
            self.order.push_back(pairing);
        }
        while self.order.len() > REMEMBERED {
            if let Some(old) = self.order.pop_front() {
                self.outcomes.remove(&old);
            }
        }
    }
}

fn not_the_leader() -> ProtocolError {
    ProtocolError::new(
        ErrorCode::Conflict,
        "the order came from a lobby leader that was replaced",
    )
}

fn unreadable_seek() -> ProtocolError {
    ProtocolError::new(ErrorCode::BadRequest, "a seek that does not read")
}

// ---- the asker's node ----

impl Remote {
    /// The leader `from` takes `name`'s seek here out for `pairing`,
    /// whose game `maker` makes.
    pub(super) async fn reserve(
        self: Arc<Self>,
        from: String,
        (request, epoch, pairing): (u64, i64, u64),
        (name, seek, maker): (String, FarSeek, String),
    ) {
        let result = self.reserve_here(epoch, &name, &seek).await;
        if result.is_ok() {
            let what = Reserved::Seek(seek);
            self.reserved_for(pairing, Reservation { name, what, maker });
        }
        self.answer(&from, request, result.map(|()| Answer::ok(Reply::Seeking)));
    }

    async fn reserve_here(
        &self,
        epoch: i64,
        name: &str,
        seek: &FarSeek,
    ) -> Result<(), ProtocolError> {
        if self.stale(epoch) {
            return Err(not_the_leader());
        }
        let wanted = seek.wanted().ok_or_else(unreadable_seek)?;
        let reserve = ReserveSeek {
            name: Name::from(name),
            wanted,
        };
        self.doors.reserve.send(reserve).await.map_err(stopping)?
    }

    /// Keeps `reservation` until its maker settles `pairing`, asking it
    /// should no word come.
    pub(super) fn reserved_for(self: &Arc<Self>, pairing: u64, reservation: Reservation) {
        lock(&self.reserved).insert(pairing, reservation);
        tokio::spawn(Arc::clone(self).ask_until_settled(pairing));
    }

    /// Asks the maker of `pairing` what became of it, every [`ASK_EVERY`],
    /// until it is settled.
    async fn ask_until_settled(self: Arc<Self>, pairing: u64) {
        loop {
            tokio::time::sleep(ASK_EVERY).await;
            let asked = lock(&self.reserved)
                .get(&pairing)
                .map(|r| (r.maker.clone(), r.name.clone()));
            let Some((maker, name)) = asked else {
                return;
            };
            let (request, answer) = self.pending_request();
            let ask = Body::AskPairing {
                request,
                pairing,
                name,
            };
            self.bus.send(&maker, ask);
            let answered = tokio::time::timeout(ANSWER_WITHIN, answer).await;
            lock(&self.pending).remove(&request);
            // No answer: asked again next time (a maker declared dead
            // meanwhile settles it: `makers_gone`).
            if let Ok(Ok(answer)) = answered {
                self.heard(pairing, &answer);
            }
        }
    }

    /// The maker's answer about `pairing`.
    fn heard(&self, pairing: u64, answer: &RawAnswer) {
        match answer {
            Ok((_, line)) => {
                let game = line.strip_prefix("OK ").and_then(|g| g.parse().ok());
                if let Some(game) = game {
                    self.settled(pairing, Some(game));
                }
            }
            Err((404, _)) => self.settled(pairing, None),
            Err(_) => {}
        }
    }

    /// `pairing` is settled: its game, or none (the seek goes back).
    pub(super) fn settled(&self, pairing: u64, game: Option<GameId>) {
        let Some(reservation) = lock(&self.reserved).remove(&pairing) else {
            return;
        };
        let name = Name::from(reservation.name.as_str());
        match (game, reservation.what) {
            (Some(game), _) => self.doors.paired.do_send(PairedThere { name, game }),
            (None, Reserved::Seek(seek)) => {
                if let Some(wanted) = seek.wanted() {
                    self.doors.release.do_send(ReleaseSeek { name, wanted });
                }
            }
            (None, Reserved::Challenge(id)) => {
                let release = ReleaseChallenger { name, id };
                self.doors.release_challenger.do_send(release);
            }
            (None, Reserved::Player) => self.doors.free_taken_out.do_send(FreeTakenOut { name }),
        }
    }

    /// Whether `name`'s seek here is out for a pairing not settled yet.
    pub fn pairing_pending(&self, name: &str) -> bool {
        (lock(&self.reserved).values()).any(|r| r.name.eq_ignore_ascii_case(name))
    }

    /// The maker made `game` for `pairing`: its player here takes the
    /// seat there.
    pub(super) fn paired(&self, pairing: u64, game: GameId) {
        self.settled(pairing, Some(game));
    }

    /// Makers declared dead settle nothing more. A maker may have died
    /// between storing its game and saying so: the store says whether the
    /// player here is seated in a game in play (that one: the player was
    /// free when taken out), which comes back on a live node, and the
    /// player sits there; otherwise its seek (or challenge) goes back.
    pub(super) fn makers_gone(self: &Arc<Self>, nodes: &[String]) {
        let gone: Vec<(u64, String)> = (lock(&self.reserved).iter())
            .filter(|(_, r)| nodes.contains(&r.maker))
            .map(|(&pairing, r)| (pairing, r.name.clone()))
            .collect();
        for (pairing, name) in gone {
            let seat = self.store.seat_in_play(name);
            let me = Arc::clone(self);
            tokio::spawn(async move {
                let game = seat.await.unwrap_or_else(|error| {
                    tracing::warn!(%error, pairing, "a dead maker's pairing: its game not read");
                    None
                });
                me.settled(pairing, game);
            });
        }
    }
}

// ---- the maker ----

impl Remote {
    /// This node is to make `pairing`'s game: noted before the other node
    /// hears of it, so that its questions wait for the outcome.
    pub(super) fn to_make(&self, pairing: u64) {
        lock(&self.making).set(pairing, Outcome::Making);
    }

    /// `pairing`'s game was made here, or never will be.
    pub(super) fn made(&self, pairing: u64, game: Option<GameId>) {
        let outcome = game.map_or(Outcome::None, Outcome::Made);
        lock(&self.making).set(pairing, outcome);
    }

    /// The leader paired `waiting`'s seek here with `partner`'s:
    /// the game is made here, once, and a partner of another node hears
    /// either way.
    pub(super) async fn pair_here(
        self: Arc<Self>,
        (pairing, epoch): (u64, i64),
        (waiting, seek, partner, coin): (String, FarSeek, FarPartner, bool),
    ) {
        let far = partner.node != self.bus.node();
        {
            let mut making = lock(&self.making);
            if making.get(pairing).is_some() {
                return;
            }
            making.set(pairing, Outcome::Making);
        }
        let made = self.make_here(epoch, &waiting, &seek, &partner, coin).await;
        let outcome = made
            .as_ref()
            .map_or(Outcome::None, |&game| Outcome::Made(game));
        lock(&self.making).set(pairing, outcome);
        if let Err(e) = &made {
            tracing::debug!(waiting, error = %e, "a pairing's game was not made");
        }
        if !far {
            return;
        }
        let name = partner.pass.name.clone();
        let body = match made {
            Ok(game) => Body::Paired {
                pairing,
                conn: partner.conn,
                name,
                game,
            },
            Err(_) => Body::Unpaired { pairing, name },
        };
        self.bus.send(&partner.node, body);
    }

    async fn make_here(
        &self,
        epoch: i64,
        waiting: &str,
        seek: &FarSeek,
        partner: &FarPartner,
        coin: bool,
    ) -> Result<GameId, ProtocolError> {
        if self.stale(epoch) {
            return Err(not_the_leader());
        }
        let wanted = seek.wanted().ok_or_else(unreadable_seek)?;
        let name = Name::from(partner.pass.name.as_str());
        let partner = match partner.node == self.bus.node() {
            true => Partner::Here(name),
            false => Partner::Far(name, partner.pass.away_pass()),
        };
        let pair = PairSeeks {
            waiting: Name::from(waiting),
            wanted,
            partner,
            coin,
        };
        self.doors.pair.send(pair).await.map_err(stopping)?
    }

    /// The asker's node `from` asks what became of `pairing`: one not
    /// heard of yet is refused for good.
    pub(super) async fn asked_pairing(
        self: Arc<Self>,
        from: String,
        (request, pairing): (u64, u64),
        name: String,
    ) {
        let outcome = {
            let mut making = lock(&self.making);
            let outcome = making.get(pairing);
            if outcome.is_none() {
                making.set(pairing, Outcome::None);
            }
            outcome
        };
        let outcome = match outcome {
            Some(known) => known,
            None => self.outcome_stored(pairing, name.clone()).await,
        };
        let answer = match outcome {
            Outcome::Made(game) => Ok(Answer::ok(Reply::Game(game))),
            Outcome::Making => Ok(Answer::ok(Reply::Seeking)),
            Outcome::None => Err(ProtocolError::new(
                ErrorCode::NotFound,
                format!("pairing {pairing} made no game here: {name} seeks again"),
            )),
        };
        self.answer(&from, request, answer);
    }

    /// What became of `pairing`, which this node does not remember (asked
    /// before its order came, or forgotten since): refused for good from
    /// now (noted before this is asked), unless the store holds a game in
    /// play of its player `name`, who was free when taken out for it, so
    /// that game is the pairing's, made here and forgotten since.
    async fn outcome_stored(&self, pairing: u64, name: String) -> Outcome {
        if name.is_empty() {
            return Outcome::None;
        }
        match self.store.seat_in_play(name).await {
            Ok(Some(game)) => {
                lock(&self.making).set(pairing, Outcome::Made(game));
                Outcome::Made(game)
            }
            Ok(None) => Outcome::None,
            // Asked again later: the pairing stays refused meanwhile.
            Err(error) => {
                tracing::warn!(%error, pairing, "a forgotten pairing's game could not be read");
                Outcome::Making
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_maker_remembers_the_latest_pairings_only() {
        let mut making = Making::default();
        for pairing in 0..(REMEMBERED as u64 + 10) {
            making.set(pairing, Outcome::Made(pairing));
        }
        making.set(REMEMBERED as u64, Outcome::None);
        assert_eq!(making.get(3), None, "the oldest are forgotten");
        assert_eq!(making.get(10), Some(Outcome::Made(10)));
        assert_eq!(making.get(REMEMBERED as u64), Some(Outcome::None));
        assert_eq!(making.outcomes.len(), REMEMBERED);
    }
}
