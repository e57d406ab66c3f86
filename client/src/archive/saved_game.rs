//! A game from a file a person hands the client (`load FILE`, `flip analyze
//! --game FILE`), in any of the forms flipline writes or reads: a transcript
//! line (`save`, `flip export --format transcript`), a bare move string
//! (`f5d6c3...`, for Othello), or a GGF game (`flip export`, GGS's archives;
//! the first game of the file).

use flipline::notation::{parse_transcript, replay_with_passes};
use flipline::{Move, Variant};

use crate::archive::export::GameLine;
use crate::archive::{ggf_game, ggf_read};

/// A game's variant and its moves from the start, passes written out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SavedGame {
    /// The variant.
    pub variant: Variant,
    /// The moves.
    pub moves: Vec<Move>,
}

impl SavedGame {
    /// `NEW <variant> <options> from <moves>`: a new game from the
    /// position the moves reach (no `from` for none).
    pub fn new_command(&self, options: &str) -> String {
        let mut command = format!("NEW {}", self.variant);
        if !options.is_empty() {
            command.push(' ');
            command.push_str(options);
        }
        if !self.moves.is_empty() {
            let moves = flipline::notation::transcript_string(&self.moves);
            command.push_str(&format!(" from {moves}"));
        }
        command
    }
}

/// The first game of `text`; the error names what did not read.
pub fn parse(text: &str) -> Result<SavedGame, String> {
    let first = text.trim_start();
    if first.starts_with("(;")
        || first
            .split_whitespace()
            .nth(1)
            .is_some_and(|w| w.starts_with("(;"))
    {
        return ggf(text);
    }
    let line = text
        .lines()
        .find(|l| !l.trim().is_empty())
        .ok_or("it holds no game")?;
    match GameLine::parse(line) {
        Ok(summary) => Ok(SavedGame {
            variant: summary.variant,
            moves: summary.moves,
        }),
        Err(as_line) => bare_moves(line).map_err(|as_moves| {
            format!("neither a game line ({as_line}) nor a move string ({as_moves})")
        }),
    }
}

/// `f5d6c3...`: an Othello game from the start (passes may be left out).
fn bare_moves(line: &str) -> Result<SavedGame, String> {
    let moves = parse_transcript(line.trim()).map_err(|e| e.to_string())?;
    if moves.is_empty() {
        return Err("no moves".to_string());
    }
    let (_, moves) = replay_with_passes(Variant::Othello, &moves).map_err(|e| e.to_string())?;
    Ok(SavedGame {
        variant: Variant::Othello,
        moves,
    })
}

fn ggf(text: &str) -> Result<SavedGame, String> {
    let game = ggf_read::games(text)
        .into_iter()
        .next()
        .ok_or("it holds no game")?
        .map_err(|e| e.to_string())?;
    let (variant, moves) = ggf_game::moves(&game)?;
    Ok(SavedGame {
        variant,
        moves: moves.into_iter().map(|m| m.mv).collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use flipline::notation::transcript_string;
    use proptest::prelude::*;

    fn moves(text: &str) -> Result<(Variant, String), String> {
        parse(text).map(|g| (g.variant, transcript_string(&g.moves)))
    }

    #[test]
    fn every_form_reads() {
        let othello = |m: &str| Ok((Variant::Othello, m.to_string()));
        assert_eq!(moves("f5d6c3\n"), othello("f5d6c3"));
        assert_eq!(moves("  F5 d6 C3"), othello("f5d6c3"));
        assert_eq!(
            moves("4 anti ann bob X:40-24:normal f5f6"),
            Ok((Variant::Anti, "f5f6".to_string()))
        );
        let ggf = "1 (;GM[Othello]TY[8]BO[8 -------- -------- -------- ---O*--- ---*O--- -------- \
                   -------- -------- *]B[F5//1.00]W[D6];)";
        assert_eq!(moves(ggf), othello("f5d6"));
        let error = moves("f5f5").unwrap_err();
        assert!(error.contains("'f5' at ply 2"), "{error}");
        assert!(moves("hello world").unwrap_err().contains("'hello"));
        assert!(moves("\n\n").is_err());
    }

    proptest! {
        #[test]
        fn any_text_reads_without_panicking(text in ".{0,120}") {
            let _ = parse(&text);
        }
    }
}
