//! Seeks across two nodes of a cluster, paired by the lobby's leader as the
//! daemon's shells pair them (`remote/seeking.rs`): each node a pooled
//! lobby core, the leader a pool, the bus a bag of messages delivered in
//! any order (notes to the leader may also be lost, and are told again),
//! the players on each node seeking, leaving, making, joining and ending
//! games, going and logging in again, while pairings are on their way.
//! Players of the two nodes also challenge each other, and accept,
//! decline, withdraw and let lapse those challenges (`across`). After
//! every step each core keeps its invariants, and across the nodes nobody
//! sits in two games in play.

use std::collections::BTreeMap;

use flipline::Variant;
use flipline::protocol::{GameId, NewGame, Opponent, SeatChoice};
use proptest::prelude::*;

use crate::Name;
use crate::lobby::{AwayPass, Done, LobbyCore, LobbyEffect, Partner, PoolNote, SeekWanted};
use crate::seek_pool::{Pairing, SeekPool, Seeker};
use crate::{ConnId, Phase};

mod across;
use across::{ChallengeMsg, ChallengeOp};

const NODES: usize = 2;
const PLAYERS: usize = 6;

fn home(p: usize) -> usize {
    p % NODES
}

fn name(p: usize) -> Name {
    Name::from(format!("p{p}"))
}

fn conn(p: usize) -> ConnId {
    p as ConnId + 1
}

/// The connection of player `p` seated at `node` from its own node.
fn far_conn(p: usize) -> ConnId {
    100 + p as ConnId
}

fn wanted(variant: bool) -> SeekWanted {
    let variant = if variant {
        Variant::Othello
    } else {
        Variant::Reversi
    };
    SeekWanted::casual(variant, None)
}

/// What is on its way between the nodes and the leader; `u64` numbers a
/// pairing.
#[derive(Clone, Debug)]
enum Msg {
    /// A node's note to the leader.
    Note(usize, PoolNote),
    /// The leader takes the asker's seek out on its node.
    Reserve(Pairing<()>, u64),
    /// That node's answer.
    Reserved(Pairing<()>, u64, bool),
    /// The leader has the game made on the waiting seek's node.
    Pair(Pairing<()>, u64),
    /// The game's node made it: the asker's node seats its player.
    Paired(u64, GameId),
    /// The game's node made none: the asker's seek goes back.
    Unpaired(u64),
    /// The asker's node asks the game's node what became of a pairing.
    Ask(u64),
    /// Its answer: made, or never (`None`); the daemon's maker may also
    /// say it is being made, which changes nothing here.
    Told(u64, Outcome),
    /// The asker's session takes its seat on the game's node.
    Sit(usize, GameId, AwayPass),
    /// About a challenge between the two nodes.
    Across(ChallengeMsg),
}

/// What the game's node knows of a pairing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Outcome {
    /// Being made (an accept waiting for the challenger's node).
    Making,
    Made(GameId),
    None,
}

#[derive(Clone, Copy, Debug)]
enum Op {
    Seek(usize, bool),
    Leave(usize),
    NewOpen(usize),
    /// `JOIN` of the first open game on the player's node.
    Join(usize),
    /// The player's game in play ends (here or on the game's node).
    End(usize),
    Gone(usize),
    Login(usize),
    /// Deliver the message at this index (mod their number).
    Deliver(usize),
    /// Lose the note at this index (mod their number), if it is a note.
    Lose(usize),
    /// A node tells the leader all its seeks again.
    Reannounce(usize),
    /// The asker's node asks about the pairing at this index (mod their
    /// number) of those it waits for.
    Ask(usize),
    /// The store refuses the next game a pairing makes.
    FailNext,
    /// A step of a challenge between the two nodes.
    Challenge(ChallengeOp),
}

/// A player taken out on its node for a game the other node makes.
#[derive(Clone, Debug)]
enum Reserved {
    /// Its seek, paired by the leader.
    Seek(Seeker<()>),
    /// Its challenge (its node's number), accepted on the other node.
    Challenge(Name, crate::challenges::ChallengeId, usize),
}

impl Reserved {
    fn name(&self) -> &Name {
        match self {
            Reserved::Seek(seeker) => &seeker.name,
            Reserved::Challenge(name, ..) => name,
        }
    }

    fn node(&self) -> usize {
        match self {
            Reserved::Seek(seeker) => node_of(seeker),
            Reserved::Challenge(_, _, node) => *node,
        }
    }
}

struct World {
    nodes: Vec<LobbyCore<GameId>>,
    leader: SeekPool<()>,
    bus: Vec<Msg>,
    next_pairing: u64,
    /// The asker's side: players taken out, by pairing, and the game's
    /// node.
    reserved: BTreeMap<u64, (Reserved, usize)>,
    /// The game's side: what became of each pairing.
    making: BTreeMap<u64, Outcome>,
    next_game: [GameId; NODES],
    /// Where each game in play is held: its node.
    online: [bool; PLAYERS],
    fail_next: bool,
}

impl World {
    fn new() -> World {
        let mut nodes: Vec<LobbyCore<GameId>> = (0..NODES).map(|_| LobbyCore::new()).collect();
        for core in &mut nodes {
            core.pool_seeks();
        }
        let mut world = World {
            nodes,
            leader: SeekPool::new(),
            bus: Vec::new(),
            next_pairing: 1,
            reserved: BTreeMap::new(),
            making: BTreeMap::new(),
            next_game: [2, 3],
            online: [false; PLAYERS],
            fail_next: false,
        };
        for p in 0..PLAYERS {
            world.login(p);
        }
        world
    }

    fn next_id(next: &mut GameId) -> impl FnOnce() -> GameId + '_ {
        move || {
            *next += NODES as GameId;
            *next - NODES as GameId
        }
    }

    /// Carries out a decision as the lobby actor does (held ones stored,
    /// unless the store is to fail), then tells the leader what changed.
    fn settle<T>(
        &mut self,
        node: usize,
        done: Result<Done<T, GameId>, crate::refusal::Refusal>,
    ) -> Option<T> {
        let result = match done {
            Ok(done) => {
                let fail = done.held.is_some() && std::mem::take(&mut self.fail_next);
                match (done.held, fail) {
                    (Some(held), true) => {
                        self.nodes[node].not_stored(held);
                        None
                    }
                    (held, _) => {
                        if let Some(held) = held {
                            self.nodes[node].stored(held);
                        }
                        self.carry_out(node, done.effects);
                        Some(done.reply)
                    }
                }
            }
            Err(_) => None,
        };
        self.notes(node);
        result
    }

    fn carry_out(&mut self, node: usize, effects: Vec<LobbyEffect<GameId>>) {
        for effect in effects {
            if let LobbyEffect::Launch(launch) = effect {
                self.nodes[node].set_route(launch.id, launch.id);
            }
        }
    }

    fn notes(&mut self, node: usize) {
        for note in self.nodes[node].pool_notes() {
            self.bus.push(Msg::Note(node, note));
        }
        for note in self.nodes[node].far_notes() {
            self.bus.push(Msg::Across(ChallengeMsg::Word(node, note)));
        }
    }

    fn login(&mut self, p: usize) {
        let core = &mut self.nodes[home(p)];
        if core.login(&name(p), conn(p), None).is_ok() {
            self.online[p] = true;
        }
        self.notes(home(p));
    }

    fn op(&mut self, op: Op) {
        match op {
            Op::Seek(p, variant) => {
                let (core, next) = (&mut self.nodes[home(p)], &mut self.next_game[home(p)]);
                let done = core.seek(&name(p), wanted(variant), World::next_id(next), true);
                self.settle(home(p), done);
            }
            Op::Leave(p) => {
                let done = self.nodes[home(p)].leave(&name(p), false);
                self.settle(home(p), done);
            }
            Op::NewOpen(p) => {
                let spec = NewGame {
                    variant: Variant::Othello,
                    seat: SeatChoice::Black,
                    opponent: Opponent::Open,
                    clock: None,
                    from: Vec::new(),
                };
                let (core, next) = (&mut self.nodes[home(p)], &mut self.next_game[home(p)]);
                let done = core.new_game(&name(p), &spec, World::next_id(next), true);
                self.settle(home(p), done);
            }
            Op::Join(p) => {
                let core = &self.nodes[home(p)];
                let open = core
                    .games()
                    .find(|(_, e)| e.phase == Phase::Open)
                    .map(|(g, _)| g);
                if let Some(game) = open {
                    let done = self.nodes[home(p)].join(&name(p), game);
                    self.settle(home(p), done);
                }
            }
            Op::End(p) => self.end(p),
            Op::Gone(p) => {
                let effects = self.nodes[home(p)].gone(conn(p), &name(p));
                self.carry_out(home(p), effects);
                self.online[p] = false;
                // Its seat on another node is kept there (the grace period).
                let other = 1 - home(p);
                let effects = self.nodes[other].gone(far_conn(p), &name(p));
                self.carry_out(other, effects);
                self.notes(home(p));
            }
            Op::Login(p) => {
                if !self.online[p] {
                    self.login(p);
                    self.kept_elsewhere(p);
                }
            }
            Op::Deliver(i) if !self.bus.is_empty() => {
                let msg = self.bus.remove(i % self.bus.len());
                self.deliver(msg);
            }
            Op::Lose(i) if !self.bus.is_empty() => {
                let i = i % self.bus.len();
                if matches!(self.bus[i], Msg::Note(..)) {
                    self.bus.remove(i);
                }
            }
            Op::Deliver(_) | Op::Lose(_) => {}
            Op::Reannounce(node) => {
                for note in self.nodes[node].pool_all() {
                    self.bus.push(Msg::Note(node, note));
                }
            }
            Op::Ask(i) if !self.reserved.is_empty() => {
                let pairing = self.reserved.keys().nth(i % self.reserved.len());
                if let Some(&pairing) = pairing {
                    self.bus.push(Msg::Ask(pairing));
                }
            }
            Op::Ask(_) => {}
            Op::FailNext => self.fail_next = true,
            Op::Challenge(op) => self.challenge_op(op),
        }
    }

    /// What a login on a cluster's node looks up: a seat the store keeps
    /// for `p` in a game in play on another node holds the name for it,
    /// and a pairing not settled yet keeps it from other seats.
    fn kept_elsewhere(&mut self, p: usize) {
        let who = name(p);
        let other = 1 - home(p);
        let kept = (self.nodes[other].games())
            .find(|(_, e)| {
                e.phase == Phase::Playing && e.seats.iter().flatten().any(|o| o.name() == who)
            })
            .map(|(g, _)| g);
        if let Some(game) = kept {
            let done = self.nodes[home(p)].sit_away(&who, game);
            self.settle(home(p), done);
        }
        if self.reserved.values().any(|(r, _)| *r.name() == who) {
            self.nodes[home(p)].mark_pairing(&who);
        }
    }

    /// `p`'s game in play ends, on whichever node holds it; its player
    /// elsewhere is free again there.
    fn end(&mut self, p: usize) {
        let who = name(p);
        for node in 0..NODES {
            let playing = (self.nodes[node].games())
                .find(|(_, e)| {
                    e.phase == Phase::Playing && e.seats.iter().flatten().any(|o| o.name() == who)
                })
                .map(|(g, e)| (g, e.seats.clone()));
            let Some((game, seats)) = playing else {
                continue;
            };
            self.nodes[node].ended(game);
            for seated in seats.iter().flatten() {
                let other = 1 - node;
                self.nodes[other].back_from_away(&seated.name(), game);
            }
            self.notes(node);
            return;
        }
    }

    fn deliver(&mut self, msg: Msg) {
        match msg {
            Msg::Note(from, PoolNote::Sought(seek)) => {
                let seeker = Seeker {
                    node: from.to_string(),
                    conn: seek.conn,
                    name: seek.name,
                    wanted: seek.wanted,
                    pass: (),
                };
                self.announce(seeker);
            }
            Msg::Note(from, PoolNote::Withdrawn(name)) => {
                self.leader.withdraw(&from.to_string(), &name);
            }
            Msg::Reserve(pairing, id) => {
                let node = node_of(&pairing.asker);
                let asker = &pairing.asker;
                let ok = self.nodes[node]
                    .reserve_pooled(&asker.name, asker.wanted)
                    .is_ok();
                if ok {
                    let maker = node_of(&pairing.waiting);
                    let reserved = Reserved::Seek(asker.clone());
                    self.reserved.insert(id, (reserved, maker));
                }
                self.notes(node);
                self.bus.push(Msg::Reserved(pairing, id, ok));
            }
            Msg::Reserved(pairing, id, true) => self.bus.push(Msg::Pair(pairing, id)),
            Msg::Reserved(pairing, _, false) => {
                if let Some(pairing) = self.leader.reinstate(pairing.waiting) {
                    self.order(pairing);
                }
            }
            Msg::Pair(pairing, id) => self.make(pairing, id),
            Msg::Paired(id, game) => self.settled(id, Some(game)),
            Msg::Unpaired(id) => self.settled(id, None),
            Msg::Ask(id) => {
                let outcome = *self.making.entry(id).or_insert(Outcome::None);
                self.bus.push(Msg::Told(id, outcome));
            }
            Msg::Told(id, Outcome::Made(game)) => self.settled(id, Some(game)),
            Msg::Told(id, Outcome::None) => self.settled(id, None),
            Msg::Told(_, Outcome::Making) => {}
            Msg::Across(msg) => self.deliver_across(msg),
            Msg::Sit(maker, game, pass) => {
                let Some(p) = (0..PLAYERS).find(|&p| {
                    self.nodes[maker]
                        .game(game)
                        .is_some_and(|e| e.seats.iter().flatten().any(|o| o.name() == name(p)))
                        && home(p) != maker
                }) else {
                    return;
                };
                let guest = pass.secret.map(|secret| crate::lobby::GuestLogin {
                    shown: Some(secret),
                    fresh: secret,
                });
                let core = &mut self.nodes[maker];
                if core.login(&name(p), far_conn(p), guest).is_ok() {
                    let done = core.join(&name(p), game);
                    self.settle(maker, done);
                }
            }
        }
    }

    fn announce(&mut self, seeker: Seeker<()>) {
        if let Some(pairing) = self.leader.announce(seeker) {
            self.order(pairing);
        }
    }

    /// The leader has `pairing` carried out: the other seek taken out
    /// first if it is another node's.
    fn order(&mut self, pairing: Pairing<()>) {
        let id = self.next_pairing;
        self.next_pairing += 1;
        match pairing.asker.node == pairing.waiting.node {
            true => self.bus.push(Msg::Pair(pairing, id)),
            false => self.bus.push(Msg::Reserve(pairing, id)),
        }
    }

    /// The asker's side hears how pairing `id` was settled.
    fn settled(&mut self, id: u64, game: Option<GameId>) {
        let Some((asker, maker)) = self.reserved.remove(&id) else {
            return;
        };
        let node = asker.node();
        match (game, &asker) {
            (None, Reserved::Seek(seeker)) => {
                self.nodes[node].release_pooled(&seeker.name, seeker.wanted);
                self.notes(node);
            }
            (None, Reserved::Challenge(name, challenge, _)) => {
                self.nodes[node].release_challenger(name, *challenge);
                self.notes(node);
            }
            (Some(game), _) => {
                // Whichever connection holds the name now (it may have
                // logged in again meanwhile).
                if self.nodes[node].holder(asker.name()).is_none() {
                    return;
                }
                let done = self.nodes[node].paired_away(asker.name(), game);
                if let Some(pass) = self.settle(node, done) {
                    self.bus.push(Msg::Sit(maker, game, pass));
                }
            }
        }
    }

    /// The waiting seek's node makes the game, once; a far asker's node
    /// hears either way.
    fn make(&mut self, pairing: Pairing<()>, id: u64) {
        if self.making.contains_key(&id) {
            return;
        }
        let node = node_of(&pairing.waiting);
        let asker = &pairing.asker;
        let far = node_of(asker) != node;
        let partner = match far {
            false => Partner::Here(Name::clone(&asker.name)),
            true => {
                let pass = AwayPass {
                    secret: None,
                    member: true,
                    marks: crate::lobby::Marks::default(),
                };
                Partner::Far(Name::clone(&asker.name), pass)
            }
        };
        let next = &mut self.next_game[node];
        let done = self.nodes[node].pair_pooled(
            &pairing.waiting.name,
            pairing.waiting.wanted,
            partner,
            (true, World::next_id(next)),
        );
        let made = self.settle(node, done);
        self.making
            .insert(id, made.map_or(Outcome::None, Outcome::Made));
        if far {
            self.bus.push(match made {
                Some(game) => Msg::Paired(id, game),
                None => Msg::Unpaired(id),
            });
        }
    }

    /// Each core's invariants, and nobody in two games in play across the
    /// nodes.
    fn check(&self) -> Result<(), String> {
        let mut seats: BTreeMap<Name, Vec<GameId>> = BTreeMap::new();
        for (node, core) in self.nodes.iter().enumerate() {
            core.check_invariants()
                .map_err(|e| format!("node {node}: {e}"))?;
            for (game, entry) in core.games() {
                if entry.phase != Phase::Playing {
                    continue;
                }
                for seated in entry.seats.iter().flatten() {
                    seats.entry(seated.name()).or_default().push(game);
                }
            }
        }
        match seats.iter().find(|(_, games)| games.len() > 1) {
            Some((name, games)) => Err(format!("{name} sits in games {games:?} in play")),
            None => Ok(()),
        }
    }
}

fn node_of(seeker: &Seeker<()>) -> usize {
    seeker.node.parse().unwrap_or(0)
}

fn op() -> impl Strategy<Value = Op> {
    let p = 0..PLAYERS;
    prop_oneof![
        4 => (p.clone(), any::<bool>()).prop_map(|(p, v)| Op::Seek(p, v)),
        1 => p.clone().prop_map(Op::Leave),
        1 => p.clone().prop_map(Op::NewOpen),
        1 => p.clone().prop_map(Op::Join),
        2 => p.clone().prop_map(Op::End),
        1 => p.clone().prop_map(Op::Gone),
        2 => p.clone().prop_map(Op::Login),
        10 => any::<usize>().prop_map(Op::Deliver),
        1 => any::<usize>().prop_map(Op::Lose),
        1 => (0..NODES).prop_map(Op::Reannounce),
        1 => any::<usize>().prop_map(Op::Ask),
        1 => Just(Op::FailNext),
        4 => across::op().prop_map(Op::Challenge),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Whatever the players do while pairings are on their way, and in
    /// whatever order the nodes hear of them: nobody sits in two games in
    /// play on the two nodes, and each core keeps its invariants.
    #[test]
    fn nobody_sits_in_two_games_across_nodes_whatever_the_order(
        ops in proptest::collection::vec(op(), 1..150)
    ) {
        let mut world = World::new();
        for op in ops {
            world.op(op);
            prop_assert_eq!(world.check(), Ok(()), "after {:?}", op);
        }
        // Everything on its way arrives (each delivery may send more, but
        // only so many: a pairing refused is not tried again at once).
        for _ in 0..10_000 {
            if world.bus.is_empty() {
                break;
            }
            world.op(Op::Deliver(0));
            prop_assert_eq!(world.check(), Ok(()));
        }
        prop_assert!(world.bus.is_empty(), "still on the bus: {:?}", &world.bus[..world.bus.len().min(8)]);
    }
}
