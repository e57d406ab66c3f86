//! A descriptor table per worker thread, so that the open-file limit (a limit
//! on each table) caps the connections of one worker, not of the process.
//!
//! `unshare(CLONE_FILES)` gives the calling thread a private copy of the
//! process's table. From then on a descriptor number means one thing on that
//! thread and another elsewhere, so the daemon keeps three rules:
//!
//! 1. **Every wake-up descriptor exists everywhere.** Threads wake each other's
//!    runtimes by writing to the sleeper's eventfd *by number, in the waker's
//!    table*; tokio's signal handler writes to its pipe the same way on
//!    whichever thread the signal lands; other threads ring each actor
//!    thread's bell (`homed/bell.rs`). So every worker's runtime, the
//!    bells, the main runtime (and with it tokio's signal pipe) are created
//!    while all threads still share one table, and only then does each worker
//!    copy it: the copy holds all of them under the same numbers.
//! 2. **A connection never leaves the worker that opened it.** In `per_worker`
//!    mode each worker binds its own listening socket (`SO_REUSEPORT`) and
//!    runs the sessions it accepts itself; sessions talk to games and the lobby
//!    only through actor messages, which carry no descriptors.
//! 3. **What the workers copy is only what is open before the store.** The
//!    copy is taken before the store opens, so no worker holds a duplicate of
//!    the database (closing one would drop the process's POSIX locks on it) and
//!    threads that use files (the store's, the password and engine pools)
//!    stay in the shared table.
//!
//! Threads a worker starts later (tokio's blocking pool) share its table.
//!
//! `descriptor_tables: auto` becomes `per_worker` only in `flipd` itself
//! (`Config::resolved`, when the open-file limit would cap
//! `max_connections`); a `DaemonThread` never resolves it, so there it
//! means one shared table: in a process that is not only flipd the copies
//! would keep other threads' files open. Linux lets only sockets of the same effective user join a
//! `SO_REUSEPORT` group, so another user cannot take a share of flipd's
//! connections; and flipd binds the port alone once before its sockets
//! share it, so a second daemon of the same user is told the port is in
//! use rather than silently taking some of the connections.

use std::io;

/// Gives the calling thread a descriptor table of its own, a copy of the one
/// it shared so far.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
pub fn unshare() -> io::Result<()> {
    // SAFETY: the call changes no memory; it copies the descriptor table. What
    // makes it sound for the descriptors Rust code owns is the module's rules:
    // every descriptor in use elsewhere (wake-ups, the signal pipe) is in the
    // copy under its number, and no descriptor opened after the copy crosses to
    // another thread.
    let done = unsafe { libc::unshare(libc::CLONE_FILES) };
    if done == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Only Linux has per-thread descriptor tables.
#[cfg(not(target_os = "linux"))]
pub fn unshare() -> io::Result<()> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "a descriptor table per worker needs Linux",
    ))
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    /// A descriptor opened after the split exists on its thread only, and one
    /// opened before it exists on both.
    #[test]
    fn a_thread_with_its_own_table_keeps_new_descriptors_to_itself() {
        let dir = std::env::temp_dir().join(format!("flipd-tables-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (before_path, after_path) = (dir.join("before"), dir.join("after"));
        let before = std::fs::File::create(&before_path).unwrap();
        let before_fd = std::os::fd::AsRawFd::as_raw_fd(&before);
        let (opened_tx, opened_rx) = std::sync::mpsc::channel();
        let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
        let after_for_thread = after_path.clone();
        let thread = std::thread::spawn(move || {
            unshare().unwrap();
            let after = std::fs::File::create(&after_for_thread).unwrap();
            let after_fd = std::os::fd::AsRawFd::as_raw_fd(&after);
            opened_tx.send((after_fd, names(before_fd))).unwrap();
            // Keep `after` open until the other thread has looked.
            let _ = done_rx.recv();
        });
        let (after_fd, before_seen_there) = opened_rx.recv().unwrap();
        assert_eq!(
            before_seen_there,
            Some(before_path),
            "the copy holds what was open before"
        );
        assert_ne!(
            names(after_fd),
            Some(after_path),
            "what the thread opened is not here"
        );
        done_tx.send(()).unwrap();
        thread.join().unwrap();
        drop(before);
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// The file descriptor `fd` of the calling thread's table names.
    fn names(fd: i32) -> Option<std::path::PathBuf> {
        std::fs::read_link(format!("/proc/thread-self/fd/{fd}")).ok()
    }
}
