//! The rules crate stays pure because of what it may link, not by
//! convention: its dependency graph holds no runtime, socket, disk, password
//! or metrics crate, so no rule can wait on any of them.

use std::process::Command;

/// Crates that do I/O or keep process-wide state; none may be below the rules.
const FORBIDDEN: [&str; 8] = [
    "actix",
    "tokio",
    "rusqlite",
    "argon2",
    "prometheus-client",
    "getrandom",
    "tracing",
    "libc",
];

#[test]
fn the_rules_link_no_io_crate() {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let output = Command::new(cargo)
        .args([
            "tree",
            "-p",
            "flipd-rules",
            "-e",
            "normal",
            "--prefix",
            "none",
        ])
        .args(["--format", "{p}", "--offline"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo tree runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let tree = String::from_utf8_lossy(&output.stdout);
    let names: Vec<&str> = tree
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert!(names.contains(&"flipline"), "the tree was read: {names:?}");
    for name in FORBIDDEN {
        assert!(
            !names.contains(&name),
            "{name} is below the rules crate: {names:?}"
        );
    }
}
