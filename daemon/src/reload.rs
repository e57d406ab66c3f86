//! SIGHUP: the daemon reads its configuration again and takes what a running
//! daemon can take (see `reload/decision.rs`), instead of dying as the signal's
//! default would (a closed terminal sends it too). A file that cannot be read
//! or parsed, or a log filter that is not one, is logged and the running
//! settings stay: a reload never stops the daemon.

mod decision;
pub(crate) mod live;

use std::sync::Arc;

use crate::config::{Config, ConfigError};
use crate::player_tls::PlayerTls;
use crate::reload::live::Live;
use decision::{changes, running_after};

/// Reads the configuration again.
pub type LoadConfig = Box<dyn Fn() -> Result<Config, ConfigError> + Send>;

/// Puts a log filter in place; the error says why it is not one.
pub type SetLogFilter = Box<dyn Fn(&str) -> Result<(), String> + Send>;

/// How `flipd` reads its configuration again and swaps its log filter; an
/// in-process daemon ([`crate::DaemonThread`]) has none and leaves SIGHUP
/// alone, the signal belonging to the process around it.
pub struct Reload {
    /// Reads the configuration as it was read at start: the same file (or the
    /// embedded default), the same flags over it.
    pub load: LoadConfig,
    /// Puts a log filter in place; the error says why it is not one.
    pub set_log_filter: SetLogFilter,
}

/// SIGHUP, caught from the moment this is made.
pub struct Hangups {
    #[cfg(unix)]
    signal: tokio::signal::unix::Signal,
}

impl Hangups {
    /// Catches SIGHUP from now on: made before the daemon listens, so that
    /// none sent once it serves can kill it.
    pub fn catch() -> std::io::Result<Hangups> {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            Ok(Hangups {
                signal: signal(SignalKind::hangup())?,
            })
        }
        #[cfg(not(unix))]
        {
            Ok(Hangups {})
        }
    }

    /// Waits for the next SIGHUP (several at once count as one).
    async fn next(&mut self) -> bool {
        #[cfg(unix)]
        {
            self.signal.recv().await.is_some()
        }
        #[cfg(not(unix))]
        {
            std::future::pending::<bool>().await
        }
    }
}

/// Reloads on every SIGHUP until the daemon stops; `running` is the
/// configuration it started with. The TLS port's certificate, if there is
/// one, is read again each time from the files it came from (a renewal
/// writes the same paths; the paths themselves wait for a restart).
pub async fn reload_on_hangup(
    mut hangups: Hangups,
    reload: Reload,
    mut running: Config,
    (live, certificate): (Arc<Live>, Option<Arc<PlayerTls>>),
) {
    while hangups.next().await {
        running = reload_once(&reload, running, &live);
        if let Some(certificate) = &certificate {
            reload_certificate(certificate);
        }
    }
}

/// Reads the TLS port's certificate and key again; a file that cannot be
/// used is a warning, and the certificate in use stays.
fn reload_certificate(certificate: &PlayerTls) {
    match certificate.reload() {
        Ok(()) => tracing::info!("SIGHUP: read the TLS certificate and key again"),
        Err(error) => tracing::warn!(
            %error,
            "SIGHUP: the TLS certificate in use stays: {error}"
        ),
    }
}

/// One reload: what is running afterwards.
fn reload_once(reload: &Reload, running: Config, live: &Live) -> Config {
    let file = match (reload.load)() {
        Ok(file) => file,
        Err(error) => {
            tracing::error!(%error, "SIGHUP: cannot reload the configuration, the running one stays: {error}");
            return running;
        }
    };
    let next = running_after(&running, &file);
    if next.log_filter != running.log_filter
        && let Err(error) = (reload.set_log_filter)(&next.log_filter)
    {
        let filter = &next.log_filter;
        tracing::error!(%error, filter, "SIGHUP: log_filter '{filter}' is not a filter, the running configuration stays: {error}");
        return running;
    }
    live.apply(&next);
    let changes = changes(&running, &file);
    tracing::info!(
        applied = ?changes.applied,
        need_restart = ?changes.need_restart,
        "SIGHUP: reloaded the configuration: {}",
        changes.describe()
    );
    next
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    fn reload_from(text: &'static str, filters: Arc<Mutex<Vec<String>>>) -> Reload {
        Reload {
            load: Box::new(move || Config::parse(text, "test.ron")),
            set_log_filter: Box::new(move |filter| {
                if filter == "bad[" {
                    return Err("not a filter".to_string());
                }
                filters.lock().unwrap().push(filter.to_string());
                Ok(())
            }),
        }
    }

    #[test]
    fn a_reload_applies_the_live_settings_and_keeps_the_rest() {
        let running = Config::embedded().unwrap();
        let live = Live::new(&running);
        let filters = Arc::new(Mutex::new(Vec::new()));
        let text = "(rate_limit: (per_second: 1, burst: 2), grace_secs: 1, log_filter: \"debug\")";
        let next = reload_once(
            &reload_from(text, Arc::clone(&filters)),
            running.clone(),
            &live,
        );
        assert_eq!(live.rate_limit().burst, 2);
        assert_eq!(next.grace_secs, running.grace_secs);
        assert_eq!(*filters.lock().unwrap(), ["debug"]);
    }

    #[test]
    fn a_bad_file_or_filter_keeps_the_running_configuration() {
        let running = Config::embedded().unwrap();
        let live = Live::new(&running);
        let filters = Arc::new(Mutex::new(Vec::new()));
        for text in [
            "(rate_limit: (per_second: ",
            "(rate_limit: (per_second: 1, burst: 2), log_filter: \"bad[\")",
        ] {
            let next = reload_once(
                &reload_from(text, Arc::clone(&filters)),
                running.clone(),
                &live,
            );
            assert_eq!(next, running);
            assert_eq!(live.rate_limit(), running.rate_limit);
        }
        assert!(filters.lock().unwrap().is_empty());
    }
}
