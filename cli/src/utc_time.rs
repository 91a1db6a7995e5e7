//! Milliseconds since the Unix epoch as a date and time people read, in UTC.

/// `time_unix_ms` as `YYYY-MM-DD HH:MM:SS.mmm UTC`.
pub fn utc_text(time_unix_ms: u64) -> String {
    let milliseconds = time_unix_ms % 1000;
    let seconds = time_unix_ms / 1000;
    let (hours, minutes, seconds_of_minute) = ((seconds / 3600) % 24, (seconds / 60) % 60, seconds % 60);
    let (year, month, day) = civil_date(seconds / 86_400);
    format!("{year:04}-{month:02}-{day:02} {hours:02}:{minutes:02}:{seconds_of_minute:02}.{milliseconds:03} UTC")
}

/// The Gregorian date `days` after 1970-01-01 (the "days to civil" method, over 400-year eras).
fn civil_date(days: u64) -> (u64, u64, u64) {
    let shifted = days + 719_468; // days from 0000-03-01, so leap days fall at a year's end
    let era = shifted / 146_097;
    let day_of_era = shifted % 146_097;
    let year_of_era = (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_from_march = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_from_march + 2) / 5 + 1;
    let month = if month_from_march < 10 { month_from_march + 3 } else { month_from_march - 9 };
    let year = year_of_era + era * 400 + u64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_dates_are_shown_right() {
        assert_eq!(utc_text(0), "1970-01-01 00:00:00.000 UTC");
        assert_eq!(utc_text(951_782_400_000), "2000-02-29 00:00:00.000 UTC");
        assert_eq!(utc_text(1_700_000_000_123), "2023-11-14 22:13:20.123 UTC");
        assert_eq!(utc_text(4_102_444_799_999), "2099-12-31 23:59:59.999 UTC");
    }

    #[test]
    fn the_largest_time_does_not_overflow() {
        assert!(utc_text(u64::MAX).ends_with("UTC"));
    }
}
