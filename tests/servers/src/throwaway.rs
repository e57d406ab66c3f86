//! A throwaway server for this test process, on loopback, that stops by
//! itself when the process ends, however it ends.
//!
//! `serve.sh` starts it with the script of `tests/tools/` (which makes the
//! certificate authority, the `flipd` role and its password the tests rely
//! on), prints where it is, and then reads its stdin until the end: this
//! process holds the only writing end of that pipe for as long as it lives
//! (never written to, and closed on exec, so no child of the tests inherits
//! it). When the process exits, or is killed, the kernel closes it, and
//! `serve.sh` stops the server and removes its directory. It runs in a
//! process group of its own, so that a ^C to the tests does not end it
//! before it has done so.

use std::io::{BufRead, BufReader, Read};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

/// How long a server may take to start before the tests give up on it: a
/// guard against a hang, well above the seconds `initdb` takes on a loaded
/// machine (`pg_ctl` itself waits up to a minute for the server).
const START_WITHIN: Duration = Duration::from_secs(180);

/// The writing ends of the started servers' pipes, held until the process
/// ends (statics are never dropped).
static HELD: Mutex<Vec<ChildStdin>> = Mutex::new(Vec::new());

/// A started server.
pub struct Started {
    /// What the script printed for the tests' variable: its URL.
    pub url: String,
    /// Its directory (PostgreSQL's `ca.pem` is there).
    pub dir: PathBuf,
}

/// Starts `kind` (`postgres` or `nats`, as `serve.sh` takes it) and waits
/// until it is ready, or says why not.
pub fn start(kind: &str) -> Result<Started, String> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("serve.sh");
    let mut child = Command::new("bash")
        .arg(&script)
        .arg(kind)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .map_err(|e| format!("bash {}: {e}", script.display()))?;
    let (Some(stdin), Some(stdout), Some(mut stderr)) =
        (child.stdin.take(), child.stdout.take(), child.stderr.take())
    else {
        return Err(format!("{}: no pipes to it", script.display()));
    };
    // Read on a thread of its own, so that the wait has a deadline.
    let (told, heard) = mpsc::channel();
    std::thread::spawn(move || {
        let mut lines = BufReader::new(stdout).lines();
        let said = match (lines.next(), lines.next()) {
            (Some(Ok(url)), Some(Ok(dir))) => Ok(Started {
                url,
                dir: PathBuf::from(dir),
            }),
            _ => {
                // It has stopped what it started and exits.
                let mut why = String::new();
                let _ = stderr.read_to_string(&mut why);
                let _ = child.wait();
                Err(why.trim().to_string())
            }
        };
        let _ = told.send(said);
    });
    match heard.recv_timeout(START_WITHIN) {
        Ok(Ok(started)) => {
            HELD.lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(stdin);
            Ok(started)
        }
        Ok(Err(why)) => Err(format!("serve.sh {kind} could not start it: {why}")),
        // `stdin` is dropped here: once it has started the server, it
        // stops it again.
        Err(_) => Err(format!(
            "serve.sh {kind} did not start it within {START_WITHIN:?}"
        )),
    }
}
