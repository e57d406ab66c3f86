//! `flip bot`: the built-in engine as a network bot. Each of N connections seeks a
//! game, answers `TURN` lines with the engine's move, seeks again after `OVER`, and
//! reconnects (taking its seat back) when the daemon goes away and comes back.
//! A guest bot keeps the secret its login was given, in memory only, and shows
//! it when it logs in again, so that the daemon gives it its name back.
//! With `--engine`, another program chooses the moves (external/).

pub(crate) mod external;

use crate::play::wire::{Incoming, Outgoing};
use std::io::{BufRead, BufReader, Write};
use std::time::{Duration, Instant};

use clap::Args;
use flipline::engine;
use flipline::notation::parse_board;
use flipline::protocol::{ClockSpec, Event, GameId, ServerLine};
use flipline::{Color, Game, Move, Variant};

use crate::engine_tools::engine_protocols::Protocol;
use crate::play::password::{self, Password, login_line};
use crate::play::secret::{GuestSecret, LoginReply, read_login_reply, resume_line};
use crate::play::servers::Servers;
use crate::untrusted::escape;
use external::{EngineSpec, ExternalPlayer, Record};

#[derive(Args, Debug, Clone)]
pub struct BotArgs {
    // `--help` shows this text, where `[:PORT]` is the usual notation for
    // what may be left out, not a link.
    #[allow(rustdoc::broken_intra_doc_links)]
    /// The daemon's address: HOST[:PORT], or tls://HOST[:PORT] for its TLS
    /// port (the certificate verified, the host name checked).
    #[arg(long, default_value_t = flipd::Config::default_server(),
          value_parser = crate::play::link::server_addresses)]
    server: String,
    /// A PEM file of the certificate authorities to verify a TLS port's
    /// certificate with, instead of the system's. Else FLIP_CA, if set.
    #[arg(long, value_name = "FILE")]
    ca: Option<std::path::PathBuf>,
    /// Name to log in with (with -1, -2, ... added when playing several games).
    #[arg(long, default_value = "flipbot")]
    name: String,
    /// The password of a registered name: the file's first line (a file
    /// only its owner may read). Else FLIP_PASSWORD, if set; else a guest.
    #[arg(long, value_name = "FILE")]
    password_file: Option<std::path::PathBuf>,
    /// Engine level, 1 (random) to 10.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u8).range(1..=10))]
    level: u8,
    /// The variant to seek.
    #[arg(long, default_value = "othello")]
    variant: Variant,
    /// Clock to seek, as minutes+seconds (e.g. 5+3).
    #[arg(long, value_parser = parse_clock)]
    clock: Option<ClockSpec>,
    /// Games played at once (one connection each).
    #[arg(long, default_value_t = 1)]
    games: usize,
    /// Games each connection plays before it stops (default: until interrupted).
    #[arg(long)]
    rounds: Option<u32>,
    /// Longest the engine thinks per move, in milliseconds (for --engine,
    /// its time for each move of a game without a clock; a clock gives its
    /// own).
    #[arg(long, default_value_t = 1000)]
    think_ms: u64,
    /// Play another program's moves: its command line, split into words as
    /// a shell would (no shell runs it), such as "edax -gtp".
    #[arg(long, value_name = "COMMAND", requires = "protocol")]
    engine: Option<String>,
    /// The protocol --engine speaks.
    #[arg(long, value_enum, requires = "engine")]
    protocol: Option<Protocol>,
}

fn parse_clock(text: &str) -> Result<ClockSpec, String> {
    ClockSpec::parse(text).map_err(|e| e.message)
}

/// Runs the bots until every one has played its rounds.
pub fn run(args: &BotArgs) -> Result<(), String> {
    let password = password::given(args.password_file.as_deref())?;
    let engine = match (&args.engine, args.protocol) {
        (Some(command), Some(protocol)) => Some(EngineSpec::new(command, protocol, args.variant)?),
        _ => None,
    };
    let handles: Vec<_> = (1..=args.games.max(1))
        .map(|i| {
            let mut bot = Bot::new(args.clone(), i, password.clone());
            bot.external = engine.clone().map(ExternalPlayer::new);
            std::thread::spawn(move || bot.run())
        })
        .collect();
    let mut failures = Vec::new();
    for handle in handles {
        match handle.join() {
            Ok(Ok(())) => {}
            Ok(Err(e)) => failures.push(e),
            Err(_) => failures.push("a bot thread panicked".to_string()),
        }
    }
    if failures.is_empty() {
        Ok(())
    } else {
        Err(failures.join("; "))
    }
}

/// One connection's bot.
struct Bot {
    args: BotArgs,
    name: String,
    played: u32,
    game: Option<BotGame>,
    seed: u64,
    /// The secret the daemon gave this bot's guest name, for its reconnects.
    secret: Option<GuestSecret>,
    /// A registered name's password, for every login.
    password: Option<Password>,
    /// The program that plays instead of the built-in engine (`--engine`).
    external: Option<ExternalPlayer>,
}

/// The game a bot is in.
struct BotGame {
    id: GameId,
    variant: Variant,
    colors: Vec<Color>,
    position: Option<Game>,
    /// The moves and clocks, for an external engine.
    record: Record,
}

/// How a connection ended.
enum Ended {
    /// Every round is played.
    Done,
    /// The connection dropped.
    Lost,
}

impl Bot {
    fn new(args: BotArgs, index: usize, password: Option<Password>) -> Bot {
        let name = if args.games > 1 {
            format!("{}-{index}", args.name)
        } else {
            args.name.clone()
        };
        Bot {
            args,
            name,
            played: 0,
            game: None,
            seed: index as u64,
            secret: None,
            password,
            external: None,
        }
    }

    fn run(&mut self) -> Result<(), String> {
        let mut failures = 0u32;
        let ca = crate::play::tls::ca_file(self.args.ca.as_deref());
        let servers = Servers::parse(&self.args.server).trusting(ca);
        loop {
            match servers.open().map(|(s, r, _)| (s, r)) {
                Ok((stream, reader)) => {
                    failures = 0;
                    match self.serve(stream, reader) {
                        Ok(Ended::Done) => return Ok(()),
                        Ok(Ended::Lost) => {
                            eprintln!("{}: connection lost, reconnecting", self.name)
                        }
                        Err(e) => return Err(format!("{}: {e}", self.name)),
                    }
                }
                Err(e) if e.contains(crate::play::tls::NOT_VERIFIED) => {
                    return Err(format!("{}: {e}", self.name));
                }
                Err(e) if failures == 0 => eprintln!("{}: {e}; retrying", self.name),
                Err(_) => {}
            }
            failures = failures.saturating_add(1);
            std::thread::sleep(Duration::from_millis(200 * u64::from(failures.min(25))));
        }
    }

    /// Plays on one connection until it drops or the rounds are done.
    fn serve(
        &mut self,
        mut stream: Outgoing,
        reader: BufReader<Incoming>,
    ) -> Result<Ended, String> {
        let mut lines = reader.lines();
        let _ = stream.set_read_timeout(Some(LOGIN_WAIT));
        let logged_in = self.log_in(&mut stream, &mut lines)?;
        let _ = stream.set_read_timeout(None);
        if !logged_in {
            return Ok(Ended::Lost);
        }
        let first = match &self.game {
            Some(game) => format!("JOIN {}", game.id),
            None => self.seek_line(),
        };
        send(&mut stream, &first)?;
        for line in lines {
            let Ok(line) = line else { break };
            if let Some(reply) = self.on_line(&line)? {
                send(&mut stream, &reply)?;
            }
            if self.args.rounds.is_some_and(|r| self.played >= r) && self.game.is_none() {
                let _ = send(&mut stream, "QUIT");
                return Ok(Ended::Done);
            }
        }
        Ok(Ended::Lost)
    }

    /// Logs in, with the secret of an earlier login if there is one; a
    /// refused secret is forgotten and the name asked for as a new guest.
    /// `false` when the connection failed or did not answer in time (try
    /// again later), an error when the name is refused.
    fn log_in(
        &mut self,
        stream: &mut Outgoing,
        lines: &mut std::io::Lines<BufReader<Incoming>>,
    ) -> Result<bool, String> {
        loop {
            let line = match (&self.secret, &self.password) {
                (Some(secret), _) => resume_line(&self.name, secret),
                (None, Some(password)) => login_line(&self.name, password),
                (None, None) => format!("LOGIN {}", self.name),
            };
            if send(stream, &line).is_err() {
                return Ok(false);
            }
            let Some(reply) = next_reply(lines) else {
                return Ok(false);
            };
            match read_login_reply(&reply, self.secret.as_ref()) {
                LoginReply::LoggedIn { secret, .. } => {
                    self.secret = secret;
                    return Ok(true);
                }
                LoginReply::SecretRefused(_) => self.secret = None,
                LoginReply::Refused(e) if e.code.number() == 503 => {
                    eprintln!("{}: {}", self.name, escape(&e.to_string()));
                    return Ok(false);
                }
                LoginReply::Refused(e) => return Err(escape(&e.to_string())),
                // Not quoted: a reply of a shape unknown may still hold a
                // secret.
                LoginReply::Unreadable => return Err("the answer to LOGIN does not read".into()),
            }
        }
    }

    fn seek_line(&self) -> String {
        match self.args.clock {
            Some(clock) => format!("SEEK {} clock {clock}", self.args.variant),
            None => format!("SEEK {}", self.args.variant),
        }
    }

    /// The answer to one server line, if it needs one.
    fn on_line(&mut self, line: &str) -> Result<Option<String>, String> {
        let parsed = ServerLine::parse(line);
        if let (ServerLine::Event(event), Some(g)) = (&parsed, self.game.as_mut()) {
            g.record.observe(event);
        }
        match parsed {
            ServerLine::Event(Event::Start {
                game,
                variant,
                black,
                white,
                clock,
            }) => {
                let seats = [(Color::Black, black), (Color::White, white)];
                let colors: Vec<Color> = (seats.iter())
                    .filter(|(_, n)| *n == self.name)
                    .map(|(c, _)| *c)
                    .collect();
                let others: Vec<&String> = (seats.iter())
                    .filter(|(_, n)| *n != self.name)
                    .map(|(_, n)| n)
                    .collect();
                crate::say!("{}", plays_line(&self.name, game, &colors, &others));
                self.game = Some(BotGame {
                    id: game,
                    variant,
                    colors,
                    position: None,
                    record: Record::new(game, variant, clock),
                });
            }
            ServerLine::Event(Event::Board {
                game,
                cells,
                to_move: Some(side),
            }) => {
                if let Some(g) = self.game.as_mut().filter(|g| g.id == game) {
                    g.position = parse_board(&format!("{cells} {}", side.letter()), g.variant).ok();
                    if let Some(position) = &g.position {
                        g.record.check(position);
                    }
                }
            }
            ServerLine::Event(Event::Turn { game, side, .. }) => {
                return Ok(self.on_turn(game, side));
            }
            ServerLine::Event(Event::History(summary)) => {
                let waiting = (self.game.as_mut())
                    .filter(|g| g.id == summary.game)
                    .and_then(|g| g.record.take_waiting());
                return Ok(waiting.and_then(|side| self.on_turn(summary.game, side)));
            }
            ServerLine::Event(Event::Over {
                game,
                winner,
                black,
                white,
                ..
            }) if self.game.as_ref().is_some_and(|g| g.id == game) => {
                self.game = None;
                self.played += 1;
                let result = winner.map_or("draw".to_string(), |w| format!("{w} wins"));
                crate::say!("{}: game {game} over: {result} {black}-{white}", self.name);
                if let Some(external) = self.external.as_mut() {
                    external.game_over();
                    if let Some(why) = external.given_up() {
                        return Err(why.to_string());
                    }
                }
                let more = self.args.rounds.is_none_or(|r| self.played < r);
                return Ok(more.then(|| self.seek_line()));
            }
            // The name was taken or refused at `LOGIN` (`log_in`), never
            // here: a 409 now is about a game, and only a 401 ends the bot.
            ServerLine::Err(e) if e.code.number() == 401 => {
                return Err(escape(&e.to_string()));
            }
            ServerLine::Err(e) if e.code.number() == 404 => {
                // The game we came back for is gone: look for another.
                self.game = None;
                return Ok(Some(self.seek_line()));
            }
            ServerLine::Err(e) => eprintln!("{}: {}", self.name, escape(&e.to_string())),
            _ => {}
        }
        Ok(None)
    }

    fn on_turn(&mut self, game: GameId, side: Color) -> Option<String> {
        let g = self
            .game
            .as_ref()
            .filter(|g| g.id == game && g.colors.contains(&side))?;
        let position = g.position?;
        if let (Some(player), Some(g)) = (self.external.as_mut(), self.game.as_mut()) {
            let think = Duration::from_millis(self.args.think_ms);
            let who = (self.name.as_str(), game);
            return Some(external::take_turn(
                player,
                &mut g.record,
                &position,
                think,
                who,
            ));
        }
        self.seed = self.seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let think = Duration::from_millis(self.args.think_ms)
            .min(engine::level(self.args.level).time_budget());
        let deadline = Instant::now() + think;
        let mut stop = || Instant::now() >= deadline;
        let choice = engine::choose(&position, self.args.level, self.seed, &mut stop)?;
        Some(match choice.mv {
            Move::Pass => "PASS".to_string(),
            Move::Place(square) => format!("MOVE {square}"),
        })
    }
}

/// What a bot says as a game starts: which side it plays, and against whom
/// (`flipbot: bot plays X in game 5 vs ann`).
fn plays_line(name: &str, game: GameId, colors: &[Color], others: &[&String]) -> String {
    let sides: Vec<String> = colors.iter().map(|c| c.to_string()).collect();
    let sides = if sides.is_empty() {
        "no side".to_string()
    } else {
        sides.join(" and ")
    };
    let against = match others.first() {
        Some(other) => format!(" vs {}", crate::untrusted::name(other)),
        None => String::new(),
    };
    format!("{name}: bot plays {sides} in game {game}{against}")
}

/// How long a bot waits for the answer to its `LOGIN` before it tries a new
/// connection.
const LOGIN_WAIT: Duration = Duration::from_secs(30);

/// The next final reply (`OK` or `ERR`) among `lines`, the lines before it
/// (an `INFO` at most, before a login) passed over; `None` when the
/// connection ends or times out first.
fn next_reply(lines: &mut std::io::Lines<BufReader<Incoming>>) -> Option<String> {
    lines.map_while(Result::ok).find(|line| {
        matches!(
            ServerLine::parse(line),
            ServerLine::Ok(_) | ServerLine::Err(_)
        )
    })
}

fn send(stream: &mut Outgoing, line: &str) -> Result<(), String> {
    stream
        .write_all(format!("{line}\n").as_bytes())
        .map_err(|e| format!("cannot send: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bot_says_which_side_it_plays_in_each_game() {
        let bob = "bob".to_string();
        assert_eq!(
            plays_line("flipbot", 5, &[Color::Black], &[&bob]),
            "flipbot: bot plays X in game 5 vs bob"
        );
        assert_eq!(
            plays_line("b-2", 7, &[Color::White], &[&"e\u{1b}ve".to_string()]),
            "b-2: bot plays O in game 7 vs e\\u{1b}ve"
        );
        assert_eq!(
            plays_line("b", 1, &[Color::Black, Color::White], &[]),
            "b: bot plays X and O in game 1"
        );
    }
}
