//! A deadline on waiting for the store. A command that needs the disk
//! (`LOGIN` and registering, `HISTORY`) waits for the store's answer at most
//! `store_deadline_ms`; past that it is answered `ERR 503 the store is not
//! answering, try again`, so that a frozen or stalled disk holds a connection
//! up for that long and no longer. The request is not withdrawn from the
//! store's queue: a read is answered to nobody, and a write (a name's
//! registration) may still be committed once the disk answers, which is why
//! the reply says to try again rather than that nothing happened.

use std::future::Future;
use std::time::Duration;

use flipline::protocol::{ErrorCode, ProtocolError};

use crate::store::StoreError;

/// Why a store request gave no answer to use.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StoreWait {
    /// The store answered with a failure.
    Failed(StoreError),
    /// The store did not answer within the deadline.
    NotAnswering,
}

impl std::fmt::Display for StoreWait {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StoreWait::Failed(error) => error.fmt(f),
            StoreWait::NotAnswering => f.write_str("the store did not answer in time"),
        }
    }
}

/// `request`'s answer, if it comes within `deadline`.
pub async fn within<T>(
    deadline: Duration,
    request: impl Future<Output = Result<T, StoreError>>,
) -> Result<T, StoreWait> {
    match tokio::time::timeout(deadline, request).await {
        Ok(answer) => answer.map_err(StoreWait::Failed),
        Err(_) => Err(StoreWait::NotAnswering),
    }
}

/// The reply to a command whose store did not answer in time.
pub fn not_answering() -> ProtocolError {
    ProtocolError::new(
        ErrorCode::Unavailable,
        "the store is not answering, try again",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn an_answer_in_time_is_passed_on_and_none_is_not_answering() {
        let short = Duration::from_millis(20);
        assert_eq!(within(short, async { Ok(3) }).await, Ok(3));
        let failed = within::<u8>(short, async { Err(StoreError::Closed) }).await;
        assert_eq!(failed, Err(StoreWait::Failed(StoreError::Closed)));
        let started = std::time::Instant::now();
        let frozen = within::<u8>(short, std::future::pending()).await;
        assert_eq!(frozen, Err(StoreWait::NotAnswering));
        assert!(started.elapsed() >= short);
        assert_eq!(not_answering().code, ErrorCode::Unavailable);
    }
}
