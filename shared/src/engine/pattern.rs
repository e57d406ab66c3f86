//! The patterns of the trained evaluation (Logistello's and Edax's kind): groups
//! of squares whose every configuration (empty, side to move, other side on each
//! square) gets a weight of its own. A shape is placed on the board once per
//! symmetry that moves it elsewhere (four corner 3x3 blocks, eight corner 2x5
//! blocks, ...), every placement reading the same weights; configurations that
//! a symmetry of the shape itself maps onto each other (an edge read from
//! either end) share one weight, so the evaluation of a position and of its
//! mirror image are the same sum.
//!
//! This module only indexes: which weight each placement reads.
//! `pattern_eval` holds the weights and adds them up.

use std::sync::OnceLock;

use super::symmetry::map_square;

/// Squares by name, to keep the shapes legible.
const fn sq(name: &str) -> u8 {
    let b = name.as_bytes();
    (b[1] - b'1') * 8 + (b[0] - b'a')
}

/// The shapes, each as one placement's squares in the order of their base-3
/// digits (the first square is the lowest digit).
const SHAPES: [&[u8]; 11] = [
    // A corner and the 3x3 block it anchors: who holds the corner region.
    &[
        sq("a1"),
        sq("b1"),
        sq("c1"),
        sq("a2"),
        sq("b2"),
        sq("c2"),
        sq("a3"),
        sq("b3"),
        sq("c3"),
    ],
    // A corner and five squares of two rows: edge fights near a corner.
    &[
        sq("a1"),
        sq("b1"),
        sq("c1"),
        sq("d1"),
        sq("e1"),
        sq("a2"),
        sq("b2"),
        sq("c2"),
        sq("d2"),
        sq("e2"),
    ],
    // An edge with its two X-squares: the edge's stability and its wedges.
    &[
        sq("b2"),
        sq("a1"),
        sq("b1"),
        sq("c1"),
        sq("d1"),
        sq("e1"),
        sq("f1"),
        sq("g1"),
        sq("h1"),
        sq("g2"),
    ],
    // Rows 2, 3 and 4 (and their columns).
    &[
        sq("a2"),
        sq("b2"),
        sq("c2"),
        sq("d2"),
        sq("e2"),
        sq("f2"),
        sq("g2"),
        sq("h2"),
    ],
    &[
        sq("a3"),
        sq("b3"),
        sq("c3"),
        sq("d3"),
        sq("e3"),
        sq("f3"),
        sq("g3"),
        sq("h3"),
    ],
    &[
        sq("a4"),
        sq("b4"),
        sq("c4"),
        sq("d4"),
        sq("e4"),
        sq("f4"),
        sq("g4"),
        sq("h4"),
    ],
    // Diagonals of 8 down to 4 squares.
    &[
        sq("a1"),
        sq("b2"),
        sq("c3"),
        sq("d4"),
        sq("e5"),
        sq("f6"),
        sq("g7"),
        sq("h8"),
    ],
    &[
        sq("b1"),
        sq("c2"),
        sq("d3"),
        sq("e4"),
        sq("f5"),
        sq("g6"),
        sq("h7"),
    ],
    &[sq("c1"), sq("d2"), sq("e3"), sq("f4"), sq("g5"), sq("h6")],
    &[sq("d1"), sq("e2"), sq("f3"), sq("g4"), sq("h5")],
    &[sq("e1"), sq("f2"), sq("g3"), sq("h4")],
];

/// How many shapes there are.
pub const KINDS: usize = SHAPES.len();
/// How many placements of all shapes there are on the board.
pub const INSTANCES: usize = 46;
/// The longest shape.
const MAX_LEN: usize = 10;

/// One placement of a shape.
#[derive(Clone, Copy, Debug)]
pub struct Instance {
    /// Its shape (an index into the shapes).
    pub kind: usize,
    len: usize,
    squares: [u8; MAX_LEN],
}

/// The placements, and for each shape the weight (its rank among the shape's
/// shared configurations) that each configuration reads.
#[derive(Debug)]
pub struct Patterns {
    instances: Vec<Instance>,
    /// Per shape, configuration -> weight number.
    ranks: Vec<Vec<u32>>,
    /// Per shape, how many weights it has.
    counts: Vec<usize>,
}

/// The patterns, built once: the tables are the same for every game.
pub fn patterns() -> &'static Patterns {
    static PATTERNS: OnceLock<Patterns> = OnceLock::new();
    PATTERNS.get_or_init(Patterns::build)
}

impl Patterns {
    fn build() -> Patterns {
        let mut instances = Vec::new();
        let mut ranks = Vec::new();
        let mut counts = Vec::new();
        for (kind, shape) in SHAPES.iter().enumerate() {
            instances.extend(placements(kind, shape));
            let (rank, count) = shared_ranks(shape);
            ranks.push(rank);
            counts.push(count);
        }
        debug_assert_eq!(instances.len(), INSTANCES);
        Patterns {
            instances,
            ranks,
            counts,
        }
    }

    /// The placements, in a fixed order.
    pub fn instances(&self) -> &[Instance] {
        &self.instances
    }

    /// How many configurations (3^squares) shape `kind` has.
    pub fn configurations(&self, kind: usize) -> usize {
        self.ranks.get(kind).map_or(0, Vec::len)
    }

    /// How many weights shape `kind` has once shared configurations are merged.
    pub fn weights(&self, kind: usize) -> usize {
        self.counts.get(kind).copied().unwrap_or(0)
    }

    /// The weight number configuration `index` of shape `kind` reads.
    pub fn rank(&self, kind: usize, index: usize) -> u32 {
        self.ranks
            .get(kind)
            .and_then(|r| r.get(index))
            .copied()
            .unwrap_or(0)
    }

    /// Each placement's configuration for `p` to move against `o`.
    pub fn indices(&self, p: u64, o: u64) -> [u32; INSTANCES] {
        let board = cells(p, o);
        let mut out = [0; INSTANCES];
        for (slot, instance) in out.iter_mut().zip(&self.instances) {
            *slot = instance.index_of(&board);
        }
        out
    }
}

/// Each square's digit (0 empty, 1 `p`, 2 `o`), worked out once for all
/// placements: the squares are read about six times each.
#[inline]
pub fn cells(p: u64, o: u64) -> [u8; 64] {
    let mut board = [0u8; 64];
    for (sq, cell) in board.iter_mut().enumerate() {
        *cell = (p >> sq & 1) as u8 + 2 * (o >> sq & 1) as u8;
    }
    board
}

impl Instance {
    /// The configuration read from [`cells`]: digit i is square i's.
    #[inline]
    pub fn index_of(&self, board: &[u8; 64]) -> u32 {
        let squares = self.squares.get(..self.len).unwrap_or_default();
        squares
            .iter()
            .rev()
            .fold(0, |acc, &s| acc * 3 + u32::from(board[usize::from(s & 63)]))
    }
}

/// The shape's placements: its image under each symmetry, once per distinct
/// set of squares.
fn placements(kind: usize, shape: &[u8]) -> Vec<Instance> {
    let mut seen: Vec<u64> = Vec::new();
    let mut out = Vec::new();
    for s in 0..8 {
        let mut squares = [0; MAX_LEN];
        for (slot, &square) in squares.iter_mut().zip(shape) {
            *slot = map_square(s, square);
        }
        let set = squares[..shape.len()]
            .iter()
            .fold(0u64, |acc, &q| acc | 1 << q);
        if !seen.contains(&set) {
            seen.push(set);
            out.push(Instance {
                kind,
                len: shape.len(),
                squares,
            });
        }
    }
    out
}

/// For each configuration of `shape`, the number of its class under the
/// symmetries that map the shape onto itself, and how many classes there are.
fn shared_ranks(shape: &[u8]) -> (Vec<u32>, usize) {
    let perms = self_symmetries(shape);
    let size = 3usize.pow(shape.len() as u32);
    let mut rank = vec![u32::MAX; size];
    let mut count = 0u32;
    for index in 0..size {
        let least = perms
            .iter()
            .map(|perm| permute(index, perm))
            .min()
            .unwrap_or(index);
        if let Some(&known) = rank.get(least).filter(|&&r| r != u32::MAX) {
            rank[index] = known;
        } else {
            rank[index] = count;
            count += 1;
        }
    }
    (rank, count as usize)
}

/// For each symmetry that maps the shape's squares onto themselves, where each
/// digit goes: `perm[i]` is the position square i's image holds in the shape.
fn self_symmetries(shape: &[u8]) -> Vec<Vec<usize>> {
    (0..8)
        .filter_map(|s| {
            shape
                .iter()
                .map(|&q| shape.iter().position(|&r| r == map_square(s, q)))
                .collect::<Option<Vec<usize>>>()
        })
        .collect()
}

/// `index` with digit i moved to position `perm[i]`.
fn permute(index: usize, perm: &[usize]) -> usize {
    let mut digits = [0usize; MAX_LEN];
    let mut rest = index;
    for &to in perm {
        if let Some(d) = digits.get_mut(to) {
            *d = rest % 3;
        }
        rest /= 3;
    }
    digits[..perm.len()]
        .iter()
        .rev()
        .fold(0, |acc, &d| acc * 3 + d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::symmetry::map_board;
    use proptest::prelude::*;

    /// The (shape, weight) pairs a position reads, sorted: what its
    /// evaluation depends on.
    fn features(p: u64, o: u64) -> Vec<(usize, u32)> {
        let pats = patterns();
        let mut out: Vec<(usize, u32)> = pats
            .instances()
            .iter()
            .zip(pats.indices(p, o))
            .map(|(inst, index)| (inst.kind, pats.rank(inst.kind, index as usize)))
            .collect();
        out.sort_unstable();
        out
    }

    proptest! {
        #[test]
        fn symmetric_positions_read_the_same_weights(p in any::<u64>(), o in any::<u64>(), s in 0u8..8) {
            let o = o & !p;
            prop_assert_eq!(features(p, o), features(map_board(s, p), map_board(s, o)));
        }
    }

    #[test]
    fn placements_cover_each_shape_as_expected() {
        let counts: Vec<usize> = (0..KINDS)
            .map(|k| {
                patterns()
                    .instances()
                    .iter()
                    .filter(|i| i.kind == k)
                    .count()
            })
            .collect();
        assert_eq!(counts, [4, 8, 4, 4, 4, 4, 2, 4, 4, 4, 4]);
    }

    #[test]
    fn an_edge_read_from_either_end_is_one_weight() {
        let pats = patterns();
        // Edge shape (kind 2): a1 alone, then h1 alone (digits 1 and 8).
        let (a1, h1) = (3usize, 3usize.pow(8));
        assert_eq!(pats.rank(2, a1), pats.rank(2, h1));
        assert_ne!(pats.rank(2, a1), pats.rank(2, 3usize.pow(2)));
        // The 2x5 block has no symmetry of its own: every configuration counts.
        assert_eq!(pats.weights(1), pats.configurations(1));
    }
}
