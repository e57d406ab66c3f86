//! The embedded default configuration, apart from the files that read it:
//! `config.rs` parses it, `config_env.rs` takes from it the names of the
//! settings the environment may set.

/// The embedded default configuration (config/default.ron).
pub const DEFAULT_RON: &str = include_str!("../../config/default.ron");
