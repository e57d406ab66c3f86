//! A homed task's waker: tokio's own waker of the task, under a vtable that
//! names the task's home. No allocation and no field: the home is which of
//! `HOMES` static vtables the waker carries, the task is tokio's pointer.
//!
//! Every function here only ever hands a homed waker's data back to tokio's
//! vtable, the one it came from: a homed waker is made (`homed`) only from a
//! waker whose vtable is tokio's, learnt once from a tokio task's own waker
//! and never changed, and each function below rebuilds that tokio waker with
//! the same data before it clones, wakes or drops it. Each homed waker owns
//! exactly the reference its tokio waker would own.

#![allow(unsafe_code)]

use std::mem::ManuallyDrop;
use std::ptr;
use std::sync::OnceLock;
use std::task::{RawWaker, RawWakerVTable, Waker};

/// How many actor threads can be homes at once; a thread beyond them runs
/// its tasks as plain tokio tasks.
pub(super) const HOMES: usize = 64;

/// tokio's waker vtable, one for all its tasks.
static TOKIO: OnceLock<&'static RawWakerVTable> = OnceLock::new();

/// Learns tokio's vtable from a tokio task's own waker; false if `waker`'s
/// is another (then nothing is homed by it).
pub(super) fn learn(waker: &Waker) -> bool {
    let vtable = waker.vtable();
    ptr::eq(*TOKIO.get_or_init(|| vtable), vtable)
}

/// `waker`, a tokio task's, as home `home`'s: borrowed as `waker` is, so
/// never dropped. `None` if it is not a tokio task's waker or `home` is out
/// of range: the task is then woken as tokio wakes it.
pub(super) fn homed(waker: &Waker, home: usize) -> Option<ManuallyDrop<Waker>> {
    let tokio = TOKIO.get()?;
    if !ptr::eq(waker.vtable(), *tokio) {
        return None;
    }
    let vtable = VTABLES.get(home)?;
    // SAFETY: `waker.data()` is a tokio task's, and every function of
    // `vtable` treats it as tokio's vtable does (the module's note). The
    // result is never dropped, so it takes no reference of its own.
    Some(ManuallyDrop::new(unsafe {
        Waker::new(waker.data(), vtable)
    }))
}

/// The vtable of every homed waker's data; set before any homed waker exists.
fn tokio() -> &'static RawWakerVTable {
    match TOKIO.get() {
        Some(vtable) => vtable,
        None => unreachable!("a homed waker exists only once tokio's vtable is known"),
    }
}

/// The tokio waker a homed waker's `data` stands for, borrowed.
///
/// # Safety
/// `data` is a live homed waker's.
unsafe fn borrowed(data: *const ()) -> ManuallyDrop<Waker> {
    // SAFETY: the caller's; not dropped, so no reference is taken or given.
    ManuallyDrop::new(unsafe { Waker::new(data, tokio()) })
}

/// The tokio waker a homed waker's `data` stands for, taking over its
/// reference.
///
/// # Safety
/// `data` is a homed waker's that is being consumed.
unsafe fn owned(data: *const ()) -> Waker {
    // SAFETY: the caller's: the homed waker's reference passes to this one.
    unsafe { Waker::new(data, tokio()) }
}

/// # Safety
/// Called by `Waker` with a homed waker's data.
unsafe fn clone<const H: usize>(data: *const ()) -> RawWaker {
    // SAFETY: called on a live homed waker.
    let copy = ManuallyDrop::new(Waker::clone(&*unsafe { borrowed(data) }));
    // Its reference passes to the returned waker, homed if tokio's clone
    // is tokio's again, as it always is; if not, it stays as made.
    match VTABLES.get(H) {
        Some(vtable) if ptr::eq(copy.vtable(), tokio()) => RawWaker::new(copy.data(), vtable),
        _ => RawWaker::new(copy.data(), copy.vtable()),
    }
}

/// # Safety
/// Called by `Waker` with a homed waker's data, which it consumes.
unsafe fn wake<const H: usize>(data: *const ()) {
    // SAFETY: the homed waker is consumed.
    super::wake(H, unsafe { owned(data) });
}

/// # Safety
/// Called by `Waker` with a live homed waker's data.
unsafe fn wake_by_ref<const H: usize>(data: *const ()) {
    // SAFETY: called on a live homed waker.
    let waker = unsafe { borrowed(data) };
    if super::is_home(H) {
        waker.wake_by_ref();
    } else {
        super::post(H, Waker::clone(&*waker));
    }
}

/// # Safety
/// Called by `Waker` with a homed waker's data, which it consumes.
unsafe fn drop_waker(data: *const ()) {
    // SAFETY: the homed waker is consumed.
    drop(unsafe { owned(data) });
}

const fn vtable<const H: usize>() -> RawWakerVTable {
    RawWakerVTable::new(clone::<H>, wake::<H>, wake_by_ref::<H>, drop_waker)
}

macro_rules! vtables {
    ($($home:literal)*) => { [$(vtable::<$home>()),*] };
}

/// One vtable a home: the vtable's address is the waker's home.
static VTABLES: [RawWakerVTable; HOMES] = vtables!(
    0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31
    32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51 52 53 54 55 56 57 58 59 60 61 62 63
);
