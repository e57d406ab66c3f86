//! Keeping a map of what the limits remember (wrong passwords, registrations)
//! within a bound whatever an attacker sends: before a new key goes in, the
//! entries that carry nothing any more are forgotten, and if that is not
//! enough, the one left alone longest that nothing waits on. Pruning walks
//! the map, so it runs only when the map is full: new keys come only with
//! work that costs far more (a password hash each).

use std::collections::HashMap;
use std::hash::Hash;
use std::time::Instant;

/// An entry a bounded map may forget.
pub trait Forgettable {
    /// Whether it says nothing any more at `now` (forgetting it changes no
    /// decision).
    fn is_spent(&self, now: Instant) -> bool;
    /// Whether something under way still counts on it (it is kept then).
    fn is_busy(&self) -> bool;
    /// When it last changed.
    fn last(&self) -> Instant;
}

/// Makes room in `map` for `key`: nothing to do if it is there or the map
/// holds fewer than `bound`; else the spent entries go, then, if none was,
/// the idle entry unchanged longest. Only busy entries are never dropped, so
/// the map exceeds `bound` by at most the entries busy at once.
pub fn make_room<K, V>(map: &mut HashMap<K, V>, key: &K, bound: usize, now: Instant)
where
    K: Hash + Eq + Clone,
    V: Forgettable,
{
    if map.len() < bound || map.contains_key(key) {
        return;
    }
    map.retain(|_, entry| entry.is_busy() || !entry.is_spent(now));
    if map.len() < bound {
        return;
    }
    let oldest = map
        .iter()
        .filter(|(_, entry)| !entry.is_busy())
        .min_by_key(|(_, entry)| entry.last())
        .map(|(key, _)| key.clone());
    if let Some(oldest) = oldest {
        map.remove(&oldest);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    struct Entry {
        spent: bool,
        busy: bool,
        last: Instant,
    }

    impl Forgettable for Entry {
        fn is_spent(&self, _: Instant) -> bool {
            self.spent
        }
        fn is_busy(&self) -> bool {
            self.busy
        }
        fn last(&self) -> Instant {
            self.last
        }
    }

    #[test]
    fn spent_entries_go_first_then_the_oldest_idle_one() {
        let now = Instant::now();
        let at = |s| now + Duration::from_secs(s);
        let mut map = HashMap::new();
        let entry = |spent, busy, last| Entry { spent, busy, last };
        map.insert(1, entry(false, true, at(0)));
        map.insert(2, entry(false, false, at(2)));
        map.insert(3, entry(true, false, at(3)));
        make_room(&mut map, &1, 3, now);
        assert_eq!(map.len(), 3, "a key already in needs no room");
        make_room(&mut map, &9, 3, now);
        assert!(!map.contains_key(&3), "the spent one went");
        assert_eq!(map.len(), 2);
        map.insert(4, entry(false, false, at(4)));
        make_room(&mut map, &9, 3, now);
        assert!(map.contains_key(&1), "busy ones stay, however old");
        assert!(!map.contains_key(&2), "the oldest idle one went");
        map.insert(5, entry(false, true, at(5)));
        map.get_mut(&4).unwrap().busy = true;
        make_room(&mut map, &9, 3, now);
        assert_eq!(map.len(), 3, "all busy: nothing goes");
    }
}
