//! Unit tests of `logic/config_repo/mod.rs`.

use super::*;

#[test]
fn the_applied_commit_counts_only_on_its_branch() {
    let cases = [
        (Some("main@sha1:abc"), "main", Some("abc")),
        (Some("main@sha1:abc"), "live", None),
        (Some("main@sha1:abc"), "mai", None),
        (Some("main-2@sha1:abc"), "main", None),
        (Some("main@sha1:"), "main", None),
        (None, "main", None),
    ];
    for (applied, branch, want) in cases {
        assert_eq!(
            applied_commit(applied, branch),
            want,
            "{applied:?} {branch}"
        );
    }
}
