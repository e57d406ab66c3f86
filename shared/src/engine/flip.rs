//! Flips without branches, for the solver's inner loops.
//!
//! The same rays as [`crate::board8::flips`], but every direction is computed
//! with masks instead of `if`s: whether a ray closes on a disc of the mover is as
//! good as random in a search, and a mispredicted branch costs more than the few
//! instructions it would skip.

/// Each square's rays: the four that go up in bit index (E, S, SE, SW) and the four
/// that go down (W, N, NW, NE), the square excluded.
static RAYS: [[u64; 8]; 64] = {
    let mut t = [[0u64; 8]; 64];
    let steps: [(i32, i32); 8] = [
        (0, 1),
        (1, 0),
        (1, 1),
        (1, -1),
        (0, -1),
        (-1, 0),
        (-1, -1),
        (-1, 1),
    ];
    let mut s = 0;
    while s < 64 {
        let mut d = 0;
        while d < 8 {
            let (dr, dc) = steps[d];
            let (mut r, mut c) = (s as i32 / 8 + dr, s as i32 % 8 + dc);
            while r >= 0 && r < 8 && c >= 0 && c < 8 {
                t[s][d] |= 1 << (r * 8 + c);
                r += dr;
                c += dc;
            }
            d += 1;
        }
        s += 1;
    }
    t
};

/// All ones when `condition`, else zero.
#[inline(always)]
fn mask(condition: bool) -> u64 {
    0u64.wrapping_sub(u64::from(condition))
}

/// The `o` discs flipped when `p` plays `square` (taken modulo 64), as
/// [`crate::board8::flips`].
#[inline(always)]
pub fn flips(square: u32, p: u64, o: u64) -> u64 {
    let rays = &RAYS[(square & 63) as usize];
    let not_o = !o;
    let mut flipped = 0;
    for &ray in &rays[..4] {
        // The lowest non-`o` square of the ray closes the run below it.
        let stop = ray & not_o;
        let first = stop & stop.wrapping_neg();
        flipped |= ray & first.wrapping_sub(1) & mask(first & p != 0);
    }
    for &ray in &rays[4..] {
        // The highest non-`o` square; none when the shift runs past (stop is 0).
        let stop = ray & not_o;
        let last = stop & 0x8000_0000_0000_0000u64.wrapping_shr(stop.leading_zeros());
        flipped |= ray & (last.wrapping_neg() << 1) & mask(last & p != 0);
    }
    flipped
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_same_flips_as_the_rules() {
        let mut seed = 3u64;
        for _ in 0..50_000 {
            seed = crate::game::mix64(seed.wrapping_add(0x9E37_79B9_7F4A_7C15));
            let square = (seed >> 58) as u32;
            let a = crate::game::mix64(seed);
            let b = crate::game::mix64(a);
            let (p, o) = (a & !b & !(1 << square), b & !(1 << square));
            assert_eq!(
                super::flips(square, p, o),
                crate::board8::flips(square, p, o)
            );
        }
    }
}
