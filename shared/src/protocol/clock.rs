//! The `M+S` clock of `SEEK`, `NEW`, `START` and `HISTORY`: one reader and one
//! writer, so that a clock a client asks for prints back the same.

use std::fmt;

use super::error::{ProtocolError, one_line};

/// A clock: minutes of base time plus seconds added after each move.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ClockSpec {
    /// Base time per side, in milliseconds.
    pub base_ms: u64,
    /// Increment per move, in milliseconds.
    pub increment_ms: u64,
}

/// Longest base time a clock may have: a day.
const MAX_CLOCK_MS: u64 = 24 * 60 * 60 * 1000;

impl ClockSpec {
    /// Reads `M+S`: minutes (a decimal, `0.5` is 30 s) plus whole seconds.
    pub fn parse(text: &str) -> Result<ClockSpec, ProtocolError> {
        let bad = || {
            ProtocolError::bad(format!(
                "bad clock '{}' (expected minutes+seconds, e.g. 5+3)",
                one_line(text)
            ))
        };
        let (minutes, seconds) = text.split_once('+').ok_or_else(bad)?;
        let base_ms = parse_minutes_ms(minutes).ok_or_else(bad)?;
        let increment_ms = seconds
            .parse::<u64>()
            .ok()
            .filter(|s| *s <= 3600)
            .ok_or_else(bad)?
            * 1000;
        if base_ms == 0 || base_ms > MAX_CLOCK_MS {
            return Err(bad());
        }
        Ok(ClockSpec {
            base_ms,
            increment_ms,
        })
    }
}

/// Minutes with up to three decimals as milliseconds.
fn parse_minutes_ms(text: &str) -> Option<u64> {
    let (whole, fraction) = text.split_once('.').unwrap_or((text, ""));
    if whole.is_empty() && fraction.is_empty() || fraction.len() > 3 {
        return None;
    }
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if !digits(whole) || !digits(fraction) || whole.len() > 4 {
        return None;
    }
    let whole: u64 = if whole.is_empty() {
        0
    } else {
        whole.parse().ok()?
    };
    let thousandths: u64 = format!("{fraction:0<3}").parse().ok()?;
    Some(whole * 60_000 + thousandths * 60)
}

impl fmt::Display for ClockSpec {
    /// `M+S` as [`ClockSpec::parse`] reads it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (whole, rest) = (self.base_ms / 60_000, self.base_ms % 60_000);
        if rest == 0 {
            write!(f, "{whole}")?;
        } else {
            let fraction = format!("{:03}", rest / 60);
            write!(f, "{whole}.{}", fraction.trim_end_matches('0'))?;
        }
        write!(f, "+{}", self.increment_ms / 1000)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clocks_round_trip() {
        for text in ["5+3", "0.5+0", "0.05+1", "90+30"] {
            let clock = ClockSpec::parse(text).unwrap();
            assert_eq!(clock.to_string(), text);
        }
        for bad in ["", "5", "+3", "0+0", "-1+3", "5+-3", "1.2345+0", "99999+0"] {
            assert!(ClockSpec::parse(bad).is_err(), "{bad}");
        }
    }
}
