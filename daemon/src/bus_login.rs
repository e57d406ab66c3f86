//! How the bus logs in to NATS: the credentials of `cluster.nats` and its
//! files, and TLS. What a message on the bus claims about a player is
//! believed because only the cluster's nodes can publish on its subjects,
//! so a node logs in, and refuses a server that lets anyone in unless
//! told `nats_insecure` (see `bus::run`).
//!
//! Files are read at each start: an operator changes a password or a
//! token by changing its file and restarting the node.

use std::path::Path;

use crate::config::ClusterConfig;
use crate::nats_url::UrlAuth;

/// Why a node refuses a server that asks nobody for credentials.
pub const OPEN_SERVER: &str = "the cluster's NATS server lets anyone connect without \
     credentials, so anyone who can reach it could seat any player: give the server users \
     (and each node cluster.nats credentials), or set cluster.nats_insecure on a closed \
     network";

/// The client's options for `settings` (without the bus's own: name,
/// reconnection), and the servers to connect to, credentials taken out.
pub async fn options(
    settings: &ClusterConfig,
) -> Result<(async_nats::ConnectOptions, Vec<String>), String> {
    let address = settings.nats.address()?;
    let mut options = match given(&settings.nats_credentials) {
        Some(path) => async_nats::ConnectOptions::with_credentials_file(path)
            .await
            .map_err(|e| {
                format!(
                    "cannot read the NATS credentials file {}: {e}",
                    path.display()
                )
            })?,
        None => async_nats::ConnectOptions::new(),
    };
    options = match (address.auth, given(&settings.nats_password_file)) {
        // `nats://user@host` names the user whose password is in the file.
        (Some(UrlAuth::UserPassword(user, _) | UrlAuth::Token(user)), Some(file)) => {
            options.user_and_password(user, read_secret(file, "password")?)
        }
        (Some(UrlAuth::UserPassword(user, password)), None) => {
            options.user_and_password(user, password)
        }
        (Some(UrlAuth::Token(token)), None) => options.token(token),
        (None, Some(file)) => {
            return Err(format!(
                "cluster.nats_password_file ({}) needs a user in cluster.nats \
                 (nats://user@host:4222)",
                file.display()
            ));
        }
        (None, None) => options,
    };
    if let Some(file) = given(&settings.nats_token_file) {
        options = options.token(read_secret(file, "token")?);
    }
    if let Some(ca) = given(&settings.nats_ca) {
        options = options.add_root_certificates(ca.to_path_buf());
    }
    if address.tls || given(&settings.nats_ca).is_some() {
        options = options.require_tls(true);
    }
    Ok((options, address.servers))
}

/// A path setting that names a file (an empty one names none).
fn given(path: &Path) -> Option<&Path> {
    (!path.as_os_str().is_empty()).then_some(path)
}

/// The secret in `file`, its line end dropped; the error names the file,
/// never what it holds.
fn read_secret(file: &Path, what: &str) -> Result<String, String> {
    let text = std::fs::read_to_string(file)
        .map_err(|e| format!("cannot read the NATS {what} file {}: {e}", file.display()))?;
    let secret = text.trim_end_matches(['\r', '\n']);
    match secret.is_empty() {
        true => Err(format!("the NATS {what} file {} is empty", file.display())),
        false => Ok(secret.to_string()),
    }
}
