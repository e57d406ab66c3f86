//! `flip backup`: an online copy of a store, made while flipd runs on it (the
//! store's backup, `flipd::store::Archive::backup_to`), checked before it
//! is reported. Restoring is copying the file back while flipd is stopped.

use std::path::PathBuf;

use clap::Args;
use flipd::store::Archive;

use crate::say;

/// `flip backup` arguments.
#[derive(Args, Debug)]
pub struct BackupArgs {
    /// The store to copy (flipd's `store.path`); flipd may be running on it.
    /// A PostgreSQL store is backed up with `pg_dump -Fc`, not this.
    #[arg(long, default_value = "data/flipline.db")]
    db: PathBuf,
    /// Where the copy goes: a file that does not exist yet.
    out: PathBuf,
}

/// Copies the store and says what the copy holds.
pub fn run(args: &BackupArgs) -> Result<(), String> {
    let archive = Archive::open(&args.db).map_err(|e| e.to_string())?;
    let report = archive.backup_to(&args.out).map_err(|e| e.to_string())?;
    say!(
        "backed up {} to {}: {} games, {} pages, checked",
        args.db.display(),
        args.out.display(),
        report.games,
        report.pages
    );
    Ok(())
}
