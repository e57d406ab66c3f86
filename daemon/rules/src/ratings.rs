//! What the ratings show: a rating as stored and its `RATING` line, what
//! `RATING` answers for a registered name with no rated game yet, and the
//! rating a rated `SEEK` pairs by. The arithmetic is [`crate::glicko`]; the
//! store reads and writes the rows.

use flipline::Variant;
use flipline::protocol::RatingLine;

use crate::glicko::{self, Rating};
use crate::refusal::Refusal;

/// A rating as stored, with what `RATING` shows of it.
#[derive(Clone, Debug, PartialEq)]
pub struct StoredRating {
    /// The name, as registered.
    pub name: String,
    /// The game.
    pub variant: Variant,
    /// The rating.
    pub rating: Rating,
    /// Rated games played.
    pub games: u32,
    /// Whether the name is marked a program's.
    pub bot: bool,
}

impl StoredRating {
    /// The protocol's `RATING` line.
    pub fn line(&self) -> RatingLine {
        RatingLine {
            name: self.name.clone(),
            variant: self.variant,
            rating: rounded(self.rating.rating),
            rd: rounded(self.rating.rd),
            games: self.games,
            provisional: self.rating.provisional(),
            bot: self.bot,
        }
    }
}

/// A rating shown: whole points.
pub fn rounded(value: f64) -> i32 {
    // Ratings stay within a few thousand: the cast cannot saturate.
    value.round() as i32
}

/// `RATING asked [variant]`: the ratings of the name registered as
/// `registered` (each variant it has one in, or a new player's in the
/// variant asked about, othello by default); a name not registered has none.
pub fn rating_lines(
    asked: &str,
    registered: Option<String>,
    variant: Option<Variant>,
    stored: Vec<StoredRating>,
) -> Result<Vec<RatingLine>, Refusal> {
    let Some(name) = registered else {
        return Err(Refusal::NotRegistered(asked.to_string()));
    };
    if stored.is_empty() {
        let start = StoredRating {
            name,
            variant: variant.unwrap_or(Variant::Othello),
            rating: glicko::START,
            games: 0,
            bot: false,
        };
        return Ok(vec![start.line()]);
    }
    Ok(stored.iter().map(StoredRating::line).collect())
}

/// The rating a rated `SEEK` pairs by: the seeker's in the variant, or a
/// new player's before any rated game.
pub fn seek_rating(stored: Option<&StoredRating>) -> i32 {
    rounded(stored.map_or(glicko::START.rating, |r| r.rating.rating))
}

#[cfg(test)]
mod tests {
    use super::*;
    use flipline::protocol::ErrorCode;

    fn stored(rating: f64) -> StoredRating {
        StoredRating {
            name: "Ann".into(),
            variant: Variant::Anti,
            rating: Rating {
                rating,
                ..glicko::START
            },
            games: 3,
            bot: false,
        }
    }

    #[test]
    fn a_new_player_is_shown_and_seeks_at_the_start_rating() {
        let lines = rating_lines("ann", Some("Ann".into()), Some(Variant::Reversi), vec![]);
        let line = lines
            .as_deref()
            .map(|l| (l.len(), l[0].rating, l[0].games, l[0].variant));
        assert_eq!(line, Ok((1, 1500, 0, Variant::Reversi)));
        assert_eq!(seek_rating(None), 1500);
        assert_eq!(seek_rating(Some(&stored(1612.6))), 1613);
    }

    #[test]
    fn stored_ratings_are_shown_rounded_and_strangers_have_none() {
        let lines = rating_lines("ann", Some("Ann".into()), None, vec![stored(1499.4)]);
        assert_eq!(
            lines.map(|l| (l[0].rating, l[0].name.clone())),
            Ok((1499, "Ann".into()))
        );
        let none = rating_lines("zed", None, None, vec![]);
        assert_eq!(none.map_err(|e| e.code()), Err(ErrorCode::NotFound));
    }
}
