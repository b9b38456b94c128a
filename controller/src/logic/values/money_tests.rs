//! Unit tests of `logic/values/money.rs`.

use super::*;

#[test]
fn formats_with_the_currency_decimals_and_never_loses_precision() {
    let cases = [
        (-8400, 2, "-8.40"),
        (0, 2, "0.00"),
        (0, 0, "0"),
        (5000, 0, "5"),
        (1234, 2, "1.234"),
        (1230, 2, "1.23"),
        (-1, 2, "-0.001"),
        (123_930, 2, "123.93"),
        (-220, 2, "-0.22"),
        (7, 3, "0.007"),
        (1_000_000, 3, "1000.000"),
        (i64::MIN, 2, "-9223372036854775.808"),
        (i64::MAX, 2, "9223372036854775.807"),
    ];
    for (milliunits, digits, text) in cases {
        assert_eq!(
            to_decimal(milliunits, digits),
            text,
            "{milliunits} with {digits} decimals"
        );
    }
}

#[test]
fn parses_what_it_formats() {
    for m in [
        -8400,
        0,
        1,
        -1,
        999,
        1000,
        123_456_789,
        -45_000,
        i64::MAX,
        i64::MIN + 1,
    ] {
        assert_eq!(parse_decimal(&to_decimal(m, 2)), Ok(m), "{m}");
    }
}

#[test]
fn parses_decimal_strings() {
    let cases = [
        ("-8.40", -8400),
        ("8.4", 8400),
        ("12", 12_000),
        ("0.001", 1),
        ("-0", 0),
        ("007.5", 7500),
    ];
    for (text, m) in cases {
        assert_eq!(parse_decimal(text), Ok(m), "{text}");
    }
}

#[test]
fn refuses_what_is_not_an_amount() {
    for text in [
        "", "-", ".5", "5.", "1.2345", "1,50", "+3", "1e3", "12.3.4", " 1", "1 ", "--1", "NaN",
        "١٢",
    ] {
        assert_eq!(
            parse_decimal(text),
            Err(MoneyError::Malformed(text.into())),
            "{text:?}"
        );
    }
    assert_eq!(
        parse_decimal("9223372036854776"),
        Err(MoneyError::OutOfRange("9223372036854776".into()))
    );
    assert!(parse_decimal("99999999999999999999").is_err());
}
