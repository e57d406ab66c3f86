//! End-to-end tests over real TCP on 127.0.0.1: the flipd daemon (and, in
//! `client`, the flip client and the example bot). Each test starts its own
//! daemon on port 0 (in-process, or the real binary for signals), so the tests
//! run in parallel, and every read is bounded, so none can hang. The helpers are
//! in the crate's library (tests/lib.rs).

mod accounts;
mod acks;
mod admission;
mod archive;
mod backup;
mod bench_tourney;
mod challenges;
mod client;
mod cluster;
mod cluster_bus;
mod cluster_challenge;
mod cluster_cuts;
mod cluster_nemesis;
mod cluster_play;
mod cluster_seek;
mod cluster_tourney;
mod cluster_watch;
mod docs;
mod durability;
mod engine;
mod external_engine;
mod frozen;
mod games;
mod guessing;
mod guest_login;
mod import;
mod limits;
mod load;
mod lobby;
mod logs;
mod metrics;
mod names;
mod paused;
mod postgres_outage;
mod races;
mod ratings;
mod rules;
mod sessions;
mod settings;
mod shutdown;
mod sighup;
mod store_faults;
mod tls;
mod tourneys;
mod tutorials;
mod undo;
