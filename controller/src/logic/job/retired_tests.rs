//! Unit tests of `logic/job/retired.rs`.

use super::*;

#[test]
fn covers_every_older_comment_of_the_same_repository() {
    let mut retired = Retired::default();
    assert!(retired.record("Household/Config", 40));
    assert!(
        !retired.record("household/config", 12),
        "older: already covered"
    );
    assert!(retired.record("other/repo", 7));
    let cases = [
        ("household/config", 40, true),
        ("HOUSEHOLD/CONFIG", 39, true),
        ("household/config", 1, true),
        ("household/config", 41, false),
        ("other/repo", 7, true),
        ("other/repo", 8, false),
        ("unknown/repo", 1, false),
    ];
    for (repository, comment, covered) in cases {
        assert_eq!(
            retired.covers(repository, comment),
            covered,
            "{repository} {comment}"
        );
    }
}

#[test]
fn round_trips_and_refuses_what_it_did_not_write() {
    let mut retired = Retired::default();
    retired.record("a/b", 3);
    assert_eq!(Retired::parse(Some(&retired.render())), Ok(retired));
    assert_eq!(Retired::parse(None), Ok(Retired::default()));
    for bad in ["", "[]", "{\"a/b\": \"3\"}", "not json"] {
        assert!(Retired::parse(Some(bad)).is_err(), "{bad:?}");
    }
}
