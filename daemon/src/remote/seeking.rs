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
//!   there as `JOIN` does, or that it made none (`Unpaired`): only the
//!   game's node settles a pairing (see `pairing`).
//! - Safety is the nodes': each seek is taken once, by its own node's
//!   lobby, so two leaders for a moment (one paused past its lease) can
//!   pair nothing twice; orders of an older epoch than one read are
//!   refused. The pool is only where seeks meet.

use std::sync::Arc;

use flipline::Variant;
use flipline::protocol::{ClockSpec, CommandKind, ProtocolError, RatingRange};

use super::{Remote, lock, owner_answer};
use crate::bus::{Body, FarPartner, FarPass, FarSeek};
use crate::messages::{AwayPass, GuestSecret, Name};
use crate::random::random_u64;
use crate::rules::lobby::{Marks, PoolNote, RatedSeek, SeekWanted};
use crate::rules::seek_pool::{Pairing, SeekPool, Seeker};

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
    pub(super) fn away_pass(&self) -> AwayPass {
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
    pub(super) fn stale(&self, epoch: i64) -> bool {
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
        self.into_pool(epoch, seeker, SeekPool::announce);
    }

    /// Puts `seeker` into the pool by `put` (as a new seek, or back first
    /// in line), and has a pairing it makes carried out.
    fn into_pool(
        self: &Arc<Self>,
        epoch: i64,
        seeker: Seeker<FarPass>,
        put: fn(&mut SeekPool<FarPass>, Seeker<FarPass>) -> Option<Pairing<FarPass>>,
    ) {
        let pairing = match self.pool_at(epoch) {
            Some(mut pool) => {
                let pairing = put(&mut pool.seeks, seeker);
                self.counts.set_seeks_pooled(pool.seeks.len());
                pairing
            }
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
            self.counts.set_seeks_pooled(pool.seeks.len());
        }
    }

    /// The leader: the seeks of `nodes` go (dead, or started again).
    pub(super) fn forget_seeks_of(&self, nodes: &[String]) {
        let mut pool = lock(&self.pool);
        for node in nodes {
            pool.seeks.forget_node(node);
        }
        self.counts.set_seeks_pooled(pool.seeks.len());
    }

    /// The leader: has the pairing made on the older seek's node, the
    /// other seek taken out first if it is another node's. From the
    /// `Pair` on, the game's node settles it with the other seeker's node.
    async fn make_pairing(self: Arc<Self>, epoch: i64, pairing: Pairing<FarPass>) {
        let Pairing { waiting, asker } = pairing;
        let id = random_u64();
        if asker.node != waiting.node
            && let Err(e) = self.reserve_there(epoch, id, &waiting.node, &asker).await
        {
            // The other seek went meanwhile: the older one waits on, first
            // in line still.
            tracing::debug!(name = %asker.name, error = %e, "a pairing's seek was gone");
            return self.into_pool(epoch, waiting, SeekPool::reinstate);
        }
        let partner = FarPartner {
            node: asker.node.clone(),
            conn: asker.conn,
            pass: asker.pass.clone(),
        };
        let body = Body::Pair {
            pairing: id,
            epoch,
            waiting: waiting.name.to_string(),
            seek: FarSeek::of(&waiting.wanted),
            partner,
            coin: random_u64() & 1 == 0,
        };
        self.bus.send(&waiting.node, body);
    }

    async fn reserve_there(
        &self,
        epoch: i64,
        pairing: u64,
        maker: &str,
        seeker: &Seeker<FarPass>,
    ) -> Result<(), ProtocolError> {
        let (request, answer) = self.pending_request();
        let body = Body::Reserve {
            request,
            epoch,
            pairing,
            maker: maker.to_string(),
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
