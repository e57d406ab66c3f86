//! `flip manual`: the whole manual page, the flags' sections from their
//! definitions and these: the commands typed at the prompt, the
//! environment, the files and the exit statuses (README says the same).

use flipline_manual::Section;

/// The page, as roff.
pub fn page(command: clap::Command) -> std::io::Result<Vec<u8>> {
    flipline_manual::page(command, &sections())
}

fn sections() -> Vec<Section> {
    vec![
        prompt_commands(),
        Section::table("ENVIRONMENT", &ENVIRONMENT),
        Section::table("FILES", &FILES),
        Section::table("EXIT STATUS", &EXIT_STATUSES),
        Section {
            title: "SEE ALSO",
            paragraphs: vec![
                "flipd(1), the daemon. PROTOCOL.md (the line protocol, for bots), README.md \
                 and the guides in docs/ (docs/playing.md for this client) in the source."
                    .to_string(),
            ],
            terms: Vec::new(),
        },
    ]
}

fn prompt_commands() -> Section {
    Section {
        title: "COMMANDS AT THE PROMPT",
        paragraphs: vec![
            "Typed at flip's prompt, or piped one a line (then each command's answer and \
             what it causes are printed before the next is sent). Keywords in any case; \
             help lists them. At a terminal the prompt ends with the clocks of a game in \
             play, a login typed with a password is drawn masked and not sent (type login \
             NAME and it is asked without echo), and a dropped connection is made again \
             for as long as you wait."
                .to_string(),
        ],
        terms: (crate::play::commands::prompt_commands().into_iter())
            .map(|(usage, what)| (usage.to_string(), what.to_string()))
            .collect(),
    }
}

const ENVIRONMENT: [(&str, &str); 5] = [
    (
        "FLIP_PASSWORD",
        "The password of --name's login (and of flip bot's) when --password-file is not given.",
    ),
    (
        "XDG_DATA_HOME",
        "Where the data directory is: $XDG_DATA_HOME/flipline, else \
         $HOME/.local/share/flipline.",
    ),
    (
        "HOME",
        "The data directory's base when XDG_DATA_HOME is unset.",
    ),
    (
        "USER, LOGNAME",
        "The name --local logs in with when --name is not given (else \"me\").",
    ),
    ("NO_COLOR", "Set and not empty: no colours."),
];

const FILES: [(&str, &str); 3] = [
    (
        "history.txt",
        "In the data directory: the lines typed at the prompt, without any that shows a \
         password or a secret.",
    ),
    (
        "guest-secrets",
        "In the data directory, mode 0600: a guest's secret per server and name (the last \
         32), so that flip started again takes a kept seat back.",
    ),
    (
        "local.db",
        "In the data directory: flip --local's store (every local game; an unfinished one \
         is resumed). flip export --db reads it.",
    ),
];

const EXIT_STATUSES: [(&str, &str); 6] = [
    (
        "0",
        "quit, Ctrl-D, the end of piped input; a subcommand done; a closed output pipe.",
    ),
    (
        "1",
        "A command failed (piped input), or a subcommand did (an unreadable file, a wrong score).",
    ),
    (
        "2",
        "The connection was refused, or lost and not made again (--no-reconnect, a script \
         without --reconnect, or a script's minute of --reconnect over).",
    ),
    (
        "64",
        "The command line does not read (an unknown flag, a missing value).",
    ),
    (
        "101",
        "A bug: flip panicked (the terminal is put back first).",
    ),
    (
        "128+N",
        "Stopped by signal N: 129 SIGHUP, 130 SIGINT, 131 SIGQUIT, 143 SIGTERM.",
    ),
];
