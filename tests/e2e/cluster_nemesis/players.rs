//! The players of the fault-injection run: pairs of registered names, one
//! game at a time, each pair's two connections on different nodes. A
//! game's position is read from the store (the truth every node shares),
//! the player to move sends a random legal move, and every definite reply
//! is recorded. A connection that closes or hangs is dropped and made
//! again to the next node, which takes the seat back (`JOIN`).

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use flipline::{Color, Game, Move, Variant};
use flipline_tests::*;

/// How long a command may wait for its reply before its connection is
/// given up (a node paused, or cut off and not yet stopped).
const ASK_WITHIN: Duration = Duration::from_secs(15);

/// The nodes' addresses (a node started again listens elsewhere).
pub type Addrs = Arc<Mutex<Vec<SocketAddr>>>;

/// What a move's reply said.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Said {
    /// `OK`: played.
    Played,
    /// `ERR 503`: not played.
    NotPlayed,
}

/// A move sent, and its definite reply: game, ply (0 for the first move),
/// the move, the reply, and when it came.
#[derive(Clone, Debug)]
pub struct Reply {
    pub game: u64,
    pub ply: usize,
    pub mv: Move,
    pub said: Said,
    pub at: Instant,
}

/// A game's stored state, as the store says.
pub struct Stored {
    pub over: bool,
    pub moves: Vec<Move>,
}

/// Reads a game's stored state (`None`: the store did not answer).
pub type ReadGame = Arc<dyn Fn(u64) -> Option<Stored> + Send + Sync>;

/// One registered name and its connection, if it has one.
struct Player {
    name: String,
    password: String,
    client: Option<Client>,
    /// The node it connects to next, as an index into the addresses.
    next: usize,
    nodes: Addrs,
    /// Why its last connection failed, if it did.
    refused: Option<String>,
}

impl Player {
    /// The reply to `line`, connecting (and taking the seat at `game`
    /// back) first if need be; `None` if no definite reply came.
    fn ask(&mut self, line: &str, game: Option<u64>) -> Option<String> {
        if self.client.is_none() {
            self.connect(game)?;
        }
        let client = self.client.as_mut()?;
        match client.try_command(line, ASK_WITHIN) {
            Some((_, reply)) => Some(reply),
            None => {
                self.client = None;
                None
            }
        }
    }

    /// Connects to the next node and logs in; takes the seat at `game`.
    fn connect(&mut self, game: Option<u64>) -> Option<()> {
        let addr = {
            let nodes = self.nodes.lock().unwrap_or_else(PoisonError::into_inner);
            let addr = *nodes.get(self.next % nodes.len().max(1))?;
            self.next += 1;
            addr
        };
        self.refused = Some(format!("no connection to {addr}"));
        let mut client = Client::try_connect(addr, Duration::from_secs(2))?;
        let login = format!("LOGIN {} {}", self.name, self.password);
        let (_, reply) = client.try_command(&login, ASK_WITHIN)?;
        if !reply.starts_with("OK") {
            self.refused = Some(format!("LOGIN at {addr}: {reply}"));
            return None;
        }
        if let Some(game) = game {
            // Refused (the game being taken over, or over): the next
            // command, or the store, says what to do.
            client.try_command(&format!("JOIN {game}"), ASK_WITHIN)?;
        }
        self.client = Some(client);
        self.refused = None;
        Some(())
    }
}

/// Two players playing games one after the other until `stop`.
pub struct Pair {
    black: Player,
    white: Player,
    rng: Rng,
    read: ReadGame,
    /// Every definite reply to a move.
    pub replies: Vec<Reply>,
    /// The games played.
    pub games: Vec<u64>,
    /// The last replies other than `OK` (for a run that fails).
    pub heard: std::collections::VecDeque<String>,
}

impl Pair {
    /// Pair `i`: black's first node `i`, white's the next.
    pub fn new(i: usize, nodes: &Addrs, read: ReadGame, seed: u64) -> Pair {
        let player = |side: &str, next: usize| Player {
            name: format!("nz{i}{side}"),
            password: format!("pw-{i}-{side}"),
            client: None,
            next,
            nodes: Arc::clone(nodes),
            refused: None,
        };
        Pair {
            black: player("x", i),
            white: player("o", i + 1),
            rng: Rng(seed),
            read,
            replies: Vec::new(),
            games: Vec::new(),
            heard: std::collections::VecDeque::new(),
        }
    }

    /// Plays until `stop`; `played` hears when each move is acknowledged.
    pub fn play(mut self, stop: &AtomicBool, played: &dyn Fn(Instant)) -> Pair {
        while !stop.load(Ordering::Acquire) {
            match self.games.last().copied() {
                Some(game) if !self.is_over(game) => {
                    if let Some(at) = self.step(game) {
                        played(at);
                    }
                }
                _ => self.make_game(),
            }
        }
        self
    }

    fn is_over(&self, game: u64) -> bool {
        (self.read)(game).is_some_and(|stored| stored.over)
    }

    /// A new game: black makes it, white joins it.
    fn make_game(&mut self) {
        let made = self.black.ask("NEW othello as X", None);
        self.hear("NEW", made.as_deref());
        let Some(made) = made else {
            return;
        };
        let Some(game) = made
            .strip_prefix("OK ")
            .and_then(|rest| rest.split(' ').next())
            .and_then(|g| g.parse().ok())
        else {
            return;
        };
        for _ in 0..4 {
            let joined = self.white.ask(&format!("JOIN {game}"), None);
            self.hear("JOIN", joined.as_deref());
            match joined {
                Some(reply) if reply.starts_with("OK") => {
                    self.games.push(game);
                    return;
                }
                Some(reply) if reply.starts_with("ERR 404") => break,
                _ => {}
            }
        }
        // Never joined: black leaves it (or it went with a dead node).
        let _ = self.black.ask("LEAVE", None);
    }

    /// One move of `game`, from the position the store holds; when it
    /// was acknowledged, if it was.
    fn step(&mut self, game: u64) -> Option<Instant> {
        let stored = (self.read)(game)?;
        let mut position = Game::new(Variant::Othello);
        for mv in &stored.moves {
            assert!(
                position.apply(*mv).is_ok(),
                "game {game} stored {stored_moves:?}",
                stored_moves = stored.moves
            );
        }
        let legal: Vec<_> = position.legal_moves().iter().collect();
        let mv = match legal.is_empty() {
            true => Move::Pass,
            false => Move::Place(self.rng.pick(&legal)),
        };
        let command = match mv {
            Move::Pass => "PASS".to_string(),
            Move::Place(square) => format!("MOVE {square}"),
        };
        let mover = match position.to_move() {
            Color::Black => &mut self.black,
            Color::White => &mut self.white,
        };
        let reply = mover.ask(&command, Some(game));
        // Its seat not taken back yet (the JOIN after it connected came
        // while the game was being taken over): again.
        let rejoined = (reply.as_deref())
            .filter(|r| r.starts_with("ERR 403 you are not in a game"))
            .map(|_| mover.ask(&format!("JOIN {game}"), None));
        self.hear(&command, reply.as_deref());
        if let Some(joined) = rejoined {
            self.hear("JOIN", joined.as_deref());
        }
        let said = match reply.as_deref() {
            Some("OK") => Said::Played,
            Some(reply) if reply.starts_with("ERR 503") => Said::NotPlayed,
            // Moved on, not its turn, not seated: the store says.
            _ => return None,
        };
        let ply = stored.moves.len();
        let at = Instant::now();
        self.replies.push(Reply {
            game,
            ply,
            mv,
            said,
            at,
        });
        (said == Said::Played).then_some(at)
    }

    /// Keeps `reply` to `command` among the last heard, unless `OK`.
    fn hear(&mut self, command: &str, reply: Option<&str>) {
        if reply != Some("OK") {
            let why = [&self.black.refused, &self.white.refused];
            self.heard
                .push_back(format!("{command} -> {reply:?} {why:?}"));
            if self.heard.len() > 6 {
                self.heard.pop_front();
            }
        }
    }
}
