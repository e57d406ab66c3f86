//! The requests of other nodes' players this node has taken up, and their
//! answers: a player's node asks again, with the same request number, when
//! an answer does not come (lost on the bus, or slow), and the owner must
//! then neither carry the command out twice nor answer it differently.
//! So a request is taken up once; asked again while under way it is left
//! to its first answer; asked again once answered, that answer is sent
//! again. Pure bookkeeping: the remote side decides what to do with it.
//!
//! Request numbers start at a random point in each process (see
//! `Remote::attach`), so that a node started again never reuses a number
//! its last incarnation's requests had here.

use std::collections::{HashMap, VecDeque};

use super::RawAnswer;

/// How many requests are remembered, the oldest forgotten first: far more
/// than can be in flight within the time a player's node asks again.
const REMEMBERED: usize = 16_384;

/// What a request asked for (again) is, here.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Taken {
    /// Never seen (or forgotten): to be carried out now.
    Fresh,
    /// Being carried out: its answer goes when it is done.
    Underway,
    /// Carried out: this was its answer.
    Answered(RawAnswer),
}

/// The requests taken up here, by the asking node and its number.
#[derive(Default)]
pub(super) struct Served {
    requests: HashMap<(String, u64), Option<RawAnswer>>,
    order: VecDeque<(String, u64)>,
}

impl Served {
    /// Request `request` of node `from` comes (again): what it is; a fresh
    /// one is under way from now.
    pub(super) fn take(&mut self, from: &str, request: u64) -> Taken {
        let key = (from.to_string(), request);
        if let Some(known) = self.requests.get(&key) {
            return match known {
                Some(answer) => Taken::Answered(answer.clone()),
                None => Taken::Underway,
            };
        }
        self.requests.insert(key.clone(), None);
        self.order.push_back(key);
        while self.order.len() > REMEMBERED {
            if let Some(old) = self.order.pop_front() {
                self.requests.remove(&old);
            }
        }
        Taken::Fresh
    }

    /// Request `request` of `from` was answered `answer` (kept only for a
    /// request taken up here).
    pub(super) fn answered(&mut self, from: &str, request: u64, answer: &RawAnswer) {
        if let Some(kept) = self.requests.get_mut(&(from.to_string(), request)) {
            *kept = Some(answer.clone());
        }
    }

    /// Request `request` of `from` was not carried out and not answered
    /// (it could not be here yet): it is fresh when it comes again.
    pub(super) fn let_go(&mut self, from: &str, request: u64) {
        self.requests.remove(&(from.to_string(), request));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_request_is_taken_up_once_and_its_answer_sent_again() {
        let mut served = Served::default();
        assert_eq!(served.take("b", 7), Taken::Fresh);
        assert_eq!(served.take("b", 7), Taken::Underway);
        assert_eq!(served.take("c", 7), Taken::Fresh, "another node's seven");
        let answer: RawAnswer = Ok((String::new(), "OK".into()));
        served.answered("b", 7, &answer);
        assert_eq!(served.take("b", 7), Taken::Answered(answer));
        served.answered("b", 8, &Err((503, "x".into())));
        assert_eq!(served.take("b", 8), Taken::Fresh, "never taken up");
        served.let_go("b", 8);
        assert_eq!(served.take("b", 8), Taken::Fresh, "let go: fresh again");
    }

    proptest! {
        /// Whatever comes, a request is fresh at most once while it is
        /// remembered, and the memory stays bounded.
        #[test]
        fn fresh_once_while_remembered(requests in proptest::collection::vec((0u8..3, 0u64..50), 0..400)) {
            let mut served = Served::default();
            let mut fresh = std::collections::HashSet::new();
            for (node, request) in requests {
                let from = ["a", "b", "c"][usize::from(node)];
                if served.take(from, request) == Taken::Fresh {
                    prop_assert!(fresh.insert((from, request)));
                }
            }
            prop_assert!(served.requests.len() <= REMEMBERED);
        }
    }
}
