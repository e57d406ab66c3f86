//! Transcripts and board strings, as `NEW ... from`, `load` and the archives
//! read them: `parse_transcript`, then `replay` on every variant, and
//! `parse_board`. No input may panic; a transcript that parses prints back to
//! one that parses to the same moves.
#![no_main]

use flipline::Variant;
use flipline::notation::{parse_board, parse_transcript, replay, transcript_string};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Ok(moves) = parse_transcript(&text) {
        let printed = transcript_string(&moves);
        assert_eq!(
            parse_transcript(&printed).ok(),
            Some(moves.clone()),
            "{printed}"
        );
        for variant in Variant::ALL {
            let _ = replay(variant, &moves);
        }
    }
    for variant in Variant::ALL {
        let _ = parse_board(&text, variant);
    }
});
