//! The last four empty squares, where most nodes of an exact search are: no
//! move list, only the empty squares split into two bit sets (those of odd
//! quadrants, tried first, and the rest), and the very last move's flips only
//! counted, from tables, since with one empty square every other square is
//! taken. Every empty square's flips are computed, even one with no opponent
//! disc next to it: the test saved fewer instructions than it cost, and its
//! branch is as good as random.

use super::board::{SCORE_INF, Squares, after, final_score, quadrant_bit, quadrant_mask};
use super::endgame::Solver;
use super::flip::flips;

/// The a1-h8 (step 9) and h1-a8 (step 7) diagonals through each square.
static DIAGONALS: [[u64; 2]; 64] = {
    let mut t = [[0u64; 2]; 64];
    let mut s = 0;
    while s < 64 {
        let (r, c) = (s as i32 / 8, s as i32 % 8);
        let mut k = -7;
        while k <= 7 {
            let (rr, c9, c7) = (r + k, c + k, c - k);
            if rr >= 0 && rr < 8 {
                if c9 >= 0 && c9 < 8 {
                    t[s][0] |= 1 << (rr * 8 + c9);
                }
                if c7 >= 0 && c7 < 8 {
                    t[s][1] |= 1 << (rr * 8 + c7);
                }
            }
            k += 1;
        }
        s += 1;
    }
    t
};

/// `COUNT_FLIPS[pos][line]`: discs flipped along an 8-square line by a disc
/// played at `pos` when `line` holds the player's discs and every other square of
/// the line is the opponent's. Squares beyond a short diagonal read as the
/// opponent's, which is harmless: a run through them is never closed.
static COUNT_FLIPS: [[u8; 256]; 8] = {
    let mut t = [[0u8; 256]; 8];
    let mut pos = 0;
    while pos < 8 {
        let mut line = 0;
        while line < 256 {
            let mut count = 0;
            let mut y = pos as i32 - 1;
            while y >= 0 && line >> y & 1 == 0 {
                y -= 1;
            }
            if y >= 0 {
                count += pos as i32 - y - 1;
            }
            let mut y = pos as i32 + 1;
            while y < 8 && line >> y & 1 == 0 {
                y += 1;
            }
            if y < 8 {
                count += y - pos as i32 - 1;
            }
            t[pos][line] = count as u8;
            line += 1;
        }
        pos += 1;
    }
    t
};

/// Discs `p` flips by playing `x`, the only empty square.
#[inline(always)]
fn count_last_flips(x: u32, p: u64) -> i32 {
    let (row, col) = ((x >> 3) as usize, (x & 7) as usize);
    let [d9, d7] = DIAGONALS[x as usize & 63];
    // Any set of squares in distinct columns gathers into the top byte under
    // this multiplication, each square at its column.
    let gather = |bits: u64| (bits.wrapping_mul(0x0101_0101_0101_0101) >> 56) as usize;
    let column = ((p >> col) & 0x0101_0101_0101_0101).wrapping_mul(0x0102_0408_1020_4080) >> 56;
    let by_col = &COUNT_FLIPS[col];
    let n = COUNT_FLIPS[row][column as usize]
        + by_col[(p >> (row * 8)) as usize & 0xFF]
        + by_col[gather(p & d9)]
        + by_col[gather(p & d7)];
    i32::from(n)
}

/// The final score with one empty square `x` left, `p` to move: whoever can play
/// it does (`p` first).
#[inline(always)]
pub fn last1<const ANTI: bool>(p: u64, o: u64, x: u32) -> i32 {
    // 63 discs: own - other = 2 * own - 63.
    let diff = 2 * p.count_ones() as i32 - 63;
    let n = count_last_flips(x, p);
    let score = if n > 0 {
        diff + 2 * n + 1
    } else {
        let m = count_last_flips(x, o);
        if m > 0 {
            diff - 2 * m - 1
        } else if diff > 0 {
            diff + 1
        } else {
            diff - 1
        }
    };
    if ANTI { -score } else { score }
}

/// As [`last1`], but when the score is at most `limit` it may return any upper
/// bound of it that is itself at most `limit`: when `p` cannot play `x`, the
/// score without the opponent's move is such a bound (the opponent's move only
/// lowers it), and the opponent's flips need not be counted.
#[inline(always)]
fn last1_capped<const ANTI: bool>(p: u64, o: u64, x: u32, limit: i32) -> i32 {
    if ANTI {
        // Anti turns the bound round; the plain count is cheap enough there.
        return last1::<ANTI>(p, o, x);
    }
    let diff = 2 * p.count_ones() as i32 - 63;
    let n = count_last_flips(x, p);
    if n > 0 {
        return diff + 2 * n + 1;
    }
    let unplayed = if diff > 0 { diff + 1 } else { diff - 1 };
    if unplayed <= limit {
        return unplayed;
    }
    let m = count_last_flips(x, o);
    if m > 0 { diff - 2 * m - 1 } else { unplayed }
}

impl<const ANTI: bool> Solver<'_, ANTI> {
    /// Any window, 0 to 4 empties.
    pub(super) fn solve_few(
        &mut self,
        p: u64,
        o: u64,
        alpha: i32,
        beta: i32,
        n: u32,
        parity: u32,
    ) -> i32 {
        match n {
            4 => self.solve4(p, o, alpha, beta, parity),
            3 => self.solve3(p, o, alpha, beta, parity),
            2 => self.solve2(p, o, alpha, beta),
            1 => {
                self.nodes += 1;
                last1::<ANTI>(p, o, (!(p | o)).trailing_zeros())
            }
            _ => {
                self.nodes += 1;
                final_score::<ANTI>(p, o)
            }
        }
    }

    /// Four empties: a stability cut-off, then the squares in parity order.
    pub(super) fn solve4(&mut self, p: u64, o: u64, alpha: i32, beta: i32, parity: u32) -> i32 {
        self.nodes += 1;
        if let Some(bound) = self.stability_cutoff(p, o, alpha, 4) {
            return bound;
        }
        let v = self.solve4_side(p, o, alpha, beta, parity);
        if v > -SCORE_INF {
            return v;
        }
        let v = self.solve4_side(o, p, -beta, -alpha, parity);
        if v > -SCORE_INF {
            return -v;
        }
        final_score::<ANTI>(p, o)
    }

    /// Four empties, `p` to move; `-SCORE_INF` when `p` has no move.
    #[inline(always)]
    fn solve4_side(&mut self, p: u64, o: u64, alpha: i32, beta: i32, parity: u32) -> i32 {
        self.side(
            p,
            o,
            alpha,
            beta,
            parity,
            |solver, p, o, alpha, beta, parity| solver.solve3(p, o, alpha, beta, parity),
        )
    }

    /// Three empties.
    pub(super) fn solve3(&mut self, p: u64, o: u64, alpha: i32, beta: i32, parity: u32) -> i32 {
        self.nodes += 1;
        let v = self.solve3_side(p, o, alpha, beta, parity);
        if v > -SCORE_INF {
            return v;
        }
        let v = self.solve3_side(o, p, -beta, -alpha, parity);
        if v > -SCORE_INF {
            return -v;
        }
        final_score::<ANTI>(p, o)
    }

    /// Three empties, `p` to move; `-SCORE_INF` when `p` has no move.
    #[inline(always)]
    fn solve3_side(&mut self, p: u64, o: u64, alpha: i32, beta: i32, parity: u32) -> i32 {
        self.side(p, o, alpha, beta, parity, |solver, p, o, alpha, beta, _| {
            solver.solve2(p, o, alpha, beta)
        })
    }

    /// `p`'s moves searched by `child`, fail-soft; `-SCORE_INF` when `p` has
    /// none. The squares of odd quadrants come first (playing there keeps the
    /// quadrant's last move for the side that entered it), each class walked
    /// as a bit set, lowest square first.
    #[inline(always)]
    fn side(
        &mut self,
        p: u64,
        o: u64,
        mut alpha: i32,
        beta: i32,
        parity: u32,
        child: impl Fn(&mut Self, u64, u64, i32, i32, u32) -> i32,
    ) -> i32 {
        let empty = !(p | o);
        let odd = quadrant_mask(parity);
        let mut best = -SCORE_INF;
        for class in [empty & odd, empty & !odd] {
            for x in Squares(class) {
                let f = flips(x, p, o);
                if f == 0 {
                    continue;
                }
                let (np, no) = after(x, f, p, o);
                let v = -child(self, np, no, -beta, -alpha, parity ^ quadrant_bit(x));
                if v > best {
                    best = v;
                    if v >= beta {
                        return v;
                    }
                    alpha = alpha.max(v);
                }
            }
        }
        best
    }

    /// Two empties.
    pub(super) fn solve2(&mut self, p: u64, o: u64, alpha: i32, beta: i32) -> i32 {
        self.nodes += 1;
        let empty = !(p | o);
        let (a, b) = (
            empty.trailing_zeros(),
            (empty & empty.wrapping_sub(1)).trailing_zeros(),
        );
        let mut best = -SCORE_INF;
        let f = flips(a, p, o);
        if f != 0 {
            let (np, no) = after(a, f, p, o);
            self.nodes += 1;
            best = -last1_capped::<ANTI>(np, no, b, -beta);
            if best >= beta {
                return best;
            }
        }
        let f = flips(b, p, o);
        if f != 0 {
            let (np, no) = after(b, f, p, o);
            self.nodes += 1;
            return best.max(-last1_capped::<ANTI>(np, no, a, -beta));
        }
        if best > -SCORE_INF {
            return best;
        }
        // We pass: the opponent picks the lower of our scores.
        let mut worst = SCORE_INF;
        let f = flips(a, o, p);
        if f != 0 {
            let (np, no) = after(a, f, o, p);
            self.nodes += 1;
            worst = last1_capped::<ANTI>(np, no, b, alpha);
            if worst <= alpha {
                return worst;
            }
        }
        let f = flips(b, o, p);
        if f != 0 {
            let (np, no) = after(b, f, o, p);
            self.nodes += 1;
            return worst.min(last1_capped::<ANTI>(np, no, a, alpha));
        }
        if worst < SCORE_INF {
            return worst;
        }
        final_score::<ANTI>(p, o)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board8::flips;

    #[test]
    fn a_capped_last_move_is_exact_above_the_cap_and_a_bound_below() {
        let mut seed = 11u64;
        for _ in 0..20_000 {
            seed = crate::game::mix64(seed.wrapping_add(0x9E37_79B9_7F4A_7C15));
            let x = (seed >> 58) as u32;
            let p = crate::game::mix64(seed) & !(1 << x);
            let o = !p & !(1 << x);
            let exact = last1::<false>(p, o, x);
            let limit = (seed % 129) as i32 - 64;
            let capped = last1_capped::<false>(p, o, x, limit);
            if capped > limit {
                assert_eq!(capped, exact, "{x} {p:#x} {limit}");
            } else {
                assert!(exact <= capped, "{x} {p:#x} {limit}: {exact} > {capped}");
            }
            assert_eq!(last1_capped::<true>(p, o, x, limit), -exact);
        }
    }

    #[test]
    fn last_flip_counts_match_the_flips() {
        let mut seed = 7u64;
        for _ in 0..20_000 {
            seed = crate::game::mix64(seed.wrapping_add(0x9E37_79B9_7F4A_7C15));
            let x = (seed >> 58) as u32;
            let p = crate::game::mix64(seed) & !(1 << x);
            let o = !p & !(1 << x);
            assert_eq!(
                count_last_flips(x, p),
                flips(x, p, o).count_ones() as i32,
                "{x} {p:#x}"
            );
            assert_eq!(
                count_last_flips(x, o),
                flips(x, o, p).count_ones() as i32,
                "{x} {o:#x}"
            );
        }
    }
}
