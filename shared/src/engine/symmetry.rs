//! The eight symmetries of the 8x8 board (rotations and reflections) on squares
//! and on bitboards. Othello's rules and its values do not change under them, so
//! the pattern evaluation shares one weight among the squares they map onto
//! each other, and the data tools store each position once, whichever way up it
//! was played.

/// Square `square` (bit `row * 8 + col`) under symmetry `s` (0..8): bit 0
/// mirrors the columns, bit 1 the rows, bit 2 swaps rows and columns (after the
/// mirrors). Symmetry 0 is the identity.
pub fn map_square(s: u8, square: u8) -> u8 {
    let (mut row, mut col) = (square / 8 % 8, square % 8);
    if s & 1 != 0 {
        col = 7 - col;
    }
    if s & 2 != 0 {
        row = 7 - row;
    }
    if s & 4 != 0 {
        std::mem::swap(&mut row, &mut col);
    }
    row * 8 + col
}

/// A bitboard under symmetry `s`, as [`map_square`] maps each of its squares;
/// done with byte and bit shuffles because the data tools map millions.
pub fn map_board(s: u8, board: u64) -> u64 {
    let mut b = board;
    if s & 1 != 0 {
        b = mirror_columns(b);
    }
    if s & 2 != 0 {
        b = b.swap_bytes();
    }
    if s & 4 != 0 {
        b = transpose(b);
    }
    b
}

/// The position's representative among its eight symmetric copies: the one
/// with the smallest (p, o), so that equal positions compare equal.
pub fn canonical(p: u64, o: u64) -> (u64, u64) {
    (0..8)
        .map(|s| (map_board(s, p), map_board(s, o)))
        .min()
        .unwrap_or((p, o))
}

/// Reverses the bits within each byte: column c becomes 7 - c.
fn mirror_columns(b: u64) -> u64 {
    let b = (b >> 1 & 0x5555_5555_5555_5555) | (b & 0x5555_5555_5555_5555) << 1;
    let b = (b >> 2 & 0x3333_3333_3333_3333) | (b & 0x3333_3333_3333_3333) << 2;
    (b >> 4 & 0x0F0F_0F0F_0F0F_0F0F) | (b & 0x0F0F_0F0F_0F0F_0F0F) << 4
}

/// Swaps rows and columns (the a1-h8 diagonal stays): the classic three
/// delta swaps.
fn transpose(b: u64) -> u64 {
    let t = (b ^ (b >> 7)) & 0x00AA_00AA_00AA_00AA;
    let b = b ^ t ^ (t << 7);
    let t = (b ^ (b >> 14)) & 0x0000_CCCC_0000_CCCC;
    let b = b ^ t ^ (t << 14);
    let t = (b ^ (b >> 28)) & 0x0000_0000_F0F0_F0F0;
    b ^ t ^ (t << 28)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The slow, obvious way: square by square.
    fn map_slow(s: u8, board: u64) -> u64 {
        (0..64u8)
            .filter(|&sq| board >> sq & 1 != 0)
            .fold(0, |acc, sq| acc | 1 << map_square(s, sq))
    }

    proptest! {
        #[test]
        fn board_maps_agree_with_square_maps(board in any::<u64>(), s in 0u8..8) {
            prop_assert_eq!(map_board(s, board), map_slow(s, board));
        }

        #[test]
        fn every_copy_has_the_same_representative(p in any::<u64>(), o in any::<u64>(), s in 0u8..8) {
            let o = o & !p;
            prop_assert_eq!(canonical(p, o), canonical(map_board(s, p), map_board(s, o)));
        }
    }

    #[test]
    fn the_eight_maps_are_distinct_permutations() {
        let mut images: Vec<Vec<u8>> = (0..8)
            .map(|s| (0..64).map(|sq| map_square(s, sq)).collect())
            .collect();
        for image in &images {
            let mut sorted = image.clone();
            sorted.sort_unstable();
            assert_eq!(sorted, (0..64).collect::<Vec<u8>>());
        }
        images.sort();
        images.dedup();
        assert_eq!(images.len(), 8);
    }
}
