//! The 8x8 bitboard hot path: legal moves and flips for Othello's rule on `u64`s.
//!
//! Boards are (player, opponent) pairs: the side to move first. Bit `row * 8 + col`
//! is a square, `a1` = bit 0. This is the code perft, the engine and every 8x8 move
//! on the server run through, so it is branch-light and table-driven.

/// Opponent discs not on the a or h columns: a horizontal or diagonal run of
/// discs to flip never includes an edge column, and masking them stops shifts from
/// wrapping round from one row into the next.
const INNER_COLUMNS: u64 = 0x7E7E_7E7E_7E7E_7E7E;

/// The squares where `p` may play: empty squares that close at least one line of
/// `o` discs. Each direction is a parallel fill (Kogge-Stone with a doubled step),
/// so a run of up to six discs is found in four shifts.
#[inline]
pub fn moves(p: u64, o: u64) -> u64 {
    let inner = o & INNER_COLUMNS;
    let candidates = fill_pair(p, inner, 1)
        | fill_pair(p, o, 8)
        | fill_pair(p, inner, 7)
        | fill_pair(p, inner, 9);
    candidates & !(p | o)
}

/// The squares one step beyond a run of `mask` discs that starts next to a `p` disc,
/// in both senses of the direction with step `d`.
#[inline(always)]
fn fill_pair(p: u64, mask: u64, d: u32) -> u64 {
    let mut up = mask & (p << d);
    up |= mask & (up << d);
    let pair_up = mask & (mask << d);
    up |= pair_up & (up << (2 * d));
    up |= pair_up & (up << (2 * d));

    let mut down = mask & (p >> d);
    down |= mask & (down >> d);
    let pair_down = mask & (mask >> d);
    down |= pair_down & (down >> (2 * d));
    down |= pair_down & (down >> (2 * d));

    (up << d) | (down >> d)
}

/// For each square, its rays in the four directions that go up in index (E, S, SE,
/// SW) and the four that go down (W, N, NW, NE), excluding the square itself.
struct Rays {
    up: [[u64; 4]; 64],
    down: [[u64; 4]; 64],
}

const fn ray(square: i32, dr: i32, dc: i32) -> u64 {
    let (mut r, mut c) = (square / 8 + dr, square % 8 + dc);
    let mut bits = 0u64;
    while r >= 0 && r < 8 && c >= 0 && c < 8 {
        bits |= 1 << (r * 8 + c);
        r += dr;
        c += dc;
    }
    bits
}

const fn build_rays() -> Rays {
    let mut rays = Rays {
        up: [[0; 4]; 64],
        down: [[0; 4]; 64],
    };
    let mut s = 0;
    while s < 64 {
        rays.up[s as usize] = [ray(s, 0, 1), ray(s, 1, 0), ray(s, 1, 1), ray(s, 1, -1)];
        rays.down[s as usize] = [ray(s, 0, -1), ray(s, -1, 0), ray(s, -1, -1), ray(s, -1, 1)];
        s += 1;
    }
    rays
}

static RAYS: Rays = build_rays();

/// The `o` discs flipped when `p` plays on `square` (0..64; other values flip
/// nothing). Along each ray the first square that is not an `o` disc decides: if it
/// is a `p` disc, the `o` discs before it flip.
#[inline]
pub fn flips(square: u32, p: u64, o: u64) -> u64 {
    let Some(index) = usize::try_from(square).ok().filter(|&i| i < 64) else {
        return 0;
    };
    let not_o = !o;
    let mut flipped = 0;
    for ray in RAYS.up[index] {
        let stop = ray & not_o;
        let first = stop & stop.wrapping_neg();
        // `first - 1` covers the squares below the stop: on this ray, the run of o.
        let run = ray & first.wrapping_sub(1);
        flipped |= if first & p != 0 { run } else { 0 };
    }
    for ray in RAYS.down[index] {
        let stop = ray & not_o;
        // The highest stop decides; `| 1` only keeps the subtraction from
        // underflowing when there is no stop, a case that closes nothing anyway.
        let last = 63 - (stop | 1).leading_zeros();
        let run = ray & (!1u64 << last);
        flipped |= if stop != 0 && (p >> last) & 1 != 0 {
            run
        } else {
            0
        };
    }
    flipped
}

/// Leaves of the game tree `depth` plies below the position (perft). A pass is one
/// ply, and a game that ends before `depth` counts as one leaf. The last ply is
/// counted in bulk: its leaves are the moves (or the one pass) of the position.
pub fn perft(p: u64, o: u64, depth: u32) -> u64 {
    if depth == 0 {
        return 1;
    }
    let mut moves = moves(p, o);
    if moves == 0 {
        if depth == 1 || crate::board8::moves(o, p) == 0 {
            return 1;
        }
        return perft(o, p, depth - 1);
    }
    if depth == 1 {
        return u64::from(moves.count_ones());
    }
    let mut leaves = 0;
    while moves != 0 {
        let square = moves.trailing_zeros();
        moves &= moves - 1;
        let f = flips(square, p, o);
        let (child_p, child_o) = (o ^ f, p ^ f ^ (1 << square));
        leaves += if depth == 2 {
            leaves_one_ply(child_p, child_o)
        } else {
            perft(child_p, child_o, depth - 1)
        };
    }
    leaves
}

/// Leaves one ply below: the moves, or one for the pass or the end of the game.
#[inline(always)]
fn leaves_one_ply(p: u64, o: u64) -> u64 {
    u64::from(moves(p, o).count_ones().max(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    const START_BLACK: u64 = 0x0000_0008_1000_0000;
    const START_WHITE: u64 = 0x0000_0010_0800_0000;

    #[test]
    fn the_start_has_four_moves_d3_c4_f5_e6() {
        let m = moves(START_BLACK, START_WHITE);
        let expect = [(2, 3), (3, 2), (4, 5), (5, 4)]
            .iter()
            .fold(0u64, |acc, (r, c)| acc | 1 << (r * 8 + c));
        assert_eq!(m, expect);
    }

    #[test]
    fn a_corner_flips_along_the_edge_and_the_diagonal() {
        // p: a1's ray ends h1 (row) and c3 (diagonal); o: b1..g1 and b2.
        let p = 1u64 << 7 | 1 << 18;
        let o = 0b0111_1110u64 | 1 << 9;
        assert_eq!(flips(0, p, o), o);
        // Without the closing disc on h1, the row flips nothing.
        assert_eq!(flips(0, 1 << 18, o), 1 << 9);
        // Out-of-range squares flip nothing rather than panic.
        assert_eq!(flips(64, p, o), 0);
    }

    #[test]
    fn perft_matches_the_standard_counts_to_depth_6() {
        let expected = [1u64, 4, 12, 56, 244, 1396, 8200];
        for (depth, want) in expected.iter().enumerate() {
            assert_eq!(perft(START_BLACK, START_WHITE, depth as u32), *want);
        }
    }
}
