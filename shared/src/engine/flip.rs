//! Flips without branches, for the solver's inner loops.
//!
//! The same rays as [`crate::board8::flips`], but every direction is computed
//! with masks instead of `if`s: whether a ray closes on a disc of the mover is as
//! good as random in a search, and a mispredicted branch costs more than the few
//! instructions it would skip. Nor is there a bit scan: the downward rays find
//! their closing disc by smearing, as the upward ones do by a subtraction, so
//! each half of the rays stays in one vector register (moving lanes out for a
//! `lzcnt` each and back cost more than the smear).

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

/// How far each downward ray (W, N, NW, NE) steps in bit index.
const DOWN_STEPS: [u32; 4] = [1, 8, 9, 7];

/// The `o` discs flipped when `p` plays `square` (taken modulo 64), as
/// [`crate::board8::flips`]. Written lane by lane over the four rays of each
/// half so that the compiler keeps each half in one vector register.
#[inline(always)]
pub fn flips(square: u32, p: u64, o: u64) -> u64 {
    let rays = &RAYS[(square & 63) as usize];
    let not_o = !o;
    let mut flipped = [0u64; 4];
    for (lane, &ray) in flipped.iter_mut().zip(&rays[..4]) {
        // The lowest non-`o` square of the ray closes the run below it; when
        // it is not `p`'s, `close` is 0 and so is the run.
        let stop = ray & not_o;
        let close = stop & stop.wrapping_neg() & p;
        *lane = ray & close.wrapping_sub(u64::from(close != 0));
    }
    for ((lane, &ray), step) in flipped.iter_mut().zip(&rays[4..]).zip(DOWN_STEPS) {
        // The highest non-`o` square closes the run above it. Smeared down
        // its ray's step, it covers itself and every ray square below it (a
        // smear across the board's edge lands only off the ray); a closing
        // square is below the played one, so never the top bit.
        let stop = ray & not_o;
        let mut below = stop | stop >> step;
        below |= below >> (2 * step);
        below |= below >> (4 * step);
        let close = stop & !(below >> step) & p;
        *lane |= ray & (close.wrapping_neg() << 1);
    }
    let [a, b, c, d] = flipped;
    (a | b) | (c | d)
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_same_flips_as_the_rules() {
        let mut seed = 3u64;
        for _ in 0..200_000 {
            seed = crate::game::mix64(seed.wrapping_add(0x9E37_79B9_7F4A_7C15));
            let square = (seed >> 58) as u32;
            let a = crate::game::mix64(seed);
            let b = crate::game::mix64(a);
            let c = crate::game::mix64(b);
            // Half, three quarters and seven eighths of the squares the
            // opponent's: long runs, closed and open, in every direction.
            let o = match seed % 3 {
                0 => b,
                1 => b | c,
                _ => b | c | a,
            } & !(1 << square);
            let p = !o & (a ^ c) & !(1 << square);
            assert_eq!(
                super::flips(square, p, o),
                crate::board8::flips(square, p, o)
            );
        }
    }
}
