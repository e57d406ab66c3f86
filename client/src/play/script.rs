//! The script mode (stdin or stdout not a terminal): every command runs in
//! order, and its answer and the events it causes are shown before the next
//! is sent, so that `printf ... | flip` plays sensibly:
//!
//! - a move waits for the client's turn while the other side of a game in
//!   play is to move; otherwise it goes at once (the server says why not);
//! - a move or `END` is done once the game has moved on (`TURN`) or ended
//!   (`OVER`), so the game's end is shown; `UNDO` once the position taken
//!   back is shown (its `TURN`), or at once when it only asks;
//! - a command the server refuses stops the script: its error is shown and
//!   flip exits 1;
//! - at the end of input flip waits for every answer; a game still in play
//!   on the script's turn is reported and flip exits 1 (the server keeps the
//!   seat for its grace period).

use std::io::BufRead;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use crate::play::commands::{Input, game_moves, input_for, is_move, save_game, starts_a_game};
use crate::play::link::Link;
use crate::play::reader::Failure;
use crate::play::screen;

/// How long a script waits for an answer, or for the other side to move.
const SCRIPT_WAIT: Duration = Duration::from_secs(120);

/// Runs `first`, then the lines of standard input.
pub fn run(link: &Arc<Link>, first: Vec<String>) -> Result<(), Failure> {
    let stdin = std::io::stdin();
    let typed = stdin.lock().lines().map_while(Result::ok);
    for line in first.into_iter().chain(typed) {
        match input_for(link, &line) {
            Input::Nothing => {}
            Input::Show(lines) => screen::show(&lines),
            Input::Save(path) => screen::show(&save_game(link, &path)),
            Input::Moves => screen::show(&game_moves(link)),
            Input::Register(_) => screen::show(&[
                "register asks for the password without echo, at a terminal; a script \
                 registers with LOGIN name password, or flip --name NAME --password-file FILE"
                    .to_string(),
            ]),
            Input::Quit => {
                link.closing.store(true, Ordering::Release);
                return Ok(());
            }
            Input::Send(command) => run_command(link, &line, &command)?,
        }
    }
    at_the_end(link)
}

/// Sends one command and waits for its answer and what it causes.
fn run_command(link: &Link, line: &str, command: &str) -> Result<(), Failure> {
    let moving = is_move(command);
    let keyword = |word: &str| {
        (command.split_whitespace().next()).is_some_and(|k| k.eq_ignore_ascii_case(word))
    };
    let (ending, undoing) = (keyword("END"), keyword("UNDO"));
    if moving && link.view().their_turn() {
        let turn = link.wait_until(SCRIPT_WAIT, |v| !v.their_turn());
        check_connection(link)?;
        if !turn {
            return Err(Failure::failed(format!(
                "no move from the other side in {} s: `{line}` not sent",
                SCRIPT_WAIT.as_secs()
            )));
        }
    }
    let (settles, overs) = {
        let view = link.view();
        (view.settles, view.overs)
    };
    link.send(command).map_err(Failure::connection)?;
    // A move is done at the TURN or OVER after it; END at the OVER, though
    // the other side's TURN may come first; UNDO at the TURN after the
    // position taken back, unless the other player is only asked.
    let done = link.wait_until(SCRIPT_WAIT, |v| {
        let settled = match (moving, ending, undoing) {
            (true, _, _) => v.settles > settles,
            (_, true, _) => v.overs > overs,
            (_, _, true) => v.replies.last_asked || v.settles > settles,
            _ => true,
        };
        v.idle() && (!v.replies.last_ok || settled)
    });
    check_connection(link)?;
    if !done {
        return Err(Failure::failed(format!(
            "no answer to `{line}` in {} s",
            SCRIPT_WAIT.as_secs()
        )));
    }
    if !link.view().replies.last_ok {
        // The server's error is shown already.
        return Err(Failure::failed(format!("stopped at `{line}`: refused")));
    }
    if starts_a_game(command) {
        // A bot or hotseat game's START follows its OK at once: the next
        // command (or the end of input) knows the game then. An open seat's
        // comes only when someone joins.
        link.wait_until(START_WAIT, |v| {
            v.current.is_some_and(|id| v.games.contains_key(&id))
        });
    }
    Ok(())
}

/// How long a script waits for the `START` after a game is made or joined.
const START_WAIT: Duration = Duration::from_millis(500);

fn check_connection(link: &Link) -> Result<(), Failure> {
    if link.lost.load(Ordering::Acquire) {
        return Err(Failure::connection("connection lost"));
    }
    Ok(())
}

/// The end of input: every answer in, and no game left on the script's turn.
fn at_the_end(link: &Link) -> Result<(), Failure> {
    link.wait_until(SCRIPT_WAIT, |v| v.idle());
    link.wait_until(SCRIPT_WAIT, |v| !v.their_turn());
    check_connection(link)?;
    link.closing.store(true, Ordering::Release);
    let view = link.view();
    match (view.live_game(), view.current) {
        (Some(_), Some(id)) if view.my_turn() => Err(Failure::failed(format!(
            "the input ended with game {id} in play and your move; the server keeps \
             the seat for its grace period"
        ))),
        (Some(_), Some(id)) => Err(Failure::failed(format!(
            "the input ended with game {id} in play"
        ))),
        _ => Ok(()),
    }
}
