//! `LIST` and `WHO` across a cluster's nodes: each node answers a page of
//! what it holds; the pages merge into one, in the order one node gives
//! (games by number, names by name), each game or name once (a player
//! seated at another node's game is known to both), cut at a page with the
//! line that asks for the rest, as one node's answer is.

use std::collections::HashSet;

use flipline::protocol::{Event, GameId};

/// The most `GAME` or `PLAYER` lines one `LIST` or `WHO` answers with: a
/// bound on what a request can make the daemon queue for a client.
pub const PAGE: usize = 100;

/// The prefix of the `INFO` line that says how to list the rest.
const MORE: &str = "more: ";

/// The `GAME` lines of `pages` merged, the first `page` of them, then
/// `INFO more: <rest(the next game)>` if more are left; other `INFO` lines
/// (a node that did not answer) after the games.
pub fn merge_games(
    pages: Vec<Vec<Event>>,
    page: usize,
    rest: impl FnOnce(GameId) -> String,
) -> Vec<Event> {
    let key = |event: &Event| match event {
        Event::Game { game, .. } => Some(*game),
        _ => None,
    };
    merge(pages, page, key, |game| game.to_string(), rest)
}

/// The `PLAYER` lines of `pages` merged as [`merge_games`] merges games,
/// by name, a name once whatever its case.
pub fn merge_players(
    pages: Vec<Vec<Event>>,
    page: usize,
    rest: impl FnOnce(String) -> String,
) -> Vec<Event> {
    let key = |event: &Event| match event {
        Event::Player { name, .. } => Some(name.clone()),
        _ => None,
    };
    merge(pages, page, key, |name| name.to_ascii_lowercase(), rest)
}

fn merge<K: Ord + Clone>(
    pages: Vec<Vec<Event>>,
    page: usize,
    key: impl Fn(&Event) -> Option<K>,
    folded: impl Fn(&K) -> String,
    rest: impl FnOnce(K) -> String,
) -> Vec<Event> {
    let mut entries = Vec::new();
    let mut notes = Vec::new();
    for event in pages.into_iter().flatten() {
        match (key(&event), &event) {
            (Some(k), _) => entries.push((k, event)),
            // Each node's own page marker: the merged page has its own.
            (None, Event::Info(text)) if text.starts_with(MORE) => {}
            (None, _) => notes.push(event),
        }
    }
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    let mut seen = HashSet::new();
    entries.retain(|(k, _)| seen.insert(folded(k)));
    let next = entries.get(page).map(|(k, _)| k.clone());
    let mut lines: Vec<Event> = entries.into_iter().take(page).map(|(_, e)| e).collect();
    lines.extend(notes);
    if let Some(next) = next {
        lines.push(Event::Info(format!("{MORE}{}", rest(next))));
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use flipline::Variant;
    use flipline::protocol::{GameStatus, PlayerStatus};
    use proptest::prelude::*;

    fn game(id: GameId) -> Event {
        Event::Game {
            game: id,
            variant: Variant::Othello,
            black: Some("ann".into()),
            white: None,
            status: GameStatus::Open,
            ply: 0,
        }
    }

    fn player(name: &str) -> Event {
        Event::Player {
            name: name.into(),
            status: PlayerStatus::Idle,
            rating: None,
            bot: false,
        }
    }

    fn ids(lines: &[Event]) -> Vec<GameId> {
        lines
            .iter()
            .filter_map(|e| match e {
                Event::Game { game, .. } => Some(*game),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn pages_merge_in_order_once_each_with_the_rest_asked_for() {
        let a = vec![
            game(1),
            game(4),
            game(9),
            Event::Info("more: LIST from 12".into()),
        ];
        let b = vec![game(2), game(4), game(7)];
        let note = Event::Info("node c did not answer".into());
        let merged = merge_games(vec![a, b, vec![note.clone()]], 4, |next| {
            format!("LIST from {next}")
        });
        assert_eq!(ids(&merged), [1, 2, 4, 7]);
        assert_eq!(merged[4], note);
        assert_eq!(merged[5], Event::Info("more: LIST from 9".into()));
        assert_eq!(merged.len(), 6);
        let whole = merge_games(vec![vec![game(3)], vec![game(1)]], 4, |_| unreachable!());
        assert_eq!(ids(&whole), [1, 3]);
    }

    #[test]
    fn a_name_known_to_two_nodes_is_listed_once() {
        let merged = merge_players(
            vec![
                vec![player("bob"), player("ann")],
                vec![player("Ann"), player("cy")],
            ],
            10,
            |_| unreachable!(),
        );
        let names: Vec<&str> = merged
            .iter()
            .filter_map(|e| match e {
                Event::Player { name, .. } => Some(name.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(names, ["Ann", "bob", "cy"]);
    }

    proptest! {
        /// Whatever the pages: games in order, each once, at most a page,
        /// and a rest asked for exactly when some game was left out.
        #[test]
        fn merged_games_are_ordered_unique_and_paged(
            pages in prop::collection::vec(prop::collection::vec(0..40u64, 0..20), 0..4),
            page in 1..12usize,
        ) {
            let all: HashSet<GameId> = pages.iter().flatten().copied().collect();
            let pages: Vec<Vec<Event>> = pages.into_iter().map(|p| p.into_iter().map(game).collect()).collect();
            let merged = merge_games(pages, page, |next| next.to_string());
            let listed = ids(&merged);
            prop_assert!(listed.windows(2).all(|w| w[0] < w[1]));
            prop_assert_eq!(listed.len(), all.len().min(page));
            let more = merged.iter().any(|e| matches!(e, Event::Info(t) if t.starts_with(MORE)));
            prop_assert_eq!(more, all.len() > page);
        }
    }
}
