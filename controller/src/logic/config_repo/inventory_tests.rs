//! Unit tests of `logic/config_repo/inventory.rs`.

use super::*;
use crate::logic::config_repo::RepoKind::{Budget, Transaction as Tx};
use crate::logic::config_repo::fixtures::{doc, entry, live};

fn changes<'a>(
    apply: Vec<&'a Document>,
    unchanged: Vec<InventoryEntry>,
    waiting: Vec<InventoryEntry>,
) -> Changes<'a> {
    Changes {
        apply,
        unchanged,
        prune: Vec::new(),
        left: Vec::new(),
        waiting,
        baseline: (0, 0),
    }
}

fn names(entries: &[InventoryEntry]) -> Vec<(&str, &str, Option<&str>)> {
    entries
        .iter()
        .map(|e| (e.kind.as_str(), e.name.as_str(), e.commit.as_deref()))
        .collect()
}

#[test]
fn a_sync_owns_what_stayed_what_it_applied_and_what_it_put_off() {
    let household = doc(Budget, "household", "d2");
    let c = changes(
        vec![&household],
        vec![entry(Tx, "rent", "d1", 1)],
        vec![entry(Tx, "groceries", "d3", 2)],
    );
    let mut owned = Inventory::kept(&c);
    owned.applied(&household, Some(4), Some("uid-household".into()), "abc");
    owned.put_off(&live(Tx, "old", 3));
    let entries = owned.entries();
    assert_eq!(
        names(&entries),
        [
            ("Budget", "household", Some("abc")),
            ("Transaction", "groceries", None),
            ("Transaction", "old", None),
            ("Transaction", "rent", None),
        ]
    );
    // A put-off prune has no digest: the next sync looks at it again.
    assert_eq!(entries[2].digest, "");
}

#[test]
fn an_interrupted_apply_keeps_everything_applied_before() {
    let household = doc(Budget, "household", "d2");
    let c = changes(vec![&household], Vec::new(), Vec::new());
    let mut owned = Inventory::kept(&c);
    owned.applied(&household, Some(5), None, "new");
    let previous = [
        entry(Budget, "household", "d1", 4),
        entry(Tx, "rent", "d1", 1),
    ];
    let kept = owned.interrupted(&previous);
    assert_eq!(
        names(&kept),
        [
            ("Budget", "household", Some("new")),
            ("Transaction", "rent", None)
        ]
    );
}

#[test]
fn only_client_errors_but_429_refuse_the_document() {
    for (code, refuses) in [
        (400, true),
        (403, true),
        (409, true),
        (422, true),
        (429, false),
        (500, false),
        (503, false),
    ] {
        assert_eq!(refuses_document(code), refuses, "{code}");
    }
    let d = doc(Tx, "rent", "d1");
    let r = dry_run_refusal(&d, "spec.amount: Invalid value");
    assert_eq!((r.file.as_str(), r.line), ("rent.yaml", 1));
    assert_eq!(
        r.message,
        "Transaction/rent: the API server refused it: spec.amount: Invalid value"
    );
    assert_eq!(
        apply_failed(&d, &"boom"),
        "rent.yaml:1: Transaction/rent: boom"
    );
}

#[test]
fn a_sync_that_did_nothing_says_nothing() {
    assert_eq!(
        note("main@abc", &changes(Vec::new(), Vec::new(), Vec::new()), 0),
        None
    );
    let said = note(
        "main@abc",
        &changes(Vec::new(), Vec::new(), vec![entry(Tx, "groceries", "d", 1)]),
        0,
    )
    .unwrap();
    assert!(
        said.starts_with("revision main@abc: applied 0, pruned 0"),
        "{said}"
    );
    assert!(
        said.ends_with("kept until their write ends 1 [Transaction/groceries]"),
        "{said}"
    );
    assert!(note("main@abc", &changes(Vec::new(), Vec::new(), Vec::new()), 2).is_some());
}
