//! `flip export`: the finished games of a store file, read-only, as GGF (the
//! Generic Game Format of the Othello servers, which NBoard and other tools
//! read) or as transcript lines; and that transcript line, which `save` writes
//! and `load` reads back. A transcript line is written from a [`GameSummary`]
//! (the store's games through `GameRecord::summary`, `save` from the
//! `HISTORY` line); GGF reads the `GameRecord` itself, for the start time and
//! the seconds each move took, which a summary does not hold.
//!
//! A transcript line is one game: `<game> <variant> <black> <white> <result>
//! <moves>`, with `-` for an open seat, a game not over, or no moves. The result
//! is `<X|O|draw>:<black-score>-<white-score>:<reason>`; the moves are run
//! together with every pass written out, as `NEW <variant> from <moves>` reads
//! them:
//!
//! ```text
//! 12 othello ann bot:3 X:40-24:normal f5d6c3d3c4f4f6f3e6e7d7...
//! ```

use std::fmt;
use std::path::PathBuf;

use clap::{Args, ValueEnum};
use flipd::store::{Archive, GameRecord};
use flipline::notation::{parse_transcript, transcript_string};
use flipline::protocol::{ClockSpec, EndReason, GameResult, GameStatus, GameSummary};
use flipline::{Color, Game, Variant};

use crate::archive::ggf_write::{self, Rows};

#[derive(Args, Debug)]
pub struct ExportArgs {
    /// The store: a file (flipd's `store.path`) or a PostgreSQL URL
    /// (`store.url`, `postgres://...`); it is only read.
    #[arg(long, default_value = "data/flipline.db")]
    db: PathBuf,
    /// GGF (one game a line, for Othello tools), transcript lines, or
    /// WTHOR (8x8 Othello only; needs -o FILE.wtb, and writes the players'
    /// .jou and the tournament's .trn beside it).
    #[arg(long, value_enum, default_value_t = Format::Ggf)]
    format: Format,
    /// Only games this name played in.
    #[arg(long)]
    player: Option<String>,
    /// Only games that ended on or after this day (YYYY-MM-DD, UTC) or time
    /// (YYYY-MM-DDTHH:MM:SSZ).
    #[arg(long)]
    since: Option<String>,
    /// Only the games of this tournament (its number in TOURNEY LIST).
    #[arg(long)]
    tourney: Option<u64>,
    /// Write to this file instead of standard output.
    #[arg(long, short)]
    output: Option<PathBuf>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Format {
    Ggf,
    Transcript,
    Wtb,
}

/// Writes the games the arguments select; says on stderr how many, and how many
/// GGF cannot express.
pub fn run(args: &ExportArgs) -> Result<(), String> {
    if let Some(since) = &args.since
        && !is_date(since)
    {
        return Err(format!(
            "--since wants YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ, not {since:?}"
        ));
    }
    let archive = Archive::open(&args.db).map_err(|e| e.to_string())?;
    let games = archive
        .finished_games(args.player.as_deref(), args.since.as_deref(), args.tourney)
        .map_err(|e| e.to_string())?;
    if args.format == Format::Wtb {
        return crate::archive::wthor_export::write(&games, args.output.as_deref());
    }
    let (text, skipped) = render(&games, args.format);
    match &args.output {
        Some(path) => std::fs::write(path, &text)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?,
        None => crate::out::write_text(&text),
    }
    eprintln!("exported {} games", games.len() - skipped);
    if skipped > 0 {
        eprintln!("skipped {skipped} freeplace and tictactoe games: GGF has no such game types");
    }
    Ok(())
}

/// The games as text, one a line, and how many the format cannot express.
fn render(games: &[GameRecord], format: Format) -> (String, usize) {
    let mut text = String::new();
    let mut skipped = 0;
    for game in games {
        let line = match format {
            Format::Ggf => ggf(game),
            Format::Transcript => Some(GameLine(&game.summary()).to_string()),
            Format::Wtb => None,
        };
        match line {
            Some(line) => {
                text.push_str(&line);
                text.push('\n');
            }
            None => skipped += 1,
        }
    }
    (text, skipped)
}

fn is_date(text: &str) -> bool {
    let shape = |pattern: &str| {
        text.len() == pattern.len()
            && text.bytes().zip(pattern.bytes()).all(|(c, p)| match p {
                b'9' => c.is_ascii_digit(),
                other => c == other,
            })
    };
    shape("9999-99-99") || shape("9999-99-99T99:99:99Z")
}

/// A game summary as a transcript line (see the module docs): `Display`
/// writes the line, [`GameLine::parse`] reads one back.
///
/// A view rather than a type of its own: the facts are the summary's (the
/// shape `HISTORY` carries and the store's records turn into), and only this
/// line's format is the client's. The line leaves out the clock and the
/// status.
#[derive(Clone, Copy, Debug)]
pub struct GameLine<'a>(pub &'a GameSummary);

impl GameLine<'_> {
    /// Reads a line written by `Display`; the error names the bad field. The
    /// line holds no clock, so the summary has none, and no status: it is
    /// `over` with a result, else `open` while a seat is empty, else `playing`
    /// (a cancelled game reads back as open).
    pub fn parse(line: &str) -> Result<GameSummary, String> {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let [id, variant, black, white, result, moves] = fields.as_slice() else {
            return Err(format!(
                "expected '<game> <variant> <black> <white> <result> <moves>', found {} fields",
                fields.len()
            ));
        };
        let name = |s: &str| (s != "-").then(|| s.to_string());
        let (black, white) = (name(black), name(white));
        let result = match *result {
            "-" => None,
            token => Some(GameResult::parse(token).ok_or(format!("bad result '{token}'"))?),
        };
        let moves = match *moves {
            "-" => Vec::new(),
            text => parse_transcript(text).map_err(|e| e.to_string())?,
        };
        let status = if result.is_some() {
            GameStatus::Over
        } else if black.is_none() || white.is_none() {
            GameStatus::Open
        } else {
            GameStatus::Playing
        };
        Ok(GameSummary {
            game: id.parse().map_err(|_| format!("bad game number '{id}'"))?,
            variant: variant
                .parse()
                .map_err(|e: flipline::ParseError| e.to_string())?,
            black,
            white,
            clock: None,
            status,
            result,
            moves,
        })
    }
}

impl fmt::Display for GameLine<'_> {
    /// `<game> <variant> <black> <white> <result> <moves>`, `-` for what is
    /// missing.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let summary = self.0;
        let dash = |s: Option<String>| s.unwrap_or_else(|| "-".to_string());
        let moves = transcript_string(&summary.moves);
        write!(
            f,
            "{} {} {} {} {} {}",
            summary.game,
            summary.variant,
            dash(summary.black.clone()),
            dash(summary.white.clone()),
            dash(summary.result.map(|r| r.to_string())),
            if moves.is_empty() { "-" } else { &moves }
        )
    }
}

/// GGF's game type for a variant; `None` for games GGF has no type for.
fn ggf_type(variant: Variant) -> Option<&'static str> {
    match variant {
        // Reversi is the same game with white first: the board says who moves.
        Variant::Othello | Variant::Reversi => Some("8"),
        Variant::Anti => Some("8a"),
        Variant::Othello6 => Some("6"),
        Variant::Othello10 => Some("10"),
        Variant::Freeplace | Variant::TicTacToe => None,
    }
}

/// One finished game in GGF on one line, or `None` when GGF cannot say it.
pub fn ggf(record: &GameRecord) -> Option<String> {
    let game_type = ggf_type(record.variant)?;
    let result = record.result?;
    let mut text = format!(
        "(;GM[Othello]PC[flipline]DT[{}]",
        ggf_date(&record.started_at)
    );
    let dash = |s: &Option<String>| s.clone().unwrap_or_else(|| "-".to_string());
    text.push_str(&format!(
        "PB[{}]PW[{}]",
        dash(&record.black),
        dash(&record.white)
    ));
    if let Some(clock) = record.clock {
        text.push_str(&format!("TI[{}]", ggf_clock(&clock)));
    }
    let start = Game::new(record.variant);
    text.push_str(&format!(
        "TY[{game_type}]RE[{}]BO[{}]",
        ggf_result(&result),
        ggf_write::board(&start, Rows::Apart)
    ));
    let moves = record.moves.iter().map(|stored| (stored.mv, stored.ms));
    text.push_str(&ggf_write::moves(start, moves)?);
    text.push_str(";)");
    Some(text)
}

/// `2024-05-01T12:34:56Z` as GGF writes dates: `2024.05.01_12:34:56.UTC`.
fn ggf_date(iso: &str) -> String {
    let date = iso.trim_end_matches('Z').replacen('T', "_", 1);
    format!("{}.UTC", date.replace('-', "."))
}

/// A clock as `TI` holds it: time, increment and (none) extension.
pub fn ggf_clock(clock: &ClockSpec) -> String {
    format!(
        "{}/{}/00:00",
        ggf_time(clock.base_ms),
        ggf_time(clock.increment_ms)
    )
}

/// Milliseconds as `mm:ss`, or `h:mm:ss` from an hour up.
fn ggf_time(ms: u64) -> String {
    let seconds = ms / 1000;
    let (hours, minutes, seconds) = (seconds / 3600, seconds / 60 % 60, seconds % 60);
    if hours > 0 {
        format!("{hours}:{minutes:02}:{seconds:02}")
    } else {
        format!("{minutes:02}:{seconds:02}")
    }
}

/// GGF's `RE`: the result for black, the game's first colour (positive when
/// black won, whatever the variant: an anti game white won 41-23 is `-18.00`),
/// with `:r` for a resignation or an abandoned game and `:t` for a flag fall,
/// as GGS writes it.
pub fn ggf_result(result: &GameResult) -> String {
    let margin = result.black.abs_diff(result.white);
    let sign = match result.winner {
        Some(Color::Black) => "+",
        Some(Color::White) => "-",
        None => "",
    };
    let flag = match result.reason {
        EndReason::Normal => "",
        EndReason::Resign | EndReason::Abandon => ":r",
        EndReason::Time => ":t",
    };
    format!("{sign}{margin}.00{flag}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use flipd::store::{Status, StoredMove};

    fn record(variant: Variant, moves: &str, result: Option<GameResult>) -> GameRecord {
        let moves = parse_transcript(moves)
            .unwrap()
            .into_iter()
            .enumerate()
            .map(|(i, mv)| StoredMove {
                mv,
                ms: (i > 0).then_some(1234),
            })
            .collect();
        GameRecord {
            id: 4,
            variant,
            black: Some("ann".into()),
            white: Some("bot:3".into()),
            clock: flipline::protocol::ClockSpec::parse("5+3").ok(),
            status: Status::Over,
            result,
            started_at: "2024-05-01T12:34:56Z".into(),
            ended_at: Some("2024-05-01T12:40:00Z".into()),
            secrets: [None, None],
            rated: false,
            tourney: None,
            moves,
        }
    }

    fn resigned() -> Option<GameResult> {
        Some(GameResult {
            winner: Some(Color::White),
            black: 3,
            white: 61,
            reason: EndReason::Resign,
        })
    }

    #[test]
    fn a_game_prints_as_one_ggf_line() {
        let text = ggf(&record(Variant::Othello, "f5d6c3", resigned())).unwrap();
        assert_eq!(
            text,
            "(;GM[Othello]PC[flipline]DT[2024.05.01_12:34:56.UTC]PB[ann]PW[bot:3]\
             TI[05:00/00:03/00:00]TY[8]RE[-58.00:r]\
             BO[8 -------- -------- -------- ---O*--- ---*O--- -------- -------- -------- *]\
             B[F5]W[D6//1.23]B[C3//1.23];)"
        );
    }

    #[test]
    fn reversi_starts_with_white_and_freeplace_has_no_ggf() {
        let text = ggf(&record(Variant::Reversi, "", resigned())).unwrap();
        assert!(text.contains("TY[8]"), "{text}");
        assert!(text.contains("-------- O]"), "{text}");
        assert_eq!(ggf(&record(Variant::Freeplace, "", resigned())), None);
        let (out, skipped) = render(
            &[
                record(Variant::Freeplace, "", resigned()),
                record(Variant::Othello6, "", resigned()),
            ],
            Format::Ggf,
        );
        assert_eq!(skipped, 1);
        assert!(
            out.contains("TY[6]") && out.contains("BO[6 ------ "),
            "{out}"
        );
        assert_eq!(out.lines().count(), 1);
    }

    #[test]
    fn transcript_lines_round_trip() {
        let summary = record(Variant::Othello, "f5d6c3pass", resigned()).summary();
        let text = GameLine(&summary).to_string();
        assert_eq!(text, "4 othello ann bot:3 O:3-61:resign f5d6c3pass");
        // What the line leaves out, the clock, does not read back.
        let read = GameSummary {
            clock: None,
            ..summary
        };
        assert_eq!(GameLine::parse(&text), Ok(read));
        let open = GameLine::parse("5 tictactoe ann - - -").unwrap();
        assert_eq!((open.white, open.result, open.moves.len()), (None, None, 0));
        assert_eq!(open.status, GameStatus::Open);
        let playing = GameLine::parse("5 othello ann bot:1 - f5").unwrap();
        assert_eq!(playing.status, GameStatus::Playing);
        assert!(
            GameLine::parse("5 tictactoe ann")
                .unwrap_err()
                .contains("3 fields")
        );
        assert!(
            GameLine::parse("5 chess a b - -")
                .unwrap_err()
                .contains("chess")
        );
        assert!(
            GameLine::parse("x othello a b - -")
                .unwrap_err()
                .contains("'x'")
        );
    }

    #[test]
    fn dates_times_and_results_read_as_ggf_does() {
        assert!(is_date("2024-05-01") && is_date("2024-05-01T00:00:00Z"));
        assert!(!is_date("2024-5-1") && !is_date("yesterday") && !is_date(""));
        assert_eq!(ggf_time(90 * 60_000), "1:30:00");
        assert_eq!(ggf_time(30_000), "00:30");
        let draw = GameResult {
            winner: None,
            black: 32,
            white: 32,
            reason: EndReason::Normal,
        };
        assert_eq!(ggf_result(&draw), "0.00");
        let timed = GameResult {
            winner: Some(Color::Black),
            black: 40,
            white: 24,
            reason: EndReason::Time,
        };
        assert_eq!(ggf_result(&timed), "+16.00:t");
    }

    #[test]
    fn re_is_blacks_result_in_anti_games_too() {
        // Anti: fewer discs win; white won 41-23, so black lost by 18.
        let anti = GameResult {
            winner: Some(Color::White),
            black: 41,
            white: 23,
            reason: EndReason::Normal,
        };
        assert_eq!(ggf_result(&anti), "-18.00");
        let text = ggf(&record(Variant::Anti, "f5d6", Some(anti))).unwrap();
        assert!(text.contains("TY[8a]RE[-18.00]BO[8 "), "{text}");
        let black_won = GameResult {
            winner: Some(Color::Black),
            black: 23,
            white: 41,
            reason: EndReason::Normal,
        };
        assert_eq!(ggf_result(&black_won), "+18.00");
    }

    #[test]
    fn resignations_and_flag_falls_carry_ggs_suffixes() {
        let result = |winner, reason| GameResult {
            winner: Some(winner),
            black: 64,
            white: 0,
            reason,
        };
        assert_eq!(
            ggf_result(&result(Color::Black, EndReason::Resign)),
            "+64.00:r"
        );
        assert_eq!(
            ggf_result(&result(Color::Black, EndReason::Abandon)),
            "+64.00:r"
        );
        assert_eq!(
            ggf_result(&result(Color::Black, EndReason::Time)),
            "+64.00:t"
        );
        let lost = GameResult {
            winner: Some(Color::White),
            black: 0,
            white: 64,
            reason: EndReason::Time,
        };
        assert_eq!(ggf_result(&lost), "-64.00:t");
    }
}
