//! Money at the YNAB boundary: integer milliunits in, decimal strings out. No floating point.

use std::fmt::Write;

/// A decimal amount that cannot be turned into milliunits.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MoneyError {
    #[error(
        "{0:?} is not an amount: write digits with an optional sign and at most three decimals, such as -8.40"
    )]
    Malformed(String),
    #[error("{0:?} is too large for YNAB: amounts must stay within ±9223372036854775.807")]
    OutOfRange(String),
}

/// Formats milliunits as a decimal string with at least `decimal_digits` decimals (the plan's
/// currency), and more when the amount needs them: `-8400, 2` gives `-8.40`, `1234, 2` gives
/// `1.234`, `5000, 0` gives `5`.
pub fn to_decimal(milliunits: i64, decimal_digits: u8) -> String {
    let sign = if milliunits < 0 { "-" } else { "" };
    let abs = milliunits.unsigned_abs();
    let (units, frac) = (abs / 1000, abs % 1000);
    let mut digits = format!("{frac:03}");
    let keep = usize::from(decimal_digits.min(3));
    while digits.len() > keep && digits.ends_with('0') {
        digits.pop();
    }
    let mut out = String::with_capacity(24);
    let _ = write!(out, "{sign}{units}");
    if !digits.is_empty() {
        out.push('.');
        out.push_str(&digits);
    }
    out
}

/// Parses a decimal string in currency units into milliunits: `-8.40` gives `-8400`.
pub fn parse_decimal(text: &str) -> Result<i64, MoneyError> {
    let malformed = || MoneyError::Malformed(text.to_owned());
    let (negative, body) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let (units, frac) = body.split_once('.').unwrap_or((body, ""));
    let all_digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if units.is_empty()
        || !all_digits(units)
        || !all_digits(frac)
        || frac.len() > 3
        || (body.contains('.') && frac.is_empty())
    {
        return Err(malformed());
    }
    let out_of_range = || MoneyError::OutOfRange(text.to_owned());
    let units: i64 = units.parse().map_err(|_| out_of_range())?;
    let frac: i64 = format!("{frac:0<3}").parse().map_err(|_| malformed())?;
    let magnitude = units
        .checked_mul(1000)
        .and_then(|m| m.checked_add(frac))
        .ok_or_else(out_of_range)?;
    Ok(if negative { -magnitude } else { magnitude })
}

#[cfg(test)]
#[path = "money_tests.rs"]
mod tests;
