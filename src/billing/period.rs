//! Calendar arithmetic on epoch seconds, in UTC: months for billing periods
//! and invoices, days for usage groups.

use chrono::{DateTime, Datelike, NaiveDate, TimeZone, Utc};

fn at(ts: i64) -> DateTime<Utc> {
    DateTime::from_timestamp(ts, 0).unwrap_or_default()
}

/// The (year, month) `ts` falls in.
pub fn year_month(ts: i64) -> (i32, u32) {
    let t = at(ts);
    (t.year(), t.month())
}

/// The start of month (`year`, `month`), in seconds.
pub fn month_start(year: i32, month: u32) -> i64 {
    Utc.with_ymd_and_hms(year, month, 1, 0, 0, 0)
        .single()
        .map_or(0, |t| t.timestamp())
}

/// The month after (`year`, `month`).
pub fn next_month(year: i32, month: u32) -> (i32, u32) {
    if month == 12 {
        (year + 1, 1)
    } else {
        (year, month + 1)
    }
}

/// `[start, end)` of the month `ts` falls in.
pub fn month_bounds(ts: i64) -> (i64, i64) {
    let (y, m) = year_month(ts);
    let (ny, nm) = next_month(y, m);
    (month_start(y, m), month_start(ny, nm))
}

/// `YYYY-MM-DDTHH:MM:SSZ`.
pub fn rfc3339(ts: i64) -> String {
    at(ts).format("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// `YYYY-MM-DD` of the UTC day `ts` falls in.
pub fn day(ts: i64) -> String {
    at(ts).format("%Y-%m-%d").to_string()
}

/// Parses `YYYY-MM` into its month's `[start, end)`.
pub fn parse_month(s: &str) -> Option<(i64, i64)> {
    let date = NaiveDate::parse_from_str(&format!("{s}-01"), "%Y-%m-%d").ok()?;
    if s.len() != 7 {
        return None;
    }
    let (ny, nm) = next_month(date.year(), date.month());
    Some((month_start(date.year(), date.month()), month_start(ny, nm)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn months_wrap_at_the_year_end() {
        let (s, e) = month_bounds(month_start(2026, 12) + 5);
        assert_eq!(rfc3339(s), "2026-12-01T00:00:00Z");
        assert_eq!(rfc3339(e), "2027-01-01T00:00:00Z");
        assert_eq!(
            parse_month("2026-02"),
            Some((month_start(2026, 2), month_start(2026, 3)))
        );
        assert_eq!(parse_month("2026-13"), None);
        assert_eq!(parse_month("2026-2"), None);
        assert_eq!(day(month_start(2026, 3) - 1), "2026-02-28");
    }
}
