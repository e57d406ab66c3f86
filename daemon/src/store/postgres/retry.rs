//! Connecting again to a server that went away, at most once in
//! [`RETRY_AFTER`]: the requests meanwhile fail at once with the last
//! reason, instead of each waiting for a connection that will not come.

use std::time::{Duration, Instant};

/// The least time between two attempts to connect while the server is down.
pub const RETRY_AFTER: Duration = Duration::from_millis(500);

/// When the last attempt failed, and why; nothing while connections succeed.
#[derive(Default)]
pub struct Retry(Option<(Instant, String)>);

impl Retry {
    /// Whether the last attempt failed.
    pub fn is_down(&self) -> bool {
        self.0.is_some()
    }

    /// `connect`, unless an attempt failed less than [`RETRY_AFTER`] ago.
    pub fn attempt<T>(&mut self, connect: impl FnOnce() -> Result<T, String>) -> Result<T, String> {
        if let Some((at, why)) = &self.0
            && at.elapsed() < RETRY_AFTER
        {
            return Err(why.clone());
        }
        match connect() {
            Ok(connected) => {
                self.0 = None;
                Ok(connected)
            }
            Err(why) => {
                let why = format!("PostgreSQL cannot be reached: {why}");
                self.0 = Some((Instant::now(), why.clone()));
                Err(why)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_attempt_is_not_made_again_at_once_and_a_success_clears_it() {
        let mut retry = Retry::default();
        let mut tries = 0;
        let mut fail = || {
            tries += 1;
            Err::<(), _>("refused".to_string())
        };
        assert!(retry.attempt(&mut fail).is_err());
        let again = retry.attempt(&mut fail);
        assert_eq!(tries, 1, "the second attempt was answered from the first");
        assert_eq!(
            again,
            Err("PostgreSQL cannot be reached: refused".to_string())
        );
        assert!(retry.is_down());
        retry.0 = Some((Instant::now() - RETRY_AFTER, "old".into()));
        assert_eq!(retry.attempt(|| Ok::<_, String>(7)), Ok(7));
        assert!(!retry.is_down());
    }
}
