//! The tutorial's bot in Rust, with the standard library only: logs in,
//! seeks a game of othello, answers each TURN of its side (a corner when it
//! can, else the first legal move), prints the result and quits.
//! Usage: tutorial_bot [HOST:PORT] [NAME]

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;

const CORNERS: [&str; 4] = ["a1", "h1", "a8", "h8"];

fn main() -> std::io::Result<()> {
    let mut args = std::env::args().skip(1);
    let server = args.next().unwrap_or_else(|| "127.0.0.1:7341".to_string());
    let name = args.next().unwrap_or_else(|| "rustbot".to_string());
    let stream = TcpStream::connect(&server)?;
    let mut out = stream.try_clone()?;
    writeln!(out, "LOGIN {name}")?;
    writeln!(out, "SEEK othello")?;
    // game -> the side this bot plays there, X or O
    let mut sides: HashMap<String, &str> = HashMap::new();
    for line in BufReader::new(stream).lines() {
        let line = line?;
        let words: Vec<&str> = line.split_whitespace().collect();
        match words[..] {
            // START <game> <variant> <black> <white> <clock>
            ["START", game, _, black, ..] => {
                let side = if black == name { "X" } else { "O" };
                sides.insert(game.to_string(), side);
            }
            // TURN <game> <side> <moves|pass>
            ["TURN", game, side, moves] if sides.get(game) == Some(&side) => {
                let moves: Vec<&str> = moves.split(',').collect();
                let corner = moves.iter().copied().find(|m| CORNERS.contains(m));
                match corner.or(moves.first().copied()) {
                    Some("pass") | None => writeln!(out, "PASS")?,
                    Some(square) => writeln!(out, "MOVE {square}")?,
                }
            }
            // OVER <game> <winner> <black> <white> <how>
            ["OVER", game, winner, black, white, how, ..] => {
                println!("game {game} over: {winner} {black}-{white} ({how})");
                writeln!(out, "QUIT")?;
            }
            ["ERR", ..] => eprintln!("{line}"),
            _ => {}
        }
    }
    Ok(())
}
