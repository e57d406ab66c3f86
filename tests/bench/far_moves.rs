//! `flip-bench farmove`: how much longer a move takes when its player is
//! connected to another node of a cluster than the game's. A game is made
//! on one node (black there) and joined from another (white there); each
//! move is timed from its sending to its `OK`, and the tool reports both
//! players' round trips and the difference of their percentiles.

use std::time::{Duration, Instant};

use crate::watch::{Timed, WatchArgs, logged_in, ms, percentile, report};

/// The command for a `TURN` line's first legal move.
fn first_move(turn: &str) -> String {
    let moves = turn.split_whitespace().nth(3).unwrap_or("pass");
    match moves.split(',').next() {
        Some("pass") | None => "PASS".to_string(),
        Some(square) => format!("MOVE {square}"),
    }
}

/// Plays one game; each move's round trip goes to `near` (black's) or
/// `far` (white's).
fn play(
    black: &mut Timed,
    white: &mut Timed,
    (near, far): (&mut Vec<f64>, &mut Vec<f64>),
) -> Result<(), String> {
    black.send("NEW othello as X")?;
    let (created, _) = black.until("OK ")?;
    let game = created.trim_start_matches("OK ").to_string();
    white.send(&format!("JOIN {game}"))?;
    white.until(&format!("OK {game} O"))?;
    let mut turn = black.until(&format!("TURN {game} "))?.0;
    while white.next_of(&game)?.is_some() {
        let black_moves = turn.starts_with(&format!("TURN {game} X "));
        let (mover, times) = match black_moves {
            true => (&mut *black, &mut *near),
            false => (&mut *white, &mut *far),
        };
        let sent = Instant::now();
        mover.send(&first_move(&turn))?;
        let (_, answered) = mover.until("OK")?;
        times.push(ms(answered - sent));
        match black.next_of(&game)? {
            Some(next) => turn = next,
            None => {
                // White's `OVER` too, so that its lines start at the next game.
                white.next_of(&game)?;
                break;
            }
        }
        // Within the daemon's rate limit for one connection (100 commands a
        // second by default): each move is timed on its own.
        std::thread::sleep(Duration::from_millis(15));
    }
    for player in [black, white] {
        player.send("LEAVE")?;
        player.until("OK")?;
    }
    Ok(())
}

/// Runs the measurement.
pub fn run(args: &WatchArgs) -> Result<(), String> {
    let stamp = std::process::id();
    let mut black = logged_in(&args.owner, &format!("fmb{stamp}"))?;
    let mut white = logged_in(&args.far, &format!("fmw{stamp}"))?;
    let (mut near, mut far) = (Vec::new(), Vec::new());
    for _ in 0..args.games {
        play(&mut black, &mut white, (&mut near, &mut far))?;
    }
    near.sort_by(f64::total_cmp);
    far.sort_by(f64::total_cmp);
    let extra: Vec<String> = [0.5, 0.9, 0.99]
        .iter()
        .map(|&p| format!("{:.3} ms", percentile(&far, p) - percentile(&near, p)))
        .collect();
    report("a move from the game's node", near);
    report("a move from another node", far);
    println!(
        "another node's extra: p50 {}, p90 {}, p99 {}",
        extra[0], extra[1], extra[2]
    );
    Ok(())
}
