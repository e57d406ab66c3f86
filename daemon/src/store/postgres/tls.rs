//! TLS to PostgreSQL, as libpq's `sslmode` asks it of the URL: `disable`
//! (never), `prefer` (if the server offers it; the default), `require`
//! (always, without checking the server's certificate), `verify-ca` (and
//! its certificate must come from a trusted authority) and `verify-full`
//! (and name the host connected to). `sslrootcert` names the authorities
//! to trust (a PEM file); without it, the system's.
//!
//! tokio-postgres reads only `disable`, `prefer` and `require` and no
//! `sslrootcert`, so `crate::tls_settings::split` takes them out of the
//! URL and the connector made here does the checking.

pub use crate::tls_settings::{SslMode, Tls, split};
use std::sync::Arc;

use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::WebPkiSupportedAlgorithms;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{
    CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme,
};
use tokio_postgres_rustls::MakeRustlsConnect;

/// rustls's cryptography from ring. rustls marks ring's provider deprecated
/// for want of post-quantum key exchange; aws-lc-rs, which has it, needs a
/// C and assembly build of its own, and the link to a database server is
/// not where that matters first.
#[allow(deprecated)]
fn ring_provider() -> rustls::crypto::CryptoProvider {
    rustls::crypto::ring::default_provider()
}

/// The connector for `tls`: rustls, checking what the mode asks.
pub fn connector(tls: &Tls) -> Result<MakeRustlsConnect, String> {
    let provider = Arc::new(ring_provider());
    let builder = ClientConfig::builder_with_provider(Arc::clone(&provider))
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?;
    let chain = match tls.mode {
        SslMode::Disable | SslMode::Prefer | SslMode::Require => None,
        SslMode::VerifyCa | SslMode::VerifyFull => Some(
            WebPkiServerVerifier::builder_with_provider(
                Arc::new(roots(tls)?),
                Arc::clone(&provider),
            )
            .build()
            .map_err(|e| e.to_string())?,
        ),
    };
    let verifier = Arc::new(Checks {
        chain,
        name: tls.mode == SslMode::VerifyFull,
        algorithms: provider.signature_verification_algorithms,
    });
    let config = builder
        .dangerous()
        .with_custom_certificate_verifier(verifier)
        .with_no_client_auth();
    Ok(MakeRustlsConnect::new(config))
}

/// The authorities to trust: `sslrootcert`'s, or the system's.
fn roots(tls: &Tls) -> Result<RootCertStore, String> {
    let mut roots = RootCertStore::empty();
    match &tls.root_cert {
        Some(path) => {
            let certs = CertificateDer::pem_file_iter(path)
                .map_err(|e| format!("sslrootcert {}: {e}", path.display()))?;
            for cert in certs {
                let cert = cert.map_err(|e| format!("sslrootcert {}: {e}", path.display()))?;
                roots
                    .add(cert)
                    .map_err(|e| format!("sslrootcert {}: {e}", path.display()))?;
            }
        }
        None => {
            let found = rustls_native_certs::load_native_certs();
            roots.add_parsable_certificates(found.certs);
        }
    }
    match roots.is_empty() {
        true => Err("no certificate authority to trust (give sslrootcert)".into()),
        false => Ok(roots),
    }
}

/// What a mode checks of the server's certificate: nothing (`require`,
/// libpq's meaning: encrypted, the certificate taken as it is), its chain
/// to a trusted authority (`verify-ca`), and its name too (`verify-full`).
/// The handshake's signatures are checked whatever the mode.
#[derive(Debug)]
struct Checks {
    chain: Option<Arc<WebPkiServerVerifier>>,
    name: bool,
    algorithms: WebPkiSupportedAlgorithms,
}

impl ServerCertVerifier for Checks {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let Some(chain) = &self.chain else {
            return Ok(ServerCertVerified::assertion());
        };
        let checked =
            chain.verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now);
        match checked {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) if !self.name => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.algorithms.supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    #[test]
    fn verify_modes_need_an_authority_and_read_the_one_named() {
        let missing = Tls {
            mode: SslMode::VerifyFull,
            root_cert: Some(PathBuf::from("/nonexistent/ca.pem")),
        };
        let why = connector(&missing).err().unwrap_or_default();
        assert!(why.contains("/nonexistent/ca.pem"), "{why}");
        let unchecked = Tls {
            mode: SslMode::Require,
            root_cert: None,
        };
        assert!(connector(&unchecked).is_ok());
    }
}
