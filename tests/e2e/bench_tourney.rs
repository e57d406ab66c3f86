//! `flip-bench tourney`'s exit status: a close result is a result (status 0,
//! with a note), and only `--require-stronger` makes it a failure.

use std::process::{Command, Stdio};
use std::time::Duration;

use flipline_tests::{wait_bounded, workspace_binary};

/// Two games between levels 1 and 2 from the openings of `seed` (depth
/// limits only, so the same every run): the status and what went to stderr.
fn tourney(seed: u32, strict: bool) -> (Option<i32>, String) {
    let binary = workspace_binary("flipline-tests", "flip-bench");
    let mut command = Command::new(&binary);
    let seed = seed.to_string();
    command.args(["tourney", "--levels", "1-2", "--games", "2", "--no-time"]);
    command.args(["--threads", "1", "--seed", &seed]);
    if strict {
        command.arg("--require-stronger");
    }
    let child = command
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start flip-bench: {e}"));
    let output = wait_bounded(child, Duration::from_secs(60));
    let stderr = String::from_utf8_lossy(&output.stderr).to_string();
    (output.status.code(), stderr)
}

#[test]
fn a_close_result_exits_0_unless_a_stronger_level_is_required() {
    let mut noted = 0;
    for seed in 1..=6 {
        let (code, stderr) = tourney(seed, false);
        assert_eq!(code, Some(0), "seed {seed}: {stderr}");
        let note = stderr.contains("note: the higher level did not win: 2 vs 1");
        noted += usize::from(note);
        let (strict, strict_err) = tourney(seed, true);
        let expected = if note { 1 } else { 0 };
        assert_eq!(strict, Some(expected), "seed {seed}: {strict_err}");
    }
    assert!(
        noted > 0,
        "no seed gave a close result: the note went untested"
    );
}
