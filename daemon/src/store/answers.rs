//! A write's answer, carried back to the actor thread that asked for it.
//!
//! The writer commits on a thread of its own. An answer sent from there
//! wakes the waiting actor through its thread's tokio `LocalSet` remote
//! queue, which the `LocalSet` serves only when its local queue is empty or
//! once every 31 tasks (tokio 1.54, `REMOTE_FIRST_INTERVAL`). While
//! thousands of connections log in, the local queues stay full, and a batch
//! of a thousand answers, each a remote wake-up of its own, kept games
//! waiting hundreds of milliseconds behind them (BENCHMARKS.md, "The first
//! seconds after 20,000 logins").
//!
//! So each actor thread has an inbox. The writer puts answers there and
//! wakes the thread's delivering task once, however many it puts before
//! that task runs; the task then sends each answer on the thread itself, a
//! local wake-up of its waiter, served in turn with the thread's other work
//! and in the order committed. That one wake-up comes through the thread's
//! own I/O driver (`bell.rs`), not behind the remote queue's.
//!
//! A write asked for on a thread without an inbox (tests, tools) is
//! answered from the writer's thread, as is one whose thread has stopped
//! delivering.

mod bell;

use std::cell::RefCell;
use std::io;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use tokio::sync::oneshot;

use super::StoreError;

/// What a write comes to: the rows it changed, once committed, or why not.
pub(crate) type Outcome = Result<usize, StoreError>;

type Waiter = oneshot::Sender<Outcome>;

thread_local! {
    /// This thread's inbox, while its delivering task runs.
    static HERE: RefCell<Option<Arc<Inbox>>> = const { RefCell::new(None) };
}

/// Where a write's outcome goes: its waiter, through the inbox of the
/// thread that asked if it has one.
pub(crate) struct WriteAnswer {
    waiter: Waiter,
    home: Option<Arc<Inbox>>,
}

impl WriteAnswer {
    /// An answer to `waiter`, to be delivered on the calling thread if it has
    /// an inbox.
    pub(crate) fn here(waiter: Waiter) -> WriteAnswer {
        let home = HERE.try_with(|here| here.borrow().clone()).ok().flatten();
        WriteAnswer { waiter, home }
    }

    /// Gives the waiter `outcome` (nothing if it stopped waiting).
    pub(crate) fn send(self, outcome: Outcome) {
        match self.home {
            Some(home) => home.put(self.waiter, outcome),
            None => drop(self.waiter.send(outcome)),
        }
    }
}

/// One actor thread's answers, until its delivering task takes them.
struct Inbox {
    held: Mutex<Held>,
    /// Wakes the delivering task.
    bell: bell::Bell,
    /// How many times another thread woke the delivering task.
    wakes: AtomicU64,
}

#[derive(Default)]
struct Held {
    answers: Vec<(Waiter, Outcome)>,
    /// The delivering task waits for the bell.
    asleep: bool,
    /// The task is gone: answers go straight to their waiters.
    closed: bool,
}

impl Inbox {
    fn held(&self) -> MutexGuard<'_, Held> {
        // Nothing panics while holding it; were it poisoned, what it holds
        // is still whole.
        self.held.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Holds an answer and wakes the delivering task, unless it is awake
    /// already: a batch's answers cost the thread one wake-up.
    fn put(&self, waiter: Waiter, outcome: Outcome) {
        let mut held = self.held();
        if held.closed {
            drop(held);
            drop(waiter.send(outcome));
            return;
        }
        held.answers.push((waiter, outcome));
        let asleep = std::mem::take(&mut held.asleep);
        drop(held);
        if asleep {
            self.wakes.fetch_add(1, Ordering::Relaxed);
            self.bell.ring();
        }
    }

    /// Swaps the answers held into `taken` (empty); if there were none, the
    /// next answer rings. Swapped, not moved: the two buffers keep their room
    /// batch after batch.
    fn take(&self, taken: &mut Vec<(Waiter, Outcome)>) -> bool {
        let mut held = self.held();
        if held.answers.is_empty() {
            held.asleep = true;
            return false;
        }
        std::mem::swap(&mut held.answers, taken);
        true
    }

    /// Stops holding answers; gives back those held.
    fn close(&self) -> Vec<(Waiter, Outcome)> {
        let mut held = self.held();
        held.closed = true;
        held.asleep = false;
        std::mem::take(&mut held.answers)
    }
}

/// An inbox for an actor thread, made before the thread runs: its bell is a
/// descriptor that every thread's table must hold (`bell.rs`).
pub(crate) struct Delivery {
    inbox: Arc<Inbox>,
    unheard: bell::Unheard,
}

impl Delivery {
    pub(crate) fn new() -> io::Result<Delivery> {
        let (bell, unheard) = bell::pair()?;
        let inbox = Inbox {
            held: Mutex::default(),
            bell,
            wakes: AtomicU64::new(0),
        };
        Ok(Delivery {
            inbox: Arc::new(inbox),
            unheard,
        })
    }
}

/// Gives the calling thread `delivery`'s inbox and delivers what reaches it,
/// for as long as the thread runs this task: spawn it once on each actor
/// thread. If the thread cannot listen for the bell, its answers come from
/// the writer's thread.
pub(crate) async fn deliver_here(delivery: Delivery) {
    let listening = match delivery.unheard.listen() {
        Ok(listening) => listening,
        Err(error) => return tracing::warn!(%error, "store answers reach this thread directly"),
    };
    let installed = Installed::here(delivery.inbox);
    let mut taken = Vec::new();
    loop {
        if !installed.0.take(&mut taken) {
            if let Err(error) = listening.heard().await {
                // Dropping `installed` answers the rest directly.
                return tracing::warn!(%error, "store answers reach this thread directly");
            }
            continue;
        }
        for (waiter, outcome) in taken.drain(..) {
            drop(waiter.send(outcome));
        }
    }
}

/// The thread's inbox, taken away again when the delivering task stops.
struct Installed(Arc<Inbox>);

impl Installed {
    fn here(inbox: Arc<Inbox>) -> Installed {
        HERE.with(|here| *here.borrow_mut() = Some(Arc::clone(&inbox)));
        Installed(inbox)
    }
}

impl Drop for Installed {
    fn drop(&mut self) {
        // The thread may be ending, its locals gone already.
        let _ = HERE.try_with(|here| {
            let mut here = here.borrow_mut();
            if here
                .as_ref()
                .is_some_and(|inbox| Arc::ptr_eq(inbox, &self.0))
            {
                *here = None;
            }
        });
        for (waiter, outcome) in self.0.close() {
            drop(waiter.send(outcome));
        }
    }
}

/// How many times another thread woke this thread's delivering task.
#[cfg(test)]
fn wakes_here() -> u64 {
    HERE.with(|here| {
        here.borrow()
            .as_ref()
            .map_or(0, |inbox| inbox.wakes.load(Ordering::Relaxed))
    })
}

#[cfg(test)]
mod tests {
    use std::cell::{Cell, RefCell};
    use std::rc::Rc;

    use tokio::sync::oneshot;
    use tokio::task::LocalSet;

    use super::{Delivery, HERE, WriteAnswer, deliver_here, wakes_here};

    /// An actor thread's runtime: its driver hears the bell.
    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_io()
            .build()
            .unwrap()
    }

    fn delivering() -> impl Future<Output = ()> {
        deliver_here(Delivery::new().unwrap())
    }

    /// Lets the local set run until this thread's delivering task has made
    /// its inbox.
    async fn until_delivering() {
        while HERE.with(|here| here.borrow().is_none()) {
            tokio::task::yield_now().await;
        }
    }

    /// Answers given on another thread while this one runs nothing, as the
    /// writer gives a batch's.
    fn answer_from_another_thread(answers: Vec<WriteAnswer>) {
        std::thread::scope(|scope| {
            scope.spawn(move || {
                for (rows, answer) in answers.into_iter().enumerate() {
                    answer.send(Ok(rows));
                }
            });
        });
    }

    #[test]
    fn a_batch_from_another_thread_wakes_the_asking_thread_once_and_its_waiters_in_order() {
        let (runtime, local) = (runtime(), LocalSet::new());
        local.spawn_local(delivering());
        let heard = Rc::new(RefCell::new(Vec::new()));
        let waiting = Rc::new(Cell::new(0));
        let (answers, waiters) = local.block_on(&runtime, async {
            until_delivering().await;
            let mut answers = Vec::new();
            let mut waiters = Vec::new();
            for _ in 0..100 {
                let (tx, rx) = oneshot::channel();
                answers.push(WriteAnswer::here(tx));
                let (heard, waiting) = (Rc::clone(&heard), Rc::clone(&waiting));
                waiters.push(tokio::task::spawn_local(async move {
                    waiting.set(waiting.get() + 1);
                    let rows = rx.await.unwrap().unwrap();
                    heard.borrow_mut().push(rows);
                }));
            }
            // Every waiter asleep on its answer, as a game on its commit.
            while waiting.get() < 100 {
                tokio::task::yield_now().await;
            }
            (answers, waiters)
        });
        answer_from_another_thread(answers);
        local.block_on(&runtime, async {
            for waiter in waiters {
                waiter.await.unwrap();
            }
        });
        assert_eq!(*heard.borrow(), (0..100).collect::<Vec<_>>());
        assert_eq!(
            local.block_on(&runtime, async { wakes_here() }),
            1,
            "one cross-thread wake-up for the whole batch"
        );
    }

    /// Tasks woken from other threads wait in the local set's remote queue,
    /// first in first out, as sessions woken by the lobby's answers to
    /// thousands of logins. A batch's answers must not wait behind them.
    #[test]
    fn answers_overtake_the_wake_ups_other_threads_queued_before_them() {
        const OTHERS: usize = 500;
        let (runtime, local) = (runtime(), LocalSet::new());
        local.spawn_local(delivering());
        let ran = Rc::new(RefCell::new(Vec::new()));
        let waiting = Rc::new(Cell::new(0));
        let (answer, others, tasks) = local.block_on(&runtime, async {
            until_delivering().await;
            let mut others = Vec::new();
            let mut tasks = Vec::new();
            for other in 0..=OTHERS {
                let (tx, rx) = oneshot::channel();
                others.push(tx);
                let (ran, waiting) = (Rc::clone(&ran), Rc::clone(&waiting));
                tasks.push(tokio::task::spawn_local(async move {
                    waiting.set(waiting.get() + 1);
                    let _: Result<usize, _> = rx.await.unwrap();
                    ran.borrow_mut().push(other);
                }));
            }
            // The last waits for the store, as a game on its commit.
            let answer = others.pop().map(WriteAnswer::here).unwrap();
            while waiting.get() <= OTHERS {
                tokio::task::yield_now().await;
            }
            (answer, others, tasks)
        });
        std::thread::scope(|scope| {
            scope.spawn(move || {
                for other in others {
                    other.send(Ok(0)).unwrap();
                }
                answer.send(Ok(0));
            });
        });
        local.block_on(&runtime, async {
            for task in tasks {
                task.await.unwrap();
            }
        });
        let before = ran.borrow().iter().position(|&task| task == OTHERS);
        assert!(
            before.is_some_and(|before| before < OTHERS / 2),
            "the store's answer ran after {before:?} of the {OTHERS} tasks woken before it"
        );
    }

    #[test]
    fn answers_for_a_thread_that_stopped_delivering_reach_their_waiters() {
        let (runtime, local) = (runtime(), LocalSet::new());
        local.spawn_local(delivering());
        let (held, late) = local.block_on(&runtime, async {
            until_delivering().await;
            (oneshot::channel(), oneshot::channel())
        });
        let (held_answer, late_answer) = local.block_on(&runtime, async {
            (WriteAnswer::here(held.0), WriteAnswer::here(late.0))
        });
        answer_from_another_thread(vec![held_answer]);
        drop(local);
        answer_from_another_thread(vec![late_answer]);
        assert_eq!(
            held.1.blocking_recv().unwrap(),
            Ok(0),
            "held when it stopped"
        );
        assert_eq!(late.1.blocking_recv().unwrap(), Ok(0), "given after");
    }

    #[test]
    fn an_answer_asked_for_on_a_thread_without_an_inbox_goes_straight_to_its_waiter() {
        let (tx, mut rx) = oneshot::channel();
        WriteAnswer::here(tx).send(Ok(3));
        assert_eq!(rx.try_recv().unwrap(), Ok(3));
    }
}
