//! What the client knows of its games, built from server lines, and the text a
//! person sees for each line. Pure: lines in, text out, no I/O.

use std::collections::{HashMap, HashSet, VecDeque};
use std::time::Instant;

use flipline::engine::WIN_FACTOR;
use flipline::notation::parse_board;
use flipline::protocol::{
    ClockSpec, Command, CommandKind, EndReason, ErrorCode, Event, GameId, GameSummary, NewGame,
    Opponent, Reason, Reply, ServerLine,
};

use crate::engine_tools::engine_score::score_phrase;
use flipline::{Color, Game, Move, Square, Variant};

use crate::play::credentials::{Credentials, SecretChange};
use crate::play::password::{asks_for_password, login_line, shown_password};
use crate::play::render::{BoardView, COLUMNS, board, clock, clock_bar, running_clocks};
use crate::play::replies::{LoginSent, Replies};
use crate::play::secret::{
    GuestSecret, LoginReply, plain_login_name, read_login_reply, resume_line, shown_secret,
};
use crate::untrusted::{self, chat_lines, escape, raw_line};

/// One game as the client follows it.
#[derive(Clone, Debug)]
pub struct GameView {
    /// The variant.
    pub variant: Variant,
    /// Black's name.
    pub black: String,
    /// White's name.
    pub white: String,
    /// The position of the last BOARD line.
    pub game: Game,
    /// Whether OVER has come.
    pub over: bool,
    /// The last move played.
    pub last: Option<Move>,
    /// Milliseconds left (black, white) as of the last MOVED (the base
    /// times before), or the final times once the game is over.
    pub clocks: Option<(u64, u64)>,
    /// When `clocks` were given, while the side to move's clock runs.
    pub clocks_at: Option<Instant>,
    /// Whether `clocks` are times the server reported (`MOVED`, `CLOCK`)
    /// since the last `START` or take-back. Until then they may be stale
    /// (a snapshot's `BOARD` comes before its `CLOCK`), and a board drawn
    /// meanwhile leaves them out rather than disagree with the prompt.
    pub clocks_reported: bool,
    /// Every move seen since START, for saving and resuming.
    pub moves: Vec<Move>,
}

/// How output is drawn.
#[derive(Clone, Copy, Debug, Default)]
pub struct Style {
    /// ANSI colour.
    pub color: bool,
    /// Server lines as they are, no rendering.
    pub raw: bool,
}

/// The client's view of the server: its name, its games, its unanswered commands.
#[derive(Debug, Default)]
pub struct View {
    /// The name logged in with.
    pub name: Option<String>,
    /// How this client logs in again: secrets, password, the last login.
    pub credentials: Credentials,
    /// The commands awaiting their answers, and how to read them.
    pub replies: Replies,
    /// Games seen, by id.
    pub games: HashMap<GameId, GameView>,
    /// The game played (or watched) most recently.
    pub current: Option<GameId>,
    /// `TURN` and `OVER` lines seen, of any game: a move's events are all in
    /// once the next of them comes.
    pub settles: u64,
    /// `OVER` lines seen, of any game.
    pub overs: u64,
    /// Games as `HISTORY` last described them, by id.
    pub records: HashMap<GameId, GameSummary>,
    /// Games whose `HISTORY` line is taken in without being shown (asked
    /// for by a command of the client's own, `moves`).
    pub quiet_records: HashSet<GameId>,
    /// Lines the view asks to send as they are (a plain `LOGIN` after a kept
    /// secret was refused), oldest first; the link sends them.
    pub to_send: VecDeque<String>,
    /// The server said it closes the connection for want of a `LOGIN`
    /// (its login deadline): the link waits for the next command to
    /// connect again rather than report the connection lost.
    pub closed_for_login: bool,
    style: Style,
    /// When the line being taken in arrived.
    now: Option<Instant>,
}

impl GameView {
    /// The side whose clock runs: the side to move of a clocked game in
    /// play with both seats filled.
    pub fn running(&self) -> Option<Color> {
        let seated = self.black != "-" && self.white != "-";
        (self.clocks_at.is_some() && seated && !self.over).then(|| self.game.to_move())
    }

    /// The time left on both clocks at `now`.
    pub fn clocks_now(&self, now: Instant) -> Option<(u64, u64)> {
        let last = self.clocks?;
        let since = self.clocks_at.map(|at| now.saturating_duration_since(at));
        Some(running_clocks(
            last,
            self.running(),
            since.unwrap_or_default(),
        ))
    }

    /// Stops the clocks at `now`, where they stand.
    fn stop_clocks(&mut self, now: Instant) {
        self.clocks = self.clocks_now(now);
        self.clocks_at = None;
    }
}

impl View {
    /// An empty view drawing with `style`.
    pub fn new(style: Style) -> View {
        View {
            style,
            ..View::default()
        }
    }

    /// How this view draws.
    pub fn style(&self) -> Style {
        self.style
    }

    /// When the line being taken in arrived (now, outside one).
    fn now(&self) -> Instant {
        self.now.unwrap_or_else(Instant::now)
    }

    /// The clocks of the current game as the prompt shows them at `now`
    /// (see [`clock_bar`]), in colour if asked for: the time left now
    /// while a clock runs, the final times once the game is over.
    pub fn clock_bar(&self, now: Instant, color: bool) -> Option<String> {
        let game = self.games.get(&self.current?)?;
        let clocks = game.clocks_now(now)?;
        Some(clock_bar(clocks, game.running(), color))
    }

    /// Whether the current game has a clock and is not over: the prompt
    /// then shows its clocks.
    pub fn clocked_game_on(&self) -> bool {
        let current = self.current.and_then(|id| self.games.get(&id));
        current.is_some_and(|g| g.clocks.is_some() && !g.over)
    }

    /// Whether a clock of the current game runs.
    pub fn clock_runs(&self) -> bool {
        let current = self.current.and_then(|id| self.games.get(&id));
        current.is_some_and(|g| g.running().is_some())
    }

    /// Records a command sent as it is, so that its reply can be understood.
    pub fn sent(&mut self, line: &str) {
        let Some(keyword) = line.split_whitespace().next() else {
            return;
        };
        let kind = CommandKind::from_keyword(keyword);
        if kind == Some(CommandKind::New) {
            let open = matches!(
                Command::parse(line),
                Ok(Command::New(NewGame {
                    opponent: Opponent::Open,
                    ..
                }))
            );
            self.replies.news.push_back(open);
        }
        if let Ok(Command::Top { variant, .. }) = Command::parse(line) {
            self.replies
                .tops
                .push_back(variant.unwrap_or(Variant::Othello));
        }
        if kind == Some(CommandKind::Login) {
            let sent = match (shown_secret(line), shown_password(line)) {
                (Some((name, secret)), _) => LoginSent {
                    name,
                    secret: Some(secret),
                    ..LoginSent::default()
                },
                (None, Some((name, password))) => LoginSent {
                    name,
                    password: Some(password),
                    ..LoginSent::default()
                },
                (None, None) => LoginSent {
                    name: line.split_whitespace().nth(1).unwrap_or("").to_string(),
                    ..LoginSent::default()
                },
            };
            self.replies.logins.push_back(sent);
        }
        self.replies.pending.push_back(kind);
    }

    /// Records a command about to be sent and returns the line to send for
    /// it: a guest's plain `LOGIN name` shows the secret held for the name
    /// (the one this client was given, else `kept(name)`, the secret file's),
    /// a registered name's the password it logged in with;
    /// every other line is sent as it is.
    pub fn prepare_send(
        &mut self,
        line: &str,
        kept: impl FnOnce(&str) -> Option<GuestSecret>,
    ) -> String {
        let again = plain_login_name(line).and_then(|name| {
            let password = self
                .credentials
                .password
                .clone()
                .filter(|_| self.is_my_name(&name))?;
            Some((name, password))
        });
        if let Some((name, password)) = again {
            let line = login_line(&name, &password);
            self.replies.pending.push_back(Some(CommandKind::Login));
            self.replies.logins.push_back(LoginSent {
                name,
                password: Some(password),
                added: true,
                ..LoginSent::default()
            });
            return line;
        }
        let resume = plain_login_name(line).and_then(|name| {
            let secret = self.secret_of(&name).or_else(|| kept(&name))?;
            Some((name, secret))
        });
        let Some((name, secret)) = resume else {
            self.sent(line);
            return line.to_string();
        };
        let resumed = resume_line(&name, &secret);
        self.replies.pending.push_back(Some(CommandKind::Login));
        self.replies.logins.push_back(LoginSent {
            name,
            secret: Some(secret),
            added: true,
            ..LoginSent::default()
        });
        resumed
    }

    /// The secret this client was given for `name`.
    fn secret_of(&self, name: &str) -> Option<GuestSecret> {
        self.credentials
            .secret
            .clone()
            .filter(|_| self.is_my_name(name))
    }

    /// Whether `name` is the one logged in with, in any case: the daemon's
    /// names are one name whatever their case, shown as first spelled.
    fn is_my_name(&self, name: &str) -> bool {
        self.name
            .as_deref()
            .is_some_and(|mine| mine.eq_ignore_ascii_case(name))
    }

    /// Forgets the commands in flight (their connection is gone).
    pub fn forget_pending(&mut self) {
        self.replies.pending.clear();
        self.replies.logins.clear();
        self.replies.news.clear();
        self.to_send.clear();
    }

    /// Whether every command sent is answered and nothing waits to be sent.
    pub fn idle(&self) -> bool {
        self.replies.pending.is_empty() && self.to_send.is_empty()
    }

    /// The colours this client plays in `game` (both in a hotseat game).
    pub fn my_colors(&self, game: &GameView) -> Vec<Color> {
        let me = self.name.as_deref().unwrap_or("");
        let mut colors = Vec::new();
        if game.black == me {
            colors.push(Color::Black);
        }
        if game.white == me {
            colors.push(Color::White);
        }
        colors
    }

    /// The current game, if this client plays in it and it goes on.
    pub fn live_game(&self) -> Option<&GameView> {
        let game = self.games.get(&self.current?)?;
        (!game.over && !self.my_colors(game).is_empty()).then_some(game)
    }

    /// Whether the current game is one this client plays, has started and
    /// goes on, with the other side to move.
    pub fn their_turn(&self) -> bool {
        self.live_game()
            .is_some_and(|g| !g.game.is_over() && !self.my_colors(g).contains(&g.game.to_move()))
    }

    /// Whether the side to move in the current game is this client's.
    pub fn my_turn(&self) -> bool {
        self.live_game()
            .is_some_and(|g| self.my_colors(g).contains(&g.game.to_move()) && !g.game.is_over())
    }

    /// The squares this client may play now (for completion).
    pub fn legal_now(&self) -> Vec<Square> {
        match self.live_game() {
            Some(g) if self.my_turn() => g.game.legal_moves().iter().collect(),
            _ => Vec::new(),
        }
    }

    /// Takes one server line; returns what to show for it (possibly nothing).
    /// No secret is ever shown, not even in `--raw`.
    pub fn on_line(&mut self, line: &str) -> Vec<String> {
        self.on_line_at(line, Instant::now())
    }

    /// [`View::on_line`] for a line that arrived at `now`: the moment the
    /// clocks it gives were read.
    pub fn on_line_at(&mut self, line: &str, now: Instant) -> Vec<String> {
        self.now = Some(now);
        let mut hidden = self.secrets_in_play();
        let shown = self.show_line(line);
        hidden.extend(self.secrets_in_play());
        shown
            .into_iter()
            .map(|text| hide_secrets(text, &hidden))
            .collect()
    }

    /// The secrets and passwords a line may carry, with what shows in their
    /// place: the ones held, and the ones the next `LOGIN` to be answered
    /// showed.
    fn secrets_in_play(&self) -> Vec<(String, &'static str)> {
        let front = self.replies.logins.front();
        let secrets = (self.credentials.secret.iter())
            .chain(front.and_then(|l| l.secret.as_ref()))
            .map(|s| (s.token().to_string(), "<secret>"));
        let passwords = (self.credentials.password.iter())
            .chain(front.and_then(|l| l.password.as_ref()))
            .map(|p| (p.word().to_string(), "<password>"));
        secrets.chain(passwords).collect()
    }

    /// `text` with the secrets in play hidden.
    fn hide_secrets(&self, text: &str) -> String {
        hide_secrets(text.to_string(), &self.secrets_in_play())
    }

    fn show_line(&mut self, line: &str) -> Vec<String> {
        let parsed = ServerLine::parse(line);
        let shown = match parsed {
            ServerLine::Hello(version) => vec![format!("connected (flipline protocol {version})")],
            ServerLine::Ok(text) => self.on_reply(line, Ok(text)),
            ServerLine::Err(e) => self.on_reply(
                line,
                Err(format!("error {}: {}", e.code.number(), escape(&e.message))),
            ),
            ServerLine::Event(event) => self.on_event(event),
            ServerLine::Unknown(text) => vec![format!("server: {}", escape(&text))],
        };
        if self.style.raw {
            vec![raw_line(line)]
        } else {
            shown
        }
    }

    /// A final reply `line`: `Ok` with the text after `OK`, or `Err` with what
    /// to show for an `ERR`.
    fn on_reply(&mut self, line: &str, reply: Result<String, String>) -> Vec<String> {
        let command = self.replies.pending.pop_front().flatten();
        self.replies.last_ok = reply.is_ok();
        self.replies.last_asked = false;
        if command == Some(CommandKind::Login) {
            let sent = self.replies.logins.pop_front().unwrap_or_default();
            return self.on_login_reply(line, reply, sent);
        }
        let open_seat =
            command == Some(CommandKind::New) && self.replies.news.pop_front().unwrap_or(false);
        // A reply's data lines come just before it: the RATING lines since
        // the last reply are this one's.
        let ratings = std::mem::take(&mut self.replies.top_lines);
        let top = (command == Some(CommandKind::Top))
            .then(|| self.replies.tops.pop_front())
            .flatten();
        let text = match reply {
            Ok(text) => text,
            Err(message) => return vec![message],
        };
        let typed = command.and_then(|kind| Reply::parse(kind, line).ok());
        match (command, typed) {
            (Some(CommandKind::New), Some(Reply::Game(id))) if open_seat => {
                self.current = Some(id);
                vec![format!(
                    "game {id} made: the opponent types join {id} (spectators watch {id})"
                )]
            }
            (Some(CommandKind::Challenge), Some(Reply::Challenge(id))) => {
                vec![format!(
                    "challenge {id} made: the game starts if it is accepted (cancel {id} withdraws it)"
                )]
            }
            (Some(CommandKind::Top), Some(Reply::Done)) if ratings == 0 => {
                let variant = top.unwrap_or(Variant::Othello);
                vec![format!(
                    "nobody is rated at {variant} yet: rated games (seek {variant} rated) give ratings"
                )]
            }
            (Some(CommandKind::Top), Some(Reply::Done)) => Vec::new(),
            (Some(CommandKind::Tourney), Some(Reply::Tourney(id))) => vec![format!(
                "tournament {id} made: players type tourney join {id}; tourney start {id} begins it"
            )],
            (Some(CommandKind::Undo), Some(Reply::Asked)) => {
                self.replies.last_asked = true;
                vec!["asked the other player to agree to take back your move".to_string()]
            }
            (Some(CommandKind::Hint), Some(Reply::Hint(mv, score, exact))) => {
                let variant = self
                    .current
                    .and_then(|id| self.games.get(&id))
                    .map(|g| g.variant);
                vec![hint_line(mv, score, exact, variant)]
            }
            (
                Some(
                    CommandKind::Move
                    | CommandKind::Pass
                    | CommandKind::Say
                    | CommandKind::End
                    | CommandKind::Undo
                    | CommandKind::Board
                    | CommandKind::History,
                ),
                Some(Reply::Done),
            ) => Vec::new(),
            (
                Some(
                    CommandKind::New
                    | CommandKind::Seek
                    | CommandKind::Join
                    | CommandKind::Watch
                    | CommandKind::Accept,
                ),
                Some(Reply::Game(id) | Reply::Joined(id, _)),
            ) => {
                self.current = Some(id);
                vec![format!("ok {}", escape(&text))]
            }
            _ => ok_line(&text),
        }
    }

    /// The reply to a `LOGIN` that showed what `sent` says: the name and its
    /// secret taken in, or a refused kept secret forgotten (and, if the
    /// client added it, the plain `LOGIN` queued that logs in as a new guest).
    fn on_login_reply(
        &mut self,
        line: &str,
        reply: Result<String, String>,
        sent: LoginSent,
    ) -> Vec<String> {
        let answer = read_login_reply(line, sent.secret.as_ref());
        self.credentials.login_answer = Some(matches!(answer, LoginReply::LoggedIn { .. }));
        self.credentials.login_passing = match &answer {
            LoginReply::Refused(e)
                if matches!(e.code, ErrorCode::Conflict | ErrorCode::Unavailable) =>
            {
                Some(e.code)
            }
            _ => None,
        };
        match (answer, reply) {
            (
                LoginReply::LoggedIn {
                    name,
                    secret,
                    registered,
                    seat,
                },
                _,
            ) => {
                self.credentials.password = sent.password.filter(|_| secret.is_none());
                let shown = self.logged_in_lines(&name, secret.is_some(), registered, seat);
                self.credentials.secret_changes.push(match &secret {
                    Some(secret) => SecretChange::Keep(name.clone(), secret.clone()),
                    None => SecretChange::Forget(name.clone()),
                });
                self.name = Some(name);
                self.credentials.secret = secret;
                self.credentials.kept_seat = seat;
                if let Some(game) = seat.filter(|_| self.credentials.takes_seats_back) {
                    self.to_send.push_back(format!("JOIN {game}"));
                }
                shown
            }
            (LoginReply::SecretRefused(_), reply) => {
                if self.is_my_name(&sent.name) {
                    self.credentials.secret = None;
                }
                self.credentials
                    .secret_changes
                    .push(SecretChange::Forget(sent.name.clone()));
                let mut shown: Vec<String> = reply.err().into_iter().collect();
                let who = untrusted::name(&sent.name);
                if sent.added {
                    self.credentials.login_answer = None;
                    self.to_send.push_back(format!("LOGIN {}", sent.name));
                    shown.push(format!(
                        "the guest secret kept for {who} was not accepted: logging in as a new guest"
                    ));
                } else {
                    shown.push(format!("the guest secret for {who} was not accepted"));
                }
                shown
            }
            (_, Err(message)) => {
                let passing = self.credentials.login_passing.is_some();
                if sent.password.is_some() && sent.added && self.is_my_name(&sent.name) && !passing
                {
                    // Refused: of no more use.
                    self.credentials.password = None;
                }
                if sent.secret.is_none() && sent.password.is_none() && asks_for_password(line) {
                    self.credentials.password_wanted = Some(sent.name);
                }
                vec![message]
            }
            // Not quoted: a reply of a shape unknown may still hold a secret.
            (_, Ok(_)) => vec!["the server's answer to LOGIN does not read".to_string()],
        }
    }

    /// What a login says: registered or logged in, and the seat kept, with
    /// what takes it back.
    fn logged_in_lines(
        &self,
        name: &str,
        guest: bool,
        registered: bool,
        seat: Option<GameId>,
    ) -> Vec<String> {
        let name = untrusted::name(name);
        let mut shown = vec![match (registered, guest) {
            (true, _) => format!("registered {name}: the name needs its password from now on"),
            (false, true) => format!("logged in as {name} (guest)"),
            (false, false) => format!("logged in as {name}"),
        }];
        if let Some(game) = seat {
            shown.push(if self.credentials.takes_seats_back {
                format!("your seat in game {game} was kept: taking it back")
            } else {
                format!("your seat in game {game} was kept: join {game} takes it back")
            });
        }
        shown
    }

    fn on_event(&mut self, event: Event) -> Vec<String> {
        match event {
            Event::Start {
                game,
                variant,
                black,
                white,
                clock,
            } => self.on_start(game, variant, black, white, clock),
            Event::Board {
                game,
                cells,
                to_move,
            } => self.on_board(game, &cells, to_move),
            Event::Turn { game, side, .. } => self.on_turn(game, side),
            Event::Moved {
                game,
                side,
                played,
                clocks,
                ..
            } => self.on_moved(game, side, played, clocks),
            Event::Over {
                game,
                winner,
                black,
                white,
                reason,
            } => self.on_over(game, winner, black, white, reason),
            // Hidden before the chat is cut into lines, which could split one.
            Event::Chat { game, name, text } => chat_lines(game, &name, &self.hide_secrets(&text)),
            Event::Game {
                game,
                variant,
                black,
                white,
                status,
                ply,
            } => {
                let seat =
                    |s: Option<String>| s.map_or("(open)".to_string(), |n| untrusted::name(&n));
                vec![format!(
                    "game {game}: {variant}, {} (X) vs {} (O), {status}, ply {ply}",
                    seat(black),
                    seat(white)
                )]
            }
            Event::Player {
                name,
                status,
                rating,
                bot,
            } => {
                let rating = rating.map_or_else(String::new, |r| format!(", rated {r}"));
                let bot = if bot { " (bot)" } else { "" };
                vec![format!("{}{bot}: {status}{rating}", untrusted::name(&name))]
            }
            Event::Challenged {
                id,
                from,
                variant,
                side,
                clock,
                rated,
            } => vec![challenge_line(id, &from, variant, side, clock, rated)],
            Event::Declined { id, name, reason } => vec![declined_line(id, &name, reason)],
            Event::Rated {
                game,
                name,
                before,
                after,
            } => {
                let change = after - before;
                vec![format!(
                    "game {game}: {} is rated {after} ({change:+}, from {before})",
                    untrusted::name(&name)
                )]
            }
            Event::Rating(line) => {
                self.replies.top_lines += 1;
                vec![rating_line(&line)]
            }
            Event::Tourney(line) => vec![crate::play::tourney_view::listed(&line)],
            Event::TourneyNews { id, news } => vec![crate::play::tourney_view::news(id, &news)],
            Event::Standing(line) => vec![crate::play::tourney_view::standing(&line)],
            Event::Info(text) => {
                // The reason word, not the text: the server closes the
                // connection for want of a login.
                self.closed_for_login |= Reason::of(&text) == Some(Reason::LoginDeadline);
                vec![format!("* {}", escape(&text))]
            }
            Event::UndoAsked { game, name } => self.on_undo_asked(game, &name),
            Event::Undone { game, taken, .. } => self.on_undone(game, taken),
            Event::Clock {
                game,
                black_ms,
                white_ms,
                running,
            } => {
                self.on_clock(game, (black_ms, white_ms), running);
                Vec::new()
            }
            Event::History(summary) => {
                let line = describe_record(&summary);
                let quiet = self.quiet_records.contains(&summary.game);
                self.records.insert(summary.game, summary);
                if quiet { Vec::new() } else { vec![line] }
            }
        }
    }

    fn on_start(
        &mut self,
        id: GameId,
        variant: Variant,
        black: String,
        white: String,
        clock: Option<ClockSpec>,
    ) -> Vec<String> {
        let clock_text = clock.map_or("no clock".to_string(), |c| format!("clock {c}"));
        let line = format!(
            "game {id} ({variant}): {} (X) vs {} (O), {clock_text}",
            untrusted::name(&black),
            untrusted::name(&white)
        );
        let mut game = GameView {
            variant,
            black,
            white,
            game: Game::new(variant),
            over: false,
            last: None,
            clocks: clock.map(|c| (c.base_ms, c.base_ms)),
            clocks_at: clock.map(|_| self.now()),
            clocks_reported: false,
            moves: Vec::new(),
        };
        // A game followed before (a reconnect's JOIN) keeps its moves, and
        // the clock times of its last MOVED until the snapshot's CLOCK line
        // (which a server before CLOCK does not send).
        if let Some(known) = self.games.get(&id).filter(|g| {
            g.variant == game.variant && !g.over && g.black == game.black && g.white == game.white
        }) {
            if clock.is_some() && known.clocks.is_some() {
                (game.clocks, game.clocks_at) = (known.clocks, known.clocks_at);
            }
            (game.moves, game.last) = (known.moves.clone(), known.last);
        }
        let mine = !self.my_colors(&game).is_empty();
        self.games.insert(id, game);
        if mine || self.current.is_none() {
            self.current = Some(id);
        }
        vec![line]
    }

    fn on_board(&mut self, id: GameId, cells: &str, to_move: Option<Color>) -> Vec<String> {
        let Some(view) = self.games.get_mut(&id) else {
            return Vec::new();
        };
        let side = to_move.unwrap_or(view.game.to_move());
        match parse_board(&format!("{cells} {}", side.letter()), view.variant) {
            Ok(game) => view.game = game,
            Err(e) => return vec![format!("unreadable board: {}", escape(&e.to_string()))],
        }
        if to_move.is_none() {
            view.stop_clocks(self.now.unwrap_or_else(Instant::now));
            view.over = true;
        }
        self.render(id)
    }

    /// The board of game `id` with its status lines.
    pub fn render(&self, id: GameId) -> Vec<String> {
        let Some(view) = self.games.get(&id) else {
            return Vec::new();
        };
        let last = match view.last {
            Some(Move::Place(square)) => Some(square),
            _ => None,
        };
        let board_view = BoardView {
            last,
            show_legal: !view.over,
            color: self.style.color,
        };
        let mut lines = board(&view.game, &board_view);
        lines.extend(self.status_lines(id, view));
        lines
    }

    /// The line under a board: the players and their discs, the clocks,
    /// who is to move; cut (between those parts) into lines that fit an
    /// 80-column terminal, names of 20 characters and all.
    fn status_lines(&self, id: GameId, view: &GameView) -> Vec<String> {
        let counts = view.game.counts();
        let mut parts = vec![format!(
            "game {id}  X {} {}  O {} {}",
            untrusted::name(&view.black),
            counts.black,
            untrusted::name(&view.white),
            counts.white
        )];
        // Once over, the clocks are where they stopped, as the prompt has them.
        let known = view.clocks_reported || view.over;
        let clocks = view.clocks_now(self.now()).filter(|_| known);
        if let Some((black, white)) = clocks {
            parts.push(format!("clocks X {} O {}", clock(black), clock(white)));
        }
        if view.over {
            parts.push("game over".to_string());
        } else {
            let side = view.game.to_move();
            let yours = self.my_colors(view).contains(&side);
            parts.push(format!(
                "{side} to move{}",
                if yours { " (you)" } else { "" }
            ));
        }
        let mut lines: Vec<String> = Vec::new();
        for part in parts {
            match lines.last_mut() {
                Some(line) if line.len() + 2 + part.len() <= COLUMNS => {
                    line.push_str("  ");
                    line.push_str(&part);
                }
                _ => lines.push(part),
            }
        }
        lines
    }

    fn on_turn(&mut self, id: GameId, side: Color) -> Vec<String> {
        self.settles += 1;
        let Some(view) = self.games.get(&id) else {
            return Vec::new();
        };
        if !self.my_colors(view).contains(&side) {
            return Vec::new();
        }
        let legal: Vec<String> = view
            .game
            .legal_moves()
            .iter()
            .map(|s| s.to_string())
            .collect();
        if legal.is_empty() {
            vec![format!(
                "your move ({side}): no move, you must pass (type pass)"
            )]
        } else {
            vec![format!("your move ({side}): {}", legal.join(" "))]
        }
    }

    fn on_moved(
        &mut self,
        id: GameId,
        side: Color,
        played: Move,
        clocks: Option<(u64, u64)>,
    ) -> Vec<String> {
        let Some(view) = self.games.get_mut(&id) else {
            return Vec::new();
        };
        view.last = Some(played);
        view.moves.push(played);
        if clocks.is_some() {
            view.clocks = clocks;
            view.clocks_at = Some(self.now.unwrap_or_else(Instant::now));
            view.clocks_reported = true;
        }
        let who = untrusted::name(match side {
            Color::Black => &view.black,
            Color::White => &view.white,
        });
        match played {
            Move::Pass => vec![format!("{who} ({side}) passes")],
            Move::Place(square) => vec![format!("{who} ({side}) played {square}")],
        }
    }

    fn on_undo_asked(&self, id: GameId, name: &str) -> Vec<String> {
        if self.is_my_name(name) {
            return Vec::new();
        }
        vec![format!(
            "{} asks to take back their last move in game {id}: type undo to agree, \
             or play on to refuse",
            untrusted::name(name)
        )]
    }

    /// Moves were taken back: the `BOARD` that follows shows the position.
    fn on_undone(&mut self, id: GameId, taken: u32) -> Vec<String> {
        let Some(view) = self.games.get_mut(&id) else {
            return Vec::new();
        };
        let kept = view
            .moves
            .len()
            .saturating_sub(usize::try_from(taken).unwrap_or(usize::MAX));
        view.moves.truncate(kept);
        view.last = view.moves.last().copied();
        // The clocks go back too; the CLOCK after the BOARD says to what.
        view.clocks_reported = false;
        let plural = if taken == 1 { "" } else { "s" };
        vec![format!("{taken} move{plural} taken back in game {id}")]
    }

    /// The clocks as the server tells them: the running one counts down
    /// from now.
    fn on_clock(&mut self, id: GameId, left: (u64, u64), running: Option<Color>) {
        let now = self.now();
        if let Some(view) = self.games.get_mut(&id) {
            view.clocks = Some(left);
            view.clocks_at = running.map(|_| now);
            view.clocks_reported = true;
        }
    }

    fn on_over(
        &mut self,
        id: GameId,
        winner: Option<Color>,
        black: u32,
        white: u32,
        reason: EndReason,
    ) -> Vec<String> {
        self.settles += 1;
        self.overs += 1;
        let now = self.now();
        let Some(view) = self.games.get_mut(&id) else {
            return Vec::new();
        };
        view.stop_clocks(now);
        // A flag fall: the loser's time is gone, whatever the last tick said.
        if let (EndReason::Time, Some((black, white))) = (reason, view.clocks) {
            view.clocks = Some(match winner {
                Some(Color::Black) => (black, 0),
                Some(Color::White) => (0, white),
                None => (black, white),
            });
        }
        view.over = true;
        let result = match winner {
            Some(Color::Black) => format!("{} (X) wins", untrusted::name(&view.black)),
            Some(Color::White) => format!("{} (O) wins", untrusted::name(&view.white)),
            None => "draw".to_string(),
        };
        vec![format!(
            "game {id} over: {result}{} ({})",
            score_words(view.variant, black, white),
            reason.word()
        )]
    }
}

/// The scores of a result as shown after the winner (` 40-24`); none in
/// tic-tac-toe, where they only count the squares (the empty ones going
/// to the winner) and say nothing a person wants.
fn score_words(variant: Variant, black: u32, white: u32) -> String {
    if variant == Variant::TicTacToe {
        String::new()
    } else {
        format!(" {black}-{white}")
    }
}

/// The answer to `HINT`: the move and its score in the units of `flip
/// analyze` (discs; an exact score, as large as a proven result's, as the
/// final margin).
fn hint_line(mv: Move, score: i32, exact: bool, variant: Option<Variant>) -> String {
    // A server without the `exact` word still marks proven wins and losses
    // by their size.
    let exact = exact || score.abs() >= WIN_FACTOR;
    let phrase = score_phrase(score, exact, variant.unwrap_or(Variant::Othello));
    format!("hint: {mv} ({phrase})")
}

/// What an `OK` the client has no better words for shows.
fn ok_line(text: &str) -> Vec<String> {
    if text.is_empty() {
        vec!["ok".to_string()]
    } else {
        vec![format!("ok {}", escape(text))]
    }
}

/// `text` with every secret and password in `hidden` replaced by what
/// shows in its place.
fn hide_secrets(text: String, hidden: &[(String, &str)]) -> String {
    hidden.iter().fold(text, |text, (word, shown)| {
        if !word.is_empty() && text.contains(word.as_str()) {
            text.replace(word.as_str(), shown)
        } else {
            text
        }
    })
}

/// A challenge to the person, and how to answer it.
fn challenge_line(
    id: u64,
    from: &str,
    variant: Variant,
    side: flipline::protocol::SeatChoice,
    clock: Option<ClockSpec>,
    rated: bool,
) -> String {
    use flipline::protocol::SeatChoice;
    // The side is the challenger's: said beside each name, so that nobody
    // reads "as O" as their own colour.
    let (theirs, yours, drawn) = match side {
        SeatChoice::Black => (" (X)", " (O)", ""),
        SeatChoice::White => (" (O)", " (X)", ""),
        SeatChoice::Random => ("", "", "colours drawn at random, "),
    };
    let clock = clock.map_or("no clock".to_string(), |c| format!("clock {c}"));
    let rated = if rated { "rated" } else { "casual" };
    format!(
        "{}{theirs} challenges you{yours} to {variant} ({drawn}{clock}, {rated}): type accept {id} or decline {id}",
        untrusted::name(from)
    )
}

/// What became of a challenge, from the other party's side.
fn declined_line(id: u64, name: &str, reason: flipline::protocol::DeclineReason) -> String {
    use flipline::protocol::DeclineReason;
    let who = untrusted::name(name);
    match reason {
        DeclineReason::Timeout => format!("challenge {id} with {who} was not answered in time"),
        DeclineReason::Cancelled => format!("challenge {id}: {who} withdrew it"),
        DeclineReason::Offline => format!("challenge {id}: {who} went offline"),
        DeclineReason::Generic => format!("challenge {id}: {who} declined"),
        other => format!("challenge {id}: {who} declined ({other})"),
    }
}

/// A `RATING` line, for people.
fn rating_line(line: &flipline::protocol::RatingLine) -> String {
    let standing = line.standing();
    let games = if line.games == 1 { "game" } else { "games" };
    let bot = if line.bot { " (bot)" } else { "" };
    format!(
        "{}{bot} {}: {} (deviation {}, {} {games}, {standing})",
        untrusted::name(&line.name),
        line.variant,
        line.rating,
        line.rd,
        line.games
    )
}

/// One line about a stored game: players, status or result, and its moves.
fn describe_record(record: &GameSummary) -> String {
    let seat = |s: &Option<String>| s.as_deref().map_or("(open)".to_string(), untrusted::name);
    let (black, white) = (seat(&record.black), seat(&record.white));
    let standing = match &record.result {
        Some(result) => {
            let winner = match result.winner {
                Some(Color::Black) => format!("{black} (X) won"),
                Some(Color::White) => format!("{white} (O) won"),
                None => "a draw".to_string(),
            };
            format!(
                "{winner}{} ({})",
                score_words(record.variant, result.black, result.white),
                result.reason.word()
            )
        }
        None => record.status.to_string(),
    };
    let moves = flipline::notation::transcript_string(&record.moves);
    format!(
        "game {} ({}): {black} (X) vs {white} (O), {standing}, {} moves: {}",
        record.game,
        record.variant,
        record.moves.len(),
        if moves.is_empty() { "-" } else { &moves }
    )
}

#[cfg(test)]
mod tests {

    #[test]
    fn top_with_nobody_rated_and_a_new_tournament_are_put_in_words() {
        let mut view = View::new(Style::default());
        view.sent("TOP reversi");
        assert_eq!(
            feed(&mut view, &["OK"]),
            ["nobody is rated at reversi yet: rated games (seek reversi rated) give ratings"]
        );
        view.sent("RATING zed");
        view.sent("TOP");
        let shown = feed(
            &mut view,
            &[
                "RATING zed othello 1338 290 1 provisional bot",
                "OK",
                "RATING zed othello 1338 290 1 provisional bot",
                "OK",
            ],
        );
        assert_eq!(shown.len(), 3, "{shown:?}");
        assert_eq!(
            shown[2], shown[0],
            "the table's line, and no bare ok: {shown:?}"
        );
        view.sent("TOP");
        assert!(feed(&mut view, &["OK"])[0].starts_with("nobody is rated at othello"));
        view.sent("TOURNEY NEW swiss rounds 3");
        assert_eq!(
            feed(&mut view, &["OK 2"]),
            ["tournament 2 made: players type tourney join 2; tourney start 2 begins it"]
        );
    }

    #[test]
    fn a_challenge_says_which_colour_each_side_plays() {
        use flipline::protocol::SeatChoice;
        let line = |side| challenge_line(4, "ann", Variant::Othello, side, None, false);
        assert_eq!(
            line(SeatChoice::Black),
            "ann (X) challenges you (O) to othello (no clock, casual): type accept 4 or decline 4"
        );
        assert_eq!(
            line(SeatChoice::White),
            "ann (O) challenges you (X) to othello (no clock, casual): type accept 4 or decline 4"
        );
        assert_eq!(
            line(SeatChoice::Random),
            "ann challenges you to othello (colours drawn at random, no clock, casual): type accept 4 or decline 4"
        );
    }

    use super::*;
    use crate::untrusted::CHAT_MARKER;
    use crate::untrusted::test_text::{hostile_text, must_be_escaped};
    use flipline::protocol::GameStatus;
    use proptest::prelude::*;

    fn feed(view: &mut View, lines: &[&str]) -> Vec<String> {
        lines.iter().flat_map(|l| view.on_line(l)).collect()
    }

    #[test]
    fn a_game_is_followed_from_start_to_over() {
        let mut view = View::new(Style::default());
        view.sent("LOGIN ann");
        view.sent("NEW othello as X vs bot:1");
        let out = feed(
            &mut view,
            &[
                "HELLO flipline 1",
                "OK ann",
                "OK 4",
                "START 4 othello ann bot:1 -",
                "BOARD 4 ---------------------------OX------XO--------------------------- X",
                "TURN 4 X d3,c4,f5,e6",
            ],
        );
        assert!(
            out.contains(&"game 4 (othello): ann (X) vs bot:1 (O), no clock".to_string()),
            "{out:?}"
        );
        assert!(
            out.contains(&"your move (X): d3 c4 f5 e6".to_string()),
            "{out:?}"
        );
        assert!(view.my_turn());
        assert_eq!(view.legal_now().len(), 4);
        let out = feed(
            &mut view,
            &[
                "MOVED 4 X d3 4 1",
                "BOARD 4 -------------------X-------XX------XO--------------------------- O",
            ],
        );
        assert_eq!(out.first().map(String::as_str), Some("ann (X) played d3"));
        assert!(out.iter().any(|l| l.contains("[X]")), "{out:?}");
        assert!(!view.my_turn());
        let out = feed(&mut view, &["OVER 4 O 0 64 resign"]);
        assert_eq!(
            out,
            vec!["game 4 over: bot:1 (O) wins 0-64 (resign)".to_string()]
        );
        assert!(view.live_game().is_none());
    }

    #[test]
    fn challenges_ratings_and_take_backs_read_for_people() {
        let mut view = View::new(Style::default());
        view.sent("LOGIN ann");
        feed(&mut view, &["OK ann"]);
        view.sent("CHALLENGE bob rated");
        let out = feed(
            &mut view,
            &[
                "OK 3",
                "CHALLENGE 4 zed reversi O 5+3 rated",
                "DECLINED 3 bob later",
                "DECLINED 5 cy timeout",
                "RATING zed othello 1338 290 1 provisional bot",
                "PLAYER zed idle 1338 bot",
            ],
        );
        assert_eq!(
            out,
            [
                "challenge 3 made: the game starts if it is accepted (cancel 3 withdraws it)",
                "zed (O) challenges you (X) to reversi (clock 5+3, rated): type accept 4 or decline 4",
                "challenge 3: bob declined (later)",
                "challenge 5 with cy was not answered in time",
                "zed (bot) othello: 1338 (deviation 290, 1 game, provisional)",
                "zed (bot): idle, rated 1338",
            ]
        );
        view.sent("ACCEPT 4");
        feed(&mut view, &["OK 7", "START 7 reversi zed ann 5+3"]);
        assert_eq!(view.current, Some(7), "the accepted challenge's game");
        let out = feed(
            &mut view,
            &["OVER 7 X 40 24 resign", "RATED 7 ann 1500 1338"],
        );
        assert_eq!(
            out.last().map(String::as_str),
            Some("game 7: ann is rated 1338 (-162, from 1500)")
        );
    }

    #[test]
    fn a_history_line_is_kept_and_described() {
        let mut view = View::new(Style::default());
        view.sent("HISTORY 9");
        let out = feed(
            &mut view,
            &[
                "HISTORY 9 othello ann bot:2 - over O:20-44:resign f5d6c3",
                "OK",
            ],
        );
        assert_eq!(
            out,
            vec![
                "game 9 (othello): ann (X) vs bot:2 (O), bot:2 (O) won 20-44 (resign), 3 moves: f5d6c3"
                    .to_string()
            ]
        );
        let record = view.records.get(&9).unwrap();
        assert_eq!(record.moves.len(), 3);
        assert_eq!(record.status, GameStatus::Over);
        assert!(view.replies.pending.is_empty());
    }

    #[test]
    fn replies_are_read_as_answers_to_their_commands() {
        let mut view = View::new(Style::default());
        for command in [
            "LOGIN 42", "SEEK", "LIST", "frob", "MOVE d3", "JOIN 5", "REMATCH",
        ] {
            view.sent(command);
        }
        view.sent("  ");
        let out = feed(
            &mut view,
            &[
                "OK 42",
                "OK seeking",
                "OK 3",
                "ERR 400 unknown command 'frob'",
                "OK",
                "OK 5 O\r",
                "OK 9",
            ],
        );
        assert_eq!(
            out,
            [
                "logged in as 42",
                "ok seeking",
                "ok 3",
                "error 400: unknown command 'frob'",
                "ok 5 O",
                "ok 9",
            ]
        );
        assert_eq!(view.name.as_deref(), Some("42"));
        // JOIN's game is the current one; LIST's count and REMATCH's new game
        // (current once its START comes) are not.
        assert_eq!(view.current, Some(5));
        assert!(view.replies.pending.is_empty());
        assert!(view.replies.last_ok);
    }

    #[test]
    fn other_peoples_text_is_framed_and_escaped() {
        let mut view = View::new(Style::default());
        view.sent("NEW othello vs bot:1");
        view.sent("PING");
        let out = feed(
            &mut view,
            &[
                "OK 1",
                "START 1 othello ann e[ve -",
                "CHAT 1 ann ok 12",
                "CHAT 1 ann \rgame 1 over: you win",
                "CHAT 1 ann \u{202e}niw uoy\u{200b}",
                "INFO \u{1b}[2Jsee\u{2028}this",
                "ERR 409 name \u{1b}]0;title\u{7} in use",
                "NEWS \u{1b}[31mred",
                "OK pong\u{85}",
            ],
        );
        assert_eq!(
            out,
            [
                "ok 1",
                "game 1 (othello): ann (X) vs e\\u{5b}ve (O), no clock",
                "[1] <ann> ok 12",
                "[1] <ann> \\u{d}game 1 over: you win",
                "[1] <ann> \\u{202e}niw uoy\\u{200b}",
                "* \\u{1b}[2Jsee\\u{2028}this",
                // The protocol crate reads an error's message as one line.
                "error 409: name  ]0;title  in use",
                "server: NEWS \\u{1b}[31mred",
                "ok pong\\u{85}",
            ]
        );
    }

    fn secret(token: &str) -> GuestSecret {
        GuestSecret::new(token).unwrap_or_else(|| panic!("{token} is a secret"))
    }

    #[test]
    fn a_login_says_a_registration_apart_and_the_seat_kept() {
        let mut view = View::new(Style::default());
        view.sent("LOGIN ann tiger-tiger");
        assert_eq!(
            feed(&mut view, &["OK ann registered"]),
            ["registered ann: the name needs its password from now on"]
        );
        view.sent("LOGIN bob tiger-tiger");
        assert_eq!(feed(&mut view, &["OK bob"]), ["logged in as bob"]);
        // A script is told how to take the seat back.
        view.sent("LOGIN cy");
        let secret = "OK cy secret 0f3a9c seat 24";
        assert_eq!(
            feed(&mut view, &[secret]),
            [
                "logged in as cy (guest)",
                "your seat in game 24 was kept: join 24 takes it back"
            ]
        );
        assert_eq!(view.credentials.kept_seat, Some(24));
        assert!(view.to_send.is_empty());
        // A person's client takes it back.
        let mut view = View::new(Style::default());
        view.credentials.takes_seats_back = true;
        view.sent("LOGIN dee pw");
        assert_eq!(
            feed(&mut view, &["OK dee seat 7"]),
            [
                "logged in as dee",
                "your seat in game 7 was kept: taking it back"
            ]
        );
        assert_eq!(view.to_send, ["JOIN 7"]);
    }

    #[test]
    fn a_guest_keeps_its_secret_and_never_shows_it() {
        let mut view = View::new(Style::default());
        assert_eq!(view.prepare_send("LOGIN ann", |_| None), "LOGIN ann");
        let out = feed(&mut view, &["OK ann secret 0f3a9c"]);
        assert_eq!(out, ["logged in as ann (guest)"]);
        assert_eq!(view.credentials.secret, Some(secret("0f3a9c")));
        assert_eq!(
            std::mem::take(&mut view.credentials.secret_changes),
            [SecretChange::Keep("ann".into(), secret("0f3a9c"))]
        );
        assert_eq!(view.credentials.login_answer, Some(true));
        // Logging in again as the same guest shows the secret, and a reply
        // without one keeps it.
        assert_eq!(
            view.prepare_send("login ann", |_| None),
            "LOGIN ann secret 0f3a9c"
        );
        assert_eq!(
            view.prepare_send("LOGIN Ann", |_| None),
            "LOGIN Ann secret 0f3a9c",
            "a name in any case is the same name"
        );
        feed(&mut view, &["OK ann"]);
        assert_eq!(feed(&mut view, &["OK ann"]), ["logged in as ann (guest)"]);
        assert_eq!(view.credentials.secret, Some(secret("0f3a9c")));
        // Nothing shows it, not a raw line, not an error quoting it.
        let mut raw = View::new(Style {
            color: false,
            raw: true,
        });
        raw.sent("LOGIN ann");
        raw.sent("SAY x");
        let out = feed(
            &mut raw,
            &["OK ann secret 0f3a9c", "ERR 400 what is 0f3a9c"],
        );
        assert_eq!(out, ["OK ann secret <secret>", "ERR 400 what is <secret>"]);
        assert!(!format!("{raw:?}").contains("0f3a9c"));
        // A reply of a shape unknown is not quoted: it may hold a secret.
        view.sent("LOGIN ann");
        assert_eq!(
            feed(&mut view, &["OK ann secret 7e11 more"]),
            ["the server's answer to LOGIN does not read"]
        );
    }

    /// The plain `LOGIN` a refused secret left to send goes out and logs in
    /// with a new secret.
    fn logs_in_as_a_new_guest(view: &mut View) {
        let again = view.to_send.pop_front().unwrap_or_default();
        view.sent(&again);
        assert_eq!(
            feed(view, &["OK ann secret n3w"]),
            ["logged in as ann (guest)"]
        );
        assert_eq!(view.credentials.secret, Some(secret("n3w")));
        assert!(view.idle());
    }

    #[test]
    fn a_refused_secret_is_forgotten_and_a_new_guest_asked_for() {
        let mut view = View::new(Style::default());
        view.sent("LOGIN ann");
        feed(&mut view, &["OK ann secret 0ld5ecret"]);
        // The connection is lost; on the next the name is asked back.
        view.forget_pending();
        assert_eq!(
            view.prepare_send("LOGIN ann", |_| None),
            "LOGIN ann secret 0ld5ecret"
        );
        let out = feed(&mut view, &["ERR 401 no guest 'ann' holds that secret"]);
        assert_eq!(
            out,
            [
                "error 401: no guest 'ann' holds that secret",
                "the guest secret kept for ann was not accepted: logging in as a new guest"
            ]
        );
        assert_eq!(view.credentials.secret, None);
        assert_eq!(view.to_send, ["LOGIN ann"]);
        assert_eq!(view.credentials.login_answer, None);
        assert!(!view.idle(), "the plain LOGIN is still to be sent");
        logs_in_as_a_new_guest(&mut view);
    }

    #[test]
    fn a_refused_kept_secret_is_forgotten_and_a_new_guest_asked_for() {
        let mut view = View::new(Style::default());
        let sent = view.prepare_send("LOGIN ann", |name| {
            assert_eq!(name, "ann");
            Some(secret("0ld5ecret"))
        });
        assert_eq!(sent, "LOGIN ann secret 0ld5ecret");
        let out = feed(&mut view, &["ERR 401 no guest 'ann' holds that secret"]);
        assert_eq!(
            out,
            [
                "error 401: no guest 'ann' holds that secret",
                "the guest secret kept for ann was not accepted: logging in as a new guest"
            ]
        );
        assert_eq!(view.to_send, ["LOGIN ann"]);
        assert_eq!(view.credentials.login_answer, None);
        assert!(!view.idle(), "the plain LOGIN is still to be sent");
        assert_eq!(
            std::mem::take(&mut view.credentials.secret_changes),
            [SecretChange::Forget("ann".into())]
        );
        logs_in_as_a_new_guest(&mut view);
    }

    #[test]
    fn a_secret_typed_or_refused_otherwise_is_not_retried() {
        let mut view = View::new(Style::default());
        view.sent("LOGIN ann secret 0f3a");
        view.sent("LOGIN ann secret 0f3a");
        let out = feed(
            &mut view,
            &["ERR 401 wrong secret", "ERR 409 name 'ann' is in use"],
        );
        assert_eq!(
            out,
            [
                "error 401: wrong secret",
                "the guest secret for ann was not accepted",
                "error 409: name 'ann' is in use"
            ]
        );
        assert!(view.to_send.is_empty());
        assert_eq!(view.credentials.login_answer, Some(false));
        // A registered name has no secret: a kept one is dropped.
        view.sent("LOGIN ann tiger");
        assert_eq!(feed(&mut view, &["OK ann"]), ["logged in as ann"]);
        assert_eq!(view.credentials.secret, None);
        assert_eq!(
            view.credentials.secret_changes.last(),
            Some(&SecretChange::Forget("ann".into()))
        );
    }

    #[test]
    fn the_clocks_run_from_the_last_moved_and_stop_at_the_end() {
        use std::time::Duration;
        let t0 = Instant::now();
        let at = |ms| t0 + Duration::from_millis(ms);
        let mut view = View::new(Style::default());
        view.on_line_at("START 2 othello ann bob 1+0", at(0));
        view.on_line_at(&format!("BOARD 2 {START} X"), at(0));
        let game = |v: &View| {
            v.games
                .get(&2)
                .cloned()
                .unwrap_or_else(|| panic!("no game"))
        };
        assert_eq!(game(&view).clocks_now(at(1_500)), Some((58_500, 60_000)));
        assert!(view.clock_runs() && view.clocked_game_on());
        assert_eq!(
            view.clock_bar(at(1_500), false).as_deref(),
            Some("[X] 0:58.5  O  1:00.0  ")
        );
        view.on_line_at("MOVED 2 X d3 4 1 57000 60000", at(3_000));
        let shown = view.on_line_at(&format!("BOARD 2 {AFTER_D3} O"), at(3_000));
        assert!(
            shown.iter().any(|l| l.contains("clocks X 0:57.0 O 1:00.0")),
            "{shown:?}"
        );
        assert_eq!(game(&view).clocks_now(at(13_000)), Some((57_000, 50_000)));
        // O's flag falls: no MOVED, its time is 0 whatever the last tick said.
        view.on_line_at(&format!("BOARD 2 {AFTER_D3} -"), at(62_900));
        view.on_line_at("OVER 2 X 61 3 time", at(63_000));
        assert_eq!(game(&view).clocks_now(at(99_000)), Some((57_000, 0)));
        assert!(!view.clock_runs() && !view.clocked_game_on());
        // A resignation keeps the times as they stood.
        view.on_line_at("START 3 othello ann bob 1+0", at(0));
        view.on_line_at(&format!("BOARD 3 {START} X"), at(0));
        view.on_line_at(&format!("BOARD 3 {START} -"), at(4_000));
        view.on_line_at("OVER 3 O 2 62 resign", at(4_000));
        let third = view.games.get(&3).and_then(|g| g.clocks_now(at(9_000)));
        assert_eq!(third, Some((56_000, 60_000)));
    }

    #[test]
    fn a_reconnects_snapshot_keeps_the_clocks_and_moves_known() {
        use std::time::Duration;
        let t0 = Instant::now();
        let at = |ms| t0 + Duration::from_millis(ms);
        let mut view = View::new(Style::default());
        view.on_line_at("START 2 othello ann bob 1+0", at(0));
        view.on_line_at(&format!("BOARD 2 {START} X"), at(0));
        view.on_line_at("MOVED 2 X d3 4 1 57000 60000", at(3_000));
        view.on_line_at(&format!("BOARD 2 {AFTER_D3} O"), at(3_000));
        // The connection drops; JOIN's snapshot comes 5 s after the move.
        view.on_line_at("START 2 othello ann bob 1+0", at(8_000));
        view.on_line_at(&format!("BOARD 2 {AFTER_D3} O"), at(8_000));
        let game = view
            .games
            .get(&2)
            .cloned()
            .unwrap_or_else(|| panic!("no game"));
        assert_eq!(game.clocks_now(at(8_000)), Some((57_000, 55_000)));
        assert_eq!(game.moves.len(), 1);
    }

    const START: &str = "---------------------------OX------XO---------------------------";

    /// The clock part of the status line under the board `shown` ends with.
    fn board_clocks(shown: &[String]) -> Option<String> {
        let status = shown.last()?;
        let at = status.find("clocks ")?;
        Some(status.get(at..)?.split("  ").next()?.to_string())
    }

    #[test]
    fn a_board_never_shows_clocks_older_than_the_prompts() {
        use std::time::Duration;
        let t0 = Instant::now();
        let at = |ms| t0 + Duration::from_millis(ms);
        let mut view = View::new(Style::default());
        view.sent("LOGIN ann");
        view.on_line("OK ann");
        // A snapshot (JOIN, a reconnect): its BOARD comes before its CLOCK.
        view.on_line_at("START 2 othello ann bob 5+0", at(0));
        let shown = view.on_line_at(&format!("BOARD 2 {AFTER_D3} O"), at(0));
        assert_eq!(board_clocks(&shown), None, "{shown:?}");
        view.on_line_at("CLOCK 2 282400 300000 O", at(0));
        assert_eq!(
            view.clock_bar(at(0), false).as_deref(),
            Some(" X  4:42.4 [O] 5:00.0  ")
        );
        // After a move the board and the prompt give the same times.
        view.on_line_at("MOVED 2 O c5 3 3 282400 290000", at(10_000));
        let shown = view.on_line_at(&format!("BOARD 2 {AFTER_D3} X"), at(10_000));
        assert_eq!(
            board_clocks(&shown).as_deref(),
            Some("clocks X 4:42.4 O 4:50.0")
        );
        assert_eq!(
            view.clock_bar(at(10_000), false).as_deref(),
            Some("[X] 4:42.4  O  4:50.0  ")
        );
        // A take-back: its BOARD comes before the CLOCK that resets them.
        view.on_line_at("UNDONE 2 1 1", at(12_000));
        let shown = view.on_line_at(&format!("BOARD 2 {AFTER_D3} O"), at(12_000));
        assert_eq!(board_clocks(&shown), None, "{shown:?}");
    }

    #[test]
    fn the_status_line_fits_80_columns_with_the_longest_names() {
        let (black, white) = ("a".repeat(20), "b".repeat(20));
        let mut view = View::new(Style::default());
        view.sent(&format!("LOGIN {black}"));
        view.on_line(&format!("OK {black}"));
        view.on_line(&format!("START 12345 othello {black} {white} 60+30"));
        view.on_line("CLOCK 12345 3600000 3600000 -");
        let shown = view.on_line(&format!("BOARD 12345 {START} X"));
        let status: Vec<&String> = shown.iter().skip(10).collect();
        assert_eq!(status.len(), 2, "{shown:#?}");
        assert!(shown.iter().all(|l| l.len() <= COLUMNS), "{shown:#?}");
        assert_eq!(
            status.get(1).map(|l| l.as_str()),
            Some("clocks X 1:00:00 O 1:00:00  X to move (you)")
        );
        // Short names keep one line.
        let mut view = View::new(Style::default());
        view.on_line("START 1 othello ann bob -");
        let shown = view.on_line(&format!("BOARD 1 {START} X"));
        assert_eq!(
            shown.last().map(String::as_str),
            Some("game 1  X ann 2  O bob 2  X to move")
        );
    }

    #[test]
    fn replies_and_results_read_as_words() {
        let mut view = View::new(Style::default());
        view.sent("NEW othello");
        view.sent("NEW othello vs bot:3");
        view.sent("HINT");
        view.sent("HINT");
        view.sent("HINT");
        view.sent("HINT");
        let out = feed(
            &mut view,
            &[
                "OK 5",
                "OK 6",
                "START 6 othello ann bot:3 -",
                "OK d3 -125",
                "OK c4 120000",
                "OK pass 0",
                "OK f5 0 exact",
            ],
        );
        assert_eq!(
            out,
            [
                "game 5 made: the opponent types join 5 (spectators watch 5)",
                "ok 6",
                "game 6 (othello): ann (X) vs bot:3 (O), no clock",
                "hint: d3 (-1.25 discs)",
                "hint: c4 (+12 discs, exact)",
                "hint: pass (+0.00 discs)",
                "hint: f5 (+0 discs, exact)",
            ]
        );
        // Tic-tac-toe's scores only count squares: a draw is a draw.
        view.on_line("START 7 tictactoe ann bob -");
        view.current = Some(7);
        view.sent("HINT");
        assert_eq!(
            feed(&mut view, &["OK b2 0 exact"]),
            ["hint: b2 (a draw with best play)"]
        );
        assert_eq!(
            feed(&mut view, &["OVER 7 draw 5 4 normal"]),
            ["game 7 over: draw (normal)"]
        );
        assert_eq!(
            feed(&mut view, &["OVER 6 O 20 44 resign"]),
            ["game 6 over: bot:3 (O) wins 20-44 (resign)"]
        );
    }

    #[test]
    fn a_password_logged_in_with_is_kept_for_the_next_login_and_never_shown() {
        let mut view = View::new(Style {
            color: false,
            raw: true,
        });
        view.sent("LOGIN ann tiger7");
        view.sent("SAY x");
        let out = feed(&mut view, &["OK ann", "ERR 400 what is tiger7"]);
        assert_eq!(out, ["OK ann", "ERR 400 what is <password>"]);
        assert!(view.credentials.password.is_some());
        assert!(!format!("{view:?}").contains("tiger7"));
        // A reconnect's plain LOGIN of the name shows it again.
        view.forget_pending();
        assert_eq!(view.prepare_send("LOGIN ann", |_| None), "LOGIN ann tiger7");
        assert_eq!(view.prepare_send("LOGIN bob", |_| None), "LOGIN bob");
        // Refused (changed meanwhile), it is forgotten.
        feed(&mut view, &["ERR 401 wrong password for 'ann'"]);
        assert!(view.credentials.password.is_none());
        assert_eq!(view.credentials.password_wanted, None);
    }

    #[test]
    fn a_plain_login_of_a_registered_name_asks_for_its_password() {
        let mut view = View::new(Style::default());
        view.sent("LOGIN ann");
        let out = feed(
            &mut view,
            &["ERR 401 'ann' is registered: LOGIN ann <password> [password-needed]"],
        );
        assert_eq!(
            out,
            ["error 401: 'ann' is registered: LOGIN ann <password> [password-needed]"]
        );
        assert_eq!(view.credentials.password_wanted.as_deref(), Some("ann"));
        assert_eq!(view.credentials.login_answer, Some(false));
        // Not for a wrong password, nor for a secret refused.
        view.credentials.password_wanted = None;
        view.sent("LOGIN ann tiger");
        feed(
            &mut view,
            &["ERR 401 'ann' is registered: LOGIN ann <password> [password-needed]"],
        );
        assert_eq!(view.credentials.password_wanted, None);
        view.sent("LOGIN ann secret 0f3a");
        feed(
            &mut view,
            &["ERR 401 'ann' is registered: LOGIN ann <password> [password-needed]"],
        );
        assert_eq!(view.credentials.password_wanted, None);
    }

    proptest! {
        #[test]
        fn only_chat_lines_start_with_the_chat_marker_and_no_secret_shows(
            lines in prop::collection::vec(server_line(), 1..12),
            commands in prop::collection::vec(command(), 12),
        ) {
            let mut plain = View::new(Style::default());
            let mut raw = View::new(Style { color: false, raw: true });
            for view in [&mut plain, &mut raw] {
                view.sent("LOGIN ann");
                view.on_line(&format!("OK ann secret {SECRET}"));
            }
            for (line, command) in lines.iter().zip(&commands) {
                plain.sent(command);
                raw.sent(command);
                let chat = matches!(ServerLine::parse(line), ServerLine::Event(Event::Chat { .. }));
                for (view, is_raw) in [(&mut plain, false), (&mut raw, true)] {
                    let held = |v: &View| v.credentials.secret == Some(secret(SECRET));
                    let was_held = held(view);
                    let shown = view.on_line(line);
                    let hidden = was_held || held(view);
                    // A chat cut into lines must not split the secret either.
                    let said: String = shown
                        .iter()
                        .filter_map(|l| l.split_once("> ").map(|(_, text)| text))
                        .collect::<String>()
                        .replace(' ', "");
                    prop_assert!(!(hidden && chat && said.contains(SECRET)), "{:?}", shown);
                    for shown in shown {
                        let marked = shown.starts_with(CHAT_MARKER);
                        prop_assert_eq!(marked, chat && !is_raw, "{:?} -> {:?}", line, shown);
                        prop_assert!(!shown.chars().any(must_be_escaped), "{:?}", shown);
                        prop_assert!(!(hidden && shown.contains(SECRET)), "{:?}", shown);
                    }
                }
            }
        }
    }

    /// The secret the views of the property test hold.
    const SECRET: &str = "T0pS3cret";

    /// Server lines of every kind with hostile text where text or names go
    /// (and the secret held, now and then).
    fn server_line() -> impl Strategy<Value = String> {
        let token = || hostile_text().prop_map(|t| t.replace(' ', ""));
        let game = 1..3u64;
        prop_oneof![
            hostile_text().prop_map(|t| format!("CHAT 1 eve {t}{SECRET}")),
            hostile_text().prop_map(|t| format!("ERR 401 {t}{SECRET}")),
            Just(format!("OK ann secret {SECRET}")),
            (game.clone(), token(), hostile_text())
                .prop_map(|(g, n, t)| format!("CHAT {g} {n} {t}")),
            hostile_text().prop_map(|t| format!("INFO {t}")),
            hostile_text().prop_map(|t| format!("ERR 400 {t}")),
            hostile_text().prop_map(|t| format!("OK {t}")),
            token().prop_map(|n| format!("OK {n}")),
            (game.clone(), token(), token())
                .prop_map(|(g, b, w)| format!("START {g} othello {b} {w} -")),
            game.clone().prop_map(|g| format!("MOVED {g} X d3 4 1")),
            game.clone().prop_map(|g| format!("BOARD {g} {AFTER_D3} O")),
            (game.clone(), token()).prop_map(|(g, c)| format!("BOARD {g} {c} X")),
            game.clone()
                .prop_map(|g| format!("OVER {g} X 40 24 resign")),
            (game.clone(), token()).prop_map(|(g, n)| format!("GAME {g} othello {n} - open 0")),
            token().prop_map(|n| format!("PLAYER {n} idle")),
            (game, token(), token()).prop_map(|(g, b, w)| {
                format!("HISTORY {g} othello {b} {w} - over X:40-24:normal -")
            }),
            hostile_text(),
        ]
    }

    const AFTER_D3: &str = "-------------------X-------XX------XO---------------------------";

    fn command() -> impl Strategy<Value = &'static str> {
        prop::sample::select(vec![
            "LOGIN ann",
            "NEW",
            "SEEK",
            "JOIN 1",
            "WATCH 1",
            "LIST",
            "WHO",
            "MOVE d3",
            "HINT",
            "REMATCH",
            "LEAVE",
            "PING",
            "QUIT",
            "frob",
        ])
    }

    #[test]
    fn raw_style_shows_lines_as_they_are() {
        let mut view = View::new(Style {
            color: false,
            raw: true,
        });
        assert_eq!(
            feed(&mut view, &["TURN 1 X pass"]),
            vec!["TURN 1 X pass".to_string()]
        );
    }
}
