//! Unit tests of `logic/budget/api_url.rs`.

use super::*;

fn list(entries: &[&str]) -> ApiUrlAllowlist {
    ApiUrlAllowlist::parse(entries).unwrap()
}

#[test]
fn only_the_real_api_by_default() {
    let cases = [
        ("https://api.ynab.com/v1", true),
        ("https://api.ynab.com/v1/", true),
        ("https://api.ynab.com/v1/sub", true),
        ("https://api.ynab.com", false),
        ("https://api.ynab.com/", false),
        ("https://api.ynab.com/v10", false),
        ("https://api.ynab.com/v1x", false),
        ("https://api.ynab.com/v2", false),
        ("http://api.ynab.com/v1", false),
        ("https://api.ynab.com:8443/v1", false),
        ("https://api.ynab.com:443/v1", false),
        ("https://API.YNAB.COM/v1", false),
        ("https://api.ynab.com./v1", false),
        ("https://api.ynab.com.evil.test/v1", false),
        ("https://evil.test/api.ynab.com/v1", false),
        ("https://api.ynab.com@evil.test/v1", false),
        ("https://user:pw@api.ynab.com/v1", false),
        ("https://api.ynab.com/v1/../x", false),
        ("https://api.ynab.com/v1/%2e%2e/x", false),
        ("https://api.ynab.com/v1/./", false),
        ("https://api.ynab.com/x/../v1", false),
        ("https://api.ynab.com\\v1", false),
        ("https://api.ynab.com/v1?x=1", false),
        ("https://api.ynab.com/v1#x", false),
        ("https://api.ynab.com/v1//", false),
        (" https://api.ynab.com/v1", false),
        ("https://api.ynab.com/v1\n", false),
        ("https://api.ynab.com/v\n1", false),
        ("https://api.ynab.com/v1 ", false),
        ("https://xn--api-ynab-com/v1", false),
        ("ftp://api.ynab.com/v1", false),
        ("api.ynab.com/v1", false),
        ("", false),
    ];
    let allowlist = ApiUrlAllowlist::default();
    for (url, allowed) in cases {
        assert_eq!(allowlist.check(url).is_ok(), allowed, "{url:?}");
    }
}

#[test]
fn a_star_port_allows_any_port_of_that_host_only() {
    let allowlist = list(&["http://127.0.0.1:*/v1"]);
    let cases = [
        ("http://127.0.0.1:4321/v1", true),
        ("http://127.0.0.1:1/v1/", true),
        ("http://127.0.0.1/v1", true),
        ("http://127.0.0.1:4321/v2", false),
        ("http://127.0.0.1:4321/", false),
        ("http://127.0.0.1:4321/_control", false),
        ("http://127.0.0.1:4321/v1/../_control", false),
        ("http://localhost:4321/v1", false),
        ("http://127.0.0.2:4321/v1", false),
        ("http://[::1]:4321/v1", false),
        ("http://2130706433:4321/v1", false),
        ("http://0x7f.0.0.1:4321/v1", false),
        ("http://127.1:4321/v1", false),
        ("https://127.0.0.1:4321/v1", false),
        ("http://127.0.0.1:4321@evil.test/v1", false),
        ("http://127.0.0.1.evil.test:4321/v1", false),
    ];
    for (url, allowed) in cases {
        assert_eq!(allowlist.check(url).is_ok(), allowed, "{url:?}");
    }
}

#[test]
fn ports_paths_and_several_entries() {
    let allowlist = list(&[
        "https://api.ynab.com/v1",
        "http://sim.test:8080",
        "https://proxy.test/ynab/v1/",
    ]);
    let cases = [
        ("https://api.ynab.com/v1", true),
        ("http://sim.test:8080/v1", true),
        ("http://sim.test:8080", true),
        ("http://sim.test:8081/v1", false),
        ("http://sim.test/v1", false),
        ("https://proxy.test/ynab/v1", true),
        ("https://proxy.test/ynab/v1/x", true),
        ("https://proxy.test/ynab", false),
        ("https://proxy.test/ynab/v10", false),
    ];
    for (url, allowed) in cases {
        assert_eq!(allowlist.check(url).is_ok(), allowed, "{url:?}");
    }
    assert!(list(&[]).check("https://api.ynab.com/v1").is_err());
}

#[test]
fn bad_entries_are_refused_at_start() {
    let cases = [
        "api.ynab.com",
        "ftp://api.ynab.com/v1",
        "https://u@api.ynab.com/v1",
        "https://api.ynab.com/v1?x",
        "https://api.ynab.com/v1/../v2",
        "https://API.ynab.com/v1",
        "https://api.ynab.com:443/v1",
        "http://127.0.0.1:**/v1",
        "http://127.0.0.1:*x/v1",
        "http://*:*/v1",
        "",
    ];
    for entry in cases {
        assert!(ApiUrlAllowlist::parse([entry]).is_err(), "{entry:?}");
    }
}

#[test]
fn the_refusal_names_the_url_and_the_flag() {
    let refused = ApiUrlAllowlist::default()
        .check("https://evil.test/v1")
        .unwrap_err();
    assert!(matches!(refused, ApiUrlError::NotAllowed { .. }));
    let message = refused.to_string();
    for needle in ["https://evil.test/v1", FLAG, YNAB_API, "no token was sent"] {
        assert!(message.contains(needle), "{message}");
    }
    let odd = ApiUrlAllowlist::default()
        .check("https://api.ynab.com/v1/../v1")
        .unwrap_err();
    assert_eq!(
        odd,
        ApiUrlError::Malformed {
            url: "https://api.ynab.com/v1/../v1".into(),
            shape: Shape::NotCanonical("https://api.ynab.com/v1".into()),
            allowed: YNAB_API.into(),
        }
    );
    let message = odd.to_string();
    for needle in ["https://api.ynab.com/v1/../v1", FLAG, "no token was sent"] {
        assert!(message.contains(needle), "{message}");
    }
    let entry = ApiUrlAllowlist::parse(["http://*:*/v1"]).unwrap_err();
    assert_eq!(
        entry,
        ApiUrlError::BadEntry {
            entry: "http://*:*/v1".into(),
            shape: Shape::Wildcard
        }
    );
}

/// The Budget links (`ynab::budget_links`) key a Budget's mirror and its token's request
/// window by [`AllowedApiUrl::as_str`]: every spelling that is accepted names one key, and
/// every other spelling is refused with the one to write instead.
#[test]
fn every_accepted_spelling_of_a_base_url_is_one_key() {
    let allowlist = list(&["https://api.ynab.com/v1", "http://127.0.0.1:*/v1"]);
    let cases: [(&[&str], &str); 3] = [
        (
            &["https://api.ynab.com/v1", "https://api.ynab.com/v1/"],
            "https://api.ynab.com/v1",
        ),
        (
            &["http://127.0.0.1:4321/v1", "http://127.0.0.1:4321/v1/"],
            "http://127.0.0.1:4321/v1",
        ),
        (
            &[
                "https://api.ynab.com/v1/sub",
                "https://api.ynab.com/v1/sub/",
            ],
            "https://api.ynab.com/v1/sub",
        ),
    ];
    for (spellings, key) in cases {
        for spelling in spellings {
            let allowed = allowlist.check(spelling).unwrap();
            assert_eq!(allowed.as_str(), key, "{spelling}");
            assert_eq!(
                allowed,
                allowlist.check(spellings[0]).unwrap(),
                "{spelling}"
            );
        }
    }
    let refused = [
        ("https://API.ynab.com/v1", "https://api.ynab.com/v1"),
        ("https://api.ynab.com:443/v1/", "https://api.ynab.com/v1"),
        ("HTTPS://api.ynab.com/v1", "https://api.ynab.com/v1"),
        ("https://api.ynab.com/./v1", "https://api.ynab.com/v1"),
        ("https://api.ynab.com/v1//", "https://api.ynab.com/v1"),
    ];
    for (spelling, write) in refused {
        match allowlist.check(spelling) {
            Err(ApiUrlError::Malformed {
                shape: Shape::NotCanonical(canonical),
                ..
            }) => assert_eq!(canonical, write, "{spelling}"),
            other => panic!("{spelling}: {other:?}"),
        }
    }
}

#[test]
fn endpoints_stay_below_the_base() {
    let base = ApiUrlAllowlist::default()
        .check("https://api.ynab.com/v1/")
        .unwrap();
    assert_eq!(base.as_str(), "https://api.ynab.com/v1");
    let cases: [(&[&str], &str); 6] = [
        (&["plans", "abc"], "https://api.ynab.com/v1/plans/abc"),
        (&["plans", ".."], "https://api.ynab.com/v1/plans"),
        (
            &["plans", "..", "..", "x"],
            "https://api.ynab.com/v1/plans/x",
        ),
        (
            &["plans", "a/../../b"],
            "https://api.ynab.com/v1/plans/a%2F..%2F..%2Fb",
        ),
        (
            &["plans", "%2e%2e"],
            "https://api.ynab.com/v1/plans/%252e%252e",
        ),
        (
            &["plans", "x?y#z", "transactions"],
            "https://api.ynab.com/v1/plans/x%3Fy%23z/transactions",
        ),
    ];
    let allowlist = ApiUrlAllowlist::default();
    for (segments, want) in cases {
        let url = base.endpoint(segments);
        assert_eq!(url.as_str(), want, "{segments:?}");
        assert!(allowlist.check(url.as_str()).is_ok(), "{url}");
    }
}
