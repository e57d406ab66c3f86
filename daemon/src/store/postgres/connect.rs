//! Connections to the PostgreSQL server: the client's settings from
//! `store.url` and `store.password_file`, and one connection driven by the
//! calling thread's runtime.
//!
//! The password file is read at each connection, so that an operator can
//! change the password without restarting flipd; a password in the file
//! wins over one in the URL.

use std::time::Duration;

use tokio_postgres::Client;

use super::tls::Tls;

use crate::config::StoreConfig;

/// How long a single daemon gives the server: to connect, for a batch to
/// commit, for data sent to be acknowledged. A cluster node cuts each to
/// its lease (see [`Deadlines::of`]).
const SINGLE_DAEMON_DEADLINE: Duration = Duration::from_secs(10);

/// How long each exchange with the server may take before the connection
/// counts as lost. A connection that goes silent (a firewall or a NAT that
/// drops it without a word, a cable) is noticed within these, never after
/// the system's defaults (minutes): a cluster node must notice well within
/// its lease, so that it stops acknowledging and the others take its games
/// over, rather than holding them with no reply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Deadlines {
    /// To connect (and log in).
    pub connect: Duration,
    /// For a batch of writes, or any request, to be answered.
    pub request: Duration,
    /// For data sent, or a keepalive probe, to be acknowledged by the
    /// server's side (TCP user timeout).
    pub unacknowledged: Duration,
    /// The idle time before keepalives probe, and between probes (whole
    /// seconds, as the system takes them); the connection is dropped after
    /// [`KEEPALIVE_RETRIES`] unanswered, or [`Deadlines::unacknowledged`].
    pub idle: Duration,
}

/// Unanswered keepalive probes before the connection counts as lost.
pub const KEEPALIVE_RETRIES: u32 = 2;

impl Deadlines {
    /// A single daemon's, or a node's with a lease of `lease`: half the
    /// lease for a request, so that a batch that hangs turns into a commit
    /// in doubt, and is settled on a new connection, while the node's
    /// lease still holds.
    pub fn of(lease: Option<Duration>) -> Deadlines {
        let Some(lease) = lease else {
            return Deadlines {
                connect: SINGLE_DAEMON_DEADLINE,
                request: SINGLE_DAEMON_DEADLINE,
                unacknowledged: SINGLE_DAEMON_DEADLINE,
                idle: Duration::from_secs(5),
            };
        };
        Deadlines {
            connect: lease / 2,
            request: lease / 2,
            unacknowledged: lease / 3,
            // The least the system takes (leases are 2 s at least).
            idle: Duration::from_secs(1),
        }
    }

    /// The longest a connection that went silent while idle goes unnoticed.
    #[cfg(test)]
    pub fn idle_loss(&self) -> Duration {
        self.idle + (self.idle * KEEPALIVE_RETRIES).min(self.unacknowledged)
    }

    /// The deadlines of `config`'s connections.
    pub fn of_config(config: &StoreConfig) -> Deadlines {
        Deadlines::of(config.lease)
    }
}

/// The client's settings, or why they cannot be made (without the password).
pub fn settings(config: &StoreConfig) -> Result<(tokio_postgres::Config, Tls), String> {
    let (url, tls) = super::tls::split(config.url.expose())?;
    let mut settings: tokio_postgres::Config = url
        .parse()
        .map_err(|e: tokio_postgres::Error| crate::store_url::redact(&e.to_string()))?;
    if !config.password_file.as_os_str().is_empty() {
        let path = &config.password_file;
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read the password file {}: {e}", path.display()))?;
        settings.password(text.trim_end_matches(['\r', '\n']));
    }
    settings.application_name("flipd");
    let deadlines = Deadlines::of_config(config);
    if settings.get_connect_timeout().is_none() {
        settings.connect_timeout(deadlines.connect);
    }
    // A server that vanishes without closing the socket (a pulled cable, a
    // frozen machine, packets silently dropped) is found out within the
    // deadlines instead of the system's minutes: by the TCP user timeout
    // while data waits to be acknowledged, by keepalives while idle.
    settings.tcp_user_timeout(deadlines.unacknowledged);
    settings.keepalives(true);
    settings.keepalives_idle(deadlines.idle);
    settings.keepalives_interval(deadlines.idle);
    settings.keepalives_retries(KEEPALIVE_RETRIES);
    Ok((settings, tls))
}

/// Connects and drives the connection on the current runtime; the error
/// says why in words, without the password.
pub async fn connect(config: &StoreConfig) -> Result<Client, String> {
    let (settings, tls) = settings(config)?;
    let connector = super::tls::connector(&tls)?;
    let (client, connection) = settings
        .connect(connector)
        .await
        .map_err(|e| super::describe(&e))?;
    tokio::spawn(async move {
        if let Err(error) = connection.await {
            tracing::debug!(error = %super::describe(&error), "a store connection ended");
        }
    });
    Ok(client)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_node_notices_a_silent_server_well_within_its_lease() {
        for secs in 2..=30 {
            let lease = Duration::from_secs(secs);
            let node = Deadlines::of(Some(lease));
            assert!(node.idle_loss() < lease, "{secs} s: {node:?}");
            assert!(node.request < lease && node.connect < lease);
            assert!(node.unacknowledged < lease);
            // The system takes keepalive times in whole seconds, from one.
            assert!(node.idle.as_secs() >= 1 && node.idle.subsec_nanos() == 0);
        }
        let single = Deadlines::of(None);
        assert!(single.idle.as_secs() >= 1 && single.idle.subsec_nanos() == 0);
        assert!(single.idle_loss() < single.request * 2);
    }
}
