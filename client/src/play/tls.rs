//! TLS to a server's TLS port (`--server tls://host[:port]`): rustls with
//! ring, as the daemon's. The server's certificate is verified against the
//! system's roots, or against the authorities of a CA file (`--ca`,
//! `FLIP_CA`) instead, with the host name checked; a certificate that does
//! not verify ends the connection with a message that says why, and there is
//! never a fallback to the plain port.

use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use rustls::{ClientConfig, ClientConnection, RootCertStore};

use crate::play::wire::{self, Incoming, Outgoing};

/// What `--server` writes before a TLS port's address.
pub const SCHEME: &str = "tls://";

/// The TLS port's usual number, for `tls://host` without one.
pub const DEFAULT_PORT: u16 = 7342;

/// What the message of a certificate that does not verify says, for a
/// caller that stops rather than tries again (`flip bot`): trying again
/// meets the same certificate.
pub const NOT_VERIFIED: &str = "does not verify";

/// The variable that names a CA file when `--ca` does not.
pub const CA_VARIABLE: &str = "FLIP_CA";

/// The CA file to trust: the flag's, else the variable's, else none (the
/// system's roots).
pub fn ca_file(flag: Option<&Path>) -> Option<PathBuf> {
    flag.map(Path::to_path_buf).or_else(|| {
        std::env::var_os(CA_VARIABLE)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    })
}

/// rustls's settings: the authorities of `ca` if given, else the system's.
pub fn client_config(ca: Option<&Path>) -> Result<Arc<ClientConfig>, String> {
    let roots = match ca {
        Some(ca) => roots_from_file(ca)?,
        None => system_roots()?,
    };
    let config = ClientConfig::builder_with_provider(Arc::new(ring_provider()))
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS: {e}"))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(Arc::new(config))
}

/// ring's cryptography, which rustls marks deprecated for want of
/// post-quantum key exchange (see the daemon's `player_tls.rs`: the same
/// choice on both ends).
#[allow(deprecated)]
fn ring_provider() -> rustls::crypto::CryptoProvider {
    rustls::crypto::ring::default_provider()
}

fn roots_from_file(ca: &Path) -> Result<RootCertStore, String> {
    let named = |why: String| format!("CA file {}: {why}", ca.display());
    let pem = std::fs::read(ca).map_err(|e| named(e.to_string()))?;
    let mut roots = RootCertStore::empty();
    for certificate in CertificateDer::pem_slice_iter(&pem) {
        let certificate = certificate.map_err(|e| named(format!("not PEM: {e}")))?;
        roots
            .add(certificate)
            .map_err(|e| named(format!("a certificate rustls cannot use: {e}")))?;
    }
    match roots.is_empty() {
        true => Err(named("holds no certificate".to_string())),
        false => Ok(roots),
    }
}

fn system_roots() -> Result<RootCertStore, String> {
    let found = rustls_native_certs::load_native_certs();
    let mut roots = RootCertStore::empty();
    let (added, _) = roots.add_parsable_certificates(found.certs);
    match added {
        0 => Err(format!(
            "no certificate authorities found on this system to verify the server with; \
             give one with --ca FILE ({} errors reading them)",
            found.errors.len()
        )),
        _ => Ok(roots),
    }
}

/// The handshake on `socket` with the server `host` names (the name its
/// certificate must hold); the connection's halves.
pub fn handshake(
    mut socket: TcpStream,
    host: &str,
    config: Arc<ClientConfig>,
) -> Result<(Outgoing, Incoming), String> {
    let name = ServerName::try_from(host.to_string())
        .map_err(|e| format!("{host} cannot be checked against a certificate: {e}"))?;
    let mut connection =
        ClientConnection::new(config, name).map_err(|e| format!("TLS to {host}: {e}"))?;
    while connection.is_handshaking() {
        connection
            .complete_io(&mut socket)
            .map_err(|e| handshake_failed(host, &e))?;
    }
    wire::tls(connection, socket).map_err(|e| format!("TLS to {host}: {e}"))
}

/// Why a handshake failed, in words that say what to do about it.
fn handshake_failed(host: &str, error: &std::io::Error) -> String {
    let tls = error
        .get_ref()
        .and_then(|inner| inner.downcast_ref::<rustls::Error>());
    match tls {
        Some(rustls::Error::InvalidCertificate(why)) => format!(
            "the certificate of {host} {NOT_VERIFIED} ({why}): not connecting; \
             if the server uses its own authority, give its certificate with --ca FILE"
        ),
        Some(other) => format!("TLS with {host} failed: {other}"),
        None if error.kind() == std::io::ErrorKind::UnexpectedEof => {
            format!("{host} closed the connection during the TLS handshake: is this its TLS port?")
        }
        None => format!("TLS with {host} failed: {error}"),
    }
}

/// A `--server` address split into the address to connect to and, for a
/// TLS port, the host name its certificate must hold.
pub fn split(server: &str) -> (&str, Option<&str>) {
    let Some(address) = server.strip_prefix(SCHEME) else {
        return (server, None);
    };
    (address, Some(host_of(address)))
}

/// `host` of `host:port`, `[v6]:port` or a bare name.
fn host_of(address: &str) -> &str {
    if let Some(bracketed) = address.strip_prefix('[') {
        return bracketed.split(']').next().unwrap_or(bracketed);
    }
    match address.rsplit_once(':') {
        Some((host, _)) => host,
        None => address,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tls_address_names_the_host_its_certificate_must_hold() {
        assert_eq!(split("example.org:7341"), ("example.org:7341", None));
        assert_eq!(
            split("tls://play.example.org:7342"),
            ("play.example.org:7342", Some("play.example.org"))
        );
        assert_eq!(split("tls://[::1]:7342"), ("[::1]:7342", Some("::1")));
        assert_eq!(
            split("tls://127.0.0.1:9"),
            ("127.0.0.1:9", Some("127.0.0.1"))
        );
    }

    #[test]
    fn a_ca_file_without_a_certificate_is_refused_with_its_name() {
        let why = client_config(Some(Path::new("/nonexistent/ca.pem"))).err();
        assert!(
            why.as_deref()
                .is_some_and(|w| w.contains("/nonexistent/ca.pem")),
            "{why:?}"
        );
    }
}
