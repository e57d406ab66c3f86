//! A guest's secret: given with its `OK` at login, shown again to take the
//! name back while the lobby holds it for the guest (a seat kept through a
//! disconnect). Registered names have passwords instead.
//!
//! 128 random bits (the shell draws them; the core only compares), written as
//! 32 lower-case hex digits, compared in constant time so that the time of a
//! refusal says nothing about how much of a guess was right.

use std::fmt;

/// A guest's secret (see the module docs).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct GuestSecret([u8; 16]);

impl GuestSecret {
    /// The secret made of these random bytes.
    pub const fn from_bytes(bytes: [u8; 16]) -> GuestSecret {
        GuestSecret(bytes)
    }

    /// Reads what a client showed; `None` unless it is 32 hex digits.
    pub fn parse(shown: &str) -> Option<GuestSecret> {
        if shown.len() != 32 {
            return None;
        }
        let mut bytes = [0u8; 16];
        for (byte, pair) in bytes.iter_mut().zip(shown.as_bytes().chunks(2)) {
            let pair = std::str::from_utf8(pair).ok()?;
            *byte = u8::from_str_radix(pair, 16).ok()?;
        }
        Some(GuestSecret(bytes))
    }

    /// Whether `shown` is this secret, in time that does not depend on where
    /// they differ.
    pub fn matches(&self, shown: Option<&GuestSecret>) -> bool {
        let Some(shown) = shown else {
            return false;
        };
        let difference = (self.0.iter().zip(&shown.0)).fold(0u8, |acc, (a, b)| acc | (a ^ b));
        difference == 0
    }
}

impl fmt::Display for GuestSecret {
    /// The 32 hex digits the client is given.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.iter().try_for_each(|byte| write!(f, "{byte:02x}"))
    }
}

// A secret is never printed by accident, not even in a debug log.
impl fmt::Debug for GuestSecret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("GuestSecret(..)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn only_the_same_secret_matches() {
        let secret = GuestSecret::from_bytes([7; 16]);
        let other = GuestSecret::from_bytes([8; 16]);
        assert!(secret.matches(Some(&secret)));
        assert!(!secret.matches(Some(&other)));
        assert!(!secret.matches(None));
        assert_eq!(format!("{secret:?}"), "GuestSecret(..)");
        assert_eq!(GuestSecret::parse("0f"), None);
        assert_eq!(GuestSecret::parse(&"g".repeat(32)), None);
        assert_eq!(GuestSecret::parse(&"é".repeat(16)), None);
    }

    proptest! {
        #[test]
        fn a_secret_reads_back_from_what_the_client_is_given(bytes in any::<[u8; 16]>()) {
            let secret = GuestSecret::from_bytes(bytes);
            let text = secret.to_string();
            prop_assert_eq!(text.len(), 32);
            prop_assert!(flipline::protocol::valid_secret(&text));
            prop_assert_eq!(GuestSecret::parse(&text), Some(secret));
            prop_assert_eq!(GuestSecret::parse(&text.to_ascii_uppercase()), Some(secret));
        }
    }
}
