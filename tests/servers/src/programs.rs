//! Which of the programs a throwaway server needs are missing, looked for
//! where the scripts of `tests/tools/` look: `nats-server` and `openssl` on
//! `PATH`; PostgreSQL's in the newest `/usr/lib/postgresql/*/bin` (Debian
//! keeps them off `PATH`), else beside the `initdb` on `PATH`. Only what is
//! there is started: the tests never install anything.

use std::ffi::OsStr;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// Where Debian installs each PostgreSQL version's programs.
pub const POSTGRES_LIBRARY: &str = "/usr/lib/postgresql";

/// What `tests/tools/postgres.sh` runs from PostgreSQL's directory.
const POSTGRES_PROGRAMS: [&str; 4] = ["initdb", "pg_ctl", "postgres", "psql"];

/// What PostgreSQL's throwaway server needs and is not found, given the
/// `PATH` to search and Debian's directory of PostgreSQL versions.
pub fn missing_for_postgres(path: &OsStr, library: &Path) -> Vec<&'static str> {
    let mut missing: Vec<&'static str> = match postgres_directory(path, library) {
        Some(dir) => (POSTGRES_PROGRAMS.into_iter())
            .filter(|program| !is_program(&dir.join(program)))
            .collect(),
        None => POSTGRES_PROGRAMS.to_vec(),
    };
    // The script makes the server's certificate authority with it.
    if on_path("openssl", path).is_none() {
        missing.push("openssl");
    }
    missing
}

/// What NATS's throwaway server needs and is not found on `path`.
pub fn missing_for_nats(path: &OsStr) -> Vec<&'static str> {
    match on_path("nats-server", path) {
        Some(_) => Vec::new(),
        None => vec!["nats-server"],
    }
}

/// The directory `postgres.sh` takes PostgreSQL's programs from: the newest
/// version's under `library` (as `sort -V` orders them), else the one
/// holding the `initdb` found on `path`.
fn postgres_directory(path: &OsStr, library: &Path) -> Option<PathBuf> {
    let versions = std::fs::read_dir(library).into_iter().flatten().flatten();
    let newest = (versions.map(|entry| entry.path()))
        .filter(|version| version.join("bin").is_dir())
        .max_by_key(|version| version_key(version));
    match newest {
        Some(version) => Some(version.join("bin")),
        None => on_path("initdb", path)?.parent().map(Path::to_path_buf),
    }
}

/// A version directory's name (`9.6`, `15`) as numbers, to compare.
fn version_key(version: &Path) -> Vec<u64> {
    let name = version.file_name().unwrap_or_default().to_string_lossy();
    name.split('.')
        .map(|part| part.parse().unwrap_or(0))
        .collect()
}

/// The first `program` on `path` that may be run, as a shell finds it.
fn on_path(program: &str, path: &OsStr) -> Option<PathBuf> {
    (std::env::split_paths(path))
        .map(|dir| dir.join(program))
        .find(|candidate| is_program(candidate))
}

fn is_program(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsString;

    /// A directory of its own for one test, emptied first.
    fn fresh(what: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("flipline-programs-{}-{what}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    /// Files named `programs` in `dir`, runnable or not.
    fn put(dir: &Path, programs: &[&str], mode: u32) {
        std::fs::create_dir_all(dir).unwrap();
        for program in programs {
            let file = dir.join(program);
            std::fs::write(&file, "#!/bin/sh\n").unwrap();
            std::fs::set_permissions(&file, std::fs::Permissions::from_mode(mode)).unwrap();
        }
    }

    fn path_of(dirs: &[&Path]) -> OsString {
        std::env::join_paths(dirs).unwrap()
    }

    #[test]
    fn nothing_is_found_on_an_empty_path() {
        let dir = fresh("empty");
        let path = path_of(&[&dir]);
        let library = dir.join("no-library");
        assert_eq!(
            missing_for_postgres(&path, &library),
            ["initdb", "pg_ctl", "postgres", "psql", "openssl"]
        );
        assert_eq!(missing_for_nats(&path), ["nats-server"]);
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn programs_are_found_on_path_and_only_runnable_files_count() {
        let dir = fresh("path");
        let (a, b) = (dir.join("a"), dir.join("b"));
        put(&a, &["nats-server", "openssl"], 0o644);
        put(&b, &["nats-server", "openssl"], 0o755);
        put(&b, &["initdb", "pg_ctl", "postgres"], 0o755);
        let library = dir.join("no-library");
        assert_eq!(missing_for_nats(&path_of(&[&a])), ["nats-server"]);
        assert!(missing_for_nats(&path_of(&[&a, &b])).is_empty());
        // psql is looked for beside initdb, as postgres.sh runs it.
        assert_eq!(
            missing_for_postgres(&path_of(&[&a, &b]), &library),
            ["psql"]
        );
        put(&b, &["psql"], 0o755);
        assert!(missing_for_postgres(&path_of(&[&a, &b]), &library).is_empty());
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn the_newest_version_in_the_library_is_taken_before_path() {
        let dir = fresh("library");
        let library = dir.join("postgresql");
        put(&library.join("9.6/bin"), &POSTGRES_PROGRAMS, 0o755);
        put(
            &library.join("15/bin"),
            &["initdb", "pg_ctl", "postgres"],
            0o755,
        );
        let on_path = dir.join("bin");
        put(&on_path, &POSTGRES_PROGRAMS, 0o755);
        put(&on_path, &["openssl"], 0o755);
        let path = path_of(&[&on_path]);
        assert_eq!(
            postgres_directory(&path, &library),
            Some(library.join("15/bin"))
        );
        // 15 lacks psql: missing, whatever 9.6 or PATH hold.
        assert_eq!(missing_for_postgres(&path, &library), ["psql"]);
        std::fs::remove_dir_all(dir).unwrap();
    }
}
