//! TLS to PostgreSQL, as libpq's `sslmode` asks it of the URL: `disable`
//! (never), `prefer` (if the server offers it; the default), `require`
//! (always, without checking the server's certificate), `verify-ca` (and
//! its certificate must come from a trusted authority) and `verify-full`
//! (and name the host connected to). `sslrootcert` names the authorities
//! to trust (a PEM file); without it, the system's.
//!
//! tokio-postgres reads only `disable`, `prefer` and `require` and no
//! `sslrootcert`, so [`split`] takes them out of the URL and the connector
//! made here does the checking.

use std::path::PathBuf;
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

/// What the URL asks of TLS.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SslMode {
    Disable,
    Prefer,
    Require,
    VerifyCa,
    VerifyFull,
}

/// The URL's TLS settings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tls {
    pub mode: SslMode,
    pub root_cert: Option<PathBuf>,
}

impl SslMode {
    fn parse(word: &str) -> Result<SslMode, String> {
        match word {
            "disable" => Ok(SslMode::Disable),
            "allow" | "prefer" => Ok(SslMode::Prefer),
            "require" => Ok(SslMode::Require),
            "verify-ca" => Ok(SslMode::VerifyCa),
            "verify-full" => Ok(SslMode::VerifyFull),
            other => Err(format!(
                "sslmode {other:?} is none of disable, allow, prefer, require, verify-ca, verify-full"
            )),
        }
    }

    /// The mode tokio-postgres is given: it encrypts; the checks are ours.
    fn for_client(self) -> &'static str {
        match self {
            SslMode::Disable => "disable",
            SslMode::Prefer => "prefer",
            SslMode::Require | SslMode::VerifyCa | SslMode::VerifyFull => "require",
        }
    }
}

/// The URL (either form) with `sslmode` made one tokio-postgres reads and
/// `sslrootcert` taken out, and the TLS settings they gave.
pub fn split(url: &str) -> Result<(String, Tls), String> {
    let mut tls = Tls {
        mode: SslMode::Prefer,
        root_cert: None,
    };
    let url_form = url.contains("://");
    let (head, parameters, separator) = match url_form {
        true => match url.split_once('?') {
            Some((head, query)) => (head, query, '&'),
            None => return Ok((url.to_string(), tls)),
        },
        false => ("", url, ' '),
    };
    let mut kept = Vec::new();
    for parameter in parameters.split(separator).filter(|p| !p.is_empty()) {
        let (key, value) = parameter.split_once('=').unwrap_or((parameter, ""));
        let value = unquoted(&percent_decoded(value.trim()));
        match key.trim() {
            "sslmode" => {
                tls.mode = SslMode::parse(&value)?;
                kept.push(format!("sslmode={}", tls.mode.for_client()));
            }
            "sslrootcert" => tls.root_cert = Some(PathBuf::from(value)),
            _ => kept.push(parameter.to_string()),
        }
    }
    let rest = kept.join(&separator.to_string());
    let url = match (url_form, rest.is_empty()) {
        (true, true) => head.to_string(),
        (true, false) => format!("{head}?{rest}"),
        (false, _) => rest,
    };
    Ok((url, tls))
}

fn unquoted(value: &str) -> String {
    value
        .strip_prefix('\'')
        .and_then(|v| v.strip_suffix('\''))
        .unwrap_or(value)
        .to_string()
}

/// `%2F` and the like, as a URL's query writes a path.
fn percent_decoded(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while let Some(&byte) = bytes.get(at) {
        let hex = bytes
            .get(at + 1..at + 3)
            .and_then(|h| std::str::from_utf8(h).ok());
        match (byte, hex.and_then(|h| u8::from_str_radix(h, 16).ok())) {
            (b'%', Some(decoded)) => {
                out.push(decoded);
                at += 3;
            }
            _ => {
                out.push(byte);
                at += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

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

    #[test]
    fn libpq_modes_are_read_and_given_to_the_client_as_it_reads_them() {
        let (url, tls) = split(
            "postgres://u@h/db?sslmode=verify-full&sslrootcert=%2Fetc%2Fca.pem&application_name=x",
        )
        .unwrap();
        assert_eq!(url, "postgres://u@h/db?sslmode=require&application_name=x");
        assert_eq!(tls.mode, SslMode::VerifyFull);
        assert_eq!(tls.root_cert, Some(PathBuf::from("/etc/ca.pem")));
        let (url, tls) = split("host=h sslmode=verify-ca sslrootcert='/ca.pem' dbname=d").unwrap();
        assert_eq!(url, "host=h sslmode=require dbname=d");
        assert_eq!(tls.mode, SslMode::VerifyCa);
        let (url, tls) = split("postgres://u@h/db").unwrap();
        assert_eq!(
            (url.as_str(), tls.mode),
            ("postgres://u@h/db", SslMode::Prefer)
        );
        assert!(split("postgres://u@h/db?sslmode=sometimes").is_err());
        assert!(url.parse::<tokio_postgres::Config>().is_ok());
    }

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
