//! The session's socket: the `Reader`, which turns what the client sends into
//! lines for the session, and the `Flusher`, which writes the outbox. Both are
//! futures without state of their own, spawned in the session's context: their
//! state is the session's fields, so a connection needs no task, buffer or
//! allocation beyond the session itself (an idle one holds no read buffer).
//! Here too is what happens at the end of input and when a read fails.

use std::io;
use std::pin::Pin;
use std::task::{Poll, ready};

use bytes::BytesMut;

use actix::{ActorContext, ActorState, AsyncContext, Context};

use tokio::io::{AsyncRead, ReadBuf};
use tokio_util::codec::Decoder;

use super::Session;
use crate::codec::Line;

/// Writes the session's queued lines whenever the socket takes them; it lives in
/// the session's context, so a connection needs no writer task of its own.
pub(super) struct Flusher;

impl actix::ActorFuture<Session> for Flusher {
    type Output = ();

    fn poll(
        self: Pin<&mut Self>,
        act: &mut Session,
        ctx: &mut Context<Session>,
        task: &mut std::task::Context<'_>,
    ) -> Poll<()> {
        let Some(socket) = act.socket.as_mut() else {
            return Poll::Ready(());
        };
        match act.outbox.poll_write(socket, task) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(e) => {
                tracing::debug!(id = act.id, error = %e, "write failed");
                ctx.stop();
                Poll::Ready(())
            }
        }
    }
}

/// Reads the client's lines and hands each to the session, as actix's own
/// stream handling would. Its state is the session's `input` and `codec`, so
/// that it costs no allocation of its own.
pub(super) struct Reader;

/// Room made in the read buffer before each read, in bytes: commands are short.
const READ_CHUNK: usize = 512;

/// Lines handled in one go before other work in the session gets a turn.
const LINES_PER_TURN: usize = 16;

impl actix::ActorFuture<Session> for Reader {
    type Output = ();

    fn poll(
        self: Pin<&mut Self>,
        act: &mut Session,
        ctx: &mut Context<Session>,
        task: &mut std::task::Context<'_>,
    ) -> Poll<()> {
        let mut handled = 0;
        loop {
            let line = match act.codec.decode(&mut act.input) {
                Ok(Some(line)) => line,
                Ok(None) => match poll_fill(act, task) {
                    Poll::Pending => return Poll::Pending,
                    Poll::Ready(Ok(Filled::Ended)) => return act.input_ended(ctx),
                    Poll::Ready(Ok(Filled::Buffered)) => continue,
                    Poll::Ready(Ok(Filled::Whole(line))) => line,
                    Poll::Ready(Err(e)) => return act.read_failed(ctx, e),
                },
                Err(e) => return act.read_failed(ctx, e),
            };
            act.on_input(ctx, Ok(line));
            handled += 1;
            // A command waiting for its answer holds back the next line;
            // the context polls this again once it has one.
            if ctx.waiting() || ctx.state() != ActorState::Running {
                return Poll::Pending;
            }
            if handled == LINES_PER_TURN {
                task.waker().wake_by_ref();
                return Poll::Pending;
            }
        }
    }
}

/// What a read gave.
enum Filled {
    /// The end of input.
    Ended,
    /// Bytes, now in the session's buffer.
    Buffered,
    /// Exactly one whole line, taken without a buffer.
    Whole(Line),
}

/// Reads what the socket has into the session's buffer. With nothing
/// buffered it reads into the stack first: the many polls that find no data
/// allocate nothing, the buffer exists only while there are bytes to handle
/// (an idle connection holds none), and a read of exactly one whole line (a
/// move, most of the time) is decoded from the stack with no buffer at all.
fn poll_fill(act: &mut Session, task: &mut std::task::Context<'_>) -> Poll<io::Result<Filled>> {
    let Some(socket) = act.socket.as_mut() else {
        return Poll::Ready(Ok(Filled::Ended));
    };
    let buf = &mut act.input;
    if !buf.is_empty() {
        buf.reserve(READ_CHUNK);
        let read = ready!(tokio_util::io::poll_read_buf(Pin::new(socket), task, buf))?;
        return Poll::Ready(Ok(if read == 0 {
            Filled::Ended
        } else {
            Filled::Buffered
        }));
    }
    *buf = BytesMut::new();
    let mut chunk = [0u8; READ_CHUNK];
    let mut filled = ReadBuf::new(&mut chunk);
    ready!(Pin::new(socket).poll_read(task, &mut filled))?;
    let bytes = filled.filled();
    if bytes.is_empty() {
        return Poll::Ready(Ok(Filled::Ended));
    }
    if let Some(line) = act.codec.decode_whole(bytes) {
        return Poll::Ready(Ok(Filled::Whole(line)));
    }
    buf.extend_from_slice(bytes);
    Poll::Ready(Ok(Filled::Buffered))
}

impl Session {
    /// The client closed its side: a last unterminated line still counts, and
    /// if it waits for an answer the session stops only after it (the socket
    /// keeps reporting the end, so the next poll comes back here).
    fn input_ended(&mut self, ctx: &mut Context<Session>) -> Poll<()> {
        if let Ok(Some(line)) = self.codec.decode_eof(&mut self.input) {
            self.on_input(ctx, Ok(line));
            if ctx.waiting() {
                return Poll::Pending;
            }
        }
        ctx.stop();
        Poll::Ready(())
    }

    fn read_failed(&mut self, ctx: &mut Context<Session>, error: std::io::Error) -> Poll<()> {
        self.on_input(ctx, Err(error));
        Poll::Ready(())
    }

    /// A line from the client, or why reading failed.
    fn on_input(&mut self, ctx: &mut Context<Self>, item: Result<Line, std::io::Error>) {
        let now = super::limits::Moment::now();
        let elapsed = self.last_input.until(now);
        self.last_input = now;
        self.bucket.refill(self.shared.live.rate_limit(), elapsed);
        match item {
            Ok(line) => self.on_line(ctx, line),
            Err(e) => {
                tracing::debug!(id = self.id, error = %e, "read failed");
                ctx.stop();
            }
        }
    }
}
