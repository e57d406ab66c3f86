//! `flip import`: finished games from GGF files (`flip export`'s, GGS's
//! archives) and WTHOR `.wtb` files into a store, as games `HISTORY` and
//! `flip export` show like any other. Each game is replayed through the
//! rules; a game that does not read or replay is reported (file, game, the
//! token) and skipped, and the others are imported.
//!
//! A game the store already holds (the same variant, players and moves, its
//! start position's among them) is not added again, so importing a file
//! twice, or the same games from two formats, adds them once.
//! The writes go through the store's own [`Importer`], which takes the
//! store's lock: flipd must not be running on the file meanwhile.

use std::path::{Path, PathBuf};

use clap::Args;
use flipd::store::{GameRecord, Imported, Importer};

use crate::archive::ggf_read;
use crate::archive::wthor::{self, PLAYER_LEN};
use crate::archive::{ggf_game, wthor_games};

#[derive(Args, Debug)]
pub struct ImportArgs {
    /// The store file to add the games to (made if there is none); flipd
    /// must not be running on it.
    #[arg(long, default_value = "data/flipline.db")]
    db: PathBuf,
    /// GGF files (games in `(;...;)`, GGS archive lines too) or WTHOR
    /// `.wtb` files (player names from the `.jou` beside them).
    #[arg(required = true, value_name = "FILE")]
    files: Vec<PathBuf>,
}

/// How many games went where.
#[derive(Debug, Default)]
struct Tally {
    added: usize,
    present: usize,
    skipped: usize,
}

/// Games are written this many to a transaction.
const BATCH: usize = 500;

/// Imports every file; says on stderr what was skipped and why, and how many
/// games were imported, already there, and skipped.
pub fn run(args: &ImportArgs) -> Result<(), String> {
    let mut importer = Importer::open(&args.db).map_err(|e| e.to_string())?;
    let mut total = Tally::default();
    for file in &args.files {
        let games = read_file(file)?;
        let mut tally = Tally::default();
        let mut good = Vec::new();
        for game in games {
            match game {
                Ok(game) => good.push(game),
                Err(why) => {
                    eprintln!("{}: {why}: skipped", file.display());
                    tally.skipped += 1;
                }
            }
        }
        for batch in good.chunks(BATCH) {
            for outcome in importer.insert_finished(batch).map_err(|e| e.to_string())? {
                match outcome {
                    Imported::Added(_) => tally.added += 1,
                    Imported::Present(_) => tally.present += 1,
                }
            }
        }
        eprintln!("{}: {}", file.display(), words(&tally));
        total.added += tally.added;
        total.present += tally.present;
        total.skipped += tally.skipped;
    }
    if args.files.len() > 1 {
        eprintln!("in all: {}", words(&total));
    }
    Ok(())
}

fn words(tally: &Tally) -> String {
    format!(
        "imported {} games, {} already in the store, skipped {}",
        tally.added, tally.present, tally.skipped
    )
}

/// The games of one file, each read or why not (naming the game); an error
/// for a file that cannot be read at all.
fn read_file(path: &Path) -> Result<Vec<Result<GameRecord, String>>, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let is_wtb = path
        .extension()
        .is_some_and(|ext| ext.eq_ignore_ascii_case("wtb"));
    if is_wtb {
        wthor_file(path, &bytes)
    } else {
        Ok(ggf_file(&String::from_utf8_lossy(&bytes)))
    }
}

fn ggf_file(text: &str) -> Vec<Result<GameRecord, String>> {
    ggf_read::games(text)
        .into_iter()
        .map(|read| {
            let game = read.map_err(|e| e.to_string())?;
            ggf_game::record(&game)
                .map_err(|why| format!("game {} (line {}): {why}", game.ordinal, game.line))
        })
        .collect()
}

fn wthor_file(path: &Path, bytes: &[u8]) -> Result<Vec<Result<GameRecord, String>>, String> {
    let (header, records) =
        wthor::read_games(bytes).map_err(|e| format!("{}: {e}", path.display()))?;
    let started_at =
        wthor_games::started_at(&header).map_err(|e| format!("{}: {e}", path.display()))?;
    let players = players_beside(path);
    Ok((1..)
        .zip(&records)
        .map(|(n, record)| {
            wthor_games::record(record, &started_at, players.as_deref())
                .map_err(|why| format!("game {n}: {why}"))
        })
        .collect())
}

/// The player names of a `.wtb`: from `<name>.jou` beside it, else
/// `WTHOR.JOU` (in any case), else none (players are then numbers).
fn players_beside(wtb: &Path) -> Option<Vec<String>> {
    let dir = wtb
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let stem = wtb.file_stem()?.to_string_lossy().to_string();
    let entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .ok()?
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .collect();
    let named = |wanted: &str| {
        entries.iter().find(|path| {
            path.file_name()
                .is_some_and(|name| name.to_string_lossy().eq_ignore_ascii_case(wanted))
        })
    };
    let jou = named(&format!("{stem}.jou")).or_else(|| named("WTHOR.JOU"))?;
    let read = std::fs::read(jou)
        .map_err(|e| e.to_string())
        .and_then(|bytes| wthor::read_names(&bytes, PLAYER_LEN).map_err(|e| e.to_string()));
    match read {
        Ok(names) => Some(names),
        Err(why) => {
            eprintln!("{}: {why}: players are numbered instead", jou.display());
            None
        }
    }
}
