//! `ServerLine::parse`, every client's and bot's reading of server lines: any
//! bytes give a line (`Unknown` at worst), and an event it reads prints back to
//! a line it reads the same way.
#![no_main]

use flipline::protocol::ServerLine;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let line = String::from_utf8_lossy(data);
    if let ServerLine::Event(event) = ServerLine::parse(&line) {
        let printed = event.to_string();
        assert_eq!(
            ServerLine::parse(&printed),
            ServerLine::Event(event),
            "{printed}"
        );
    }
});
