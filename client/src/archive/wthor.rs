//! The WTHOR files of the French Othello federation (FFO), byte by byte:
//! `WTH_YYYY.wtb` (games), `WTHOR.JOU` (players), `WTHOR.TRN` (tournaments).
//! Only the layout lives here (pure: bytes in, values out, and back);
//! `wthor_games` turns the values into flipline's games.
//!
//! Every file opens with the same 16-byte header: the century, year (of the
//! century), month and day the file was made (one byte each), N1 (u32 LE,
//! the games in a `.wtb`, else 0), N2 (u16 LE, the names in a `.jou` or
//! `.trn`, else 0), the year of the games (u16 LE, `.wtb` only), then one
//! byte each: the board size (0 or 8 for 8x8), the game type (0 games, 1
//! solitaires), the depth the theoretical scores were computed at, and one
//! reserved. Then fixed-width records: a game is 68 bytes (tournament,
//! black and white player numbers as u16 LE, black's disc count, the
//! theoretical score, then 60 moves, each `10 * row + column` counted from
//! 1, so a1 = 11, h1 = 18, a8 = 81, 0 after the last move; passes are not
//! written); a player's name is 20 bytes, a tournament's 26, latin-1, ended
//! by a NUL.

use std::fmt;

use flipline::Square;

/// The header's length.
pub const HEADER_LEN: usize = 16;
/// A game record's length.
pub const GAME_LEN: usize = 68;
/// A player's name's width in a `.jou`.
pub const PLAYER_LEN: usize = 20;
/// A tournament's name's width in a `.trn`.
pub const TOURNAMENT_LEN: usize = 26;
/// The moves a game record holds.
pub const MOVES: usize = 60;

/// Why a WTHOR file, or one game of it, does not read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WthorError {
    /// The game (from 1) or name (from 1) it is about, if one.
    pub record: Option<usize>,
    /// What is wrong.
    pub why: String,
}

impl WthorError {
    fn file(why: String) -> WthorError {
        WthorError { record: None, why }
    }
}

impl fmt::Display for WthorError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.record {
            Some(record) => write!(f, "game {record}: {}", self.why),
            None => f.write_str(&self.why),
        }
    }
}

/// The 16-byte header (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    /// The century the file was made in (20 for 2024).
    pub century: u8,
    /// The year of that century (24 for 2024).
    pub year: u8,
    /// The month it was made, 1 to 12.
    pub month: u8,
    /// The day it was made.
    pub day: u8,
    /// The games in a `.wtb`; 0 in a `.jou` or `.trn`.
    pub n1: u32,
    /// The names in a `.jou` or `.trn`; 0 in a `.wtb`.
    pub n2: u16,
    /// The year of a `.wtb`'s games; 0 in a `.jou` or `.trn`.
    pub game_year: u16,
    /// 0 or 8 for an 8x8 board (a `.wtb`).
    pub board_size: u8,
    /// 0 for games, 1 for solitaires.
    pub game_type: u8,
    /// The depth of the theoretical scores (0 meaning the default, 22).
    pub depth: u8,
    /// Reserved, 0.
    pub reserved: u8,
}

impl Header {
    /// The header's bytes.
    pub fn encode(&self) -> [u8; HEADER_LEN] {
        let mut bytes = [0; HEADER_LEN];
        bytes[0] = self.century;
        bytes[1] = self.year;
        bytes[2] = self.month;
        bytes[3] = self.day;
        bytes[4..8].copy_from_slice(&self.n1.to_le_bytes());
        bytes[8..10].copy_from_slice(&self.n2.to_le_bytes());
        bytes[10..12].copy_from_slice(&self.game_year.to_le_bytes());
        bytes[12] = self.board_size;
        bytes[13] = self.game_type;
        bytes[14] = self.depth;
        bytes[15] = self.reserved;
        bytes
    }

    /// The header at the start of `bytes`.
    pub fn decode(bytes: &[u8]) -> Result<Header, WthorError> {
        let Some(
            &[
                c,
                y,
                m,
                d,
                n1a,
                n1b,
                n1c,
                n1d,
                n2a,
                n2b,
                ya,
                yb,
                size,
                kind,
                depth,
                reserved,
            ],
        ) = bytes.first_chunk::<HEADER_LEN>()
        else {
            return Err(WthorError::file(format!(
                "{} bytes: shorter than the {HEADER_LEN}-byte header",
                bytes.len()
            )));
        };
        Ok(Header {
            century: c,
            year: y,
            month: m,
            day: d,
            n1: u32::from_le_bytes([n1a, n1b, n1c, n1d]),
            n2: u16::from_le_bytes([n2a, n2b]),
            game_year: u16::from_le_bytes([ya, yb]),
            board_size: size,
            game_type: kind,
            depth,
            reserved,
        })
    }
}

/// One 68-byte game record, as written (moves as their codes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Record {
    /// The tournament's number in the `.trn`.
    pub tournament: u16,
    /// Black's number in the `.jou`.
    pub black: u16,
    /// White's number in the `.jou`.
    pub white: u16,
    /// Black's discs at the end (the empties go to the winner).
    pub black_discs: u8,
    /// Black's discs with perfect play from the header's depth.
    pub theoretical: u8,
    /// The moves' codes (`10 * row + column`, from 1), 0 after the last.
    pub moves: [u8; MOVES],
}

impl Record {
    /// The record's bytes.
    pub fn encode(&self) -> [u8; GAME_LEN] {
        let mut bytes = [0; GAME_LEN];
        bytes[0..2].copy_from_slice(&self.tournament.to_le_bytes());
        bytes[2..4].copy_from_slice(&self.black.to_le_bytes());
        bytes[4..6].copy_from_slice(&self.white.to_le_bytes());
        bytes[6] = self.black_discs;
        bytes[7] = self.theoretical;
        bytes[8..].copy_from_slice(&self.moves);
        bytes
    }

    /// A record from its 68 bytes.
    pub fn decode(bytes: &[u8; GAME_LEN]) -> Record {
        let [t0, t1, b0, b1, w0, w1, discs, theoretical, rest @ ..] = *bytes;
        Record {
            tournament: u16::from_le_bytes([t0, t1]),
            black: u16::from_le_bytes([b0, b1]),
            white: u16::from_le_bytes([w0, w1]),
            black_discs: discs,
            theoretical,
            moves: rest,
        }
    }

    /// The squares played, in order, up to the first 0; the error names the
    /// move (from 1) whose code is no square.
    pub fn squares(&self) -> Result<Vec<Square>, String> {
        let mut squares = Vec::new();
        for (i, &code) in self.moves.iter().enumerate() {
            if code == 0 {
                break;
            }
            let square = code_square(code).ok_or_else(|| {
                format!("move {} is coded {code}, not a square (11 to 88)", i + 1)
            })?;
            squares.push(square);
        }
        Ok(squares)
    }
}

/// A square's code: `10 * row + column`, both from 1 (a1 = 11, h1 = 18).
pub fn square_code(square: Square) -> Option<u8> {
    (square.row < 8 && square.col < 8).then(|| 10 * (square.row + 1) + square.col + 1)
}

/// The square of a code, `None` for a code no 8x8 square has.
pub fn code_square(code: u8) -> Option<Square> {
    let (row, col) = (code / 10, code % 10);
    if (1..=8).contains(&row) && (1..=8).contains(&col) {
        Square::new(row - 1, col - 1)
    } else {
        None
    }
}

/// A `.wtb`'s header and games; refused unless it is an 8x8 games file whose
/// length is what its header says.
pub fn read_games(bytes: &[u8]) -> Result<(Header, Vec<Record>), WthorError> {
    let header = Header::decode(bytes)?;
    if !matches!(header.board_size, 0 | 8) {
        return Err(WthorError::file(format!(
            "a {0}x{0} board (header byte 12): only 8x8 games are read",
            header.board_size
        )));
    }
    if header.game_type != 0 {
        return Err(WthorError::file(format!(
            "game type {} (header byte 13): a solitaires file, not games",
            header.game_type
        )));
    }
    let body = bytes.get(HEADER_LEN..).unwrap_or_default();
    let expected = usize::try_from(header.n1)
        .ok()
        .and_then(|n| n.checked_mul(GAME_LEN));
    if expected != Some(body.len()) {
        return Err(WthorError::file(format!(
            "the header says {} games ({} bytes after it), the file has {} bytes after it",
            header.n1,
            expected.map_or_else(|| "too many".to_string(), |n| n.to_string()),
            body.len()
        )));
    }
    let records = body
        .chunks_exact(GAME_LEN)
        .filter_map(|chunk| chunk.first_chunk::<GAME_LEN>().map(Record::decode))
        .collect();
    Ok((header, records))
}

/// The names of a `.jou` (`width` 20) or `.trn` (26): N2 of them, each up to
/// its first NUL, latin-1.
pub fn read_names(bytes: &[u8], width: usize) -> Result<Vec<String>, WthorError> {
    let header = Header::decode(bytes)?;
    let body = bytes.get(HEADER_LEN..).unwrap_or_default();
    let count = usize::from(header.n2);
    if body.len() != count * width {
        return Err(WthorError::file(format!(
            "the header says {count} names ({} bytes after it), the file has {} bytes after it",
            count * width,
            body.len()
        )));
    }
    Ok(body.chunks_exact(width.max(1)).map(latin1_name).collect())
}

fn latin1_name(field: &[u8]) -> String {
    field
        .iter()
        .take_while(|&&b| b != 0)
        .map(|&b| char::from(b))
        .collect()
}

/// A name as a fixed-width latin-1 field: characters past latin-1 become
/// `?`, and it is cut to leave room for its NUL.
fn latin1_field(name: &str, width: usize) -> Vec<u8> {
    let mut field: Vec<u8> = name
        .chars()
        .map(|c| u8::try_from(u32::from(c)).unwrap_or(b'?'))
        .filter(|&b| b != 0)
        .take(width.saturating_sub(1))
        .collect();
    field.resize(width, 0);
    field
}

/// A header for a file made on `created` (year, month, day).
pub fn header_made(created: (i64, u32, u32)) -> Header {
    let (year, month, day) = created;
    let byte = |v: i64| u8::try_from(v).unwrap_or(0);
    Header {
        century: byte(year / 100),
        year: byte(year % 100),
        month: byte(i64::from(month)),
        day: byte(i64::from(day)),
        n1: 0,
        n2: 0,
        game_year: 0,
        board_size: 0,
        game_type: 0,
        depth: 0,
        reserved: 0,
    }
}

/// A `.wtb`'s bytes: `header` (with N1 set to the games' count) then the
/// games.
pub fn write_games(header: Header, records: &[Record]) -> Vec<u8> {
    let header = Header {
        n1: u32::try_from(records.len()).unwrap_or(u32::MAX),
        ..header
    };
    let mut bytes = header.encode().to_vec();
    for record in records {
        bytes.extend_from_slice(&record.encode());
    }
    bytes
}

/// A `.jou`'s or `.trn`'s bytes: `header` (with N2 set to the count) then
/// each name in `width` bytes. At most 65,535 names (N2 is a u16).
pub fn write_names(header: Header, names: &[String], width: usize) -> Vec<u8> {
    let header = Header {
        n2: u16::try_from(names.len()).unwrap_or(u16::MAX),
        ..header
    };
    let mut bytes = header.encode().to_vec();
    for name in names.iter().take(usize::from(u16::MAX)) {
        bytes.extend(latin1_field(name, width));
    }
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn codes_are_ten_rows_and_a_column() {
        let code = |s: &str| square_code(s.parse().unwrap());
        assert_eq!(
            (code("a1"), code("h1"), code("a8"), code("h8")),
            (Some(11), Some(18), Some(81), Some(88))
        );
        assert_eq!(code("f5"), Some(56));
        assert_eq!(
            code_square(56).map(|s| s.to_string()).as_deref(),
            Some("f5")
        );
        for bad in [0, 9, 10, 19, 90, 255] {
            assert_eq!(code_square(bad), None, "{bad}");
        }
    }

    #[test]
    fn short_or_mislabelled_files_are_refused_with_reasons() {
        assert!(read_games(&[0; 7]).unwrap_err().why.contains("7 bytes"));
        let mut header = header_made((2024, 5, 1));
        header.n1 = 2;
        let one_game = write_games(header, &[Record::decode(&[0; GAME_LEN])]);
        let mut lying = one_game.clone();
        lying[4] = 2;
        assert!(read_games(&lying).unwrap_err().why.contains("says 2 games"));
        let mut ten = one_game.clone();
        ten[12] = 10;
        assert!(read_games(&ten).unwrap_err().why.contains("10x10"));
        let mut solitaires = one_game;
        solitaires[13] = 1;
        assert!(
            read_games(&solitaires)
                .unwrap_err()
                .why
                .contains("solitaires")
        );
        let names = write_names(header_made((2024, 5, 1)), &["Léa".to_string()], PLAYER_LEN);
        assert_eq!(read_names(&names, PLAYER_LEN).unwrap(), ["Léa"]);
        assert!(read_names(&names[..30], PLAYER_LEN).is_err());
    }

    fn arbitrary_record() -> impl Strategy<Value = Record> {
        (
            any::<[u16; 3]>(),
            any::<[u8; 2]>(),
            proptest::collection::vec(any::<u8>(), MOVES),
        )
            .prop_map(|(numbers, scores, moves)| {
                let mut codes = [0; MOVES];
                codes.copy_from_slice(&moves);
                Record {
                    tournament: numbers[0],
                    black: numbers[1],
                    white: numbers[2],
                    black_discs: scores[0],
                    theoretical: scores[1],
                    moves: codes,
                }
            })
    }

    proptest! {
        #[test]
        fn any_bytes_read_without_panicking(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
            if let Ok((_, records)) = read_games(&bytes) {
                for record in records {
                    let _ = record.squares();
                }
            }
            let _ = read_names(&bytes, PLAYER_LEN);
            let _ = read_names(&bytes, TOURNAMENT_LEN);
        }

        #[test]
        fn games_round_trip(records in proptest::collection::vec(arbitrary_record(), 0..5), year in 1977u16..2100) {
            let header = Header { game_year: year, board_size: 8, ..header_made((2024, 5, 1)) };
            let bytes = write_games(header, &records);
            prop_assert_eq!(bytes.len(), HEADER_LEN + GAME_LEN * records.len());
            let (read_header, read) = read_games(&bytes).unwrap();
            prop_assert_eq!(read_header.game_year, year);
            prop_assert_eq!(read, records);
        }

        #[test]
        fn latin1_names_round_trip(names in proptest::collection::vec("[ -~\u{a0}-\u{ff}]{0,19}", 0..5)) {
            let bytes = write_names(header_made((2024, 5, 1)), &names, TOURNAMENT_LEN);
            prop_assert_eq!(read_names(&bytes, TOURNAMENT_LEN).unwrap(), names);
        }

        #[test]
        fn squares_round_trip_through_codes(row in 0u8..8, col in 0u8..8) {
            let square = Square::new(row, col);
            prop_assert_eq!(square.and_then(square_code).and_then(code_square), square);
        }
    }
}
