//! Helpers for flipline's end-to-end tests: a daemon on port 0 in-process or as the
//! real binary, a line client whose every read is bounded, and a driver that plays
//! games from `TURN` lines while checking each line against the rules crate.
//!
//! Every wait here has a deadline, so a daemon that goes quiet fails a test with a
//! message instead of hanging it. Helpers panic with a message (they are only ever
//! called from tests); nothing here talks to anything but 127.0.0.1.
//!
//! # Layout
//! The helpers live in files by job under `support/`; every public name is
//! re-exported here, so tests use them as `flipline_tests::X`.
//! - `daemon.rs`: [`test_config`], [`start`]: an in-process daemon
//!   ([`flipd::DaemonThread`]) with a store of its own in a fresh temporary
//!   directory ([`TestDaemon`], [`temp_dir`]).
//! - `client.rs`: [`Client`]: connect, send, read lines, run commands, wait for
//!   events; [`seek_pair`], [`new_and_join`]: two clients seated in one game.
//! - `http.rs`: [`http_get`], for the metrics listener and `/healthz`.
//! - `lines.rs`: server lines read as typed events and replies ([`event`],
//!   [`reply_to`], [`parse_start`], [`parse_over`]); [`check_transcript`]: the
//!   ordering and counting rules of a game's lines.
//! - `play.rs`: [`play_game`]: plays a game to `OVER` for any mix of clients and bots.
//! - `rng.rs`: [`Rng`]: a small seeded generator for random legal moves.
//! - `child.rs`: [`ChildDaemon`]: the `flipd` binary as a child process with a
//!   config file and a store of its own, killed on drop; [`workspace_binary`] and
//!   [`wait_bounded`] for any binary of the workspace; [`workspace_example`]
//!   for its examples (the tutorial's bot).
//! - `postgres.rs`: with `FLIPLINE_TEST_STORE=postgres`, every test daemon's
//!   store in a PostgreSQL database of its own ([`on_postgres`],
//!   [`sqlite_only`]); the scripts that start servers of a test's own
//!   ([`postgres_tool`], [`nats_tool`]). The servers the tests share are
//!   `flipline_test_servers`' ([`nats_server`], [`may_start_postgres`]).
//! - `proxy.rs`: [`Proxy`]: a loopback TCP proxy a test cuts (refusing,
//!   or silently dropping) and heals, between a daemon and its servers.
//! - `tls.rs`: [`TestCa`], a throwaway certificate authority, the daemon's
//!   files it signs ([`TlsFiles`]), and the client's side of TLS ([`Wire`]).
//! - `volume.rs`: [`SmallVolume`]: a small tmpfs mounted for one test (as
//!   root), to fill up for real.

#[path = "support/child.rs"]
mod child;
#[path = "support/client.rs"]
mod client;
#[path = "support/daemon.rs"]
mod daemon;
#[path = "support/http.rs"]
mod http;
#[path = "support/lines.rs"]
mod lines;
#[path = "support/play.rs"]
mod play;
#[path = "support/postgres.rs"]
mod postgres;
#[path = "support/proxy.rs"]
mod proxy;
#[path = "support/rng.rs"]
mod rng;
#[path = "support/tls.rs"]
mod tls;
#[path = "support/volume.rs"]
mod volume;

pub use flipd::{Config, DaemonThread};

pub use child::{
    ChildDaemon, run_flip, wait_bounded, with_open_file_limit, workspace_binary, workspace_example,
    write_config,
};
pub use client::{
    Client, HANG_GUARD, READ_TIMEOUT, Received, assert_serves, guest_secret, login_line_soon,
    login_soon, new_and_join, seek_pair, wait_until,
};
pub use daemon::{TestDaemon, remove_temp_dir, start, temp_dir, test_config};
pub use flipline_test_servers::{may_start_postgres, nats_server};
pub use http::http_get;
pub use lines::{
    Over, Start, check_transcript, count_cells, event, first_move, is_final, parse_over,
    parse_start, reply_game, reply_to,
};
pub use play::{Finished, SeatOf, play_game, play_game_from, seats_of};
pub use postgres::{
    database_of, nats_tool, on_postgres, postgres_tool, sqlite_only, store_execute, store_place,
    store_query,
};
pub use proxy::Proxy;
pub use rng::Rng;
pub use tls::{TestCa, TlsFiles, Wire, client_config as tls_client_config};
pub use volume::SmallVolume;
