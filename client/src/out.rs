//! Standard output for every subcommand. A reader that goes away (`flip perft
//! 9 | head -1`) is no error of flip's: the process ends quietly with status 0
//! (see README's exit statuses) instead of panicking in `println!`.

use std::fmt;
use std::io::{ErrorKind, Write};

/// Writes one line to standard output (see [`say!`](crate::say)).
pub fn line(text: fmt::Arguments<'_>) {
    write_text(&format!("{text}\n"));
}

/// Writes `text` as it is, flushed.
pub fn write_text(text: &str) {
    let mut out = std::io::stdout().lock();
    let written = out.write_all(text.as_bytes()).and_then(|()| out.flush());
    if let Err(e) = written {
        gone_or_ignored(&e);
    }
}

/// A closed pipe ends the process; any other failure to write is let go,
/// as `println!` would not (it panics), since nothing else could be told.
pub fn gone_or_ignored(error: &std::io::Error) {
    if error.kind() == ErrorKind::BrokenPipe {
        std::process::exit(0);
    }
}

/// `println!` that ends the process quietly when standard output is a closed
/// pipe.
#[macro_export]
macro_rules! say {
    ($($arg:tt)*) => {
        $crate::out::line(format_args!($($arg)*))
    };
}
