//! Unit tests of `logic/values/duration.rs`.

use super::*;

#[test]
fn parses_units_and_sums() {
    let cases = [
        ("200ms", 200),
        ("30s", 30_000),
        ("5m", 300_000),
        ("24h", 86_400_000),
        ("1h30m", 5_400_000),
        ("1m1s1ms", 61_001),
        ("0s", 0),
    ];
    for (text, ms) in cases {
        assert_eq!(parse(text), Ok(Duration::from_millis(ms)), "{text}");
    }
}

#[test]
fn refuses_malformed() {
    for text in [
        "",
        "5",
        "m",
        "5d",
        "1.5h",
        "-5m",
        "5 m",
        "h1",
        "99999999999999999999h",
    ] {
        assert_eq!(parse(text), Err(DurationError(text.into())), "{text:?}");
    }
}
