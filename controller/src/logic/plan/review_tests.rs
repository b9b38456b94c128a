//! Unit tests of `logic/plan/review.rs`.

use super::*;
use crate::logic::plan::fixtures::{DIGITS, assign, at, mirror};
use crate::logic::plan::preview::preview;

fn watch(large_from: Option<i64>) -> Watch {
    Watch {
        large_from,
        decimal_digits: DIGITS,
    }
}

#[test]
fn lines_group_by_payee_and_category_and_total_per_category() {
    let m = mirror();
    let p = preview(
        &[
            assign("tx-048", "cat-groceries"),
            assign("tx-049", "cat-transport"),
            assign("tx-066", "cat-groceries"),
        ],
        &at(&m),
    );
    let r = review(&p.changes, watch(None), Vec::new());
    let total: u32 = r.groups.iter().map(|g| g.count).sum();
    assert_eq!(total, 3);
    assert!(r.groups.windows(2).all(|w| w[0].count >= w[1].count));
    let groceries = r
        .categories
        .iter()
        .find(|c| c.category.as_deref() == Some("Groceries"))
        .unwrap();
    assert_eq!((groceries.count, groceries.total.0.as_str()), (2, "20.40"));
    assert!(r.categories.windows(2).all(|w| {
        money::parse_decimal(&w[0].total.0).unwrap() >= money::parse_decimal(&w[1].total.0).unwrap()
    }));
    assert!(r.exceptions.is_empty(), "{:?}", r.exceptions);
}

#[test]
fn a_recategorisation_and_a_large_line_come_first_with_why() {
    let m = mirror();
    // tx-065 is in Groceries already; tx-049 is the 45.00 train; tx-048 the bakery.
    let p = preview(
        &[
            assign("tx-065", "cat-transport"),
            assign("tx-049", "cat-transport"),
            assign("tx-048", "cat-groceries"),
        ],
        &at(&m),
    );
    let r = review(&p.changes, watch(Some(40_000)), Vec::new());
    let why = |id: &str| {
        r.exceptions
            .iter()
            .find(|e| e.change.transaction_id == id)
            .map(|e| e.why.clone())
    };
    assert_eq!(
        why("tx-065").as_deref(),
        Some("moves it out of Groceries, which someone chose")
    );
    assert_eq!(
        why("tx-049").as_deref(),
        Some("at least 40.00 (the Budget's auto-approve limit)")
    );
    assert_eq!(why("tx-048"), None);
    assert_eq!(r.exception_count, 2);
}

#[test]
fn a_line_far_above_its_groups_typical_one_stands_out() {
    let line = |id: &str, amount: &str| PlannedChange {
        change: crate::api::common::CategoryChange {
            transaction_id: id.into(),
            date: "2026-09-30".into(),
            amount: Amount(amount.into()),
            payee: Some("Alpha Mart".into()),
            from_category_id: None,
            from_category: None,
            to_category_id: Some("cat-groceries".into()),
            to_category: Some("Groceries".into()),
        },
        payee_id: Some("payee-alpha".into()),
        lines: Default::default(),
        fields: Vec::new(),
    };
    let changes = [
        line("a", "-10.00"),
        line("b", "-12.00"),
        line("c", "-11.00"),
        line("d", "-900.00"),
    ];
    let r = review(&changes, watch(None), Vec::new());
    let ids: Vec<(&str, &str)> = r
        .exceptions
        .iter()
        .map(|e| (e.change.transaction_id.as_str(), e.why.as_str()))
        .collect();
    assert_eq!(ids, [("d", "75× the typical 12.00 of its payee's lines")]);
    // Two lines make no typical one.
    let r = review(&changes[2..], watch(None), Vec::new());
    assert!(r.exceptions.is_empty());
}

#[test]
fn beyond_fifty_groups_the_smallest_are_counted_together() {
    let mut groups: Vec<ReviewGroup> = (0..60)
        .map(|i| ReviewGroup {
            payee: Some(format!("payee {i:02}")),
            category: Some("Groceries".into()),
            count: 60 - i,
            total: Amount("1.00".into()),
        })
        .collect();
    let rest = fold_rest(&mut groups, 2).unwrap();
    assert_eq!(groups.len(), GROUPS - 1);
    assert_eq!(rest.category.as_deref(), Some("11 more groups"));
    assert_eq!(rest.count, (1..=11).sum::<u32>());
    assert_eq!(rest.total.0, "11.00");
}

#[test]
fn only_uncategorised_disputed_transactions_are_asked() {
    let m = mirror();
    let d = |id: &str| Disagreement {
        transaction_id: id.into(),
        rules: vec!["a".into(), "b".into()],
        categories: vec!["cat-groceries".into(), "cat-gone".into()],
    };
    let asked = questions(&[d("tx-048"), d("tx-065"), d("tx-gone")], &m, DIGITS);
    let ids: Vec<&str> = asked
        .iter()
        .map(|q| q.change.transaction_id.as_str())
        .collect();
    assert_eq!(
        ids,
        ["tx-048"],
        "categorised and vanished ones are not asked"
    );
    assert_eq!(asked[0].rules, ["a", "b"]);
    assert_eq!(asked[0].categories, ["Groceries", "cat-gone"]);
    assert_eq!(asked[0].change.to_category_id, None);
}
