//! The bounded outbound queue of a connection and the task that writes it.
//!
//! Lines for a client go through a bounded channel to a writer task that owns the
//! socket's write half. A client that stops reading fills the channel; the next
//! line then fails to queue and the session disconnects it, so a stalled reader
//! costs at most the queue's bound, never unbounded memory.

use std::sync::Arc;

use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;
use tokio::task::AbortHandle;

/// Text for one client: one or more whole lines, each ending in LF. Shared so that
/// an event sent to many clients is formatted once.
pub type Text = Arc<str>;

/// The sending side of a connection's outbound queue.
#[derive(Clone, Debug)]
pub struct Outbox {
    tx: mpsc::Sender<Text>,
}

/// Why text could not be queued.
#[derive(Debug, PartialEq, Eq)]
pub enum QueueError {
    /// The client is not reading: the queue is at its bound.
    Full,
    /// The connection is gone.
    Closed,
}

impl Outbox {
    /// Queues `text` without waiting.
    pub fn push(&self, text: Text) -> Result<(), QueueError> {
        self.tx.try_send(text).map_err(|e| match e {
            mpsc::error::TrySendError::Full(_) => QueueError::Full,
            mpsc::error::TrySendError::Closed(_) => QueueError::Closed,
        })
    }
}

/// Starts the writer task on the current runtime. It writes queued text in order,
/// batching whatever is queued into one write, and shuts the socket's write side down
/// once every [`Outbox`] is dropped and the queue is written out. The returned
/// handle aborts it: a writer blocked on a client that never reads would
/// otherwise hold the socket forever.
pub fn spawn_writer<W>(writer: W, capacity: usize) -> (Outbox, AbortHandle)
where
    W: AsyncWrite + Unpin + 'static,
{
    let (tx, rx) = mpsc::channel(capacity);
    let task = tokio::task::spawn_local(write_queue(writer, rx));
    (Outbox { tx }, task.abort_handle())
}

/// Largest batch gathered into one write.
const MAX_BATCH: usize = 64 * 1024;

async fn write_queue<W: AsyncWrite + Unpin>(mut writer: W, mut rx: mpsc::Receiver<Text>) {
    // No buffer is kept while idle: an idle connection costs no write buffer,
    // and one queued text (the common case) is written as it is.
    let mut batch: Vec<u8> = Vec::new();
    while let Some(text) = rx.recv().await {
        let written = match rx.try_recv() {
            Err(_) => writer.write_all(text.as_bytes()).await,
            Ok(next) => {
                batch.extend_from_slice(text.as_bytes());
                batch.extend_from_slice(next.as_bytes());
                while batch.len() < MAX_BATCH {
                    let Ok(more) = rx.try_recv() else { break };
                    batch.extend_from_slice(more.as_bytes());
                }
                let result = writer.write_all(&batch).await;
                batch = Vec::new();
                result
            }
        };
        if written.is_err() {
            return;
        }
    }
    let _ = writer.shutdown().await;
}
