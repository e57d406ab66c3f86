//! The transposition table: what earlier visits learned about a position (bounds on
//! its score, the depth they hold for, the best move), so that a position reached
//! again by another order of moves is not searched twice, and a position searched
//! again one ply deeper tries the old best move first.
//!
//! A plain struct owned by its caller: no global table, nothing shared between
//! threads. Each search keeps its own (the exact solver one, the midgame search
//! another), since their scores and depths mean different things.

/// One remembered position. The whole board is kept, so a hit is never a
/// collision.
#[derive(Clone, Copy, Debug, Default)]
struct Entry {
    p: u64,
    o: u64,
    lower: i16,
    upper: i16,
    depth: u16,
    /// Best move's square, or [`NO_MOVE`].
    best: u8,
    /// The search that wrote it (see [`Tt::new_search`]).
    age: u8,
}

/// What a probe found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hit {
    /// The score is at least this.
    pub lower: i32,
    /// The score is at most this.
    pub upper: i32,
    /// The depth the bounds hold for.
    pub depth: u32,
    /// The move that was best (or caused the cut-off), if any.
    pub best: Option<u32>,
    /// Whether the current search wrote it (see [`Tt::new_search`]).
    pub current: bool,
}

const NO_MOVE: u8 = 64;

/// Two entries on one cache line: a probe is one memory access, and in a big
/// search most probes miss every cache.
#[derive(Clone, Copy, Debug, Default)]
#[repr(align(64))]
struct Bucket([Entry; 2]);

/// A transposition table of `2^bits` entries in buckets of two.
#[derive(Clone, Debug)]
pub struct Tt {
    buckets: Vec<Bucket>,
    shift: u32,
    age: u8,
}

/// The fewest and the most index bits a table may have (4 entries to 32 GB).
const MIN_BITS: u32 = 2;
const MAX_BITS: u32 = 30;

impl Tt {
    /// A table of `2^bits` entries (32 bytes each, a bucket of two filling a
    /// cache line); `bits` is clamped to 2..=30.
    pub fn new(bits: u32) -> Tt {
        let bits = bits.clamp(MIN_BITS, MAX_BITS);
        Tt {
            buckets: vec![Bucket::default(); 1 << (bits - 1)],
            shift: 65 - bits,
            age: 0,
        }
    }

    /// A table of at most `megabytes` MB (at least a few entries).
    pub fn with_megabytes(megabytes: usize) -> Tt {
        let buckets = megabytes.saturating_mul(1 << 20) / std::mem::size_of::<Bucket>();
        let bits = usize::BITS - buckets.max(1).leading_zeros();
        Tt::new(bits)
    }

    /// Bytes the table holds.
    pub fn bytes(&self) -> usize {
        self.buckets.len() * std::mem::size_of::<Bucket>()
    }

    /// Forgets everything.
    pub fn clear(&mut self) {
        self.buckets.fill(Bucket::default());
        self.age = 0;
    }

    /// Marks the start of a new search: entries of older searches are replaced
    /// first, but still answer probes until then.
    pub fn new_search(&mut self) {
        self.age = self.age.wrapping_add(1);
    }

    /// The position's bucket. The high bits of a multiplicative hash are the
    /// well-mixed ones.
    #[inline(always)]
    fn bucket(&self, p: u64, o: u64) -> usize {
        let h = p.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ o.wrapping_mul(0xC2B2_AE3D_27D4_EB4F);
        let h = h ^ h.rotate_left(31);
        // The length is a power of two: the mask only makes the bound plain.
        (h >> self.shift) as usize & (self.buckets.len() - 1)
    }

    /// What is known about the position (`p` to move).
    #[inline]
    pub fn probe(&self, p: u64, o: u64) -> Option<Hit> {
        let bucket = &self.buckets.get(self.bucket(p, o))?.0;
        let entry = bucket
            .iter()
            .find(|e| e.p == p && e.o == o && e.upper >= e.lower)?;
        Some(Hit {
            lower: i32::from(entry.lower),
            upper: i32::from(entry.upper),
            depth: u32::from(entry.depth),
            best: (entry.best < NO_MOVE).then_some(u32::from(entry.best)),
            current: entry.age == self.age,
        })
    }

    /// Records that the position's score, searched to `depth`, lies in
    /// `lower..=upper`, with `best` the best move found. Bounds of the same depth
    /// are merged; a deeper entry is not replaced by a shallower one.
    #[inline]
    pub fn store(&mut self, p: u64, o: u64, depth: u32, lower: i32, upper: i32, best: Option<u32>) {
        let age = self.age;
        let at = self.bucket(p, o);
        let Some(Bucket(bucket)) = self.buckets.get_mut(at) else {
            return;
        };
        let clamp = |v: i32| v.clamp(i32::from(i16::MIN), i32::from(i16::MAX)) as i16;
        let (lower, upper) = (clamp(lower), clamp(upper));
        let depth = depth.min(u32::from(u16::MAX)) as u16;
        let best = best.map_or(NO_MOVE, |square| (square & 63) as u8);
        if let Some(entry) = bucket.iter_mut().find(|e| e.p == p && e.o == o) {
            if entry.depth > depth {
                return;
            }
            if entry.depth == depth {
                entry.lower = entry.lower.max(lower);
                entry.upper = entry.upper.min(upper);
                if entry.lower > entry.upper {
                    // Bounds from different windows that no longer agree (only
                    // heuristic scores do this): trust the newest.
                    (entry.lower, entry.upper) = (lower, upper);
                }
            } else {
                (entry.lower, entry.upper, entry.depth) = (lower, upper, depth);
            }
            if best != NO_MOVE {
                entry.best = best;
            }
            entry.age = age;
            return;
        }
        // Replace the entry of an older search first, then the shallower one.
        let cost = |e: &Entry| (e.age == age, e.depth);
        let victim = if cost(&bucket[0]) <= cost(&bucket[1]) {
            0
        } else {
            1
        };
        bucket[victim] = Entry {
            p,
            o,
            lower,
            upper,
            depth,
            best,
            age,
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_of_one_depth_merge_and_deeper_entries_stay() {
        let mut tt = Tt::new(10);
        assert_eq!(tt.probe(1, 2), None);
        tt.store(1, 2, 5, -64, 10, Some(3));
        tt.store(1, 2, 5, 4, 64, None);
        let hit = tt.probe(1, 2).unwrap();
        assert_eq!((hit.lower, hit.upper, hit.best), (4, 10, Some(3)));
        tt.store(1, 2, 3, 8, 8, Some(9));
        assert_eq!(tt.probe(1, 2).unwrap().depth, 5);
        tt.store(1, 2, 7, 6, 6, Some(9));
        let hit = tt.probe(1, 2).unwrap();
        assert_eq!((hit.lower, hit.upper, hit.depth), (6, 6, 7));
        // Another position with the same discs but the sides swapped is another
        // entry.
        assert_eq!(tt.probe(2, 1), None);
    }

    #[test]
    fn a_tiny_table_still_works_and_sizes_follow_the_megabytes() {
        let mut tt = Tt::new(0);
        for i in 0..100 {
            tt.store(i, !i, 1, 0, 0, None);
        }
        assert!(tt.probe(99, !99).is_some());
        assert!(Tt::with_megabytes(1).bytes() <= 1 << 20);
        assert!(Tt::with_megabytes(1).bytes() > 1 << 19);
    }
}
