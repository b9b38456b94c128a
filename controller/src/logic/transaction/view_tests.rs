//! Unit tests of `logic/transaction/view.rs`.

use super::*;
use crate::logic::plan::fixtures;

#[test]
fn a_sync_that_leaves_the_record_as_it_is_keeps_what_status_shows() {
    let mut m = fixtures::mirror();
    let before = observed_in(&m, "tx-048").expect("mirrored");
    m.server_knowledge += 5;
    let later = observed_in(&m, "tx-048").unwrap();
    assert_ne!(later, before, "the knowledge moved");
    assert_eq!(refreshed(Some(before.clone()), later.clone()), before);
    m.transactions.get_mut("tx-048").unwrap().memo = Some("pain".into());
    let edited = observed_in(&m, "tx-048").unwrap();
    assert_eq!(refreshed(Some(before), edited.clone()), edited);
    assert_eq!(refreshed(None, later.clone()), later);
    assert_eq!(observed_in(&m, "tx-nope"), None);
}

#[test]
fn a_category_change_reads_by_name() {
    let m = fixtures::mirror();
    let tx = m
        .transactions
        .get("tx-048")
        .expect("seed 002's bakery transaction")
        .clone();
    let groceries = m
        .categories
        .values()
        .find(|c| c.name == "Groceries")
        .unwrap()
        .id
        .clone();
    let current = EndState {
        allocation: Some(Allocation::Uncategorized),
        ..EndState::default()
    };
    let target = EndState {
        allocation: Some(Allocation::Category(groceries.clone())),
        ..EndState::default()
    };
    let change = planned_change(&tx, &current, &target, &m, 2).unwrap();
    assert_eq!(change.change.amount.0, "-8.40");
    assert_eq!(change.change.to_category.as_deref(), Some("Groceries"));
    assert_eq!(change.change.from_category_id, None);
    assert_eq!(allocation_words(&target, &m), "Groceries");
    assert!(planned_change(&tx, &target, &target, &m, 2).is_none());
    assert!(change.fields.is_empty() && change.lines == LineMoves::default());
    let msg = divergence_message("Dining", "Groceries", "Transport", "ledgerops.dev/resolve");
    assert!(msg.contains("shows Dining") && msg.contains("=theirs"));
}

fn state(allocation: Option<Allocation>, memo: Option<&str>) -> EndState {
    EndState {
        allocation,
        memo: memo.map(str::to_owned),
        ..EndState::default()
    }
}

fn split(lines: &[&str]) -> Option<Allocation> {
    Some(Allocation::split(
        lines
            .iter()
            .map(|c| crate::logic::transaction::converge::Line {
                amount: -4_200,
                category_id: (*c).into(),
                memo: None,
            })
            .collect(),
    ))
}

/// What the policy is shown for each kind of change: the fields beyond one category, and
/// the split lines on either side.
#[test]
fn every_managed_field_is_shown_to_the_policy() {
    let m = fixtures::mirror();
    let tx = m.transactions.get("tx-048").unwrap().clone();
    let groceries = || Some(Allocation::Category("cat-groceries".into()));
    // (name, current, target, fields, lines out of, lines into, in words)
    type Case<'a> = (
        &'a str,
        EndState,
        EndState,
        Vec<ManagedField>,
        Vec<&'a str>,
        Vec<&'a str>,
        &'a str,
    );
    let cases: Vec<Case> = vec![
        (
            "a memo only",
            state(groceries(), Some("old")),
            state(None, Some("new")),
            vec![ManagedField::Memo],
            vec![],
            vec![],
            "memo \"old\" → \"new\"",
        ),
        (
            "a category and a memo",
            state(Some(Allocation::Uncategorized), Some("")),
            state(groceries(), Some("new")),
            vec![ManagedField::Memo],
            vec![],
            vec![],
            "uncategorized → Groceries, memo \"\" → \"new\"",
        ),
        (
            "a split over a category",
            state(groceries(), None),
            state(split(&["cat-groceries", "cat-transport"]), None),
            vec![ManagedField::Split],
            vec![],
            vec!["cat-groceries", "cat-transport"],
            "Groceries → Split (Groceries -4.20, Transport -4.20)",
        ),
        (
            "a split in place, its memo changing",
            state(split(&["cat-transport", "cat-groceries"]), Some("a")),
            state(split(&["cat-groceries", "cat-transport"]), Some("b")),
            vec![ManagedField::Memo],
            vec![],
            vec![],
            "memo \"a\" → \"b\"",
        ),
        (
            "another split over a split",
            state(split(&["cat-visa", "cat-old"]), None),
            state(split(&["cat-groceries", "cat-transport"]), None),
            vec![ManagedField::Split],
            vec!["cat-old", "cat-visa"],
            vec!["cat-groceries", "cat-transport"],
            "Split (Old hobby -4.20, Visa Premier -4.20) → Split (Groceries -4.20, Transport -4.20)",
        ),
    ];
    for (name, current, target, fields, out_of, into, words) in cases {
        let change = planned_change(&tx, &current, &target, &m, 2).expect(name);
        let ids =
            |refs: &[CategoryRef]| -> Vec<String> { refs.iter().map(|r| r.id.clone()).collect() };
        assert_eq!(change.fields, fields, "{name}");
        assert_eq!(ids(&change.lines.out_of), out_of, "{name}");
        assert_eq!(ids(&change.lines.into), into, "{name}");
        assert_eq!(change_words(&current, &target, &m), words, "{name}");
    }
    let flagged = EndState {
        flag: Some(Flag::Red),
        approved: Some(true),
        ..EndState::default()
    };
    let was = EndState {
        flag: Some(Flag::None),
        approved: Some(false),
        ..EndState::default()
    };
    let change = planned_change(&tx, &was, &flagged, &m, 2).unwrap();
    assert_eq!(
        change.fields,
        [ManagedField::FlagColor, ManagedField::Approved]
    );
    assert_eq!(change_words(&was, &flagged, &m), "flag none → red, approve");
    assert_eq!(
        change.lines.into.first().map(|r| r.name.clone()),
        None,
        "no line moves"
    );
}
