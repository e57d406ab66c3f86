//! The registered names, kept in memory so that a `LOGIN` without a password
//! is answered without reading the store: a guest's name is free unless it
//! is here. Loaded from the store at start and added to as registrations are
//! committed; names are never unregistered, so the set only grows.
//!
//! Names are one name whatever their ASCII case, as the lobby compares them
//! (`Vic` is `vic`), and the first spelling is kept and shown. A name is kept
//! inline in [`MAX_NAME_LEN`] bytes rather than as a string of its own on the
//! heap, so a registered name costs its 20 bytes and the set's control byte
//! and slack (about 25 to 50 bytes in all, depending on how full the table
//! is): 100,000 names take a few megabytes. Longer names (none is, since
//! names are checked, but a store is read as it is) are kept apart.
//!
//! A registration sent to the store and not yet answered is *in flight*: the
//! store may hold it already (a commit whose answer is late), so until the
//! store answers, the name is neither free nor registered, and nobody is told
//! either ([`Standing::Registering`]). Pure: the shell tells it what the store
//! answered.

use std::collections::HashSet;
use std::hash::{Hash, Hasher};

use flipline::protocol::MAX_NAME_LEN;

/// What is known of a name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Standing<'a> {
    /// Nobody has registered it (in any case) and no registration of it is
    /// in flight.
    Free,
    /// Registered, spelled so.
    Registered(&'a str),
    /// A registration of it was sent to the store, which has not answered.
    Registering,
}

/// Feeds `bytes` folded to lower case to `state`, as one `str` would be.
fn hash_folded<H: Hasher>(bytes: &[u8], state: &mut H) {
    for byte in bytes {
        state.write_u8(byte.to_ascii_lowercase());
    }
    state.write_u8(0xff);
}

/// A name of at most [`MAX_NAME_LEN`] bytes and no zero byte, as spelled,
/// padded with zero bytes.
#[derive(Clone, Copy)]
struct Short([u8; MAX_NAME_LEN]);

impl Short {
    fn new(name: &str) -> Option<Short> {
        if name.len() > MAX_NAME_LEN || name.bytes().any(|b| b == 0) {
            return None;
        }
        let mut bytes = [0u8; MAX_NAME_LEN];
        bytes
            .get_mut(..name.len())?
            .copy_from_slice(name.as_bytes());
        Some(Short(bytes))
    }

    fn bytes(&self) -> &[u8] {
        let len = self.0.iter().position(|&b| b == 0).unwrap_or(MAX_NAME_LEN);
        self.0.get(..len).unwrap_or_default()
    }

    fn as_str(&self) -> &str {
        // The bytes of a whole `str`, so never refused.
        std::str::from_utf8(self.bytes()).unwrap_or_default()
    }
}

impl Hash for Short {
    fn hash<H: Hasher>(&self, state: &mut H) {
        hash_folded(self.bytes(), state);
    }
}

impl PartialEq for Short {
    fn eq(&self, other: &Short) -> bool {
        self.bytes().eq_ignore_ascii_case(other.bytes())
    }
}

impl Eq for Short {}

/// A name that does not fit a [`Short`].
#[derive(Clone, Debug)]
struct Long(Box<str>);

impl Hash for Long {
    fn hash<H: Hasher>(&self, state: &mut H) {
        hash_folded(self.0.as_bytes(), state);
    }
}

impl PartialEq for Long {
    fn eq(&self, other: &Long) -> bool {
        self.0.eq_ignore_ascii_case(&other.0)
    }
}

impl Eq for Long {}

/// The registered names and the registrations in flight (see the module
/// docs).
#[derive(Default)]
pub struct RegisteredNames {
    short: HashSet<Short>,
    long: HashSet<Long>,
    /// Registrations sent to the store and not yet answered: few (each is a
    /// connection's, one at a time), so a list.
    registering: Vec<Box<str>>,
}

impl std::fmt::Debug for RegisteredNames {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RegisteredNames")
            .field("registered", &self.len())
            .field("registering", &self.registering.len())
            .finish()
    }
}

impl RegisteredNames {
    /// No name registered.
    pub fn new() -> RegisteredNames {
        RegisteredNames::default()
    }

    /// Adds a registered name; a name already there in another case keeps
    /// its first spelling.
    pub fn insert(&mut self, name: &str) {
        match Short::new(name) {
            Some(short) => {
                self.short.insert(short);
            }
            None => {
                self.long.insert(Long(name.into()));
            }
        }
    }

    /// The name as registered, in any case, if it is.
    pub fn registered(&self, name: &str) -> Option<&str> {
        match Short::new(name) {
            Some(short) => self.short.get(&short).map(Short::as_str),
            None => self.long.get(&Long(name.into())).map(|long| &*long.0),
        }
    }

    /// What is known of `name`.
    pub fn standing(&self, name: &str) -> Standing<'_> {
        if let Some(spelled) = self.registered(name) {
            return Standing::Registered(spelled);
        }
        if self.is_registering(name) {
            return Standing::Registering;
        }
        Standing::Free
    }

    /// Marks a registration of `name` as sent to the store, if the name is
    /// free; otherwise what it is, and nothing is marked.
    pub fn begin(&mut self, name: &str) -> Result<(), Standing<'_>> {
        match self.standing(name) {
            Standing::Free => {
                self.registering.push(name.into());
                Ok(())
            }
            _ => Err(self.standing(name)),
        }
    }

    /// The store answered the registration of `name` begun with
    /// [`RegisteredNames::begin`]: `stored` if the name is registered now
    /// (by this registration, or by another in another case), else it was
    /// not stored. A registration the store never answers (it closed) is
    /// never settled, and its name stays in flight.
    pub fn settle(&mut self, name: &str, stored: bool) {
        if let Some(at) = (self.registering.iter()).position(|r| r.eq_ignore_ascii_case(name)) {
            self.registering.swap_remove(at);
        }
        if stored {
            self.insert(name);
        }
    }

    fn is_registering(&self, name: &str) -> bool {
        (self.registering.iter()).any(|r| r.eq_ignore_ascii_case(name))
    }

    /// How many names are registered.
    pub fn len(&self) -> usize {
        self.short.len() + self.long.len()
    }

    /// Whether no name is registered.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The bytes the registered names' tables take (not counting the few
    /// longer names' strings).
    pub fn table_bytes(&self) -> usize {
        let slot = std::mem::size_of::<Short>() + 1;
        self.short.capacity() * slot + self.long.capacity() * (std::mem::size_of::<Long>() + 1)
    }
}

impl<'a> FromIterator<&'a str> for RegisteredNames {
    fn from_iter<I: IntoIterator<Item = &'a str>>(names: I) -> RegisteredNames {
        let mut set = RegisteredNames::new();
        for name in names {
            set.insert(name);
        }
        set
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lobby::LobbyCore;
    use proptest::prelude::*;

    #[test]
    fn a_name_is_registered_whatever_its_case_in_its_first_spelling() {
        let mut set: RegisteredNames = ["Vic"].into_iter().collect();
        assert_eq!(set.standing("vic"), Standing::Registered("Vic"));
        assert_eq!(set.standing("VIC"), Standing::Registered("Vic"));
        assert_eq!(set.standing("vicky"), Standing::Free);
        assert_eq!(set.standing("vi"), Standing::Free);
        set.insert("vIc");
        assert_eq!(
            set.registered("vic"),
            Some("Vic"),
            "the first spelling stays"
        );
        assert_eq!(set.len(), 1);
        let long = "a".repeat(MAX_NAME_LEN + 5);
        set.insert(&long);
        assert_eq!(set.registered(&long.to_uppercase()), Some(long.as_str()));
        assert_eq!(set.registered(&long[1..]), None);
        assert_eq!(set.len(), 2);
    }

    #[test]
    fn a_registration_in_flight_is_neither_free_nor_registered_until_answered() {
        let mut set = RegisteredNames::new();
        assert_eq!(set.begin("ann"), Ok(()));
        assert_eq!(set.standing("ANN"), Standing::Registering);
        assert_eq!(
            set.begin("Ann"),
            Err(Standing::Registering),
            "one at a time"
        );
        set.settle("ann", false);
        assert_eq!(set.standing("ann"), Standing::Free, "not stored");
        assert_eq!(set.begin("Ann"), Ok(()));
        set.settle("Ann", true);
        assert_eq!(set.standing("ann"), Standing::Registered("Ann"));
        assert_eq!(set.begin("ann"), Err(Standing::Registered("Ann")));
    }

    #[test]
    fn a_registered_name_costs_tens_of_bytes() {
        assert_eq!(std::mem::size_of::<Short>(), MAX_NAME_LEN);
        let names: Vec<String> = (0..100_000).map(|i| format!("player{i}")).collect();
        let set: RegisteredNames = names.iter().map(String::as_str).collect();
        assert_eq!(set.len(), 100_000);
        let per_name = set.table_bytes() / set.len();
        assert!(per_name <= 48, "{per_name} bytes a name");
    }

    /// The steps of the model test.
    #[derive(Clone, Debug)]
    enum Step {
        Insert(String),
        Begin(String),
        Settle(String, bool),
    }

    fn step() -> impl Strategy<Value = Step> {
        let name = "[aAbB]{1,3}";
        prop_oneof![
            name.prop_map(Step::Insert),
            name.prop_map(Step::Begin),
            (name, any::<bool>()).prop_map(|(n, s)| Step::Settle(n, s)),
        ]
    }

    proptest! {
        /// Whether a name is registered is whether the lobby, holding the
        /// registered spelling, takes it for the same player.
        #[test]
        fn registered_is_the_lobbys_one_player(
            registered in "[A-Za-z0-9_-]{1,24}",
            other in "[A-Za-z0-9_-]{1,24}",
            flips in any::<u32>(),
            recased in any::<bool>(),
        ) {
            // Half the time the same name in other cases, else another.
            let asked: String = if recased {
                let flip = |(i, c): (usize, char)| {
                    if flips >> (i % 32) & 1 == 1 { c.to_ascii_uppercase() } else { c.to_ascii_lowercase() }
                };
                registered.chars().enumerate().map(flip).collect()
            } else {
                other
            };
            let set: RegisteredNames = [registered.as_str()].into_iter().collect();
            let mut lobby = LobbyCore::<u64>::new();
            prop_assert!(lobby.login(&crate::Name::from(registered.as_str()), 1, None).is_ok());
            let same = lobby.holder(&asked).is_some();
            prop_assert_eq!(set.registered(&asked).is_some(), same);
            let cased = set.registered(&registered.to_ascii_uppercase());
            prop_assert_eq!(cased, Some(registered.as_str()));
        }

        /// Against a list compared name by name, the obvious way.
        #[test]
        fn the_set_answers_as_a_list_would(steps in proptest::collection::vec(step(), 1..60)) {
            let mut set = RegisteredNames::new();
            let (mut listed, mut flying): (Vec<String>, Vec<String>) = (Vec::new(), Vec::new());
            let find = |list: &[String], name: &str| {
                list.iter().find(|n| n.eq_ignore_ascii_case(name)).cloned()
            };
            for step in steps {
                match step {
                    Step::Insert(name) => {
                        set.insert(&name);
                        if find(&listed, &name).is_none() {
                            listed.push(name);
                        }
                    }
                    Step::Begin(name) => {
                        let free = find(&listed, &name).is_none() && find(&flying, &name).is_none();
                        prop_assert_eq!(set.begin(&name).is_ok(), free);
                        if free {
                            flying.push(name);
                        }
                    }
                    Step::Settle(name, stored) => {
                        set.settle(&name, stored);
                        flying.retain(|n| !n.eq_ignore_ascii_case(&name));
                        if stored && find(&listed, &name).is_none() {
                            listed.push(name);
                        }
                    }
                }
                for name in ["a", "A", "ab", "BA", "abb", "bab", "b"] {
                    let expected = match (find(&listed, name), find(&flying, name)) {
                        (Some(spelled), _) => Some(spelled),
                        (None, Some(_)) => Some("in flight".to_string()),
                        (None, None) => None,
                    };
                    let got = match set.standing(name) {
                        Standing::Registered(spelled) => Some(spelled.to_string()),
                        Standing::Registering => Some("in flight".to_string()),
                        Standing::Free => None,
                    };
                    prop_assert_eq!(got, expected, "{}", name);
                }
                prop_assert_eq!(set.len(), listed.len());
            }
        }
    }
}
