//! [`SmallVolume`]: a tmpfs of a few megabytes mounted for one test, to fill
//! up for real, and files that fill it ([`SmallVolume::fill`]). Mounting
//! needs root: without it the test fails saying so, it does not skip.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::daemon::{remove_temp_dir, temp_dir};

/// A tmpfs mounted on a fresh temporary directory; unmounted and removed when
/// dropped, also when the test fails.
pub struct SmallVolume {
    /// Where it is mounted.
    pub dir: PathBuf,
}

impl SmallVolume {
    /// Mounts a tmpfs of `size` (as `mount -o size=` takes it: `2m`).
    pub fn mount(size: &str) -> SmallVolume {
        let dir = temp_dir("volume");
        let output = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(&dir)
            .output()
            .unwrap_or_else(|e| panic!("cannot run mount: {e}"));
        if !output.status.success() {
            remove_temp_dir(&dir);
            panic!(
                "cannot mount a {size} tmpfs on {} ({}): this test fills a small volume \
                 and must run as root",
                dir.display(),
                String::from_utf8_lossy(&output.stderr).trim()
            );
        }
        SmallVolume { dir }
    }

    /// Writes files into `dir` on the volume until no more fit, so that the
    /// volume is full; returns them, to delete to free the space again.
    pub fn fill(&self, name: &str) -> Vec<PathBuf> {
        let mut files = Vec::new();
        // Big files first, then single pages (tmpfs gives out whole pages).
        for size in [64 * 1024, 4096] {
            let chunk = vec![b'x'; size];
            // A 2 MiB volume holds 32 files of 64 KiB: the bound is a guard.
            for _ in 0..10_000 {
                let path = self.dir.join(format!("{name}-{}", files.len()));
                let written = std::fs::write(&path, &chunk);
                files.push(path);
                match written {
                    Ok(()) => {}
                    Err(e) if e.kind() == std::io::ErrorKind::StorageFull => break,
                    Err(e) => panic!("cannot write a filler file: {e}"),
                }
            }
        }
        files
    }

    /// Deletes `files` (from [`SmallVolume::fill`]).
    pub fn free(files: &[PathBuf]) {
        for file in files {
            std::fs::remove_file(file)
                .unwrap_or_else(|e| panic!("cannot remove {}: {e}", file.display()));
        }
    }

    /// A path on the volume.
    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }
}

impl Drop for SmallVolume {
    fn drop(&mut self) {
        unmount(&self.dir);
        remove_temp_dir(&self.dir);
    }
}

/// Unmounts `dir`; lazily if something still holds it, so that a failing
/// test never leaves a mount behind.
fn unmount(dir: &Path) {
    let done = Command::new("umount")
        .arg(dir)
        .status()
        .is_ok_and(|s| s.success());
    if !done {
        let _ = Command::new("umount").arg("-l").arg(dir).status();
    }
}
