//! Binaries of the workspace run as child processes: [`ChildDaemon`] runs the
//! real `flipd` (for what only a process can show: signals, a crash, the
//! open-file limit), [`workspace_binary`] builds and finds any binary of the
//! workspace, and [`wait_bounded`] waits for one without hanging a test.

use std::io::{BufRead, BufReader, Read};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, PoisonError, mpsc};
use std::time::{Duration, Instant};

use crate::daemon::{remove_temp_dir, temp_dir};

/// The `flipd` binary as a child process on port 0, killed when dropped.
pub struct ChildDaemon {
    /// The process.
    pub child: Child,
    /// Where it listens.
    pub addr: SocketAddr,
    /// Its configuration file.
    pub config: PathBuf,
    /// A directory of its own, removed when it is dropped.
    owned: Option<PathBuf>,
    /// Every log line read so far.
    log: Arc<Mutex<Vec<String>>>,
    /// Held by the reader of the log for each line: whoever holds it stops
    /// the reading, as a slow reader of flipd's standard error would.
    log_gate: Arc<Mutex<()>>,
}

impl ChildDaemon {
    /// Starts `flipd` with a configuration file of its own that listens on port
    /// 0 and keeps its store beside the file, in a fresh temporary directory.
    pub fn start() -> ChildDaemon {
        let dir = temp_dir("child");
        let config = write_config(&dir, "");
        let mut daemon = ChildDaemon::start_with(&config);
        daemon.owned = Some(dir);
        daemon
    }

    /// Builds (if need be) and starts `flipd --config FILE`, and reads the
    /// address from its log line `listening on 127.0.0.1:PORT`.
    pub fn start_with(config: &Path) -> ChildDaemon {
        let mut command = Command::new(flipd_binary());
        command.arg("--config").arg(config).env("RUST_LOG", "info");
        ChildDaemon::run(command, config)
    }

    /// As [`ChildDaemon::start_with`], with these environment variables set.
    pub fn start_with_env(config: &Path, variables: &[(&str, &str)]) -> ChildDaemon {
        let mut command = Command::new(flipd_binary());
        command.arg("--config").arg(config).env("RUST_LOG", "info");
        command.envs(variables.iter().copied());
        ChildDaemon::run(command, config)
    }

    /// As [`ChildDaemon::start_with`] without RUST_LOG, so that the file's
    /// `log_filter` decides what the log shows.
    pub fn start_filtered_by_file(config: &Path) -> ChildDaemon {
        let mut command = Command::new(flipd_binary());
        command.arg("--config").arg(config).env_remove("RUST_LOG");
        ChildDaemon::run(command, config)
    }

    /// As [`ChildDaemon::start_with`], with the open-file limit (soft and hard,
    /// so that flipd cannot raise it) set to `open_files`.
    pub fn start_limited(config: &Path, open_files: u32) -> ChildDaemon {
        let mut command = with_open_file_limit(open_files, &flipd_binary());
        command.arg("--config").arg(config).env("RUST_LOG", "info");
        ChildDaemon::run(command, config)
    }

    fn run(mut command: Command, config: &Path) -> ChildDaemon {
        let mut child = command
            .env("NO_COLOR", "1")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start flipd: {e}"));
        let Some(stderr) = child.stderr.take() else {
            let _ = child.kill();
            panic!("no stderr pipe");
        };
        let mut daemon = ChildDaemon {
            child,
            addr: SocketAddr::from(([127, 0, 0, 1], 0)),
            config: config.to_path_buf(),
            owned: None,
            log: Arc::default(),
            log_gate: Arc::default(),
        };
        // Dropping `daemon` on a failure below kills the child.
        let gate = Arc::clone(&daemon.log_gate);
        daemon.addr = listen_address(stderr, Arc::clone(&daemon.log), gate);
        crate::client::name_daemon(daemon.addr, config);
        daemon
    }

    /// Stops reading flipd's standard error until the guard is dropped: once
    /// the pipe is full, every line flipd writes waits for a reader.
    pub fn stop_reading_the_log(&self) -> std::sync::MutexGuard<'_, ()> {
        self.log_gate.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Its TLS port, from its log line `the TLS port listens on ADDRESS`
    /// (written before the one that names `addr`).
    pub fn tls_addr(&self) -> Option<SocketAddr> {
        let lines = self.log_lines_with("the TLS port listens on ");
        let line = lines.first()?;
        address_in(&line.replace("the TLS port listens on ", "listening on "))
    }

    /// The log lines read so far that contain `needle`.
    pub fn log_lines_with(&self, needle: &str) -> Vec<String> {
        let log = self.log.lock().unwrap_or_else(PoisonError::into_inner);
        log.iter().filter(|l| l.contains(needle)).cloned().collect()
    }

    /// Waits at most `within` for the log to hold `count` lines that contain
    /// `needle`, and returns them.
    pub fn wait_for_log(&self, needle: &str, count: usize, within: Duration) -> Vec<String> {
        let deadline = Instant::now() + within;
        loop {
            let lines = self.log_lines_with(needle);
            if lines.len() >= count {
                return lines;
            }
            assert!(
                Instant::now() < deadline,
                "the log has {} of {count} lines with '{needle}' after {within:?}",
                lines.len()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Kills the process with SIGKILL, as a crash would, and waits for it.
    pub fn kill(&mut self) {
        self.child
            .kill()
            .unwrap_or_else(|e| panic!("cannot kill flipd: {e}"));
        let _ = self.child.wait();
    }

    /// Sends SIGTERM.
    pub fn terminate(&self) {
        self.signal("TERM");
    }

    /// Sends SIGHUP.
    pub fn hangup(&self) {
        self.signal("HUP");
    }

    /// Stops the process (SIGSTOP), as a debugger or a paused machine would,
    /// and waits until every one of its threads is stopped (the signal is
    /// only queued when `kill` returns: a thread may run on a moment).
    pub fn pause(&self) {
        self.signal("STOP");
        let tasks = PathBuf::from(format!("/proc/{}/task", self.child.id()));
        let deadline = Instant::now() + Duration::from_secs(30);
        while !all_stopped(&tasks) {
            assert!(Instant::now() < deadline, "flipd's threads did not stop");
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// Whether the process has exited (a node that stopped by itself).
    pub fn has_exited(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(Some(_)))
    }

    /// Lets a stopped process go on (SIGCONT).
    pub fn resume(&self) {
        self.signal("CONT");
    }

    fn signal(&self, name: &str) {
        let status = Command::new("kill")
            .args([&format!("-{name}"), &self.child.id().to_string()])
            .status()
            .unwrap_or_else(|e| panic!("cannot run kill: {e}"));
        assert!(status.success(), "kill -{name} failed: {status}");
    }

    /// Waits at most `within` for the process to exit; returns its exit code.
    pub fn wait_exit(&mut self, within: Duration) -> Option<i32> {
        let deadline = Instant::now() + within;
        loop {
            match self.child.try_wait() {
                Ok(Some(status)) => return status.code(),
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(20));
                }
                Ok(None) => panic!("flipd still running {within:?} after SIGTERM"),
                Err(e) => panic!("cannot wait for flipd: {e}"),
            }
        }
    }
}

/// The most lines of a daemon's log a failing test shows.
const LOG_SHOWN_ON_FAILURE: usize = 80;

impl Drop for ChildDaemon {
    fn drop(&mut self) {
        // A failing test shows the end of each of its daemons' logs: what
        // the daemon saw is most of the diagnosis.
        if std::thread::panicking() {
            let log = self.log.lock().unwrap_or_else(PoisonError::into_inner);
            let from = log.len().saturating_sub(LOG_SHOWN_ON_FAILURE);
            eprintln!(
                "--- the last {} lines of flipd {}'s log:",
                log.len() - from,
                self.addr
            );
            log[from..].iter().for_each(|line| eprintln!("{line}"));
        }
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
        if let Some(dir) = &self.owned {
            remove_temp_dir(dir);
        }
    }
}

/// Whether every thread under `/proc/<pid>/task` is stopped (state `T`).
fn all_stopped(tasks: &Path) -> bool {
    let Ok(entries) = std::fs::read_dir(tasks) else {
        return false;
    };
    entries.flatten().all(|task| {
        let stat = std::fs::read_to_string(task.path().join("stat")).unwrap_or_default();
        // The state follows the command's closing parenthesis.
        let state = stat.rsplit(')').next().unwrap_or_default().trim_start();
        state.starts_with('T') || state.starts_with('t')
    })
}

/// `program` run with its open-file limit, soft and hard (so that it cannot
/// raise it), at `open_files`; the caller adds its arguments.
pub fn with_open_file_limit(open_files: u32, program: &Path) -> Command {
    let mut command = Command::new("sh");
    command
        .arg("-c")
        .arg(format!("ulimit -n {open_files} && exec \"$0\" \"$@\""))
        .arg(program);
    command
}

/// Writes `<dir>/flipd.ron`: listen on port 0, the store at `<dir>/flipline.db`,
/// no cap on connections per address (the tests all come from 127.0.0.1),
/// then `extra` settings (RON fields, each followed by a comma).
pub fn write_config(dir: &Path, extra: &str) -> PathBuf {
    let store = dir.join("flipline.db");
    // On PostgreSQL (see `postgres`), a database of the directory's own.
    let url = crate::postgres::database_for(dir).unwrap_or_default();
    let text = format!(
        "(\n    listen: \"127.0.0.1:0\",\n    workers: 2,\n    shutdown_drain_ms: 500,\n    \
         max_connections_per_address: 100000,\n    store: (path: {:?}, url: {url:?}),\n    \
         {extra}\n)\n",
        store.display().to_string()
    );
    let path = dir.join("flipd.ron");
    std::fs::write(&path, text).unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
    path
}

/// Reads the daemon's log on a thread (which then keeps draining it into
/// `log`, so that the child never blocks on a full pipe) until the line that
/// names the address.
fn listen_address(
    stderr: impl Read + Send + 'static,
    log: Arc<Mutex<Vec<String>>>,
    gate: Arc<Mutex<()>>,
) -> SocketAddr {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut tx = Some(tx);
        for line in BufReader::new(stderr).lines() {
            drop(gate.lock().unwrap_or_else(PoisonError::into_inner));
            let Ok(line) = line else { break };
            if let Some(addr) = address_in(&line)
                && let Some(tx) = tx.take()
            {
                let _ = tx.send(addr);
            }
            log.lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(line);
        }
    });
    rx.recv_timeout(crate::client::HANG_GUARD)
        .unwrap_or_else(|e| panic!("hang guard: flipd logged no 'listening on' line: {e}"))
}

fn address_in(line: &str) -> Option<SocketAddr> {
    let rest = line.split("listening on ").nth(1)?;
    let addr: String = rest
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.' || *c == ':')
        .collect();
    addr.parse().ok()
}

/// The `flipd` binary beside this test executable, built first.
fn flipd_binary() -> PathBuf {
    workspace_binary("flipd", "flipd")
}

/// A binary of the workspace (`flip`, `flipd`) beside this test executable
/// (`target/<profile>/`), as the current code builds it. `cargo test
/// --workspace` builds both binaries itself (each package has an
/// integration test, which makes cargo build its binaries), with the
/// features of the workspace's test build; the first call in a test
/// process runs that same build (`cargo test --workspace --no-run`), which
/// then finds everything fresh, and builds what is missing when this crate's
/// tests run alone, never a second copy with other features. A build that
/// fails fails the test, saying why: a binary left from an earlier build is
/// never run in its place.
pub fn workspace_binary(package: &str, binary: &str) -> PathBuf {
    let profile_dir = built_profile_dir(&format!("{package}'s {binary}"));
    let path = profile_dir.join(format!("{binary}{}", std::env::consts::EXE_SUFFIX));
    assert!(
        path.exists(),
        "the workspace build made no {} (is {binary} a binary of {package}?)",
        path.display()
    );
    path
}

/// An example program of the workspace (an `[[example]]` target, such as
/// the tutorial's bot), built as [`workspace_binary`] builds the binaries:
/// `cargo test --no-run` builds the examples too.
pub fn workspace_example(example: &str) -> PathBuf {
    let profile_dir = built_profile_dir(&format!("the example {example}"));
    let name = format!("{example}{}", std::env::consts::EXE_SUFFIX);
    let path = profile_dir.join("examples").join(name);
    assert!(
        path.exists(),
        "the workspace build made no {}",
        path.display()
    );
    path
}

/// The profile's directory once the workspace's binaries and examples are
/// built (once a process); panics, saying why, naming `wanted`, if they
/// cannot be.
fn built_profile_dir(wanted: &str) -> PathBuf {
    static BUILT: std::sync::OnceLock<Result<PathBuf, String>> = std::sync::OnceLock::new();
    match BUILT.get_or_init(build_workspace_binaries) {
        Ok(dir) => dir.clone(),
        Err(why) => panic!("cannot build the workspace's binaries ({wanted}): {why}"),
    }
}

/// Builds every binary of the workspace for this test executable's profile
/// and target directory; the profile's directory, or what cargo said.
fn build_workspace_binaries() -> Result<PathBuf, String> {
    let exe = std::env::current_exe().map_err(|e| format!("current_exe: {e}"))?;
    // target/<profile>/deps/e2e-<hash>
    let Some(profile_dir) = exe.parent().and_then(|deps| deps.parent()) else {
        return Err(format!("unexpected test executable path {}", exe.display()));
    };
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let mut build = Command::new(&cargo);
    build.args(["test", "--quiet", "--workspace", "--no-run"]);
    if let Some(target_dir) = profile_dir.parent() {
        build.arg("--target-dir").arg(target_dir);
    }
    if profile_dir.file_name().is_some_and(|n| n == "release") {
        build.arg("--release");
    }
    let output = build
        .output()
        .map_err(|e| format!("cannot run {cargo}: {e}"))?;
    if !output.status.success() {
        return Err(String::from_utf8_lossy(&output.stderr).into_owned());
    }
    Ok(profile_dir.to_path_buf())
}

/// Runs the `flip` binary with `args`, no input, its output collected, at
/// most 30 s.
pub fn run_flip<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> std::process::Output {
    let child = Command::new(workspace_binary("flip", "flip"))
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run flip: {e}"));
    wait_bounded(child, Duration::from_secs(30))
}

/// Waits for a child at most `limit`, killing it past that, and returns its
/// output (so that no test can hang on a child process).
pub fn wait_bounded(mut child: std::process::Child, limit: Duration) -> std::process::Output {
    let deadline = Instant::now() + limit;
    while child.try_wait().ok().flatten().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child
        .wait_with_output()
        .unwrap_or_else(|e| panic!("wait: {e}"))
}
