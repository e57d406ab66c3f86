//! Seeks across a cluster's nodes: one node, the lobby's leader (a row in
//! PostgreSQL, taken over when its holder's lease passes, its epoch bumped
//! each time), pairs every node's seeks.
//!
//! - Every node tells the leader each change of its seeks (`Seek`,
//!   `Unseek`) and, when another node leads, all of them again.
//! - The leader pairs in its pool (`rules::seek_pool`). The game is made on
//!   the older seek's node. If the other seeker is on another node, the
//!   leader first has its node take that seek out (`Reserve`); then the
//!   older seek's node makes the game (`Pair`), holding the other's seat,
//!   and tells the other's node (`Paired`), whose session takes the seat
//!   there as `JOIN` does. A pairing that comes to nothing puts the
//!   reserved seek back (`Release`, or by itself after `RESERVED_FOR`).
//! - Safety is the nodes': each seek is taken once, by its own node's
//!   lobby, so two leaders for a moment (one paused past its lease) can
//!   pair nothing twice; orders of an older epoch than one read are
//!   refused. The pool is only where seeks meet.

use std::sync::Arc;
use std::time::Duration;

use flipline::Variant;
use flipline::protocol::{ClockSpec, CommandKind, ErrorCode, GameId, ProtocolError, RatingRange};

use super::{Remote, lock, owner_answer};
use crate::bus::{Body, FarPartner, FarPass, FarSeek};
use crate::messages::{
    Answer, AwayPass, GuestSecret, Name, PairSeeks, PairedThere, ReleaseSeek, ReserveSeek,
};
use crate::random::random_u64;
use crate::rules::lobby::{Marks, Partner, PoolNote, RatedSeek, SeekWanted};
use crate::rules::seek_pool::{Pairing, SeekPool, Seeker};
use flipline::protocol::Reply;

/// How long a seek taken out for a pairing stays out without news of it
/// (the leader or the game's node died meanwhile): then it seeks again.
const RESERVED_FOR: Duration = Duration::from_secs(30);

/// The leader's pool and the epoch it was filled under.
#[derive(Default)]
pub(super) struct LeaderPool {
    epoch: i64,
    seeks: SeekPool<FarPass>,
}

impl FarSeek {
    /// `wanted` on the bus.
    pub fn of(wanted: &SeekWanted) -> FarSeek {
        FarSeek {
            variant: wanted.variant.to_string(),
            clock: wanted.clock.map(|c| (c.base_ms, c.increment_ms)),
            rated: wanted
                .rated
                .map(|r| (r.rating, r.range.map(|r| (r.low, r.high)))),
        }
    }

    /// What it seeks, if it reads.
    pub fn wanted(&self) -> Option<SeekWanted> {
        let variant: Variant = self.variant.parse().ok()?;
        Some(SeekWanted {
            variant,
            clock: self.clock.map(|(base_ms, increment_ms)| ClockSpec {
                base_ms,
                increment_ms,
            }),
            rated: self.rated.map(|(rating, range)| RatedSeek {
                rating,
                range: range.map(|(low, high)| RatingRange { low, high }),
            }),
        })
    }
}

impl FarPass {
    /// How the lobby here takes it: a guest's secret, if it reads.
    fn away_pass(&self) -> AwayPass {
        AwayPass {
            secret: self.secret.as_deref().and_then(GuestSecret::parse),
            member: self.member,
            marks: Marks {
                rating: self.rating,
                bot: self.bot,
            },
        }
    }
}

fn unreadable_seek() -> ProtocolError {
    ProtocolError::new(ErrorCode::BadRequest, "a seek that does not read")
}

fn not_the_leader() -> ProtocolError {
    ProtocolError::new(
        ErrorCode::Conflict,
        "the order came from a lobby leader that was replaced",
    )
}

fn stopping(_: actix::MailboxError) -> ProtocolError {
    ProtocolError::new(ErrorCode::Unavailable, "the daemon is stopping")
}

// ---- every node: its seeks, told to the leader ----

impl Remote {
    /// A seek here changed: the leader hears it. Dropped while no leader
    /// is known; a leader, once read, hears every seek again.
    pub fn pool_note(&self, note: PoolNote) {
        let Some((leader, epoch)) = self.counts.leader() else {
            return;
        };
        let body = match note {
            PoolNote::Sought(seek) => Body::Seek {
                epoch,
                conn: seek.conn,
                seek: FarSeek::of(&seek.wanted),
                pass: FarPass::of(&seek.name, seek.pass),
            },
            PoolNote::Withdrawn(name) => Body::Unseek {
                epoch,
                name: name.to_string(),
            },
        };
        self.bus.send(&leader, body);
    }

    /// Whether an order of the leader of `epoch` is older than the leader
    /// this node has read.
    fn stale(&self, epoch: i64) -> bool {
        self.counts.leader().is_some_and(|(_, known)| known > epoch)
    }
}

// ---- the leader ----

impl Remote {
    /// The pool, for seeks told under `epoch`: `None` if a newer leader is
    /// known; a newer epoch than the pool's starts it empty.
    fn pool_at(&self, epoch: i64) -> Option<std::sync::MutexGuard<'_, LeaderPool>> {
        if self.stale(epoch) {
            return None;
        }
        let mut pool = lock(&self.pool);
        if epoch < pool.epoch {
            return None;
        }
        if epoch > pool.epoch {
            pool.seeks.clear();
            pool.epoch = epoch;
        }
        Some(pool)
    }

    /// The leader: `from`'s player on `conn` seeks.
    pub(super) fn sought(
        self: &Arc<Self>,
        from: String,
        (epoch, conn): (i64, u64),
        seek: &FarSeek,
        pass: FarPass,
    ) {
        let Some(wanted) = seek.wanted() else {
            tracing::warn!(from, ?seek, "a seek from another node does not read");
            return;
        };
        let seeker = Seeker {
            node: from,
            conn,
            name: Name::from(pass.name.as_str()),
            wanted,
            pass,
        };
        self.announce(epoch, seeker);
    }

    fn announce(self: &Arc<Self>, epoch: i64, seeker: Seeker<FarPass>) {
        let pairing = match self.pool_at(epoch) {
            Some(mut pool) => pool.seeks.announce(seeker),
            None => return,
        };
        if let Some(pairing) = pairing {
            self.counts.paired();
            tokio::spawn(Arc::clone(self).make_pairing(epoch, pairing));
        }
    }

    /// The leader: `from`'s player `name` seeks no more.
    pub(super) fn unsought(&self, from: &str, epoch: i64, name: &str) {
        if let Some(mut pool) = self.pool_at(epoch) {
            pool.seeks.withdraw(from, name);
        }
    }

    /// The leader: the seeks of `nodes` go (dead, or started again).
    pub(super) fn forget_seeks_of(&self, nodes: &[String]) {
        let mut pool = lock(&self.pool);
        for node in nodes {
            pool.seeks.forget_node(node);
        }
    }

    /// The leader: has the pairing made on the older seek's node, the
    /// other seek taken out first if it is another node's.
    async fn make_pairing(self: Arc<Self>, epoch: i64, pairing: Pairing<FarPass>) {
        let Pairing { waiting, asker } = pairing;
        let far = asker.node != waiting.node;
        if far && let Err(e) = self.reserve_there(epoch, &asker).await {
            // The other seek went meanwhile: the older one waits on.
            tracing::debug!(name = %asker.name, error = %e, "a pairing's seek was gone");
            return self.announce(epoch, waiting);
        }
        let (request, answer) = self.pending_request();
        let partner = FarPartner {
            node: asker.node.clone(),
            conn: asker.conn,
            pass: asker.pass.clone(),
        };
        let body = Body::Pair {
            request,
            epoch,
            waiting: waiting.name.to_string(),
            seek: FarSeek::of(&waiting.wanted),
            partner,
            coin: random_u64() & 1 == 0,
        };
        self.bus.send(&waiting.node, body);
        if let Err(e) = owner_answer(CommandKind::Seek, answer).await {
            lock(&self.pending).remove(&request);
            tracing::debug!(name = %waiting.name, error = %e, "a pairing was not made");
            // Seeks put back on their nodes are told again from there.
            if far {
                let release = Body::Release {
                    name: asker.name.to_string(),
                    seek: FarSeek::of(&asker.wanted),
                };
                self.bus.send(&asker.node, release);
            }
        }
    }

    async fn reserve_there(
        &self,
        epoch: i64,
        seeker: &Seeker<FarPass>,
    ) -> Result<(), ProtocolError> {
        let (request, answer) = self.pending_request();
        let body = Body::Reserve {
            request,
            epoch,
            name: seeker.name.to_string(),
            seek: FarSeek::of(&seeker.wanted),
        };
        self.bus.send(&seeker.node, body);
        let reserved = owner_answer(CommandKind::Seek, answer).await;
        if reserved.is_err() {
            lock(&self.pending).remove(&request);
        }
        reserved.map(|_| ())
    }
}

// ---- the seekers' nodes ----

impl Remote {
    /// The leader `from` takes `name`'s seek here out for a pairing.
    pub(super) async fn reserve(
        self: Arc<Self>,
        from: String,
        (request, epoch): (u64, i64),
        name: String,
        seek: FarSeek,
    ) {
        let result = self.reserve_here(epoch, &name, &seek).await;
        if result.is_ok() {
            self.hold_reserved(name, seek);
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

    /// A seek taken out here seeks again after [`RESERVED_FOR`] unless
    /// its pairing is settled first.
    fn hold_reserved(self: &Arc<Self>, name: String, seek: FarSeek) {
        let token = random_u64();
        lock(&self.reserved).insert(name.to_ascii_lowercase(), token);
        let me = Arc::downgrade(self);
        tokio::spawn(async move {
            tokio::time::sleep(RESERVED_FOR).await;
            if let Some(remote) = me.upgrade() {
                let mut reserved = lock(&remote.reserved);
                if reserved.get(&name.to_ascii_lowercase()) == Some(&token) {
                    reserved.remove(&name.to_ascii_lowercase());
                    drop(reserved);
                    remote.release(&name, &seek);
                }
            }
        });
    }

    /// The pairing that took `name`'s seek here out came to nothing.
    pub(super) fn release(&self, name: &str, seek: &FarSeek) {
        lock(&self.reserved).remove(&name.to_ascii_lowercase());
        if let Some(wanted) = seek.wanted() {
            let release = ReleaseSeek {
                name: Name::from(name),
                wanted,
            };
            self.doors.release.do_send(release);
        }
    }

    /// Another node made `game` for the pairing of `name`'s seek here: its
    /// session takes the seat there.
    pub(super) fn paired(&self, conn: u64, name: &str, game: GameId) {
        lock(&self.reserved).remove(&name.to_ascii_lowercase());
        let paired = PairedThere {
            name: Name::from(name),
            conn,
            game,
        };
        self.doors.paired.do_send(paired);
    }

    /// The leader `from` paired `waiting`'s seek here with `partner`'s:
    /// the game is made here; a partner of another node hears where.
    pub(super) async fn pair_here(
        self: Arc<Self>,
        from: String,
        (request, epoch): (u64, i64),
        (waiting, seek, partner, coin): (String, FarSeek, FarPartner, bool),
    ) {
        let made = self.make_here(epoch, &waiting, &seek, &partner, coin).await;
        if let Ok(game) = made
            && partner.node != self.bus.node()
        {
            let paired = Body::Paired {
                conn: partner.conn,
                name: partner.pass.name.clone(),
                game,
            };
            self.bus.send(&partner.node, paired);
        }
        self.answer(
            &from,
            request,
            made.map(|game| Answer::ok(Reply::Game(game))),
        );
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
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_seek_reads_back_as_it_was_sent() {
        let rated = SeekWanted {
            variant: Variant::Reversi,
            clock: Some(ClockSpec {
                base_ms: 300_000,
                increment_ms: 2_000,
            }),
            rated: Some(RatedSeek {
                rating: 1610,
                range: Some(RatingRange {
                    low: 1400,
                    high: 1800,
                }),
            }),
        };
        let casual = SeekWanted::casual(Variant::Othello, None);
        for wanted in [rated, casual] {
            assert_eq!(FarSeek::of(&wanted).wanted(), Some(wanted));
        }
        let mut bad = FarSeek::of(&casual);
        bad.variant = "chess".into();
        assert_eq!(bad.wanted(), None);
    }

    #[test]
    fn a_far_pass_keeps_a_guest_s_secret_and_a_member_s_marks() {
        let secret = "00112233445566778899aabbccddeeff";
        let pass = FarPass {
            name: "cy".into(),
            secret: Some(secret.into()),
            member: false,
            rating: Some(1500),
            bot: true,
        };
        let away = pass.away_pass();
        assert_eq!(away.secret, GuestSecret::parse(secret));
        assert!(away.secret.is_some());
        assert_eq!(
            (away.member, away.marks.rating, away.marks.bot),
            (false, Some(1500), true)
        );
    }
}
