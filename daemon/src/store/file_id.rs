//! Which file a path or an open file is: its device and inode. Two paths
//! name the same file (through a symbolic link or a hard link) exactly when
//! their identities are equal, and a file removed and created again under
//! the same name gets a new one while anything still holds the old one open.

use std::fs::Metadata;

/// A file's device and inode number.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct FileId {
    device: u64,
    inode: u64,
}

impl FileId {
    /// The identity in `metadata`; `None` where the system has no inodes.
    #[cfg(unix)]
    pub(super) fn of(metadata: &Metadata) -> Option<FileId> {
        use std::os::unix::fs::MetadataExt;
        Some(FileId {
            device: metadata.dev(),
            inode: metadata.ino(),
        })
    }

    /// The identity in `metadata`; `None` where the system has no inodes.
    #[cfg(not(unix))]
    pub(super) fn of(_: &Metadata) -> Option<FileId> {
        None
    }
}
