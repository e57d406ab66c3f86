//! Accounts: `LOGIN name password` registers a free name (its argon2 hash goes
//! to the store), later logins with that name need the password, and names
//! without a password (guests) play where the configuration allows and the name
//! is not registered.
//!
//! Hashing is slow by design (tens of milliseconds and 19 MiB per hash), so it
//! runs on the password threads ([`HashPool`]), never on an actor thread: at
//! most `hash_threads` hashes are in memory at once, at most `hash_queue`
//! checks wait, and logins from addresses with no failure on record go first,
//! registrations last, so that neither a flood of registrations nor one of
//! guesses delays an owner's login.
//!
//! Before a password is hashed against a registered name, [`Guesses`] decides
//! whether it may be (for the name from this address, for the address, for
//! the name: see `rules::guesses`); a guess over a budget is answered `ERR
//! 429` at once, with how long to wait, and never hashed. A wrong password
//! is answered after the back-off of the name from that address; only the
//! connection that tried waits, and a login from an address that has not
//! failed waits for nobody's failures. [`Registrations`] holds each address
//! to `registrations_per_hour` new names. Passwords are never stored or
//! logged: what carries one (the jobs of the password threads) does not even
//! implement `Debug`.
//!
//! Which names are registered is known without the store: [`RegisteredNames`]
//! is loaded with them at start and told of each registration once the store
//! has answered it, so a `LOGIN` without a password (a guest's, or the 401 of
//! a registered name) never waits for the disk. Only what needs the stored
//! hash (a password checked against a registered name) and the registration's
//! commit go to the store, each waiting at most the deadline the caller gives
//! (see [`crate::store_deadline`]). The store's answer to a registration is
//! awaited by a task of its own, not by the connection, so the set learns it
//! even when the connection has given up or gone: until then the name is in
//! flight, neither free nor registered, and a `LOGIN` of it is `ERR 503`.

use std::future::Future;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use argon2::Argon2;
use argon2::password_hash::{PasswordHasher, PasswordVerifier, phc::PasswordHash};
use flipline::protocol::{Credential, ErrorCode, ProtocolError, Reason};
use tokio::sync::oneshot;

use crate::config::Passwords;
use crate::hash_pool::{HashError, HashPool, Lane};
use crate::rules::guesses::{Guess, GuessLimits, Guesses, Refusal};
use crate::rules::peer::PeerKey;
use crate::rules::registered::{RegisteredNames, Standing};
use crate::rules::registrations::Registrations;
use crate::store::{Store, StoreError, Write};
use crate::store_deadline::{StoreWait, not_answering, within};
use crate::waits;

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

/// What a `LOGIN` may go on to, once its name and password are checked. (No
/// `Debug`: it may carry a password.)
pub enum Checked {
    /// A guest, on a name nobody registered in any case.
    Guest(String),
    /// A registered name whose password was right, spelled as registered,
    /// with what `WHO` shows of it.
    Member(String, crate::rules::lobby::Marks),
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
    pool: HashPool,
    guests: bool,
    limits: GuessLimits,
    registrations_per_hour: u32,
    guesses: Mutex<Guesses>,
    registrations: Mutex<Registrations>,
    names: Mutex<RegisteredNames>,
    /// Whether other daemons register names in the same store (the nodes
    /// of a cluster): then a name this one does not know registered is
    /// looked up in the store before a guest takes it.
    shared_store: bool,
}

/// What [`Standing`] says of a name, owned, to act on after the lock.
enum Known {
    Free,
    Registered(String),
    Registering,
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

/// The reply to a `LOGIN` of a name whose registration the store has not
/// answered yet: it may be registered, or not.
fn being_registered(name: &str) -> ProtocolError {
    ProtocolError::new(
        ErrorCode::Unavailable,
        format!("'{name}' is being registered, try again"),
    )
}

/// The reply to a guest's `LOGIN` of a name registered or being registered.
fn not_for_guests(name: &str, known: Known) -> ProtocolError {
    match known {
        Known::Registered(spelled) => {
            let message = format!("'{spelled}' is registered: LOGIN {spelled} <password>");
            unauthorized(Reason::PasswordNeeded.append_to(&message))
        }
        Known::Registering | Known::Free => being_registered(name),
    }
}

/// The reply when the password threads did not do a job.
fn hash_trouble(error: HashError) -> ProtocolError {
    match error {
        HashError::Busy(wait) => {
            let secs = waits::whole_seconds(wait);
            ProtocolError::new(
                ErrorCode::Unavailable,
                format!("too busy, try again in {secs} s"),
            )
        }
        HashError::Stopped => unavailable(),
    }
}

/// The `ERR 429` of a guess refused unhashed.
fn refused(name: &str, refusal: Refusal) -> ProtocolError {
    let wait = waits::seconds(refusal.wait());
    let message = match refusal {
        Refusal::ForName(_) => format!("too many wrong passwords for '{name}': wait {wait}"),
        Refusal::FromAddress(_) => {
            format!("too many wrong passwords from your address: wait {wait}")
        }
    };
    ProtocolError::new(ErrorCode::TooMany, message)
}

impl Accounts {
    /// Checks with `store`, whose registered names are `names`, and hashes
    /// on `pool`, under the `passwords` limits.
    pub fn new(
        store: Store,
        names: RegisteredNames,
        pool: HashPool,
        guests: bool,
        passwords: &Passwords,
    ) -> Accounts {
        Accounts {
            store,
            pool,
            guests,
            limits: GuessLimits {
                delay: Duration::from_millis(passwords.failure_delay_ms),
                delay_max: Duration::from_millis(passwords.failure_delay_max_ms),
                per_address: passwords.failures_per_address,
                per_name: passwords.failures_per_name,
            },
            registrations_per_hour: passwords.registrations_per_hour,
            guesses: Mutex::new(Guesses::default()),
            registrations: Mutex::new(Registrations::default()),
            names: Mutex::new(names),
            shared_store: false,
        }
    }

    /// As [`Accounts::new`], for a store other daemons register names in
    /// too (a cluster's).
    pub fn shared(mut self) -> Accounts {
        self.shared_store = true;
        self
    }

    /// A guest's name, once the store (if others write it) says that no
    /// other daemon registered it since this one started.
    async fn guest(&self, name: String, deadline: Duration) -> Result<Checked, ProtocolError> {
        if !self.shared_store {
            return Ok(Checked::Guest(name));
        }
        let stored = within(deadline, self.store.registration(name.clone()))
            .await
            .map_err(store_trouble)?;
        match stored {
            None => Ok(Checked::Guest(name)),
            Some(registered) => {
                self.lock_names().insert(&registered.name);
                Err(not_for_guests(&name, Known::Registered(registered.name)))
            }
        }
    }

    /// Whether `name` may log in from `peer` with `password` (registering
    /// the name if it is free and a password is given). Errors are 401, 429
    /// when a guess or a registration is over its budget, or 503 when the
    /// store or the hash threads fail or are busy, when the store does not
    /// answer within `deadline` (each request to it waits that long at most),
    /// or while a registration of the name is in flight. Only a password
    /// for a registered name reads the store.
    pub async fn check(
        self: Arc<Self>,
        name: String,
        credential: Option<Credential>,
        peer: PeerKey,
        deadline: Duration,
    ) -> Result<Checked, ProtocolError> {
        let password = match credential {
            Some(Credential::Password(password)) => Some(password),
            Some(Credential::Secret(_)) | None => None,
        };
        let password = match (self.known(&name), password) {
            (Known::Free, None) if self.guests => return self.guest(name, deadline).await,
            (Known::Free, None) => {
                return Err(unauthorized(
                    "guests may not play here: LOGIN name password registers a name",
                ));
            }
            (known @ (Known::Registering | Known::Registered(_)), None) => {
                return Err(not_for_guests(&name, known));
            }
            (Known::Registering, Some(_)) => return Err(being_registered(&name)),
            (Known::Free, Some(password)) => {
                return Ok(Checked::Unregistered { name, password });
            }
            (Known::Registered(_), Some(password)) => password,
        };
        let stored = within(deadline, self.store.registration(name.clone()))
            .await
            .map_err(store_trouble)?;
        match stored {
            Some(known) => {
                let name = known.name.clone();
                let marks = crate::rules::lobby::Marks {
                    rating: known.othello_rating.map(|r| {
                        let rounded = crate::store::rounded(r);
                        i16::try_from(rounded).unwrap_or(if rounded < 0 {
                            i16::MIN
                        } else {
                            i16::MAX
                        })
                    }),
                    bot: known.bot,
                };
                self.verify(known.name, password, known.hash, peer).await?;
                Ok(Checked::Member(name, marks))
            }
            None => {
                // Registered names are never removed: the file changed under us.
                tracing::error!(%name, "a registered name is not in the store");
                Err(unavailable())
            }
        }
    }

    /// Whether `name`, just given to a guest by the lobby, is still free:
    /// checked again once the lobby holds it, because a registration begun
    /// after [`Accounts::check`] let the guest through may have given the
    /// name back to the lobby since (a registration given up on at its
    /// deadline); the lobby holding it now, none can begin.
    pub fn still_free(&self, name: &str) -> Result<(), ProtocolError> {
        match self.known(name) {
            Known::Free => Ok(()),
            known => Err(not_for_guests(name, known)),
        }
    }

    /// What the registered names say of `name`.
    fn known(&self, name: &str) -> Known {
        match self.lock_names().standing(name) {
            Standing::Free => Known::Free,
            Standing::Registered(spelled) => Known::Registered(spelled.to_string()),
            Standing::Registering => Known::Registering,
        }
    }

    /// Registers `name` from `peer`, within the address's allowance, once
    /// the lobby has given the name to the registering connection (so that
    /// nobody, a guest least of all, holds it meanwhile). A registration
    /// whose commit is not answered in time may still be committed later:
    /// logging in again with the same password works either way.
    pub async fn register(
        self: Arc<Self>,
        name: String,
        password: String,
        peer: PeerKey,
        deadline: Duration,
    ) -> Result<(), ProtocolError> {
        self.take_registration(peer)?;
        let secret = password.clone();
        let hashed = self
            .pool
            .run(Lane::Registration, move || hash_password(&secret))
            .await;
        let hash = match hashed {
            Ok(Some(hash)) => hash,
            Ok(None) => {
                // Hashing failed: the registration was not made either.
                self.give_back_registration(peer);
                return Err(unavailable());
            }
            Err(error) => {
                // Nothing was hashed: the registration was not made.
                self.give_back_registration(peer);
                return Err(hash_trouble(error));
            }
        };
        let inserted = match self.commit_registration(&name, hash) {
            Ok(answer) => within(deadline, answer).await.map_err(store_trouble)?,
            Err(Known::Registering) => return Err(being_registered(&name)),
            // Registered by another connection meanwhile (see below).
            Err(_) => 0,
        };
        if inserted == 1 {
            tracing::info!(%name, "registered a name");
            return Ok(());
        }
        // Another connection registered the name meanwhile: its password counts.
        let stored = within(deadline, self.store.registration(name.clone()))
            .await
            .map_err(store_trouble)?
            .ok_or_else(unavailable)?;
        self.verify(stored.name, password, stored.hash, peer).await
    }

    /// Sends `name`'s registration to the store, unless the name is
    /// registered or being registered already. The store's answer is
    /// awaited by a task of its own, which tells the registered names
    /// (whether or not anyone still waits for it) and passes it on to the
    /// returned future.
    fn commit_registration(
        self: &Arc<Self>,
        name: &str,
        hash: String,
    ) -> Result<impl Future<Output = Result<usize, StoreError>> + use<>, Known> {
        if let Err(standing) = self.lock_names().begin(name) {
            return Err(match standing {
                Standing::Registering => Known::Registering,
                Standing::Registered(spelled) => Known::Registered(spelled.to_string()),
                Standing::Free => Known::Free,
            });
        }
        let name = name.to_string();
        let write = Write::Register {
            name: name.clone(),
            hash,
        };
        let commit = self.store.commit(write);
        let (tell, answer) = oneshot::channel();
        let accounts = Arc::clone(self);
        actix::spawn(async move {
            let answered = commit.await;
            match &answered {
                // 0 rows: registered already in another case; either way it is now.
                Ok(_) => accounts.lock_names().settle(&name, true),
                Err(StoreError::Failed(_)) => accounts.lock_names().settle(&name, false),
                // No answer (the daemon is stopping): it may be stored; stays in flight.
                Err(StoreError::Closed | StoreError::Open { .. } | StoreError::Database { .. }) => {
                }
            }
            let _ = tell.send(answered);
        });
        Ok(async move { answer.await.map_err(|_| StoreError::Closed)? })
    }

    /// Checks `password` against `hash` for `name`, if the guess is within
    /// its budgets; a wrong one is answered after its back-off.
    async fn verify(
        self: Arc<Self>,
        name: String,
        password: String,
        hash: String,
        peer: PeerKey,
    ) -> Result<(), ProtocolError> {
        let guess = self.begin_guess(&name, peer)?;
        let lane = if guess.is_clean() {
            Lane::Login
        } else {
            Lane::Retry
        };
        let checked = self
            .pool
            .run(lane, move || password_matches(&password, &hash))
            .await;
        match checked {
            Ok(true) => {
                guess.settle(true);
                Ok(())
            }
            Ok(false) => {
                let delay = guess.settle(false);
                tracing::info!(%name, delay_ms = delay.as_millis(), "wrong password");
                tokio::time::sleep(delay).await;
                Err(unauthorized(format!("wrong password for '{name}'")))
            }
            Err(error) => Err(hash_trouble(error)),
        }
    }

    /// A guess for `name` from `peer`, begun, or its `ERR 429`.
    fn begin_guess(&self, name: &str, peer: PeerKey) -> Result<GuessGuard<'_>, ProtocolError> {
        let begun = self
            .lock_guesses()
            .begin(name, peer, &self.limits, Instant::now());
        match begun {
            Ok(guess) => Ok(GuessGuard {
                accounts: self,
                guess: Some(guess),
            }),
            Err(refusal) => {
                tracing::debug!(%name, ?refusal, "a guess refused unhashed");
                Err(refused(name, refusal))
            }
        }
    }

    /// One registration from `peer`'s allowance, or its `ERR 429`.
    fn take_registration(&self, peer: PeerKey) -> Result<(), ProtocolError> {
        let per_hour = self.registrations_per_hour;
        let taken = self
            .lock_registrations()
            .take(peer, per_hour, Instant::now());
        taken.map_err(|wait| {
            let minutes = waits::whole_minutes(wait);
            ProtocolError::new(
                ErrorCode::TooMany,
                format!("too many registrations from your address, try again in {minutes} min"),
            )
        })
    }

    fn give_back_registration(&self, peer: PeerKey) {
        let per_hour = self.registrations_per_hour;
        self.lock_registrations()
            .give_back(peer, per_hour, Instant::now());
    }

    fn lock_guesses(&self) -> MutexGuard<'_, Guesses> {
        self.guesses.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn lock_names(&self) -> MutexGuard<'_, RegisteredNames> {
        self.names.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn lock_registrations(&self) -> MutexGuard<'_, Registrations> {
        self.registrations
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

/// A guess under way: settled once checked, released (counted as nothing)
/// if it never is: the hash threads were busy or stopped, or the check was
/// dropped with its connection (whose asker then never learns the answer).
struct GuessGuard<'a> {
    accounts: &'a Accounts,
    guess: Option<Guess>,
}

impl GuessGuard<'_> {
    fn is_clean(&self) -> bool {
        self.guess.as_ref().is_some_and(Guess::is_clean)
    }

    /// Counts the outcome; returns the back-off before the answer.
    fn settle(mut self, right: bool) -> Duration {
        let Some(guess) = self.guess.take() else {
            return Duration::ZERO;
        };
        let accounts = self.accounts;
        accounts
            .lock_guesses()
            .settle(guess, right, &accounts.limits, Instant::now())
    }
}

impl Drop for GuessGuard<'_> {
    fn drop(&mut self) {
        if let Some(guess) = self.guess.take() {
            self.accounts.lock_guesses().release(guess);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
