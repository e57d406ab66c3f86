//! Names compared without regard to ASCII case: `Vic` and `vic` are one
//! player, and whichever spelling came first is the one kept and shown.
//! Names are ASCII (see `flipline::protocol::check_name`), so folding ASCII
//! letters is the whole rule.
//!
//! The lobby's map is keyed by [`NameKey`] and looked up with a borrowed
//! [`Caseless`] through hashbrown's `Equivalent`, so a lookup neither
//! allocates nor needs the spelling the map holds.

use std::hash::{Hash, Hasher};

use hashbrown::Equivalent;

use crate::Name;

/// A name as a map key: hashed and compared case-insensitively, kept in its
/// first spelling.
#[derive(Clone, Debug)]
pub struct NameKey(pub Name);

/// A borrowed name to look a [`NameKey`] up with.
#[derive(Clone, Copy, Debug)]
pub struct Caseless<'a>(pub &'a str);

/// Hashes `name` folded to lower case, a few bytes at a time rather than one
/// call per byte.
fn hash_folded<H: Hasher>(name: &str, state: &mut H) {
    let mut buffer = [0u8; 32];
    for chunk in name.as_bytes().chunks(buffer.len()) {
        let folded = buffer.iter_mut().zip(chunk);
        let mut len = 0;
        for (to, from) in folded {
            *to = from.to_ascii_lowercase();
            len += 1;
        }
        state.write(buffer.get(..len).unwrap_or_default());
    }
    // As `str` does: keeps `ab` + `c` apart from `a` + `bc` in composite keys.
    state.write_u8(0xff);
}

impl Hash for NameKey {
    fn hash<H: Hasher>(&self, state: &mut H) {
        hash_folded(&self.0, state);
    }
}

impl Hash for Caseless<'_> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        hash_folded(self.0, state);
    }
}

impl PartialEq for NameKey {
    fn eq(&self, other: &NameKey) -> bool {
        self.0.eq_ignore_ascii_case(&other.0)
    }
}

impl Eq for NameKey {}

impl Equivalent<NameKey> for Caseless<'_> {
    fn equivalent(&self, key: &NameKey) -> bool {
        self.0.eq_ignore_ascii_case(&key.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hashbrown::HashMap;
    use proptest::prelude::*;
    use std::hash::BuildHasher;

    /// The hash under one builder's keys (each builder draws its own).
    fn hash_of(value: impl Hash) -> u64 {
        static KEYS: std::sync::OnceLock<hashbrown::DefaultHashBuilder> =
            std::sync::OnceLock::new();
        KEYS.get_or_init(Default::default).hash_one(value)
    }

    #[test]
    fn one_player_whatever_the_case_in_its_first_spelling() {
        let mut map: HashMap<NameKey, u8> = HashMap::new();
        map.insert(NameKey(Name::from("Vic")), 1);
        assert_eq!(map.get(&Caseless("vic")), Some(&1));
        assert_eq!(map.get(&Caseless("VIC")), Some(&1));
        assert_eq!(map.get(&Caseless("vicky")), None);
        assert!(map.insert(NameKey(Name::from("vIc")), 2).is_some());
        let (key, value) = map.get_key_value(&Caseless("vic")).unwrap();
        assert_eq!((&*key.0, *value), ("Vic", 2), "the first spelling stays");
    }

    proptest! {
        #[test]
        fn keys_that_differ_only_in_case_are_one(name in "[A-Za-z0-9_-]{1,40}") {
            let upper = NameKey(Name::from(name.to_ascii_uppercase()));
            let lower = NameKey(Name::from(name.to_ascii_lowercase()));
            prop_assert_eq!(&upper, &lower);
            prop_assert_eq!(hash_of(&upper), hash_of(&lower));
            prop_assert_eq!(hash_of(Caseless(&name)), hash_of(&upper));
            prop_assert!(Caseless(&name).equivalent(&lower));
        }

        #[test]
        fn names_that_differ_otherwise_are_two(a in "[a-z0-9_-]{1,20}", b in "[a-z0-9_-]{1,20}") {
            prop_assume!(a != b);
            prop_assert_ne!(NameKey(Name::from(a.as_str())), NameKey(Name::from(b.as_str())));
            prop_assert!(!Caseless(&a).equivalent(&NameKey(Name::from(b.as_str()))));
        }
    }
}
