//! flipline's pure core: the rules of every variant, their notation and perft.
//!
//! Nothing here does I/O, waits or reads a clock: the same inputs give the same
//! outputs, and no input from outside (a square, a board string, a transcript, a
//! variant name) can make it panic; parsers return a [`ParseError`] that names the
//! offending token.
//!
//! # Layout
//! - [`square`]: `Square` (`d3`) and `Move` (a square or a pass).
//! - [`variant`]: `Variant` (othello, reversi, freeplace, anti, othello6, othello10,
//!   tictactoe) and `Color`.
//! - [`bits`]: the `Bits` trait over `u64`/`u128`, board masks, the size-generic rules.
//! - [`board8`]: the 8x8 hot path (legal moves, flips, perft) on `u64`s.
//! - [`game`]: `Game`, the rules as a state machine: legal moves, `apply`, the end,
//!   the score, the hash.
//! - [`notation`]: board strings (OBF), transcripts, `ParseError`.
//! - [`perft`]: leaf counts for any variant.
//! - [`engine`]: the computer player: levels 1..=10, the 8x8 midgame search and
//!   exact endgame solver on bitboards, the generic search for the other boards,
//!   move ranking.
//! - [`obf`]: OBF lines, the format of the FFO endgame test positions.
//! - [`protocol`]: protocol v1: `Command` parsing, `Event` lines, `Reply` (the `OK`
//!   replies), `ServerLine` for clients.

pub mod bits;
pub mod board8;
pub mod engine;
pub mod game;
pub mod notation;
pub mod obf;
pub mod perft;
pub mod protocol;
pub mod square;
pub mod variant;

pub use game::{Counts, Game, MoveError, Outcome, SquareSet};
pub use notation::{ParseError, ParseErrorKind};
pub use square::{Move, Square};
pub use variant::{Color, Variant};
