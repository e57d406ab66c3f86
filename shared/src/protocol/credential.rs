//! What a `LOGIN` shows besides the name: a registered name's password, or
//! the secret a guest was given with its first `OK`, which alone takes the
//! guest's name back while the daemon holds it (a seat kept through a
//! disconnect). Without either, a name is a guest's name.

/// The keyword that introduces a guest's secret: `LOGIN ann secret TOKEN` to
/// resume, `OK ann secret TOKEN` when a guest logs in.
pub const SECRET_KEYWORD: &str = "secret";

/// The longest secret a client may show (the daemon's are 32 characters).
pub const MAX_SECRET_LEN: usize = 64;

/// What follows the name in `LOGIN`.
#[derive(Clone, PartialEq, Eq)]
pub enum Credential {
    /// `LOGIN ann PASSWORD`: registers a free name, or logs into a registered one.
    Password(String),
    /// `LOGIN ann secret TOKEN`: resumes a guest's name with the secret its
    /// login was given.
    Secret(String),
}

// Neither a password nor a secret is ever printed, not even in a debug log.
impl std::fmt::Debug for Credential {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Credential::Password(_) => f.write_str("Password(..)"),
            Credential::Secret(_) => f.write_str("Secret(..)"),
        }
    }
}

/// Whether `token` has the shape of a guest's secret: 1 to
/// [`MAX_SECRET_LEN`] ASCII letters and digits.
pub fn valid_secret(token: &str) -> bool {
    (1..=MAX_SECRET_LEN).contains(&token.len()) && token.bytes().all(|b| b.is_ascii_alphanumeric())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_secret_is_letters_and_digits_of_bounded_length() {
        assert!(valid_secret("0f3a9c"));
        assert!(valid_secret(&"a".repeat(MAX_SECRET_LEN)));
        assert!(!valid_secret(""));
        assert!(!valid_secret(&"a".repeat(MAX_SECRET_LEN + 1)));
        assert!(!valid_secret("ab-cd"));
        assert!(!valid_secret("ab cd"));
    }

    #[test]
    fn debug_never_shows_the_text() {
        let shown = format!(
            "{:?} {:?}",
            Credential::Password("tiger".into()),
            Credential::Secret("0f3a".into())
        );
        assert!(
            !shown.contains("tiger") && !shown.contains("0f3a"),
            "{shown}"
        );
    }
}
