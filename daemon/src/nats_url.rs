//! `cluster.nats`: the cluster's NATS server, as NATS clients write it
//! (`nats://user:password@host:4222`, `nats://token@host:4222`, `tls://...`;
//! several servers separated by commas). It may carry a password or a
//! token, so it is a type of its own that never shows one: its `Debug`,
//! `Display` and serialised forms (what `--check-config` prints, what logs
//! name) put `***` in the secret's place; only [`NatsUrl::address`] gives
//! the secret itself, to connect with.

/// The NATS servers to reach, as given; empty: no bus.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct NatsUrl(String);

/// What stands for a secret wherever the URL is shown.
const HIDDEN: &str = "***";

/// The schemes a NATS client takes.
const SCHEMES: [&str; 2] = ["nats://", "tls://"];

/// Credentials the URL itself carries.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum UrlAuth {
    /// `user:password@`.
    UserPassword(String, String),
    /// `user@` with no password: NATS takes it as a token.
    Token(String),
}

/// What a connection needs of the URL: the servers without credentials,
/// the credentials apart, and whether TLS is asked for (`tls://`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NatsAddress {
    pub servers: Vec<String>,
    pub auth: Option<UrlAuth>,
    pub tls: bool,
}

impl NatsUrl {
    /// The URL as given.
    pub fn new(text: impl Into<String>) -> NatsUrl {
        NatsUrl(text.into())
    }

    /// Whether none was given (no bus).
    pub fn is_empty(&self) -> bool {
        self.0.trim().is_empty()
    }

    /// The text with any password or token replaced by `***`, whatever the
    /// scheme, and nothing else changed.
    pub fn redacted(&self) -> String {
        self.0
            .split(',')
            .map(redact_server)
            .collect::<Vec<_>>()
            .join(",")
    }

    /// Whether it carries credentials of its own.
    pub fn has_credentials(&self) -> bool {
        self.address().is_ok_and(|a| a.auth.is_some())
    }

    /// Empty, or every server a NATS URL with a host; the error says why
    /// not, without any secret.
    pub fn check(&self) -> Result<(), String> {
        match self.is_empty() {
            true => Ok(()),
            false => self.address().map(|_| ()),
        }
    }

    /// The servers and credentials, to connect with.
    pub fn address(&self) -> Result<NatsAddress, String> {
        let mut address = NatsAddress {
            servers: Vec::new(),
            auth: None,
            tls: false,
        };
        for server in self.0.split(',').map(str::trim) {
            let Some((scheme, user_info, rest)) = split_server(server) else {
                return Err(format!(
                    "{:?} is not a NATS URL (nats://host:4222 or tls://host:4222)",
                    redact_server(server)
                ));
            };
            if rest.is_empty() || rest.starts_with([':', '/']) {
                return Err(format!("{} names no host", redact_server(server)));
            }
            address.tls |= scheme == "tls://";
            address.servers.push(format!("{scheme}{rest}"));
            if let (Some(user_info), None) = (user_info, &address.auth) {
                address.auth = Some(auth_of(user_info)?);
            }
        }
        Ok(address)
    }
}

/// `scheme://user:secret@rest` as `scheme://user:***@rest`, and
/// `scheme://token@rest` as `scheme://***@rest`.
fn redact_server(server: &str) -> String {
    let Some(scheme_end) = server.find("://") else {
        return server.to_string();
    };
    let start = scheme_end + 3;
    let rest = &server[start..];
    let authority_end = rest.find(['/', '?']).unwrap_or(rest.len());
    let Some(at) = rest[..authority_end].rfind('@') else {
        return server.to_string();
    };
    let shown = match rest[..at].split_once(':') {
        Some((user, _)) => format!("{user}:{HIDDEN}"),
        None => HIDDEN.to_string(),
    };
    format!("{}{shown}{}", &server[..start], &rest[at..])
}

/// A server's scheme, user part (before `@`) if any, and the rest.
fn split_server(server: &str) -> Option<(&'static str, Option<&str>, &str)> {
    let scheme = SCHEMES.into_iter().find(|s| {
        server
            .get(..s.len())
            .is_some_and(|head| head.eq_ignore_ascii_case(s))
    })?;
    let rest = &server[scheme.len()..];
    let authority_end = rest.find(['/', '?']).unwrap_or(rest.len());
    match rest[..authority_end].rfind('@') {
        Some(at) => Some((scheme, Some(&rest[..at]), &rest[at + 1..])),
        None => Some((scheme, None, rest)),
    }
}

fn auth_of(user_info: &str) -> Result<UrlAuth, String> {
    match user_info.split_once(':') {
        Some((user, password)) => Ok(UrlAuth::UserPassword(
            percent_decoded(user)?,
            percent_decoded(password)?,
        )),
        None => Ok(UrlAuth::Token(percent_decoded(user_info)?)),
    }
}

/// `%XX` escapes decoded, as in any URL's user part; the error names no
/// secret.
fn percent_decoded(text: &str) -> Result<String, String> {
    let bad = || "a user or password in cluster.nats has a bad %-escape".to_string();
    let mut bytes = Vec::with_capacity(text.len());
    let mut rest = text.as_bytes();
    while let Some((&first, tail)) = rest.split_first() {
        if first != b'%' {
            bytes.push(first);
            rest = tail;
            continue;
        }
        let hex = tail.get(..2).ok_or_else(bad)?;
        let hex = std::str::from_utf8(hex).map_err(|_| bad())?;
        bytes.push(u8::from_str_radix(hex, 16).map_err(|_| bad())?);
        rest = &tail[2..];
    }
    String::from_utf8(bytes).map_err(|_| bad())
}

crate::config_table::secret_text!(NatsUrl);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config_table::Value;
    use proptest::prelude::*;

    #[test]
    fn credentials_are_taken_apart_from_the_servers_and_never_shown() {
        let url = NatsUrl::new("nats://flipd:s%40cret@10.0.0.1:4222, nats://10.0.0.2:4222");
        let address = url.address().unwrap();
        assert_eq!(
            address.servers,
            ["nats://10.0.0.1:4222", "nats://10.0.0.2:4222"]
        );
        assert_eq!(
            address.auth,
            Some(UrlAuth::UserPassword("flipd".into(), "s@cret".into()))
        );
        assert!(!address.tls);
        assert_eq!(
            url.redacted(),
            "nats://flipd:***@10.0.0.1:4222, nats://10.0.0.2:4222"
        );
        assert!(!format!("{url:?} {url}").contains("cret"));
        let token = NatsUrl::new("tls://t0ken@nats.example:4222");
        assert_eq!(
            token.address().unwrap().auth,
            Some(UrlAuth::Token("t0ken".into()))
        );
        assert!(token.address().unwrap().tls);
        assert_eq!(token.redacted(), "tls://***@nats.example:4222");
    }

    #[test]
    fn what_is_not_a_nats_url_is_refused_without_its_secret() {
        for bad in [
            "http://u:pw@host:4222",
            "nats://u:pw@:4222",
            "nats://",
            "nats://u:p%zz@h:1",
        ] {
            let refused = NatsUrl::new(bad).check().unwrap_err();
            assert!(
                !refused.contains("pw") && !refused.contains("%zz"),
                "{refused}"
            );
        }
        assert_eq!(NatsUrl::default().check(), Ok(()));
        assert_eq!(NatsUrl::new("NATS://127.0.0.1:4222").check(), Ok(()));
    }

    proptest! {
        /// Whatever the secret, the forms that are shown never hold it.
        #[test]
        fn a_secret_is_never_shown(
            user in "[a-z]{1,8}",
            secret in "[A-Z0-9]{6,16}",
            host in "[a-z]{1,8}",
            token in any::<bool>(),
        ) {
            let url = match token {
                true => NatsUrl::new(format!("nats://{secret}@{host}:4222")),
                false => NatsUrl::new(format!("nats://{user}:{secret}@{host}:4222")),
            };
            let shown = format!("{url} {url:?} {}", url.bare());
            prop_assert!(!shown.contains(&secret), "{}", shown);
            prop_assert!(url.has_credentials());
        }
    }
}
