//! `obf::parse_line`, the reader of FFO/OBF position files: any line gives a
//! position, nothing (comments, blank lines) or an error, never a panic; a
//! position it reads has a board of 64 cells.
#![no_main]

use flipline::Variant;
use flipline::obf::parse_line;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let line = String::from_utf8_lossy(data);
    if let Ok(Some(position)) = parse_line(&line) {
        assert_eq!(position.game.variant(), Variant::Othello);
    }
});
