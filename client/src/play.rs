//! `flip play`: connects, then hands over to the interactive client
//! (interactive.rs) or to the script mode (script.rs).

pub(crate) mod commands;
pub(crate) mod credentials;
pub(crate) mod helper;
pub(crate) mod interactive;
pub(crate) mod link;
pub(crate) mod local;
pub(crate) mod password;
pub(crate) mod reader;
pub(crate) mod render;
pub(crate) mod replies;
pub(crate) mod review;
pub(crate) mod screen;
pub(crate) mod script;
pub(crate) mod secret;
pub(crate) mod secret_file;
pub(crate) mod servers;
pub(crate) mod terminal;
pub(crate) mod tls;
pub(crate) mod tourney_view;
pub(crate) mod view;
pub(crate) mod wire;

use std::io::IsTerminal;

use crate::play::link::Link;
use crate::play::reader::{Failure, PlayOptions, Reconnect, spawn_reader};
use crate::play::servers::Servers;
use crate::play::view::Style;

/// Runs the client until the person quits, stdin ends, or the connection is lost.
pub fn run(options: &PlayOptions, first: Vec<String>) -> Result<(), Failure> {
    let interactive = std::io::stdin().is_terminal() && std::io::stdout().is_terminal();
    let color = interactive && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
    let style = Style {
        color,
        raw: options.raw,
    };
    let servers = Servers::parse(&options.server).trusting(options.ca.clone());
    let (link, reader) = Link::connect(
        servers,
        style,
        options.on_update,
        options.secrets_key.as_deref(),
    )
    .map_err(Failure::connection)?;
    let policy = Reconnect::choose(options.reconnect, interactive);
    // Whoever reconnects takes kept seats back by itself, and so does a
    // person's client: a script says how, and does what it is told.
    link.view().credentials.takes_seats_back = interactive || policy != Reconnect::Never;
    let mut commands = first;
    if let Some(name) = &options.name {
        let login = match &options.password {
            Some(password) => crate::play::password::login_line(name, password),
            None => format!("LOGIN {name}"),
        };
        commands.insert(0, login);
    }
    if interactive {
        crate::play::interactive::run(&link, reader, policy, commands)
    } else {
        crate::play::screen::line(format!(
            "connected to {}: {}",
            link.servers().current(),
            link.greeting
        ));
        spawn_reader(&link, reader, policy);
        crate::play::script::run(&link, commands)
    }
}
