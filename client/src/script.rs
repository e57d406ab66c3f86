//! The script mode (stdin or stdout not a terminal): one command at a time,
//! each sent after the previous reply and, for moves, on the client's turn,
//! so that `printf ... | flip` plays sensibly.

use std::io::BufRead;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use crate::commands::{Input, is_move, save_game, translate};
use crate::link::Link;
use crate::play::Failure;
use crate::screen;

/// How long a script waits for its turn or for a reply before going on.
const SCRIPT_WAIT: Duration = Duration::from_secs(120);

/// Runs `first`, then the lines of standard input.
pub fn run(link: &Arc<Link>, first: Vec<String>) -> Result<(), Failure> {
    let stdin = std::io::stdin();
    let typed = stdin.lock().lines().map_while(Result::ok);
    for line in first.into_iter().chain(typed) {
        match translate(&line) {
            Input::Nothing => {}
            Input::Show(lines) => screen::show(&lines),
            Input::Save(path) => screen::show(&save_game(link, &path)),
            Input::Quit => break,
            Input::Send(command) => {
                let moving = is_move(&command);
                if moving {
                    link.wait_until(SCRIPT_WAIT, |v| v.my_turn());
                }
                let before = link.view().moves_seen();
                link.send(&command).map_err(Failure::connection)?;
                // A move counts as done once its MOVED line is in, which comes
                // after the OK; then the next line sees the new position.
                let done = link.wait_until(SCRIPT_WAIT, |v| {
                    v.idle() && (!moving || !v.last_ok || v.moves_seen() > before)
                });
                if !done && link.lost.load(Ordering::Acquire) {
                    return Err(Failure::connection("connection lost"));
                }
            }
        }
    }
    link.wait_until(SCRIPT_WAIT, |v| v.idle());
    link.closing.store(true, Ordering::Release);
    Ok(())
}
