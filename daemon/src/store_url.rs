//! `store.url`: where a PostgreSQL store is, as libpq writes it
//! (`postgres://user@host:port/db?sslmode=...`, or `host=... dbname=...`).
//! It may carry a password, so it is a type of its own that never shows
//! one: its `Debug`, `Display` and serialised forms (what `--check-config`
//! prints, what logs and errors name) put `***` in the password's place;
//! only [`StoreUrl::expose`] gives the text itself, to connect with.

/// A PostgreSQL connection URL or key/value string; empty: no PostgreSQL.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct StoreUrl(String);

/// What stands for a password wherever the URL is shown.
const HIDDEN: &str = "***";

impl StoreUrl {
    /// The URL as given.
    pub fn new(text: impl Into<String>) -> StoreUrl {
        StoreUrl(text.into())
    }

    /// Whether none was given (the store is SQLite).
    pub fn is_empty(&self) -> bool {
        self.0.trim().is_empty()
    }

    /// The text itself, password included: only to connect with.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// The text with any password replaced by `***`.
    pub fn redacted(&self) -> String {
        redact(&self.0)
    }

    /// Whether it is empty or a connection string the client reads; the
    /// error says why not, without the password.
    pub fn check(&self) -> Result<(), String> {
        if self.is_empty() {
            return Ok(());
        }
        let (url, _) = crate::tls_settings::split(&self.0).map_err(|e| redact(&e))?;
        url.parse::<tokio_postgres::Config>()
            .map(|_| ())
            .map_err(|e| redact(&e.to_string()))
    }
}

crate::config_table::secret_text!(StoreUrl);

/// `text` with the password of a URL's user part, and the value of every
/// `password` parameter (in a URL's query or a key/value string), hidden.
pub fn redact(text: &str) -> String {
    let text = redact_user_password(text);
    redact_password_parameters(&text)
}

/// `scheme://user:secret@host` becomes `scheme://user:***@host`.
fn redact_user_password(text: &str) -> String {
    let Some(scheme_end) = text.find("://") else {
        return text.to_string();
    };
    let authority_start = scheme_end + 3;
    let rest = &text[authority_start..];
    let authority_len = rest.find(['/', '?']).unwrap_or(rest.len());
    let authority = &rest[..authority_len];
    let Some(at) = authority.rfind('@') else {
        return text.to_string();
    };
    let user_info = &authority[..at];
    let Some(colon) = user_info.find(':') else {
        return text.to_string();
    };
    let password_start = authority_start + colon + 1;
    let password_end = authority_start + at;
    format!(
        "{}{HIDDEN}{}",
        &text[..password_start],
        &text[password_end..]
    )
}

/// Every `password=value` (`&`-separated in a URL's query, space-separated
/// and maybe quoted in a key/value string) gets `***` for its value.
fn redact_password_parameters(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(found) = find_password_key(rest) {
        let (before, after_key) = rest.split_at(found.value_start);
        out.push_str(before);
        out.push_str(HIDDEN);
        rest = &after_key[value_len(after_key)..];
    }
    out.push_str(rest);
    out
}

struct PasswordKey {
    /// Where its value starts, after `=` and any spaces.
    value_start: usize,
}

/// The next `password` key (at the start, or after `?`, `&` or a space,
/// in any case) followed by `=`.
fn find_password_key(text: &str) -> Option<PasswordKey> {
    let lower = text.to_ascii_lowercase();
    let mut from = 0;
    while let Some(offset) = lower[from..].find("password") {
        let start = from + offset;
        let after = start + "password".len();
        let boundary = start == 0
            || matches!(
                lower.as_bytes().get(start - 1),
                Some(b'?' | b'&' | b' ' | b'\t')
            );
        let tail = &lower[after..];
        let spaces = tail.len() - tail.trim_start().len();
        if boundary && tail.trim_start().starts_with('=') {
            let value = &tail[spaces + 1..];
            let value_spaces = value.len() - value.trim_start().len();
            return Some(PasswordKey {
                value_start: after + spaces + 1 + value_spaces,
            });
        }
        from = after;
    }
    None
}

/// The length of a parameter's value at the start of `text`: a quoted
/// value to its closing quote (a backslash escapes), else up to `&` or
/// white space.
fn value_len(text: &str) -> usize {
    let mut chars = text.char_indices();
    if text.starts_with('\'') {
        chars.next();
        let mut escaped = false;
        for (at, c) in chars {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '\'' => return at + 1,
                _ => {}
            }
        }
        return text.len();
    }
    text.find(['&', ' ', '\t']).unwrap_or(text.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config_table::Value;
    use proptest::prelude::*;

    #[test]
    fn a_urls_password_is_hidden_and_the_rest_kept() {
        let cases = [
            (
                "postgres://ann:s3cret@db.example:5432/flip?sslmode=require",
                "postgres://ann:***@db.example:5432/flip?sslmode=require",
            ),
            (
                "postgresql://ann@127.0.0.1/flip",
                "postgresql://ann@127.0.0.1/flip",
            ),
            (
                "postgres://ann@h/flip?password=s3cret&sslmode=verify-full",
                "postgres://ann@h/flip?password=***&sslmode=verify-full",
            ),
            (
                "host=h user=ann password='a b\\' c' dbname=flip",
                "host=h user=ann password=*** dbname=flip",
            ),
            ("host=h PASSWORD = s3cret", "host=h PASSWORD = ***"),
            ("host=h user=password_owner", "host=h user=password_owner"),
            ("", ""),
        ];
        for (given, shown) in cases {
            assert_eq!(redact(given), shown, "{given}");
        }
    }

    #[test]
    fn the_url_is_checked_without_showing_its_password() {
        assert_eq!(StoreUrl::default().check(), Ok(()));
        assert_eq!(StoreUrl::new("postgres://ann:pw@h:5432/db").check(), Ok(()));
        let bad = StoreUrl::new("postgres://ann:pw@h:notaport/db").check();
        let why = bad.expect_err("a port that is not a number");
        assert!(!why.contains("pw@"), "{why}");
    }

    proptest! {
        #[test]
        fn no_password_survives_in_what_is_shown(
            user in "[a-z]{1,8}",
            secret in "[A-Za-z0-9!#%^*()_+-]{6,20}",
            host in "[a-z]{1,8}(\\.[a-z]{2,4})?",
            form in 0..3u8,
        ) {
            let text = match form {
                0 => format!("postgres://{user}:{secret}@{host}:5432/flip"),
                1 => format!("postgres://{user}@{host}/flip?sslmode=prefer&password={secret}"),
                _ => format!("host={host} user={user} password={secret} dbname=flip"),
            };
            let url = StoreUrl::new(text);
            for shown in [url.to_string(), format!("{url:?}"), url.bare(), ron::to_string(&url).unwrap_or_default()] {
                prop_assert!(!shown.contains(&secret), "{}", shown);
                prop_assert!(shown.contains(&user), "{}", shown);
            }
        }
    }
}
