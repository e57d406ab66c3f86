//! The seeks of a cluster's nodes as the lobby leader holds them: each
//! node keeps its own players' seeks and announces them to the leader,
//! which alone pairs, so that no two nodes pair the same seek. A pairing
//! takes both seeks out of the pool; the game is made on the waiting
//! seeker's node, which checks that the seek is still there (a seek
//! withdrawn on its way here is refused there, and the other seeker is
//! announced again).
//!
//! Pure: which node is the leader, and the messages, are the daemon's.

use crate::lobby::SeekWanted;
use crate::{ConnId, Name};

/// A seek as its node announced it; `P` is what the game's node needs to
/// seat its player (how it logged in).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Seeker<P> {
    /// The node its player is connected to.
    pub node: String,
    /// Its connection there.
    pub conn: ConnId,
    /// Its name.
    pub name: Name,
    /// What it seeks.
    pub wanted: SeekWanted,
    /// How it logged in.
    pub pass: P,
}

/// Two seeks paired: the game is made on `waiting`'s node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pairing<P> {
    /// The older seek.
    pub waiting: Seeker<P>,
    /// The one that paired with it.
    pub asker: Seeker<P>,
}

/// The seeks waiting, oldest first.
#[derive(Debug)]
pub struct SeekPool<P> {
    seeks: Vec<Seeker<P>>,
}

impl<P> Default for SeekPool<P> {
    fn default() -> SeekPool<P> {
        SeekPool { seeks: Vec::new() }
    }
}

impl<P> SeekPool<P> {
    /// An empty pool (a new leader's: the nodes announce their seeks
    /// again).
    pub fn new() -> SeekPool<P> {
        SeekPool::default()
    }

    /// `seeker` seeks (replacing its name's earlier seek, wherever it was
    /// announced from): paired with the oldest seek it pairs with, or left
    /// waiting.
    pub fn announce(&mut self, seeker: Seeker<P>) -> Option<Pairing<P>> {
        // The same seek told again (nodes tell theirs now and then, in case
        // a message was lost) keeps its place in line.
        let same = |s: &Seeker<P>| {
            s.name == seeker.name
                && s.node == seeker.node
                && s.conn == seeker.conn
                && s.wanted == seeker.wanted
        };
        if self.seeks.iter().any(same) {
            return None;
        }
        match self.take_partner(&seeker) {
            Some(waiting) => Some(Pairing {
                waiting,
                asker: seeker,
            }),
            None => {
                self.seeks.push(seeker);
                None
            }
        }
    }

    /// `seeker`, the older seek of a pairing that came to nothing (the
    /// other seek was gone), seeks on with its place in line: first. It
    /// pairs as [`SeekPool::announce`] would, as the older of the two.
    pub fn reinstate(&mut self, seeker: Seeker<P>) -> Option<Pairing<P>> {
        match self.take_partner(&seeker) {
            Some(asker) => Some(Pairing {
                waiting: seeker,
                asker,
            }),
            None => {
                self.seeks.insert(0, seeker);
                None
            }
        }
    }

    /// Takes `seeker`'s name out of the line (a name seeks once), then the
    /// oldest seek it pairs with, if any.
    fn take_partner(&mut self, seeker: &Seeker<P>) -> Option<Seeker<P>> {
        self.seeks
            .retain(|s| !s.name.eq_ignore_ascii_case(&seeker.name));
        let index = (self.seeks.iter()).position(|s| s.wanted.pairs_with(&seeker.wanted))?;
        Some(self.seeks.remove(index))
    }

    /// `name`'s seek, announced from `node`, is withdrawn; whether it was
    /// here. A withdrawal from another node than the seek's (the name
    /// moved on) leaves it.
    pub fn withdraw(&mut self, node: &str, name: &str) -> bool {
        let before = self.seeks.len();
        self.seeks
            .retain(|s| !(s.node == node && s.name.eq_ignore_ascii_case(name)));
        self.seeks.len() != before
    }

    /// Every seek of `node` goes (the node is dead, or started again).
    pub fn forget_node(&mut self, node: &str) {
        self.seeks.retain(|s| s.node != node);
    }

    /// Every seek goes (this node no longer leads).
    pub fn clear(&mut self) {
        self.seeks.clear();
    }

    /// How many seeks wait.
    pub fn len(&self) -> usize {
        self.seeks.len()
    }

    /// Whether none waits.
    pub fn is_empty(&self) -> bool {
        self.seeks.is_empty()
    }

    /// The seeks waiting, oldest first.
    pub fn waiting(&self) -> impl Iterator<Item = &Seeker<P>> {
        self.seeks.iter()
    }
}

#[cfg(test)]
mod tests {
    use flipline::Variant;
    use flipline::protocol::RatingRange;
    use proptest::prelude::*;

    use super::*;
    use crate::lobby::RatedSeek;

    fn seeker(node: u8, name: u8, wanted: SeekWanted) -> Seeker<()> {
        Seeker {
            node: format!("n{node}"),
            conn: u64::from(name),
            name: Name::from(format!("p{name}")),
            wanted,
            pass: (),
        }
    }

    fn casual(variant: Variant) -> SeekWanted {
        SeekWanted::casual(variant, None)
    }

    #[test]
    fn two_seeks_of_one_game_from_two_nodes_pair_the_older_waiting() {
        let mut pool = SeekPool::new();
        assert_eq!(pool.announce(seeker(1, 1, casual(Variant::Othello))), None);
        assert_eq!(pool.announce(seeker(2, 2, casual(Variant::Reversi))), None);
        let pairing = pool.announce(seeker(3, 3, casual(Variant::Othello)));
        let pairing = pairing.map(|p| (p.waiting.name, p.asker.name));
        assert_eq!(pairing, Some((Name::from("p1"), Name::from("p3"))));
        assert_eq!(pool.len(), 1);
    }

    #[test]
    fn a_seek_told_again_keeps_its_place_in_line() {
        let rated = |rating, range: Option<(u16, u16)>| SeekWanted {
            rated: Some(RatedSeek {
                rating,
                range: range.map(|(low, high)| RatingRange { low, high }),
            }),
            ..casual(Variant::Othello)
        };
        let mut pool = SeekPool::new();
        // Neither takes the other's rating; a 1600 suits both.
        assert_eq!(
            pool.announce(seeker(1, 1, rated(1500, Some((1400, 1600))))),
            None
        );
        assert_eq!(
            pool.announce(seeker(2, 2, rated(1700, Some((1550, 1800))))),
            None
        );
        assert_eq!(
            pool.announce(seeker(1, 1, rated(1500, Some((1400, 1600))))),
            None
        );
        let pairing = pool.announce(seeker(3, 3, rated(1600, None)));
        let waited = pairing.map(|p| p.waiting.name);
        assert_eq!(waited, Some(Name::from("p1")), "p1 is still first in line");
    }

    #[test]
    fn a_seek_whose_pairing_came_to_nothing_is_first_in_line_again() {
        let mut pool = SeekPool::new();
        assert_eq!(pool.announce(seeker(1, 1, casual(Variant::Othello))), None);
        let pairing = pool.announce(seeker(2, 2, casual(Variant::Othello)));
        let older = pairing.map(|p| p.waiting).unwrap();
        assert_eq!(pool.announce(seeker(3, 3, casual(Variant::Reversi))), None);
        assert_eq!(pool.reinstate(older), None, "nothing to pair with");
        let first = pool.waiting().next().map(|s| s.name.clone());
        assert_eq!(first, Some(Name::from("p1")), "ahead of a later seek");
        let pairing = pool.reinstate(seeker(4, 4, casual(Variant::Reversi)));
        let names = pairing.map(|p| (p.waiting.name, p.asker.name));
        assert_eq!(names, Some((Name::from("p4"), Name::from("p3"))));
    }

    #[test]
    fn a_withdrawal_from_a_node_the_name_left_keeps_its_new_seek() {
        let mut pool = SeekPool::new();
        pool.announce(seeker(1, 1, casual(Variant::Othello)));
        pool.announce(seeker(2, 1, casual(Variant::Reversi)));
        assert_eq!(
            pool.len(),
            1,
            "a name seeks once, wherever it was announced"
        );
        assert!(!pool.withdraw("n1", "P1"));
        assert!(pool.withdraw("n2", "P1"));
        assert!(pool.is_empty());
    }

    fn wanted() -> impl Strategy<Value = SeekWanted> {
        let rated = prop_oneof![
            Just(None),
            (
                1400..1600i32,
                proptest::option::of((1300..1500u16, 1500..1700u16))
            )
                .prop_map(|(rating, range)| Some(RatedSeek {
                    rating,
                    range: range.map(|(low, high)| RatingRange { low, high }),
                })),
        ];
        let variant = prop_oneof![Just(Variant::Othello), Just(Variant::Reversi)];
        (variant, rated).prop_map(|(variant, rated)| SeekWanted {
            variant,
            clock: None,
            rated,
        })
    }

    #[derive(Clone, Debug)]
    enum Op {
        Announce(u8, u8, SeekWanted),
        Reinstate(u8, u8, SeekWanted),
        Withdraw(u8, u8),
        Forget(u8),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            4 => (0..3u8, 0..8u8, wanted()).prop_map(|(n, p, w)| Op::Announce(n, p, w)),
            1 => (0..3u8, 0..8u8, wanted()).prop_map(|(n, p, w)| Op::Reinstate(n, p, w)),
            1 => (0..3u8, 0..8u8).prop_map(|(n, p)| Op::Withdraw(n, p)),
            1 => (0..3u8).prop_map(Op::Forget),
        ]
    }

    proptest! {
        /// Whatever the nodes announce and withdraw: the pool holds
        /// exactly the seeks announced last for their names and neither
        /// paired, withdrawn from their node nor forgotten with it; no two
        /// of them would pair (they would have been paired); each pairing
        /// pairs two names wanting the same game.
        #[test]
        fn the_pool_holds_each_seek_until_paired_once_or_withdrawn(
            ops in proptest::collection::vec(op(), 0..60)
        ) {
            let mut pool = SeekPool::new();
            let mut model: std::collections::BTreeMap<String, (String, SeekWanted)> =
                std::collections::BTreeMap::new();
            for op in ops {
                match op {
                    Op::Announce(node, name, wanted) => {
                        let s = seeker(node, name, wanted);
                        model.remove(&s.name.to_string());
                        match pool.announce(s.clone()) {
                            Some(p) => {
                                prop_assert!(p.waiting.wanted.pairs_with(&p.asker.wanted));
                                prop_assert_eq!(&p.asker, &s);
                                let waited = model.remove(&p.waiting.name.to_string());
                                prop_assert_eq!(waited, Some((p.waiting.node, p.waiting.wanted)));
                            }
                            None => {
                                model.insert(s.name.to_string(), (s.node, s.wanted));
                            }
                        }
                    }
                    Op::Reinstate(node, name, wanted) => {
                        let s = seeker(node, name, wanted);
                        model.remove(&s.name.to_string());
                        match pool.reinstate(s.clone()) {
                            Some(p) => {
                                prop_assert!(p.waiting.wanted.pairs_with(&p.asker.wanted));
                                prop_assert_eq!(&p.waiting, &s);
                                let other = model.remove(&p.asker.name.to_string());
                                prop_assert_eq!(other, Some((p.asker.node, p.asker.wanted)));
                            }
                            None => {
                                prop_assert_eq!(pool.waiting().next(), Some(&s), "first in line");
                                model.insert(s.name.to_string(), (s.node, s.wanted));
                            }
                        }
                    }
                    Op::Withdraw(node, name) => {
                        let (node, name) = (format!("n{node}"), format!("p{name}"));
                        let was = model.get(&name).is_some_and(|(n, _)| *n == node);
                        if was {
                            model.remove(&name);
                        }
                        prop_assert_eq!(pool.withdraw(&node, &name), was);
                    }
                    Op::Forget(node) => {
                        let node = format!("n{node}");
                        model.retain(|_, (n, _)| *n != node);
                        pool.forget_node(&node);
                    }
                }
                let held: std::collections::BTreeMap<String, (String, SeekWanted)> = pool
                    .waiting()
                    .map(|s| (s.name.to_string(), (s.node.clone(), s.wanted)))
                    .collect();
                prop_assert_eq!(held.len(), pool.len(), "a name waits once");
                prop_assert_eq!(&held, &model);
                let waiting: Vec<_> = pool.waiting().collect();
                for (i, a) in waiting.iter().enumerate() {
                    for b in waiting.iter().skip(i + 1) {
                        prop_assert!(!a.wanted.pairs_with(&b.wanted));
                    }
                }
            }
        }
    }
}
