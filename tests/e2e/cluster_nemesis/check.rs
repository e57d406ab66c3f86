//! What must hold after the run, read from the replies the players heard
//! and from the store.

use std::collections::HashMap;

use flipline::{Game, Move, Variant};

use super::players::{Reply, Said};

/// A game as stored: its moves by ply (from 1).
pub struct StoredGame {
    pub plies: Vec<(u32, String)>,
}

/// Every violation of the run's promises, in words (none: all held).
pub fn violations(replies: &[Reply], stored: &HashMap<u64, StoredGame>) -> Vec<String> {
    let mut found = Vec::new();
    let mut acked: HashMap<(u64, usize), Move> = HashMap::new();
    for reply in replies.iter().filter(|r| r.said == Said::Played) {
        if let Some(other) = acked.insert((reply.game, reply.ply), reply.mv)
            && other != reply.mv
        {
            found.push(format!(
                "game {} ply {}: {other} and {} both acknowledged",
                reply.game, reply.ply, reply.mv
            ));
        }
    }
    for (&(game, ply), mv) in &acked {
        let at = stored.get(&game).and_then(|g| g.plies.get(ply));
        if at.map(|(_, m)| m.as_str()) != Some(move_text(*mv).as_str()) {
            found.push(format!(
                "game {game} ply {ply}: {mv} acknowledged, stored {at:?}"
            ));
        }
    }
    for reply in replies.iter().filter(|r| r.said == Said::NotPlayed) {
        let later_acked = acked.get(&(reply.game, reply.ply)) == Some(&reply.mv);
        let at = stored.get(&reply.game).and_then(|g| g.plies.get(reply.ply));
        if !later_acked && at.map(|(_, m)| m.as_str()) == Some(move_text(reply.mv).as_str()) {
            found.push(format!(
                "game {} ply {}: {} answered not played, and stored",
                reply.game, reply.ply, reply.mv
            ));
        }
    }
    for (game, stored) in stored {
        if let Err(why) = replays(stored) {
            found.push(format!("game {game}: {why}"));
        }
    }
    found
}

/// Whether the stored plies run 1, 2, 3... and replay as legal moves.
fn replays(stored: &StoredGame) -> Result<(), String> {
    let mut position = Game::new(Variant::Othello);
    for (i, (ply, text)) in stored.plies.iter().enumerate() {
        if usize::try_from(*ply).ok() != Some(i + 1) {
            return Err(format!("ply {ply} stored where {} was due", i + 1));
        }
        let mv = parse_move(text).ok_or_else(|| format!("ply {ply}: {text:?} is no move"))?;
        position
            .apply(mv)
            .map_err(|e| format!("ply {ply}: {text} is illegal: {e:?}"))?;
    }
    Ok(())
}

pub fn parse_move(text: &str) -> Option<Move> {
    match text {
        "pass" => Some(Move::Pass),
        square => square.parse().ok().map(Move::Place),
    }
}

fn move_text(mv: Move) -> String {
    match mv {
        Move::Pass => "pass".to_string(),
        Move::Place(square) => square.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    fn reply(ply: usize, square: &str, said: Said) -> Reply {
        let mv = parse_move(square).unwrap_or_else(|| panic!("{square}"));
        Reply {
            game: 1,
            ply,
            mv,
            said,
            at: Instant::now(),
        }
    }

    fn stored(moves: &[&str]) -> HashMap<u64, StoredGame> {
        let plies = (1..).zip(moves.iter().map(|m| m.to_string())).collect();
        HashMap::from([(1, StoredGame { plies })])
    }

    #[test]
    fn each_broken_promise_is_found() {
        let fine = [
            reply(0, "d3", Said::Played),
            reply(1, "c3", Said::NotPlayed),
        ];
        assert_eq!(
            violations(&fine, &stored(&["d3", "c5"])),
            Vec::<String>::new()
        );
        // Acknowledged, not stored.
        assert_eq!(violations(&fine[..1], &stored(&[])).len(), 1);
        // Answered not played, stored.
        assert_eq!(violations(&fine, &stored(&["d3", "c3"])).len(), 1);
        // Two moves acknowledged at one ply.
        let twice = [reply(0, "d3", Said::Played), reply(0, "c4", Said::Played)];
        assert!(!violations(&twice, &stored(&["d3"])).is_empty());
        // An illegal move stored.
        assert_eq!(violations(&[], &stored(&["a1"])).len(), 1);
    }
}
