use serde_json::json;

use super::*;

#[test]
fn a_commit_listing_is_read_as_gitea_answers_it() {
    let page = json!([
        {"sha": "m2", "parents": [{"sha": "a1"}, {"sha": "c3"}], "author": {"login": "alice"},
         "files": [{"filename": "tx/rent.yaml", "status": "modified"}]},
        {"sha": "c3", "parents": [{"sha": "a1"}], "author": null, "files": null},
    ]);
    let commits = page_of(page, "GET /x").unwrap();
    assert_eq!(
        commits,
        [
            (
                "m2".to_string(),
                RangeCommit {
                    parents: 2,
                    author: Some("alice".into()),
                    files: vec!["tx/rent.yaml".into()],
                    pull_author: None,
                }
            ),
            (
                "c3".to_string(),
                RangeCommit {
                    parents: 1,
                    author: None,
                    files: vec![],
                    pull_author: None,
                }
            ),
        ]
    );
    assert!(page_of(json!({"message": "x"}), "GET /x").is_err());
}
