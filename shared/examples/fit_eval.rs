//! Fits the endgame weights of the evaluation (`shared/src/engine/eval.rs`) to the
//! exact scores of positions the solver solves: positions 12 to 24 empties from
//! the end of games played by a noisy one-ply player, the evaluation's features,
//! and a least-squares fit of weights that are linear in the number of empties.
//!
//! `cargo run --release -p flipline --example fit_eval -- 600 data.txt 1 12,13,14`
//! solves 600 positions at each listed number of empties (default: every even
//! number from 12 to 24) from games seeded with 1, appends them to `data.txt` (one
//! line a position: empties, score, features) and prints the fitted weights at 12
//! and 24 empties; with 0 positions it only fits the file.

use flipline::board8::{flips, moves};
use flipline::engine::eval::{Evaluate, FEATURES, Heuristic, features};
use flipline::engine::{Solver, Tt};
use flipline::game::mix64;
use std::io::Write;

fn after(x: u32, p: u64, o: u64) -> (u64, u64) {
    let f = flips(x, p, o);
    (o ^ f, p ^ f ^ (1 << x))
}

fn squares(mut b: u64) -> Vec<u32> {
    let mut v = Vec::new();
    while b != 0 {
        v.push(b.trailing_zeros());
        b &= b - 1;
    }
    v
}

/// A position `empties` from the end of a game of a noisy one-ply player.
fn position(empties: u32, rnd: &mut impl FnMut() -> u64) -> Option<(u64, u64)> {
    let (mut p, mut o) = (0x0000_0008_1000_0000u64, 0x0000_0010_0800_0000u64);
    while 64 - (p | o).count_ones() > empties {
        let legal = squares(moves(p, o));
        if legal.is_empty() {
            if moves(o, p) == 0 {
                return None;
            }
            (p, o) = (o, p);
            continue;
        }
        let x = if rnd() % 100 < 15 {
            legal[(rnd() % legal.len() as u64) as usize]
        } else {
            *legal.iter().max_by_key(|&&x| {
                let (np, no) = after(x, p, o);
                -Heuristic.evaluate(np, no) + (rnd() % 300) as i32
            })?
        };
        (p, o) = after(x, p, o);
    }
    (moves(p, o) != 0).then_some((p, o))
}

fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().collect();
    let per: usize = args.get(1).map_or(0, |s| s.parse().unwrap_or(0));
    let path = args
        .get(2)
        .cloned()
        .unwrap_or_else(|| "fit_data.txt".to_string());
    let mut seed: u64 = args.get(3).map_or(1, |s| s.parse().unwrap_or(1));
    let mut rnd = move || {
        seed = mix64(seed.wrapping_add(0x9E37_79B9_7F4A_7C15));
        seed
    };
    if per > 0 {
        let mut out = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .map_err(|e| format!("{path}: {e}"))?;
        let mut tt = Tt::new(20);
        let buckets: Vec<u32> = match args.get(4) {
            Some(list) => list.split(',').filter_map(|e| e.parse().ok()).collect(),
            None => (12..=24).step_by(2).collect(),
        };
        for empties in buckets {
            let mut done = 0;
            while done < per {
                let Some((p, o)) = position(empties, &mut rnd) else {
                    continue;
                };
                tt.clear();
                let mut stop = || false;
                let Some(s) = Solver::<false>::new(&mut tt, &mut stop).solve(p, o) else {
                    continue;
                };
                let f = features(p, o);
                let f: Vec<String> = f.iter().map(|v| v.to_string()).collect();
                writeln!(out, "{empties} {} {}", s.score, f.join(" "))
                    .map_err(|e| e.to_string())?;
                done += 1;
            }
            eprintln!("{empties} empties: {per} positions");
        }
    }
    fit(&path)
}

/// Least squares over every line of the file: each feature and the constant get a
/// weight at 12 and at 24 empties, linear in between.
fn fit(path: &str) -> Result<(), String> {
    const N: usize = 2 * (FEATURES + 1);
    let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
    let mut ata = vec![[0f64; N]; N];
    let mut atb = [0f64; N];
    let mut rows = Vec::new();
    for line in text.lines() {
        let v: Vec<f64> = line
            .split_whitespace()
            .map(|t| t.parse().unwrap_or(0.0))
            .collect();
        if v.len() != FEATURES + 2 {
            continue;
        }
        let t = (v[0] - 12.0) / 12.0;
        let mut row = [0f64; N];
        for i in 0..=FEATURES {
            let f = if i < FEATURES { v[2 + i] } else { 1.0 };
            row[2 * i] = f * (1.0 - t);
            row[2 * i + 1] = f * t;
        }
        for i in 0..N {
            for j in 0..N {
                ata[i][j] += row[i] * row[j];
            }
            atb[i] += row[i] * v[1];
        }
        rows.push((row, v[1]));
    }
    for (i, r) in ata.iter_mut().enumerate() {
        r[i] += 1.0; // a little ridge: the parity column is nearly collinear
    }
    let w = solve(ata, atb);
    let sse: f64 = rows
        .iter()
        .map(|(r, s)| (r.iter().zip(&w).map(|(a, b)| a * b).sum::<f64>() - s).powi(2))
        .sum();
    println!(
        "{} positions, rms error {:.2} discs",
        rows.len(),
        (sse / rows.len() as f64).sqrt()
    );
    let at = |k: usize| -> Vec<String> {
        (0..=FEATURES)
            .map(|i| format!("{:.0}", 100.0 * w[2 * i + k]))
            .collect()
    };
    println!(
        "const FIT_12: [i32; FEATURES + 1] = [{}];",
        at(0).join(", ")
    );
    println!(
        "const FIT_24: [i32; FEATURES + 1] = [{}];",
        at(1).join(", ")
    );
    Ok(())
}

#[allow(clippy::needless_range_loop)]
fn solve(mut a: Vec<[f64; 26]>, mut b: [f64; 26]) -> Vec<f64> {
    let n = b.len();
    for col in 0..n {
        let piv = (col..n)
            .max_by(|&x, &y| a[x][col].abs().total_cmp(&a[y][col].abs()))
            .unwrap_or(col);
        a.swap(col, piv);
        b.swap(col, piv);
        for r in 0..n {
            if r != col && a[col][col] != 0.0 {
                let f = a[r][col] / a[col][col];
                for k in col..n {
                    a[r][k] -= f * a[col][k];
                }
                b[r] -= f * b[col];
            }
        }
    }
    (0..n)
        .map(|i| if a[i][i] != 0.0 { b[i] / a[i][i] } else { 0.0 })
        .collect()
}
