//! Unit tests of `logic/job/trust.rs`.

use super::*;

#[test]
fn allowlist_entries_and_matches() {
    assert!(Allowlist::new::<&str>(&[]).is_err());
    assert!(Allowlist::new(&["household"]).is_err());
    assert!(Allowlist::new(&["a/b/c"]).is_err());
    assert!(Allowlist::new(&["../x"]).is_err());
    let list = Allowlist::new(&["Household/Ledger-Config", " other/repo "]).unwrap();
    let cases = [
        ("household/ledger-config", true),
        ("HOUSEHOLD/LEDGER-CONFIG", true),
        ("other/repo", true),
        ("household/ledger-config2", false),
        ("evil/ledger-config", false),
        ("household", false),
        ("", false),
    ];
    for (repo, want) in cases {
        assert_eq!(list.allows(repo), want, "{repo}");
    }
}

#[test]
fn issue_numbers_from_web_urls() {
    let cases = [
        ("http://g/o/r/issues/12#issuecomment-7", Some(12)),
        ("http://g/o/r/pulls/3#issuecomment-9", Some(3)),
        ("http://g/o/r/issues/12", Some(12)),
        ("http://g/o/r/commit/12#x", None),
        ("http://g/o/r/issues/x#issuecomment-7", None),
        ("", None),
    ];
    for (url, want) in cases {
        assert_eq!(issue_number_of(url), want, "{url}");
    }
}

#[test]
fn a_comment_matches_only_its_claim() {
    let claim = Claim {
        comment_id: 7,
        issue_number: 4,
        author: "writer",
        command: "/agent approve apr-1",
        truncated_from: None,
    };
    let c = |author: &str, body: &str, issue| FetchedComment {
        author: author.into(),
        body: body.into(),
        issue_number: issue,
    };
    let cases: [(Option<FetchedComment>, Result<(), &str>); 7] = [
        (Some(c("writer", "/agent approve apr-1", Some(4))), Ok(())),
        (Some(c("Writer", "/agent approve apr-1", Some(4))), Ok(())),
        (None, Err("does not exist")),
        (
            Some(c("admin", "/agent approve apr-1", Some(4))),
            Err("written by `admin`"),
        ),
        (
            Some(c("writer", "/agent approve apr-2", Some(4))),
            Err("does not say what"),
        ),
        (
            Some(c("writer", "/agent approve apr-1", Some(5))),
            Err("not on issue 4"),
        ),
        (
            Some(c("writer", "/agent approve apr-1", None)),
            Err("not on issue 4"),
        ),
    ];
    let long = format!("/agent status {}", "x".repeat(5000));
    let (kept, length) = kept_command(&long);
    let cut = Claim {
        command: &kept,
        truncated_from: length,
        ..claim
    };
    let fetched = c("writer", &long, Some(4));
    assert_eq!(comment_matches(cut, Some(&fetched)), Ok(()));
    let longer = c("writer", &format!("{long}x"), Some(4));
    assert!(
        comment_matches(cut, Some(&longer)).is_err(),
        "same cut, other length"
    );
    let uncut = Claim {
        truncated_from: None,
        ..cut
    };
    assert!(
        comment_matches(uncut, Some(&fetched)).is_err(),
        "a cut not claimed"
    );
    for (fetched, want) in cases {
        let got = comment_matches(claim, fetched.as_ref());
        match want {
            Ok(()) => assert_eq!(got, Ok(()), "{fetched:?}"),
            Err(part) => {
                let e = got.expect_err("a mismatch");
                assert!(e.contains(part), "{e} ({fetched:?})");
                assert!(e.contains("comment 7"), "{e}");
            }
        }
    }
}
