//! `flip-bench load`: many concurrent games against a daemon (or the bare
//! baseline relay), playing random legal moves from `TURN` lines, and a report
//! of what it measured.

mod baseline;
mod pairs;
mod split;
mod stats;

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use clap::Args;
use flipline::Variant;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::net::{TcpSocket, TcpStream};
use tokio_rustls::TlsConnector;

pub use baseline::BaselineArgs;
use pairs::Role;
use stats::{Counters, Report, rss_kib};

#[derive(Args, Debug, Clone)]
pub struct LoadArgs {
    /// The server's address.
    #[arg(long, default_value_t = flipd::Config::default_server())]
    server: String,
    /// Games to hold at once (two connections each).
    #[arg(long, default_value_t = 100)]
    games: usize,
    /// Connect to the server's TLS port, trusting the certificate authority
    /// in this PEM file (the name checked is the server's IP address).
    #[arg(long, value_name = "FILE")]
    pub tls_ca: Option<std::path::PathBuf>,
    /// Another node of the same cluster: each game is made on `--server`
    /// by black (`NEW`) and joined from here by white (`JOIN`), rather than
    /// paired by `SEEK` on one server.
    #[arg(long)]
    far: Option<String>,
    /// Seconds to measure, after every connection is logged in (with
    /// `--rounds`, the longest the window may stay open).
    #[arg(long, default_value_t = 10.0)]
    duration: f64,
    /// Close the window once every connection has finished this many games
    /// in it, rather than after a fixed time: a run that must see games end
    /// then does not depend on how fast a loaded machine plays them.
    #[arg(long)]
    rounds: Option<u32>,
    /// Milliseconds each player waits before answering a TURN, on average (each
    /// wait is drawn from half to one and a half times this).
    #[arg(long, default_value_t = 0)]
    think_ms: u64,
    /// The variant to play.
    #[arg(long, default_value = "othello")]
    variant: Variant,
    /// The daemon's process id, to read its resident memory from /proc.
    #[arg(long)]
    pid: Option<u32>,
    /// Print one JSON object instead of lines.
    #[arg(long)]
    json: bool,
    /// Threads driving the connections.
    #[arg(long, default_value_t = 1)]
    threads: usize,
    /// Seconds allowed for connecting and logging in every connection.
    #[arg(long, default_value_t = 60.0)]
    ramp: f64,
    /// Seconds played after the ramp before measuring: when thousands of
    /// games start in the same instant, their first lines come in a burst
    /// that can overflow the kernel's queues, and the packets it drops come
    /// again only after TCP's retransmission timeout.
    #[arg(long, default_value_t = 2.0)]
    warmup: f64,
    /// Seconds played after measuring before the connections close: with
    /// several load processes on one server, closing thousands of connections
    /// is work for the server that would fall into the others' windows.
    #[arg(long, default_value_t = 0.0)]
    cooldown: f64,
    /// One of several processes of a run (see split.rs): line the phases up
    /// over standard input and output, print the figures as `part` lines.
    #[arg(long, hide = true)]
    child: bool,
}

/// The longest ramp, warm-up or measurement a run takes: a day.
const LONGEST_PHASE: Duration = Duration::from_secs(86_400);

/// The run's phases, checked.
struct Phases {
    ramp: Duration,
    warmup: Duration,
    measure: Duration,
    cooldown: Duration,
}

impl Phases {
    fn of(args: &LoadArgs) -> Result<Phases, String> {
        let seconds = |flag: &str, value: f64| {
            Duration::try_from_secs_f64(value)
                .ok()
                .filter(|d| *d <= LONGEST_PHASE)
                .ok_or_else(|| format!("--{flag} wants 0 to 86400 seconds, not {value}"))
        };
        Ok(Phases {
            ramp: seconds("ramp", args.ramp)?,
            warmup: seconds("warmup", args.warmup)?,
            measure: seconds("duration", args.duration)?,
            cooldown: seconds("cooldown", args.cooldown)?,
        })
    }
}

/// Runs the load and prints the report. More connections than one process may
/// hold are spread over several processes (split.rs).
pub fn run(args: &LoadArgs) -> Result<(), String> {
    let server: SocketAddr = args.server.parse().map_err(|_| {
        format!(
            "--server wants an IP address and port, not {:?}",
            args.server
        )
    })?;
    let phases = Phases::of(args)?;
    let far = match &args.far {
        Some(far) => Some(
            far.parse::<SocketAddr>()
                .map_err(|_| format!("--far wants an IP address and port, not {far:?}"))?,
        ),
        None => None,
    };
    let wanted = args.games.saturating_mul(2);
    let (connections, note) = connection_budget(wanted);
    if far.is_some() && connections < wanted {
        return Err(format!(
            "--far runs in one process, which holds at most {connections} connections here"
        ));
    }
    let mut report = if connections < wanted && connections >= 2 && !args.child {
        let shares = split::shares(args.games, connections);
        let mut report = split::run(args, &shares, phases.cooldown)?;
        report.notes.insert(
            0,
            format!(
                "one process holds at most {connections} connections here (its open-file limit)"
            ),
        );
        report
    } else {
        let mut report = run_here(args, &phases, (server, far), connections)?;
        report.notes.extend(note);
        report
    };
    if args.child {
        return Ok(());
    }
    report.wanted = wanted;
    report.rounds = args.rounds;
    print!(
        "{}",
        if args.json {
            report.json() + "\n"
        } else {
            report.text()
        }
    );
    Ok(())
}

/// Runs `connections` in this process.
fn run_here(
    args: &LoadArgs,
    phases: &Phases,
    servers: (SocketAddr, Option<SocketAddr>),
    connections: usize,
) -> Result<Report, String> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(args.threads.max(1))
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    Ok(runtime.block_on(drive(args, phases, servers, connections)))
}

/// Raises the open-file limit as far as the system allows; returns how many
/// connections fit, with a note when the limit caps them.
fn connection_budget(wanted: usize) -> (usize, Option<String>) {
    let needed = (wanted as u64).saturating_add(64);
    match rlimit::increase_nofile_limit(needed) {
        Ok(limit) if limit >= needed => (wanted, None),
        Ok(limit) => {
            let fit = (limit.saturating_sub(64) as usize) & !1;
            (
                fit,
                Some(format!(
                    "the file-descriptor limit {limit} caps connections at {fit}"
                )),
            )
        }
        Err(e) => (
            wanted,
            Some(format!("cannot raise the file-descriptor limit: {e}")),
        ),
    }
}

async fn drive(
    args: &LoadArgs,
    phases: &Phases,
    (server, far): (SocketAddr, Option<SocketAddr>),
    connections: usize,
) -> Report {
    let counters = Arc::new(Counters::default());
    let tls = match &args.tls_ca {
        Some(ca) => match tls_connector(ca) {
            Ok(connector) => Some(connector),
            Err(why) => {
                counters.failure(why);
                return counters.report(0.0, None);
            }
        },
        None => None,
    };
    let rss_before = args.pid.and_then(rss_kib);
    let (ready_tx, mut ready_rx) = tokio::sync::mpsc::channel::<()>(connections.max(1));
    let mut tasks = Vec::with_capacity(connections);
    let mut joiner = None;
    for index in 0..connections {
        // With `--far`, each even connection makes games its next one joins
        // from the other node.
        let (role, server) = match (far, joiner.take()) {
            (None, _) => (Role::Seeker, server),
            (Some(far), Some(role)) => (role, far),
            (Some(_), None) => {
                let (maker, role) = Role::pair();
                joiner = Some(role);
                (maker, server)
            }
        };
        let player = Player {
            index,
            server,
            role,
            variant: args.variant,
            think: Duration::from_millis(args.think_ms),
            rounds: args.rounds,
            counters: Arc::clone(&counters),
            ready: ready_tx.clone(),
            tls: tls.clone(),
        };
        tasks.push(tokio::spawn(player.run()));
    }
    drop(ready_tx);
    // Measure once every connection is in (or the ramp time is up).
    let ramp_end = Instant::now() + phases.ramp;
    let mut ready = 0;
    while ready < connections {
        match tokio::time::timeout_at(ramp_end.into(), ready_rx.recv()).await {
            Ok(Some(())) => ready += 1,
            _ => break,
        }
    }
    // One of several processes (split.rs): wait for `go` after the ramp, and
    // print the figures and wait for `close` after the window.
    if args.child {
        split::say_and_wait(split::READY, split::GO).await;
    }
    tokio::time::sleep(phases.warmup).await;
    counters.measuring.store(true, Ordering::Release);
    let start = Instant::now();
    let probe = tokio::spawn(watch_own_stalls(Arc::clone(&counters)));
    let window = tokio::time::sleep(phases.measure);
    match args.rounds {
        Some(_) => {
            tokio::select! {
                () = window => {}
                () = counters.all_rounds_played(ready) => {}
            }
        }
        None => window.await,
    }
    counters.measuring.store(false, Ordering::Release);
    probe.abort();
    let seconds = start.elapsed().as_secs_f64();
    let rss_after = args.pid.and_then(rss_kib);
    let report = counters.report(seconds, rss_before.zip(rss_after));
    if args.child {
        print!("{}", split::part_lines(&report, &counters));
        split::say_and_wait(split::MEASURED, split::CLOSE).await;
    } else {
        tokio::time::sleep(phases.cooldown).await;
    }
    counters.stopping.store(true, Ordering::Release);
    for task in tasks {
        task.abort();
    }
    report
}

/// How often the tool checks that it wakes on time.
const PROBE_PERIOD: Duration = Duration::from_millis(10);

/// Sleeps `PROBE_PERIOD` over and over and records how late each wake-up is:
/// a stall of this process (its threads not run, or busy) delays every round
/// trip in flight, and the report should say so rather than blame the server.
async fn watch_own_stalls(counters: Arc<Counters>) {
    loop {
        let asleep = Instant::now();
        tokio::time::sleep(PROBE_PERIOD).await;
        let late = asleep.elapsed().saturating_sub(PROBE_PERIOD);
        let micros = u64::try_from(late.as_micros()).unwrap_or(u64::MAX);
        counters.stall_us.fetch_max(micros, Ordering::Relaxed);
    }
}

/// One connection: logs in, seeks, answers its turns with random legal moves.
struct Player {
    index: usize,
    server: SocketAddr,
    role: Role,
    variant: Variant,
    think: Duration,
    rounds: Option<u32>,
    counters: Arc<Counters>,
    ready: tokio::sync::mpsc::Sender<()>,
    /// With `--tls-ca`, the TLS port's handshake.
    tls: Option<TlsConnector>,
}

/// A TLS client trusting the authorities in the PEM file `ca`.
fn tls_connector(ca: &std::path::Path) -> Result<TlsConnector, String> {
    use rustls::pki_types::CertificateDer;
    use rustls::pki_types::pem::PemObject;
    let mut roots = rustls::RootCertStore::empty();
    let certs = CertificateDer::pem_file_iter(ca).map_err(|e| format!("{}: {e}", ca.display()))?;
    for cert in certs {
        let cert = cert.map_err(|e| format!("{}: {e}", ca.display()))?;
        roots
            .add(cert)
            .map_err(|e| format!("{}: {e}", ca.display()))?;
    }
    #[allow(deprecated)]
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(TlsConnector::from(Arc::new(config)))
}

impl Player {
    async fn run(mut self) {
        let mut role = std::mem::replace(&mut self.role, Role::Seeker);
        match self.play(&mut role).await {
            Ok(()) => {}
            Err(reason) if !self.counters.stopping.load(Ordering::Acquire) => {
                self.counters.failure(reason)
            }
            Err(_) => {}
        }
    }

    /// Source addresses are spread over 127.0.0.1-254 so that tens of thousands of
    /// connections to one port do not run out of local ports.
    async fn connect(&self) -> Result<TcpStream, String> {
        let socket = TcpSocket::new_v4().map_err(|e| format!("socket: {}", e.kind()))?;
        let host = 1 + (self.index % 254) as u8;
        if self.server.ip().is_loopback() {
            let source = SocketAddr::new(IpAddr::V4(Ipv4Addr::new(127, 0, 0, host)), 0);
            socket
                .bind(source)
                .map_err(|e| format!("bind: {}", e.kind()))?;
        }
        let stream = socket
            .connect(self.server)
            .await
            .map_err(|e| format!("connect: {}", e.kind()))?;
        let _ = stream.set_nodelay(true);
        Ok(stream)
    }

    /// One more game finished by this connection: with `--rounds`, the
    /// connection is done once it has finished that many in the window (it
    /// plays on, so that the others still find opponents).
    fn count_round(&self, state: &mut PlayerState) {
        let Some(rounds) = self.rounds else { return };
        if !self.counters.measuring.load(Ordering::Acquire) {
            return;
        }
        state.rounds_played += 1;
        if state.rounds_played == rounds {
            self.counters.round_done();
        }
    }

    async fn play(&self, role: &mut Role) -> Result<(), String> {
        let stream = self.connect().await?;
        let mut state = PlayerState::new(
            format!("l{}x{}", std::process::id(), self.index),
            self.index as u64,
        );
        let result = match &self.tls {
            None => {
                let (read, write) = stream.into_split();
                self.converse((read, write), &mut state, role).await
            }
            Some(tls) => {
                let name = rustls::pki_types::ServerName::IpAddress(self.server.ip().into());
                let stream = tls
                    .connect(name, stream)
                    .await
                    .map_err(|e| format!("TLS: {e}"))?;
                self.converse(tokio::io::split(stream), &mut state, role)
                    .await
            }
        };
        if state.logged_in {
            self.counters.closed();
        }
        result
    }

    /// Logs in, seeks and plays until the connection closes. The process id in
    /// the name keeps names apart when several load processes share a daemon
    /// (one process cannot hold more descriptors than its limit).
    async fn converse(
        &self,
        (read, mut write): (impl AsyncRead + Unpin, impl AsyncWrite + Unpin),
        state: &mut PlayerState,
        role: &mut Role,
    ) -> Result<(), String> {
        let mut lines = BufReader::new(read).lines();
        let seek = role.next_game(self.variant).map(|s| s + "\n");
        let login = format!("LOGIN {}\n{}", state.name, seek.as_deref().unwrap_or(""));
        write
            .write_all(login.as_bytes())
            .await
            .map_err(|e| format!("write: {}", e.kind()))?;
        loop {
            let line = tokio::select! {
                line = lines.next_line() => line.map_err(|e| format!("read: {}", e.kind()))?,
                Some(game) = role.next_join() => {
                    write
                        .write_all(format!("JOIN {game}\n").as_bytes())
                        .await
                        .map_err(|e| format!("write: {}", e.kind()))?;
                    continue;
                }
            };
            let Some(line) = line else { break };
            role.on_line(&line);
            let reply = state.on_line(&line, &self.counters, &self.ready);
            if line.starts_with("OVER") {
                self.count_round(state);
            }
            if let Some(reply) = reply {
                if reply.starts_with("MOVE") || reply.starts_with("PASS") {
                    if !self.think.is_zero() {
                        tokio::time::sleep(state.think_time(self.think)).await;
                    }
                    state.sent_at = Some(Instant::now());
                }
                let text = match (reply.as_str(), &seek) {
                    ("SEEK", Some(seek)) => seek.clone(),
                    ("SEEK", None) => continue,
                    _ => format!("{reply}\n"),
                };
                write
                    .write_all(text.as_bytes())
                    .await
                    .map_err(|e| format!("write: {}", e.kind()))?;
            }
        }
        Err("closed by the server".to_string())
    }
}

/// What one connection remembers between lines.
struct PlayerState {
    name: String,
    /// `X`, `O` or both (hotseat never happens here, but names decide).
    colors: Vec<&'static str>,
    sent_at: Option<Instant>,
    logged_in: bool,
    /// Games finished in the window (counted only with `--rounds`).
    rounds_played: u32,
    rng: u64,
}

impl PlayerState {
    fn new(name: String, seed: u64) -> PlayerState {
        PlayerState {
            name,
            colors: Vec::new(),
            sent_at: None,
            logged_in: false,
            rounds_played: 0,
            rng: seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1,
        }
    }

    /// The answer to a line: a move, `SEEK`, or nothing.
    fn on_line(
        &mut self,
        line: &str,
        counters: &Counters,
        ready: &tokio::sync::mpsc::Sender<()>,
    ) -> Option<String> {
        let mut words = line.split(' ');
        match words.next()? {
            "OK" if !self.logged_in => {
                // Held from here: a connection the server has not accepted yet
                // (its backlog holds it) is connected but not served.
                self.logged_in = true;
                counters.opened();
                let _ = ready.try_send(());
            }
            "OK" => self.acknowledged(counters),
            "ERR" => {
                counters.error(words.next()?.parse().ok()?);
                self.sent_at = None;
            }
            "START" => {
                let (black, white) = (words.nth(2)?, words.next()?);
                self.colors = [("X", black), ("O", white)]
                    .into_iter()
                    .filter(|(_, n)| *n == self.name)
                    .map(|(c, _)| c)
                    .collect();
            }
            "TURN" => {
                let (side, moves) = (words.nth(1)?, words.next()?);
                if self.colors.contains(&side) {
                    return Some(self.pick(moves));
                }
            }
            "OVER" => {
                if counters.measuring.load(Ordering::Relaxed) && self.colors.first() == Some(&"X") {
                    counters.games.fetch_add(1, Ordering::Relaxed);
                }
                return Some("SEEK".to_string());
            }
            _ => {}
        }
        None
    }

    fn acknowledged(&mut self, counters: &Counters) {
        let Some(sent) = self.sent_at.take() else {
            return;
        };
        if counters.measuring.load(Ordering::Relaxed) {
            let micros = u64::try_from(sent.elapsed().as_micros()).unwrap_or(u64::MAX);
            counters.latencies.record(micros);
            counters.moves.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Think times vary uniformly from half to one and a half times `mean`, so
    /// that games started together do not all move in the same millisecond.
    fn think_time(&mut self, mean: Duration) -> Duration {
        let permille = 500 + self.next_random() % 1001;
        mean * u32::try_from(permille).unwrap_or(1000) / 1000
    }

    fn next_random(&mut self) -> u64 {
        // xorshift64: plenty for choosing moves and think times.
        self.rng ^= self.rng << 13;
        self.rng ^= self.rng >> 7;
        self.rng ^= self.rng << 17;
        self.rng
    }

    fn pick(&mut self, moves: &str) -> String {
        if moves == "pass" {
            return "PASS".to_string();
        }
        // xorshift64: plenty for choosing among legal moves.
        self.rng ^= self.rng << 13;
        self.rng ^= self.rng >> 7;
        self.rng ^= self.rng << 17;
        let count = moves.split(',').count().max(1);
        let chosen = moves
            .split(',')
            .nth((self.rng % count as u64) as usize)
            .unwrap_or(moves);
        format!("MOVE {chosen}")
    }
}

/// Runs the bare relay baseline.
pub fn run_baseline(args: &BaselineArgs) -> Result<(), String> {
    baseline::run(args)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        load: LoadArgs,
    }

    fn phases(flags: &[&str]) -> Result<Phases, String> {
        let cli = Cli::try_parse_from(std::iter::once("load").chain(flags.iter().copied()))
            .map_err(|e| e.to_string())?;
        Phases::of(&cli.load)
    }

    #[test]
    fn phases_are_checked_seconds() {
        let ok = phases(&["--duration", "5", "--warmup", "0.5", "--cooldown", "3"]).unwrap();
        assert_eq!(ok.measure, Duration::from_secs(5));
        assert_eq!(ok.cooldown, Duration::from_secs(3));
        assert_eq!(ok.warmup, Duration::from_millis(500));
        assert_eq!(ok.ramp, Duration::from_secs(60));
        for bad in [
            "--warmup=-1",
            "--duration=nan",
            "--ramp=1e9",
            "--cooldown=-2",
            "--duration=inf",
        ] {
            let error = phases(&[bad]).err().unwrap_or_default();
            assert!(error.contains("wants 0 to 86400 seconds"), "{bad}: {error}");
        }
    }
}
