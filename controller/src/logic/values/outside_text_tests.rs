//! Unit tests of `logic/values/outside_text.rs`.

use super::*;

#[test]
fn only_a_conforming_error_adds_more_than_the_status() {
    let cases = [
        (
            404,
            Some(("404.2", "resource_not_found")),
            "HTTP 404, YNAB error 404.2 resource_not_found",
        ),
        (
            403,
            Some(("403.1", "subscription_lapsed")),
            "HTTP 403, YNAB error 403.1 subscription_lapsed",
        ),
        (
            500,
            Some(("500", "internal_server_error")),
            "HTTP 500, YNAB error 500 internal_server_error",
        ),
        (500, None, "HTTP 500"),
        (500, Some(("404.2", "resource_not_found")), "HTTP 500"),
        (500, Some(("5000", "x")), "HTTP 500"),
        (500, Some(("500.", "x")), "HTTP 500"),
        (500, Some(("500.1234", "x")), "HTTP 500"),
        (500, Some(("500.a", "x")), "HTTP 500"),
        (500, Some(("500", "")), "HTTP 500"),
        (500, Some(("500", "Internal")), "HTTP 500"),
        (500, Some(("500", "password=hunter2")), "HTTP 500"),
        (500, Some(("500", "a b")), "HTTP 500"),
        (500, Some(("500", "x\u{1b}[31m")), "HTTP 500"),
        (500, Some(("500", &"a".repeat(49))), "HTTP 500"),
        (401, Some(("", "not_authorized")), "HTTP 401"),
    ];
    for (status, error, want) in cases {
        assert_eq!(refusal(status, error), want, "{status} {error:?}");
    }
}

#[test]
fn sanitize_strips_hidden_characters_and_caps_the_length() {
    let cases = [
        ("plain", 10, "plain"),
        ("line\nbreak\r\ttab", 40, "linebreaktab"),
        ("\u{1b}[31mred\u{1b}[0m", 40, "[31mred[0m"),
        ("evil\u{202E}txt.exe", 40, "eviltxt.exe"),
        ("zero\u{200B}width\u{FEFF}", 40, "zerowidth"),
        ("abcdefghij", 10, "abcdefghij"),
        ("abcdefghijk", 10, "abcdefghi…"),
        ("ééééé", 3, "éé…"),
        ("", 5, ""),
    ];
    for (text, max, want) in cases {
        assert_eq!(sanitize(text, max), want, "{text:?}");
    }
}
