//! A bounded HTTP GET, for the metrics listener and its health check.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};

use crate::READ_TIMEOUT;

/// `GET path` on `addr`: the status and the body.
pub fn http_get(addr: SocketAddr, path: &str) -> (u16, String) {
    let mut stream = TcpStream::connect_timeout(&addr, READ_TIMEOUT)
        .unwrap_or_else(|e| panic!("cannot connect to {addr}: {e}"));
    let _ = stream.set_read_timeout(Some(READ_TIMEOUT));
    let request = format!("GET {path} HTTP/1.1\r\nHost: test\r\n\r\n");
    stream
        .write_all(request.as_bytes())
        .unwrap_or_else(|e| panic!("{e}"));
    let mut response = String::new();
    stream
        .read_to_string(&mut response)
        .unwrap_or_else(|e| panic!("{e}"));
    let (head, body) = response.split_once("\r\n\r\n").unwrap_or((&response, ""));
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    (status, body.to_string())
}
