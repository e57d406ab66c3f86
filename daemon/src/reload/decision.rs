//! What a SIGHUP changes, decided without touching anything: the
//! configuration read again is compared with the one running; the settings a
//! running daemon can take ([`running_after`]) are taken, and every other
//! change waits for a restart and is named in the log. `reload.rs` reads the
//! file and carries the decision out.
//!
//! Each setting says whether it is live where it is declared (config.rs).
//! A setting is live when whatever reads it reads it afresh: the rate limit,
//! the outbound queue, the idle timeout, the connection caps (in all, per
//! address, the share kept for players) and the login deadline are read by
//! connections, listeners and the login sweep on each use
//! ([`crate::reload::live::Live`]), and so is the deadline on waiting for the store;
//! the longest line is read when a
//! connection starts, so it applies to new ones; the log filter is swapped
//! in the subscriber. The rest is built into the running daemon (the socket,
//! the threads, the store, the games' grace and engine settings, the
//! accounts) and needs a restart.

use crate::config::Config;

/// The configuration a running daemon goes on with after reading `file`: the
/// live settings from the file, the rest as it runs now. Which are live is
/// declared with each setting (`live` in config.rs's table).
pub fn running_after(running: &Config, file: &Config) -> Config {
    running.with_live_from(file)
}

/// What reading `file` changes in a daemon running `running`.
#[derive(Debug, PartialEq, Eq)]
pub struct Changes {
    /// Settings taken at once.
    pub applied: Vec<&'static str>,
    /// Settings that differ in the file and wait for a restart.
    pub need_restart: Vec<&'static str>,
}

impl Changes {
    /// One line for the log.
    pub fn describe(&self) -> String {
        let applied = match self.applied.as_slice() {
            [] => "nothing changed".to_string(),
            names => format!("applied {}", names.join(", ")),
        };
        match self.need_restart.as_slice() {
            [] => applied,
            names => format!(
                "{applied}; changed but kept until a restart: {}",
                names.join(", ")
            ),
        }
    }
}

/// What reading `file` changes in a daemon running `running`.
pub fn changes(running: &Config, file: &Config) -> Changes {
    let next = running_after(running, file);
    Changes {
        applied: differences(running, &next),
        need_restart: differences(&next, file),
    }
}

/// The names of the settings that differ between `a` and `b`, in the
/// order declared (a group named whole: `store`).
pub fn differences(a: &Config, b: &Config) -> Vec<&'static str> {
    a.differences(b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::RateLimit;

    fn embedded() -> Config {
        Config::embedded().unwrap()
    }

    #[test]
    fn a_group_is_live_or_not_whole() {
        // A reload takes or keeps each top-level setting whole, so a member
        // declared live would be a promise nothing keeps.
        for setting in Config::settings() {
            if setting.name.contains('.') {
                assert!(!setting.live, "{} is live in its group", setting.name);
            }
        }
    }

    #[test]
    fn the_same_file_changes_nothing() {
        let running = embedded();
        let changes = changes(&running, &running.clone());
        assert_eq!(
            changes,
            Changes {
                applied: vec![],
                need_restart: vec![]
            }
        );
        assert_eq!(changes.describe(), "nothing changed");
        assert_eq!(running_after(&running, &running), running);
    }

    #[test]
    fn limits_and_the_log_filter_apply_and_the_rest_waits_for_a_restart() {
        let running = embedded();
        let mut file = running.clone();
        file.rate_limit = RateLimit {
            per_second: 1,
            burst: 2,
        };
        file.idle_timeout_secs = 5;
        file.log_filter = "debug".to_string();
        file.listen = "127.0.0.1:9".to_string();
        file.grace_secs = 1;
        file.store.path = "elsewhere.db".into();
        let changes = changes(&running, &file);
        assert_eq!(
            changes.applied,
            ["rate_limit", "idle_timeout_secs", "log_filter"]
        );
        assert_eq!(changes.need_restart, ["listen", "grace_secs", "store"]);
        assert_eq!(
            changes.describe(),
            "applied rate_limit, idle_timeout_secs, log_filter; \
             changed but kept until a restart: listen, grace_secs, store"
        );
        let next = running_after(&running, &file);
        assert_eq!(next.rate_limit, file.rate_limit);
        assert_eq!(next.log_filter, "debug");
        assert_eq!(
            (next.listen, next.grace_secs, next.store.path),
            (running.listen, running.grace_secs, running.store.path)
        );
    }

    #[test]
    fn a_setting_kept_for_a_restart_is_named_again_at_the_next_reload() {
        let running = embedded();
        let mut file = running.clone();
        file.workers = 7;
        let next = running_after(&running, &file);
        let again = changes(&next, &file);
        assert_eq!(again.applied, Vec::<&str>::new());
        assert_eq!(again.need_restart, ["workers"]);
    }

    #[test]
    fn every_live_setting_is_taken_from_the_file() {
        let running = embedded();
        let mut file = running.clone();
        file.max_line_bytes = 64;
        file.outbound_queue_lines = 16;
        file.outbound_queue_bytes = 8192;
        file.max_connections = 3;
        file.max_connections_per_address = 2;
        file.reserved_for_players_percent = 50;
        file.login_deadline_secs = 5;
        file.store_deadline_ms = 9;
        let changes = changes(&running, &file);
        assert_eq!(
            changes.applied,
            [
                "max_connections",
                "max_connections_per_address",
                "reserved_for_players_percent",
                "login_deadline_secs",
                "max_line_bytes",
                "outbound_queue_lines",
                "outbound_queue_bytes",
                "store_deadline_ms"
            ]
        );
        assert!(changes.need_restart.is_empty());
    }
}
