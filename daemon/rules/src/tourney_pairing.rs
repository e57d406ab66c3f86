//! Tournaments, as rules: who plays whom each round and the standings.
//!
//! - Round robin: every pair meets once, in `n - 1` rounds (the circle
//!   method; with an odd field one player sits out each round), and plays
//!   two games, colours swapped, from the same start.
//! - Swiss: each round pairs players with equal or near points, never a pair
//!   twice, black to whoever has had it less; with an odd field the lowest
//!   player who has not had a bye sits out, for a point.
//! - Standings: a win is 1 point, a draw ½, ties broken by disc difference.
//!
//! Points are kept in halves, so that no float decides a rank.

use std::collections::HashSet;

use super::Name;

/// A game of the tournament as it ended: who had black and white, and the
/// discs each finished with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Played {
    /// Black's name.
    pub black: Name,
    /// White's name.
    pub white: Name,
    /// Black's discs at the end.
    pub black_discs: u32,
    /// White's discs at the end.
    pub white_discs: u32,
}

/// One player's line in the standings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Standing {
    /// The player.
    pub name: Name,
    /// Points, in halves (a win is 2, a draw 1, a bye 2).
    pub half_points: u32,
    /// Games played.
    pub games: u32,
    /// Discs won less discs lost, over every game.
    pub disc_difference: i64,
}

impl Standing {
    /// The points as the protocol writes them: `2`, `1.5`.
    pub fn points(&self) -> String {
        match self.half_points % 2 {
            0 => (self.half_points / 2).to_string(),
            _ => format!("{}.5", self.half_points / 2),
        }
    }
}

/// The rounds of a round robin among `players`: each a list of pairs, the
/// first of each pair black in the pair's first game.
pub fn round_robin(players: &[Name]) -> Vec<Vec<(Name, Name)>> {
    let mut seats: Vec<Option<&Name>> = players.iter().map(Some).collect();
    if seats.len() % 2 == 1 {
        seats.push(None);
    }
    let n = seats.len();
    let mut rounds = Vec::new();
    for round in 0..n.saturating_sub(1) {
        let mut pairs = Vec::new();
        for i in 0..n / 2 {
            let (a, b) = (
                seats.get(i).copied().flatten(),
                seats.get(n - 1 - i).copied().flatten(),
            );
            if let (Some(a), Some(b)) = (a, b) {
                // Alternate who is black first, so nobody always starts.
                let pair = if (round + i) % 2 == 0 { (a, b) } else { (b, a) };
                pairs.push((Name::clone(pair.0), Name::clone(pair.1)));
            }
        }
        rounds.push(pairs);
        // The circle method: the first seat stays, the others turn.
        if n > 2 {
            let last = seats.remove(n - 1);
            seats.insert(1, last);
        }
    }
    rounds
}

/// The standings of `players` after `games` and `byes`, best first.
pub fn standings(players: &[Name], games: &[Played], byes: &[Name]) -> Vec<Standing> {
    let mut table: Vec<Standing> = players
        .iter()
        .map(|name| Standing {
            name: Name::clone(name),
            half_points: 0,
            games: 0,
            disc_difference: 0,
        })
        .collect();
    let mut add = |name: &str, half: u32, difference: i64, game: bool| {
        if let Some(line) = table.iter_mut().find(|s| s.name.eq_ignore_ascii_case(name)) {
            line.half_points += half;
            line.disc_difference += difference;
            line.games += u32::from(game);
        }
    };
    for game in games {
        let difference = i64::from(game.black_discs) - i64::from(game.white_discs);
        let (black, white) = match difference.signum() {
            1 => (2, 0),
            -1 => (0, 2),
            _ => (1, 1),
        };
        add(&game.black, black, difference, true);
        add(&game.white, white, -difference, true);
    }
    for bye in byes {
        add(bye, 2, 0, false);
    }
    table.sort_by(|a, b| {
        (b.half_points, b.disc_difference)
            .cmp(&(a.half_points, a.disc_difference))
            .then_with(|| a.name.cmp(&b.name))
    });
    table
}

/// A Swiss round: the games (black, white) and who sits out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SwissRound {
    /// Each game, black first.
    pub games: Vec<(Name, Name)>,
    /// The player who sits out this round, with an odd field.
    pub bye: Option<Name>,
}

/// The next Swiss round among `players`, after `games` and `byes`: `None` if
/// no pairing avoids a rematch (the field has played out), or none is found
/// within a bounded search.
pub fn swiss_round(players: &[Name], games: &[Played], byes: &[Name]) -> Option<SwissRound> {
    let ranked: Vec<Name> = (standings(players, games, byes).into_iter())
        .map(|s| s.name)
        .collect();
    let met: HashSet<(String, String)> = games
        .iter()
        .flat_map(|g| {
            let (a, b) = (g.black.to_ascii_lowercase(), g.white.to_ascii_lowercase());
            [(a.clone(), b.clone()), (b, a)]
        })
        .collect();
    let mut field = ranked.clone();
    let bye = if field.len() % 2 == 1 {
        // The lowest-ranked who has not sat out yet; everyone has: the lowest.
        let had_bye = |n: &Name| byes.iter().any(|b| b.eq_ignore_ascii_case(n));
        let index = field
            .iter()
            .rposition(|n| !had_bye(n))
            .unwrap_or(field.len() - 1);
        Some(field.remove(index))
    } else {
        None
    };
    let mut budget = PAIRING_BUDGET;
    let pairs = pair_down(&field, &met, &mut budget)?;
    let games = pairs
        .into_iter()
        .map(|(a, b)| colours(a, b, games))
        .collect();
    Some(SwissRound { games, bye })
}

/// Pairings tried before a round is given up as impossible: going back over
/// every pairing of a field that has nearly played out would take
/// factorial time, and the lobby would wait for it.
const PAIRING_BUDGET: u32 = 100_000;

/// Pairs `field` (ranked) top down, each with the best-ranked one it has not
/// met, going back when the rest cannot be paired, within `budget` tries.
fn pair_down(
    field: &[Name],
    met: &HashSet<(String, String)>,
    budget: &mut u32,
) -> Option<Vec<(Name, Name)>> {
    let Some((first, rest)) = field.split_first() else {
        return Some(Vec::new());
    };
    for (i, other) in rest.iter().enumerate() {
        *budget = budget.checked_sub(1)?;
        let key = (first.to_ascii_lowercase(), other.to_ascii_lowercase());
        if met.contains(&key) {
            continue;
        }
        let remaining: Vec<Name> = (rest.iter().enumerate())
            .filter(|&(j, _)| j != i)
            .map(|(_, n)| Name::clone(n))
            .collect();
        if let Some(mut pairs) = pair_down(&remaining, met, budget) {
            pairs.insert(0, (Name::clone(first), Name::clone(other)));
            return Some(pairs);
        }
    }
    None
}

/// Black to whichever of `a` and `b` has had it less (`a` on a tie: the
/// better ranked).
fn colours(a: Name, b: Name, games: &[Played]) -> (Name, Name) {
    let blacks = |n: &Name| {
        games
            .iter()
            .filter(|g| g.black.eq_ignore_ascii_case(n))
            .count()
    };
    if blacks(&b) < blacks(&a) {
        (b, a)
    } else {
        (a, b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn names(n: usize) -> Vec<Name> {
        (0..n).map(|i| Name::from(format!("p{i}"))).collect()
    }

    /// The games of `pairs`, black winning by `margin` discs each time.
    fn results(pairs: &[(Name, Name)], margin: u32) -> Vec<Played> {
        pairs
            .iter()
            .map(|(black, white)| Played {
                black: Name::clone(black),
                white: Name::clone(white),
                black_discs: 32 + margin / 2,
                white_discs: 32 - margin / 2,
            })
            .collect()
    }

    #[test]
    fn a_four_player_round_robin_meets_every_pair_once_in_three_rounds() {
        let rounds = round_robin(&names(4));
        assert_eq!(rounds.len(), 3);
        let pairs: Vec<(Name, Name)> = rounds.concat();
        assert_eq!(pairs.len(), 6, "each pair once; two games each make 12");
        let met: HashSet<(Name, Name)> = pairs
            .iter()
            .map(|(a, b)| {
                if a < b {
                    (a.clone(), b.clone())
                } else {
                    (b.clone(), a.clone())
                }
            })
            .collect();
        assert_eq!(met.len(), 6);
        for round in &rounds {
            let seated: HashSet<&Name> = round.iter().flat_map(|(a, b)| [a, b]).collect();
            assert_eq!(seated.len(), 4, "everyone plays every round");
        }
        assert_eq!(
            round_robin(&names(5)).len(),
            5,
            "an odd field sits one out a round"
        );
    }

    #[test]
    fn standings_count_points_then_disc_difference() {
        let [a, b, c] = [Name::from("a"), Name::from("b"), Name::from("c")];
        let games = vec![
            Played {
                black: a.clone(),
                white: b.clone(),
                black_discs: 40,
                white_discs: 24,
            },
            Played {
                black: c.clone(),
                white: a.clone(),
                black_discs: 32,
                white_discs: 32,
            },
            Played {
                black: b.clone(),
                white: c.clone(),
                black_discs: 33,
                white_discs: 31,
            },
        ];
        let table = standings(&[a, b, c], &games, &[]);
        let lines: Vec<(String, String, u32, i64)> = table
            .iter()
            .map(|s| (s.name.to_string(), s.points(), s.games, s.disc_difference))
            .collect();
        assert_eq!(
            lines,
            [
                ("a".into(), "1.5".into(), 2, 16),
                ("b".into(), "1".into(), 2, -14),
                ("c".into(), "0.5".into(), 2, -2),
            ]
        );
    }

    #[test]
    fn a_six_player_three_round_swiss_plays_nine_games_and_no_pair_twice() {
        let players = names(6);
        let mut games = Vec::new();
        for _ in 0..3 {
            let round = swiss_round(&players, &games, &[]).unwrap();
            assert_eq!((round.games.len(), round.bye.clone()), (3, None));
            games.extend(results(&round.games, 10));
        }
        assert_eq!(games.len(), 9);
        let table = standings(&players, &games, &[]);
        assert_eq!(table.iter().map(|s| s.games).sum::<u32>(), 18);
        let total: u32 = table.iter().map(|s| s.half_points).sum();
        assert_eq!(total, 18, "one point a game");
    }

    #[test]
    fn a_field_that_has_played_out_is_told_so_quickly() {
        // 40 players in two groups of 19 and 21 who have met everyone of the
        // other group and nobody of their own: each group would have to pair
        // among itself, and an odd group cannot. Going back over every way
        // to try would take ages; the search gives up within its budget.
        let players = names(40);
        let across: Vec<(Name, Name)> = (0..19)
            .flat_map(|a| (19..40).map(move |b| (a, b)))
            .map(|(a, b)| (players[a].clone(), players[b].clone()))
            .collect();
        let games = results(&across, 2);
        assert_eq!(swiss_round(&players, &games, &[]), None);
    }

    proptest! {
        #[test]
        fn swiss_rounds_never_pair_twice_and_give_byes_to_the_odd_one_out(
            n in 2usize..9, rounds in 1usize..5, margins in prop::collection::vec(0u32..20, 40)
        ) {
            let players = names(n);
            let (mut games, mut byes): (Vec<Played>, Vec<Name>) = (Vec::new(), Vec::new());
            let mut margins = margins.into_iter().cycle();
            for _ in 0..rounds {
                let Some(round) = swiss_round(&players, &games, &byes) else { break };
                prop_assert_eq!(round.bye.is_some(), n % 2 == 1);
                let mut seated: Vec<&Name> = round.games.iter().flat_map(|(a, b)| [a, b]).collect();
                seated.extend(round.bye.iter());
                seated.sort();
                seated.dedup();
                prop_assert_eq!(seated.len(), n, "everyone plays or sits out, once");
                for (a, b) in &round.games {
                    let again = games.iter().any(|g| (g.black == *a && g.white == *b) || (g.black == *b && g.white == *a));
                    prop_assert!(!again, "{} and {} met twice", a, b);
                }
                games.extend(results(&round.games, margins.next().unwrap_or(0)));
                byes.extend(round.bye);
            }
        }
    }
}
