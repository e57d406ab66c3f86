//! `flip export --format wtb -o FILE.wtb`: the games as WTHOR's three files,
//! `FILE.wtb` and, beside it, `FILE.jou` (players) and `FILE.trn` (the
//! tournament), which `flip import FILE.wtb` reads back. Named after the
//! `.wtb` rather than `WTHOR.JOU`, so that an export never overwrites the
//! federation's own name files in the same folder.

use std::path::{Path, PathBuf};

use flipd::store::GameRecord;

use crate::archive::civil::Civil;
use crate::archive::wthor_games;

/// Writes the three files and says on stderr how many games, and which were
/// left out and why.
pub fn write(games: &[GameRecord], output: Option<&Path>) -> Result<(), String> {
    let Some(wtb) = output else {
        return Err(
            "--format wtb writes three files: name the games' with -o FILE.wtb".to_string(),
        );
    };
    let today = Civil::now().map_or((1970, 1, 1), |now| (now.year, now.month, now.day));
    let files = wthor_games::export(games, today);
    let (jou, trn) = (beside(wtb, "jou"), beside(wtb, "trn"));
    for (path, bytes) in [
        (wtb.to_path_buf(), &files.wtb),
        (jou, &files.jou),
        (trn, &files.trn),
    ] {
        std::fs::write(&path, bytes)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    eprintln!("exported {} games", files.written);
    for (variant, count) in &files.left_out {
        eprintln!("skipped {count} {variant} games: WTHOR holds 8x8 Othello only");
    }
    if let (Some(first), Some(last)) = (files.years.first(), files.years.last()) {
        eprintln!(
            "the games are from {first} to {last}: a WTHOR file is one year's, and its header says {first}"
        );
    }
    Ok(())
}

fn beside(wtb: &Path, extension: &str) -> PathBuf {
    wtb.with_extension(extension)
}
