use serde_json::json;

use super::*;
use crate::logic::config_repo::RepoKind;
use crate::logic::config_repo::fixtures::{doc, entry};

fn commit(parents: usize, author: Option<&str>, files: &[&str], pull: Option<&str>) -> RangeCommit {
    RangeCommit {
        parents,
        author: author.map(str::to_owned),
        files: files.iter().map(|f| f.to_string()).collect(),
        pull_author: pull.map(str::to_owned),
    }
}

fn names(list: &[&str]) -> Vec<String> {
    list.iter().map(|n| n.to_string()).collect()
}

/// Each file with the names behind it.
type Expected = &'static [(&'static str, &'static [&'static str])];

#[test]
fn each_file_names_who_changed_it() {
    let cases: &[(&str, Vec<RangeCommit>, Expected)] = &[
        (
            "a pushed commit: its author, on its files only",
            vec![commit(1, Some("bob"), &["tx/a.yaml"], None)],
            &[("tx/a.yaml", &["gitea:bob"])],
        ),
        (
            "a merged pull request: its author, not whoever pressed merge",
            vec![
                commit(2, Some("alice"), &["tx/a.yaml"], Some("bob")),
                commit(1, Some("bob"), &["tx/a.yaml"], None),
            ],
            &[("tx/a.yaml", &["gitea:bob"])],
        ),
        (
            "a squash merge: the commit's author and the pull request's",
            vec![commit(1, Some("carol"), &["tx/a.yaml"], Some("bob"))],
            &[("tx/a.yaml", &["gitea:carol", "gitea:bob"])],
        ),
        (
            "a merge made outside Gitea: its author merged it",
            vec![commit(2, Some("alice"), &["tx/a.yaml"], None)],
            &[("tx/a.yaml", &["gitea:alice"])],
        ),
        (
            "an e-mail no Gitea user has names nobody",
            vec![commit(1, None, &["tx/a.yaml"], None)],
            &[("tx/a.yaml", &[])],
        ),
        (
            "two people on two files, each once",
            vec![
                commit(1, Some("bob"), &["a.yaml", "b.yaml"], None),
                commit(1, Some("bob"), &["a.yaml"], None),
                commit(1, Some("alice"), &["b.yaml"], None),
            ],
            &[
                ("a.yaml", &["gitea:bob"]),
                ("b.yaml", &["gitea:bob", "gitea:alice"]),
            ],
        ),
    ];
    for (about, commits, want) in cases {
        let got = by_file(commits);
        let want: BTreeMap<String, Vec<String>> = want
            .iter()
            .map(|(f, n)| (f.to_string(), names(n)))
            .collect();
        assert_eq!(got, want, "{about}");
    }
}

fn with_lineage(kind: RepoKind, name: &str, digest: &str, lineage: &str) -> Document {
    let mut d = doc(kind, name, digest);
    d.body = json!({"metadata": {"annotations": {PROPOSED_BY: lineage}}});
    d
}

fn lineage_of(d: &Document) -> &str {
    d.body["metadata"]["annotations"][PROPOSED_BY]
        .as_str()
        .unwrap()
}

#[test]
fn only_what_the_revision_changes_is_attributed() {
    let authors: BTreeMap<String, Vec<String>> = [
        ("rent.yaml".to_string(), names(&["gitea:bob"])),
        (
            "food.yaml".to_string(),
            names(&["gitea:bob", "configrepo:household"]),
        ),
    ]
    .into();
    let mut documents = vec![
        // New: no inventory entry.
        with_lineage(RepoKind::Transaction, "rent", "d1", "configrepo:household"),
        // Changed: the inventory holds another digest.
        with_lineage(
            RepoKind::Transaction,
            "food",
            "d2",
            "configrepo:household,alice",
        ),
        // Unchanged, though its file was touched.
        with_lineage(RepoKind::Transaction, "gym", "d3", "configrepo:household"),
        // Changed, but no commit of the range touched its file (a rename elsewhere).
        with_lineage(RepoKind::Transaction, "bus", "d4", "configrepo:household"),
    ];
    documents[2].file = "rent.yaml".into();
    let inventory = [
        entry(RepoKind::Transaction, "food", "old", 1),
        entry(RepoKind::Transaction, "gym", "d3", 1),
        entry(RepoKind::Transaction, "bus", "old", 1),
        // Same name, another kind: not this document.
        entry(RepoKind::CategorizationPlan, "rent", "d1", 1),
    ];
    attribute(&mut documents, &inventory, &authors);
    let got: Vec<&str> = documents.iter().map(lineage_of).collect();
    assert_eq!(
        got,
        [
            "configrepo:household,gitea:bob",
            "configrepo:household,alice,gitea:bob",
            "configrepo:household",
            "configrepo:household",
        ]
    );
    assert_eq!(documents[0].digest, "d1", "the digest stays as parsed");
}

#[test]
fn a_range_begins_after_the_applied_commit_only_on_a_branch_that_moved_on() {
    assert_eq!(since(Some("c1"), true), Some("c1"));
    assert_eq!(since(Some("c1"), false), None, "rewritten");
    assert_eq!(since(None, true), None, "first sync");
    assert!(!brings_commits("c1", Some("c1")), "unchanged");
    assert!(brings_commits("c2", Some("c1")));
    assert!(brings_commits("c1", None));
    assert!(too_long("main@sha1:c2", true).contains("its history has more than 500 commits"));
    assert!(unknown("main@sha1:c2", "household/config", "HTTP 403").contains("HTTP 403"));
}
