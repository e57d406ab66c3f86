//! A small seeded random generator, [`Rng`], for tests that play random legal
//! moves: its seed is printed, so a failing game can be replayed, and it needs
//! no crate from outside.

use flipline::Square;

/// A seeded SplitMix64 generator: random legal moves that a seed reproduces.
#[derive(Clone, Debug)]
pub struct Rng(pub u64);

impl Rng {
    /// A generator seeded from the process's random keys; the seed is printed so
    /// that a failing game can be replayed.
    pub fn random() -> Rng {
        use std::hash::{BuildHasher, Hasher};
        let seed = std::collections::hash_map::RandomState::new()
            .build_hasher()
            .finish();
        eprintln!("rng seed {seed}");
        Rng(seed)
    }

    /// The next number.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// One of `moves`, at random.
    pub fn pick(&mut self, moves: &[Square]) -> Square {
        let len = u64::try_from(moves.len()).unwrap_or(1).max(1);
        let index = usize::try_from(self.next_u64() % len).unwrap_or(0);
        *moves
            .get(index)
            .unwrap_or_else(|| panic!("no moves to pick from"))
    }
}
