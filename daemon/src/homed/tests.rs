use std::cell::{Cell, RefCell};
use std::future::poll_fn;
use std::rc::Rc;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::task::Poll;
use std::time::Duration;

use tokio::sync::oneshot;
use tokio::task::LocalSet;

use super::{HERE, Home, Homed, rings_here, serve_here};

/// The homes are the process's: a test that gives one up while its task's
/// waker is about would let another test's home hear that task. One test
/// at a time.
fn one_at_a_time() -> MutexGuard<'static, ()> {
    static SERIAL: Mutex<()> = Mutex::new(());
    SERIAL.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Waits for `task`, failing rather than hanging if it is never woken.
async fn finished(task: tokio::task::JoinHandle<()>) {
    tokio::time::timeout(Duration::from_secs(30), task)
        .await
        .expect("the task was woken")
        .unwrap();
}

/// An actor thread's runtime: its driver hears the bell.
fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .enable_time()
        .build()
        .unwrap()
}

fn serving() -> impl Future<Output = ()> {
    serve_here(Home::new().unwrap())
}

/// Lets the local set run until this thread is a home.
async fn until_home() {
    while HERE.with(Cell::get).is_none() {
        tokio::task::yield_now().await;
    }
}

/// Lets the local set run until `count` tasks wait.
async fn until_waiting(waiting: &Cell<usize>, count: usize) {
    while waiting.get() < count {
        tokio::task::yield_now().await;
    }
}

/// Waits for `rx`, counted in `waiting` meanwhile, then notes the mark it
/// gets in `heard`.
fn waits(
    rx: oneshot::Receiver<usize>,
    heard: &Rc<RefCell<Vec<usize>>>,
    waiting: &Rc<Cell<usize>>,
) -> impl Future<Output = ()> + Unpin + 'static {
    let (heard, waiting) = (Rc::clone(heard), Rc::clone(waiting));
    Box::pin(async move {
        waiting.set(waiting.get() + 1);
        let mark = rx.await.unwrap();
        heard.borrow_mut().push(mark);
    })
}

/// A homed task that `waits`.
fn homed_waiter(
    rx: oneshot::Receiver<usize>,
    heard: &Rc<RefCell<Vec<usize>>>,
    waiting: &Rc<Cell<usize>>,
) -> tokio::task::JoinHandle<()> {
    tokio::task::spawn_local(Homed(waits(rx, heard, waiting)))
}

/// Sends each of `senders` its index, on another thread while this one runs
/// nothing, as the store's writer answers a batch.
fn send_from_another_thread(senders: Vec<oneshot::Sender<usize>>) {
    std::thread::scope(|scope| {
        scope.spawn(move || {
            for (mark, sender) in senders.into_iter().enumerate() {
                sender.send(mark).unwrap();
            }
        });
    });
}

#[test]
fn tasks_woken_from_another_thread_ring_their_home_once_and_run_in_order() {
    let _serial = one_at_a_time();
    let (runtime, local) = (runtime(), LocalSet::new());
    local.spawn_local(serving());
    let heard = Rc::new(RefCell::new(Vec::new()));
    let waiting = Rc::new(Cell::new(0));
    let (senders, tasks) = local.block_on(&runtime, async {
        until_home().await;
        let (senders, tasks): (Vec<_>, Vec<_>) = (0..100)
            .map(|_| {
                let (tx, rx) = oneshot::channel();
                (tx, homed_waiter(rx, &heard, &waiting))
            })
            .unzip();
        // Every task asleep, as games on their commits.
        until_waiting(&waiting, 100).await;
        (senders, tasks)
    });
    send_from_another_thread(senders);
    local.block_on(&runtime, async {
        for task in tasks {
            finished(task).await;
        }
    });
    assert_eq!(*heard.borrow(), (0..100).collect::<Vec<_>>());
    assert_eq!(
        local.block_on(&runtime, async { rings_here() }),
        1,
        "one ring for all the wake-ups"
    );
}

/// Tasks woken from other threads wait in the local set's remote queue,
/// first in first out, as sessions woken by the lobby's answers to thousands
/// of logins. A homed task must not wait behind them.
#[test]
fn a_homed_task_overtakes_the_wake_ups_other_threads_queued_before_its_own() {
    let _serial = one_at_a_time();
    const OTHERS: usize = 500;
    let (runtime, local) = (runtime(), LocalSet::new());
    local.spawn_local(serving());
    let ran = Rc::new(RefCell::new(Vec::new()));
    let waiting = Rc::new(Cell::new(0));
    let (senders, tasks) = local.block_on(&runtime, async {
        until_home().await;
        let mut senders = Vec::new();
        let mut tasks = Vec::new();
        for _ in 0..OTHERS {
            let (tx, rx) = oneshot::channel();
            senders.push(tx);
            tasks.push(tokio::task::spawn_local(waits(rx, &ran, &waiting)));
        }
        // The last is homed, and woken last.
        let (tx, rx) = oneshot::channel();
        senders.push(tx);
        tasks.push(homed_waiter(rx, &ran, &waiting));
        until_waiting(&waiting, OTHERS + 1).await;
        (senders, tasks)
    });
    send_from_another_thread(senders);
    local.block_on(&runtime, async {
        for task in tasks {
            finished(task).await;
        }
    });
    let before = ran.borrow().iter().position(|&mark| mark == OTHERS);
    assert!(
        before.is_some_and(|before| before < OTHERS / 2),
        "the homed task ran after {before:?} of the {OTHERS} tasks woken before it"
    );
}

#[test]
fn a_waker_cloned_to_another_thread_wakes_its_task_by_value_and_by_reference() {
    let _serial = one_at_a_time();
    let (runtime, local) = (runtime(), LocalSet::new());
    local.spawn_local(serving());
    let polls = Rc::new(Cell::new(0));
    let counted = Rc::clone(&polls);
    local.block_on(&runtime, async move {
        until_home().await;
        let task = tokio::task::spawn_local(Homed(Box::pin(poll_fn(move |cx| {
            counted.set(counted.get() + 1);
            match counted.get() {
                // Woken once by reference, then by value, from another thread.
                1 | 2 => {
                    let waker = cx.waker().clone();
                    let by_value = counted.get() == 2;
                    std::thread::spawn(move || {
                        if by_value {
                            waker.wake();
                        } else {
                            waker.wake_by_ref();
                        }
                    });
                    Poll::Pending
                }
                _ => Poll::Ready(()),
            }
        }))));
        finished(task).await;
        assert_eq!(rings_here(), 2, "each wake-up rang the home");
    });
    assert_eq!(polls.get(), 3);
}

#[test]
fn a_homed_task_woken_on_its_own_thread_is_woken_there_without_a_ring() {
    let _serial = one_at_a_time();
    let (runtime, local) = (runtime(), LocalSet::new());
    local.spawn_local(serving());
    local.block_on(&runtime, async {
        until_home().await;
        let heard = Rc::new(RefCell::new(Vec::new()));
        let waiting = Rc::new(Cell::new(0));
        let (tx, rx) = oneshot::channel();
        let task = homed_waiter(rx, &heard, &waiting);
        until_waiting(&waiting, 1).await;
        tx.send(7).unwrap();
        finished(task).await;
        assert_eq!(*heard.borrow(), vec![7]);
        assert_eq!(rings_here(), 0);
    });
}

#[test]
fn tasks_of_a_home_that_stopped_serving_are_woken_the_plain_way() {
    let _serial = one_at_a_time();
    let (runtime, local) = (runtime(), LocalSet::new());
    let server = local.spawn_local(serving());
    let heard = Rc::new(RefCell::new(Vec::new()));
    let waiting = Rc::new(Cell::new(0));
    let (tx, task) = local.block_on(&runtime, async {
        until_home().await;
        let (tx, rx) = oneshot::channel();
        let task = homed_waiter(rx, &heard, &waiting);
        until_waiting(&waiting, 1).await;
        server.abort();
        while HERE.with(Cell::get).is_some() {
            tokio::task::yield_now().await;
        }
        (tx, task)
    });
    send_from_another_thread(vec![tx]);
    local.block_on(&runtime, finished(task));
    assert_eq!(*heard.borrow(), vec![0]);
}

#[test]
fn a_homed_future_on_a_thread_that_is_no_home_is_woken_the_plain_way() {
    let _serial = one_at_a_time();
    let (runtime, local) = (runtime(), LocalSet::new());
    let heard = Rc::new(RefCell::new(Vec::new()));
    let waiting = Rc::new(Cell::new(0));
    let (tx, task) = local.block_on(&runtime, async {
        let (tx, rx) = oneshot::channel();
        let task = homed_waiter(rx, &heard, &waiting);
        until_waiting(&waiting, 1).await;
        (tx, task)
    });
    send_from_another_thread(vec![tx]);
    local.block_on(&runtime, finished(task));
    assert_eq!(*heard.borrow(), vec![0]);
}
