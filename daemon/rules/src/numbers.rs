//! Game numbers handed out by a lobby. A single daemon counts on from the
//! highest stored number. The nodes of a cluster share one store, so each
//! takes blocks of numbers from it (a counter in the database that every
//! block moves on) and hands its own block out; it asks for the next block
//! while half of the current one is left, so that a block is at hand before
//! it is needed.
//!
//! Should the blocks run out (the database unreachable for as long as half a
//! block of new games takes) the numbers go on past the block: the store
//! keeps each number once (its primary key), so a number another node also
//! gives is refused as a game that could not be saved, never stored twice.

use std::ops::Range;

/// Numbers to hand out.
#[derive(Clone, Debug)]
pub struct Numbers {
    now: Range<u64>,
    next: Option<Range<u64>>,
    /// Blocks come from the store: a block has been asked for and not given.
    blocks: Option<Asking>,
    /// Numbers handed out past the last block.
    overrun: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Asking {
    No,
    Yes,
}

impl Numbers {
    /// Every number from `first` on (a single daemon).
    pub fn from(first: u64) -> Numbers {
        Numbers {
            now: first.max(1)..u64::MAX,
            next: None,
            blocks: None,
            overrun: 0,
        }
    }

    /// The numbers of `block`, and more blocks as they are given.
    pub fn in_blocks(block: Range<u64>) -> Numbers {
        Numbers {
            now: block,
            next: None,
            blocks: Some(Asking::No),
            overrun: 0,
        }
    }

    /// The next number.
    pub fn take(&mut self) -> u64 {
        if self.now.is_empty()
            && let Some(next) = self.next.take()
        {
            self.now = next;
        }
        match self.now.next() {
            Some(number) => number,
            None => {
                // Past the last block: see the module's docs.
                self.overrun += 1;
                self.now.end.saturating_add(self.overrun - 1)
            }
        }
    }

    /// A number the store already holds (a game recovered or taken over):
    /// counting from one, the next number comes after it. Blocks never
    /// hold another node's numbers, so they need no such care.
    pub fn seen(&mut self, number: u64) {
        if self.blocks.is_none() && number >= self.now.start {
            self.now.start = number.saturating_add(1);
        }
    }

    /// Whether to ask the store for a block now (and that it is asked).
    pub fn ask(&mut self) -> bool {
        let low = self.next.is_none() && self.left_now().saturating_mul(2) <= BLOCK;
        match self.blocks {
            Some(Asking::No) if low => {
                self.blocks = Some(Asking::Yes);
                true
            }
            _ => false,
        }
    }

    /// The block asked for, given.
    pub fn given(&mut self, block: Range<u64>) {
        self.blocks = Some(Asking::No);
        if block.is_empty() {
            return;
        }
        if self.now.is_empty() {
            self.now = block;
            self.overrun = 0;
        } else {
            self.next = Some(block);
        }
    }

    /// The block asked for could not be had: ask again next time.
    pub fn not_given(&mut self) {
        self.blocks = Some(Asking::No);
    }

    /// Whether numbers were handed out past the last block.
    pub fn overran(&self) -> bool {
        self.overrun > 0
    }

    fn left_now(&self) -> u64 {
        self.now.end.saturating_sub(self.now.start)
    }
}

/// The numbers in a block.
pub const BLOCK: u64 = 1000;

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::HashSet;

    #[test]
    fn a_single_daemon_counts_on_past_what_it_recovered() {
        let mut numbers = Numbers::from(5);
        numbers.seen(9);
        assert_eq!((numbers.take(), numbers.take()), (10, 11));
        assert!(!numbers.ask());
    }

    #[test]
    fn blocks_are_asked_for_at_half_and_used_in_turn() {
        let mut numbers = Numbers::in_blocks(1000..2000);
        assert!(!numbers.ask());
        for _ in 0..500 {
            numbers.take();
        }
        assert!(numbers.ask());
        assert!(!numbers.ask(), "asked once until answered");
        numbers.given(5000..6000);
        let taken: Vec<u64> = (0..501).map(|_| numbers.take()).collect();
        assert_eq!((taken[499], taken[500]), (1999, 5000));
        assert!(!numbers.overran());
    }

    proptest! {
        /// Numbers from blocks are never handed out twice, and lie in the
        /// blocks given unless the blocks ran out.
        #[test]
        fn no_number_twice(steps in proptest::collection::vec(0u8..4, 1..400)) {
            let mut numbers = Numbers::in_blocks(1..11);
            let mut given: Vec<Range<u64>> = Vec::new();
            given.push(1..11);
            let mut next_block = 10_000;
            let mut seen = HashSet::new();
            for step in steps {
                match step {
                    0 | 1 => {
                        let n = numbers.take();
                        prop_assert!(seen.insert(n), "{n} twice");
                        if !numbers.overran() {
                            prop_assert!(given.iter().any(|b| b.contains(&n)));
                        }
                    }
                    2 => {
                        if numbers.ask() {
                            let block = next_block..next_block + 10;
                            next_block += 10_000;
                            given.push(block.clone());
                            numbers.given(block);
                        }
                    }
                    _ => {
                        if numbers.ask() {
                            numbers.not_given();
                        }
                    }
                }
            }
        }
    }
}
