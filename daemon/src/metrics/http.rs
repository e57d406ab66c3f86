//! The metrics listener: just enough HTTP/1.1 for a scraper and a health
//! probe. One request a connection, read whole within a few seconds and a
//! few kilobytes, answered, closed; anything else is refused with its
//! status. No crate for this: two paths, no bodies, no keep-alive.

use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use super::{Sources, counters, exposition, gauges, health};

/// The longest request head read.
const MAX_HEAD: usize = 8 * 1024;

/// How long a client has to send its request.
const READ_WITHIN: Duration = Duration::from_secs(5);

/// Serves `/metrics` and `/healthz` on `listener` until the task is dropped.
pub async fn serve(listener: TcpListener, sources: Arc<Sources>) {
    loop {
        match listener.accept().await {
            Ok((stream, _)) => {
                tokio::spawn(answer(stream, Arc::clone(&sources)));
            }
            Err(e) => {
                tracing::warn!(error = %e, "metrics: accept failed");
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    }
}

async fn answer(mut stream: TcpStream, sources: Arc<Sources>) {
    let response = match tokio::time::timeout(READ_WITHIN, read_head(&mut stream)).await {
        Ok(Some(head)) => respond(&head, &sources),
        Ok(None) => reply(400, "text/plain", "bad request\n".into()),
        Err(_) => return,
    };
    let _ = stream.write_all(&response).await;
    let _ = stream.shutdown().await;
}

/// The request head, up to its blank line; `None` if it is too long or the
/// connection ends first.
async fn read_head(stream: &mut TcpStream) -> Option<String> {
    let mut head = Vec::new();
    let mut buffer = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") && !head.windows(2).any(|w| w == b"\n\n") {
        let read = stream.read(&mut buffer).await.ok()?;
        if read == 0 || head.len() + read > MAX_HEAD {
            return None;
        }
        head.extend_from_slice(buffer.get(..read)?);
    }
    String::from_utf8(head).ok()
}

/// The whole response to a request whose head is `head`.
fn respond(head: &str, sources: &Sources) -> Vec<u8> {
    let mut words = head.lines().next().unwrap_or_default().split(' ');
    let (method, target) = (
        words.next().unwrap_or_default(),
        words.next().unwrap_or_default(),
    );
    let path = target.split('?').next().unwrap_or_default();
    match (method, path) {
        ("GET", "/metrics") => {
            let commits = sources.store.commit_times();
            let text = exposition::text(counters::totals(), commits, gauges(sources));
            reply(200, "text/plain; version=0.0.4; charset=utf-8", text)
        }
        ("GET", "/healthz") => match health(sources) {
            Ok(()) => reply(200, "text/plain", "ok\n".into()),
            Err(why) => reply(503, "text/plain", format!("{why}\n")),
        },
        ("GET", _) => reply(404, "text/plain", "only /metrics and /healthz\n".into()),
        _ => reply(405, "text/plain", "only GET\n".into()),
    }
}

fn reply(status: u16, content_type: &str, body: String) -> Vec<u8> {
    let reason = match status {
        200 => "OK",
        400 => "Bad Request",
        404 => "Not Found",
        405 => "Method Not Allowed",
        _ => "Service Unavailable",
    };
    let head = format!(
        "HTTP/1.1 {status} {reason}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n",
        body.len()
    );
    let mut response = head.into_bytes();
    response.extend_from_slice(body.as_bytes());
    response
}
