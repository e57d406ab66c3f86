//! The TLS settings of a PostgreSQL URL, as libpq reads them (`sslmode`,
//! `sslrootcert`), taken out of the URL for the connector that checks them
//! (`store/postgres/tls.rs`). Pure text work, below both the configuration
//! (which checks a URL) and the store (which connects with it).

use std::path::PathBuf;

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
    pub fn for_client(self) -> &'static str {
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
}
