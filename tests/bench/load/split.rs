//! A run spread over several processes: one process holds no more connections
//! than its open-file limit allows, so `flip-bench load` starts as many copies
//! of itself as the games need, lines up their phases and sums up their
//! reports.
//!
//! The copies run `flip-bench load --child` and talk to this process over their
//! standard input and output, a line each way at every step:
//!
//! 1. each copy connects, logs in and seeks, then prints `ready`;
//! 2. once all are ready this process writes `go`: all warm up and measure
//!    together, so that their windows are the same seconds;
//! 3. each prints its figures as `part ...` lines and then `measured`;
//! 4. once all have measured (and after `--cooldown`), `close`: all close
//!    their connections at once, after every window has ended.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use super::LoadArgs;
use super::stats::{Counters, Histogram, Report};

/// What a child prints once it is connected.
pub const READY: &str = "ready";
/// What tells the children to warm up and measure.
pub const GO: &str = "go";
/// What a child prints after its figures.
pub const MEASURED: &str = "measured";
/// What tells the children to close their connections.
pub const CLOSE: &str = "close";

/// Games for each of the processes: `games` split as evenly as they go,
/// each process holding at most `per_process` connections.
pub fn shares(games: usize, per_process: usize) -> Vec<usize> {
    let games_each = (per_process / 2).max(1);
    let processes = games.div_ceil(games_each).max(1);
    (0..processes)
        .map(|i| games / processes + usize::from(i < games % processes))
        .collect()
}

/// Runs the children, one for each share, and merges their reports.
pub fn run(args: &LoadArgs, shares: &[usize], cooldown: Duration) -> Result<Report, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find flip-bench itself: {e}"))?;
    let (lines_tx, lines_rx) = mpsc::channel::<(usize, Option<String>)>();
    let mut children = Children(Vec::with_capacity(shares.len()));
    for (index, games) in shares.iter().enumerate() {
        let mut child = Command::new(&exe)
            .args(child_args(args, *games))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot start a load process: {e}"))?;
        let stdout = child.stdout.take();
        let stdin = child.stdin.take();
        children.0.push((child, stdin));
        let lines_tx = lines_tx.clone();
        std::thread::spawn(move || forward_lines(index, stdout, &lines_tx));
    }
    drop(lines_tx);
    let count = shares.len();
    let mut parts: Vec<Part> = (0..count).map(|_| Part::default()).collect();
    wait_for_all(&lines_rx, count, READY, &mut parts)?;
    children.tell(GO);
    wait_for_all(&lines_rx, count, MEASURED, &mut parts)?;
    std::thread::sleep(cooldown);
    children.tell(CLOSE);
    children.wait();
    Ok(merge(parts))
}

/// The children, killed if this process gives up on them.
struct Children(Vec<(Child, Option<ChildStdin>)>);

impl Children {
    fn tell(&mut self, word: &str) {
        for (_, stdin) in &mut self.0 {
            if let Some(stdin) = stdin {
                let _ = writeln!(stdin, "{word}").and_then(|()| stdin.flush());
            }
        }
    }

    /// Closes their input (the last word) and waits for them to exit.
    fn wait(&mut self) {
        for (child, stdin) in &mut self.0 {
            drop(stdin.take());
            let _ = child.wait();
        }
        self.0.clear();
    }
}

impl Drop for Children {
    fn drop(&mut self) {
        for (child, _) in &mut self.0 {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// The flags of this run for one child holding `games`.
fn child_args(args: &LoadArgs, games: usize) -> Vec<String> {
    let mut flags = vec![
        "load".to_string(),
        "--child".to_string(),
        format!("--server={}", args.server),
        format!("--games={games}"),
        format!("--duration={}", args.duration),
        format!("--think-ms={}", args.think_ms),
        format!("--variant={}", args.variant),
        format!("--threads={}", args.threads),
        format!("--ramp={}", args.ramp),
        format!("--warmup={}", args.warmup),
    ];
    if let Some(rounds) = args.rounds {
        flags.push(format!("--rounds={rounds}"));
    }
    if let Some(ca) = &args.tls_ca {
        flags.push(format!("--tls-ca={}", ca.display()));
    }
    if let Some(pid) = args.pid {
        flags.push(format!("--pid={pid}"));
    }
    flags
}

/// In a child: prints `word` and waits for `answer` on standard input. If the
/// input ends first, the run this process belongs to is over (the parent was
/// stopped): it exits, and the system closes its connections.
pub async fn say_and_wait(word: &'static str, answer: &'static str) {
    println!("{word}");
    let _ = std::io::stdout().flush();
    let answered = tokio::task::spawn_blocking(move || {
        std::io::stdin()
            .lock()
            .lines()
            .map_while(Result::ok)
            .any(|line| line.trim() == answer)
    })
    .await
    .unwrap_or(false);
    if !answered {
        std::process::exit(1);
    }
}

/// Sends each line a child prints, then `None` when its output ends.
fn forward_lines(
    index: usize,
    stdout: Option<std::process::ChildStdout>,
    lines: &mpsc::Sender<(usize, Option<String>)>,
) {
    if let Some(stdout) = stdout {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if lines.send((index, Some(line))).is_err() {
                return;
            }
        }
    }
    let _ = lines.send((index, None));
}

/// Reads the children's lines until each has printed `word`, keeping their
/// `part` lines; a child that ends first, or a line not understood, is an error.
fn wait_for_all(
    lines: &mpsc::Receiver<(usize, Option<String>)>,
    count: usize,
    word: &str,
    parts: &mut [Part],
) -> Result<(), String> {
    let mut done = vec![false; count];
    while done.iter().any(|d| !d) {
        let (index, line) = lines
            .recv()
            .map_err(|_| "every load process ended".to_string())?;
        let Some(line) = line else {
            return Err(format!("load process {} ended before '{word}'", index + 1));
        };
        if line == word {
            if let Some(done) = done.get_mut(index) {
                *done = true;
            }
        } else if let Some(part) = parts.get_mut(index) {
            part.read(&line)
                .ok_or_else(|| format!("load process {}: cannot read {line:?}", index + 1))?;
        }
    }
    Ok(())
}

/// One child's figures.
#[derive(Default)]
pub struct Part {
    connections: usize,
    games: u64,
    moves: u64,
    seconds: f64,
    stall_ms: f64,
    rounds_done: usize,
    rss_kib: Option<(u64, u64)>,
    errors: BTreeMap<u16, u64>,
    failures: BTreeMap<String, u64>,
    latencies: Histogram,
}

impl Part {
    /// Takes in one `part` line.
    fn read(&mut self, line: &str) -> Option<()> {
        let rest = line.strip_prefix("part ")?;
        let (name, value) = rest.split_once(' ')?;
        let number = |text: &str| text.parse::<u64>().ok();
        match name {
            "connections" => self.connections = value.parse().ok()?,
            "games" => self.games = number(value)?,
            "moves" => self.moves = number(value)?,
            "seconds" => self.seconds = value.parse().ok()?,
            "stall_ms" => self.stall_ms = value.parse().ok()?,
            "rounds_done" => self.rounds_done = value.parse().ok()?,
            "rss" => {
                let (before, after) = value.split_once(' ')?;
                self.rss_kib = Some((number(before)?, number(after)?));
            }
            "error" => {
                let (code, count) = value.split_once(' ')?;
                *self.errors.entry(code.parse().ok()?).or_default() += number(count)?;
            }
            "failure" => {
                let (count, reason) = value.split_once(' ')?;
                *self.failures.entry(reason.to_string()).or_default() += number(count)?;
            }
            "latency" => self.latencies = Histogram::parse(value)?,
            _ => return None,
        }
        Some(())
    }
}

/// A child's figures as `part` lines, from its report and its counters.
pub fn part_lines(report: &Report, counters: &Counters) -> String {
    let mut out = format!(
        "part connections {}\npart games {}\npart moves {}\npart seconds {}\npart stall_ms {}\n\
         part rounds_done {}\n",
        report.connections,
        report.games,
        report.moves,
        report.seconds,
        report.stall_ms,
        report.rounds_done
    );
    if let Some((before, after)) = report.rss_kib {
        out += &format!("part rss {before} {after}\n");
    }
    for (code, count) in &report.errors {
        out += &format!("part error {code} {count}\n");
    }
    for (reason, count) in &report.failures {
        out += &format!("part failure {count} {}\n", reason.replace('\n', " "));
    }
    out += &format!("part latency {}\n", counters.latencies.to_text());
    out
}

/// The children's figures as one report: counts summed, round trips from
/// the summed histograms, the daemon's memory from the first reading before
/// and the last after. (`wanted` is the caller's.)
fn merge(parts: Vec<Part>) -> Report {
    let latencies = Histogram::default();
    let mut report = Report::default();
    let processes = parts.len();
    for part in parts {
        report.connections += part.connections;
        report.games += part.games;
        report.moves += part.moves;
        report.rounds_done += part.rounds_done;
        report.seconds = report.seconds.max(part.seconds);
        report.stall_ms = report.stall_ms.max(part.stall_ms);
        for (code, count) in part.errors {
            *report.errors.entry(code).or_default() += count;
        }
        for (reason, count) in part.failures {
            *report.failures.entry(reason).or_default() += count;
        }
        report.rss_kib = match (report.rss_kib, part.rss_kib) {
            (Some((b1, a1)), Some((b2, a2))) => Some((b1.min(b2), a1.max(a2))),
            (one, other) => one.or(other),
        };
        latencies.merge(&part.latencies);
    }
    report.latency_ms = latencies.percentiles_ms();
    report.notes.push(format!(
        "{processes} load processes, their windows lined up"
    ));
    report
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_split_games_evenly_within_each_process_limit() {
        assert_eq!(shares(10, 100), vec![10]);
        assert_eq!(shares(10_000, 19_936), vec![5_000, 5_000]);
        assert_eq!(shares(7, 4), vec![2, 2, 2, 1]);
        assert_eq!(shares(100_000, 19_936).len(), 11);
        for (games, per_process) in [(1, 2), (999, 50), (12_345, 1_000), (5, 1)] {
            let split = shares(games, per_process);
            assert_eq!(split.iter().sum::<usize>(), games, "{games} {per_process}");
            assert!(
                split.iter().all(|g| *g * 2 <= per_process.max(2)),
                "{split:?}"
            );
            let (low, high) = (split.iter().min(), split.iter().max());
            assert!(high.zip(low).is_some_and(|(h, l)| h - l <= 1), "{split:?}");
        }
    }

    #[test]
    fn parts_written_by_children_merge_into_one_report() {
        let (one, two) = (Counters::default(), Counters::default());
        for micros in [1_000, 2_000, 3_000] {
            one.latencies.record(micros);
        }
        two.latencies.record(50_000);
        let mut first = Report {
            connections: 4,
            games: 2,
            moves: 30,
            seconds: 2.0,
            stall_ms: 1.0,
            rss_kib: Some((100, 300)),
            ..Report::default()
        };
        first.errors.insert(429, 2);
        let mut second = Report {
            connections: 6,
            games: 1,
            moves: 10,
            seconds: 2.1,
            stall_ms: 3.0,
            rss_kib: Some((90, 350)),
            ..Report::default()
        };
        second.errors.insert(429, 1);
        second.failures.insert("read: reset".to_string(), 1);
        let parts: Vec<Part> = [(&first, &one), (&second, &two)]
            .into_iter()
            .map(|(report, counters)| {
                let mut part = Part::default();
                for line in part_lines(report, counters).lines() {
                    part.read(line).unwrap();
                }
                part
            })
            .collect();
        let merged = merge(parts);
        assert_eq!(merged.connections, 10);
        assert_eq!((merged.games, merged.moves), (3, 40));
        assert_eq!(merged.seconds, 2.1);
        assert_eq!(merged.stall_ms, 3.0);
        assert_eq!(merged.errors.get(&429), Some(&3));
        assert_eq!(merged.failures.get("read: reset"), Some(&1));
        assert_eq!(merged.rss_kib, Some((90, 350)));
        // p50 of 1, 2, 3 and 50 ms: the upper bound of the bucket of 2 ms.
        assert_eq!(merged.latency_ms[0], 2.1);
        assert_eq!(merged.latency_ms[3], 50.0, "max");
    }

    #[test]
    fn lines_not_understood_are_refused() {
        let mut part = Part::default();
        for line in [
            "part games many",
            "part latency 5 x:1",
            "part latency 5 999999:1",
            "part rss 1",
            "part colour blue",
            "games 3",
        ] {
            assert!(part.read(line).is_none(), "{line}");
        }
    }

    proptest::proptest! {
        /// Whatever a child prints, reading it never panics, and what
        /// `part_lines` writes reads back to the same figures.
        #[test]
        fn any_line_is_read_or_refused_without_panicking(line in "\\PC{0,60}") {
            let _ = Part::default().read(&line);
            let _ = Part::default().read(&format!("part {line}"));
            let _ = Histogram::parse(&line);
        }

        #[test]
        fn written_parts_read_back(
            connections in 0usize..1_000_000,
            moves in 0u64..u64::MAX / 2,
            round_trips in proptest::collection::vec(0u64..20_000_000, 0..50),
        ) {
            let counters = Counters::default();
            for micros in &round_trips {
                counters.latencies.record(*micros);
            }
            let report = Report { connections, moves, ..Report::default() };
            let mut part = Part::default();
            for line in part_lines(&report, &counters).lines() {
                proptest::prop_assert!(part.read(line).is_some(), "{}", line);
            }
            proptest::prop_assert_eq!(part.connections, connections);
            proptest::prop_assert_eq!(part.moves, moves);
            proptest::prop_assert_eq!(
                part.latencies.percentiles_ms(),
                counters.latencies.percentiles_ms()
            );
        }
    }
}
