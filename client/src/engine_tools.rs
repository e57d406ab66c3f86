//! The engine tools: `flip perft`, `flip solve`, `flip analyze` and `flip
//! engine` (the NBoard and GTP protocols on standard input), and the scores
//! as people read them.

pub(crate) mod analyze_cmd;
pub(crate) mod engine_cmd;
pub(crate) mod engine_protocols;
pub(crate) mod engine_score;
pub(crate) mod game_analysis;
pub(crate) mod perft_cmd;
pub(crate) mod solve_cmd;
