use super::*;

#[test]
fn a_pull_request_is_read_as_gitea_answers_it() {
    let pr = serde_json::json!({
        "number": 7, "html_url": "http://gitea/o/r/pulls/7", "state": "closed",
        "merged": true, "head": {"ref": "ledgerops-rule-r-01234567", "sha": "abc"},
        "base": {"ref": "main"}, "user": {"login": "ledgerops-bot"},
    });
    assert_eq!(
        pull_request_of(&pr, "GET /x").unwrap(),
        PullRequest {
            number: 7,
            url: "http://gitea/o/r/pulls/7".into(),
            open: false,
            head: "ledgerops-rule-r-01234567".into(),
            base: "main".into(),
            author: "ledgerops-bot".into(),
        }
    );
}
