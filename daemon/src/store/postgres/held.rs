//! The moves of the games open or in play, held by the PostgreSQL writer in
//! memory as the SQLite writer holds its log: they answer `HISTORY` of a
//! game in play and [`crate::store::Store::held_moves`] without a query, and
//! they let the writer check that each move is its game's next before it is
//! sent. They change with the writer's transaction: whatever a batch did
//! to them is undone when it rolls back.
//!
//! One transaction at a time: [`HeldMoves::begin`] hands out a token that
//! only its holder can commit or roll back, and refuses while another is
//! open. A batch whose commit is in doubt keeps its token until the server
//! says whether it committed, so nothing else (a claim, another batch) can
//! change the held moves meanwhile or drop that batch's undo.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};

use flipline::protocol::GameId;

use crate::store::StoredMove;

/// A change to undo if the transaction rolls back.
enum Undo {
    Opened(GameId),
    Appended(GameId),
    TakenBack(GameId, Vec<StoredMove>),
    Closed(GameId, Vec<StoredMove>),
}

/// The moves of each game open or in play.
#[derive(Default)]
pub struct HeldMoves {
    games: HashMap<GameId, Vec<StoredMove>>,
    undo: Vec<Undo>,
    /// The transaction open now, if any.
    open: Option<u64>,
}

/// Transactions are numbered across every `HeldMoves`, so that a token is
/// never taken for another's.
static LAST_TXN: AtomicU64 = AtomicU64::new(0);

/// An open transaction over the held moves: whoever holds it, and only it,
/// ends it (it is neither `Clone` nor `Copy`).
#[derive(Debug, PartialEq, Eq)]
#[must_use = "a transaction is committed or rolled back"]
pub struct Txn(u64);

impl HeldMoves {
    /// Holds the games recovered at start.
    pub fn load(games: impl IntoIterator<Item = (GameId, Vec<StoredMove>)>) -> HeldMoves {
        HeldMoves {
            games: games.into_iter().collect(),
            ..HeldMoves::default()
        }
    }

    /// A transaction begins: what follows may be undone. Refused while
    /// another is open (a batch whose commit is in doubt).
    pub fn begin(&mut self) -> Result<Txn, String> {
        if let Some(open) = self.open {
            return Err(format!(
                "transaction {open} over the held moves is still open (a commit in doubt)"
            ));
        }
        let number = LAST_TXN.fetch_add(1, Ordering::Relaxed).wrapping_add(1);
        self.open = Some(number);
        self.undo.clear();
        Ok(Txn(number))
    }

    /// Whether `txn` is the transaction open now (a token of another
    /// `HeldMoves`, or a stale one, is not).
    fn is_open(&self, txn: &Txn) -> bool {
        self.open == Some(txn.0)
    }

    /// The transaction committed: its changes stay.
    pub fn commit(&mut self, txn: Txn) {
        if self.is_open(&txn) {
            self.undo.clear();
            self.open = None;
        }
    }

    /// The transaction rolled back: its changes are undone, last first.
    pub fn rollback(&mut self, txn: Txn) {
        if !self.is_open(&txn) {
            return;
        }
        self.open = None;
        while let Some(undo) = self.undo.pop() {
            match undo {
                Undo::Opened(game) => {
                    self.games.remove(&game);
                }
                Undo::Appended(game) => {
                    if let Some(moves) = self.games.get_mut(&game) {
                        moves.pop();
                    }
                }
                Undo::TakenBack(game, moves) => {
                    self.games.entry(game).or_default().extend(moves);
                }
                Undo::Closed(game, moves) => {
                    self.games.insert(game, moves);
                }
            }
        }
    }

    /// Whether `game` is held (open or in play here).
    pub fn holds(&self, game: GameId) -> bool {
        self.games.contains_key(&game)
    }

    /// A new game, open or in play, starting from `start`.
    pub fn open(&mut self, game: GameId, start: Vec<StoredMove>) -> Result<(), String> {
        if self.games.contains_key(&game) {
            return Err(format!("game {game} is already open or in play"));
        }
        self.games.insert(game, start);
        self.record(Undo::Opened(game));
        Ok(())
    }

    /// Move `ply` of `game`: it must be the game's next.
    pub fn append(&mut self, game: GameId, ply: u32, mv: StoredMove) -> Result<(), String> {
        let Some(moves) = self.games.get_mut(&game) else {
            return Err(format!("game {game} is not open or in play"));
        };
        if usize::try_from(ply).ok() != moves.len().checked_add(1) {
            return Err(format!(
                "move {ply} of game {game} out of order: {} moves are stored",
                moves.len()
            ));
        }
        moves.push(mv);
        self.record(Undo::Appended(game));
        Ok(())
    }

    /// Takes back the moves after the first `keep` of a game holding
    /// `plies`; how many.
    pub fn take_back(&mut self, game: GameId, keep: u32, plies: u32) -> Result<usize, String> {
        let held = self.games.get(&game).map_or(0, Vec::len);
        let (Ok(keep_len), Ok(plies_len)) = (usize::try_from(keep), usize::try_from(plies)) else {
            return Err(format!("game {game}: ply out of range"));
        };
        if held != plies_len || keep_len >= plies_len {
            return Err(format!(
                "cannot take game {game} back to {keep} moves from {plies}: {held} are stored"
            ));
        }
        let Some(moves) = self.games.get_mut(&game) else {
            return Err(format!("game {game} has no moves"));
        };
        let taken = moves.split_off(keep_len);
        let count = taken.len();
        self.record(Undo::TakenBack(game, taken));
        Ok(count)
    }

    /// The game is over or cancelled: its moves are no longer held.
    pub fn close(&mut self, game: GameId) {
        if let Some(moves) = self.games.remove(&game) {
            self.record(Undo::Closed(game, moves));
        }
    }

    /// Keeps what undoes a change, if a transaction is open (a change made
    /// outside one, as at start, cannot be undone).
    fn record(&mut self, undo: Undo) {
        if self.open.is_some() {
            self.undo.push(undo);
        }
    }

    /// The moves of a game open or in play; `None` for any other, or one
    /// with none yet.
    pub fn moves(&self, game: GameId) -> Option<Vec<StoredMove>> {
        self.games.get(&game).filter(|m| !m.is_empty()).cloned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flipline::Move;

    fn mv(text: &str) -> StoredMove {
        StoredMove {
            mv: text.parse::<Move>().unwrap(),
            ms: Some(5),
        }
    }

    #[test]
    fn moves_must_come_in_order_and_a_rollback_undoes_a_whole_batch() {
        let mut held = HeldMoves::default();
        let txn = held.begin().unwrap();
        held.open(1, vec![]).unwrap();
        held.append(1, 1, mv("f5")).unwrap();
        held.commit(txn);
        assert!(held.append(1, 3, mv("d6")).is_err(), "a ply skipped");
        assert!(held.append(2, 1, mv("d6")).is_err(), "a game not in play");
        let txn = held.begin().unwrap();
        held.append(1, 2, mv("d6")).unwrap();
        held.take_back(1, 1, 2).unwrap();
        held.append(1, 2, mv("f6")).unwrap();
        held.close(1);
        held.open(2, vec![mv("f5")]).unwrap();
        held.rollback(txn);
        assert_eq!(held.moves(1), Some(vec![mv("f5")]));
        assert_eq!(held.moves(2), None);
        assert!(
            held.take_back(1, 0, 2).is_err(),
            "it holds one move, not two"
        );
    }

    #[test]
    fn a_transaction_in_doubt_keeps_its_undo_whoever_else_asks() {
        let mut held = HeldMoves::load([(1, vec![mv("f5")])]);
        let in_doubt = held.begin().unwrap();
        held.append(1, 2, mv("d6")).unwrap();
        // A claim (or any batch) meanwhile cannot begin, so it can neither
        // commit the batch in doubt nor change what that batch would undo.
        assert!(held.begin().is_err());
        held.rollback(in_doubt);
        assert_eq!(
            held.moves(1),
            Some(vec![mv("f5")]),
            "the move in doubt undone"
        );
        let next = held.begin().unwrap();
        held.append(1, 2, mv("f6")).unwrap();
        held.commit(next);
        assert_eq!(held.moves(1), Some(vec![mv("f5"), mv("f6")]));
    }

    #[test]
    fn a_token_ends_only_its_own_transaction() {
        let mut held = HeldMoves::load([(1, vec![])]);
        let mut other = HeldMoves::default();
        let stale = other.begin().unwrap();
        let txn = held.begin().unwrap();
        held.append(1, 1, mv("f5")).unwrap();
        held.commit(stale);
        assert!(held.begin().is_err(), "still open: the token was another's");
        held.rollback(txn);
        assert_eq!(held.moves(1), None);
    }
}
