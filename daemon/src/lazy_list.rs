//! A list that most of its owners keep empty (the games a connection watches,
//! a game's spectators): one pointer while empty, and the vector only once
//! something is in it, since thousands of idle owners should stay small.

/// A vector behind an optional box, absent while empty.
#[derive(Debug)]
#[allow(
    clippy::box_collection,
    reason = "one pointer in every owner, not three"
)]
pub struct LazyList<T>(Option<Box<Vec<T>>>);

impl<T> Default for LazyList<T> {
    fn default() -> LazyList<T> {
        LazyList(None)
    }
}

impl<T> LazyList<T> {
    /// Every item, oldest first.
    pub fn iter(&self) -> impl Iterator<Item = &T> {
        self.0.iter().flat_map(|list| list.iter())
    }

    /// Adds `item` last.
    pub fn push(&mut self, item: T) {
        self.0.get_or_insert_with(Box::default).push(item);
    }

    /// Whether nothing is in it.
    pub fn is_empty(&self) -> bool {
        self.0.is_none()
    }

    /// The item added last.
    pub fn last(&self) -> Option<&T> {
        self.0.as_ref().and_then(|list| list.last())
    }

    /// Every item, leaving none.
    pub fn take(&mut self) -> Vec<T> {
        self.0.take().map(|list| *list).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_box_exists_only_while_something_is_listed() {
        let mut list = LazyList::default();
        assert!(list.0.is_none() && list.last().is_none());
        list.push(1);
        list.push(2);
        list.push(3);
        assert_eq!(list.iter().copied().collect::<Vec<_>>(), [1, 2, 3]);
        assert_eq!(list.last(), Some(&3));
        assert_eq!(list.take(), [1, 2, 3]);
        assert!(list.0.is_none(), "emptied: the box is given back");
        list.push(4);
        assert_eq!(list.take(), [4]);
        assert!(list.0.is_none() && list.take().is_empty());
    }
}
