//! How the daemon tells a client how long to wait (`ERR 429 ... wait 0.3 s`,
//! `ERR 503 too busy, try again in 2 s`): always rounded up, so that waiting
//! as long as told is enough.

use std::time::Duration;

/// Seconds to the millisecond, without trailing zeros: `0.3 s`, `1.25 s`, `2 s`.
pub fn seconds(wait: Duration) -> String {
    let millis = wait.as_nanos().div_ceil(1_000_000);
    let fraction = format!("{:03}", millis % 1000);
    let fraction = fraction.trim_end_matches('0');
    let whole = millis / 1000;
    if fraction.is_empty() {
        format!("{whole} s")
    } else {
        format!("{whole}.{fraction} s")
    }
}

/// Whole seconds, rounded up, at least one.
pub fn whole_seconds(wait: Duration) -> u128 {
    wait.as_nanos().div_ceil(1_000_000_000).max(1)
}

/// Whole minutes, rounded up, at least one.
pub fn whole_minutes(wait: Duration) -> u128 {
    wait.as_nanos().div_ceil(60_000_000_000).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_are_rounded_up() {
        for (wait, text) in [
            (Duration::from_millis(300), "0.3 s"),
            (Duration::from_micros(9_001), "0.01 s"),
            (Duration::from_millis(1250), "1.25 s"),
            (Duration::from_secs(2), "2 s"),
            (Duration::ZERO, "0 s"),
        ] {
            assert_eq!(seconds(wait), text);
        }
        assert_eq!(whole_seconds(Duration::from_millis(1001)), 2);
        assert_eq!(whole_seconds(Duration::ZERO), 1);
        assert_eq!(whole_minutes(Duration::from_secs(360)), 6);
        assert_eq!(whole_minutes(Duration::from_secs(361)), 7);
        assert_eq!(whole_minutes(Duration::from_secs(1)), 1);
    }
}
