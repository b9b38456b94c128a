use super::*;

#[test]
fn only_a_plain_branch_name_goes_into_a_path() {
    for ok in ["main", "ledgerops-rule-rail-co-0123abcd", "release_1.2"] {
        assert!(plain_branch(ok), "{ok}");
    }
    for bad in ["", "a/b", "..", ".hidden", "a?b", "a b", "a%2Fb"] {
        assert!(!plain_branch(bad), "{bad}");
    }
    assert!(branch_path("ledgerops/aj-0123"));
    for bad in ["ledgerops/", "/a", "a//b", "a/../b", "a/b?c", "a/%2e%2e"] {
        assert!(!branch_path(bad), "{bad}");
    }
}

#[test]
fn a_comparison_and_a_tree_are_read_as_gitea_answers_them() {
    let compare = serde_json::json!({"total_commits": 2, "commits": [
        {"sha": "a1", "parents": [{"sha": "b0", "url": "u"}], "files": null,
         "author": {"login": "ledgerops-bot", "id": 3}},
        {"sha": "m2", "parents": [{"sha": "a1"}, {"sha": "c3"}], "author": null},
    ]});
    let compare: CompareDto = decode(compare, "GET /x").unwrap();
    assert_eq!(
        compare
            .commits
            .iter()
            .map(|c| c.author.as_ref().map(|a| a.login.as_str()))
            .collect::<Vec<_>>(),
        [Some("ledgerops-bot"), None]
    );
    assert_eq!(
        branch_commits_of(compare),
        [
            BranchCommit {
                sha: "a1".into(),
                parents: vec!["b0".into()],
            },
            BranchCommit {
                sha: "m2".into(),
                parents: vec!["a1".into(), "c3".into()],
            },
        ]
    );
    let tree = serde_json::json!({"sha": "t", "truncated": true, "page": 1, "total_count": 3,
    "tree": [
        {"path": "rules", "mode": "040000", "type": "tree", "sha": "d1", "size": 0},
        {"path": "rules/r.yaml", "mode": "100644", "type": "blob", "sha": "f1", "size": 9},
        {"path": "link", "mode": "120000", "type": "blob", "sha": "l1", "size": 4},
    ]});
    let (entries, truncated) = tree_page_of(tree, "GET /x").unwrap();
    assert!(truncated);
    assert_eq!(
        entries
            .iter()
            .map(|e| (e.path.as_str(), e.mode.as_str()))
            .collect::<Vec<_>>(),
        [("rules/r.yaml", "100644"), ("link", "120000")]
    );
}
