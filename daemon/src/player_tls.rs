//! The players' TLS port: the server's certificate chain and key, read from
//! the PEM files `tls.certificate` and `tls.key` name, and the handshake of
//! each connection. The files are read again on SIGHUP (a renewed
//! certificate needs no restart): connections made afterwards get the new
//! one, those already up keep the one they shook hands with. A file that
//! cannot be read or used is an error at start and, on a reload, a warning
//! that keeps the certificate in use.
//!
//! rustls with the ring provider, as for PostgreSQL (`store/postgres/tls.rs`):
//! one TLS library and one provider in the daemon, pure Rust.

use std::path::{Path, PathBuf};
use std::sync::{Arc, PoisonError, RwLock};
use std::time::Duration;

use rustls::ServerConfig;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio::net::TcpStream;
use tokio_rustls::TlsAcceptor;
use tokio_rustls::server::TlsStream;

/// The certificate in use and where it comes from (see the module docs).
#[derive(Debug)]
pub struct PlayerTls {
    certificate: PathBuf,
    key: PathBuf,
    /// Read on every handshake, written by a reload: a read lock held for
    /// the time of an `Arc` clone.
    current: RwLock<Arc<ServerConfig>>,
}

impl PlayerTls {
    /// Reads the chain and the key; the error names the file and what is
    /// wrong with it.
    pub fn load(certificate: &Path, key: &Path) -> Result<PlayerTls, String> {
        let config = server_config(certificate, key)?;
        Ok(PlayerTls {
            certificate: certificate.to_path_buf(),
            key: key.to_path_buf(),
            current: RwLock::new(Arc::new(config)),
        })
    }

    /// Reads the files again. On an error the certificate in use stays.
    pub fn reload(&self) -> Result<(), String> {
        let config = server_config(&self.certificate, &self.key)?;
        *self.current.write().unwrap_or_else(PoisonError::into_inner) = Arc::new(config);
        Ok(())
    }

    /// The settings the next handshake takes.
    fn current(&self) -> Arc<ServerConfig> {
        Arc::clone(&self.current.read().unwrap_or_else(PoisonError::into_inner))
    }

    /// The server's side of a handshake on `stream`, given up after `within`
    /// (what is left of the login deadline: a handshake that stalls holds a
    /// place no longer than a silent socket would).
    pub async fn handshake(
        &self,
        stream: TcpStream,
        within: Duration,
    ) -> Result<TlsStream<TcpStream>, HandshakeFailed> {
        let accepting = TlsAcceptor::from(self.current()).accept(stream);
        match tokio::time::timeout(within, accepting).await {
            Ok(Ok(stream)) => Ok(stream),
            Ok(Err(error)) => Err(HandshakeFailed::Refused(error)),
            Err(_) => Err(HandshakeFailed::Deadline),
        }
    }
}

/// Why a connection to the TLS port did not become a session.
#[derive(Debug)]
pub enum HandshakeFailed {
    /// The client broke off, spoke something else than TLS, or refused the
    /// certificate.
    Refused(std::io::Error),
    /// The login deadline passed first.
    Deadline,
}

/// rustls's cryptography from ring, which rustls marks deprecated for want
/// of post-quantum key exchange: aws-lc-rs, which has it, needs a C and
/// assembly build of its own, and what the players' TLS protects (a
/// password, a game) is not worth recording today to break in a decade.
#[allow(deprecated)]
fn ring_provider() -> rustls::crypto::CryptoProvider {
    rustls::crypto::ring::default_provider()
}

/// rustls's server settings for the chain in `certificate` and the key in
/// `key`, checked to belong together.
fn server_config(certificate: &Path, key: &Path) -> Result<ServerConfig, String> {
    let chain = read_chain(certificate)?;
    let key_der = read_key(key)?;
    ServerConfig::builder_with_provider(Arc::new(ring_provider()))
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS: {e}"))?
        .with_no_client_auth()
        .with_single_cert(chain, key_der)
        .map_err(|e| {
            format!(
                "tls.key {} does not go with tls.certificate {}: {e}",
                key.display(),
                certificate.display()
            )
        })
}

/// Every certificate of the PEM file at `path`, the server's first.
fn read_chain(path: &Path) -> Result<Vec<CertificateDer<'static>>, String> {
    let named = |why: String| format!("tls.certificate {}: {why}", path.display());
    let pem = std::fs::read(path).map_err(|e| named(e.to_string()))?;
    let chain = CertificateDer::pem_slice_iter(&pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| named(format!("not PEM: {e}")))?;
    match chain.is_empty() {
        true => Err(named(
            "holds no certificate (a PEM block BEGIN CERTIFICATE)".to_string(),
        )),
        false => Ok(chain),
    }
}

/// The private key of the PEM file at `path` (PKCS#8, PKCS#1 or SEC1).
fn read_key(path: &Path) -> Result<PrivateKeyDer<'static>, String> {
    let named = |why: String| format!("tls.key {}: {why}", path.display());
    let pem = std::fs::read(path).map_err(|e| named(e.to_string()))?;
    PrivateKeyDer::from_pem_slice(&pem).map_err(|e| match e {
        rustls::pki_types::pem::Error::NoItemsFound => {
            named("holds no private key (a PEM block BEGIN PRIVATE KEY)".to_string())
        }
        other => named(format!("not a PEM private key: {other}")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A self-signed certificate for `name` and its key, in PEM.
    fn certificate_for(name: &str) -> (String, String) {
        let key = rcgen::KeyPair::generate().unwrap();
        let params = rcgen::CertificateParams::new(vec![name.to_string()]).unwrap();
        let cert = params.self_signed(&key).unwrap();
        (cert.pem(), key.serialize_pem())
    }

    fn written(dir: &Path, file: &str, text: &str) -> PathBuf {
        let path = dir.join(file);
        std::fs::write(&path, text).unwrap();
        path
    }

    fn scratch(what: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("flipd-tls-{}-{what}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn a_bad_file_is_named_with_what_is_wrong() {
        let dir = scratch("bad");
        let (cert, key) = certificate_for("localhost");
        let (other_cert, _) = certificate_for("localhost");
        let cert_path = written(&dir, "cert.pem", &cert);
        let key_path = written(&dir, "key.pem", &key);
        assert!(PlayerTls::load(&cert_path, &key_path).is_ok());
        let missing = dir.join("missing.pem");
        let why = PlayerTls::load(&missing, &key_path).unwrap_err();
        assert!(
            why.starts_with("tls.certificate ") && why.contains("missing.pem"),
            "{why}"
        );
        let empty = written(&dir, "empty.pem", "");
        let why = PlayerTls::load(&empty, &key_path).unwrap_err();
        assert!(why.contains("holds no certificate"), "{why}");
        let why = PlayerTls::load(&cert_path, &cert_path).unwrap_err();
        assert!(
            why.starts_with("tls.key ") && why.contains("no private key"),
            "{why}"
        );
        let other = written(&dir, "other.pem", &other_cert);
        let why = PlayerTls::load(&other, &key_path).unwrap_err();
        assert!(why.contains("does not go with"), "{why}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_reload_that_fails_keeps_the_certificate_in_use() {
        let dir = scratch("reload");
        let (cert, key) = certificate_for("localhost");
        let cert_path = written(&dir, "cert.pem", &cert);
        let key_path = written(&dir, "key.pem", &key);
        let tls = PlayerTls::load(&cert_path, &key_path).unwrap();
        let before = tls.current();
        written(&dir, "cert.pem", "not a certificate");
        assert!(tls.reload().is_err());
        assert!(Arc::ptr_eq(&before, &tls.current()), "the old one stays");
        let (cert, key) = certificate_for("localhost");
        written(&dir, "cert.pem", &cert);
        written(&dir, "key.pem", &key);
        assert!(tls.reload().is_ok());
        assert!(
            !Arc::ptr_eq(&before, &tls.current()),
            "the new one is taken"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
