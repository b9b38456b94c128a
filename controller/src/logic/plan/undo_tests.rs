//! Unit tests of `logic/plan/undo.rs`.

use serde_json::json;

use super::*;
use crate::logic::budget::mirror::Mirror;
use crate::logic::plan::fixtures::{assign, at, mirror, recategorise};
use crate::logic::plan::preview::preview;

fn applied(tx: &str, from: Option<&str>, to: Option<&str>) -> AppliedChange {
    AppliedChange {
        transaction_id: tx.into(),
        from_category_id: from.map(str::to_owned),
        to_category_id: to.map(str::to_owned),
    }
}

/// The fixture after seed 002's plan was applied: tx-048 in Groceries, tx-049 in Transport.
fn after_seed_002() -> (Mirror, Vec<AppliedChange>) {
    let mut m = mirror();
    let plan = preview(
        &[
            assign("tx-048", "cat-groceries"),
            assign("tx-049", "cat-transport"),
        ],
        &at(&m),
    );
    let journal: Vec<AppliedChange> = plan
        .changes
        .iter()
        .map(|c| AppliedChange::from(&c.change))
        .collect();
    for a in &journal {
        recategorise(&mut m, &a.transaction_id, a.to_category_id.as_deref());
    }
    (m, journal)
}

#[test]
fn the_journal_entry_is_camel_case_with_explicit_nulls() {
    let entry = applied("tx-048", None, Some("cat-groceries"));
    let value = json!({"transactionId": "tx-048", "fromCategoryId": null,
        "toCategoryId": "cat-groceries"});
    assert_eq!(serde_json::to_value(&entry).unwrap(), value);
    assert_eq!(
        serde_json::from_value::<AppliedChange>(value).unwrap(),
        entry
    );
}

/// An edit made in YNAB after the plan was applied, and what the undo then does.
struct Case {
    name: &'static str,
    edit: fn(&mut Mirror),
    changed: &'static [&'static str],
    unchanged: u32,
    conflicts: &'static [&'static str],
}

#[test]
fn reverts_what_still_holds_and_leaves_later_edits_alone() {
    let cases = [
        Case {
            name: "nothing changed since",
            edit: |_| {},
            changed: &["tx-048", "tx-049"],
            unchanged: 0,
            conflicts: &[],
        },
        Case {
            name: "recategorised by someone since",
            edit: |m| recategorise(m, "tx-049", Some("cat-groceries")),
            changed: &["tx-048"],
            unchanged: 0,
            conflicts: &["tx-049"],
        },
        Case {
            name: "uncategorised by someone since: already where the undo puts it",
            edit: |m| recategorise(m, "tx-049", None),
            changed: &["tx-048"],
            unchanged: 1,
            conflicts: &[],
        },
        Case {
            name: "deleted since",
            edit: |m| {
                m.transactions.remove("tx-048");
            },
            changed: &["tx-049"],
            unchanged: 0,
            conflicts: &["tx-048"],
        },
    ];
    for case in cases {
        let (mut m, journal) = after_seed_002();
        (case.edit)(&mut m);
        let p = undo_preview(&journal, &at(&m));
        let ids: Vec<_> = p
            .changes
            .iter()
            .map(|c| c.change.transaction_id.as_str())
            .collect();
        assert_eq!(ids, case.changed, "{}", case.name);
        assert_eq!(p.unchanged_count, case.unchanged, "{}", case.name);
        assert_eq!(p.conflicts, case.conflicts, "{}", case.name);
    }
}

#[test]
fn an_undo_to_no_category_says_so() {
    let (m, journal) = after_seed_002();
    let p = undo_preview(&journal, &at(&m));
    let c = &p.changes[0].change;
    assert_eq!(c.transaction_id, "tx-048");
    assert_eq!(
        (c.from_category_id.as_deref(), c.from_category.as_deref()),
        (Some("cat-groceries"), Some("Groceries"))
    );
    assert_eq!(
        (c.to_category_id.as_ref(), c.to_category.as_ref()),
        (None, None)
    );
    assert_eq!(c.amount.0, "-8.40");
}

#[test]
fn reverts_to_the_category_a_transaction_came_from() {
    let mut m = mirror();
    recategorise(&mut m, "tx-065", Some("cat-transport"));
    let journal = [applied(
        "tx-065",
        Some("cat-groceries"),
        Some("cat-transport"),
    )];
    let p = undo_preview(&journal, &at(&m));
    assert_eq!(
        p.changes[0].change.to_category.as_deref(),
        Some("Groceries")
    );
}

#[test]
fn the_hash_follows_the_target_and_every_transaction_involved() {
    let (m, journal) = after_seed_002();
    let base = undo_preview(&journal, &at(&m)).hash;
    // Back to "no category" and back to a category are different writes.
    let mut to_category = journal.clone();
    to_category[0].from_category_id = Some("cat-transport".into());
    assert_ne!(undo_preview(&to_category, &at(&m)).hash, base);
    // A conflict stays in the hash: editing it again may end the conflict.
    let mut edited = m.clone();
    recategorise(&mut edited, "tx-049", Some("cat-groceries"));
    let conflicted = undo_preview(&journal, &at(&edited)).hash;
    assert_ne!(conflicted, base);
    recategorise(&mut edited, "tx-049", Some("cat-investments"));
    assert_ne!(undo_preview(&journal, &at(&edited)).hash, conflicted);
    // A deleted conflict hashes apart from one still there.
    let mut deleted = m.clone();
    deleted.transactions.remove("tx-049");
    assert_ne!(undo_preview(&journal, &at(&deleted)).hash, conflicted);
    // Untouched transactions do not count.
    let mut untouched = m.clone();
    recategorise(&mut untouched, "tx-066", Some("cat-groceries"));
    assert_eq!(undo_preview(&journal, &at(&untouched)).hash, base);
}
