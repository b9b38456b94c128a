//! Durations as written in specs: `200ms`, `30s`, `5m`, `24h`, `1h30m`.

use std::time::Duration;

/// A duration string that does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{0:?} is not a duration: write numbers with units ms, s, m or h, such as 200ms, 5m or 1h30m"
)]
pub struct DurationError(pub String);

/// Parses a sequence of `<number><unit>` pairs.
pub fn parse(text: &str) -> Result<Duration, DurationError> {
    let err = || DurationError(text.to_owned());
    let mut total = Duration::ZERO;
    let mut rest = text;
    if rest.is_empty() {
        return Err(err());
    }
    while !rest.is_empty() {
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return Err(err());
        }
        let value: u64 = rest[..digits].parse().map_err(|_| err())?;
        rest = &rest[digits..];
        let (unit_ms, len) = if rest.starts_with("ms") {
            (1, 2)
        } else if rest.starts_with('s') {
            (1_000, 1)
        } else if rest.starts_with('m') {
            (60_000, 1)
        } else if rest.starts_with('h') {
            (3_600_000, 1)
        } else {
            return Err(err());
        };
        rest = &rest[len..];
        let ms = value.checked_mul(unit_ms).ok_or_else(err)?;
        total = total
            .checked_add(Duration::from_millis(ms))
            .ok_or_else(err)?;
    }
    Ok(total)
}

#[cfg(test)]
#[path = "duration_tests.rs"]
mod tests;
