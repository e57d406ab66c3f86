//! The connection to the server: a writer shared between threads and a reader
//! thread that turns server lines into text for the person and into state.
//! A line is registered with the view and written under the writer's lock,
//! so the view's unanswered commands are always in the order they were sent.

use std::io::{BufRead, BufReader, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::paths::data_file;
use crate::play::credentials::SecretChange;
use crate::play::review::Review;
use crate::play::secret::GuestSecret;
use crate::play::secret_file::{self, SecretFile};
use crate::play::servers::Servers;
use crate::play::view::{Style, View};
use crate::play::wire::{Incoming, Outgoing};

/// Where text for the person goes.
pub trait Sink: Send {
    /// Shows lines (no trailing newline), or queues them to be shown, in
    /// order; it must not wait for anything the reader thread does.
    fn show(&mut self, lines: Vec<String>);
}

/// State shared by the input side and the reader thread.
pub struct Link {
    writer: Mutex<Option<Outgoing>>,
    view: Mutex<View>,
    /// The finished game `load` opened for review, stepped through locally
    /// (commands.rs): none of the server's lines touch it, so it is not the
    /// view's.
    review: Mutex<Option<Review>>,
    /// Signalled whenever a server line has been taken in.
    changed: Condvar,
    /// Set when the connection is gone for good.
    pub lost: AtomicBool,
    /// Set before a deliberate close, so that the reader does not report a loss.
    pub closing: AtomicBool,
    /// The server's greeting (`HELLO flipline 1`), escaped for showing.
    pub greeting: String,
    /// Called with the view after every server line (local mode saves its game).
    pub on_update: Option<fn(&View)>,
    /// Where the guests' secrets for this server are kept across restarts;
    /// `None` keeps them in memory only.
    secret_file: Option<SecretFile>,
    /// The server's addresses, to connect again (several: tried in turn).
    servers: Servers,
    /// Set while there is no connection because the server closed one that
    /// had not logged in: the next line sent connects again.
    dormant: AtomicBool,
    /// The reader of a connection made again, for the reader thread.
    fresh: Mutex<Option<BufReader<Incoming>>>,
    /// Signalled when `fresh` is filled, or on a deliberate close.
    woken: Condvar,
    /// Whether a lost connection is made again (the reader thread's
    /// policy): a command that cannot be sent meanwhile is not the end.
    reconnects: AtomicBool,
}

/// How long a reconnect waits for the answer to its `LOGIN`.
const LOGIN_WAIT: Duration = Duration::from_secs(10);

impl Link {
    /// Connects to `server` and checks the greeting's protocol version. With
    /// a `secrets_key` (what names the daemon in the data directory's secret
    /// file), guests' secrets are also kept there, so that a client started
    /// again resumes its guest.
    pub fn connect(
        servers: Servers,
        style: Style,
        on_update: Option<fn(&View)>,
        secrets_key: Option<&str>,
    ) -> Result<(Arc<Link>, BufReader<Incoming>), String> {
        let (stream, reader, greeting) = servers.open()?;
        let secret_file = secrets_key
            .and_then(|key| Some((key, data_file(secret_file::FILE_NAME)?)))
            .and_then(|(key, path)| SecretFile::new(path, key));
        let link = Arc::new(Link {
            writer: Mutex::new(Some(stream)),
            view: Mutex::new(View::new(style)),
            review: Mutex::new(None),
            changed: Condvar::new(),
            lost: AtomicBool::new(false),
            closing: AtomicBool::new(false),
            on_update,
            greeting,
            secret_file,
            servers,
            dormant: AtomicBool::new(false),
            fresh: Mutex::new(None),
            woken: Condvar::new(),
            reconnects: AtomicBool::new(false),
        });
        Ok((link, reader))
    }

    /// The server's addresses, and which one answers.
    pub fn servers(&self) -> &Servers {
        &self.servers
    }

    /// The review open, if any, locked.
    pub fn review(&self) -> MutexGuard<'_, Option<Review>> {
        self.review.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The view, locked. A panicked holder cannot have left it half-written in a
    /// way that matters for display, so a poisoned lock is taken over.
    pub fn view(&self) -> MutexGuard<'_, View> {
        self.view.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Sends one command line; a guest's plain `LOGIN name` goes with the
    /// secret held for the name, if any (see [`View::prepare_send`]).
    pub fn send(&self, line: &str) -> Result<(), String> {
        let mut writer = self.writer.lock().unwrap_or_else(|e| e.into_inner());
        if writer.is_none() && self.dormant.load(Ordering::Acquire) {
            *writer = Some(self.wake(line)?);
        }
        let stream = writer
            .as_mut()
            .ok_or("not connected: the connection is being made again")?;
        let line = self
            .view()
            .prepare_send(line, |name| self.kept_secret(name));
        write_line(stream, &line)
    }

    /// Connects again for `line` while dormant (not for a `QUIT`, which has
    /// nothing to say to a server it is not connected to), handing the new
    /// connection's reader to the reader thread.
    fn wake(&self, line: &str) -> Result<Outgoing, String> {
        if line.trim().eq_ignore_ascii_case("quit") {
            return Err("not connected".to_string());
        }
        let (stream, reader, _) = self.servers.open()?;
        self.view().forget_pending();
        self.dormant.store(false, Ordering::Release);
        *self.fresh.lock().unwrap_or_else(|e| e.into_inner()) = Some(reader);
        self.woken.notify_all();
        Ok(stream)
    }

    /// After the server closed a connection that had not logged in: drops
    /// the connection, so that the next line sent connects again. Before
    /// anything is shown of it: a line typed on seeing that must not go to
    /// the closed connection.
    pub fn doze(&self) {
        let mut writer = self.writer.lock().unwrap_or_else(|e| e.into_inner());
        *writer = None;
        self.dormant.store(true, Ordering::Release);
    }

    /// Waits, after [`Link::doze`], until a line sent connects again; that
    /// connection's reader, or `None` on a deliberate close.
    pub fn sleep_until_used(&self) -> Option<BufReader<Incoming>> {
        let mut fresh = self.fresh.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if let Some(reader) = fresh.take() {
                return Some(reader);
            }
            if self.closing.load(Ordering::Acquire) {
                return None;
            }
            fresh = self.woken.wait(fresh).unwrap_or_else(|e| e.into_inner());
        }
    }

    /// Whether the server closed the connection for want of a `LOGIN`, and
    /// nobody is logged in (the flag is taken: it is about this connection).
    pub fn closed_before_login(&self) -> bool {
        let mut view = self.view();
        std::mem::take(&mut view.closed_for_login) && view.name.is_none()
    }

    /// Sends the lines the view queued, as they are.
    fn send_queued(&self) {
        loop {
            let mut writer = self.writer.lock().unwrap_or_else(|e| e.into_inner());
            let mut view = self.view();
            let Some(line) = view.to_send.pop_front() else {
                return;
            };
            let Some(stream) = writer.as_mut() else {
                view.to_send.clear();
                return;
            };
            view.sent(&line);
            drop(view);
            if write_line(stream, &line).is_err() {
                return;
            }
        }
    }

    /// The secret the secret file keeps for `name` on this server.
    fn kept_secret(&self, name: &str) -> Option<GuestSecret> {
        self.secret_file.as_ref()?.get(name)
    }

    /// Writes what became of the guests' secrets to the secret file.
    fn keep_secrets(&self, changes: Vec<SecretChange>) {
        let Some(file) = &self.secret_file else {
            return;
        };
        for change in changes {
            match change {
                SecretChange::Keep(name, secret) => file.keep(&name, &secret),
                SecretChange::Forget(name) => file.forget(&name),
            }
        }
    }

    /// Waits until `done` holds for the view, the connection is lost, or `limit`
    /// passes; returns whether `done` held.
    pub fn wait_until(&self, limit: Duration, done: impl Fn(&View) -> bool) -> bool {
        let deadline = Instant::now() + limit;
        let mut view = self.view();
        loop {
            if done(&view) {
                return true;
            }
            let now = Instant::now();
            if now >= deadline || self.lost.load(Ordering::Acquire) {
                return false;
            }
            view = match self.changed.wait_timeout(view, deadline - now) {
                Ok((guard, _)) => guard,
                Err(e) => e.into_inner().0,
            };
        }
    }

    /// Reads server lines until the connection ends, showing each.
    pub fn read_all(&self, reader: BufReader<Incoming>, sink: &mut dyn Sink) {
        for line in reader.lines() {
            let Ok(line) = line else { break };
            self.take_line(&line, sink);
        }
    }

    /// One server line into the view, what it changed of the secrets written
    /// to the secret file; then what it queued is sent and what it shows is
    /// shown.
    fn take_line(&self, line: &str, sink: &mut dyn Sink) {
        {
            let mut view = self.view();
            let shown = view.on_line(line);
            if let Some(hook) = self.on_update {
                hook(&view);
            }
            // Under the lock, so that whoever sees a login answered (a
            // script about to exit) finds its secret kept, and whoever sees
            // a command answered and shows something after finds the answer
            // shown first (a sink only queues, it does not wait).
            self.keep_secrets(std::mem::take(&mut view.credentials.secret_changes));
            if !shown.is_empty() {
                sink.show(shown);
            }
        }
        self.send_queued();
        self.changed.notify_all();
    }

    /// Logs in as `name` on a connection nobody reads yet (a reconnect's):
    /// sends `LOGIN` (with the secret held for the name) and reads lines
    /// until it is answered, a refused kept secret's plain `LOGIN` too.
    /// Whether it logged in; an error if the connection failed or
    /// [`LOGIN_WAIT`] passed first.
    pub fn log_in(
        &self,
        name: &str,
        reader: &mut BufReader<Incoming>,
        sink: &mut dyn Sink,
    ) -> Result<bool, String> {
        self.view().credentials.login_answer = None;
        self.send(&format!("LOGIN {name}"))?;
        let _ = reader.get_ref().set_read_timeout(Some(LOGIN_WAIT));
        let answer = self.read_login_answer(reader, sink);
        let _ = reader.get_ref().set_read_timeout(None);
        answer
    }

    fn read_login_answer(
        &self,
        reader: &mut BufReader<Incoming>,
        sink: &mut dyn Sink,
    ) -> Result<bool, String> {
        let mut line = String::new();
        loop {
            if let Some(answer) = self.view().credentials.login_answer {
                return Ok(answer);
            }
            line.clear();
            match reader.read_line(&mut line) {
                Ok(0) => return Err("the connection closed".to_string()),
                Ok(_) => self.take_line(strip_line_end(&line), sink),
                Err(e) => return Err(format!("no answer to LOGIN: {e}")),
            }
        }
    }

    /// Says whether a lost connection is made again.
    pub fn set_reconnects(&self, reconnects: bool) {
        self.reconnects.store(reconnects, Ordering::Release);
    }

    /// Whether a lost connection is made again, so that a command that
    /// cannot be sent is only not sent.
    pub fn reconnects(&self) -> bool {
        self.reconnects.load(Ordering::Acquire)
    }

    /// Drops a lost connection before trying to make it again: what is
    /// typed meanwhile is refused as not sent, rather than written into a
    /// dead socket, and nothing sent is waited for.
    pub fn drop_connection(&self) {
        *self.writer.lock().unwrap_or_else(|e| e.into_inner()) = None;
        self.view().forget_pending();
        self.changed.notify_all();
    }

    /// Replaces the connection after a reconnect.
    pub fn replace(&self, stream: Outgoing) {
        *self.writer.lock().unwrap_or_else(|e| e.into_inner()) = Some(stream);
        self.view().forget_pending();
    }

    /// Marks the connection lost and wakes anyone waiting.
    pub fn mark_lost(&self) {
        self.lost.store(true, Ordering::Release);
        self.changed.notify_all();
    }
}

fn write_line(stream: &mut Outgoing, line: &str) -> Result<(), String> {
    stream
        .write_all(format!("{line}\n").as_bytes())
        .map_err(|e| format!("cannot send: {e}"))
}

/// A line without its ending (LF or CRLF), as `BufRead::lines` gives it.
fn strip_line_end(line: &str) -> &str {
    let line = line.strip_suffix('\n').unwrap_or(line);
    line.strip_suffix('\r').unwrap_or(line)
}

/// The addresses `--server` names, separated by commas (a cluster's nodes,
/// tried in turn), each as [`server_address`] spells it.
pub fn server_addresses(given: &str) -> Result<String, String> {
    let each: Result<Vec<String>, String> = given.split(',').map(server_address).collect();
    Ok(each?.join(","))
}

/// The address `--server` names, with the daemon's default port (7341) when
/// it gives none: `host`, `192.0.2.7`, `[::1]` and a bare `::1` all mean
/// that port. For clap, so that every message and the guest-secret file
/// name one spelling of the address.
pub fn server_address(given: &str) -> Result<String, String> {
    if let Some(address) = given.strip_prefix(crate::play::tls::SCHEME) {
        let port = crate::play::tls::DEFAULT_PORT.to_string();
        let address = with_port(address, &port)?;
        return Ok(format!("{}{address}", crate::play::tls::SCHEME));
    }
    if let Some((scheme, _)) = given.split_once("://") {
        return Err(format!(
            "{scheme}:// is not a way to reach flipd: HOST[:PORT], or tls://HOST[:PORT]"
        ));
    }
    let default = flipd::Config::default_server();
    with_port(given, default.rsplit(':').next().unwrap_or("7341"))
}

/// `given` with `port` when it names none.
fn with_port(given: &str, port: &str) -> Result<String, String> {
    if given.trim().is_empty() {
        return Err("an address is needed, such as 127.0.0.1:7341".to_string());
    }
    let bare_ipv6 = given.parse::<std::net::Ipv6Addr>().is_ok();
    let has_port = match given.strip_prefix('[') {
        Some(bracketed) => !bracketed.ends_with(']'),
        None => given.contains(':') && !bare_ipv6,
    };
    Ok(match (has_port, bare_ipv6) {
        (true, _) => given.to_string(),
        (false, true) => format!("[{given}]:{port}"),
        (false, false) => format!("{given}:{port}"),
    })
}

#[cfg(test)]
mod tests {
    use super::server_address;

    #[test]
    fn an_address_without_a_port_gets_the_daemons() {
        let read = |s: &str| server_address(s).unwrap_or_else(|e| e);
        assert_eq!(read("127.0.0.1"), "127.0.0.1:7341");
        assert_eq!(read("play.example.org"), "play.example.org:7341");
        assert_eq!(read("::1"), "[::1]:7341");
        assert_eq!(read("[::1]"), "[::1]:7341");
        assert_eq!(read("[::1]:9000"), "[::1]:9000");
        assert_eq!(read("10.0.0.2:9000"), "10.0.0.2:9000");
        assert!(server_address(" ").is_err());
        assert_eq!(
            super::server_addresses("a,10.0.0.2:9000,[::1]").unwrap_or_default(),
            "a:7341,10.0.0.2:9000,[::1]:7341"
        );
        assert!(super::server_addresses("a,,b").is_err());
        assert_eq!(
            read("tls://play.example.org"),
            "tls://play.example.org:7342"
        );
        assert_eq!(read("tls://[::1]"), "tls://[::1]:7342");
        assert_eq!(read("tls://10.0.0.2:9000"), "tls://10.0.0.2:9000");
        assert!(server_address("tls://").is_err());
        assert!(server_address("https://example.org").is_err());
    }

    proptest::proptest! {
        #[test]
        fn a_given_port_is_kept_and_every_address_gets_one(host in "[a-z0-9.]{1,20}", port: u16) {
            let with = format!("{host}:{port}");
            proptest::prop_assert_eq!(server_address(&with), Ok(with.clone()));
            let without = server_address(&host);
            proptest::prop_assert_eq!(without, Ok(format!("{host}:7341")));
        }
    }
}
