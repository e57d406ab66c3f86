//! The commands: `on_line` takes a line from the client past the rate limit
//! and the parser, and `dispatch` sends each command to its own function, one
//! line per command. The functions live by whom they ask: `login` (the
//! accounts, then the lobby), `seats` (the lobby, which decides every seat),
//! `play` (the game, by the route the seat holds) and `watch` (the lobby's
//! directory of games, the store, the lobby's lists). `PING` and `QUIT` are a
//! line each in `dispatch`, and `HELP` asks no one: it is here.

mod lobby;
mod login;
mod login_cluster;
mod lookup;
mod play;
mod seats;
mod tourney;

use actix::Context;
use flipline::protocol::{COMMAND_HELP, Command, ErrorCode};

use super::Session;
use super::limits::slow_down_message;
use crate::codec::Line;
use crate::messages::{Action, Answer, ChallengeStep, ListGames, ListPlayers};
use crate::rules::refusal::Refusal;
use flipline::protocol::Reply;

impl Session {
    pub(super) fn on_line(&mut self, ctx: &mut Context<Self>, line: Line) {
        if matches!(&line, Line::Text(text) if text.trim().is_empty()) {
            return;
        }
        // Leaving costs the server nothing, and a script's last word must be
        // heard: a QUIT is never refused for the rate, so `nc` ends.
        let quitting =
            matches!(&line, Line::Text(text) if text.trim().eq_ignore_ascii_case("quit"));
        if !quitting && !self.bucket.take() {
            let wait = self.bucket.wait(self.shared.live.rate_limit());
            return self.error(ctx, ErrorCode::TooMany, slow_down_message(wait));
        }
        match line {
            Line::Text(text) => match Command::parse(&text) {
                Ok(command) if command.needs_login() && self.name.is_none() => {
                    self.refuse(ctx, Refusal::NotLoggedIn)
                }
                Ok(command) => self.dispatch(ctx, command),
                Err(e) => self.reply(ctx, Err(e)),
            },
            Line::TooLong => {
                let max = self.codec.max();
                self.error(
                    ctx,
                    ErrorCode::TooLong,
                    format!("line too long (at most {max} bytes)"),
                )
            }
            Line::NotUtf8 => self.error(ctx, ErrorCode::BadRequest, "line is not UTF-8"),
        }
    }

    /// One function per command keeps this match short.
    fn dispatch(&mut self, ctx: &mut Context<Self>, command: Command) {
        match command {
            Command::Login { name, credential } => self.login(ctx, name, credential),
            Command::Seek(spec) => self.seek(ctx, spec),
            Command::Challenge(spec) => self.challenge(ctx, spec),
            Command::Accept(id) => self.challenge_by(ctx, ChallengeStep::Accept(id)),
            Command::Decline(id, reason) => {
                self.challenge_by(ctx, ChallengeStep::Decline(id, reason));
            }
            Command::Cancel(id) => self.challenge_by(ctx, ChallengeStep::Cancel(id)),
            Command::Rating { name, variant } => self.rating(ctx, name, variant),
            Command::Top { variant, count } => self.top(ctx, variant, count),
            Command::Account(mark) => self.account(ctx, mark),
            Command::Tourney(op) => self.tourney(ctx, op),
            Command::New(spec) => self.new_game(ctx, spec),
            Command::Join(game) => self.join(ctx, game),
            Command::Watch(game) => self.watch(ctx, game),
            Command::History(game) => self.history(ctx, game),
            Command::Leave => self.leave(ctx),
            Command::List(query) => {
                let to = match &self.shared.elsewhere {
                    Some(elsewhere) => elsewhere.list_games.clone(),
                    None => self.shared.lobby.list_games.clone(),
                };
                self.list(ctx, to, ListGames(query));
            }
            Command::Who(query) => {
                let to = match &self.shared.elsewhere {
                    Some(elsewhere) => elsewhere.list_players.clone(),
                    None => self.shared.lobby.list_players.clone(),
                };
                self.list(ctx, to, ListPlayers(query));
            }
            Command::Move(square) => self.play(ctx, Action::Move(square)),
            Command::Pass => self.play(ctx, Action::Pass),
            Command::End => self.play(ctx, Action::Resign),
            Command::Undo => self.play(ctx, Action::Undo),
            Command::Board => self.board(ctx),
            Command::Say(text) => self.play(ctx, Action::Say(text)),
            Command::Rematch => self.rematch(ctx),
            Command::Hint => self.hint(ctx),
            Command::Ping => self.reply(ctx, Ok(Answer::ok(Reply::Pong))),
            Command::Help => self.help(ctx),
            Command::Quit => self.quit(ctx),
        }
    }

    fn help(&mut self, ctx: &mut Context<Self>) {
        self.reply(ctx, Ok(Answer::data(help_text())));
    }
}

/// The widest `HELP` line, so that it reads whole in an 80-column terminal
/// (over `nc` or telnet: the client has its own help).
const HELP_WIDTH: usize = 80;

/// `HELP`'s data lines: each command's usage and what it does, the usage on
/// a line of its own where the two do not fit in [`HELP_WIDTH`].
fn help_text() -> String {
    const USAGE: usize = 30;
    let mut text = String::new();
    for (usage, what) in COMMAND_HELP {
        let line = format!("INFO {usage:<USAGE$} {what}");
        if line.len() <= HELP_WIDTH {
            text.push_str(&line);
        } else {
            text.push_str(&format!("INFO {usage}\nINFO     {what}"));
        }
        text.push('\n');
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn help_fits_80_columns_and_names_every_command() {
        let text = help_text();
        for line in text.lines() {
            assert!(line.len() <= HELP_WIDTH, "{line:?}");
            assert!(line.starts_with("INFO "), "{line:?}");
        }
        for (usage, _) in COMMAND_HELP {
            assert!(text.contains(usage), "{usage}");
        }
    }
}
