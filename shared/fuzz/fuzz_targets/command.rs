//! `Command::parse`, the daemon's reading of every client line: any bytes (as
//! the daemon turns them into text) must give a command or a 400, never a panic.
#![no_main]

use flipline::protocol::{Command, ErrorCode};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let line = String::from_utf8_lossy(data);
    if let Err(err) = Command::parse(&line) {
        assert_eq!(err.code, ErrorCode::BadRequest);
        assert!(!err.message.contains('\n'));
    }
});
