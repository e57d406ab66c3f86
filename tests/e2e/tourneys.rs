//! Tournaments over the protocol: a round robin of four and a Swiss of six
//! played out by four and six bot threads to their standings, with the
//! games their kinds promise; a player away at a round loses that game by
//! abandon; a tournament stopped mid-round by a restart goes on, with its
//! standings and ratings as they were; and the refusals.

use std::collections::{BTreeSet, HashMap};
use std::time::{Duration, Instant};

use flipline::protocol::{Event, Points, ServerLine, StandingLine, TourneyNews, TourneyStage};
use flipline_tests::*;

use flipd::store::Archive;

use crate::challenges::member;
use crate::ratings::{assert_rating_near, glicko2};

/// How long a whole tournament may take in a test before it fails.
const TOURNEY_DEADLINE: Duration = Duration::from_secs(120);

/// What a player saw of a tournament.
pub(crate) struct Seen {
    pub(crate) client: Client,
    /// Every line read.
    pub(crate) lines: Vec<String>,
    /// The games it played: (game, black, white, the first BOARD's cells).
    pub(crate) games: Vec<(u64, String, String, String)>,
}

/// Plays for `client` in tournament `id` (the first legal move at each of
/// its turns) until `TOURNEY <id> over`, or, with `stop_at_round`, until
/// that round's game starts (it is left unplayed).
pub(crate) fn play_tourney(client: Client, id: u64, stop_at_round: Option<u32>) -> Seen {
    let deadline = Instant::now() + TOURNEY_DEADLINE;
    let mut seen = Seen {
        client,
        lines: Vec::new(),
        games: Vec::new(),
    };
    let name = seen.client.name.clone();
    let mut boards: HashMap<u64, bool> = HashMap::new();
    // The position each game's last BOARD showed, and the one last moved
    // in: a snapshot read again (a game taken over by another node) shows
    // a TURN already answered, not to be answered twice.
    let mut positions: HashMap<u64, (String, Option<flipline::Color>)> = HashMap::new();
    let mut answered: HashMap<u64, (String, Option<flipline::Color>)> = HashMap::new();
    let mut stopping = false;
    loop {
        let line = match seen.client.read_until(deadline) {
            Received::Line(line) => line,
            other => panic!("{name}: tournament {id} unfinished: {other:?}"),
        };
        seen.lines.push(line.clone());
        if line.starts_with("OK") {
            continue;
        }
        assert!(!line.starts_with("ERR"), "{name}: {line}");
        match event(&line) {
            Event::Start {
                game, black, white, ..
            } => {
                boards.insert(game, false);
                seen.games.push((game, black, white, String::new()));
                if stopping {
                    return seen;
                }
            }
            Event::Board {
                game,
                cells,
                to_move,
            } => {
                positions.insert(game, (cells.clone(), to_move));
                if boards.get(&game) == Some(&false) {
                    boards.insert(game, true);
                    if let Some(entry) = seen.games.iter_mut().find(|g| g.0 == game) {
                        entry.3 = cells;
                    }
                }
            }
            Event::Turn { game, side, moves } => {
                let mine = seen.games.iter().find(|g| g.0 == game).is_some_and(|g| {
                    let player = if side == flipline::Color::Black {
                        &g.1
                    } else {
                        &g.2
                    };
                    *player == name
                });
                let position = positions.get(&game);
                if mine && position.is_some() && answered.get(&game) != position {
                    if let Some(position) = position {
                        answered.insert(game, position.clone());
                    }
                    match moves.first() {
                        Some(square) => seen.client.send(&format!("MOVE {square}")),
                        None => seen.client.send("PASS"),
                    }
                }
            }
            Event::TourneyNews {
                id: t,
                news: TourneyNews::Round(round),
            } if t == id && Some(round) == stop_at_round => stopping = true,
            Event::TourneyNews {
                id: t,
                news: TourneyNews::Over(_),
            } if t == id => return seen,
            _ => {}
        }
    }
}

/// Members `names` (passwords after them), every one joined to a new
/// tournament `spec` that the first made.
fn field(addr: std::net::SocketAddr, names: &[&str], spec: &str) -> (Vec<Client>, u64) {
    let mut clients: Vec<Client> = (names.iter())
        .map(|n| member(addr, n, &format!("pw-{n}-tourney")))
        .collect();
    let (_, ok) = clients[0].ok(&format!("TOURNEY NEW {spec}"));
    let id: u64 = ok
        .strip_prefix("OK ")
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("TOURNEY NEW -> {ok}"));
    for client in &mut clients {
        client.ok(&format!("TOURNEY JOIN {id}"));
    }
    (clients, id)
}

/// Starts tournament `id` (as `clients[0]`) and plays every player's games
/// on a thread of its own until it is over.
fn run_to_the_end(mut clients: Vec<Client>, id: u64) -> Vec<Seen> {
    clients[0].ok(&format!("TOURNEY START {id}"));
    let threads: Vec<_> = (clients.into_iter())
        .map(|c| std::thread::spawn(move || play_tourney(c, id, None)))
        .collect();
    (threads.into_iter())
        .map(|t| {
            t.join()
                .unwrap_or_else(|_| panic!("a player's thread failed"))
        })
        .collect()
}

/// Every game the players saw, once each, by number.
pub(crate) fn all_games(seen: &[Seen]) -> Vec<(u64, String, String, String)> {
    let mut games: Vec<_> = seen.iter().flat_map(|s| s.games.clone()).collect();
    games.sort();
    games.dedup();
    games
}

/// `TOURNEY SHOW id`'s lines.
fn standings(client: &mut Client, id: u64) -> Vec<StandingLine> {
    let (data, _) = client.ok(&format!("TOURNEY SHOW {id}"));
    (data.iter())
        .map(|l| match event(l) {
            Event::Standing(line) => line,
            other => panic!("not a STANDING line: {other:?}"),
        })
        .collect()
}

/// `TOURNEY LIST`'s line for `id`.
fn listed(client: &mut Client, id: u64) -> flipline::protocol::TourneyLine {
    let (data, _) = client.ok("TOURNEY LIST");
    (data.iter())
        .find_map(|l| match event(l) {
            Event::Tourney(line) if line.id == id => Some(line),
            _ => None,
        })
        .unwrap_or_else(|| panic!("tournament {id} not listed: {data:?}"))
}

/// The winner `TOURNEY <id> over` named, as a player heard it.
pub(crate) fn winner_heard(seen: &Seen, id: u64) -> Option<String> {
    seen.lines.iter().find_map(|l| match ServerLine::parse(l) {
        ServerLine::Event(Event::TourneyNews {
            id: t,
            news: TourneyNews::Over(winner),
        }) if t == id => Some(winner),
        _ => None,
    })?
}

/// Whether a table's points and disc differences add up: every game gives
/// out one point and its margins cancel.
fn assert_balanced(table: &[StandingLine], games: u32) {
    let points: u32 = table.iter().map(|s| s.half_points).sum();
    assert_eq!(points, games * 2, "one point a game: {table:?}");
    let discs: i32 = table.iter().map(|s| s.disc_difference).sum();
    assert_eq!(discs, 0, "margins cancel: {table:?}");
}

#[test]
fn a_round_robin_of_four_plays_every_pair_twice_from_a_shared_start() {
    let daemon = start(test_config());
    let names = ["ann", "bob", "cy", "dee"];
    let (mut clients, id) = field(daemon.addr, &names, "roundrobin start random:6");
    let open = listed(&mut clients[0], id);
    assert_eq!(
        (open.stage, open.players, open.round, open.rounds),
        (TourneyStage::Open, 4, 0, 6)
    );
    let mut watcher = member(daemon.addr, "eve", "pw-eve-tourney");
    let seen = run_to_the_end(clients, id);
    let games = all_games(&seen);
    assert_eq!(games.len(), 12, "six pairs, twice each: {games:?}");
    for s in &seen {
        assert_eq!(s.games.len(), 6, "{} plays each other twice", s.client.name);
    }
    let colours: BTreeSet<(String, String)> =
        games.iter().map(|g| (g.1.clone(), g.2.clone())).collect();
    assert_eq!(colours.len(), 12, "each pair once each way round");
    for (_, black, white, cells) in &games {
        let swapped = games.iter().find(|g| g.1 == *white && g.2 == *black);
        let Some((_, _, _, other)) = swapped else {
            panic!("{black} v {white} has no return game")
        };
        assert_eq!(cells, other, "{black} v {white}: the pair shares its start");
        assert_ne!(
            cells.matches('-').count(),
            60,
            "a random start, not the usual"
        );
    }
    let table = standings(&mut watcher, id);
    assert_eq!(table.len(), 4);
    assert!(table.iter().all(|s| s.games == 6), "{table:?}");
    assert_balanced(&table, 12);
    let winner = winner_heard(&seen[0], id);
    let top_tied = table[1].rank == 1;
    assert_eq!(winner.is_none(), top_tied, "draw only for a tie: {table:?}");
    if let Some(winner) = winner {
        assert_eq!(winner, table[0].name);
    }
    let over = listed(&mut watcher, id);
    assert_eq!(
        (over.stage, over.round, over.rounds),
        (TourneyStage::Over, 6, 6)
    );
}

#[test]
fn a_swiss_of_six_in_three_rounds_plays_nine_games_and_no_pair_twice() {
    let daemon = start(test_config());
    let names = ["ann", "bob", "cy", "dee", "eve", "fay"];
    let (mut clients, id) = field(daemon.addr, &names, "swiss rounds 3 clock 5+1");
    // A game of no tournament, which its export leaves out.
    clients[0].ok("NEW othello hotseat");
    clients[0].ok("END");
    clients[0].ok("LEAVE");
    let seen = run_to_the_end(clients, id);
    let games = all_games(&seen);
    assert_eq!(games.len(), 9, "three rounds of three games: {games:?}");
    let pairs: BTreeSet<BTreeSet<String>> = (games.iter())
        .map(|g| [g.1.clone(), g.2.clone()].into_iter().collect())
        .collect();
    assert_eq!(pairs.len(), 9, "no pair twice");
    let mut watcher = Client::connect(daemon.addr);
    let table = standings(&mut watcher, id);
    assert_eq!(table.len(), 6);
    assert!(table.iter().all(|s| s.games == 3), "{table:?}");
    assert_balanced(&table, 9);
    for pair in table.windows(2) {
        let order = |s: &StandingLine| (s.half_points, s.disc_difference);
        assert!(order(&pair[0]) >= order(&pair[1]), "best first: {table:?}");
    }
    let shown = Points(table[0].half_points).to_string();
    assert!(!shown.is_empty() && table[0].rank == 1);
    let config = daemon.config.clone();
    drop((seen, watcher));
    daemon
        .stop_keeping_store()
        .unwrap_or_else(|e| panic!("stop: {e}"));
    let db = store_place(&config).display().to_string();
    let exported = |extra: &[&str]| {
        let output = run_flip(&[&["export", "--db", &db][..], extra].concat());
        let stderr = String::from_utf8_lossy(&output.stderr).to_string();
        assert!(output.status.success(), "{stderr}");
        String::from_utf8_lossy(&output.stdout).lines().count()
    };
    assert_eq!(exported(&[]), 10, "the tournament's games and the other");
    let id = id.to_string();
    assert_eq!(exported(&["--tourney", &id]), 9, "only the tournament's");
}

#[test]
fn a_player_away_when_a_round_begins_loses_that_game_by_abandon() {
    let daemon = start(test_config());
    let names = ["ann", "bob", "cy", "dee"];
    let (mut clients, id) = field(daemon.addr, &names, "swiss rounds 1");
    let dee = clients.pop().unwrap_or_else(|| panic!("four players"));
    drop(dee);
    // dee's connection is gone once the lobby says so.
    let deadline = Instant::now() + HANG_GUARD;
    loop {
        let (who, _) = clients[0].ok("WHO");
        if !who.iter().any(|l| l.starts_with("PLAYER dee ")) {
            break;
        }
        assert!(Instant::now() < deadline, "dee still online: {who:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
    let seen = run_to_the_end(clients, id);
    let forfeit_told: Vec<&String> = (seen.iter())
        .flat_map(|s| &s.lines)
        .filter(|l| l.contains("dee is not free to play"))
        .collect();
    assert_eq!(forfeit_told.len(), 1, "dee's opponent hears it");
    let mut watcher = Client::connect(daemon.addr);
    let table = standings(&mut watcher, id);
    let dee = table
        .iter()
        .find(|s| s.name == "dee")
        .unwrap_or_else(|| panic!("dee in the standings: {table:?}"));
    assert_eq!(
        (dee.half_points, dee.games, dee.disc_difference),
        (0, 1, -64)
    );
    assert!(table.iter().all(|s| s.games == 1), "{table:?}");
    assert_balanced(&table, 2);
    let played: usize = seen.iter().map(|s| s.games.len()).sum();
    assert_eq!(
        played, 2,
        "one game made (two players see it), one forfeited"
    );
    let mut seen = seen;
    let player = seen.iter_mut().find(|s| !s.games.is_empty());
    let player = player.unwrap_or_else(|| panic!("nobody played"));
    assert!(player.client.err("REMATCH", 409).contains("tournament"));
}

#[test]
fn a_tournament_stopped_by_a_restart_goes_on_with_its_standings_and_ratings() {
    let daemon = start(test_config());
    let names = ["ann", "bob", "cy", "dee"];
    let (mut clients, id) = field(daemon.addr, &names, "swiss rounds 2 rated");
    clients[0].ok(&format!("TOURNEY START {id}"));
    let threads: Vec<_> = (clients.into_iter())
        .map(|c| std::thread::spawn(move || play_tourney(c, id, Some(2))))
        .collect();
    let seen: Vec<Seen> = (threads.into_iter())
        .map(|t| {
            t.join()
                .unwrap_or_else(|_| panic!("a player's thread failed"))
        })
        .collect();
    let mut watcher = Client::connect(daemon.addr);
    let before = standings(&mut watcher, id);
    assert!(
        before.iter().all(|s| s.games == 1),
        "round 1 only: {before:?}"
    );
    let ratings = |client: &mut Client| -> Vec<String> {
        (names.iter())
            .flat_map(|n| client.ok(&format!("RATING {n} othello")).0)
            .collect()
    };
    let rated = ratings(&mut watcher);
    assert!(
        rated.iter().all(|l| l.contains(" 1 provisional")),
        "{rated:?}"
    );
    // Round 2's games, made and not played.
    let round_two: HashMap<String, u64> = (seen.iter())
        .map(|s| {
            let last = s.games.last().map(|g| g.0);
            let game = last.unwrap_or_else(|| panic!("{} has no game", s.client.name));
            (s.client.name.clone(), game)
        })
        .collect();
    let config = daemon.config.clone();
    drop((seen, watcher));
    daemon
        .stop_keeping_store()
        .unwrap_or_else(|e| panic!("stop: {e}"));
    let daemon = start(config);
    let mut watcher = Client::connect(daemon.addr);
    assert_eq!(
        standings(&mut watcher, id),
        before,
        "the standings as they were"
    );
    assert_eq!(ratings(&mut watcher), rated, "the ratings as they were");
    let running = listed(&mut watcher, id);
    assert_eq!((running.stage, running.round), (TourneyStage::Running, 2));
    let threads: Vec<_> = (names.iter())
        .map(|n| {
            let mut client = member(daemon.addr, n, &format!("pw-{n}-tourney"));
            let game = round_two[*n];
            client.send(&format!("JOIN {game}"));
            std::thread::spawn(move || play_tourney(client, id, None))
        })
        .collect();
    let mut seen: Vec<Seen> = (threads.into_iter())
        .map(|t| {
            t.join()
                .unwrap_or_else(|_| panic!("a player's thread failed"))
        })
        .collect();
    let refused = seen[0].client.err("REMATCH", 409);
    assert!(
        refused.contains("tournament"),
        "a recovered game is still its: {refused}"
    );
    let after = standings(&mut watcher, id);
    assert!(after.iter().all(|s| s.games == 2), "{after:?}");
    assert_balanced(&after, 4);
    let rated_after = ratings(&mut watcher);
    assert!(
        rated_after.iter().all(|l| l.contains(" 2 provisional")),
        "{rated_after:?}"
    );
}

#[test]
fn tournaments_are_for_registered_names_and_their_creator_starts_them() {
    let daemon = start(test_config());
    let mut guest = Client::login_as(daemon.addr, "guest");
    assert!(guest.err("TOURNEY NEW swiss", 403).contains("registered"));
    let (mut clients, id) = field(daemon.addr, &["ann", "bob"], "roundrobin");
    assert!(
        guest
            .err(&format!("TOURNEY JOIN {id}"), 403)
            .contains("registered")
    );
    assert!(
        clients[1]
            .err(&format!("TOURNEY START {id}"), 403)
            .contains("creator")
    );
    clients[1].err(&format!("TOURNEY JOIN {id}"), 409);
    clients[1].ok(&format!("TOURNEY LEAVE {id}"));
    clients[0].err(&format!("TOURNEY START {id}"), 409);
    clients[1].ok(&format!("TOURNEY JOIN {id}"));
    clients[0].err("TOURNEY SHOW 99", 404);
    clients[0].err("TOURNEY NEW knockout", 400);
    let mut anyone = Client::connect(daemon.addr);
    let (lines, _) = anyone.ok("TOURNEY LIST");
    assert_eq!(lines.len(), 1, "{lines:?}");
    clients[0].ok(&format!("TOURNEY START {id}"));
    clients[1].err(&format!("TOURNEY LEAVE {id}"), 409);
}

#[test]
fn four_example_bots_run_a_rated_round_robin_to_its_standings() {
    let daemon = start(test_config());
    let addr = daemon.addr.to_string();
    let script =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/challenge_bot.py");
    let bot = |name: &str, args: &[&str]| {
        std::process::Command::new("python3")
            .arg(&script)
            .arg(&addr)
            .args([name, &format!("pw-{name}-bot")])
            .args(args)
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot run python3: {e}"))
    };
    let maker = bot(
        "pb1",
        &[
            "--tourney-new",
            "roundrobin rated start random:4",
            "--tourney-size",
            "4",
        ],
    );
    let joiners: Vec<_> = ["pb2", "pb3", "pb4"]
        .iter()
        .map(|n| bot(n, &["--tourney-join"]))
        .collect();
    for child in std::iter::once(maker).chain(joiners) {
        let output = wait_bounded(child, Duration::from_secs(120));
        let text = String::from_utf8_lossy(&output.stdout);
        assert!(output.status.success(), "{text}");
        let games = text.lines().filter(|l| l.contains(": winner ")).count();
        assert_eq!(games, 6, "three opponents, twice each: {text}");
        let rated = text.lines().filter(|l| l.contains(": rated ")).count();
        assert_eq!(rated, 6, "each game's rating line: {text}");
        let table: Vec<&str> = text.lines().filter(|l| l.contains(" points in ")).collect();
        assert_eq!(table.len(), 4, "the standings: {text}");
    }
    let mut watcher = Client::connect(daemon.addr);
    let table = standings(&mut watcher, 1);
    assert!(table.iter().all(|s| s.games == 6), "{table:?}");
    assert_balanced(&table, 12);
    let (top, _) = watcher.ok("TOP othello");
    assert_eq!(top.len(), 4, "{top:?}");
    let config = daemon.config.clone();
    drop(watcher);
    daemon
        .stop_keeping_store()
        .unwrap_or_else(|e| panic!("stop: {e}"));
    // The ratings are Glicko-2's, computed here apart from the daemon over
    // the tournament's games in the order they ended (games sharing a
    // player end in the order of their numbers).
    let archive = Archive::open(&store_place(&config)).unwrap_or_else(|e| panic!("{e}"));
    let mut games = (archive.finished_games(None, None, Some(1)))
        .unwrap_or_else(|e| panic!("the tournament's games: {e}"));
    assert_eq!(games.len(), 12);
    games.sort_by(|a, b| (&a.ended_at, a.id).cmp(&(&b.ended_at, b.id)));
    let mut expected: HashMap<String, (f64, f64, f64)> = HashMap::new();
    for game in &games {
        let (Some(black), Some(white), Some(result)) = (&game.black, &game.white, game.result)
        else {
            panic!("game {} has no players or result", game.id)
        };
        let start = (1500.0, 350.0, 0.06);
        let (b, w) = (expected.get(black).copied(), expected.get(white).copied());
        let (b, w) = (b.unwrap_or(start), w.unwrap_or(start));
        let black_score = match result.winner {
            Some(flipline::Color::Black) => 1.0,
            Some(flipline::Color::White) => 0.0,
            None => 0.5,
        };
        expected.insert(black.clone(), glicko2(b, &[(w.0, w.1, black_score)]));
        expected.insert(white.clone(), glicko2(w, &[(b.0, b.1, 1.0 - black_score)]));
    }
    for line in &top {
        let Event::Rating(rating) = event(line) else {
            panic!("{line}")
        };
        assert_eq!((rating.games, rating.bot), (6, true), "{line}");
        assert_rating_near(&rating, expected[&rating.name]);
    }
}

#[test]
fn tournament_commands_answer_ok_only_once_stored_and_a_frozen_store_holds_only_them() {
    let faults = flipd::store::Faults::new();
    let mut config = test_config();
    config.store.faults = Some(faults.clone());
    let daemon = start(config);
    let (mut clients, id) = field(daemon.addr, &["ann", "bob"], "roundrobin tictactoe");
    let mut cy = member(daemon.addr, "cy", "pw-cy-tourney");
    faults.fail_writes();
    assert!(
        cy.err(&format!("TOURNEY JOIN {id}"), 503)
            .contains("nothing changed")
    );
    assert!(
        clients[0]
            .err(&format!("TOURNEY START {id}"), 503)
            .contains("nothing changed")
    );
    clients[0].err("TOURNEY NEW swiss", 503);
    let line = listed(&mut cy, id);
    assert_eq!(
        (line.stage, line.players),
        (TourneyStage::Open, 2),
        "as it was"
    );
    let (all, _) = cy.ok("TOURNEY LIST");
    assert_eq!(all.len(), 1, "the refused NEW made nothing: {all:?}");
    faults.heal();
    // Frozen: a command on the tournament waits for its write, and only it.
    faults.freeze();
    cy.send(&format!("TOURNEY JOIN {id}"));
    let (who, _) = clients[1].ok("WHO");
    assert_eq!(who.len(), 3, "the lobby answers meanwhile: {who:?}");
    clients[1].send(&format!("TOURNEY LEAVE {id}"));
    clients[1].expect_silence(Duration::from_millis(200));
    faults.heal();
    let (_, joined) = cy.final_reply("TOURNEY JOIN");
    assert_eq!(joined, "OK");
    let (_, left) = clients[1].final_reply("TOURNEY LEAVE");
    assert_eq!(left, "OK", "answered after the join it waited for");
    let line = listed(&mut cy, id);
    assert_eq!(line.players, 2, "ann and cy");
    clients[0].ok(&format!("TOURNEY START {id}"));
    clients[0].expect_event(&format!("TOURNEY {id} round 1"));
    cy.expect_event(&format!("TOURNEY {id} round 1"));
    cy.expect_event("START ");
}

#[test]
fn a_round_game_its_stored_moves_ended_counts_after_a_restart_and_the_next_round_follows() {
    let mut config = test_config();
    config.grace_secs = 3;
    let daemon = start(config);
    let (mut clients, id) = field(daemon.addr, &["ann", "bob"], "roundrobin tictactoe");
    clients[0].ok(&format!("TOURNEY START {id}"));
    let first = parse_start(&clients[0].expect_event("START "));
    let config = daemon.config.clone();
    drop(clients);
    daemon
        .stop_keeping_store()
        .unwrap_or_else(|e| panic!("stop: {e}"));
    // The game's last moves were stored and its end was not (the daemon
    // died between the two): black takes the a column.
    for (ply, square) in (1u32..).zip(["a1", "b1", "a2", "b2", "a3"]) {
        let game = first.game;
        store_execute(
            &config,
            &format!(
                "INSERT INTO move_log (seq, game, ply, move, ms) \
                 SELECT COALESCE(MAX(seq), 0) + 1, {game}, {ply}, '{square}', 10 FROM move_log"
            ),
            &format!(
                "INSERT INTO moves (game, ply, move, ms) VALUES ({game}, {ply}, '{square}', 10)"
            ),
        );
    }
    let daemon = start(config);
    let mut players: Vec<Client> = (["ann", "bob"].iter())
        .map(|n| member(daemon.addr, n, &format!("pw-{n}-tourney")))
        .collect();
    for player in &mut players {
        player.expect_event(&format!("TOURNEY {id} round 2"));
    }
    let mut watcher = Client::connect(daemon.addr);
    let table = standings(&mut watcher, id);
    let winner = table
        .iter()
        .find(|s| s.name == first.black)
        .unwrap_or_else(|| panic!("{table:?}"));
    assert_eq!((winner.half_points, winner.games), (2, 1), "{table:?}");
    assert!(
        table.iter().all(|s| s.games == 1),
        "counted once: {table:?}"
    );
    let line = listed(&mut watcher, id);
    assert_eq!((line.stage, line.round), (TourneyStage::Running, 2));
}

#[test]
fn joins_and_leaves_sent_in_one_write_are_answered_in_order_and_stored_so() {
    let daemon = start(test_config());
    let (mut clients, id) = field(daemon.addr, &["ann", "bob"], "swiss rounds 1");
    let mut cy = member(daemon.addr, "cy", "pw-cy-tourney");
    let lines =
        format!("TOURNEY JOIN {id}\nTOURNEY LEAVE {id}\nTOURNEY JOIN {id}\nTOURNEY JOIN {id}\n");
    cy.send_bytes(lines.as_bytes());
    for want in ["OK", "OK", "OK"] {
        assert_eq!(cy.final_reply("TOURNEY").1, want);
    }
    let (_, again) = cy.final_reply("TOURNEY JOIN");
    assert!(again.starts_with("ERR 409"), "{again}");
    let config = daemon.config.clone();
    drop((clients.pop(), cy));
    daemon
        .stop_keeping_store()
        .unwrap_or_else(|e| panic!("stop: {e}"));
    let daemon = start(config);
    let mut watcher = Client::connect(daemon.addr);
    assert_eq!(
        listed(&mut watcher, id).players,
        3,
        "as answered, after a restart"
    );
    drop(clients);
}
