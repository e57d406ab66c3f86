//! The `flipd` binary's command line, run as it is installed. (Having an
//! integration test also makes `cargo test --workspace` build the binary
//! itself, with the workspace test build's features, so the end-to-end
//! tests find it built: see `tests/support/child.rs`.)

use std::process::Command;

fn flipd(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_flipd"))
        .args(args)
        .env_remove("RUST_LOG")
        .output()
        .unwrap_or_else(|e| panic!("cannot run flipd: {e}"))
}

#[test]
fn check_config_prints_the_settings_and_says_they_are_sound() {
    let out = flipd(&["--check-config"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(text.contains("listen: \"127.0.0.1:7341\""), "{text}");
}

#[test]
fn a_command_line_that_does_not_read_exits_2_and_a_bad_setting_1() {
    let unknown = flipd(&["--no-such-flag"]);
    assert_eq!(unknown.status.code(), Some(2), "{unknown:?}");
    let bad = Command::new(env!("CARGO_BIN_EXE_flipd"))
        .arg("--check-config")
        .env("FLIPD_GRACE_SECS", "soon")
        .output()
        .unwrap_or_else(|e| panic!("cannot run flipd: {e}"));
    let said = String::from_utf8_lossy(&bad.stderr);
    assert_eq!(bad.status.code(), Some(1), "{bad:?}");
    assert!(said.contains("FLIPD_GRACE_SECS"), "{said}");
}
