//! Accounts: `LOGIN name password` registers a free name (its argon2 hash goes
//! to the store), later logins with that name need the password, and names
//! without a password (guests) play where the configuration allows and the name
//! is not registered.
//!
//! Hashing is slow by design (tens of milliseconds and 19 MiB per hash), so it
//! runs on a few threads of its own ([`PasswordWorker`] on a `SyncArbiter`),
//! never on an actor thread, and at most `hash_threads` hashes are in memory at
//! once. A wrong password is answered after a delay that doubles with each
//! failure for that name (capped); the session that waits holds only itself.
//! Passwords are never stored or logged: messages that carry one do not even
//! implement `Debug`.
//!
//! Every login reads the store (a guest's name too: it may be registered, and
//! must not be taken without its password), so each store request waits at
//! most the deadline the caller gives (see [`crate::store_deadline`]).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use actix::{Actor, Addr, Handler, Message, SyncContext};
use argon2::Argon2;
use argon2::password_hash::{PasswordHasher, PasswordVerifier, phc::PasswordHash};
use flipline::protocol::{Credential, ErrorCode, ProtocolError};

use crate::config::Passwords;
use crate::store::{Store, Write};
use crate::store_deadline::{StoreWait, not_answering, within};

/// One password thread of the pool.
pub struct PasswordWorker;

impl Actor for PasswordWorker {
    type Context = SyncContext<Self>;
}

/// Hash a new password; answers the PHC string, or `None` if hashing failed.
#[derive(Message)]
#[rtype(result = "Option<String>")]
pub struct HashPassword(pub String);

/// Check a password against a stored hash.
#[derive(Message)]
#[rtype(result = "bool")]
pub struct VerifyPassword {
    /// What the client sent.
    pub password: String,
    /// What the store holds.
    pub hash: String,
}

impl Handler<HashPassword> for PasswordWorker {
    type Result = Option<String>;

    fn handle(&mut self, msg: HashPassword, _: &mut SyncContext<Self>) -> Option<String> {
        hash_password(&msg.0)
    }
}

impl Handler<VerifyPassword> for PasswordWorker {
    type Result = bool;

    fn handle(&mut self, msg: VerifyPassword, _: &mut SyncContext<Self>) -> bool {
        password_matches(&msg.password, &msg.hash)
    }
}

/// An argon2id hash of `password` with a fresh random salt, in PHC form.
fn hash_password(password: &str) -> Option<String> {
    let hash = Argon2::default().hash_password(password.as_bytes()).ok()?;
    Some(hash.to_string())
}

/// Whether `password` is the one `hash` was made from. The hash carries its own
/// parameters, so old hashes keep working if the defaults change.
fn password_matches(password: &str, hash: &str) -> bool {
    PasswordHash::new(hash).is_ok_and(|hash| {
        Argon2::default()
            .verify_password(password.as_bytes(), &hash)
            .is_ok()
    })
}

/// Wrong passwords for one name, recently.
struct Failures {
    count: u32,
    /// No password for the name is checked before this.
    not_before: Instant,
    last: Instant,
}

/// Failures older than this are forgotten.
const FORGET_AFTER: Duration = Duration::from_secs(15 * 60);

/// Past this many names with failures, the old ones are pruned.
const MAX_TRACKED: usize = 10_000;

/// What a `LOGIN` may go on to, once its name and password are checked. (No
/// `Debug`: it may carry a password.)
pub enum Checked {
    /// A guest, on a name nobody registered in any case.
    Guest(String),
    /// A registered name whose password was right, spelled as registered.
    Member(String),
    /// A free name with a password: registered ([`Accounts::register`])
    /// once the lobby has given the name to the connection.
    Unregistered {
        /// The name.
        name: String,
        /// Its password, to hash.
        password: String,
    },
}

/// Login checks, shared by every session.
pub struct Accounts {
    store: Store,
    hasher: Addr<PasswordWorker>,
    guests: bool,
    delays: Passwords,
    failures: Mutex<HashMap<String, Failures>>,
}

fn unauthorized(message: impl Into<String>) -> ProtocolError {
    ProtocolError::new(ErrorCode::Unauthorized, message)
}

fn unavailable() -> ProtocolError {
    ProtocolError::new(
        ErrorCode::Unavailable,
        "accounts are not available, try again",
    )
}

/// The reply when the store failed or did not answer in time.
fn store_trouble(wait: StoreWait) -> ProtocolError {
    match wait {
        StoreWait::NotAnswering => {
            tracing::warn!("LOGIN: the store did not answer in time");
            not_answering()
        }
        StoreWait::Failed(_) => unavailable(),
    }
}

impl Accounts {
    /// Checks with `store` and hashes on `hasher`.
    pub fn new(
        store: Store,
        hasher: Addr<PasswordWorker>,
        guests: bool,
        delays: Passwords,
    ) -> Accounts {
        Accounts {
            store,
            hasher,
            guests,
            delays,
            failures: Mutex::new(HashMap::new()),
        }
    }

    /// Whether `name` may log in with `password` (registering the name if it is
    /// free and a password is given). Errors are 401, or 503 when the store or
    /// the hash threads fail, or when the store does not answer within
    /// `deadline` (each request to it waits that long at most).
    pub async fn check(
        self: Arc<Self>,
        name: String,
        credential: Option<Credential>,
        deadline: Duration,
    ) -> Result<Checked, ProtocolError> {
        let password = match credential {
            Some(Credential::Password(password)) => Some(password),
            Some(Credential::Secret(_)) | None => None,
        };
        let stored = within(deadline, self.store.registration(name.clone()))
            .await
            .map_err(store_trouble)?;
        match (stored, password) {
            (None, None) if self.guests => Ok(Checked::Guest(name)),
            (None, None) => Err(unauthorized(
                "guests may not play here: LOGIN name password registers a name",
            )),
            (Some(known), None) => Err(unauthorized(format!(
                "'{0}' is registered: LOGIN {0} <password>",
                known.name
            ))),
            (Some(known), Some(password)) => {
                let name = known.name.clone();
                self.verify(known.name, password, known.hash).await?;
                Ok(Checked::Member(name))
            }
            (None, Some(password)) => Ok(Checked::Unregistered { name, password }),
        }
    }

    /// Registers `name`, which the lobby has given to the registering
    /// connection (so that nobody, a guest least of all, holds it meanwhile).
    /// A registration whose commit is not answered in time may still be
    /// committed later: logging in again with the same password works either
    /// way.
    pub async fn register(
        self: Arc<Self>,
        name: String,
        password: String,
        deadline: Duration,
    ) -> Result<(), ProtocolError> {
        let hash = self
            .hasher
            .send(HashPassword(password.clone()))
            .await
            .ok()
            .flatten()
            .ok_or_else(unavailable)?;
        let write = Write::Register {
            name: name.clone(),
            hash,
        };
        let inserted = within(deadline, self.store.commit(write))
            .await
            .map_err(store_trouble)?;
        if inserted == 1 {
            tracing::info!(%name, "registered a name");
            return Ok(());
        }
        // Another connection registered the name meanwhile: its password counts.
        let stored = within(deadline, self.store.registration(name.clone()))
            .await
            .map_err(store_trouble)?
            .ok_or_else(unavailable)?;
        self.verify(stored.name, password, stored.hash).await
    }

    async fn verify(
        self: Arc<Self>,
        name: String,
        password: String,
        hash: String,
    ) -> Result<(), ProtocolError> {
        let wait = self.wait_before_check(&name);
        if !wait.is_zero() {
            tokio::time::sleep(wait).await;
        }
        let right = self
            .hasher
            .send(VerifyPassword { password, hash })
            .await
            .map_err(|_| unavailable())?;
        if right {
            self.lock_failures().remove(&name);
            return Ok(());
        }
        let delay = self.record_failure(&name);
        tracing::info!(%name, delay_ms = delay.as_millis(), "wrong password");
        tokio::time::sleep(delay).await;
        Err(unauthorized(format!("wrong password for '{name}'")))
    }

    fn lock_failures(&self) -> std::sync::MutexGuard<'_, HashMap<String, Failures>> {
        self.failures.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// How long a check for `name` must wait for the delay of its last failure
    /// to pass: attempts on several connections at once do not skip it.
    fn wait_before_check(&self, name: &str) -> Duration {
        let failures = self.lock_failures();
        failures.get(name).map_or(Duration::ZERO, |f| {
            f.not_before.saturating_duration_since(Instant::now())
        })
    }

    /// Counts a failure for `name`; returns the delay before its 401.
    fn record_failure(&self, name: &str) -> Duration {
        let now = Instant::now();
        let mut failures = self.lock_failures();
        if failures.len() >= MAX_TRACKED {
            failures.retain(|_, f| now.duration_since(f.last) < FORGET_AFTER);
        }
        let entry = failures.entry(name.to_string()).or_insert(Failures {
            count: 0,
            not_before: now,
            last: now,
        });
        if now.duration_since(entry.last) >= FORGET_AFTER {
            entry.count = 0;
        }
        entry.count = entry.count.saturating_add(1);
        let delay = failure_delay(&self.delays, entry.count);
        entry.last = now;
        entry.not_before = now + delay;
        delay
    }
}

/// The delay after the `count`-th failure in a row: the base, doubled for each
/// failure before, at most the maximum.
fn failure_delay(delays: &Passwords, count: u32) -> Duration {
    let doublings = count.saturating_sub(1).min(32);
    let ms = delays
        .failure_delay_ms
        .saturating_mul(1u64 << doublings)
        .min(delays.failure_delay_max_ms);
    Duration::from_millis(ms)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failure_delays_double_up_to_the_cap() {
        let delays = Passwords {
            hash_threads: 1,
            failure_delay_ms: 250,
            failure_delay_max_ms: 1500,
        };
        let ms: Vec<u128> = (1..=6)
            .map(|n| failure_delay(&delays, n).as_millis())
            .collect();
        assert_eq!(ms, [250, 500, 1000, 1500, 1500, 1500]);
        assert_eq!(failure_delay(&delays, u32::MAX).as_millis(), 1500);
    }

    #[test]
    fn a_hash_verifies_its_password_only() {
        let hash = hash_password("tiger").unwrap();
        assert!(hash.starts_with("$argon2id$"), "{hash}");
        assert!(!hash.contains("tiger"));
        assert_ne!(hash_password("tiger"), Some(hash.clone()), "salted");
        assert!(password_matches("tiger", &hash));
        assert!(!password_matches("Tiger", &hash));
        assert!(!password_matches("tiger", "not a hash"));
    }
}
