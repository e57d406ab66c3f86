//! Where the client keeps its files: the user's data directory.

use std::path::PathBuf;

/// `$XDG_DATA_HOME/flipline`, else `~/.local/share/flipline` (`%APPDATA%\flipline`
/// on Windows); `None` when no home is known.
pub fn data_dir() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_DATA_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("APPDATA").map(PathBuf::from))
        .or_else(|| {
            std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".local/share"))
        })?;
    Some(base.join("flipline"))
}

/// A file in the data directory, creating the directory if need be.
pub fn data_file(name: &str) -> Option<PathBuf> {
    let dir = data_dir()?;
    std::fs::create_dir_all(&dir).ok()?;
    Some(dir.join(name))
}
