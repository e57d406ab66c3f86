//! What a connection may take: its place in the connection count
//! (`ConnectionSlot`, and the session's `Drop`, which gives it back), the count
//! of sessions on each thread that bounds a descriptor table (`held_here`),
//! the rate limit on commands (`TokenBucket`) and the idle timeout. Each of
//! them costs every connection, idle ones too, so they keep little in it: the
//! rate, the burst and the timeout are the daemon's settings, the time of the
//! last input serves both the bucket and the idle check, and idle connections
//! are found by the lobby's sweep rather than by a timer each.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use actix::{ActorContext, Context};

use super::Session;
use crate::config::RateLimit;

/// Holds one place in the connection count; gives it back when dropped, unless
/// a session has taken it over (see [`Session`]'s `Drop`).
pub struct ConnectionSlot(Option<Arc<AtomicUsize>>);

impl ConnectionSlot {
    /// Takes a place if fewer than `max` are taken.
    pub fn take(count: &Arc<AtomicUsize>, max: usize) -> Option<ConnectionSlot> {
        let taken = count.fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
            (n < max).then_some(n + 1)
        });
        taken.ok().map(|_| ConnectionSlot(Some(Arc::clone(count))))
    }

    /// The place now belongs to a session, which gives it back when it drops
    /// (one field fewer in every session).
    pub(super) fn hand_over(mut self) {
        self.0 = None;
    }
}

impl Drop for ConnectionSlot {
    fn drop(&mut self) {
        if let Some(count) = &self.0 {
            count.fetch_sub(1, Ordering::AcqRel);
        }
    }
}

// The session holds its place in the connection count (see
// `ConnectionSlot::hand_over`).
impl Drop for Session {
    fn drop(&mut self) {
        self.shared.connections.fetch_sub(1, Ordering::AcqRel);
        HELD_HERE.with(|held| held.set(held.get().saturating_sub(1)));
    }
}

thread_local! {
    /// Sessions on this thread. A session never leaves the thread it starts
    /// on, so with a descriptor table per worker this counts the connections
    /// in this thread's table.
    pub(super) static HELD_HERE: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Sessions on the calling thread (see `HELD_HERE`).
pub fn held_here() -> usize {
    HELD_HERE.with(std::cell::Cell::get)
}

/// Per-connection rate limit: a bucket of `burst` tokens refilled at `rate`/s.
/// The rate and the burst are the daemon's, and the time of the last refill is
/// the session's last input: both are passed in rather than kept in every
/// connection.
pub(super) struct TokenBucket {
    /// `f32`: it packs beside the line codec in every session.
    tokens: f32,
}

impl TokenBucket {
    pub(super) fn new(limit: RateLimit) -> TokenBucket {
        TokenBucket {
            tokens: limit.burst as f32,
        }
    }

    /// Adds what `elapsed` earns, up to the burst.
    pub(super) fn refill(&mut self, limit: RateLimit, elapsed: Duration) {
        let refill = elapsed.as_secs_f32() * limit.per_second as f32;
        self.tokens = (self.tokens + refill).min(limit.burst as f32);
    }

    /// Takes a token if there is one.
    pub(super) fn take(&mut self) -> bool {
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            true
        } else {
            false
        }
    }
}

impl Session {
    /// Idle connections are found by the lobby's sweep (see `Lobby::sweep_idle`)
    /// rather than by a timer in every connection, which would cost each one a
    /// timer entry and its allocation.
    pub(super) fn close_if_idle(&mut self, ctx: &mut Context<Self>) {
        let timeout = self.shared.live.idle_timeout();
        if self.last_input.elapsed() >= timeout {
            self.send_text(ctx, Arc::from("INFO closing an idle connection\n"));
            ctx.stop();
        }
    }
}
