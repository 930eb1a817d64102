//! Time bounds as the index compares them, from what a person gives: a date or an RFC 3339 time.
//!
//! Pure: never reads the index, nor the clock.

use scrollback_core::error::{Error, Result};

/// A time bound as the index compares it (`2026-01-31T09:00:00.000Z`), from RFC 3339 or a date
/// (`YYYY-MM-DD`): a date as a lower bound is its first instant (UTC), as an `upper` bound the
/// first instant of the day after, so that "until 2026-01-31" takes in that whole day.
pub fn time_bound(text: &str, upper: bool) -> Result<String> {
    let text = text.trim();
    if let Ok(date) = text.parse::<jiff::civil::Date>()
        && text.len() == 10
    {
        let day = if upper { date.tomorrow().map_err(|e| Error::BadQuery(format!("{text:?}: {e}")))? } else { date };
        return Ok(format!("{day}T00:00:00.000Z"));
    }
    match text.parse::<jiff::Timestamp>() {
        Ok(ts) => Ok(ts.strftime("%Y-%m-%dT%H:%M:%S%.3fZ").to_string()),
        Err(_) => Err(Error::BadQuery(format!(
            "{:?} is not a date (YYYY-MM-DD) or an RFC 3339 time (2026-01-31T09:00:00Z)",
            text.chars().take(60).collect::<String>()
        ))),
    }
}
