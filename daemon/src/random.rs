//! Randomness for colours and engine seeds, from the standard library's
//! per-process random keys: enough for these, without another dependency.

/// A random number.
pub fn random_u64() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    std::collections::hash_map::RandomState::new()
        .build_hasher()
        .finish()
}
