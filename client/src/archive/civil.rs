//! Dates as the store writes them (`2024-05-01T12:34:56Z`, UTC) to and from
//! seconds since 1970, for the archives' dates (GGF's `DT` in its several
//! forms, WTHOR's years and creation dates). Pure: today's date comes from
//! the caller.

/// A moment in UTC, to the second.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Civil {
    /// The year (1970 and after: earlier dates are no archive's).
    pub year: i64,
    /// 1 to 12.
    pub month: u32,
    /// 1 to the month's length.
    pub day: u32,
    /// 0 to 23.
    pub hour: u32,
    /// 0 to 59.
    pub minute: u32,
    /// 0 to 59.
    pub second: u32,
}

/// Days since 1970-01-01 of a date (the proleptic Gregorian calendar; Howard
/// Hinnant's `days_from_civil`).
fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let of_era = year.rem_euclid(400);
    let month = i64::from(month);
    let of_year =
        (153 * (if month > 2 { month - 3 } else { month + 9 }) + 2) / 5 + i64::from(day) - 1;
    let of_era_days = of_era * 365 + of_era / 4 - of_era / 100 + of_year;
    era * 146_097 + of_era_days - 719_468
}

fn days_in_month(year: i64, month: u32) -> u32 {
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    match month {
        2 if leap => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

impl Civil {
    /// A checked moment: `None` for a month 13, a February 30, an hour 24,
    /// or a year before 1970 or past 9999.
    pub fn new(
        year: i64,
        month: u32,
        day: u32,
        hour: u32,
        minute: u32,
        second: u32,
    ) -> Option<Civil> {
        let valid = (1970..=9999).contains(&year)
            && (1..=12).contains(&month)
            && (1..=days_in_month(year, month)).contains(&day)
            && hour < 24
            && minute < 60
            && second < 60;
        valid.then_some(Civil {
            year,
            month,
            day,
            hour,
            minute,
            second,
        })
    }

    /// Seconds since 1970-01-01T00:00:00Z.
    pub fn unix(self) -> i64 {
        let days = days_from_civil(self.year, self.month, self.day);
        days * 86_400 + i64::from(self.hour * 3600 + self.minute * 60 + self.second)
    }

    /// The moment `seconds` after 1970 began (`None` outside 1970-9999).
    pub fn from_unix(seconds: i64) -> Option<Civil> {
        let (days, of_day) = (seconds.div_euclid(86_400), seconds.rem_euclid(86_400));
        // Hinnant's `civil_from_days`.
        let z = days + 719_468;
        let era = z.div_euclid(146_097);
        let of_era = z.rem_euclid(146_097);
        let year_of_era = (of_era - of_era / 1460 + of_era / 36_524 - of_era / 146_096) / 365;
        let of_year = of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
        let shifted = (5 * of_year + 2) / 153;
        let day = of_year - (153 * shifted + 2) / 5 + 1;
        let month = if shifted < 10 {
            shifted + 3
        } else {
            shifted - 9
        };
        let year = year_of_era + era * 400 + i64::from(month <= 2);
        let small = |v: i64| u32::try_from(v).ok();
        Civil::new(
            year,
            small(month)?,
            small(day)?,
            small(of_day / 3600)?,
            small(of_day / 60 % 60)?,
            small(of_day % 60)?,
        )
    }

    /// The store's form, `2024-05-01T12:34:56Z`.
    pub fn iso(self) -> String {
        format!(
            "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z",
            self.year, self.month, self.day, self.hour, self.minute, self.second
        )
    }

    /// Reads the store's form back (`None` for anything else).
    pub fn parse_iso(text: &str) -> Option<Civil> {
        let bytes = text.as_bytes();
        let shape = bytes.len() == 20
            && bytes.iter().enumerate().all(|(i, b)| match i {
                4 | 7 => *b == b'-',
                10 => *b == b'T',
                13 | 16 => *b == b':',
                19 => *b == b'Z',
                _ => b.is_ascii_digit(),
            });
        if !shape {
            return None;
        }
        let number = |from: usize, to: usize| text.get(from..to)?.parse::<u32>().ok();
        Civil::new(
            i64::from(number(0, 4)?),
            number(5, 7)?,
            number(8, 10)?,
            number(11, 13)?,
            number(14, 16)?,
            number(17, 19)?,
        )
    }

    /// Now, from the system clock (`None` if it is before 1970).
    pub fn now() -> Option<Civil> {
        let since = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .ok()?;
        Civil::from_unix(i64::try_from(since.as_secs()).ok()?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn known_dates_convert() {
        let date = Civil::new(2000, 4, 16, 16, 13, 0).unwrap();
        assert_eq!(date.unix(), 955_901_580);
        assert_eq!(Civil::from_unix(0).unwrap().iso(), "1970-01-01T00:00:00Z");
        assert_eq!(
            Civil::from_unix(951_782_400).unwrap().iso(),
            "2000-02-29T00:00:00Z"
        );
        assert_eq!(Civil::new(2023, 2, 29, 0, 0, 0), None);
        assert_eq!(
            Civil::parse_iso("2024-05-01T12:34:56Z").unwrap().iso(),
            "2024-05-01T12:34:56Z"
        );
        assert_eq!(Civil::parse_iso("2024-05-01 12:34:56Z"), None);
        assert_eq!(Civil::parse_iso("2024-13-01T12:34:56Z"), None);
    }

    proptest! {
        #[test]
        fn seconds_round_trip(seconds in 0i64..253_402_300_799) {
            let civil = Civil::from_unix(seconds).unwrap();
            prop_assert_eq!(civil.unix(), seconds);
            prop_assert_eq!(Civil::parse_iso(&civil.iso()), Some(civil));
        }

        #[test]
        fn any_text_parses_without_panicking(text in ".{0,24}") {
            let _ = Civil::parse_iso(&text);
        }
    }
}
