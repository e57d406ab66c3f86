//! `flip --local`: a daemon embedded in the client on a free loopback port, so that
//! anyone can play the built-in bot or hotseat with nothing else running. An
//! unfinished local game is kept in the user's data directory and resumed at the
//! next start.

use std::path::PathBuf;

use flipline::notation::{parse_transcript, transcript_string};
use flipline::{Color, Variant};
use serde::{Deserialize, Serialize};

use crate::paths::data_file;
use crate::view::View;

/// An unfinished local game, as saved between runs.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct SavedGame {
    /// The variant's name.
    pub variant: String,
    /// `X` or `O`: the person's colour (ignored for hotseat).
    pub seat: String,
    /// `bot:N` or `hotseat`.
    pub opponent: String,
    /// The moves so far, passes written out.
    pub moves: String,
}

impl SavedGame {
    /// The game the person is playing now, if it is a local one worth keeping
    /// (against a bot, or hotseat) and still going on.
    pub fn from_view(view: &View) -> Option<SavedGame> {
        let game = view.live_game()?;
        let colors = view.my_colors(game);
        let (seat, opponent) = match colors.as_slice() {
            [_, _] => (Color::Black, "hotseat".to_string()),
            [Color::Black] => (Color::Black, game.white.clone()),
            [_] => (Color::White, game.black.clone()),
            _ => return None,
        };
        if !(opponent == "hotseat" || opponent.starts_with("bot:")) {
            return None;
        }
        Some(SavedGame {
            variant: game.variant.name().to_string(),
            seat: seat.letter().to_string(),
            opponent,
            moves: transcript_string(&game.moves),
        })
    }

    /// The `NEW` command that sets the game up again.
    pub fn new_command(&self) -> Result<String, String> {
        let variant: Variant = self
            .variant
            .parse()
            .map_err(|e: flipline::ParseError| e.to_string())?;
        parse_transcript(&self.moves).map_err(|e| e.to_string())?;
        let opponent = match self.opponent.as_str() {
            "hotseat" => "hotseat".to_string(),
            bot if bot.starts_with("bot:") => format!("vs {bot}"),
            other => return Err(format!("unknown opponent {other:?}")),
        };
        let from = if self.moves.is_empty() {
            String::new()
        } else {
            format!(" from {}", self.moves)
        };
        Ok(format!("NEW {variant} as {} {opponent}{from}", self.seat))
    }
}

/// Where the unfinished local game is kept.
pub fn save_path() -> Option<PathBuf> {
    data_file("local-game.ron")
}

/// Reads the saved game, if there is a readable one.
pub fn load() -> Option<SavedGame> {
    let text = std::fs::read_to_string(save_path()?).ok()?;
    ron::from_str(&text).ok()
}

/// Keeps the file in step with the view: written while a local game goes on,
/// removed once it has ended.
pub fn sync(view: &View) {
    let Some(path) = save_path() else { return };
    match SavedGame::from_view(view) {
        Some(saved) => {
            if let Ok(text) = ron::ser::to_string_pretty(&saved, ron::ser::PrettyConfig::default())
            {
                let _ = std::fs::write(&path, text);
            }
        }
        None if view
            .current
            .is_some_and(|id| view.games.get(&id).is_some_and(|g| g.over)) =>
        {
            let _ = std::fs::remove_file(&path);
        }
        None => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::view::Style;

    #[test]
    fn a_bot_game_saves_and_becomes_a_new_command() {
        let mut view = View::new(Style::default());
        view.sent("LOGIN ann");
        let board = format!("BOARD 2 {}OX------XXX{} O", "-".repeat(27), "-".repeat(26));
        for line in [
            "OK ann",
            "START 2 othello bot:4 ann -",
            "MOVED 2 X f5 4 1",
            &board,
        ] {
            assert!(!view.on_line(line).iter().any(|l| l.contains("unreadable")));
        }
        let saved = SavedGame::from_view(&view).unwrap();
        assert_eq!(saved.seat, "O");
        assert_eq!(
            saved.new_command().unwrap(),
            "NEW othello as O vs bot:4 from f5"
        );
        view.on_line("OVER 2 X 64 0 resign");
        assert!(SavedGame::from_view(&view).is_none());
    }
}
