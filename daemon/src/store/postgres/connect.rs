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

/// How long a connection may take before it counts as failed: a server
/// that does not answer is treated as one that is down.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

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
    if settings.get_connect_timeout().is_none() {
        settings.connect_timeout(CONNECT_TIMEOUT);
    }
    // A server that vanishes without closing the socket (a pulled cable, a
    // frozen machine) is found out by keepalives instead of never.
    settings.keepalives(true);
    settings.keepalives_idle(Duration::from_secs(10));
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
