//! Unit tests of `logic/plan/preview.rs`.

use super::*;
use crate::logic::plan::fixtures::{assign, at, mirror, recategorise};

fn change(
    tx: &str,
    date: &str,
    amount: &str,
    payee: &str,
    from: Option<(&str, &str)>,
    to: (&str, &str),
) -> CategoryChange {
    CategoryChange {
        transaction_id: tx.into(),
        date: date.into(),
        amount: Amount(amount.into()),
        payee: Some(payee.into()),
        from_category_id: from.map(|(id, _)| id.into()),
        from_category: from.map(|(_, name)| name.into()),
        to_category_id: Some(to.0.into()),
        to_category: Some(to.1.into()),
    }
}

fn seed_002() -> Vec<Assignment> {
    vec![
        assign("tx-048", "cat-groceries"),
        assign("tx-049", "cat-transport"),
    ]
}

#[test]
fn seed_002_two_changes_nothing_unchanged() {
    let m = mirror();
    let p = preview(&seed_002(), &at(&m));
    let shown: Vec<_> = p.changes.iter().map(|c| c.change.clone()).collect();
    assert_eq!(
        shown,
        [
            change(
                "tx-048",
                "2026-09-16",
                "-8.40",
                "CB BOULANGERIE DU PORT FACT 160926 525130******1",
                None,
                ("cat-groceries", "Groceries")
            ),
            change(
                "tx-049",
                "2026-09-18",
                "-45.00",
                "RAIL CO",
                None,
                ("cat-transport", "Transport")
            ),
        ]
    );
    assert_eq!(p.changes[1].payee_id.as_deref(), Some("payee-rail"));
    assert_eq!((p.unchanged_count, p.conflicts.len()), (0, 0));
    assert_eq!(p.server_knowledge, 100);
    assert!(!p.nothing_to_do());
    assert_eq!(p.hash.len(), 64);
    assert!(p.hash.bytes().all(|b| b.is_ascii_hexdigit()));
}

#[test]
fn counts_changes_and_assignments_that_already_hold() {
    let cases: Vec<(&str, Vec<Assignment>, Vec<&str>, u32)> = vec![
        ("no assignment", vec![], vec![], 0),
        (
            "already there",
            vec![assign("tx-065", "cat-groceries")],
            vec![],
            1,
        ),
        (
            "a move between categories, and one already there",
            vec![
                assign("tx-065", "cat-transport"),
                assign("tx-052", "cat-investments"),
            ],
            vec!["tx-065"],
            1,
        ),
        (
            "ordered by date whatever the plan's order",
            vec![
                assign("tx-066", "cat-groceries"),
                assign("tx-049", "cat-transport"),
                assign("tx-048", "cat-groceries"),
            ],
            vec!["tx-048", "tx-049", "tx-066"],
            0,
        ),
        (
            "a transaction missing from the mirror is left out",
            vec![assign("tx-gone", "cat-groceries")],
            vec![],
            0,
        ),
    ];
    let m = mirror();
    for (name, assignments, changed, unchanged) in cases {
        let p = preview(&assignments, &at(&m));
        let ids: Vec<_> = p
            .changes
            .iter()
            .map(|c| c.change.transaction_id.as_str())
            .collect();
        assert_eq!(ids, changed, "{name}");
        assert_eq!(p.unchanged_count, unchanged, "{name}");
        assert_eq!(p.nothing_to_do(), changed.is_empty(), "{name}");
    }
}

#[test]
fn names_the_category_a_transaction_leaves() {
    let p = preview(&[assign("tx-065", "cat-transport")], &at(&mirror()));
    let c = &p.changes[0].change;
    assert_eq!(
        (c.from_category_id.as_deref(), c.from_category.as_deref()),
        (Some("cat-groceries"), Some("Groceries"))
    );
    assert_eq!(c.amount, Amount("-37.05".into()));
}

#[test]
fn a_transaction_without_payee_shows_none() {
    let p = preview(&[assign("tx-090", "cat-transport")], &at(&mirror()));
    assert_eq!(
        (
            p.changes[0].change.payee.as_ref(),
            p.changes[0].payee_id.as_ref()
        ),
        (None, None)
    );
}

#[test]
fn converts_into_the_status_preview() {
    let p = preview(
        &[
            assign("tx-048", "cat-groceries"),
            assign("tx-065", "cat-groceries"),
        ],
        &at(&mirror()),
    );
    let status = Preview::from(p.clone());
    assert_eq!(
        status,
        Preview {
            hash: p.hash.clone(),
            server_knowledge: 100,
            change_count: 1,
            changes: vec![p.changes[0].change.clone()],
            unchanged_count: 1,
            conflicts: vec![],
            review: None,
        }
    );
}

#[test]
fn the_hash_binds_the_plan_and_the_transactions_it_touches() {
    let m = mirror();
    let base = preview(&seed_002(), &at(&m)).hash;
    let hash_with = |assignments: &[Assignment], edit: &dyn Fn(&mut Mirror)| {
        let mut m = mirror();
        edit(&mut m);
        preview(assignments, &at(&m)).hash
    };
    let mut reversed = seed_002();
    reversed.reverse();
    let mut more = seed_002();
    more.push(assign("tx-065", "cat-groceries"));
    let other_target = [
        assign("tx-048", "cat-groceries"),
        assign("tx-049", "cat-groceries"),
    ];
    let cases: Vec<(&str, String, bool)> = vec![
        (
            "same plan, same state",
            hash_with(&seed_002(), &|_| {}),
            true,
        ),
        ("assignment order", hash_with(&reversed, &|_| {}), true),
        (
            "an untouched transaction recategorised",
            hash_with(&seed_002(), &|m| {
                recategorise(m, "tx-066", Some("cat-transport"))
            }),
            true,
        ),
        (
            "a sync that changed nothing touched",
            hash_with(&seed_002(), &|m| m.server_knowledge = 250),
            true,
        ),
        (
            "a category renamed",
            hash_with(&seed_002(), &|m| {
                m.categories.get_mut("cat-groceries").unwrap().name = "Food".into()
            }),
            true,
        ),
        (
            "a memo-only edit",
            hash_with(&seed_002(), &|m| {
                m.transactions.get_mut("tx-048").unwrap().memo = Some("bread".into())
            }),
            true,
        ),
        ("another target", hash_with(&other_target, &|_| {}), false),
        ("one more assignment", hash_with(&more, &|_| {}), false),
        (
            "a touched transaction recategorised",
            hash_with(&seed_002(), &|m| {
                recategorise(m, "tx-049", Some("cat-groceries"))
            }),
            false,
        ),
        (
            "a touched transaction's amount",
            hash_with(&seed_002(), &|m| {
                m.transactions.get_mut("tx-048").unwrap().amount = -9_400
            }),
            false,
        ),
        (
            "a touched transaction's payee",
            hash_with(&seed_002(), &|m| {
                m.transactions.get_mut("tx-048").unwrap().payee_id = Some("payee-rail".into())
            }),
            false,
        ),
        (
            "a touched transaction's date",
            hash_with(&seed_002(), &|m| {
                m.transactions.get_mut("tx-048").unwrap().date = "2026-09-17".into()
            }),
            false,
        ),
    ];
    for (name, hash, same) in cases {
        assert_eq!(hash == base, same, "{name}");
    }
}
