//! Randomness for colours and engine seeds, from the standard library's
//! per-process random keys: enough for these, without another dependency.

/// A random number.
pub fn random_u64() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    std::collections::hash_map::RandomState::new()
        .build_hasher()
        .finish()
}

/// A new guest's secret: 128 bits from the operating system's generator,
/// which (unlike the hasher keys above) an attacker cannot predict from other
/// values the daemon hands out. `None` if the system cannot give them.
pub fn guest_secret() -> Option<crate::rules::lobby::GuestSecret> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).ok()?;
    Some(crate::rules::lobby::GuestSecret::from_bytes(bytes))
}
