//! `flipd manual` (part of the flipd binary, not of the library): the whole
//! manual page, the flags' sections from their definitions and these: every
//! `FLIPD_` variable from the settings' table, the signals, the files and
//! the exit statuses.

use flipd::Config;
use flipline_manual::Section;

/// The page, as roff.
pub fn page(command: clap::Command) -> std::io::Result<Vec<u8>> {
    flipline_manual::page(command, &sections())
}

fn sections() -> Vec<Section> {
    vec![
        environment(),
        Section::table("SIGNALS", &SIGNALS),
        Section::table("FILES", &FILES),
        Section::table("EXIT STATUS", &EXIT_STATUSES),
        Section {
            title: "SEE ALSO",
            paragraphs: vec![
                "flip(1), the client. In the source: docs/running.md (running flipd), \
                 docs/cluster.md (PostgreSQL and the cluster), docs/reference/ (every \
                 setting, metric and flag), PROTOCOL.md (the line protocol) and \
                 config/default.ron (every setting at length)."
                    .to_string(),
            ],
            terms: Vec::new(),
        },
    ]
}

/// One term a setting, from the table every setting is declared in: the
/// variable, then what the setting means and whether SIGHUP applies it.
fn environment() -> Section {
    let settings = Config::settings().into_iter().filter(|s| !s.group);
    let mut terms: Vec<(String, String)> = settings
        .map(|s| {
            let when = if s.live {
                "SIGHUP applies it"
            } else {
                "read at start"
            };
            let meaning = format!("{} ({}: {when}.)", s.meaning, s.name);
            (s.variable(), meaning)
        })
        .collect();
    terms.push((
        "RUST_LOG".to_string(),
        "When set, filters the log instead of log_filter.".to_string(),
    ));
    Section {
        title: "ENVIRONMENT",
        paragraphs: vec![
            "Each setting of the configuration file may be given by a variable, which \
             wins over the file (a flag wins over both): FLIPD_ and the setting's name in \
             capitals, a group's member after an underscore. A text is given bare, \
             anything else as the file writes it."
                .to_string(),
        ],
        terms,
    }
}

const SIGNALS: [(&str, &str); 2] = [
    (
        "SIGHUP",
        "Read the configuration again, as at start, and apply what can change while flipd \
         runs (the log says which settings changed and which wait for a restart).",
    ),
    (
        "SIGINT, SIGTERM",
        "Stop: the games in flight are stored, then flipd exits 0. A cluster's node leaves \
         the cluster at once, and the other nodes take its games over.",
    ),
];

const FILES: [(&str, &str); 2] = [
    (
        "config/default.ron",
        "The embedded default configuration, every setting with its meaning; --config FILE \
         gives another (settings it leaves out keep their defaults).",
    ),
    (
        "data/flipline.db",
        "The store by default (store.path, relative to the working directory), with its \
         -wal and -shm files, mode 0600; store.url gives a PostgreSQL store instead.",
    ),
];

const EXIT_STATUSES: [(&str, &str); 3] = [
    (
        "0",
        "Stopped by SIGINT or SIGTERM; --check-config with sound settings; a subcommand done.",
    ),
    (
        "1",
        "The configuration does not read or is not sound, the store cannot be opened, the \
         address cannot be listened on, or a cluster's node lost its lease to another node.",
    ),
    (
        "2",
        "The command line does not read (an unknown flag, a missing value).",
    ),
];
