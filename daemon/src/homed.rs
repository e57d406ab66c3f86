//! Tasks at home on an actor thread: woken from another thread, they are
//! woken through their thread's own I/O driver, not behind its `LocalSet`'s
//! remote queue.
//!
//! A task woken from another thread waits in its `LocalSet`'s remote queue,
//! which the `LocalSet` serves only when its local queue is empty or once
//! every 31 tasks (tokio 1.54, `REMOTE_FIRST_INTERVAL`), first in first out.
//! While thousands of connections log in, the local queues stay full and the
//! remote ones long (the lobby's answers to every login), so a game's
//! commit, or a move between a session and a game on two threads, waited
//! hundreds of milliseconds there (BENCHMARKS.md, "The first seconds after
//! 20,000 logins" and the sections after it).
//!
//! So each actor thread is a home with an inbox. A homed task's waker
//! (`waker.rs`) wakes it as tokio does on its own thread; from another
//! thread it puts tokio's waker in the home's inbox and rings the home's
//! bell (`bell.rs`) if the thread's serving task is asleep: one ring however
//! many wakers are put before it runs. The serving task, woken by the
//! thread's driver into the local queue, then wakes each task on the thread
//! itself, into the local queue too, in the order they were woken.
//!
//! A homed task costs nothing more than a task: its waker is tokio's
//! pointer under one of 64 vtables, one a home. A task on a thread that is
//! no home (tests, tools, threads beyond 64), or whose home has stopped
//! serving, is woken as tokio wakes it.

mod bell;
mod waker;

use std::cell::Cell;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll, Waker};

thread_local! {
    /// This thread's home, while its serving task runs.
    static HERE: Cell<Option<usize>> = const { Cell::new(None) };
}

/// Where the next claim of a home starts looking: homes are taken in turn,
/// so that a number given up is not soon another thread's while wakers of
/// its last owner's tasks may still be about.
static NEXT_HOME: AtomicUsize = AtomicUsize::new(0);

/// Each home's inbox.
static INBOXES: [Mutex<Inbox>; waker::HOMES] = [const { Mutex::new(Inbox::EMPTY) }; waker::HOMES];

/// What other threads woke of a home's tasks, until its serving task takes
/// them.
struct Inbox {
    woken: Vec<Waker>,
    /// The serving task waits for the bell.
    asleep: bool,
    /// A thread serves this home.
    claimed: bool,
    /// Its bell; `None` while the home is nobody's, or once the bell broke.
    bell: Option<bell::Bell>,
    /// How many times another thread rang since the home was claimed.
    rings: u64,
}

impl Inbox {
    const EMPTY: Inbox = Inbox {
        woken: Vec::new(),
        asleep: false,
        claimed: false,
        bell: None,
        rings: 0,
    };
}

fn inbox(home: usize) -> Option<MutexGuard<'static, Inbox>> {
    // Nothing panics while holding it; were it poisoned, what it holds is
    // still whole.
    INBOXES
        .get(home)
        .map(|inbox| inbox.lock().unwrap_or_else(PoisonError::into_inner))
}

/// Whether the calling thread is `home`.
fn is_home(home: usize) -> bool {
    // A thread ending may have lost its locals: then it is nobody's home.
    HERE.try_with(Cell::get).ok().flatten() == Some(home)
}

/// Wakes `waker`, a task of `home`'s, from wherever this runs.
fn wake(home: usize, waker: Waker) {
    if is_home(home) {
        waker.wake();
    } else {
        post(home, waker);
    }
}

/// Puts `waker` in `home`'s inbox and rings unless the serving task is
/// awake already; wakes it here if nobody serves the home.
fn post(home: usize, waker: Waker) {
    let Some(mut inbox) = inbox(home) else {
        return waker.wake();
    };
    if inbox.bell.is_none() {
        drop(inbox);
        return waker.wake();
    }
    inbox.woken.push(waker);
    if !std::mem::take(&mut inbox.asleep) {
        return;
    }
    inbox.rings += 1;
    if inbox.bell.as_ref().is_some_and(bell::Bell::ring) {
        return;
    }
    // A bell that cannot ring would leave the home deaf: its tasks are
    // woken the plain way from now on.
    inbox.bell = None;
    let woken = std::mem::take(&mut inbox.woken);
    drop(inbox);
    tracing::warn!(
        home,
        "an actor thread's bell broke: its tasks are woken the plain way"
    );
    for waker in woken {
        waker.wake();
    }
}

/// A home for an actor thread, made before the thread runs: its bell is a
/// descriptor that every thread's table must hold (`bell.rs`).
pub(crate) struct Home {
    bell: bell::Bell,
    unheard: bell::Unheard,
}

impl Home {
    pub(crate) fn new() -> io::Result<Home> {
        let (bell, unheard) = bell::pair()?;
        Ok(Home { bell, unheard })
    }
}

/// Makes the calling thread `home`'s and serves it for as long as the thread
/// runs this task: spawn it once on each actor thread. If it cannot, the
/// thread's tasks are woken as tokio wakes them.
pub(crate) async fn serve_here(home: Home) {
    let listening = match home.unheard.listen() {
        Ok(listening) => listening,
        Err(error) => return tracing::warn!(%error, "this thread's tasks are woken the plain way"),
    };
    let learnt = std::future::poll_fn(|cx| Poll::Ready(waker::learn(cx.waker()))).await;
    let unserved = HERE.with(Cell::get).is_none();
    let claimed = (learnt && unserved).then(|| Claimed::home(home.bell));
    let Some(claimed) = claimed.flatten() else {
        return tracing::warn!("this thread's tasks are woken the plain way: no home for it");
    };
    let mut taken = Vec::new();
    loop {
        if !claimed.take(&mut taken) {
            if let Err(error) = listening.heard().await {
                // Dropping `claimed` wakes the rest here.
                return tracing::warn!(%error, "this thread's tasks are woken the plain way");
            }
            continue;
        }
        for waker in taken.drain(..) {
            waker.wake();
        }
    }
}

/// A home this thread serves, given up when the serving task stops.
struct Claimed(usize);

impl Claimed {
    /// The next home nobody serves, made this thread's.
    fn home(bell: bell::Bell) -> Option<Claimed> {
        let mut bell = Some(bell);
        let first = NEXT_HOME.fetch_add(1, Ordering::Relaxed);
        let home = (0..waker::HOMES)
            .map(|turn| first.wrapping_add(turn) % waker::HOMES)
            .find(|&home| {
                let Some(mut inbox) = inbox(home) else {
                    return false;
                };
                if inbox.claimed {
                    return false;
                }
                inbox.claimed = true;
                inbox.bell = bell.take();
                inbox.asleep = false;
                inbox.rings = 0;
                true
            })?;
        HERE.with(|here| here.set(Some(home)));
        Some(Claimed(home))
    }

    /// Swaps the wakers put since the last call into `taken` (empty); if
    /// there were none, the next one rings. Swapped, not moved: both
    /// buffers keep their room.
    fn take(&self, taken: &mut Vec<Waker>) -> bool {
        let Some(mut inbox) = inbox(self.0) else {
            return false;
        };
        if inbox.woken.is_empty() {
            inbox.asleep = true;
            return false;
        }
        std::mem::swap(&mut inbox.woken, taken);
        true
    }
}

impl Drop for Claimed {
    fn drop(&mut self) {
        let _ = HERE.try_with(|here| here.set(None));
        let woken = match inbox(self.0) {
            Some(mut inbox) => {
                inbox.claimed = false;
                inbox.bell = None;
                inbox.asleep = false;
                std::mem::take(&mut inbox.woken)
            }
            None => Vec::new(),
        };
        for waker in woken {
            waker.wake();
        }
    }
}

/// A future polled as a task of the home it is polled on.
pub(crate) struct Homed<F>(pub(crate) F);

impl<F: Future + Unpin> Future for Homed<F> {
    type Output = F::Output;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let inner = Pin::new(&mut self.0);
        let homed = HERE
            .try_with(Cell::get)
            .ok()
            .flatten()
            .and_then(|home| waker::homed(cx.waker(), home));
        match homed {
            Some(waker) => inner.poll(&mut Context::from_waker(&waker)),
            None => inner.poll(cx),
        }
    }
}

/// Spawns `future` on this thread's `LocalSet` as a task of this thread's
/// home (an actor's context: `Context::into_future`).
pub(crate) fn spawn<F: Future<Output = ()> + Unpin + 'static>(future: F) {
    tokio::task::spawn_local(Homed(future));
}

/// Starts an actor as `Actor::create` does, its context a task of this
/// thread's home.
pub(crate) fn create<A>(make: impl FnOnce(&mut actix::Context<A>) -> A) -> actix::Addr<A>
where
    A: actix::Actor<Context = actix::Context<A>>,
{
    use actix::AsyncContext;
    let mut ctx = actix::Context::new();
    let actor = make(&mut ctx);
    let address = ctx.address();
    spawn(ctx.into_future(actor));
    address
}

/// How many times other threads rang this thread's home.
#[cfg(test)]
fn rings_here() -> u64 {
    HERE.with(Cell::get)
        .and_then(inbox)
        .map_or(0, |inbox| inbox.rings)
}

#[cfg(test)]
mod tests;
