//! The bare baseline for `flip-bench load`: a tokio line relay that answers the
//! same commands with lines of the same shapes as flipd, with no game logic, no
//! actors and no rules. flipd's figures are reported as a ratio to it, so that
//! they survive a noisy machine. It is a benchmark aid, not a server to play on.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use clap::Args;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;

#[derive(Args, Debug, Clone)]
pub struct BaselineArgs {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:7342")]
    listen: String,
    /// Worker threads.
    #[arg(long, default_value_t = 2)]
    threads: usize,
}

/// Plies after which a relayed "game" ends, about an Othello game's length.
const GAME_PLIES: u32 = 60;
/// The board and moves every relayed line carries: shapes, not positions.
const CELLS: &str = "---------------------------OX------XO---------------------------";
const MOVES: &str = "d3,c4,f5,e6";

type Outbox = mpsc::Sender<Arc<str>>;

/// Two connections relaying moves to each other.
struct Table {
    game: u64,
    seats: [Outbox; 2],
    /// Plies played; even means black (seat 0) is to move.
    ply: Mutex<u32>,
}

/// A connection's place: its table and seat, once paired.
type Place = Arc<Mutex<Option<(Arc<Table>, usize)>>>;

struct Waiting {
    name: String,
    outbox: Outbox,
    place: Place,
}

#[derive(Default)]
struct Shared {
    waiting: Mutex<Option<Waiting>>,
    next_game: AtomicU64,
}

/// Serves until the process is stopped.
pub fn run(args: &BaselineArgs) -> Result<(), String> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(args.threads.max(1))
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    runtime.block_on(async {
        let listener = TcpListener::bind(&args.listen)
            .await
            .map_err(|e| format!("cannot listen on {}: {e}", args.listen))?;
        let addr = listener.local_addr().map_err(|e| e.to_string())?;
        eprintln!("baseline relay listening on {addr}");
        let shared = Arc::new(Shared::default());
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                continue;
            };
            tokio::spawn(connection(stream, Arc::clone(&shared)));
        }
    })
}

async fn connection(stream: TcpStream, shared: Arc<Shared>) {
    let _ = stream.set_nodelay(true);
    let (read, mut write) = stream.into_split();
    let (outbox, mut queue) = mpsc::channel::<Arc<str>>(512);
    tokio::spawn(async move {
        while let Some(text) = queue.recv().await {
            if write.write_all(text.as_bytes()).await.is_err() {
                break;
            }
        }
    });
    let _ = outbox.send(Arc::from("HELLO flipline 1\n")).await;
    let place: Place = Arc::default();
    let mut name = String::new();
    let mut lines = BufReader::new(read).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        let mut words = line.split_whitespace();
        let keyword = words.next().unwrap_or("").to_ascii_uppercase();
        let reply = match keyword.as_str() {
            "LOGIN" => {
                name = words.next().unwrap_or("anon").to_string();
                format!("OK {name}\n")
            }
            "SEEK" => seek(&shared, &name, &outbox, &place),
            "MOVE" | "PASS" => relay(&place, words.next().unwrap_or("pass")),
            "PING" => "OK pong\n".to_string(),
            "QUIT" => break,
            _ => "ERR 400 unknown command\n".to_string(),
        };
        if outbox.send(Arc::from(reply)).await.is_err() {
            break;
        }
    }
}

/// Pairs with the waiting seeker, or waits. Returns the reply.
fn seek(shared: &Shared, name: &str, outbox: &Outbox, place: &Place) -> String {
    let mut waiting = shared.waiting.lock().unwrap_or_else(|e| e.into_inner());
    let Some(other) = waiting.take() else {
        *waiting = Some(Waiting {
            name: name.to_string(),
            outbox: outbox.clone(),
            place: Arc::clone(place),
        });
        return "OK seeking\n".to_string();
    };
    drop(waiting);
    let game = shared.next_game.fetch_add(1, Ordering::Relaxed) + 1;
    let table = Arc::new(Table {
        game,
        seats: [other.outbox.clone(), outbox.clone()],
        ply: Mutex::new(0),
    });
    *other.place.lock().unwrap_or_else(|e| e.into_inner()) = Some((Arc::clone(&table), 0));
    *place.lock().unwrap_or_else(|e| e.into_inner()) = Some((Arc::clone(&table), 1));
    let start = format!(
        "START {game} othello {} {name} -\nBOARD {game} {CELLS} X\nTURN {game} X {MOVES}\n",
        other.name
    );
    broadcast(&table, &start);
    format!("OK {game}\n")
}

/// Relays a move to both seats when it is the sender's turn.
fn relay(place: &Place, square: &str) -> String {
    let seated = place.lock().unwrap_or_else(|e| e.into_inner()).clone();
    let Some((table, seat)) = seated else {
        return "ERR 403 you are not in a game\n".to_string();
    };
    let mut ply = table.ply.lock().unwrap_or_else(|e| e.into_inner());
    if *ply % 2 != seat as u32 {
        return "ERR 403 not your turn\n".to_string();
    }
    *ply += 1;
    let game = table.game;
    let (side, next) = if seat == 0 { ("X", "O") } else { ("O", "X") };
    let mut events = format!("MOVED {game} {side} {square} 4 1\nBOARD {game} {CELLS} {next}\n");
    if *ply >= GAME_PLIES {
        events.push_str(&format!(
            "BOARD {game} {CELLS} -\nOVER {game} X 40 24 normal\n"
        ));
        *place.lock().unwrap_or_else(|e| e.into_inner()) = None;
    } else {
        events.push_str(&format!("TURN {game} {next} {MOVES}\n"));
    }
    drop(ply);
    // The mover gets its OK and then the events, the other seat the events.
    if let Some(other) = table.seats.get(1 - seat) {
        let _ = other.try_send(Arc::from(events.as_str()));
    }
    format!("OK\n{events}")
}

fn broadcast(table: &Table, text: &str) {
    let text: Arc<str> = Arc::from(text);
    for seat in &table.seats {
        let _ = seat.try_send(Arc::clone(&text));
    }
}
