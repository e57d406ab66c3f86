//! Backup copies readable by their owner only: like the store (whose lock
//! creates it so, `lock.rs`), they hold password hashes and guests' secrets.

use std::io;
use std::path::Path;

/// Creates `path` empty and readable by its owner only, unless it exists
/// (an operator's own mode on an existing store is kept).
pub fn create_private(path: &Path) -> io::Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    match options.open(path) {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(e),
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn a_new_file_is_the_owners_alone_and_an_old_one_keeps_its_mode() {
        let dir = std::env::temp_dir().join(format!("flipd-private-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let new = dir.join("new.db");
        let _ = std::fs::remove_file(&new);
        create_private(&new).unwrap();
        let mode = std::fs::metadata(&new).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "{mode:o}");
        let old = dir.join("old.db");
        std::fs::write(&old, b"").unwrap();
        std::fs::set_permissions(&old, std::fs::Permissions::from_mode(0o640)).unwrap();
        create_private(&old).unwrap();
        let mode = std::fs::metadata(&old).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o640);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
