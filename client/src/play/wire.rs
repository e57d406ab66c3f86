//! A connection's two halves, plain TCP or TLS over it: the reader thread
//! reads [`Incoming`] while any thread writes [`Outgoing`] under the link's
//! lock, as with a TCP socket cloned in two.
//!
//! TLS state cannot be cloned, so both halves share it behind a mutex that
//! is never held while waiting on the network: the reader waits for bytes on
//! its own clone of the socket and only then takes the lock to decrypt them,
//! and the writer takes it to encrypt a line and send the records. So a
//! reader blocked on a quiet server never holds up a move.

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use rustls::ClientConnection;

/// The TLS state both halves share, with the socket records are written to.
#[derive(Debug)]
struct Tls {
    connection: ClientConnection,
    socket: TcpStream,
}

impl Tls {
    /// Sends every record rustls has ready.
    fn send_records(&mut self) -> io::Result<()> {
        while self.connection.wants_write() {
            self.connection.write_tls(&mut self.socket)?;
        }
        self.socket.flush()
    }
}

/// Both halves' hold on the TLS state.
#[derive(Clone, Debug)]
struct Shared(Arc<Mutex<Tls>>);

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Tls> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The writing half.
#[derive(Debug)]
pub struct Outgoing {
    socket: TcpStream,
    tls: Option<Shared>,
}

/// The reading half.
#[derive(Debug)]
pub struct Incoming {
    socket: TcpStream,
    tls: Option<Shared>,
}

/// A plain connection's halves.
pub fn plain(socket: TcpStream) -> io::Result<(Outgoing, Incoming)> {
    let reading = socket.try_clone()?;
    Ok((
        Outgoing { socket, tls: None },
        Incoming {
            socket: reading,
            tls: None,
        },
    ))
}

/// The halves of a TLS connection whose handshake is done.
pub fn tls(connection: ClientConnection, socket: TcpStream) -> io::Result<(Outgoing, Incoming)> {
    let (reading, writing) = (socket.try_clone()?, socket.try_clone()?);
    let shared = Shared(Arc::new(Mutex::new(Tls {
        connection,
        socket: writing,
    })));
    Ok((
        Outgoing {
            socket,
            tls: Some(shared.clone()),
        },
        Incoming {
            socket: reading,
            tls: Some(shared),
        },
    ))
}

impl Outgoing {
    /// How long a read on this connection may wait (the socket's, so the
    /// reading half's too).
    pub fn set_read_timeout(&self, wait: Option<Duration>) -> io::Result<()> {
        self.socket.set_read_timeout(wait)
    }
}

impl Write for Outgoing {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        let Some(tls) = &self.tls else {
            return self.socket.write(bytes);
        };
        let mut tls = tls.lock();
        let taken = tls.connection.writer().write(bytes)?;
        tls.send_records()?;
        Ok(taken)
    }

    fn flush(&mut self) -> io::Result<()> {
        match &self.tls {
            None => self.socket.flush(),
            Some(tls) => tls.lock().send_records(),
        }
    }
}

impl Incoming {
    /// How long a read may wait.
    pub fn set_read_timeout(&self, wait: Option<Duration>) -> io::Result<()> {
        self.socket.set_read_timeout(wait)
    }

    /// Takes `bytes` read from the socket (none: its end) into the TLS
    /// state, answering what the server's records ask for (an alert, a key
    /// update).
    fn take_in(tls: &Shared, mut bytes: &[u8]) -> io::Result<()> {
        let mut tls = tls.lock();
        loop {
            let ended = bytes.is_empty();
            tls.connection.read_tls(&mut bytes)?;
            let state = tls.connection.process_new_packets();
            // What rustls says to the server on an error (an alert) goes
            // before the error is reported.
            tls.send_records()?;
            state.map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
            if bytes.is_empty() || ended {
                return Ok(());
            }
        }
    }
}

impl Read for Incoming {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let Some(tls) = &self.tls else {
            return self.socket.read(out);
        };
        let mut raw = [0u8; 4096];
        loop {
            match tls.lock().connection.reader().read(out) {
                Ok(read) => return Ok(read),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) => return Err(e),
            }
            // Not under the lock: the writer goes on meanwhile.
            let read = self.socket.read(&mut raw)?;
            Incoming::take_in(tls, raw.get(..read).unwrap_or_default())?;
        }
    }
}
