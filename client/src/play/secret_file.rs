//! The guests' secrets kept across restarts, so that a `flip` started again
//! (after a crash, a closed terminal) resumes its guest name and seat while
//! the daemon holds them. One small file in the data directory,
//! `guest-secrets`, readable by its owner only (mode 0600), one line per
//! server and name: `<name> <token> <server>`, the newest last, at most
//! [`MAX_ENTRIES`]. Nothing else ever sees a secret: it is not printed, not
//! logged, not put in the line editor's history.

use std::io::Read;
use std::path::{Path, PathBuf};

use flipline::protocol::valid_name;

use crate::play::secret::GuestSecret;

/// The most secrets kept: one per server and name, the oldest dropped.
pub const MAX_ENTRIES: usize = 32;

/// The file's name in the data directory.
pub const FILE_NAME: &str = "guest-secrets";

/// The most of the file read: 32 lines of a name, a secret and an address
/// are far less; a larger file is someone else's and is read only this far.
const MAX_FILE_BYTES: u64 = 64 * 1024;

/// One kept secret.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Entry {
    server: String,
    name: String,
    secret: GuestSecret,
}

/// The secrets kept for one server, in the file at `path`.
#[derive(Clone, Debug)]
pub struct SecretFile {
    path: PathBuf,
    server: String,
}

impl SecretFile {
    /// The secrets of `server` in the file at `path`. `None` for an address
    /// the file's lines cannot hold (one with a control character or
    /// nothing but spaces): its secrets are then kept in memory only.
    pub fn new(path: PathBuf, server: &str) -> Option<SecretFile> {
        let fits = !server.trim().is_empty() && !server.chars().any(char::is_control);
        fits.then(|| SecretFile {
            path,
            server: server.to_string(),
        })
    }

    /// The secret kept for `name` on this server.
    pub fn get(&self, name: &str) -> Option<GuestSecret> {
        read_entries(&self.path)
            .into_iter()
            .find(|e| self.holds(e, name))
            .map(|e| e.secret)
    }

    /// Keeps `secret` for `name` on this server, in place of any other.
    /// Failing to write only loses the resume after a restart, so it is not
    /// an error for the caller.
    pub fn keep(&self, name: &str, secret: &GuestSecret) {
        let mut entries = self.others(name);
        entries.push(Entry {
            server: self.server.clone(),
            name: name.to_string(),
            secret: secret.clone(),
        });
        let skip = entries.len().saturating_sub(MAX_ENTRIES);
        let _ = write_entries(&self.path, entries.get(skip..).unwrap_or_default());
    }

    /// Forgets the secret of `name` on this server.
    pub fn forget(&self, name: &str) {
        let entries = read_entries(&self.path);
        if entries.iter().any(|e| self.holds(e, name)) {
            let _ = write_entries(&self.path, &self.others(name));
        }
    }

    /// Every entry but this server's for `name`.
    fn others(&self, name: &str) -> Vec<Entry> {
        read_entries(&self.path)
            .into_iter()
            .filter(|e| !self.holds(e, name))
            .collect()
    }

    /// Whether `entry` is this server's for `name`: the daemon's names are
    /// one name whatever their case, so `Ann` finds the secret of `ann`.
    fn holds(&self, entry: &Entry, name: &str) -> bool {
        entry.server == self.server && entry.name.eq_ignore_ascii_case(name)
    }
}

/// The entries of the file at `path`; none if it cannot be read. A line that
/// does not read is skipped.
fn read_entries(path: &Path) -> Vec<Entry> {
    let mut text = String::new();
    let read = std::fs::File::open(path)
        .and_then(|file| file.take(MAX_FILE_BYTES).read_to_string(&mut text));
    match read {
        Ok(_) => text.lines().filter_map(parse_line).collect(),
        Err(_) => Vec::new(),
    }
}

fn parse_line(line: &str) -> Option<Entry> {
    let mut fields = line.splitn(3, ' ');
    let name = fields.next().filter(|n| valid_name(n))?;
    let secret = GuestSecret::new(fields.next()?)?;
    let server = fields.next().filter(|s| !s.is_empty())?;
    Some(Entry {
        server: server.to_string(),
        name: name.to_string(),
        secret,
    })
}

fn format_entries(entries: &[Entry]) -> String {
    entries
        .iter()
        .map(|e| format!("{} {} {}\n", e.name, e.secret.token(), e.server))
        .collect()
}

/// Writes the file whole: into a new file of mode 0600 beside it, then
/// renamed over it, so that a crash leaves the old file or the new one and
/// the secrets are never readable by anyone else, not even for a moment.
/// There is no fsync: a power cut may lose the last change, which costs a
/// resume at most, and the write is made while the view waits for it.
fn write_entries(path: &Path, entries: &[Entry]) -> std::io::Result<()> {
    let fresh = path.with_extension("new");
    // A stale file left by a crash would make the exclusive create fail.
    let _ = std::fs::remove_file(&fresh);
    let written = create_private(&fresh).and_then(|mut file| {
        use std::io::Write;
        file.write_all(format_entries(entries).as_bytes())
    });
    match written.and_then(|()| std::fs::rename(&fresh, path)) {
        Ok(()) => Ok(()),
        Err(e) => {
            let _ = std::fs::remove_file(&fresh);
            Err(e)
        }
    }
}

/// A new file only its owner may read or write. `create_new` also refuses
/// to follow a link planted in its place.
fn create_private(path: &Path) -> std::io::Result<std::fs::File> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    options.open(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secret(token: &str) -> GuestSecret {
        GuestSecret::new(token).unwrap_or_else(|| panic!("{token} is a secret"))
    }

    fn temp_dir(tag: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("flip-secrets-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{e}"));
        dir
    }

    fn file(path: &Path, server: &str) -> SecretFile {
        SecretFile::new(path.to_path_buf(), server).unwrap_or_else(|| panic!("{server}"))
    }

    #[test]
    fn secrets_are_kept_by_server_and_name() {
        let dir = temp_dir("keyed");
        let path = dir.join(FILE_NAME);
        let (here, there) = (
            file(&path, "127.0.0.1:7341"),
            file(&path, "example.org:7341"),
        );
        assert_eq!(here.get("ann"), None);
        here.keep("ann", &secret("aaa1"));
        here.keep("bob", &secret("bbb2"));
        there.keep("ann", &secret("ccc3"));
        assert_eq!(here.get("ann"), Some(secret("aaa1")));
        assert_eq!(there.get("ann"), Some(secret("ccc3")));
        here.keep("ann", &secret("ddd4"));
        assert_eq!(here.get("ann"), Some(secret("ddd4")));
        assert_eq!(here.get("ANN"), Some(secret("ddd4")), "a name in any case");
        here.forget("ann");
        assert_eq!(here.get("ann"), None);
        assert_eq!(here.get("bob"), Some(secret("bbb2")));
        assert_eq!(there.get("ann"), Some(secret("ccc3")));
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        assert_eq!(text, "bob bbb2 127.0.0.1:7341\nann ccc3 example.org:7341\n");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[cfg(unix)]
    #[test]
    fn the_file_is_its_owners_alone_even_if_it_was_not() {
        use std::os::unix::fs::PermissionsExt;
        let dir = temp_dir("mode");
        let path = dir.join(FILE_NAME);
        std::fs::write(&path, "ann aaa1 h:1\n").unwrap_or_else(|e| panic!("{e}"));
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644))
            .unwrap_or_else(|e| panic!("{e}"));
        file(&path, "h:1").keep("bob", &secret("bbb2"));
        let mode = std::fs::metadata(&path).map(|m| m.permissions().mode());
        assert_eq!(mode.ok().map(|m| m & 0o777), Some(0o600));
        assert!(!dir.join("guest-secrets.new").exists());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn the_file_stays_small_and_bad_lines_are_skipped() {
        let dir = temp_dir("bounded");
        let path = dir.join(FILE_NAME);
        std::fs::write(
            &path,
            "garbage\nbad!name aaa1 h:1\nann bad-token h:1\nann aaa1\nann aaa1 h:1\n",
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(file(&path, "h:1").get("ann"), Some(secret("aaa1")));
        for i in 0..MAX_ENTRIES + 5 {
            file(&path, &format!("h:{i}")).keep("ann", &secret("bbb2"));
        }
        let entries = read_entries(&path);
        assert_eq!(entries.len(), MAX_ENTRIES);
        assert_eq!(file(&path, "h:1").get("ann"), None, "the oldest went first");
        assert!(
            file(&path, &format!("h:{}", MAX_ENTRIES + 4))
                .get("ann")
                .is_some()
        );
        assert!(SecretFile::new(path.clone(), "a\nb").is_none());
        assert!(SecretFile::new(path, " ").is_none());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
