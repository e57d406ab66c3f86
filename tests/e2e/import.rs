//! `flip import`: GGF and WTHOR files into a store, read back by `flip
//! export` and by a daemon's `HISTORY`. The WTHOR files and the GGS archive
//! lines are written here by hand from the published layouts, not by the
//! code under test.

use std::path::{Path, PathBuf};

use flipline::notation::transcript_string;
use flipline::{Game, Move, Variant};
use flipline_tests::*;

/// `flip` that must succeed; its standard error.
fn flip_ok(args: &[&str]) -> String {
    let out = run_flip(args);
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(out.status.success(), "flip {args:?}: {stderr}");
    stderr
}

fn text(path: &Path) -> String {
    path.display().to_string()
}

/// `flip export --format transcript` of the store at `db`, line by line.
fn transcript_lines(db: &Path) -> Vec<String> {
    let out = run_flip(&["export", "--db", &text(db), "--format", "transcript"]);
    (String::from_utf8_lossy(&out.stdout).lines())
        .map(String::from)
        .collect()
}

fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

/// A store holding finished games of every kind GGF and WTHOR write: played
/// to the end (othello, anti, othello6), resigned (with a clock), and one
/// neither writes (tictactoe). Returns where it is (its file, or its
/// PostgreSQL database) and its directory.
fn played_store() -> (PathBuf, PathBuf) {
    let daemon = start(test_config());
    let mut rng = Rng::random();
    for (variant, names) in [
        ("othello", ["ia", "ib"]),
        ("anti", ["ic", "id"]),
        ("othello6", ["ie", "if"]),
        ("othello", ["ig", "ih"]),
    ] {
        let (mut a, mut b, start) = seek_pair(daemon.addr, variant, names);
        play_game(&mut [&mut a, &mut b], &start, &mut |m| rng.pick(m));
    }
    let mut hot = Client::login_as(daemon.addr, "hot");
    for args in ["othello hotseat clock 5+3", "tictactoe hotseat"] {
        let g = hot.ok_game(&format!("NEW {args}"));
        hot.lines_through(&format!("TURN {g} "));
        hot.ok(if args.starts_with("othello") {
            "MOVE f5"
        } else {
            "MOVE b2"
        });
        hot.lines_through(&format!("TURN {g} "));
        hot.ok("END");
        hot.lines_through(&format!("OVER {g} "));
    }
    let place = store_place(&daemon.config);
    let dir = daemon.config.store.path.parent().map(Path::to_path_buf);
    daemon
        .stop_keeping_store()
        .unwrap_or_else(|e| panic!("stop: {e}"));
    (place, dir.unwrap_or_default())
}

#[test]
fn ggf_export_import_export_is_byte_for_byte_the_same() {
    let (played, played_dir) = played_store();
    let dir = temp_dir("ggf-round-trip");
    let (first, second) = (dir.join("first.ggf"), dir.join("second.ggf"));
    let fresh = dir.join("fresh.db");
    let said = flip_ok(&["export", "--db", &text(&played), "-o", &text(&first)]);
    assert!(said.contains("exported 5 games"), "{said}");
    let said = flip_ok(&["import", "--db", &text(&fresh), &text(&first)]);
    assert!(
        said.contains("imported 5 games, 0 already in the store, skipped 0"),
        "{said}"
    );
    flip_ok(&["export", "--db", &text(&fresh), "-o", &text(&second)]);
    assert_eq!(
        String::from_utf8_lossy(&read(&first)),
        String::from_utf8_lossy(&read(&second))
    );
    // The transcripts (results, moves with their passes) are the same too.
    let transcripts = |db: &Path| {
        (transcript_lines(db).iter())
            .map(|l| {
                l.split_once(' ')
                    .map_or(l.as_str(), |(_, rest)| rest)
                    .to_string()
            })
            .filter(|l| !l.starts_with("tictactoe"))
            .collect::<Vec<_>>()
    };
    assert_eq!(transcripts(&played), transcripts(&fresh));
    // Twice: nothing more.
    let said = flip_ok(&["import", "--db", &text(&fresh), &text(&first)]);
    assert!(
        said.contains("imported 0 games, 5 already in the store"),
        "{said}"
    );
    remove_temp_dir(&played_dir);
    remove_temp_dir(&dir);
}

#[test]
fn wthor_export_import_export_is_byte_for_byte_the_same() {
    let (played, played_dir) = played_store();
    let dir = temp_dir("wthor-round-trip");
    let (first, second) = (dir.join("first.wtb"), dir.join("second.wtb"));
    let fresh = dir.join("fresh.db");
    let said = flip_ok(&[
        "export",
        "--db",
        &text(&played),
        "--format",
        "wtb",
        "-o",
        &text(&first),
    ]);
    assert!(said.contains("exported 3 games"), "{said}");
    assert!(said.contains("skipped 1 anti games"), "{said}");
    assert!(said.contains("skipped 1 othello6 games"), "{said}");
    let said = flip_ok(&["import", "--db", &text(&fresh), &text(&first)]);
    assert!(said.contains("imported 3 games"), "{said}");
    flip_ok(&[
        "export",
        "--db",
        &text(&fresh),
        "--format",
        "wtb",
        "-o",
        &text(&second),
    ]);
    for extension in ["wtb", "jou", "trn"] {
        let (a, b) = (
            read(&first.with_extension(extension)),
            read(&second.with_extension(extension)),
        );
        // Bytes 0-3 are the day each file was made: the same unless the
        // test ran across midnight.
        assert_eq!(a.get(4..), b.get(4..), "{extension}");
        assert_eq!(a.len(), b.len());
    }
    // The same games from GGF: a game is the same whatever the archive
    // (variant, players, moves), though WTHOR dates it by the year alone.
    let ggf = dir.join("same.ggf");
    flip_ok(&["export", "--db", &text(&played), "-o", &text(&ggf)]);
    let said = flip_ok(&["import", "--db", &text(&fresh), &text(&ggf)]);
    assert!(
        said.contains("imported 2 games, 3 already in the store"),
        "the anti and othello6 games only: {said}"
    );
    remove_temp_dir(&played_dir);
    remove_temp_dir(&dir);
}

/// A WTHOR header, from the layout: made on 2024-05-01, N1, N2, the year.
fn wthor_header(n1: u32, n2: u16, year: u16, board_size: u8) -> Vec<u8> {
    let mut bytes = vec![20, 24, 5, 1];
    bytes.extend(n1.to_le_bytes());
    bytes.extend(n2.to_le_bytes());
    bytes.extend(year.to_le_bytes());
    bytes.extend([board_size, 0, 0, 0]);
    bytes
}

/// A game record: tournament, black, white, black's discs, theoretical
/// score, the moves as `10 * row + column` from 1, zeros after.
fn wthor_game(black: u16, white: u16, discs: u8, squares: &[u8]) -> Vec<u8> {
    let mut bytes = Vec::new();
    bytes.extend(0u16.to_le_bytes());
    bytes.extend(black.to_le_bytes());
    bytes.extend(white.to_le_bytes());
    bytes.extend([discs, discs]);
    let mut moves = squares.to_vec();
    moves.resize(60, 0);
    bytes.extend(moves);
    bytes
}

/// A name field: latin-1 bytes, NUL-padded to `width`.
fn wthor_name(latin1: &[u8], width: usize) -> Vec<u8> {
    let mut field = latin1.to_vec();
    field.resize(width, 0);
    field
}

/// A whole game: each side plays its first legal square, passes when it
/// must. Returns the moves (passes written) and the squares' WTHOR codes.
fn first_square_game() -> (Game, Vec<Move>, Vec<u8>) {
    let mut game = Game::new(Variant::Othello);
    let (mut moves, mut codes) = (Vec::new(), Vec::new());
    while !game.is_over() {
        let mv = game
            .legal_moves()
            .iter()
            .next()
            .map_or(Move::Pass, Move::Place);
        if let Move::Place(square) = mv {
            codes.push(10 * (square.row + 1) + square.col + 1);
        }
        game.apply(mv)
            .unwrap_or_else(|e| panic!("{mv} is legal: {e}"));
        moves.push(mv);
    }
    (game, moves, codes)
}

#[test]
fn hand_written_wthor_files_import_with_their_players() {
    let dir = temp_dir("wthor-by-hand");
    let (end, moves, codes) = first_square_game();
    let mut wtb = wthor_header(3, 0, 2001, 8);
    wtb.extend(wthor_game(1, 0, 0, &codes));
    // f5 d6 c3, stopped there: black counted 20.
    wtb.extend(wthor_game(0, 1, 20, &[56, 64, 33]));
    // A code that is no square.
    wtb.extend(wthor_game(0, 1, 20, &[56, 99]));
    std::fs::write(dir.join("WTH_2001.wtb"), &wtb).unwrap_or_else(|e| panic!("{e}"));
    let mut jou = wthor_header(0, 2, 0, 0);
    jou.extend(wthor_name(b"Tastet Marc", 20));
    jou.extend(wthor_name(b"L\xe9a", 20));
    std::fs::write(dir.join("WTHOR.JOU"), &jou).unwrap_or_else(|e| panic!("{e}"));
    let mut trn = wthor_header(0, 1, 0, 0);
    trn.extend(wthor_name(b"Open de Paris", 26));
    std::fs::write(dir.join("WTHOR.TRN"), &trn).unwrap_or_else(|e| panic!("{e}"));
    let db = dir.join("store.db");
    let said = flip_ok(&[
        "import",
        "--db",
        &text(&db),
        &text(&dir.join("WTH_2001.wtb")),
    ]);
    assert!(said.contains("game 3: move 2 is coded 99"), "{said}");
    assert!(
        said.contains("imported 2 games, 0 already in the store, skipped 1"),
        "{said}"
    );
    let lines = transcript_lines(&db);
    let score = end.score();
    let winner = score
        .winner
        .map_or("draw".to_string(), |c| c.letter().to_string());
    assert_eq!(
        lines,
        [
            format!(
                "1 othello Léa Tastet_Marc {winner}:{}-{}:normal {}",
                score.black,
                score.white,
                transcript_string(&moves)
            ),
            "2 othello Tastet_Marc Léa O:20-44:resign f5d6c3".to_string(),
        ]
    );
    // The year is all WTHOR keeps of the date.
    let ggf = run_flip(&["export", "--db", &text(&db)]);
    assert!(String::from_utf8_lossy(&ggf.stdout).contains("DT[2001.01.01_00:00:00.UTC]"));
    // Without the .jou, players are their numbers.
    std::fs::remove_file(dir.join("WTHOR.JOU")).unwrap_or_else(|e| panic!("{e}"));
    let numbered = dir.join("numbered.db");
    flip_ok(&[
        "import",
        "--db",
        &text(&numbered),
        &text(&dir.join("WTH_2001.wtb")),
    ]);
    let numbered_lines = transcript_lines(&numbered);
    let resigned = "2 othello 0 1 O:20-44:resign";
    assert!(
        numbered_lines.iter().any(|l| l.contains(resigned)),
        "{numbered_lines:?}"
    );
    // A 10x10 file is refused whole, naming the file.
    let ten = dir.join("WTH_2002.wtb");
    std::fs::write(&ten, wthor_header(0, 0, 2002, 10)).unwrap_or_else(|e| panic!("{e}"));
    let refused = run_flip(&["import", "--db", &text(&db), &text(&ten)]);
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        !refused.status.success() && stderr.contains("WTH_2002.wtb") && stderr.contains("10x10"),
        "{stderr}"
    );
    remove_temp_dir(&dir);
}

const BOARD: &str =
    "BO[8 -------- -------- -------- ---O*--- ---*O--- -------- -------- -------- *]";

/// GGS's archive lines: a count, then that many games.
fn ggs_archive() -> String {
    format!(
        "1 (;GM[Othello]PC[GGS/os]DT[2004.09.18_05:54:38.MDT]PB[fangr]PW[patzer]RB[1457.12]\
         RW[1631.74]TI[05:00/00:03/00:00]TY[8]RE[-64.00:r]{BOARD}B[F5//4.09]W[D6/40.00/0.01]\
         B[c3//2.00];)\n\
         2 (;GM[Othello]PC[GGS/os]DT[945277754]PB[ann]PW[bob]TY[8a]RE[+2.00:t]{BOARD}\
         B[f5]W[f6];)(;GM[Othello]PC[GGS/os]DT[945277754]PB[bob]PW[ann]TY[8r14]RE[+2.00]\
         {BOARD};)\n\
         1 (;GM[Othello]PC[GGS/os]DT[945277754]PB[cid]PW[dan]TY[8]RE[+0.00]{BOARD}B[F5]W[F5];)\n"
    )
}

#[test]
fn a_ggs_archive_imports_its_games_and_names_what_it_skips() {
    let dir = temp_dir("ggs-archive");
    let archive = dir.join("Othello.ggf");
    std::fs::write(&archive, ggs_archive()).unwrap_or_else(|e| panic!("{e}"));
    let db = dir.join("store.db");
    let said = flip_ok(&["import", "--db", &text(&db), &text(&archive)]);
    assert!(said.contains("game 3 (line 2): TY[8r14]"), "{said}");
    assert!(said.contains("game 4 (line 3): W[F5] at ply 2"), "{said}");
    assert!(
        said.contains("imported 2 games, 0 already in the store, skipped 2"),
        "{said}"
    );
    let lines = transcript_lines(&db);
    // RE is black's result: in anti, black won 2 on time with the fewer discs.
    assert_eq!(
        lines,
        [
            "1 othello fangr patzer O:0-64:resign f5d6c3",
            "2 anti ann bob X:31-33:time f5f6",
        ]
    );
    let ggf = run_flip(&["export", "--db", &text(&db)]);
    let ggf = String::from_utf8_lossy(&ggf.stdout);
    assert!(
        ggf.contains(
            "DT[2004.09.18_11:54:38.UTC]PB[fangr]PW[patzer]TI[05:00/00:03/00:00]TY[8]RE[-64.00:r]"
        ),
        "{ggf}"
    );
    assert!(ggf.contains("B[F5//4.09]W[D6//0.01]B[C3//2.00]"), "{ggf}");
    assert!(ggf.contains("TY[8a]RE[+2.00:t]"), "{ggf}");
    // The archive's first game, move by move, beside the engine's best.
    let out = run_flip(&[
        "analyze",
        "--game",
        &text(&archive),
        "--level",
        "1",
        "--time-ms",
        "100",
    ]);
    let analysis = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = analysis.lines().collect();
    assert_eq!(lines.len(), 6, "{analysis}");
    assert!(
        lines[0].starts_with("othello, 3 moves, level 1"),
        "{analysis}"
    );
    assert!(lines[1].starts_with("scores: discs"), "{analysis}");
    assert!(
        lines[2].starts_with("  1 X   f5 ") && lines[2].contains(" cost "),
        "{analysis}"
    );
    assert!(lines[5].starts_with("total cost "), "{analysis}");
    remove_temp_dir(&dir);
}

#[test]
fn a_daemon_started_on_an_imported_store_shows_the_games_in_history() {
    if sqlite_only("flip import writes a SQLite store") {
        return;
    }
    let config = test_config();
    let dir = temp_dir("history-archive");
    let archive = dir.join("Othello.ggf");
    std::fs::write(&archive, ggs_archive()).unwrap_or_else(|e| panic!("{e}"));
    flip_ok(&["import", "--db", &text(&config.store.path), &text(&archive)]);
    let daemon = start(config);
    let mut reader = Client::connect(daemon.addr);
    let history = |reader: &mut Client, game: u64| {
        let (data, ok) = reader.command(&format!("HISTORY {game}"));
        assert_eq!(ok, "OK", "HISTORY {game}");
        data
    };
    assert_eq!(
        history(&mut reader, 1),
        ["HISTORY 1 othello fangr patzer 5+3 over O:0-64:resign f5d6c3"]
    );
    assert_eq!(
        history(&mut reader, 2),
        ["HISTORY 2 anti ann bob - over X:31-33:time f5f6"]
    );
    assert_eq!(reader.err("HISTORY 3", 404), "ERR 404 no game 3");
    // New games are numbered after the imported ones.
    let mut hot = Client::login_as(daemon.addr, "hot");
    assert_eq!(hot.ok_game("NEW othello hotseat"), 3);
    drop(daemon);
    remove_temp_dir(&dir);
}
