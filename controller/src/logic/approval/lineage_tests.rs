//! Unit tests of `logic/approval/lineage.rs`.

use std::collections::BTreeMap;

use super::*;

fn names(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

#[test]
fn the_annotation_lists_each_name_once_in_order() {
    let cases = [
        ("alice", vec!["alice"]),
        ("alice,bob", vec!["alice", "bob"]),
        (" alice , bob ,", vec!["alice", "bob"]),
        ("alice,bob,alice", vec!["alice", "bob"]),
        ("", vec![]),
        (" , ", vec![]),
        (
            "configrepo:household,system:serviceaccount:home:ci",
            vec!["configrepo:household", "system:serviceaccount:home:ci"],
        ),
    ];
    for (value, want) in cases {
        assert_eq!(parse(value), names(&want), "{value:?}");
    }
    let with = |v: &str| BTreeMap::from([(PROPOSED_BY.to_owned(), v.to_owned())]);
    assert_eq!(of(Some(&with("alice,bob"))), names(&["alice", "bob"]));
    assert!(of(Some(&BTreeMap::new())).is_empty());
    assert!(of(None).is_empty());
    assert_eq!(render(&names(&["alice", "bob"])), "alice,bob");
}

#[test]
fn extending_adds_only_what_is_missing() {
    let mut lineage = names(&["alice"]);
    extend(&mut lineage, names(&["bob", "alice", " ", "carol", "bob"]));
    assert_eq!(lineage, names(&["alice", "bob", "carol"]));
}

#[test]
fn gathering_follows_repositories_and_gitea_logins() {
    let known = Known {
        repos: BTreeMap::from([
            ("mine".to_owned(), names(&["alice"])),
            ("shared".to_owned(), names(&["carol", "dave"])),
            ("loop".to_owned(), names(&["configrepo:loop", "erin"])),
        ]),
        applied_by: vec![],
        gitea_users: BTreeMap::from([("bobby".to_owned(), "bob".to_owned())]),
    };
    type Case<'a> = (&'a str, Vec<&'a str>, Vec<&'a str>, Vec<&'a str>);
    let cases: Vec<Case> = vec![
        ("a person", vec!["alice"], vec![], vec!["alice"]),
        (
            "a repository of one's own",
            vec!["configrepo:mine"],
            vec![],
            vec!["configrepo:mine", "alice"],
        ),
        (
            "a repository its makers and editors",
            vec!["configrepo:shared", "frank"],
            vec![],
            vec!["configrepo:shared", "frank", "carol", "dave"],
        ),
        (
            "a repository that applied it as a ServiceAccount",
            vec!["system:serviceaccount:home:ci"],
            vec!["mine"],
            vec!["system:serviceaccount:home:ci", "configrepo:mine", "alice"],
        ),
        (
            "a Gitea login mapped to its user",
            vec!["gitea:bobby"],
            vec![],
            vec!["gitea:bobby", "bob"],
        ),
        (
            "an unmapped Gitea login stays as it is",
            vec!["gitea:stranger"],
            vec![],
            vec!["gitea:stranger"],
        ),
        (
            "a repository that names itself is followed once",
            vec!["configrepo:loop"],
            vec![],
            vec!["configrepo:loop", "erin"],
        ),
        (
            "a repository gone names nobody more",
            vec!["configrepo:deleted"],
            vec![],
            vec!["configrepo:deleted"],
        ),
        (
            "the controller's own proposals",
            vec!["ledgerops:autopilot", "carol"],
            vec![],
            vec!["ledgerops:autopilot", "carol"],
        ),
    ];
    for (what, lineage, applied_by, want) in cases {
        let known = Known {
            applied_by: names(&applied_by),
            ..known.clone()
        };
        assert_eq!(gather(&names(&lineage), &known), Ok(names(&want)), "{what}");
    }
}

#[test]
fn a_lineage_too_long_to_judge_is_refused_not_cut() {
    let many: Vec<String> = (0..=MAX).map(|i| format!("user{i}")).collect();
    let known = Known::default();
    let err = gather(&many, &known).unwrap_err();
    assert!(err.contains("more than 64"), "{err}");
    assert_eq!(gather(&many[..MAX], &known).map(|l| l.len()), Ok(MAX));
}
