//! A session's connection: a plain TCP socket, or TLS over one (the TLS
//! port, `player_tls.rs`). The session reads and writes it the same way
//! either way: the protocol inside TLS is the plain port's, byte for byte.
//! The TLS state is boxed: a plain connection's session stays as small as
//! before, and only a TLS connection pays for rustls's buffers.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio_rustls::server::TlsStream;

/// The client's connection (see the module docs).
pub enum Socket {
    /// The plain port.
    Plain(TcpStream),
    /// The TLS port, after the handshake.
    Tls(Box<TlsStream<TcpStream>>),
}

impl Socket {
    /// The TCP socket under it.
    pub fn tcp(&self) -> &TcpStream {
        match self {
            Socket::Plain(stream) => stream,
            Socket::Tls(stream) => stream.get_ref().0,
        }
    }

    /// Whether it is TLS.
    pub fn is_tls(&self) -> bool {
        matches!(self, Socket::Tls(_))
    }
}

impl AsyncRead for Socket {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Socket::Plain(stream) => Pin::new(stream).poll_read(cx, buf),
            Socket::Tls(stream) => Pin::new(stream.as_mut()).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for Socket {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Socket::Plain(stream) => Pin::new(stream).poll_write(cx, buf),
            Socket::Tls(stream) => Pin::new(stream.as_mut()).poll_write(cx, buf),
        }
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Socket::Plain(stream) => Pin::new(stream).poll_write_vectored(cx, bufs),
            Socket::Tls(stream) => Pin::new(stream.as_mut()).poll_write_vectored(cx, bufs),
        }
    }

    fn is_write_vectored(&self) -> bool {
        match self {
            Socket::Plain(stream) => stream.is_write_vectored(),
            Socket::Tls(stream) => stream.is_write_vectored(),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Socket::Plain(stream) => Pin::new(stream).poll_flush(cx),
            Socket::Tls(stream) => Pin::new(stream.as_mut()).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Socket::Plain(stream) => Pin::new(stream).poll_shutdown(cx),
            Socket::Tls(stream) => Pin::new(stream.as_mut()).poll_shutdown(cx),
        }
    }
}
