//! `flip backup` while the daemon plays: the copy is a sound store with the
//! games finished before it began; `flip manual` and `flip completions` are
//! made from the flags, and dist/flip.1 is the manual flip prints.

use flipd::store::Archive;
use flipline_tests::*;

/// Plays `count` games against the bot to their end (resigned after a move).
fn finished_games(addr: std::net::SocketAddr, name: &str, count: usize) -> Vec<u64> {
    let mut client = Client::login_as(addr, name);
    (0..count)
        .map(|_| {
            let g = client.ok_game("NEW othello as X vs bot:1");
            client.lines_through(&format!("TURN {g} X"));
            client.ok("END");
            client.lines_through(&format!("OVER {g} "));
            g
        })
        .collect()
}

#[test]
fn a_backup_made_during_play_is_a_sound_store_with_the_games() {
    if sqlite_only("flip backup copies a SQLite file (PostgreSQL: pg_dump)") {
        return;
    }
    let daemon = start(test_config());
    let before = finished_games(daemon.addr, "ann", 5);
    let out_dir = temp_dir("backup");
    let out = out_dir.join("copy.db");
    let playing = std::thread::scope(|scope| {
        // Games go on being played while the copy is made.
        let addr = daemon.addr;
        let during = scope.spawn(move || finished_games(addr, "bob", 10));
        let made = run_flip(&[
            "backup".as_ref(),
            "--db".as_ref(),
            daemon.config.store.path.as_os_str(),
            out.as_os_str(),
        ]);
        let during = during.join().unwrap_or_default();
        (made, during)
    });
    let (made, during) = playing;
    let said = String::from_utf8_lossy(&made.stdout);
    assert!(
        made.status.success(),
        "{said} {}",
        String::from_utf8_lossy(&made.stderr)
    );
    assert!(
        said.starts_with("backed up ") && said.contains("checked"),
        "{said}"
    );
    assert_eq!(during.len(), 10);
    let copy = Archive::open(&out).unwrap_or_else(|e| panic!("{e}"));
    let kept: Vec<u64> = (copy.finished_games(None, None, None))
        .unwrap_or_else(|e| panic!("{e}"))
        .iter()
        .map(|g| g.id)
        .collect();
    for game in &before {
        assert!(
            kept.contains(game),
            "game {game} is not in the copy: {kept:?}"
        );
    }
    let again = run_flip(&[
        "backup".as_ref(),
        "--db".as_ref(),
        daemon.config.store.path.as_os_str(),
        out.as_os_str(),
    ]);
    assert_eq!(again.status.code(), Some(1), "a backup never overwrites");
    remove_temp_dir(&out_dir);
}

#[test]
fn the_manual_in_dist_is_the_one_flip_prints_and_completions_are_made() {
    let dist = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../dist/flip.1");
    let kept = std::fs::read_to_string(&dist).unwrap_or_else(|e| panic!("{}: {e}", dist.display()));
    let printed = run_flip(&["manual"]);
    assert!(printed.status.success());
    assert_eq!(
        kept,
        String::from_utf8_lossy(&printed.stdout),
        "dist/flip.1 is stale: flip manual > dist/flip.1"
    );
    // One page whole: the subcommands in it, no page named that is not
    // installed, and what only prose says.
    assert_eq!(crate::settings::pages_named(&kept), ["flipd(1)"]);
    let sections = [
        "SUBCOMMANDS",
        "COMMANDS AT THE PROMPT",
        "ENVIRONMENT",
        "FILES",
        "EXIT STATUS",
    ];
    for section in sections {
        assert!(kept.contains(&format!(".SH {section}\n")), "{section}");
    }
    for command in ["register NAME", "save FILE", "MOVE square", "QUIT"] {
        assert!(kept.contains(&format!("\\fB{command}\\fR")), "{command}");
    }
    for sub in ["bot", "analyze", "backup", "import", "export", "solve"] {
        assert!(kept.contains(&format!(".SS \"flip {sub}")), "flip {sub}");
    }
    for (shell, mark) in [
        ("bash", "_flip()"),
        ("zsh", "#compdef flip"),
        ("fish", "complete -c flip"),
    ] {
        let script = run_flip(&["completions", shell]);
        let text = String::from_utf8_lossy(&script.stdout);
        assert!(
            script.status.success() && text.contains(mark),
            "{shell}: {text}"
        );
        assert!(
            text.contains("backup"),
            "{shell}: the subcommands are in it"
        );
    }
}
