//! Tournaments as people read them: a `TOURNEY LIST` line, a round or the
//! end, and a `TOURNEY SHOW` standing (the table's columns lined up).

use flipline::protocol::{Points, StandingLine, TourneyLine, TourneyNews, TourneyStage};

use crate::untrusted;

/// A `TOURNEY LIST` line.
pub fn listed(line: &TourneyLine) -> String {
    let clock = line
        .clock
        .map_or_else(|| "no clock".to_string(), |c| format!("clock {c}"));
    let players = if line.players == 1 {
        "player"
    } else {
        "players"
    };
    let stage = match line.stage {
        TourneyStage::Open => format!("open: tourney join {}", line.id),
        TourneyStage::Running => format!("round {} of {}", line.round, line.rounds),
        TourneyStage::Over => "over".to_string(),
    };
    format!(
        "tournament {}: {} {}, {clock}, {} {players}, {stage}",
        line.id, line.kind, line.variant, line.players
    )
}

/// A round begun, or the end, of a tournament the person plays in.
pub fn news(id: u64, news: &TourneyNews) -> String {
    match news {
        TourneyNews::Round(round) => {
            format!("tournament {id}: round {round} begins (tourney show {id} for the standings)")
        }
        TourneyNews::Over(Some(winner)) => {
            format!("tournament {id} is over: {} won", untrusted::name(winner))
        }
        TourneyNews::Over(None) => format!("tournament {id} is over: tied at the top"),
    }
}

/// A `STANDING` line: rank, name, points, games and disc difference in
/// columns, so that a table of them reads down.
pub fn standing(line: &StandingLine) -> String {
    let points = Points(line.half_points).to_string();
    let games = if line.games == 1 { "game" } else { "games" };
    format!(
        "{:>3}. {:<20} {points:>5} points  {:>3} {games}  discs {:+}",
        line.rank,
        untrusted::name(&line.name),
        line.games,
        line.disc_difference
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use flipline::Variant;
    use flipline::protocol::TourneyKind;

    #[test]
    fn lines_say_the_stage_points_and_winner() {
        let line = TourneyLine {
            id: 4,
            kind: TourneyKind::Swiss,
            variant: Variant::Othello,
            clock: None,
            stage: TourneyStage::Running,
            players: 6,
            round: 2,
            rounds: 3,
        };
        assert_eq!(
            listed(&line),
            "tournament 4: swiss othello, no clock, 6 players, round 2 of 3"
        );
        let open = TourneyLine {
            stage: TourneyStage::Open,
            ..line
        };
        assert!(listed(&open).ends_with("open: tourney join 4"));
        let row = StandingLine {
            id: 4,
            rank: 1,
            name: "ann".into(),
            half_points: 5,
            games: 3,
            disc_difference: 12,
        };
        let shown = standing(&row);
        assert!(
            shown.contains(" 2.5 points") && shown.ends_with("discs +12"),
            "{shown}"
        );
        assert!(news(4, &TourneyNews::Over(None)).contains("tied"));
        assert!(news(4, &TourneyNews::Over(Some("ann".into()))).contains("ann won"));
    }
}
