//! The bounded outbound queue of a connection, written from inside the session
//! actor's own context.
//!
//! Lines for a client wait in a queue owned by the session; a small future spawned
//! into the session's context writes them whenever the socket accepts bytes. So a
//! connection needs no task and no channel of its own for writing (that cost
//! about 1.4 KiB per connection), and a client that stops reading fills the queue
//! to its bound, after which the session disconnects it: memory stays bounded.
//! The bound is on texts and on bytes both: a few large replies (a `LIST` of
//! a busy lobby) hold as much memory as thousands of events.
//! When the session ends, whatever is still queued gets a short-lived task of its
//! own that writes it out (bounded in time) and closes the socket.

use std::collections::VecDeque;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use tokio::io::{AsyncWrite, AsyncWriteExt};

/// Text for one client: one or more whole lines, each ending in LF. Shared so that
/// an event sent to many clients is formatted once.
pub type Text = Arc<str>;

/// Most texts handed to one vectored write.
const MAX_SLICES: usize = 32;

/// How much may wait for one connection: a text is refused once either is
/// reached (so the queue holds at most `bytes` plus the one text before it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bound {
    /// Texts queued.
    pub texts: usize,
    /// Bytes of the texts queued, counted whole until each is written out.
    pub bytes: usize,
}

/// Why text could not be queued.
#[derive(Debug, PartialEq, Eq)]
pub enum QueueError {
    /// The client is not reading: the queue is at its bound.
    Full,
    /// The connection is gone.
    Closed,
}

/// The lines waiting for a connection. The socket is not kept here but passed
/// in: the session owns it whole, for reading too (split halves would cost an
/// allocation per connection), and the queue's bound is the daemon's setting.
#[derive(Default)]
pub struct Outbox {
    queue: VecDeque<Text>,
    /// The lengths of the texts in `queue`, the front one whole: what the
    /// byte bound counts.
    queued_bytes: usize,
    /// Bytes of the front text already written (a text is far below 4 GiB).
    written: u32,
    /// The connection failed or was abandoned: nothing more is queued.
    closed: bool,
    /// The waker of the task that last found the queue empty: a push wakes it,
    /// since the actor context only polls its futures when woken.
    waker: Option<Waker>,
}

impl Outbox {
    /// Queues `text` unless the queue is at `bound` already; the next
    /// [`Outbox::poll_write`] sends it. A text larger than the byte bound
    /// still goes into a queue below it: a client that reads gets every
    /// reply, however large, and one that does not is refused the next.
    pub fn push(&mut self, text: Text, bound: Bound) -> Result<(), QueueError> {
        if self.closed {
            return Err(QueueError::Closed);
        }
        if self.queue.len() >= bound.texts || self.queued_bytes >= bound.bytes {
            return Err(QueueError::Full);
        }
        self.queued_bytes = self.queued_bytes.saturating_add(text.len());
        self.queue.push_back(text);
        if let Some(waker) = self.waker.take() {
            waker.wake();
        }
        Ok(())
    }

    /// Writes queued text to `writer` until the queue is empty (`Pending`: more
    /// may come) or the socket is full (`Pending`: woken when it drains).
    /// `Ready` means the connection failed and nothing more can be written.
    pub fn poll_write<W>(&mut self, writer: &mut W, cx: &mut Context<'_>) -> Poll<io::Error>
    where
        W: AsyncWrite + Unpin,
    {
        if self.closed {
            return Poll::Ready(io::ErrorKind::NotConnected.into());
        }
        while !self.queue.is_empty() {
            match self.poll_write_queued(writer, cx) {
                Poll::Ready(Ok(0)) => return self.fail(io::ErrorKind::WriteZero.into()),
                Poll::Ready(Ok(n)) => self.consume(n),
                Poll::Ready(Err(e)) => return self.fail(e),
                Poll::Pending => return Poll::Pending,
            }
        }
        // TLS keeps records it could not send yet; a plain socket has
        // nothing to flush. Woken by the socket when it drains.
        match Pin::new(&mut *writer).poll_flush(cx) {
            Poll::Ready(Ok(())) => {}
            Poll::Ready(Err(e)) => return self.fail(e),
            Poll::Pending => return Poll::Pending,
        }
        // An idle connection keeps no buffer: the next line allocates anew,
        // which costs less than holding one in each of thousands of sessions.
        if self.queue.capacity() > 0 {
            self.queue = VecDeque::new();
        }
        if !self.waker.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
            self.waker = Some(cx.waker().clone());
        }
        Poll::Pending
    }

    /// One vectored write (writev) of everything queued, up to `MAX_SLICES` texts.
    fn poll_write_queued<W>(&self, writer: &mut W, cx: &mut Context<'_>) -> Poll<io::Result<usize>>
    where
        W: AsyncWrite + Unpin,
    {
        let mut slices = [io::IoSlice::new(&[]); MAX_SLICES];
        let mut count = 0;
        for (slot, text) in slices.iter_mut().zip(self.queue.iter()) {
            let skip = if count == 0 { self.written() } else { 0 };
            *slot = io::IoSlice::new(text.as_bytes().get(skip..).unwrap_or_default());
            count += 1;
        }
        Pin::new(writer).poll_write_vectored(cx, slices.get(..count).unwrap_or_default())
    }

    fn written(&self) -> usize {
        self.written as usize
    }

    /// Drops `n` written bytes from the front of the queue.
    fn consume(&mut self, mut n: usize) {
        while let Some(front) = self.queue.front() {
            let left = front.len().saturating_sub(self.written());
            if n < left {
                self.written = u32::try_from(self.written() + n).unwrap_or(u32::MAX);
                return;
            }
            n -= left;
            self.queued_bytes = self.queued_bytes.saturating_sub(front.len());
            self.queue.pop_front();
            self.written = 0;
        }
    }

    /// Drops the queue at once and takes no more (a client that does not read
    /// gets nothing more).
    pub fn abandon(&mut self) {
        self.closed = true;
        self.queue = VecDeque::new();
        self.queued_bytes = 0;
    }

    fn fail(&mut self, error: io::Error) -> Poll<io::Error> {
        self.abandon();
        Poll::Ready(error)
    }

    /// Hands what is still queued, with `writer`, to a task of its own that
    /// writes it (for at most `linger`) and then closes the write side. With
    /// nothing queued the writer just drops, which closes the socket, unless
    /// it has a `farewell` of its own to write on closing (TLS's
    /// close_notify, without which a client cannot tell the end from a cut).
    pub fn close<W>(&mut self, mut writer: W, linger: Duration, farewell: bool)
    where
        W: AsyncWrite + Unpin + 'static,
    {
        let queue = std::mem::take(&mut self.queue);
        let written = self.written();
        self.abandon();
        if queue.is_empty() && !farewell {
            return;
        }
        tokio::task::spawn_local(async move {
            let drain = async {
                for (i, text) in queue.iter().enumerate() {
                    let skip = if i == 0 { written } else { 0 };
                    let bytes = text.as_bytes().get(skip..).unwrap_or_default();
                    writer.write_all(bytes).await?;
                }
                writer.shutdown().await
            };
            let _ = tokio::time::timeout(linger, drain).await;
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A bound of `texts` texts and bytes enough for any test line.
    fn texts(texts: usize) -> Bound {
        Bound {
            texts,
            bytes: 1 << 20,
        }
    }

    /// A bound of `bytes` bytes and texts enough for any test.
    fn bytes(bytes: usize) -> Bound {
        Bound { texts: 512, bytes }
    }

    /// Writes what `outbox` holds into a sink that takes everything.
    fn drain(outbox: &mut Outbox) {
        let mut cx = Context::from_waker(std::task::Waker::noop());
        assert!(
            outbox
                .poll_write(&mut tokio::io::sink(), &mut cx)
                .is_pending()
        );
    }

    #[test]
    fn a_full_queue_refuses_and_a_closed_one_too() {
        let mut outbox = Outbox::default();
        let mut sink = tokio::io::sink();
        assert_eq!(outbox.push(Arc::from("a\n"), texts(2)), Ok(()));
        assert_eq!(outbox.push(Arc::from("b\n"), texts(2)), Ok(()));
        assert_eq!(
            outbox.push(Arc::from("c\n"), texts(2)),
            Err(QueueError::Full)
        );
        let waker = std::task::Waker::noop();
        let mut cx = Context::from_waker(waker);
        assert!(outbox.poll_write(&mut sink, &mut cx).is_pending());
        assert!(outbox.queue.is_empty(), "a sink takes everything");
        assert_eq!(outbox.queue.capacity(), 0, "an idle queue holds no buffer");
        assert_eq!(outbox.push(Arc::from("d\n"), texts(2)), Ok(()));
        outbox.abandon();
        assert_eq!(
            outbox.push(Arc::from("e\n"), texts(2)),
            Err(QueueError::Closed)
        );
    }

    #[test]
    fn the_byte_bound_refuses_once_reached_whatever_the_count() {
        let mut outbox = Outbox::default();
        let ten: Text = Arc::from("123456789\n");
        for _ in 0..3 {
            assert_eq!(outbox.push(Arc::clone(&ten), bytes(30)), Ok(()));
        }
        assert_eq!(outbox.queued_bytes, 30);
        assert_eq!(
            outbox.push(Arc::from("x\n"), bytes(30)),
            Err(QueueError::Full)
        );
        // Below the bound one more text fits, however long.
        let mut below = Outbox::default();
        assert_eq!(below.push(Arc::clone(&ten), bytes(30)), Ok(()));
        assert_eq!(below.push(Arc::from("y".repeat(100)), bytes(30)), Ok(()));
        assert_eq!(below.queued_bytes, 110);
        assert_eq!(
            below.push(Arc::from("z\n"), bytes(30)),
            Err(QueueError::Full)
        );
    }

    #[test]
    fn a_reply_larger_than_the_byte_bound_goes_to_a_client_that_reads() {
        let mut outbox = Outbox::default();
        let big: Text = Arc::from("GAME 1 othello - - open 0\n".repeat(1000));
        assert_eq!(outbox.push(Arc::clone(&big), bytes(4096)), Ok(()));
        drain(&mut outbox);
        assert_eq!(outbox.queued_bytes, 0, "written texts no longer count");
        assert_eq!(outbox.push(big, bytes(4096)), Ok(()));
    }

    #[test]
    fn written_bytes_are_given_back_only_when_their_text_is_done() {
        // A writer that takes at most 4 bytes a call, then stalls.
        struct Stalls(usize);
        impl AsyncWrite for Stalls {
            fn poll_write(
                mut self: Pin<&mut Self>,
                _: &mut Context<'_>,
                buf: &[u8],
            ) -> Poll<io::Result<usize>> {
                if self.0 == 0 {
                    return Poll::Pending;
                }
                self.0 -= 1;
                Poll::Ready(Ok(buf.len().min(4)))
            }
            fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
                Poll::Ready(Ok(()))
            }
            fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
                Poll::Ready(Ok(()))
            }
        }
        let mut outbox = Outbox::default();
        outbox.push(Arc::from("abcdef\n"), bytes(64)).unwrap();
        outbox.push(Arc::from("gh\n"), bytes(64)).unwrap();
        let mut cx = Context::from_waker(std::task::Waker::noop());
        // 4 bytes: the first text is not done.
        assert!(outbox.poll_write(&mut Stalls(1), &mut cx).is_pending());
        assert_eq!(outbox.queued_bytes, 10);
        // 4 more: the first is done (3 bytes), the second started.
        assert!(outbox.poll_write(&mut Stalls(1), &mut cx).is_pending());
        assert_eq!(outbox.queued_bytes, 3);
        outbox.abandon();
        assert_eq!(outbox.queued_bytes, 0);
    }

    #[test]
    fn partial_writes_resume_where_they_stopped() {
        // A writer that takes at most 3 bytes a call.
        struct Trickle(Vec<u8>);
        impl AsyncWrite for Trickle {
            fn poll_write(
                mut self: Pin<&mut Self>,
                _: &mut Context<'_>,
                buf: &[u8],
            ) -> Poll<io::Result<usize>> {
                let n = buf.len().min(3);
                self.0.extend_from_slice(&buf[..n]);
                Poll::Ready(Ok(n))
            }
            fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
                Poll::Ready(Ok(()))
            }
            fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
                Poll::Ready(Ok(()))
            }
        }
        let mut outbox = Outbox::default();
        let mut trickle = Trickle(Vec::new());
        outbox
            .push(Arc::from("HELLO flipline 1\n"), texts(8))
            .unwrap();
        outbox.push(Arc::from("OK\n"), texts(8)).unwrap();
        let mut cx = Context::from_waker(std::task::Waker::noop());
        assert!(outbox.poll_write(&mut trickle, &mut cx).is_pending());
        assert_eq!(trickle.0, b"HELLO flipline 1\nOK\n");
    }
}
