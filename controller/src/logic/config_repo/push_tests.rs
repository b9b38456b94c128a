//! Unit tests of `logic/config_repo/push.rs`.

use super::*;

fn body(git_ref: &str) -> Vec<u8> {
    serde_json::json!({
        "ref": git_ref,
        "after": "abc",
        "repository": {
            "full_name": "household/config",
            "clone_url": "http://127.0.0.1:3000/household/config.git",
            "html_url": "http://127.0.0.1:3000/household/config",
        },
    })
    .to_string()
    .into_bytes()
}

#[test]
fn matches_the_configured_repository_and_branch_however_spelled() {
    let push = parse(&body("refs/heads/main")).unwrap();
    let rows = [
        ("http://127.0.0.1:3000/household/config.git", "main", true),
        ("http://127.0.0.1:3000/household/config", "main", true),
        ("HTTP://127.0.0.1:3000/household/config/", "main", true),
        ("http://127.0.0.1:3000/household/config.git", "dev", false),
        ("http://127.0.0.1:3000/household/other.git", "main", false),
        ("http://127.0.0.1:3001/household/config.git", "main", false),
        ("file:///srv/household/config", "main", false),
    ];
    for (url, branch, want) in rows {
        assert_eq!(concerns(&push, url, branch), want, "{url} {branch}");
    }
}

#[test]
fn a_tag_push_concerns_no_branch() {
    let push = parse(&body("refs/tags/main")).unwrap();
    assert_eq!(pushed_branch(&push), None);
    assert!(!concerns(
        &push,
        "http://127.0.0.1:3000/household/config.git",
        "main"
    ));
}

#[test]
fn anything_else_is_not_a_push() {
    assert_eq!(parse(b"{}"), None);
    assert_eq!(parse(b"not json"), None);
    assert_eq!(parse(br#"{"ref":"refs/heads/main"}"#), None);
}
