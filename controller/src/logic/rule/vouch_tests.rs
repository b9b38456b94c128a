//! Unit tests of `logic/rule/vouch.rs`.

use super::*;

const FILE: &str = "rules/r.yaml";
const OURS: &str = "kind: CategorizationRule\n";

fn commit(sha: &str, parents: &[&str]) -> BranchCommit {
    BranchCommit {
        sha: sha.into(),
        parents: parents.iter().map(|p| (*p).to_owned()).collect(),
    }
}

fn entry(path: &str, mode: &str, sha: &str) -> TreeEntry {
    TreeEntry {
        path: path.into(),
        mode: mode.into(),
        sha: sha.into(),
    }
}

#[test]
fn a_branch_s_own_commits_span_one_line_without_merges() {
    let span_of = |from: &str, head: &str| {
        Ok(Some(Span {
            from: from.into(),
            head: head.into(),
        }))
    };
    let cases = [
        ("none", vec![], Ok(None)),
        ("one", vec![commit("a", &["base"])], span_of("base", "a")),
        (
            "three, newest first",
            vec![
                commit("c", &["b"]),
                commit("b", &["a"]),
                commit("a", &["base"]),
            ],
            span_of("base", "c"),
        ),
        (
            "oldest first",
            vec![commit("a", &["base"]), commit("b", &["a"])],
            span_of("base", "b"),
        ),
        (
            "a merge",
            vec![commit("m", &["a", "main"]), commit("a", &["base"])],
            Err(vec![Foreign::Merge("m".into())]),
        ),
        (
            "a root commit",
            vec![commit("r", &[])],
            Err(vec![Foreign::Merge("r".into())]),
        ),
    ];
    for (name, commits, want) in cases {
        assert_eq!(span(&commits), want, "{name}");
    }
}

#[test]
fn a_branch_is_vouched_for_only_when_it_changes_just_the_rule_s_file_to_the_manifest() {
    let base = vec![
        entry("budget.yaml", REGULAR, "b1"),
        entry("policy.yaml", REGULAR, "p1"),
    ];
    let with = |more: Vec<TreeEntry>| [base.clone(), more].concat();
    let ours = entry(FILE, REGULAR, "r1");
    let file = |f: &str| Foreign::File(f.into());
    let content = Foreign::Content(FILE.into());
    let cases = [
        ("ours", with(vec![ours.clone()]), Some(OURS), vec![]),
        (
            "content changed",
            with(vec![ours.clone()]),
            Some("kind: Budget\n"),
            vec![content.clone()],
        ),
        ("file gone", base.clone(), None, vec![content.clone()]),
        (
            "executable",
            with(vec![entry(FILE, "100755", "r1")]),
            Some(OURS),
            vec![content.clone()],
        ),
        (
            "a symlink",
            with(vec![entry(FILE, "120000", "r1")]),
            Some(OURS),
            vec![content],
        ),
        (
            "another file added",
            with(vec![ours.clone(), entry("rules/x.yaml", REGULAR, "x1")]),
            Some(OURS),
            vec![file("rules/x.yaml")],
        ),
        (
            "a file changed",
            vec![
                entry("budget.yaml", REGULAR, "b2"),
                entry("policy.yaml", REGULAR, "p1"),
                ours.clone(),
            ],
            Some(OURS),
            vec![file("budget.yaml")],
        ),
        (
            "a file removed",
            vec![entry("budget.yaml", REGULAR, "b1"), ours.clone()],
            Some(OURS),
            vec![file("policy.yaml")],
        ),
        (
            "a file turned into a symlink",
            vec![
                entry("budget.yaml", REGULAR, "b1"),
                entry("policy.yaml", "120000", "l1"),
                ours,
            ],
            Some(OURS),
            vec![file("policy.yaml")],
        ),
    ];
    for (name, head, on_branch, want) in cases {
        assert_eq!(foreign(&base, &head, FILE, on_branch, OURS), want, "{name}");
    }
}

#[test]
fn the_comment_names_what_was_found_and_what_to_do_and_is_marked() {
    let found = [
        Foreign::File("bud`get.yaml\n@alice".into()),
        Foreign::Content(FILE.into()),
        Foreign::Merge("0123456789abcdef".into()),
    ];
    let comment = withdrawal_comment("rail-co", "ledgerops-rule-rail-co-01234567", &found);
    assert!(comment.starts_with(WITHDRAWN), "{comment}");
    for part in [
        "- `bud'get.yaml @\u{200b}alice`\n",
        "- `rules/r.yaml` (not the manifest ledgerops wrote)\n",
        "- merge commit `0123456789ab`\n",
        "does not vouch for content it did not write",
        "delete branch `ledgerops-rule-rail-co-01234567`",
    ] {
        assert!(comment.contains(part), "{part} in {comment}");
    }
    assert_eq!(
        named(&found),
        [
            "bud`get.yaml@alice",
            "rules/r.yaml (not the manifest ledgerops wrote)",
            "merge commit 0123456789ab",
        ]
    );
    let many: Vec<Foreign> = (0..25).map(|i| Foreign::File(format!("f{i}"))).collect();
    assert!(withdrawal_comment("r", "b", &many).contains("- and 5 more\n"));
    assert_eq!(named(&many).len(), 20);
}
