//! `flip engine --protocol gtp`: flip's engine behind GTP, with the commands
//! Edax answers for Othello (`boardsize 8`, `clear_board`, `play`, `genmove`,
//! `undo`, `showboard`, `time_settings`, `time_left`, ...). A state machine:
//! one command line in, its response out; whatever the line, the answer is a
//! response (`?` for what does not read), never a panic.
//!
//! Othello's passes: a `play` or `genmove` for the side not to move is taken
//! as the pass of the side to move first when that side has no move (as Edax
//! and Egaroucid take it), so a controller may leave passes out.

use std::time::Duration;

use flipline::engine;
use flipline::notation::cells_string;
use flipline::{Color, Game, Move, Variant};

use super::gtp_wire::{Request, parse_color, parse_request, parse_vertex, response_lines, vertex};
use super::{Answer, Clock, timed};

/// The commands this engine knows, as `list_commands` gives them.
const COMMANDS: [&str; 15] = [
    "protocol_version",
    "name",
    "version",
    "known_command",
    "list_commands",
    "quit",
    "boardsize",
    "clear_board",
    "komi",
    "play",
    "genmove",
    "undo",
    "showboard",
    "time_settings",
    "time_left",
];

/// GTP's time settings (section 4.2: Canadian byo-yomi), in seconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct TimeSettings {
    main: u64,
    byo_yomi: u64,
    stones: u64,
}

/// What `time_left` last said for one side: seconds left in the current
/// period, and the stones left in it (0 in the main time).
#[derive(Clone, Copy, Debug, PartialEq)]
struct TimeLeft {
    seconds: f64,
    stones: u64,
}

/// The engine's side of a GTP session.
pub struct GtpEngine {
    game: Game,
    /// The positions before each `play` and `genmove`, for `undo`.
    history: Vec<Game>,
    level: u8,
    settings: Option<TimeSettings>,
    left: [Option<TimeLeft>; 2],
}

/// What a command leaves for its response: a result, or an error message.
type Outcome = Result<Vec<String>, String>;

impl GtpEngine {
    /// A session at the start position, playing at `level` (its depth and
    /// time budget; a clock from `time_left` can only shorten the time).
    pub fn new(level: u8) -> GtpEngine {
        GtpEngine {
            game: Game::new(Variant::Othello),
            history: Vec::new(),
            level,
            settings: None,
            left: [None, None],
        }
    }

    /// The response to one line (nothing for a line GTP ignores).
    pub fn handle(&mut self, line: &str, clock: &mut dyn Clock) -> Answer {
        let Some(request) = parse_request(line) else {
            return Answer::default();
        };
        let outcome = self.run(&request, clock);
        let (success, result) = match outcome {
            Ok(result) => (true, result),
            Err(message) => (false, vec![message]),
        };
        Answer {
            lines: response_lines(request.id.as_deref(), success, &result),
            notes: Vec::new(),
            quit: success && request.name == "quit",
        }
    }

    fn run(&mut self, request: &Request, clock: &mut dyn Clock) -> Outcome {
        let args: Vec<&str> = request.args.iter().map(String::as_str).collect();
        match request.name.as_str() {
            "protocol_version" => one("2"),
            "name" => one("flip"),
            "version" => one(env!("CARGO_PKG_VERSION")),
            "known_command" => one(known(&args)),
            "list_commands" => Ok(COMMANDS.iter().map(|c| c.to_string()).collect()),
            "quit" => Ok(Vec::new()),
            "boardsize" => boardsize(&args),
            "clear_board" => self.clear_board(),
            "komi" => komi(&args),
            "play" => self.play(&args),
            "genmove" => self.genmove(&args, clock),
            "undo" => self.undo(),
            "showboard" => Ok(board_lines(&self.game)),
            "time_settings" => self.time_settings(&args),
            "time_left" => self.time_left(&args),
            _ => Err("unknown command".to_string()),
        }
    }

    fn clear_board(&mut self) -> Outcome {
        self.game = Game::new(Variant::Othello);
        self.history.clear();
        self.left = [None, None];
        Ok(Vec::new())
    }

    fn play(&mut self, args: &[&str]) -> Outcome {
        let [color, vertex] = args else {
            return Err("syntax error".to_string());
        };
        let color = parse_color(color).ok_or("invalid color")?;
        let mv = parse_vertex(vertex).ok_or("invalid coordinate")?;
        let mut next = self.to_move_as(color).ok_or("illegal move")?;
        next.apply(mv).map_err(|_| "illegal move")?;
        self.history.push(self.game);
        self.game = next;
        Ok(Vec::new())
    }

    fn genmove(&mut self, args: &[&str], clock: &mut dyn Clock) -> Outcome {
        let [color] = args else {
            return Err("syntax error".to_string());
        };
        let color = parse_color(color).ok_or("invalid color")?;
        if self.game.is_over() {
            return one("pass");
        }
        let mut next = self.to_move_as(color).ok_or("wrong color")?;
        let budget = self.budget(&next);
        let (choice, _) = timed(clock, budget, |stop| {
            engine::choose(&next, self.level, 0, stop)
        });
        let mv = choice.map_or(Move::Pass, |c| c.mv);
        next.apply(mv)
            .map_err(|e| format!("the engine found no legal move: {e}"))?;
        self.history.push(self.game);
        self.game = next;
        one(&vertex(mv))
    }

    /// The position with `color` to move: the current one, or the one after
    /// the forced pass of the side to move; `None` when `color` may not move.
    fn to_move_as(&self, color: Color) -> Option<Game> {
        let mut game = self.game;
        if game.to_move() != color {
            game.apply(Move::Pass).ok()?;
        }
        Some(game)
    }

    fn undo(&mut self) -> Outcome {
        self.game = self.history.pop().ok_or("cannot undo")?;
        Ok(Vec::new())
    }

    fn time_settings(&mut self, args: &[&str]) -> Outcome {
        let [main, byo_yomi, stones] = args else {
            return Err("syntax error".to_string());
        };
        let number = |w: &str| w.parse::<u64>().map_err(|_| "syntax error".to_string());
        self.settings = Some(TimeSettings {
            main: number(main)?,
            byo_yomi: number(byo_yomi)?,
            stones: number(stones)?,
        });
        self.left = [None, None];
        Ok(Vec::new())
    }

    fn time_left(&mut self, args: &[&str]) -> Outcome {
        let [color, seconds, stones] = args else {
            return Err("syntax error".to_string());
        };
        let color = parse_color(color).ok_or("invalid color")?;
        let seconds = seconds
            .parse::<f64>()
            .ok()
            .filter(|s| s.is_finite() && *s >= 0.0);
        let stones = stones.parse::<u64>().ok();
        let (Some(seconds), Some(stones)) = (seconds, stones) else {
            return Err("syntax error".to_string());
        };
        self.left[side_index(color)] = Some(TimeLeft { seconds, stones });
        Ok(Vec::new())
    }

    /// The time for a move in `game`: the level's budget, or less when the
    /// clock (`time_left`, else `time_settings`) leaves less.
    fn budget(&self, game: &Game) -> Duration {
        let level = engine::level(self.level).time_budget();
        let empties = 64 - game.counts().black - game.counts().white;
        let left = self.left[side_index(game.to_move())];
        match clock_share(self.settings, left, empties) {
            Some(share) => level.min(share),
            None => level,
        }
    }
}

/// What the clock allows one move: within a byo-yomi period its time over
/// the stones left; in the main time, the time (less a reserve) over the
/// moves the side may still have to make, plus a byo-yomi move's share.
/// `None` without a limit (no settings, or GTP's "byo-yomi time and no
/// stones": no time limit).
fn clock_share(
    settings: Option<TimeSettings>,
    left: Option<TimeLeft>,
    empties: u32,
) -> Option<Duration> {
    let settings = settings.unwrap_or_default();
    if settings.byo_yomi > 0 && settings.stones == 0 {
        return None;
    }
    let (seconds, stones) = match left {
        Some(TimeLeft { seconds, stones }) => (seconds, stones),
        None if settings.main > 0 || settings.stones > 0 => (settings.main as f64, 0),
        None => return None,
    };
    let share = if stones > 0 {
        seconds / stones as f64
    } else {
        let moves = f64::from(empties / 2 + 2);
        let byo_yomi = settings.byo_yomi as f64 / settings.stones.max(1) as f64;
        (seconds * 0.9 - 0.1).max(0.0) / moves + byo_yomi * 0.9
    };
    Duration::try_from_secs_f64(share * 0.9).ok()
}

fn side_index(color: Color) -> usize {
    match color {
        Color::Black => 0,
        Color::White => 1,
    }
}

fn one(text: &str) -> Outcome {
    Ok(vec![text.to_string()])
}

fn known(args: &[&str]) -> &'static str {
    match args {
        [name] if COMMANDS.contains(name) => "true",
        _ => "false",
    }
}

fn boardsize(args: &[&str]) -> Outcome {
    let [size] = args else {
        return Err("syntax error".to_string());
    };
    match size.parse::<u32>() {
        Ok(8) => Ok(Vec::new()),
        Ok(_) => Err("unacceptable size".to_string()),
        Err(_) => Err("boardsize not an integer".to_string()),
    }
}

/// Othello has no komi; a controller made for Go may send one all the same.
fn komi(args: &[&str]) -> Outcome {
    match args {
        [value] if value.parse::<f64>().is_ok() => Ok(Vec::new()),
        _ => Err("syntax error".to_string()),
    }
}

/// `showboard`: the columns, the rows (OBF's `X`, `O`, `-`), and who moves.
fn board_lines(game: &Game) -> Vec<String> {
    let cells: Vec<char> = cells_string(game).chars().collect();
    let mut lines = vec![String::new(), "  A B C D E F G H".to_string()];
    for (row, squares) in cells.chunks(8).enumerate() {
        let shown: Vec<String> = squares.iter().map(char::to_string).collect();
        lines.push(format!("{} {}", row + 1, shown.join(" ")));
    }
    let counts = game.counts();
    let state = if game.is_over() {
        "game over".to_string()
    } else {
        format!("{} to move", game.to_move())
    };
    lines.push(format!("{state} (X {} O {})", counts.black, counts.white));
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_clock_shortens_a_move_and_no_limit_leaves_the_level() {
        let absolute = Some(TimeSettings {
            main: 60,
            byo_yomi: 0,
            stones: 0,
        });
        let share = clock_share(absolute, None, 60).unwrap();
        assert!(
            share > Duration::from_millis(1000) && share < Duration::from_secs(2),
            "{share:?}"
        );
        let low = Some(TimeLeft {
            seconds: 0.5,
            stones: 0,
        });
        assert!(clock_share(absolute, low, 20).unwrap() < Duration::from_millis(50));
        let byo_yomi = Some(TimeLeft {
            seconds: 10.0,
            stones: 5,
        });
        let per_stone = clock_share(None, byo_yomi, 30).unwrap();
        assert!(per_stone.abs_diff(Duration::from_millis(1800)) < Duration::from_millis(1));
        let unlimited = Some(TimeSettings {
            main: 0,
            byo_yomi: 5,
            stones: 0,
        });
        assert_eq!(clock_share(unlimited, low, 20), None);
        assert_eq!(clock_share(None, None, 20), None);
    }
}
