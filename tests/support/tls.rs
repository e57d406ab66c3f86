//! TLS for the tests: a throwaway certificate authority made on the spot
//! ([`TestCa`]), the daemon's certificate and key it signs written where a
//! test daemon reads them ([`TlsFiles`]), and the client's side of a
//! connection ([`Wire`]), plain or TLS, that [`crate::Client`] reads and
//! writes. Nothing here leaves 127.0.0.1 and nothing outlives its test.

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use rustls::{ClientConfig, ClientConnection, RootCertStore, StreamOwned};

/// A certificate authority of the test's own (see the module docs).
pub struct TestCa {
    issuer: rcgen::Issuer<'static, rcgen::KeyPair>,
    /// Its certificate, in PEM: what a client is told to trust.
    pub pem: String,
}

impl TestCa {
    /// A new authority, trusted by nobody but those told its certificate.
    pub fn new() -> TestCa {
        let mut params = rcgen::CertificateParams::new(Vec::<String>::new())
            .unwrap_or_else(|e| panic!("CA parameters: {e}"));
        params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        // A name of its own: a client looks an issuer up by name, and two
        // authorities of one name would meet as a bad signature.
        static MADE: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let number = MADE.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let name = format!("flipline test CA {} {number}", std::process::id());
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, name);
        let key = rcgen::KeyPair::generate().unwrap_or_else(|e| panic!("CA key: {e}"));
        let cert = params
            .self_signed(&key)
            .unwrap_or_else(|e| panic!("CA certificate: {e}"));
        TestCa {
            pem: cert.pem(),
            issuer: rcgen::Issuer::new(params, key),
        }
    }

    /// A certificate for `names` (host names or IP addresses) and its key,
    /// in PEM, signed by this authority.
    pub fn issue(&self, names: &[&str]) -> (String, String) {
        let names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
        let params = rcgen::CertificateParams::new(names)
            .unwrap_or_else(|e| panic!("certificate parameters: {e}"));
        let key = rcgen::KeyPair::generate().unwrap_or_else(|e| panic!("key: {e}"));
        let cert = params
            .signed_by(&key, &self.issuer)
            .unwrap_or_else(|e| panic!("certificate: {e}"));
        (cert.pem(), key.serialize_pem())
    }

    /// A client's settings that trust this authority only.
    pub fn client_config(&self) -> Arc<ClientConfig> {
        client_config(&self.pem)
    }
}

impl Default for TestCa {
    fn default() -> TestCa {
        TestCa::new()
    }
}

/// A client's settings that trust the authorities in `ca_pem` only.
pub fn client_config(ca_pem: &str) -> Arc<ClientConfig> {
    let mut roots = RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(ca_pem.as_bytes()) {
        let cert = cert.unwrap_or_else(|e| panic!("CA PEM: {e}"));
        roots
            .add(cert)
            .unwrap_or_else(|e| panic!("CA certificate: {e}"));
    }
    let provider = Arc::new(ring_provider());
    let config = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap_or_else(|e| panic!("TLS versions: {e}"))
        .with_root_certificates(roots)
        .with_no_client_auth();
    Arc::new(config)
}

/// ring, as the daemon and the client use.
#[allow(deprecated)]
fn ring_provider() -> rustls::crypto::CryptoProvider {
    rustls::crypto::ring::default_provider()
}

/// The files a daemon's TLS port is given, and the authority's for clients.
pub struct TlsFiles {
    /// The certificate chain (PEM).
    pub certificate: PathBuf,
    /// Its key (PEM).
    pub key: PathBuf,
    /// The authority's certificate (PEM), for `flip --ca` and the bots.
    pub ca: PathBuf,
}

impl TlsFiles {
    /// A certificate for `names` signed by `ca`, written into `dir` with
    /// its key and the authority's certificate.
    pub fn write(dir: &Path, ca: &TestCa, names: &[&str]) -> TlsFiles {
        let files = TlsFiles {
            certificate: dir.join("cert.pem"),
            key: dir.join("key.pem"),
            ca: dir.join("ca.pem"),
        };
        files.renew(ca, names);
        write_file(&files.ca, &ca.pem);
        files
    }

    /// A new certificate for `names` over the old files, as a renewal does.
    pub fn renew(&self, ca: &TestCa, names: &[&str]) {
        let (cert, key) = ca.issue(names);
        write_file(&self.certificate, &cert);
        write_file(&self.key, &key);
    }

    /// The settings that give a daemon's TLS port these files, in a
    /// configuration file's words (for [`crate::write_config`]).
    pub fn settings(&self, listen: &str) -> String {
        format!(
            "tls: (listen: \"{listen}\", certificate: \"{}\", key: \"{}\"),",
            self.certificate.display(),
            self.key.display()
        )
    }
}

fn write_file(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
}

/// A test's connection: plain TCP, or TLS over it (one thread reads and
/// writes it, so one rustls stream does both).
pub enum Wire {
    /// Plain TCP.
    Plain(TcpStream),
    /// TLS, its handshake done.
    Tls(Box<StreamOwned<ClientConnection, TcpStream>>),
}

impl Wire {
    /// The TLS handshake on `socket` with a server that must show a
    /// certificate for `host` signed by an authority of `config`; the
    /// error is rustls's, as a client would see it.
    pub fn tls(socket: TcpStream, host: &str, config: Arc<ClientConfig>) -> io::Result<Wire> {
        let name = ServerName::try_from(host.to_string())
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
        let connection = ClientConnection::new(config, name).map_err(io::Error::other)?;
        let mut stream = StreamOwned::new(connection, socket);
        while stream.conn.is_handshaking() {
            stream.conn.complete_io(&mut stream.sock)?;
        }
        Ok(Wire::Tls(Box::new(stream)))
    }

    fn tcp(&self) -> &TcpStream {
        match self {
            Wire::Plain(stream) => stream,
            Wire::Tls(stream) => &stream.sock,
        }
    }

    /// How long a read may wait.
    pub fn set_read_timeout(&self, wait: Option<Duration>) -> io::Result<()> {
        self.tcp().set_read_timeout(wait)
    }

    /// Says nothing more will be sent (TLS's close_notify first).
    pub fn finish_sending(&mut self) -> io::Result<()> {
        if let Wire::Tls(stream) = self {
            stream.conn.send_close_notify();
            stream.flush()?;
        }
        self.tcp().shutdown(std::net::Shutdown::Write)
    }
}

impl From<TcpStream> for Wire {
    fn from(stream: TcpStream) -> Wire {
        Wire::Plain(stream)
    }
}

impl Read for Wire {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Wire::Plain(stream) => stream.read(buf),
            Wire::Tls(stream) => stream.read(buf),
        }
    }
}

impl Write for Wire {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Wire::Plain(stream) => stream.write(buf),
            Wire::Tls(stream) => stream.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Wire::Plain(stream) => stream.flush(),
            Wire::Tls(stream) => stream.flush(),
        }
    }
}
