//! Small helpers over (player, opponent) bitboards shared by the search, the
//! evaluation and the endgame solver: playing a move, square classes, quadrant
//! parity and the final score.

/// The four corners.
pub const CORNERS: u64 = 0x8100_0000_0000_0081;
/// The a and h columns.
pub const EDGE_COLUMNS: u64 = 0x8181_8181_8181_8181;
/// Rows 1 and 8.
pub const EDGE_ROWS: u64 = 0xFF00_0000_0000_00FF;
/// Every square but the a column: where a step east may land.
pub const NOT_A: u64 = 0xFEFE_FEFE_FEFE_FEFE;
/// Every square but the h column: where a step west may land.
pub const NOT_H: u64 = 0x7F7F_7F7F_7F7F_7F7F;

/// The four 4x4 quadrants; parity is counted per quadrant because a region with an
/// odd number of empties is one where the side that enters it usually gets the
/// last move.
pub const QUADRANTS: [u64; 4] = [
    0x0000_0000_0F0F_0F0F,
    0x0000_0000_F0F0_F0F0,
    0x0F0F_0F0F_0000_0000,
    0xF0F0_F0F0_0000_0000,
];

/// The squares around each square.
pub static NEIGHBOURS: [u64; 64] = {
    let mut t = [0u64; 64];
    let mut s = 0;
    while s < 64 {
        let (r, c) = (s as i32 / 8, s as i32 % 8);
        let mut dr = -1;
        while dr <= 1 {
            let mut dc = -1;
            while dc <= 1 {
                let (rr, cc) = (r + dr, c + dc);
                if (dr != 0 || dc != 0) && rr >= 0 && rr < 8 && cc >= 0 && cc < 8 {
                    t[s] |= 1 << (rr * 8 + cc);
                }
                dc += 1;
            }
            dr += 1;
        }
        s += 1;
    }
    t
};

/// A score beyond every final disc difference (the widest is 64).
pub const SCORE_INF: i32 = 65;

/// The bit of `square`.
#[inline(always)]
pub fn bit(square: u32) -> u64 {
    1u64 << (square & 63)
}

/// The quadrant bit (1, 2, 4 or 8) of `square`: column >= 4 gives bit 0 of the
/// quadrant number, row >= 4 bit 1.
#[inline(always)]
pub fn quadrant_bit(square: u32) -> u32 {
    1 << (((square >> 2) & 1) | ((square >> 4) & 2))
}

/// Bit `q` is set when quadrant `q` holds an odd number of `empties`.
#[inline]
pub fn parity_of(empties: u64) -> u32 {
    QUADRANTS.iter().enumerate().fold(0, |acc, (q, &mask)| {
        acc | ((empties & mask).count_ones() & 1) << q
    })
}

/// The squares of the quadrants whose bit is set in `parity`.
#[inline(always)]
pub fn quadrant_mask(parity: u32) -> u64 {
    QUADRANT_MASKS[(parity & 15) as usize]
}

/// [`quadrant_mask`] of every parity: one load instead of four selects.
static QUADRANT_MASKS: [u64; 16] = {
    let mut t = [0u64; 16];
    let mut parity = 0;
    while parity < 16 {
        let mut q = 0;
        while q < 4 {
            if parity >> q & 1 == 1 {
                t[parity] |= QUADRANTS[q];
            }
            q += 1;
        }
        parity += 1;
    }
    t
};

/// The position after the side to move plays `square`, flipping `flipped`, seen
/// from the new side to move.
#[inline(always)]
pub fn after(square: u32, flipped: u64, p: u64, o: u64) -> (u64, u64) {
    (o ^ flipped, p ^ flipped ^ bit(square))
}

/// The squares next to any of `discs` (the eight directions), `discs` included.
#[inline]
pub fn neighbours(discs: u64) -> u64 {
    let horizontal = discs | (discs << 1 & NOT_A) | (discs >> 1 & NOT_H);
    horizontal | horizontal << 8 | horizontal >> 8
}

/// The final disc difference for `p` when the game ends with this position: the
/// empty squares go to the winner. In anti (`ANTI`) the fewest discs win and the
/// empties go to the loser, which makes the margin the exact negation.
#[inline(always)]
pub fn final_score<const ANTI: bool>(p: u64, o: u64) -> i32 {
    let (own, other) = (p.count_ones() as i32, o.count_ones() as i32);
    let empties = 64 - own - other;
    let diff = own - other;
    let score = match diff {
        0 => 0,
        d if d > 0 => d + empties,
        d => d - empties,
    };
    if ANTI { -score } else { score }
}

/// Iterates the squares of a bit set, lowest first.
#[derive(Clone, Copy)]
pub struct Squares(pub u64);

impl Iterator for Squares {
    type Item = u32;

    #[inline(always)]
    fn next(&mut self) -> Option<u32> {
        if self.0 == 0 {
            return None;
        }
        let square = self.0.trailing_zeros();
        self.0 &= self.0 - 1;
        Some(square)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quadrant_bits_match_the_masks() {
        for square in 0..64 {
            let q = quadrant_bit(square);
            assert_eq!(quadrant_mask(q) & bit(square), bit(square), "{square}");
            assert_eq!(quadrant_mask(0xF ^ q) & bit(square), 0, "{square}");
        }
        assert_eq!(parity_of(!0), 0);
        assert_eq!(parity_of(1 | 1 << 63), 0b1001);
    }

    #[test]
    fn final_scores_give_the_empties_to_the_winner() {
        // 10 discs against 20 with 34 empty: 10 - 20 - 34.
        let (p, o) = ((1u64 << 10) - 1, ((1u64 << 20) - 1) << 10);
        assert_eq!(final_score::<false>(p, o), -44);
        assert_eq!(final_score::<true>(p, o), 44);
        assert_eq!(final_score::<false>(0xF, 0xF0), 0);
    }

    #[test]
    fn neighbours_do_not_wrap_round_the_board() {
        assert_eq!(neighbours(1), 1 | 2 | 1 << 8 | 1 << 9);
        assert_eq!(neighbours(1 << 7), 1 << 7 | 1 << 6 | 1 << 15 | 1 << 14);
    }
}
