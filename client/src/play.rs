//! `flip play`: connects, then hands over to the interactive client
//! (interactive.rs) or to the script mode (script.rs).

use std::io::IsTerminal;

use crate::connection::{Failure, PlayOptions, Reconnect, spawn_reader};
use crate::link::Link;
use crate::view::Style;

/// Runs the client until the person quits, stdin ends, or the connection is lost.
pub fn run(options: &PlayOptions, first: Vec<String>) -> Result<(), Failure> {
    let interactive = std::io::stdin().is_terminal() && std::io::stdout().is_terminal();
    let color = interactive && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
    let style = Style {
        color,
        raw: options.raw,
    };
    let (link, reader) = Link::connect(
        &options.server,
        style,
        options.on_update,
        options.secrets_key.as_deref(),
    )
    .map_err(Failure::connection)?;
    let policy = Reconnect::choose(options.reconnect, interactive);
    // Whoever reconnects takes kept seats back by itself, and so does a
    // person's client: a script says how, and does what it is told.
    link.view().takes_seats_back = interactive || policy != Reconnect::Never;
    let mut commands = first;
    if let Some(name) = &options.name {
        let login = match &options.password {
            Some(password) => crate::password::login_line(name, password),
            None => format!("LOGIN {name}"),
        };
        commands.insert(0, login);
    }
    if interactive {
        crate::interactive::run(&link, reader, policy, commands)
    } else {
        crate::screen::line(format!(
            "connected to {}: {}",
            link.servers().current(),
            link.greeting
        ));
        spawn_reader(&link, reader, policy);
        crate::script::run(&link, commands)
    }
}
