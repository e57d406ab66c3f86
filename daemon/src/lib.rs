//! flipd: the flipline game daemon. Actix actors on tokio serve protocol v1 (see
//! PROTOCOL.md) over TCP; the board's rules and the engine come from the pure
//! `flipline` crate and the server's rules from the pure `flipd-rules`
//! ([`rules`]), so everything here is a shell around them.
//!
//! # Layout
//! - [`server`]: start (bind, worker threads, engine pool, actors), graceful
//!   shutdown, and [`server::DaemonThread`] for tests and the client's local mode.
//! - `listener`: the listener actor: accepts, caps connections, spreads sessions
//!   over the worker threads (or, one per worker, keeps them on its own).
//! - `player_tls`: the TLS port's certificate (read again on SIGHUP) and
//!   each connection's handshake.
//! - `admission`: the connection places the listeners and sessions share
//!   (in all, per address, kept for players).
//! - `descriptor_tables`: a descriptor table per worker thread, and the rules
//!   that keep that sound.
//! - `session`: the session actor, one per connection: commands, replies in
//!   order, rate limit, idle timeout.
//! - `codec`: line framing where over-long and non-UTF-8 lines are items.
//! - `outbox`: the bounded outbound queue and its writer task.
//! - `lobby`: the lobby actor: the shell around the lobby core; game ids,
//!   `LIST`, `WHO`, recovery.
//! - [`rules`]: the crate `flipd-rules` (`daemon/rules`), the pure cores: a
//!   game's table and its clocks, the lobby (who sits where), challenges,
//!   tournaments, ratings, admission. No I/O: the compiler holds it so.
//! - `game`: the game actor, one per game: the shell around its table.
//! - `service_time`: the time the chess clocks count, less the daemon's
//!   pauses (the clock policy).
//! - `lazy_list`: a list kept as one pointer while empty.
//! - `engine_pool`: engine threads for bot moves and hints, with deadlines.
//! - `messages`: the messages between the actors.
//! - [`store`]: the store, SQLite or PostgreSQL: one writer thread committing
//!   in batches, a reader thread, recovery at start, and [`store::Archive`]
//!   for exports.
//! - `faults`: the switch the failure tests hand a daemon to make its
//!   store's writes fail or its disk freeze (below both `config` and `store`).
//! - `store_stats`: the store writer's counts (queue, refusals, commit
//!   times), which the writer adds to and the metrics read; `durations`:
//!   the histogram they and the metrics' counters keep.
//! - `bus`: the cluster's message bus (core NATS, a subject per node);
//!   `remote`: games on other nodes reached through it (`WATCH`).
//! - `node_state`: a cluster node's lease standing and counts, shared by
//!   the lease keeper, the store's writer and the metrics.
//! - `cluster`: a node of a cluster: its lease kept, dead nodes' games
//!   taken over and started here, and the daemon stopped if it is declared
//!   dead itself.
//! - `store_deadline`: how long a command waits for the store before
//!   `ERR 503`.
//! - `accounts`: `LOGIN` with passwords: the budgets of wrong passwords and
//!   of registrations, the back-off after a wrong one, guests, and the
//!   registered names kept in memory (a `LOGIN` without a password reads no
//!   store).
//! - `hash_pool`: the password threads (argon2 off the actor threads) and
//!   their bounded queue, logins first.
//! - `waits`: how a wait is told to a client.
//! - [`config`]: the RON configuration: every setting declared once (with
//!   `config_table`'s `settings!`), config/default.ron held equal to it.
//! - `watch`: the daemon watching itself: late threads, slow moves;
//!   `metrics`: the Prometheus scrape and the health check.
//! - [`reload`]: SIGHUP: the signal's loop, with `reload/decision.rs`
//!   (which settings a running daemon takes from its file read again) and
//!   `reload/live.rs` (the live values connections read).
//! - `random`: random numbers for colours and engine seeds.

mod accounts;
mod admission;
mod bus;
mod bus_login;
mod cluster;
mod codec;
pub mod config;
mod config_default;
mod config_env;
mod config_errors;
mod config_table;
#[cfg(test)]
mod config_tests;
mod descriptor_tables;
mod durations;
mod engine_pool;
mod faults;
mod game;
mod hash_pool;
mod homed;
mod lazy_list;
mod listener;
mod lobby;
mod messages;
mod metrics;
mod nats_url;
mod node_state;
mod outbox;
mod player_tls;
mod random;
pub mod reload;
mod remote;
pub mod server;
mod service_time;
mod session;
mod stall_watch;
pub mod store;
mod store_deadline;
mod store_stats;
mod store_url;
mod tls_settings;
mod waits;

/// The rules crate (`daemon/rules`): every decision the actors carry out.
pub use flipd_rules as rules;

pub use config::Config;
pub use metrics::every_metric;
pub use server::{DaemonThread, serve, serve_reloading};
