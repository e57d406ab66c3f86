//! The password threads: a few std threads that hash and check passwords,
//! off the actor threads (a hash takes tens of milliseconds and 19 MiB by
//! design), fed by one bounded queue in three lanes served in order:
//!
//! 1. logins from addresses with no wrong password on record (the owners,
//!    most likely),
//! 2. other logins (addresses that failed lately: attackers among them),
//! 3. registrations.
//!
//! So a flood of registrations or of guesses never delays an owner's login
//! more than the hashes already running. At most `bound` jobs wait; one
//! more is turned away at once (`HashError::Busy`, with an estimate of the
//! wait), unless a job of a later lane waits, which is turned away in its
//! place. A job whose asker has gone (its connection closed) is skipped.
//! Answers come back over a tokio oneshot channel, so the asker awaits
//! them without holding a thread.

use std::collections::VecDeque;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

/// Which lane a job waits in (see the module docs), first served first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Lane {
    /// A login from an address with no failure on record.
    Login,
    /// A login from an address that failed lately.
    Retry,
    /// Hashing a new name's password.
    Registration,
}

/// Why a job was not done.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HashError {
    /// The queue is full: try again in about this long.
    Busy(Duration),
    /// The pool has stopped (the daemon is shutting down), or the job failed.
    Stopped,
}

/// A job: called with `Ok` to do it (answers whether it ran: its asker may
/// have gone), with `Err(wait)` to turn it away.
type Job = Box<dyn FnOnce(Result<(), Duration>) -> bool + Send>;

/// What a hash is taken to cost until one has been measured.
const FIRST_GUESS: Duration = Duration::from_millis(50);

/// The jobs waiting, by lane.
#[derive(Default)]
struct Queue {
    logins: VecDeque<Job>,
    retries: VecDeque<Job>,
    registrations: VecDeque<Job>,
    closed: bool,
}

impl Queue {
    fn lane(&mut self, lane: Lane) -> &mut VecDeque<Job> {
        match lane {
            Lane::Login => &mut self.logins,
            Lane::Retry => &mut self.retries,
            Lane::Registration => &mut self.registrations,
        }
    }

    fn len(&self) -> usize {
        self.logins.len() + self.retries.len() + self.registrations.len()
    }

    /// The first job of the first lane.
    fn next(&mut self) -> Option<Job> {
        self.logins
            .pop_front()
            .or_else(|| self.retries.pop_front())
            .or_else(|| self.registrations.pop_front())
    }

    /// The newest job of the last lane after `lane`, taken out to make room.
    fn newest_after(&mut self, lane: Lane) -> Option<Job> {
        [Lane::Registration, Lane::Retry]
            .into_iter()
            .filter(|later| *later > lane)
            .find_map(|later| self.lane(later).pop_back())
    }
}

struct Inner {
    queue: Mutex<Queue>,
    ready: Condvar,
    bound: usize,
    threads: usize,
    /// The time a job takes, averaged (nanoseconds), for the wait told.
    average_ns: AtomicU64,
}

impl Inner {
    fn lock(&self) -> MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// About how long `waiting` jobs take to get through the threads.
    fn wait_for(&self, waiting: usize) -> Duration {
        let each = Duration::from_nanos(self.average_ns.load(Ordering::Relaxed));
        let rounds = u32::try_from(waiting.div_ceil(self.threads.max(1)) + 1).unwrap_or(u32::MAX);
        each.saturating_mul(rounds)
    }

    fn measured(&self, took: Duration) {
        let took = u64::try_from(took.as_nanos()).unwrap_or(u64::MAX);
        let before = self.average_ns.load(Ordering::Relaxed);
        // Seven parts the old average, one part the new: steady, and quick
        // enough to follow a machine that gets busier.
        let average = (before / 8).saturating_mul(7).saturating_add(took / 8);
        self.average_ns.store(average, Ordering::Relaxed);
    }
}

/// The pool (see the module docs). Dropping it stops the threads: jobs
/// still waiting are dropped, and their askers told `HashError::Stopped`.
pub struct HashPool {
    inner: Arc<Inner>,
}

impl HashPool {
    /// Starts `threads` threads (at least one) that take at most `bound`
    /// waiting jobs (at least one).
    pub fn start(threads: usize, bound: usize) -> std::io::Result<HashPool> {
        let inner = Arc::new(Inner {
            queue: Mutex::default(),
            ready: Condvar::new(),
            bound: bound.max(1),
            threads: threads.max(1),
            average_ns: AtomicU64::new(u64::try_from(FIRST_GUESS.as_nanos()).unwrap_or(0)),
        });
        for index in 0..inner.threads {
            let inner = Arc::clone(&inner);
            std::thread::Builder::new()
                .name(format!("password-{index}"))
                .spawn(move || serve(&inner))?;
        }
        Ok(HashPool { inner })
    }

    /// Does `work` on a pool thread, after the jobs of earlier lanes and
    /// those already waiting in its own.
    pub async fn run<T, W>(&self, lane: Lane, work: W) -> Result<T, HashError>
    where
        T: Send + 'static,
        W: FnOnce() -> T + Send + 'static,
    {
        let (tx, rx) = tokio::sync::oneshot::channel::<Result<T, Duration>>();
        let job: Job = Box::new(move |go| match go {
            Ok(()) if tx.is_closed() => false,
            Ok(()) => {
                let _ = tx.send(Ok(work()));
                true
            }
            Err(wait) => {
                let _ = tx.send(Err(wait));
                false
            }
        });
        self.submit(lane, job)?;
        match rx.await {
            Ok(Ok(done)) => Ok(done),
            Ok(Err(wait)) => Err(HashError::Busy(wait)),
            Err(_) => Err(HashError::Stopped),
        }
    }

    fn submit(&self, lane: Lane, job: Job) -> Result<(), HashError> {
        let mut queue = self.inner.lock();
        if queue.closed {
            return Err(HashError::Stopped);
        }
        let mut turned_away = None;
        if queue.len() >= self.inner.bound {
            let wait = self.inner.wait_for(queue.len());
            match queue.newest_after(lane) {
                Some(later) => turned_away = Some((later, wait)),
                None => return Err(HashError::Busy(wait)),
            }
        }
        queue.lane(lane).push_back(job);
        drop(queue);
        self.inner.ready.notify_one();
        if let Some((later, wait)) = turned_away {
            later(Err(wait));
        }
        Ok(())
    }

    /// Jobs waiting now.
    #[cfg(test)]
    pub fn waiting(&self) -> usize {
        self.inner.lock().len()
    }
}

impl Drop for HashPool {
    fn drop(&mut self) {
        let waiting = {
            let mut queue = self.inner.lock();
            queue.closed = true;
            [Lane::Login, Lane::Retry, Lane::Registration]
                .map(|lane| std::mem::take(queue.lane(lane)))
        };
        self.inner.ready.notify_all();
        drop(waiting);
    }
}

/// A pool thread: takes the first job of the first lane until the pool
/// stops. A job that panics fails alone (its asker hears `Stopped`).
fn serve(inner: &Inner) {
    loop {
        let job = {
            let mut queue = inner.lock();
            loop {
                if queue.closed {
                    return;
                }
                if let Some(job) = queue.next() {
                    break job;
                }
                queue = inner
                    .ready
                    .wait(queue)
                    .unwrap_or_else(PoisonError::into_inner);
            }
        };
        let began = Instant::now();
        if let Ok(true) = catch_unwind(AssertUnwindSafe(|| job(Ok(())))) {
            inner.measured(began.elapsed());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicBool;
    use std::sync::mpsc;

    /// A guard against a hang: the jobs' order is the assertion, never how
    /// soon they run.
    const WITHIN: Duration = Duration::from_secs(60);

    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
    }

    /// Holds the pool's one thread with a job until the sender is used.
    fn hold(pool: &HashPool) -> mpsc::Sender<()> {
        let (release, held) = mpsc::channel::<()>();
        let (started_tx, started) = mpsc::channel();
        let blocker: Job = Box::new(move |go| {
            if go.is_ok() {
                let _ = started_tx.send(());
                let _ = held.recv();
            }
            true
        });
        pool.submit(Lane::Login, blocker).unwrap();
        started.recv_timeout(WITHIN).unwrap();
        release
    }

    /// A job that logs its tag and whether it ran (or was turned away).
    fn logged(tag: &'static str, log: &mpsc::Sender<(&'static str, bool)>) -> Job {
        let log = log.clone();
        Box::new(move |go| {
            let _ = log.send((tag, go.is_ok()));
            go.is_ok()
        })
    }

    #[test]
    fn logins_go_before_retries_and_registrations_whatever_came_first() {
        let pool = HashPool::start(1, 8).unwrap();
        let release = hold(&pool);
        let (log, done) = mpsc::channel();
        pool.submit(Lane::Registration, logged("registration", &log))
            .unwrap();
        pool.submit(Lane::Retry, logged("retry", &log)).unwrap();
        pool.submit(Lane::Login, logged("login", &log)).unwrap();
        release.send(()).unwrap();
        let order: Vec<_> = (0..3).map(|_| done.recv_timeout(WITHIN).unwrap()).collect();
        assert_eq!(
            order,
            [("login", true), ("retry", true), ("registration", true)]
        );
    }

    #[test]
    fn a_full_queue_turns_away_the_newest_later_job_or_the_newcomer() {
        let pool = HashPool::start(1, 2).unwrap();
        let release = hold(&pool);
        let (log, done) = mpsc::channel();
        pool.submit(Lane::Registration, logged("registration", &log))
            .unwrap();
        pool.submit(Lane::Retry, logged("retry", &log)).unwrap();
        // Full: a login takes the registration's place, which hears so.
        pool.submit(Lane::Login, logged("login", &log)).unwrap();
        assert_eq!(done.recv_timeout(WITHIN).unwrap(), ("registration", false));
        // Nothing later waits now: a registration is turned away itself.
        let refused = pool.submit(Lane::Registration, logged("late", &log));
        assert!(matches!(refused, Err(HashError::Busy(_))), "{refused:?}");
        release.send(()).unwrap();
        let rest: Vec<_> = (0..2).map(|_| done.recv_timeout(WITHIN).unwrap()).collect();
        assert_eq!(rest, [("login", true), ("retry", true)]);
        assert!(done.try_recv().is_err(), "the late one never ran");
    }

    #[test]
    fn a_job_whose_asker_went_is_skipped() {
        let (rt, pool) = (runtime(), HashPool::start(1, 4).unwrap());
        let release = hold(&pool);
        let ran = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&ran);
        let gone = pool.run(Lane::Login, move || flag.store(true, Ordering::SeqCst));
        // Polled once (queued), then dropped: its connection closed.
        let timed_out = rt.block_on(async { tokio::time::timeout(Duration::ZERO, gone).await });
        assert!(timed_out.is_err());
        assert_eq!(pool.waiting(), 1, "it was queued");
        release.send(()).unwrap();
        assert_eq!(rt.block_on(pool.run(Lane::Login, || 7)), Ok(7));
        assert!(!ran.load(Ordering::SeqCst));
    }

    #[test]
    fn a_stopped_pool_answers_stopped() {
        let rt = runtime();
        let pool = HashPool::start(1, 4).unwrap();
        assert_eq!(rt.block_on(pool.run(Lane::Login, || 7)), Ok(7));
        let inner = Arc::clone(&pool.inner);
        drop(pool);
        let stopped = HashPool { inner };
        assert_eq!(
            rt.block_on(stopped.run(Lane::Login, || 8)),
            Err(HashError::Stopped)
        );
    }
}
