//! Games whose two players connect to different nodes of a cluster
//! (`--far`): black connects to `--server` and makes each game (`NEW ...
//! as X`), white connects to `--far` and joins it (`JOIN`), told the game's
//! number by black's task. Without `--far` every player seeks on one server.

use flipline::Variant;
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};

/// How a connection finds its games.
pub enum Role {
    /// `SEEK`, paired by the server.
    Seeker,
    /// Makes each game and tells its partner the number.
    Maker(UnboundedSender<u64>),
    /// Joins each game its partner made.
    Joiner(UnboundedReceiver<u64>),
}

impl Role {
    /// A maker and the joiner it tells.
    pub fn pair() -> (Role, Role) {
        let (tx, rx) = unbounded_channel();
        (Role::Maker(tx), Role::Joiner(rx))
    }

    /// What it sends after logging in, and after each game's `OVER`.
    pub fn next_game(&self, variant: Variant) -> Option<String> {
        match self {
            Role::Seeker => Some(format!("SEEK {variant}")),
            Role::Maker(_) => Some(format!("NEW {variant} as X")),
            Role::Joiner(_) => None,
        }
    }

    /// A maker's reply to `NEW` (`OK <game>`): its partner joins that game.
    /// Other lines (the `OK` of a login or a move holds no number) pass.
    pub fn on_line(&self, line: &str) {
        if let Role::Maker(partner) = self
            && let Some(game) = line.strip_prefix("OK ").and_then(|n| n.parse().ok())
        {
            let _ = partner.send(game);
        }
    }

    /// The next game a joiner is to join; never, for the others.
    pub async fn next_join(&mut self) -> Option<u64> {
        match self {
            Role::Joiner(games) => games.recv().await,
            _ => std::future::pending().await,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_maker_s_new_game_reaches_its_joiner_and_nothing_else_does() {
        let (maker, mut joiner) = Role::pair();
        assert_eq!(
            maker.next_game(Variant::Othello).as_deref(),
            Some("NEW othello as X")
        );
        assert_eq!(joiner.next_game(Variant::Othello), None);
        maker.on_line("OK l1x0");
        maker.on_line("OK");
        maker.on_line("OK 1207");
        assert_eq!(joiner.next_join().await, Some(1207));
        drop(maker);
        assert_eq!(joiner.next_join().await, None);
    }
}
