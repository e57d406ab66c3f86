//! `flip-bench watch`: how much later a spectator on another node of a
//! cluster sees a move than a spectator on the game's own node. A hotseat
//! game is played on the owner, one move at a time; a spectator there and
//! one on another node timestamp each `MOVED` line as it arrives (a reader
//! thread each), and the tool reports both delays from the move's sending,
//! and their difference, as percentiles.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

/// Flags of `flip-bench watch` and `farmove`: two nodes of a cluster.
#[derive(clap::Args, Debug)]
pub struct WatchArgs {
    /// The node the games are made on.
    #[arg(long, default_value = "127.0.0.1:7341")]
    pub owner: String,
    /// Another node of the same cluster (its spectator, or its player).
    #[arg(long, default_value = "127.0.0.1:7342")]
    pub far: String,
    /// Games to play, one after another (about 60 moves each).
    #[arg(long, default_value_t = 20)]
    pub games: usize,
}

/// A connection's lines, each with when it arrived (read on a thread).
pub struct Timed {
    writer: TcpStream,
    lines: Receiver<(String, Instant)>,
}

impl Timed {
    fn connect(addr: &str) -> Result<Timed, String> {
        let stream = TcpStream::connect(addr).map_err(|e| format!("{addr}: {e}"))?;
        stream.set_nodelay(true).map_err(|e| e.to_string())?;
        let reader = stream.try_clone().map_err(|e| e.to_string())?;
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(reader).lines() {
                let Ok(line) = line else { break };
                if tx.send((line, Instant::now())).is_err() {
                    break;
                }
            }
        });
        Ok(Timed {
            writer: stream,
            lines,
        })
    }

    pub fn send(&mut self, line: &str) -> Result<(), String> {
        self.writer
            .write_all(format!("{line}\n").as_bytes())
            .map_err(|e| e.to_string())
    }

    /// The first line starting with `prefix` (others dropped), and when it
    /// arrived.
    pub fn until(&self, prefix: &str) -> Result<(String, Instant), String> {
        loop {
            let (line, at) = self
                .lines
                .recv_timeout(Duration::from_secs(10))
                .map_err(|_| format!("no line starting {prefix:?} within 10 s"))?;
            if line.starts_with(prefix) {
                return Ok((line, at));
            }
            if line.starts_with("ERR ") {
                return Err(line);
            }
        }
    }
}

impl Timed {
    /// The game's next `TURN` line, or `None` once it is over.
    pub fn next_of(&self, game: &str) -> Result<Option<String>, String> {
        let (turn, over) = (format!("TURN {game} "), format!("OVER {game} "));
        loop {
            let (line, _) = self.until("")?;
            if line.starts_with(&turn) {
                return Ok(Some(line));
            }
            if line.starts_with(&over) {
                return Ok(None);
            }
            if line.starts_with("ERR ") {
                return Err(format!("the move was refused: {line}"));
            }
        }
    }
}

pub fn logged_in(addr: &str, name: &str) -> Result<Timed, String> {
    let mut client = Timed::connect(addr)?;
    client.send(&format!("LOGIN {name}"))?;
    client.until("OK ")?;
    Ok(client)
}

/// Milliseconds, for the report.
pub fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

pub fn percentile(sorted: &[f64], p: f64) -> f64 {
    let rank = ((sorted.len() as f64 - 1.0) * p).round();
    sorted.get(rank as usize).copied().unwrap_or(f64::NAN)
}

pub fn report(what: &str, mut values: Vec<f64>) {
    values.sort_by(f64::total_cmp);
    println!(
        "{what}: p50 {:.3} ms, p90 {:.3} ms, p99 {:.3} ms ({} moves)",
        percentile(&values, 0.5),
        percentile(&values, 0.9),
        percentile(&values, 0.99),
        values.len()
    );
}

/// Runs the measurement.
pub fn run(args: &WatchArgs) -> Result<(), String> {
    let stamp = std::process::id();
    let mut player = logged_in(&args.owner, &format!("wp{stamp}"))?;
    let mut here = logged_in(&args.owner, &format!("wh{stamp}"))?;
    let mut far = logged_in(&args.far, &format!("wf{stamp}"))?;
    let (mut local, mut remote, mut extra) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..args.games {
        player.send("NEW othello hotseat")?;
        let (created, _) = player.until("OK ")?;
        let game = created.trim_start_matches("OK ").to_string();
        for spectator in [&mut here, &mut far] {
            spectator.send(&format!("WATCH {game}"))?;
            spectator.until(&format!("TURN {game} "))?;
        }
        let mut turn = player.until(&format!("TURN {game} "))?.0;
        loop {
            let moves = turn.split_whitespace().nth(3).unwrap_or("pass");
            let command = match moves.split(',').next() {
                Some("pass") | None => "PASS".to_string(),
                Some(square) => format!("MOVE {square}"),
            };
            let sent = Instant::now();
            player.send(&command)?;
            let moved = format!("MOVED {game} ");
            let (_, at_here) = here.until(&moved)?;
            let (_, at_far) = far.until(&moved)?;
            local.push(ms(at_here - sent));
            remote.push(ms(at_far - sent));
            extra.push(ms(at_far.saturating_duration_since(at_here)));
            match player.next_of(&game)? {
                Some(next) => turn = next,
                None => break,
            }
            // Within the daemon's rate limit for one connection (100
            // commands a second by default): the delays are timed from
            // each move's sending, so the pause costs nothing measured.
            std::thread::sleep(Duration::from_millis(15));
        }
        for spectator in [&mut here, &mut far] {
            spectator.send("LEAVE")?;
        }
    }
    report("spectator on the game's node", local);
    report("spectator on another node", remote);
    report("another node's extra", extra);
    Ok(())
}
