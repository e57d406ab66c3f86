//! Challenges between players of the two nodes, as the daemon's shells
//! carry them (`remote/challenging.rs`): each step's words on the same bag
//! of messages, an accept first taking the challenger out on its node and
//! then made on the challenged's, which alone settles it (and may give up
//! waiting for the challenger's node, whose late answer it then ignores).

use std::time::Duration;

use flipline::Variant;
use flipline::protocol::{DeclineReason, SeatChoice};
use proptest::prelude::*;

use super::{Msg, Outcome, PLAYERS, Reserved, World, home, name};
use crate::challenges::{ChallengeId, Terms};
use crate::clock::Moment;
use crate::lobby::{AcceptRoute, AwayPass, FarNote};

const TIMEOUT: Duration = Duration::from_secs(60);

fn now() -> Moment {
    Moment::from_micros(1_000_000)
}

fn terms() -> Terms {
    Terms {
        variant: Variant::Othello,
        side: SeatChoice::Random,
        clock: None,
        rated: false,
        start: Vec::new(),
    }
}

/// A player's step in a challenge across the nodes.
#[derive(Clone, Copy, Debug)]
pub(super) enum ChallengeOp {
    /// The first challenges the second (across the nodes or on one).
    Make(usize, usize),
    /// The player accepts, declines or withdraws the challenge at this
    /// index (mod their number) of its own.
    Accept(usize, usize),
    Decline(usize, usize),
    Cancel(usize, usize),
    /// Every challenge open on this node lapses.
    Lapse(usize),
    /// The maker of the accept at this index (mod their number) stops
    /// waiting for the challenger's node.
    GiveUp(usize),
}

/// What is on its way about challenges across.
#[derive(Clone, Debug)]
pub(super) enum ChallengeMsg {
    /// Player `p` on node `from` challenges player `to`: number `id` there.
    Challenge {
        from: usize,
        id: ChallengeId,
        p: usize,
        pass: AwayPass,
        to: usize,
    },
    /// The challenged's node refused challenge `id` of node `from`.
    Refused(usize, ChallengeId),
    /// A node's word for the other.
    Word(usize, FarNote),
    /// `maker`'s player `q` accepts its challenge `id`, number `far_id` on
    /// node `far`: that node is to take its challenger out.
    Accepting {
        pairing: u64,
        maker: usize,
        q: usize,
        id: ChallengeId,
        far: usize,
        far_id: ChallengeId,
    },
    /// The challenger's node's answer (a refusal's code).
    Reserved {
        pairing: u64,
        maker: usize,
        q: usize,
        id: ChallengeId,
        answer: Result<(), u16>,
    },
}

pub(super) fn op() -> impl Strategy<Value = ChallengeOp> {
    let p = 0..PLAYERS;
    let i = any::<usize>();
    prop_oneof![
        3 => (p.clone(), p.clone()).prop_map(|(a, b)| ChallengeOp::Make(a, b)),
        3 => (p.clone(), i).prop_map(|(a, i)| ChallengeOp::Accept(a, i)),
        1 => (p.clone(), i).prop_map(|(a, i)| ChallengeOp::Decline(a, i)),
        1 => (p, i).prop_map(|(a, i)| ChallengeOp::Cancel(a, i)),
        1 => (0..super::NODES).prop_map(ChallengeOp::Lapse),
        1 => i.prop_map(ChallengeOp::GiveUp),
    ]
}

impl World {
    /// The open challenges on `node` whose party `side` (0 challenger, 1
    /// challenged) is `p`.
    fn challenges_of(&self, node: usize, p: usize, side: usize) -> Vec<ChallengeId> {
        let core = &self.nodes[node];
        (core.open_challenges().into_iter())
            .filter(|&id| {
                core.challenge_parties(id)
                    .is_some_and(|n| n[side] == name(p))
            })
            .collect()
    }

    pub(super) fn challenge_op(&mut self, op: ChallengeOp) {
        match op {
            ChallengeOp::Make(p, to) if home(p) != home(to) => {
                let (node, there, challenged) = (home(p), home(to).to_string(), name(to));
                let who = (&name(p), &*challenged, there.as_str());
                let made = self.nodes[node].challenge_far(who, terms(), (now(), TIMEOUT));
                if let Ok((id, pass)) = made {
                    let msg = ChallengeMsg::Challenge {
                        from: node,
                        id,
                        p,
                        pass,
                        to,
                    };
                    self.bus.push(Msg::Across(msg));
                }
            }
            ChallengeOp::Make(p, to) => {
                // Between two players of one node, beside those across.
                let core = &mut self.nodes[home(p)];
                let made = core.challenge(&name(p), &name(to), terms(), now(), TIMEOUT);
                self.settle(home(p), made);
            }
            ChallengeOp::Accept(q, i) => self.accept(q, i),
            ChallengeOp::Decline(q, i) => {
                let ids = self.challenges_of(home(q), q, 1);
                if let Some(&id) = ids.get(i % ids.len().max(1)) {
                    let done = self.nodes[home(q)].decline(&name(q), id, DeclineReason::Later);
                    self.settle(home(q), done);
                }
            }
            ChallengeOp::Cancel(p, i) => {
                let ids = self.challenges_of(home(p), p, 0);
                if let Some(&id) = ids.get(i % ids.len().max(1)) {
                    let done = self.nodes[home(p)].cancel_challenge(&name(p), id);
                    self.settle(home(p), done);
                }
            }
            ChallengeOp::Lapse(node) => {
                let later = now() + TIMEOUT;
                let effects = self.nodes[node].expire_challenges(later);
                self.carry_out(node, effects);
                self.notes(node);
            }
            ChallengeOp::GiveUp(i) => {
                let waiting: Vec<u64> = (self.making.iter())
                    .filter(|(_, o)| **o == Outcome::Making)
                    .map(|(&pairing, _)| pairing)
                    .collect();
                if let Some(&pairing) = waiting.get(i % waiting.len().max(1)) {
                    self.making.insert(pairing, Outcome::None);
                }
            }
        }
    }

    /// `ACCEPT` of `q`'s challenge at index `i`: through its challenger's
    /// node, the pairing noted as being made before that node hears.
    fn accept(&mut self, q: usize, i: usize) {
        let node = home(q);
        let ids = self.challenges_of(node, q, 1);
        let Some(&id) = ids.get(i % ids.len().max(1)) else {
            return;
        };
        let (far, far_id) = match self.nodes[node].accept_route(&name(q), id) {
            Ok(AcceptRoute::Through { node, id, .. }) => (node, id),
            Ok(AcceptRoute::Here) => {
                let next = &mut self.next_game[node];
                let done = self.nodes[node].accept(&name(q), id, World::next_id(next), true);
                self.settle(node, done);
                return;
            }
            Err(_) => return,
        };
        let pairing = self.next_pairing;
        self.next_pairing += 1;
        self.making.insert(pairing, Outcome::Making);
        let msg = ChallengeMsg::Accepting {
            pairing,
            maker: node,
            q,
            id,
            far: far.parse().unwrap_or(0),
            far_id,
        };
        self.bus.push(Msg::Across(msg));
    }

    pub(super) fn deliver_across(&mut self, msg: ChallengeMsg) {
        match msg {
            ChallengeMsg::Challenge {
                from,
                id,
                p,
                pass,
                to,
            } => {
                let (node, from_node) = (home(to), from.to_string());
                let far = (&name(p), from_node.as_str(), id, pass);
                let when = (now(), TIMEOUT);
                let challenged = name(to);
                let done = self.nodes[node].challenged_from_far(far, &challenged, terms(), when);
                if self.settle(node, done).is_none() {
                    self.bus.push(Msg::Across(ChallengeMsg::Refused(from, id)));
                }
            }
            ChallengeMsg::Refused(node, id) => {
                self.nodes[node].far_challenge_refused(id);
                self.notes(node);
            }
            ChallengeMsg::Word(from, note) => {
                let node = note.node.parse().unwrap_or(0);
                let effects = self.nodes[node].heard_from_far(&from.to_string(), note.word);
                self.carry_out(node, effects);
                self.notes(node);
            }
            ChallengeMsg::Accepting {
                pairing,
                maker,
                q,
                id,
                far,
                far_id,
            } => {
                let reserved = self.nodes[far].reserve_challenger(&maker.to_string(), far_id);
                let answer = reserved.as_ref().map(|_| ()).map_err(|e| e.code().number());
                if let Some(challenger) = self.settle(far, reserved) {
                    let held = Reserved::Challenge(challenger, far_id, far);
                    self.reserved.insert(pairing, (held, maker));
                }
                let msg = ChallengeMsg::Reserved {
                    pairing,
                    maker,
                    q,
                    id,
                    answer,
                };
                self.bus.push(Msg::Across(msg));
            }
            ChallengeMsg::Reserved {
                pairing,
                maker,
                q,
                id,
                answer,
            } => self.make_accepted(pairing, maker, (q, id), answer),
        }
    }

    /// The maker hears the challenger's node: it makes the game (unless it
    /// gave up waiting), and tells that node either way.
    fn make_accepted(
        &mut self,
        pairing: u64,
        maker: usize,
        (q, id): (usize, ChallengeId),
        answer: Result<(), u16>,
    ) {
        if self.making.get(&pairing) != Some(&Outcome::Making) {
            return;
        }
        if let Err(code) = answer {
            if code == 404 {
                self.nodes[maker].far_challenge_gone(id);
            }
            self.making.insert(pairing, Outcome::None);
            return;
        }
        let next = &mut self.next_game[maker];
        let done = self.nodes[maker].accept(&name(q), id, World::next_id(next), true);
        let made = self.settle(maker, done);
        let outcome = made.map_or(Outcome::None, Outcome::Made);
        self.making.insert(pairing, outcome);
        self.bus.push(match made {
            Some(game) => Msg::Paired(pairing, game),
            None => Msg::Unpaired(pairing),
        });
    }
}
