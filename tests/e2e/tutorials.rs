//! The guides' code is run: each code block of docs/ that follows a line
//! `<!-- file: PATH -->` is held equal to that file of the workspace, and
//! the tutorial's bots (examples/tutorial_bot.py and
//! examples/tutorial_bot.rs, which docs/bots.md shows whole) play a real
//! game of othello against each other on a daemon started here, as does
//! README.md's bot in ten lines against the Python one; the `nc` session
//! docs/bots.md shows is replayed against a daemon, line by line, and the
//! `flip --local` session README.md shows is run and compared. The guide's
//! commands of examples/challenge_bot.py (rated challenges, a Swiss) run
//! as shown against a daemon of their own.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use flipline_tests::*;

/// The workspace's top directory.
fn top() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The code blocks of `text` that a `<!-- file: PATH -->` line announces:
/// each path with the block's text.
fn announced_blocks(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let Some(path) = line.trim().strip_prefix("<!-- file: ") else {
            continue;
        };
        let path = path.trim_end_matches("-->").trim().to_string();
        let fence = lines.next().unwrap_or("");
        assert!(fence.starts_with("```"), "{path}: no code block follows");
        let body: Vec<&str> = lines
            .by_ref()
            .take_while(|l| !l.starts_with("```"))
            .collect();
        out.push((path, body.join("\n") + "\n"));
    }
    out
}

#[test]
fn the_code_the_guides_show_is_the_code_that_runs() {
    let guide = std::fs::read_to_string(top().join("docs/bots.md"))
        .unwrap_or_else(|e| panic!("docs/bots.md: {e}"));
    let blocks = announced_blocks(&guide);
    let paths: Vec<&str> = blocks.iter().map(|(p, _)| p.as_str()).collect();
    assert_eq!(
        paths,
        ["examples/tutorial_bot.py", "examples/tutorial_bot.rs"],
        "the tutorial shows both bots whole"
    );
    for (path, shown) in blocks {
        let file =
            std::fs::read_to_string(top().join(&path)).unwrap_or_else(|e| panic!("{path}: {e}"));
        assert!(
            shown == file,
            "docs/bots.md shows another {path} than the file: copy the file into the page"
        );
    }
}

/// A tutorial bot as a child process, its output piped.
fn spawn(program: &Path, args: &[&str]) -> Child {
    Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", program.display()))
}

/// The one result line a bot printed (`game 1 over: X 40-24 (normal)`),
/// checked: it exited 0, said nothing on standard error, and the scores
/// count the board's 64 squares.
fn result_of(bot: &str, child: Child) -> String {
    let output = wait_bounded(child, Duration::from_secs(60));
    let out = String::from_utf8_lossy(&output.stdout).into_owned();
    let err = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{bot}: {out}{err}");
    assert!(err.is_empty(), "{bot} was refused something: {err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 1, "{bot}: one game, one line: {out}");
    let scores = lines[0].split_whitespace().nth(4).unwrap_or("");
    let (black, white) = scores.split_once('-').unwrap_or(("", ""));
    let sum = black.parse::<u32>().ok().zip(white.parse::<u32>().ok());
    assert_eq!(sum.map(|(b, w)| b + w), Some(64), "{bot}: {out}");
    lines[0].to_string()
}

#[test]
fn the_tutorial_bots_in_python_and_rust_play_each_other() {
    let rust_bot = workspace_example("tutorial_bot");
    let daemon = start(test_config());
    let addr = daemon.addr.to_string();
    let script = top().join("examples/tutorial_bot.py");
    let script = script.to_string_lossy();
    let python = spawn(Path::new("python3"), &[&script, &addr, "pybot"]);
    let rust = spawn(&rust_bot, &[&addr, "rustbot"]);
    let python = result_of("tutorial_bot.py", python);
    let rust = result_of("tutorial_bot", rust);
    assert_eq!(python, rust, "both saw the same game end the same way");
    assert!(python.ends_with("(normal)"), "{python}");
    // The game is the store's: both bots in it, with its result.
    let game = python.split_whitespace().nth(1).unwrap_or("");
    let mut client = Client::connect(daemon.addr);
    let (data, _) = client.ok(&format!("HISTORY {game}"));
    let line = data.first().map_or("", String::as_str);
    assert!(
        line.contains("pybot") && line.contains("rustbot"),
        "{data:?}"
    );
}

/// The session of a code block that a `<!-- session -->` line announces.
fn announced_session(text: &str) -> String {
    announced_session_after(text, "<!-- session -->\n")
}

/// Whether `got` is the line `shown` (where `shown` ends in `...`, what it
/// begins with).
fn shown_as(shown: &str, got: &str) -> bool {
    match shown.strip_suffix("...") {
        Some(start) => got.starts_with(start),
        None => got == shown,
    }
}

#[test]
fn the_nc_session_of_the_tutorial_is_what_flipd_answers() {
    let guide = std::fs::read_to_string(top().join("docs/bots.md"))
        .unwrap_or_else(|e| panic!("docs/bots.md: {e}"));
    let session = announced_session(&guide);
    assert!(session.lines().count() > 10, "{session}");
    let daemon = start(test_config());
    let mut client = Client::connect_raw(daemon.addr);
    for (number, shown) in session.lines().enumerate() {
        if let Some(typed) = shown.strip_prefix("> ") {
            client.send(typed);
            continue;
        }
        let got = client.line();
        assert!(
            shown_as(shown, &got),
            "docs/bots.md's session, line {}: shown {shown:?}, flipd said {got:?}",
            number + 1
        );
    }
}

/// README.md's bot in ten lines, its port made the daemon's.
fn readme_bot(port: u16) -> String {
    let readme = std::fs::read_to_string(top().join("README.md"))
        .unwrap_or_else(|e| panic!("README.md: {e}"));
    let (_, after) = readme
        .split_once("```python\n")
        .unwrap_or_else(|| panic!("README.md shows no bot"));
    let (bot, _) = after.split_once("```").unwrap_or((after, ""));
    assert!(bot.lines().count() <= 10, "a bot in ten lines: {bot}");
    assert!(
        bot.contains("7341"),
        "README's bot talks to the default port"
    );
    bot.replace("7341", &port.to_string())
}

#[test]
fn the_readme_bot_plays_a_game_against_the_tutorial_bot() {
    let daemon = start(test_config());
    let addr = daemon.addr.to_string();
    let dir = temp_dir("readme-bot");
    let path = dir.join("tenlines.py");
    std::fs::write(&path, readme_bot(daemon.addr.port())).unwrap_or_else(|e| panic!("{e}"));
    let script = top().join("examples/tutorial_bot.py");
    let python = Path::new("python3");
    let tutorial = spawn(python, &[&script.to_string_lossy(), &addr, "pybot"]);
    let readme = spawn(python, &[&path.to_string_lossy()]);
    let tutorial = result_of("tutorial_bot.py", tutorial);
    let output = wait_bounded(readme, Duration::from_secs(60));
    let out = String::from_utf8_lossy(&output.stdout);
    let err = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "README's bot: {out}{err}");
    // `OVER <game> <winner> <black> <white> <how>`, as the tutorial bot saw it.
    let over: Vec<&str> = out.split_whitespace().collect();
    let seen = format!(
        "game {} over: {} {}-{} ({})",
        over.get(1).unwrap_or(&""),
        over.get(2).unwrap_or(&""),
        over.get(3).unwrap_or(&""),
        over.get(4).unwrap_or(&""),
        over.get(5).unwrap_or(&"")
    );
    assert_eq!(seen, tutorial, "README's bot printed {out:?}");
    remove_temp_dir(&dir);
}

/// README.md's terminal session: the command after `$ ` and the lines it
/// prints, up to a last line `...` where the rest is left out.
fn readme_session() -> (String, Vec<String>) {
    let readme = std::fs::read_to_string(top().join("README.md"))
        .unwrap_or_else(|e| panic!("README.md: {e}"));
    let session = announced_session_after(&readme, "<!-- replayed -->\n");
    let mut lines = session.lines();
    let command = lines.next().and_then(|l| l.strip_prefix("$ "));
    let command = command.unwrap_or_else(|| panic!("README's session starts with no `$ `"));
    let shown = lines
        .take_while(|l| *l != "...")
        .map(str::to_string)
        .collect();
    (command.to_string(), shown)
}

/// The code block after the line `marker` in `text`.
fn announced_session_after(text: &str, marker: &str) -> String {
    let (_, after) = (text.split_once(marker)).unwrap_or_else(|| panic!("no {marker:?}"));
    let body = after.split_once('\n').map_or("", |(_, body)| body);
    let (session, _) = body.split_once("\n```").unwrap_or((body, ""));
    session.to_string()
}

#[test]
fn the_readme_terminal_session_is_what_flip_prints() {
    let (command, shown) = readme_session();
    assert!(shown.len() > 10, "{shown:?}");
    let flip = workspace_binary("flip", "flip");
    let bin_dir = flip.parent().unwrap_or(Path::new("."));
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut dirs = vec![bin_dir.to_path_buf()];
    dirs.extend(std::env::split_paths(&path));
    let home = temp_dir("readme-session");
    let child = Command::new("sh")
        .args(["-c", &command])
        .env("PATH", std::env::join_paths(dirs).unwrap_or_default())
        .env("HOME", &home)
        .env("XDG_DATA_HOME", home.join("data"))
        .env_remove("NO_COLOR")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("sh: {e}"));
    let output = wait_bounded(child, Duration::from_secs(60));
    let out = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{command}: {out}");
    let printed: Vec<&str> = out.lines().collect();
    for (number, line) in shown.iter().enumerate() {
        let got = printed.get(number).copied().unwrap_or("(nothing)");
        assert!(
            shown_as(line, got),
            "README.md's session, line {}: shown {line:?}, flip printed {got:?}",
            number + 1
        );
    }
    remove_temp_dir(&home);
}

/// The `python3 examples/challenge_bot.py` commands docs/bots.md shows, a
/// line ending in `\` joined with the next, in order.
fn challenge_bot_commands(guide: &str) -> Vec<String> {
    let mut commands = Vec::new();
    let mut lines = guide.lines().map(str::trim);
    while let Some(line) = lines.next() {
        if !line.starts_with("python3 examples/challenge_bot.py ") {
            continue;
        }
        let mut command = line.to_string();
        while let Some(head) = command.strip_suffix('\\') {
            command = format!("{head}{}", lines.next().unwrap_or(""));
        }
        commands.push(command);
    }
    commands
}

/// A guide's shell command run from the workspace's top, against `addr`.
fn run_shown(command: &str, addr: &str) -> Child {
    Command::new("sh")
        .args(["-c", &command.replace("127.0.0.1:7341", addr)])
        .current_dir(top())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("sh: {e}"))
}

/// What a challenge bot printed, checked to have ended well: the count of
/// its games and of its lines of standings.
fn bot_games(command: &str, child: Child) -> (usize, usize) {
    let output = wait_bounded(child, Duration::from_secs(120));
    let out = String::from_utf8_lossy(&output.stdout);
    let err = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{command}: {out}{err}");
    let games = out.lines().filter(|l| l.contains(": winner ")).count();
    let rated = out.lines().filter(|l| l.contains(": rated ")).count();
    assert_eq!(games, rated, "{command}: every game rated: {out}");
    let standings = out.lines().filter(|l| l.contains(" points in ")).count();
    (games, standings)
}

#[test]
fn the_rated_and_tournament_commands_of_the_bot_guide_run_as_shown() {
    let guide = std::fs::read_to_string(top().join("docs/bots.md"))
        .unwrap_or_else(|e| panic!("docs/bots.md: {e}"));
    let commands = challenge_bot_commands(&guide);
    let (tourney, challenge): (Vec<String>, Vec<String>) =
        commands.into_iter().partition(|c| c.contains("--tourney"));
    assert_eq!(
        (challenge.len(), tourney.len()),
        (2, 4),
        "{challenge:?} {tourney:?}"
    );
    // Rated challenges: the challenged bot first, the challenger once it is online.
    let daemon = start(test_config());
    let addr = daemon.addr.to_string();
    let host = run_shown(&challenge[0], &addr);
    let mut watcher = Client::connect(daemon.addr);
    wait_until("the challenged bot is online", HANG_GUARD, || {
        let (players, _) = watcher.ok("WHO");
        players.iter().any(|l| l.starts_with("PLAYER zed "))
    });
    let guest = run_shown(&challenge[1], &addr);
    for (command, child) in challenge.iter().zip([host, guest]) {
        assert_eq!(bot_games(command, child), (10, 0), "{command}");
    }
    // A Swiss of three rounds between four bots started together.
    let daemon = start(test_config());
    let addr = daemon.addr.to_string();
    let children: Vec<Child> = tourney.iter().map(|c| run_shown(c, &addr)).collect();
    for (command, child) in tourney.iter().zip(children) {
        assert_eq!(bot_games(command, child), (3, 4), "{command}");
    }
}
