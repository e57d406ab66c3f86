//! What one GGF game's properties mean to flipline, for `flip import`: the
//! game type and start (`TY`, `BO`), the players, the date (`DT`), the clock
//! (`TI`), the moves (`B`, `W`), replayed through the rules, and the result
//! (`RE`), checked against them. The reverse of `export::ggf`, and of GGS's
//! archives as far as flipline's games reach: a game type or start flipline
//! does not play is refused, naming it.

use flipd::store::{GameRecord, Status, StoredMove};
use flipline::protocol::{ClockSpec, EndReason, GameResult};
use flipline::{Color, Game, Move, Variant};

use crate::archive::civil::Civil;
use crate::archive::ggf_read::GgfGame;
use crate::archive::ggf_write::{self, Rows};

/// The finished game `game` holds, or why it cannot be imported (naming the
/// property or token).
pub fn record(game: &GgfGame) -> Result<GameRecord, String> {
    let kind = game.get("GM").unwrap_or("Othello");
    if !kind.eq_ignore_ascii_case("othello") {
        return Err(format!("GM[{kind}]: only Othello games are imported"));
    }
    let variant = variant(game)?;
    let black = player(game, "PB")?;
    let white = player(game, "PW")?;
    let dt = game.get("DT").ok_or("no DT (date)")?;
    let started_at = parse_date(dt).ok_or_else(|| format!("DT[{dt}]: not a date GGF writes"))?;
    let clock = game.get("TI").and_then(parse_clock);
    let (end, moves) = replay(game, variant)?;
    let re = game.get("RE").ok_or("no RE: the game is not finished")?;
    let claimed = parse_result(re).ok_or_else(|| format!("RE[{re}]: not a result"))?;
    let result = settle(&end, claimed).map_err(|why| format!("RE[{re}]: {why}"))?;
    Ok(GameRecord {
        id: 0,
        variant,
        black: Some(black),
        white: Some(white),
        clock,
        status: Status::Over,
        result: Some(result),
        ended_at: Some(started_at.clone()),
        started_at,
        secrets: [None, None],
        rated: false,
        tourney: None,
        moves,
    })
}

/// The variant and the moves of `game`, replayed (finished or not).
pub fn moves(game: &GgfGame) -> Result<(Variant, Vec<StoredMove>), String> {
    let variant = variant(game)?;
    let (_, moves) = replay(game, variant)?;
    Ok((variant, moves))
}

/// The variant of `TY` whose start is `BO` (flipline's games start from their
/// variant's position only).
fn variant(game: &GgfGame) -> Result<Variant, String> {
    let ty = game.get("TY").ok_or("no TY (game type)")?;
    let candidates: &[Variant] = match ty {
        "8" => &[Variant::Othello, Variant::Reversi],
        "8a" => &[Variant::Anti],
        "6" => &[Variant::Othello6],
        "10" => &[Variant::Othello10],
        other => {
            return Err(format!(
                "TY[{other}]: flipline plays 8, 8a, 6 and 10 (no komi, random or other boards)"
            ));
        }
    };
    let bo = game.get("BO").ok_or("no BO (board)")?;
    let wanted = normalise_board(bo);
    candidates
        .iter()
        .copied()
        .find(|&v| normalise_board(&ggf_write::board(&Game::new(v), Rows::Apart)) == wanted)
        .ok_or_else(|| {
            format!("BO[{bo}]: not the start position of a TY[{ty}] game flipline plays")
        })
}

fn normalise_board(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A name as a `HISTORY` field: white space, controls and brackets become
/// `_`; empty, dash-only or overlong names are refused.
pub fn field_name(raw: &str) -> Option<String> {
    let name: String = raw
        .trim()
        .chars()
        .map(|c| {
            if c.is_whitespace() || c.is_control() || matches!(c, '[' | ']' | '\\') {
                '_'
            } else {
                c
            }
        })
        .collect();
    let fine = !name.is_empty() && name.chars().count() <= 64 && !name.chars().all(|c| c == '-');
    fine.then_some(name)
}

fn player(game: &GgfGame, property: &str) -> Result<String, String> {
    let raw = game
        .get(property)
        .ok_or_else(|| format!("no {property} (player)"))?;
    field_name(raw).ok_or_else(|| format!("{property}[{raw}]: not a player's name"))
}

/// GGF's dates, as UTC in the store's form: GGS's `2004.09.18_05:54:38.MDT`
/// (flipline writes `.UTC`), seconds since 1970 (`945277754`), and the older
/// `2000-4-16 11:13 EST`. A zone must be one whose offset is known.
pub fn parse_date(text: &str) -> Option<String> {
    let text = text.trim();
    if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) {
        return Some(Civil::from_unix(text.parse().ok()?)?.iso());
    }
    let (date, time, zone) = if let Some((date, rest)) = text.split_once('_') {
        let (time, zone) = rest.split_once('.')?;
        (date.split('.').collect::<Vec<_>>(), time, zone)
    } else {
        let mut words = text.split_whitespace();
        let (date, time, zone) = (words.next()?, words.next()?, words.next()?);
        if words.next().is_some() {
            return None;
        }
        (date.split('-').collect::<Vec<_>>(), time, zone)
    };
    let [year, month, day] = date.as_slice() else {
        return None;
    };
    let clock: Vec<&str> = time.split(':').collect();
    let (hour, minute, second) = match clock.as_slice() {
        [h, m] => (*h, *m, "0"),
        [h, m, s] => (*h, *m, *s),
        _ => return None,
    };
    let number = |s: &str| {
        (!s.is_empty() && s.len() <= 4 && s.bytes().all(|b| b.is_ascii_digit()))
            .then(|| s.parse::<u32>().ok())
            .flatten()
    };
    let local = Civil::new(
        i64::from(number(year)?),
        number(month)?,
        number(day)?,
        number(hour)?,
        number(minute)?,
        number(second)?,
    )?;
    Some(Civil::from_unix(local.unix() - zone_offset(zone)? * 3600)?.iso())
}

/// Hours east of UTC of the zone names GGS's archives carry (its servers
/// were in North America; European names for players' own files).
fn zone_offset(zone: &str) -> Option<i64> {
    let hours = match zone.to_ascii_uppercase().as_str() {
        "UTC" | "GMT" | "Z" | "WET" => 0,
        "BST" | "CET" | "WEST" => 1,
        "CEST" | "EET" => 2,
        "EEST" => 3,
        "JST" => 9,
        "EDT" => -4,
        "EST" | "CDT" => -5,
        "CST" | "MDT" => -6,
        "MST" | "PDT" => -7,
        "PST" => -8,
        _ => return None,
    };
    Some(hours)
}

/// `TI[05:00/00:03/00:00]` (time, increment, extension) as flipline's clock
/// when it is one: no extension, an increment of whole seconds, a time the
/// `M+S` form can say. Anything else is no clock.
pub fn parse_clock(text: &str) -> Option<ClockSpec> {
    let parts: Vec<&str> = text.split('/').collect();
    let [base, increment, extension] = parts.as_slice() else {
        return None;
    };
    let (base, increment) = (duration_ms(base)?, duration_ms(increment)?);
    if duration_ms(extension)? != 0 || increment % 1000 != 0 {
        return None;
    }
    let clock = ClockSpec {
        base_ms: base,
        increment_ms: increment,
    };
    (ClockSpec::parse(&clock.to_string()) == Ok(clock)).then_some(clock)
}

/// `h:mm:ss`, `mm:ss` or `ss` (empty is none) in milliseconds.
fn duration_ms(text: &str) -> Option<u64> {
    if text.is_empty() {
        return Some(0);
    }
    let mut total: u64 = 0;
    let parts: Vec<&str> = text.split(':').collect();
    if parts.len() > 3 {
        return None;
    }
    for part in parts {
        if part.is_empty() || part.len() > 4 || !part.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        total = total.checked_mul(60)?.checked_add(part.parse().ok()?)?;
    }
    total.checked_mul(1000)
}

/// The moves (`B[F5//1.23]`, `W[pass]`), played through the rules; a pass
/// the archive leaves out (the mover had no move) is put in.
fn replay(game: &GgfGame, variant: Variant) -> Result<(Game, Vec<StoredMove>), String> {
    let mut board = Game::new(variant);
    let mut moves = Vec::new();
    for (name, value) in &game.properties {
        let color = match name.as_str() {
            "B" => Color::Black,
            "W" => Color::White,
            _ => continue,
        };
        let stored = parse_move(value).ok_or_else(|| format!("{name}[{value}]: not a move"))?;
        if color != board.to_move() && board.must_pass() && !board.is_over() {
            let _ = board.apply(Move::Pass);
            moves.push(StoredMove {
                mv: Move::Pass,
                ms: None,
            });
        }
        if color != board.to_move() {
            return Err(format!("{name}[{value}]: it is the other side's move"));
        }
        board
            .apply(stored.mv)
            .map_err(|e| format!("{name}[{value}] at ply {}: {e}", moves.len() + 1))?;
        moves.push(stored);
    }
    Ok((board, moves))
}

/// `F5`, `f5//1.23`, `PA` or `pass/0.5/2.10`: the square (or pass), then an
/// evaluation (ignored) and the seconds it took, both optional.
pub fn parse_move(value: &str) -> Option<StoredMove> {
    let mut parts = value.split('/');
    let square = parts.next()?.trim();
    let _evaluation = parts.next();
    let seconds = parts.next().map(str::trim).filter(|s| !s.is_empty());
    if parts.next().is_some() {
        return None;
    }
    let mv = if square.eq_ignore_ascii_case("pass") || square.eq_ignore_ascii_case("pa") {
        Move::Pass
    } else {
        let mv: Move = square.parse().ok()?;
        if mv == Move::Pass {
            return None;
        }
        mv
    };
    let ms = match seconds {
        Some(text) => Some(seconds_ms(text)?),
        None => None,
    };
    Some(StoredMove { mv, ms })
}

/// `1.23` seconds as 1230 ms (at most 3 decimals, at most a day).
fn seconds_ms(text: &str) -> Option<u64> {
    let (whole, fraction) = text.split_once('.').unwrap_or((text, ""));
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if whole.is_empty()
        || whole.len() > 5
        || fraction.len() > 3
        || !digits(whole)
        || !digits(fraction)
    {
        return None;
    }
    let thousandths: u64 = format!("{fraction:0<3}").parse().ok()?;
    Some(whole.parse::<u64>().ok()? * 1000 + thousandths)
}

/// What `RE` says: black's result in discs (positive when black won) and
/// how the game ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Claimed {
    /// Black's margin, signed.
    pub margin: i64,
    /// `Normal` without a flag, `Resign` for `:r`, `Time` for `:t`.
    pub reason: EndReason,
}

/// `+18.00`, `-40.00:r`, `0.00`, `+64:t`. Komi halves (`+2.50`) and `:s`
/// (a score agreed on) are not flipline results.
pub fn parse_result(text: &str) -> Option<Claimed> {
    let (number, flag) = text.trim().split_once(':').unwrap_or((text.trim(), ""));
    let reason = match flag {
        "" => EndReason::Normal,
        "r" => EndReason::Resign,
        "t" => EndReason::Time,
        _ => return None,
    };
    let (sign, digits) = match number.as_bytes().first() {
        Some(b'+') => (1, number.get(1..)?),
        Some(b'-') => (-1, number.get(1..)?),
        _ => (1, number),
    };
    let (whole, fraction) = digits.split_once('.').unwrap_or((digits, ""));
    let digit_only = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if whole.is_empty() || whole.len() > 3 || !digit_only(whole) || !digit_only(fraction) {
        return None;
    }
    if fraction.bytes().any(|b| b != b'0') {
        return None;
    }
    Some(Claimed {
        margin: sign * whole.parse::<i64>().ok()?,
        reason,
    })
}

/// The result of a game that reached `end`, as `claimed`: a game ended on
/// the board must agree with it; a resignation or a flag fall takes its
/// margin from it (the winner's count the larger, in anti the smaller, the
/// two adding up to the board's squares).
pub fn settle(end: &Game, claimed: Claimed) -> Result<GameResult, String> {
    let winner = match claimed.margin.signum() {
        1 => Some(Color::Black),
        -1 => Some(Color::White),
        _ => None,
    };
    if claimed.reason == EndReason::Normal {
        if !end.is_over() {
            return Err("no :r or :t, but the moves do not end the game".to_string());
        }
        let score = end.score();
        let margin = i64::from(score.black.abs_diff(score.white));
        if score.winner != winner || margin != claimed.margin.abs() {
            return Err(format!(
                "the moves end it {}-{} for black and white",
                score.black, score.white
            ));
        }
        return Ok(GameResult {
            winner,
            black: score.black,
            white: score.white,
            reason: EndReason::Normal,
        });
    }
    let Some(winner) = winner else {
        return Err("a resignation or a flag fall with no winner".to_string());
    };
    let squares = i64::from(end.variant().squares());
    let margin = claimed.margin.abs();
    if margin > squares {
        return Err(format!("a margin past the board's {squares} squares"));
    }
    let small = u32::try_from((squares - margin) / 2).map_err(|e| e.to_string())?;
    let large = small + u32::try_from(margin).map_err(|e| e.to_string())?;
    let winner_large = !end.variant().fewest_wins();
    let (winner_score, loser_score) = if winner_large {
        (large, small)
    } else {
        (small, large)
    };
    let (black, white) = match winner {
        Color::Black => (winner_score, loser_score),
        Color::White => (loser_score, winner_score),
    };
    Ok(GameResult {
        winner: Some(winner),
        black,
        white,
        reason: claimed.reason,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::archive::ggf_read::games;
    use proptest::prelude::*;

    fn one(text: &str) -> Result<GameRecord, String> {
        let read = games(text);
        record(read.first().cloned().unwrap().as_ref().unwrap())
    }

    const START: &str =
        "BO[8 -------- -------- -------- ---O*--- ---*O--- -------- -------- -------- *]";

    #[test]
    fn a_ggs_archive_game_imports() {
        let text = format!(
            "1 (;GM[Othello]PC[GGS/os]DT[2000-4-16 11:13 EST]PB[fangr]PW[patzer]\
             RB[1457.12]RW[1631.74]TI[15:00//02:00]TY[8]RE[-64.00:r]{START}\
             B[F5//4.09]W[D6/40.00/0.01]B[c3];)"
        );
        let game = one(&text).unwrap();
        assert_eq!(game.started_at, "2000-04-16T16:13:00Z");
        assert_eq!(
            (game.black.as_deref(), game.white.as_deref()),
            (Some("fangr"), Some("patzer"))
        );
        // An extension has no place in an M+S clock.
        assert_eq!(game.clock, None);
        assert_eq!(game.variant, Variant::Othello);
        let result = game.result.unwrap();
        assert_eq!(
            (result.winner, result.black, result.white),
            (Some(Color::White), 0, 64)
        );
        assert_eq!(result.reason, EndReason::Resign);
        let ms: Vec<Option<u64>> = game.moves.iter().map(|m| m.ms).collect();
        assert_eq!(ms, [Some(4090), Some(10), None]);
    }

    #[test]
    fn refusals_name_the_property() {
        let base = format!("(;GM[Othello]DT[945277754]PB[a]PW[b]TY[8]{START}RE[+0.00]");
        let cases = [
            (base.replace("TY[8]", "TY[8r20]"), "TY[8r20]"),
            (base.replace("TY[8]", "TY[14]"), "TY[14]"),
            (base.replace("GM[Othello]", "GM[Amazons]"), "GM[Amazons]"),
            (
                base.replace("DT[945277754]", "DT[yesterday]"),
                "DT[yesterday]",
            ),
            (
                base.replace("DT[945277754]", "DT[2004.09.18_05:54:38.XYZ]"),
                "XYZ",
            ),
            (base.replace("PB[a]", "PB[ ]"), "PB[ ]"),
            (format!("{base}B[F5]W[F5];)"), "W[F5] at ply 2"),
            (format!("{base}B[Z9];)"), "B[Z9]"),
            (format!("{base}W[F5];)"), "W[F5]: it is the other side"),
            (format!("{base}B[F5];)"), "do not end the game"),
            (
                format!("{base}B[F5];)").replace("RE[+0.00]", "RE[+2.50:r]"),
                "RE[+2.50:r]",
            ),
            (
                format!("{base}B[F5];)").replace("RE[+0.00]", "RE[+2:s]"),
                "RE[+2:s]",
            ),
            (format!("{base}B[F5];)").replace("RE[+0.00]", ""), "no RE"),
        ];
        for (text, named) in cases {
            let text = if text.ends_with(";)") {
                text
            } else {
                format!("{text};)")
            };
            let error = one(&text).unwrap_err();
            assert!(error.contains(named), "{text}: {error}");
        }
    }

    #[test]
    fn an_anti_resignation_gives_the_winner_the_fewer_discs() {
        let anti = format!(
            "(;GM[Othello]DT[2024.05.01_12:34:56.UTC]PB[a]PW[b]TY[8a]RE[-18.00:r]{START}B[F5];)"
        );
        let result = one(&anti).unwrap().result.unwrap();
        // Anti: the winner (white) has the fewer discs.
        assert_eq!(
            (result.winner, result.black, result.white),
            (Some(Color::White), 41, 23)
        );
    }

    #[test]
    fn clocks_dates_moves_and_results_read() {
        assert_eq!(
            parse_clock("05:00/00:03/00:00"),
            ClockSpec::parse("5+3").ok()
        );
        assert_eq!(
            parse_clock("1:30:00/00:30/"),
            ClockSpec::parse("90+30").ok()
        );
        assert_eq!(parse_clock("15:00//02:00"), None);
        assert_eq!(parse_clock("00:00/00:03/00:00"), None);
        assert_eq!(parse_clock("nonsense"), None);
        assert_eq!(
            parse_date("2024.05.01_12:34:56.UTC").as_deref(),
            Some("2024-05-01T12:34:56Z")
        );
        assert_eq!(
            parse_date("2004.09.18_05:54:38.MDT").as_deref(),
            Some("2004-09-18T11:54:38Z")
        );
        assert_eq!(
            parse_date("945277754").as_deref(),
            Some("1999-12-15T17:09:14Z")
        );
        assert_eq!(
            parse_move("pass//1.67").map(|m| (m.mv, m.ms)),
            Some((Move::Pass, Some(1670)))
        );
        assert_eq!(parse_move("F5").map(|m| m.ms), Some(None));
        assert_eq!(parse_move("F5//x"), None);
        let claimed = |margin, reason| Some(Claimed { margin, reason });
        assert_eq!(parse_result("+64.00:r"), claimed(64, EndReason::Resign));
        assert_eq!(parse_result("-18.00"), claimed(-18, EndReason::Normal));
        assert_eq!(parse_result("0.00"), claimed(0, EndReason::Normal));
        assert_eq!(parse_result("+3.00:t"), claimed(3, EndReason::Time));
        assert_eq!(parse_result("+3.00:x"), None);
    }

    fn arbitrary_claim() -> impl Strategy<Value = Claimed> {
        (
            -64i64..=64,
            prop_oneof![Just(EndReason::Resign), Just(EndReason::Time)],
        )
            .prop_map(|(margin, reason)| Claimed { margin, reason })
    }

    proptest! {
        #[test]
        fn the_value_parsers_take_any_text(text in ".{0,40}") {
            let _ = parse_date(&text);
            let _ = parse_clock(&text);
            let _ = parse_move(&text);
            let _ = parse_result(&text);
            let _ = field_name(&text);
        }

        #[test]
        fn forced_results_round_trip_through_re(claim in arbitrary_claim(), anti in any::<bool>()) {
            let variant = if anti { Variant::Anti } else { Variant::Othello };
            let Ok(result) = settle(&Game::new(variant), claim) else {
                prop_assert_eq!(claim.margin, 0);
                return Ok(());
            };
            let re = crate::archive::export::ggf_result(&result);
            prop_assert_eq!(parse_result(&re), Some(claim));
        }

        #[test]
        fn clocks_round_trip_through_ti(minutes in 1u64..600, seconds in 0u64..60) {
            let clock = ClockSpec { base_ms: minutes * 60_000, increment_ms: seconds * 1000 };
            let text = crate::archive::export::ggf_clock(&clock);
            prop_assert_eq!(parse_clock(&text), Some(clock));
        }
    }

    /// A game of `plies` random legal moves (passes when forced) from a seed.
    fn random_game(variant: Variant, seed: u64, plies: usize) -> (Game, Vec<StoredMove>) {
        let mut game = Game::new(variant);
        let mut moves = Vec::new();
        let mut state = seed | 1;
        for _ in 0..plies {
            if game.is_over() {
                break;
            }
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let legal: Vec<_> = game.legal_moves().iter().collect();
            let mv = match legal.len() {
                0 => Move::Pass,
                n => Move::Place(legal[usize::try_from(state % n as u64).unwrap()]),
            };
            game.apply(mv).unwrap();
            moves.push(StoredMove {
                mv,
                ms: Some(state % 100_000 / 10 * 10),
            });
        }
        (game, moves)
    }

    proptest! {
        #[test]
        fn exported_games_read_back_as_they_were(
            seed in any::<u64>(),
            plies in 0usize..130,
            variant in prop_oneof![
                Just(Variant::Othello),
                Just(Variant::Reversi),
                Just(Variant::Anti),
                Just(Variant::Othello6),
                Just(Variant::Othello10),
            ],
            resigned in any::<bool>(),
        ) {
            let (end, moves) = random_game(variant, seed, plies);
            let score = end.score();
            let result = if end.is_over() && !resigned {
                GameResult { winner: score.winner, black: score.black, white: score.white, reason: EndReason::Normal }
            } else {
                let winner = if seed % 2 == 0 { Color::Black } else { Color::White };
                let claimed = Claimed {
                    margin: if winner == Color::Black { 8 } else { -8 },
                    reason: EndReason::Resign,
                };
                settle(&end, claimed).unwrap()
            };
            let record = GameRecord {
                id: 0,
                variant,
                black: Some("ann".into()),
                white: Some("bot:3".into()),
                clock: ClockSpec::parse("5+3").ok(),
                status: Status::Over,
                result: Some(result),
                started_at: "2024-05-01T12:34:56Z".into(),
                ended_at: Some("2024-05-01T12:34:56Z".into()),
                secrets: [None, None],
                rated: false,
                tourney: None,
                moves,
            };
            let text = crate::archive::export::ggf(&record).unwrap();
            let read = games(&text);
            prop_assert_eq!(read.len(), 1);
            let back = super::record(read[0].as_ref().unwrap()).unwrap();
            prop_assert_eq!(back, record);
        }
    }
}
