//! Ratings over the protocol: rated games change both players' Glicko-2
//! ratings as a computation of its own in this file says they should (the
//! worked example of Glickman's paper checks that computation first);
//! `RATED` after `OVER`; `RATING` and `TOP`; games against bots and hotseat
//! games are never rated; rated seeks pair by rating; `ACCOUNT bot` marks a
//! name in `WHO` and `TOP`; and the ratings survive a restart.

use flipline::protocol::{Event, RatingLine};
use flipline_tests::*;

use crate::challenges::member;

/// Glicko-2 as "Example of the Glicko-2 system" (Glickman, 2013) writes
/// it, apart from the daemon's code: (rating, RD, volatility) after one
/// period with games `(opponent rating, opponent RD, score)`.
pub fn glicko2(player: (f64, f64, f64), games: &[(f64, f64, f64)]) -> (f64, f64, f64) {
    const TAU: f64 = 0.5;
    let scale = 173.7178;
    let (mu, phi, sigma) = ((player.0 - 1500.0) / scale, player.1 / scale, player.2);
    let g = |phi: f64| 1.0 / (1.0 + 3.0 * phi * phi / std::f64::consts::PI.powi(2)).sqrt();
    let e = |mu_j: f64, phi_j: f64| 1.0 / (1.0 + (-g(phi_j) * (mu - mu_j)).exp());
    let opponents: Vec<(f64, f64, f64)> = games
        .iter()
        .map(|&(r, rd, s)| ((r - 1500.0) / scale, rd / scale, s))
        .collect();
    let v = 1.0
        / opponents
            .iter()
            .map(|&(m, p, _)| g(p).powi(2) * e(m, p) * (1.0 - e(m, p)))
            .sum::<f64>();
    let delta_sum: f64 = opponents
        .iter()
        .map(|&(m, p, s)| g(p) * (s - e(m, p)))
        .sum();
    let delta = v * delta_sum;
    let a = (sigma * sigma).ln();
    let f = |x: f64| {
        let d = phi * phi + v + x.exp();
        x.exp() * (delta * delta - phi * phi - v - x.exp()) / (2.0 * d * d) - (x - a) / (TAU * TAU)
    };
    let mut big_a = a;
    let mut big_b = if delta * delta > phi * phi + v {
        (delta * delta - phi * phi - v).ln()
    } else {
        let mut k = 1.0;
        while f(a - k * TAU) < 0.0 {
            k += 1.0;
        }
        a - k * TAU
    };
    let (mut fa, mut fb) = (f(big_a), f(big_b));
    while (big_b - big_a).abs() > 0.000_001 {
        let c = big_a + (big_a - big_b) * fa / (fb - fa);
        let fc = f(c);
        if fc * fb <= 0.0 {
            big_a = big_b;
            fa = fb;
        } else {
            fa /= 2.0;
        }
        big_b = c;
        fb = fc;
    }
    let sigma2 = (big_a / 2.0).exp();
    let phi_star = (phi * phi + sigma2 * sigma2).sqrt();
    let phi2 = 1.0 / (1.0 / (phi_star * phi_star) + 1.0 / v).sqrt();
    let mu2 = mu + phi2 * phi2 * delta_sum;
    (scale * mu2 + 1500.0, scale * phi2, sigma2)
}

#[test]
fn the_independent_computation_gives_the_papers_example() {
    let games = [
        (1400.0, 30.0, 1.0),
        (1550.0, 100.0, 0.0),
        (1700.0, 300.0, 0.0),
    ];
    let (rating, rd, volatility) = glicko2((1500.0, 200.0, 0.06), &games);
    assert!((rating - 1464.06).abs() < 0.01, "{rating}");
    assert!((rd - 151.52).abs() < 0.01, "{rd}");
    assert!((volatility - 0.05999).abs() < 0.00001, "{volatility}");
}

/// That a `RATING` line shows `want` (rating, RD, volatility) as the
/// daemon rounds it. The deviation grows by the seconds between games:
/// rounding hides that, and the rating is within a point.
pub fn assert_rating_near(line: &RatingLine, want: (f64, f64, f64)) {
    assert!(
        (line.rating - want.0.round() as i32).abs() <= 1,
        "{line:?} {want:?}"
    );
    assert!(
        (line.rd - want.1.round() as i32).abs() <= 1,
        "{line:?} {want:?}"
    );
}

/// The `RATED` line of `name` among `lines`: (before, after).
fn rated(lines: &[String], name: &str) -> (i32, i32) {
    lines
        .iter()
        .find_map(|l| match event(l) {
            Event::Rated {
                name: n,
                before,
                after,
                ..
            } if n == name => Some((before, after)),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no RATED for {name} in {lines:?}"))
}

/// `RATING name variant`'s one line.
fn rating_of(client: &mut Client, name: &str, variant: &str) -> RatingLine {
    let (data, _) = client.ok(&format!("RATING {name} {variant}"));
    let lines: Vec<RatingLine> = data
        .iter()
        .filter_map(|l| match event(l) {
            Event::Rating(line) => Some(line),
            _ => None,
        })
        .collect();
    match lines.as_slice() {
        [line] => line.clone(),
        _ => panic!("RATING {name} {variant}: {data:?}"),
    }
}

/// A rated tic-tac-toe game between `ann` (X) and `bob` that `loser`
/// resigns; the lines both read through its `RATED`s.
fn rated_game(ann: &mut Client, bob: &mut Client, loser: &str) -> Vec<String> {
    let (_, ok) = ann.ok("CHALLENGE bob tictactoe as X rated");
    let id = ok.strip_prefix("OK ").unwrap_or_default().to_string();
    bob.expect_event(&format!("CHALLENGE {id} "));
    let (_, ok) = bob.ok(&format!("ACCEPT {id}"));
    let game = reply_game("ACCEPT", &ok);
    ann.lines_through(&format!("TURN {game} X"));
    bob.lines_through(&format!("TURN {game} X"));
    let resigner = if loser == "ann" { &mut *ann } else { &mut *bob };
    resigner.ok("END");
    let mut lines = ann.lines_through(&format!("RATED {game} "));
    lines.extend(ann.lines_through(&format!("RATED {game} ")));
    bob.lines_through(&format!("RATED {game} "));
    bob.lines_through(&format!("RATED {game} "));
    for client in [ann, bob] {
        client.ok("LEAVE");
    }
    lines
}

#[test]
fn rated_games_move_both_ratings_as_glicko2_says_and_a_restart_keeps_them() {
    let daemon = start(test_config());
    let mut ann = member(daemon.addr, "ann", "tiger-ann");
    let mut bob = member(daemon.addr, "bob", "tiger-bob");
    let mut expected = [(1500.0, 350.0, 0.06); 2];
    for loser in ["ann", "bob", "ann"] {
        let lines = rated_game(&mut ann, &mut bob, loser);
        let ann_score = if loser == "ann" { 0.0 } else { 1.0 };
        let [a, b] = expected;
        let next = [
            glicko2(a, &[(b.0, b.1, ann_score)]),
            glicko2(b, &[(a.0, a.1, 1.0 - ann_score)]),
        ];
        for ((name, before), after) in ["ann", "bob"].iter().zip(expected).zip(next) {
            let seen = rated(&lines, name);
            let want = (before.0.round() as i32, after.0.round() as i32);
            assert_eq!(seen, want, "{name} after {loser} resigned");
        }
        expected = next;
    }
    let check = |client: &mut Client| {
        for (name, want) in ["ann", "bob"].iter().zip(expected) {
            let line = rating_of(client, name, "tictactoe");
            assert_rating_near(&line, want);
            assert_eq!(line.games, 3);
            assert!(line.provisional, "RD {} is above 110", line.rd);
        }
    };
    check(&mut ann);
    let (top, _) = ann.ok("TOP tictactoe 5");
    let best = if expected[0].0 > expected[1].0 {
        "ann"
    } else {
        "bob"
    };
    let first = format!("RATING {best} ");
    assert!(
        top.first().is_some_and(|l| l.starts_with(&first)),
        "{top:?}"
    );
    assert_eq!(top.len(), 2, "{top:?}");
    let config = daemon.config.clone();
    drop((ann, bob));
    daemon
        .stop_keeping_store()
        .unwrap_or_else(|e| panic!("stop: {e}"));
    // Rebuilt from the games alone, the ratings are the same.
    let dir = temp_dir("recompute");
    let file = dir.join("flipd.ron");
    let store = config.store.path.display().to_string();
    let url = config.store.url.expose();
    let text = format!("(store: (path: {store:?}, url: {url:?}))");
    std::fs::write(&file, text).unwrap_or_else(|e| panic!("{e}"));
    let child = std::process::Command::new(workspace_binary("flipd", "flipd"))
        .arg("--config")
        .arg(&file)
        .arg("--recompute-ratings")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start flipd: {e}"));
    let output = wait_bounded(child, std::time::Duration::from_secs(30));
    remove_temp_dir(&dir);
    let said = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{said} {:?}", output.stderr);
    assert!(said.contains("from 3 rated games"), "{said}");
    let daemon = start(config);
    let mut watcher = Client::connect(daemon.addr);
    check(&mut watcher);
}

#[test]
fn games_against_bots_hotseat_and_casual_games_are_not_rated() {
    let daemon = start(test_config());
    let mut ann = member(daemon.addr, "ann", "tiger-ann");
    for args in ["tictactoe vs bot:1", "tictactoe hotseat"] {
        let g = ann.ok_game(&format!("NEW {args}"));
        ann.lines_through(&format!("TURN {g} "));
        ann.ok("END");
        let lines = ann.lines_through(&format!("OVER {g} "));
        assert!(!lines.iter().any(|l| l.starts_with("RATED")), "{lines:?}");
        ann.ok("LEAVE");
    }
    let line = rating_of(&mut ann, "ann", "tictactoe");
    assert_eq!((line.rating, line.rd, line.games), (1500, 350, 0));
    assert!(ann.err("RATING nobody", 404).contains("registered"));
    let mut guest = Client::login_as(daemon.addr, "guest");
    assert!(guest.err("SEEK rated", 403).contains("registered"));
}

#[test]
fn rated_seeks_pair_within_their_ranges_and_not_with_casual_ones() {
    let daemon = start(test_config());
    let mut ann = member(daemon.addr, "ann", "tiger-ann");
    let mut bob = member(daemon.addr, "bob", "tiger-bob");
    let mut cas = Client::login_as(daemon.addr, "cas");
    assert_eq!(ann.ok("SEEK rated range 1400-1600").1, "OK seeking");
    assert_eq!(cas.ok("SEEK").1, "OK seeking", "a casual seek waits apart");
    assert_eq!(
        bob.ok("SEEK rated range 1600-1900").1,
        "OK seeking",
        "1500 is out of bob's range"
    );
    let (_, paired) = bob.ok("SEEK rated range 1000-2000");
    let game = reply_game("SEEK", &paired);
    ann.expect_event(&format!("START {game} "));
    let (data, _) = cas.ok("WHO");
    assert!(
        data.contains(&"PLAYER cas seeking -".to_string()),
        "{data:?}"
    );
}

#[test]
fn a_name_marked_a_program_shows_as_one_in_who_and_top() {
    let daemon = start(test_config());
    let mut zed = member(daemon.addr, "zed", "tiger-zed");
    let mut guest = Client::login_as(daemon.addr, "guest");
    guest.err("ACCOUNT bot", 403);
    zed.ok("ACCOUNT bot");
    let (data, _) = guest.ok("WHO");
    assert!(
        data.contains(&"PLAYER zed idle - bot".to_string()),
        "{data:?}"
    );
    assert!(
        data.contains(&"PLAYER guest idle -".to_string()),
        "{data:?}"
    );
    let line = rating_of(&mut guest, "zed", "othello");
    assert_eq!(line.games, 0);
}
