//! How another thread wakes an actor thread's serving task: through that
//! thread's own I/O driver, not its `LocalSet`'s remote queue.
//!
//! A byte on a socket pair is seen by the thread's I/O driver, which runs
//! after every 61 tasks at most, and the driver wakes the serving task from
//! the thread itself: into the local queue.
//!
//! Both ends are made before the thread runs, while every thread shares one
//! descriptor table (`descriptor_tables.rs`, rule 1): other threads ring by
//! number in their tables, the thread listens in its own.
//!
//! Without Unix sockets the bell is a `Notify`: a wake-up through the
//! remote queue, as before.

use std::io;

/// The ringing end, for other threads.
pub(super) struct Bell(imp::Ring);

/// The thread's end, before the thread runs.
pub(super) struct Unheard(imp::Unheard);

/// The thread's end, listening on the thread's driver.
pub(super) struct Listening(imp::Listening);

/// A bell and its listening end.
pub(super) fn pair() -> io::Result<(Bell, Unheard)> {
    let (ring, unheard) = imp::pair()?;
    Ok((Bell(ring), Unheard(unheard)))
}

impl Bell {
    /// Wakes the listening thread, now or once it listens again; false if
    /// the bell is broken and the thread will not hear it.
    pub(super) fn ring(&self) -> bool {
        self.0.ring()
    }
}

impl Unheard {
    /// Listens on the calling thread's runtime (call it on the thread).
    pub(super) fn listen(self) -> io::Result<Listening> {
        self.0.listen().map(Listening)
    }
}

impl Listening {
    /// Waits until the bell has rung since the last call.
    pub(super) async fn heard(&self) -> io::Result<()> {
        self.0.heard().await
    }
}

#[cfg(unix)]
mod imp {
    use std::io::{self, Write};
    use std::os::unix::net::UnixStream;

    pub(super) struct Ring(UnixStream);
    pub(super) struct Unheard(UnixStream);
    pub(super) struct Listening(tokio::net::UnixStream);

    pub(super) fn pair() -> io::Result<(Ring, Unheard)> {
        let (ring, heard) = UnixStream::pair()?;
        ring.set_nonblocking(true)?;
        heard.set_nonblocking(true)?;
        Ok((Ring(ring), Unheard(heard)))
    }

    impl Ring {
        pub(super) fn ring(&self) -> bool {
            match (&self.0).write(&[1]) {
                Ok(written) => written == 1,
                // A full socket means bytes not read yet: the thread wakes anyway.
                Err(e) => e.kind() == io::ErrorKind::WouldBlock,
            }
        }
    }

    impl Unheard {
        pub(super) fn listen(self) -> io::Result<Listening> {
            tokio::net::UnixStream::from_std(self.0).map(Listening)
        }
    }

    impl Listening {
        pub(super) async fn heard(&self) -> io::Result<()> {
            loop {
                self.0.readable().await?;
                if drained(&self.0)? {
                    return Ok(());
                }
            }
        }
    }

    /// Reads every byte rung; whether there was any. A would-block read
    /// clears the driver's readiness, so the next `readable` waits.
    fn drained(socket: &tokio::net::UnixStream) -> io::Result<bool> {
        let mut rung = false;
        let mut bytes = [0u8; 64];
        loop {
            match socket.try_read(&mut bytes) {
                Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
                Ok(_) => rung = true,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(rung),
                Err(e) => return Err(e),
            }
        }
    }
}

#[cfg(not(unix))]
mod imp {
    use std::io;
    use std::sync::Arc;

    use tokio::sync::Notify;

    pub(super) struct Ring(Arc<Notify>);
    pub(super) struct Unheard(Arc<Notify>);
    pub(super) struct Listening(Arc<Notify>);

    pub(super) fn pair() -> io::Result<(Ring, Unheard)> {
        let notify = Arc::new(Notify::new());
        Ok((Ring(Arc::clone(&notify)), Unheard(notify)))
    }

    impl Ring {
        pub(super) fn ring(&self) -> bool {
            self.0.notify_one();
            true
        }
    }

    impl Unheard {
        pub(super) fn listen(self) -> io::Result<Listening> {
            Ok(Listening(self.0))
        }
    }

    impl Listening {
        pub(super) async fn heard(&self) -> io::Result<()> {
            self.0.notified().await;
            Ok(())
        }
    }
}
