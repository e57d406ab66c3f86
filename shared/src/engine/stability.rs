//! Stable discs: discs that no sequence of moves can ever flip. The solver uses
//! them to cut off positions that cannot reach the window (the opponent's stable
//! discs bound our final score), the evaluation counts them.
//!
//! The count is a safe under-estimate: edge discs come from a table of solved edge
//! configurations, inner discs are stable when every line through them is full or
//! holds a stable disc of the same colour next to them.

use std::sync::LazyLock;

use super::board::{EDGE_COLUMNS, EDGE_ROWS, NOT_A, NOT_H};

/// Stable discs of the first side for each edge configuration: index `p * 256 + o`
/// for the 8 squares of an edge as bits (`p & o == 0`).
/// A fixed-size array, so that a lookup needs no bounds check.
static EDGE_STABLE: LazyLock<Box<[u8; 65536]>> = LazyLock::new(build_edge_table);

/// Discs of one side that stay whatever happens on an edge taken alone. An edge
/// disc can only be flipped along the edge, so this is exact for the edge discs;
/// moves are tried whether or not they flip along the edge, since a disc played on
/// the edge may flip only inner lines.
fn build_edge_table() -> Box<[u8; 65536]> {
    let mut table = Box::new([0u8; 65536]);
    // Positions with more discs are solved first: every move adds a disc, so the
    // positions a move leads to are always already in the table.
    for discs in (0..=8u32).rev() {
        for p in 0..256u32 {
            for o in 0..256u32 {
                if p & o == 0 && (p | o).count_ones() == discs {
                    table[(p * 256 + o) as usize] = edge_stable(&table[..], p, o);
                }
            }
        }
    }
    table
}

/// `p`'s discs that survive every move on the edge: those still `p`'s in every
/// position one move later, recursively (the table holds the later ones).
fn edge_stable(table: &[u8], p: u32, o: u32) -> u8 {
    let mut stable = p;
    let empty = !(p | o) & 0xFF;
    for x in (0..8).filter(|x| empty >> x & 1 == 1) {
        let flipped = edge_flips(x, p, o);
        let (p1, o1) = (p | 1 << x | flipped, o & !flipped);
        stable &= u32::from(table[(p1 * 256 + o1) as usize]);
        let flipped = edge_flips(x, o, p);
        let (p2, o2) = (p & !flipped, o | 1 << x | flipped);
        stable &= u32::from(table[(p2 * 256 + o2) as usize]);
    }
    // At most 8 bits.
    stable as u8
}

/// The `o` discs of an 8-square line flipped when `p` plays `x`.
fn edge_flips(x: u32, p: u32, o: u32) -> u32 {
    let mut flipped = 0;
    for step in [-1i32, 1] {
        let mut run = 0;
        let mut y = x as i32 + step;
        while (0..8).contains(&y) && o >> y & 1 == 1 {
            run |= 1 << y;
            y += step;
        }
        if (0..8).contains(&y) && p >> y & 1 == 1 {
            flipped |= run;
        }
    }
    flipped
}

/// Packs the a column (bit 8k for row k) into 8 bits, row 1 lowest.
#[inline(always)]
fn pack_a_column(bits: u64) -> usize {
    ((bits & 0x0101_0101_0101_0101).wrapping_mul(0x0102_0408_1020_4080) >> 56) as usize
}

/// Spreads 8 bits back onto the a column.
#[inline(always)]
fn unpack_a_column(bits: u64) -> u64 {
    let mut x = bits & 0xFF;
    x = (x | x << 28) & 0x0000_000F_0000_000F;
    x = (x | x << 14) & 0x0003_0003_0003_0003;
    (x | x << 7) & 0x0101_0101_0101_0101
}

/// `p`'s stable discs on the four edges.
#[inline]
fn edge_stable_discs(p: u64, o: u64) -> u64 {
    let table = &*EDGE_STABLE;
    let look = |pp: usize, oo: usize| u64::from(table[(pp << 8 | oo) & 0xFFFF]);
    let bottom = look((p & 0xFF) as usize, (o & 0xFF) as usize);
    let top = look((p >> 56) as usize, (o >> 56) as usize);
    let left = look(pack_a_column(p), pack_a_column(o));
    let right = look(pack_a_column(p >> 7), pack_a_column(o >> 7));
    bottom | top << 56 | unpack_a_column(left) | unpack_a_column(right) << 7
}

/// Squares whose line in each direction is full, one set per direction
/// (horizontal, vertical, the a1-h8 diagonals, the h1-a8 diagonals).
#[inline]
fn full_lines(occupied: u64) -> [u64; 4] {
    let mut h = occupied;
    h &= h >> 1;
    h &= h >> 2;
    h &= h >> 4;
    let horizontal = (h & 0x0101_0101_0101_0101).wrapping_mul(0xFF);
    let mut v = occupied;
    v &= v >> 8;
    v &= v >> 16;
    v &= v >> 32;
    let vertical = (v & 0xFF).wrapping_mul(0x0101_0101_0101_0101);
    let empty = !occupied;
    let diag9 = !(spread(empty, 9, NOT_A) | spread_down(empty, 9, NOT_H));
    let diag7 = !(spread(empty, 7, NOT_H) | spread_down(empty, 7, NOT_A));
    [horizontal, vertical, diag9, diag7]
}

/// `seeds` and every square reached from them by steps of `shift` up the board;
/// `land` holds the squares a step may land on (it stops wrapping round).
#[inline(always)]
fn spread(seeds: u64, shift: u32, land: u64) -> u64 {
    let mut g = seeds;
    let mut pro = land;
    g |= pro & (g << shift);
    pro &= pro << shift;
    g |= pro & (g << (2 * shift));
    pro &= pro << (2 * shift);
    g |= pro & (g << (4 * shift));
    g
}

/// As [`spread`], down the board.
#[inline(always)]
fn spread_down(seeds: u64, shift: u32, land: u64) -> u64 {
    let mut g = seeds;
    let mut pro = land;
    g |= pro & (g >> shift);
    pro &= pro >> shift;
    g |= pro & (g >> (2 * shift));
    pro &= pro >> (2 * shift);
    g |= pro & (g >> (4 * shift));
    g
}

/// Squares off the edges.
const INNER: u64 = !(EDGE_COLUMNS | EDGE_ROWS);

/// `p`'s stable discs (an under-estimate; see the module's comment).
pub fn stable_discs(p: u64, o: u64) -> u64 {
    let [horizontal, vertical, diag9, diag7] = full_lines(p | o);
    let mut stable = edge_stable_discs(p, o);
    stable |= p & INNER & horizontal & vertical & diag9 & diag7;
    if stable == 0 {
        return 0;
    }
    loop {
        // Inner squares only, so the shifts cannot wrap round an edge.
        let h = stable >> 1 | stable << 1 | horizontal;
        let v = stable >> 8 | stable << 8 | vertical;
        let d9 = stable >> 9 | stable << 9 | diag9;
        let d7 = stable >> 7 | stable << 7 | diag7;
        let grown = stable | (p & INNER & h & v & d9 & d7);
        if grown == stable {
            return stable;
        }
        stable = grown;
    }
}

/// Stable discs of `p` counted; see [`stable_discs`].
#[inline]
pub fn stable_count(p: u64, o: u64) -> u32 {
    stable_discs(p, o).count_ones()
}

/// `p`'s discs that are stable because they touch a corner through their own
/// colour along an edge: a cheap stand-in for [`stable_discs`] when ordering moves.
#[inline]
pub fn corner_stability(p: u64) -> u32 {
    let corners = p & super::board::CORNERS;
    let mut stable = corners;
    // Grow one square at a time along the edges from the corners.
    for _ in 0..6 {
        let grow = (stable << 1 & NOT_A | stable >> 1 & NOT_H) & EDGE_ROWS
            | (stable << 8 | stable >> 8) & EDGE_COLUMNS;
        stable |= grow & p;
    }
    stable.count_ones()
}

/// `p`'s corners and the edge squares next to its corners: the cheapest part of
/// [`corner_stability`], for sort keys computed at every node.
#[inline(always)]
pub fn corner_neighbours_held(p: u64) -> u32 {
    let low = 0x0100_0000_0000_0001 & p;
    let high = 0x8000_0000_0000_0080 & p;
    let bottom = 0x0000_0000_0000_0081 & p;
    let top = 0x8100_0000_0000_0000 & p;
    let near = low << 1 | high >> 1 | bottom << 8 | top >> 8 | super::board::CORNERS;
    (near & p).count_ones()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board8;
    use crate::engine::board::{Squares, after};

    #[test]
    fn a_full_board_is_all_stable_and_an_empty_edge_is_not() {
        let p = 0x00FF_00FF_00FF_00FF;
        assert_eq!(stable_discs(p, !p), p);
        // A lone corner is stable, its neighbour on an open edge is not.
        assert_eq!(stable_discs(0b11, 1 << 9), 0b11);
        assert_eq!(stable_discs(0b10, 1 << 9), 0);
    }

    #[test]
    fn columns_pack_and_unpack() {
        let column = 0x0100_0001_0000_0101u64;
        assert_eq!(pack_a_column(column), 0b1001_0011);
        assert_eq!(unpack_a_column(0b1001_0011), column);
    }

    /// Stable discs never change colour, along every line of play of random games.
    #[test]
    fn stable_discs_are_never_flipped_in_random_games() {
        let mut seed = 0x1234_5678_9ABC_DEF0u64;
        let mut next = move || {
            seed = crate::game::mix64(seed.wrapping_add(0x9E37_79B9_7F4A_7C15));
            seed
        };
        for _ in 0..200 {
            let (mut p, mut o) = (0x0000_0008_1000_0000u64, 0x0000_0010_0800_0000u64);
            let mut claims: Vec<(u64, bool)> = Vec::new(); // (discs, owned by black)
            let mut black = true;
            loop {
                let moves = board8::moves(p, o);
                if moves == 0 {
                    if board8::moves(o, p) == 0 {
                        break;
                    }
                    (p, o, black) = (o, p, !black);
                    continue;
                }
                let pick = Squares(moves).nth((next() % u64::from(moves.count_ones())) as usize);
                let square = pick.unwrap_or(0);
                (p, o) = after(square, board8::flips(square, p, o), p, o);
                black = !black;
                let (b, w) = if black { (p, o) } else { (o, p) };
                for &(discs, is_black) in &claims {
                    let own = if is_black { b } else { w };
                    assert_eq!(own & discs, discs, "a stable disc was flipped");
                }
                claims.push((stable_discs(b, w), true));
                claims.push((stable_discs(w, b), false));
            }
        }
    }
}
