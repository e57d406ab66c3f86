//! The archive tools: games read and written as GGF, WTHOR and transcript
//! lines (`flip export`, `flip import`, `save`/`load`), and `flip backup`.

pub(crate) mod backup_cmd;
pub(crate) mod civil;
pub(crate) mod export;
pub(crate) mod ggf_game;
pub(crate) mod ggf_read;
pub(crate) mod ggf_write;
pub(crate) mod import;
pub(crate) mod saved_game;
pub(crate) mod wthor;
pub(crate) mod wthor_export;
pub(crate) mod wthor_games;
