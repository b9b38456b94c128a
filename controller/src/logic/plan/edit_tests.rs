//! Unit tests of `logic/plan/edit.rs`.

use super::*;
use crate::api::common::CategoryEdit;
use crate::logic::plan::fixtures::{approved, assign, mirror, recategorise};

fn edits(drop: &[&str], set: &[(&str, &str)]) -> Edits {
    Edits {
        drop: drop.iter().map(|d| (*d).to_owned()).collect(),
        set: set
            .iter()
            .map(|(t, c)| CategoryEdit {
                transaction_id: (*t).to_owned(),
                category_id: (*c).to_owned(),
            })
            .collect(),
    }
}

fn proposal() -> Basis {
    Basis::Assignments(vec![
        assign("tx-048", "cat-groceries"),
        assign("tx-049", "cat-transport"),
    ])
}

fn none() -> HashSet<String> {
    HashSet::new()
}

#[test]
fn drops_and_sets_apply_to_the_lines_the_proposal_holds() {
    let disputed: HashSet<String> = ["tx-066".to_owned()].into();
    let cases: Vec<(&str, Edits, Result<Basis, EditError>)> = vec![
        (
            "drop one",
            edits(&["tx-048"], &[]),
            Ok(Basis::Assignments(vec![assign("tx-049", "cat-transport")])),
        ),
        (
            "set one",
            edits(&[], &[("tx-049", "cat-groceries")]),
            Ok(Basis::Assignments(vec![
                assign("tx-048", "cat-groceries"),
                assign("tx-049", "cat-groceries"),
            ])),
        ),
        (
            "drop one, set the other, answer a disputed one",
            edits(
                &["tx-048"],
                &[("tx-049", "cat-groceries"), ("tx-066", "cat-transport")],
            ),
            Ok(Basis::Assignments(vec![
                assign("tx-049", "cat-groceries"),
                assign("tx-066", "cat-transport"),
            ])),
        ),
        (
            "drop a line it does not hold",
            edits(&["tx-066"], &[]),
            Err(EditError::NotInPlan("tx-066".into())),
        ),
        (
            "set a transaction nobody asked about",
            edits(&[], &[("tx-065", "cat-transport")]),
            Err(EditError::NotInPlan("tx-065".into())),
        ),
        (
            "drop and set the same line",
            edits(&["tx-048"], &[("tx-048", "cat-transport")]),
            Err(EditError::Twice("tx-048".into())),
        ),
        (
            "drop it twice",
            edits(&["tx-048", "tx-048"], &[]),
            Err(EditError::Twice("tx-048".into())),
        ),
        (
            "drop everything",
            edits(&["tx-048", "tx-049"], &[]),
            Err(EditError::NothingLeft),
        ),
    ];
    for (what, e, want) in cases {
        assert_eq!(apply(&proposal(), &e, &disputed), want, "{what}");
    }
}

#[test]
fn an_undo_can_only_be_narrowed() {
    let change = |id: &str| AppliedChange {
        transaction_id: id.into(),
        from_category_id: None,
        to_category_id: Some("cat-groceries".into()),
    };
    let undo = Basis::Undo(vec![change("tx-048"), change("tx-049")]);
    assert_eq!(
        apply(&undo, &edits(&["tx-049"], &[]), &none()),
        Ok(Basis::Undo(vec![change("tx-048")]))
    );
    assert_eq!(
        apply(&undo, &edits(&[], &[("tx-048", "cat-transport")]), &none()),
        Err(EditError::SetOnUndo("tx-048".into()))
    );
    assert_eq!(
        apply(&undo, &edits(&["tx-066"], &[]), &none()),
        Err(EditError::NotInPlan("tx-066".into()))
    );
}

#[test]
fn four_eyes_lets_an_approver_drop_but_not_choose() {
    let drop = edits(&["tx-048"], &[]);
    let set = edits(&[], &[("tx-049", "cat-groceries")]);
    assert_eq!(allowed(&drop, true), Ok(()));
    assert_eq!(allowed(&set, false), Ok(()));
    assert_eq!(allowed(&set, true), Err(EditError::SetUnderFourEyes));
}

#[test]
fn the_edited_proposal_has_its_own_hash_and_holds_on_fresh_state() {
    let m = mirror();
    let a = approved(&m, proposal());
    let e = edits(&["tx-048"], &[("tx-049", "cat-groceries")]);
    let (preview, edited_a) = edited(&a, &e, &none(), &m, None).unwrap();
    assert_ne!(edited_a.hash, a.hash);
    assert_eq!(preview.hash, edited_a.hash);
    assert_eq!(
        edited_a.changes,
        [AppliedChange {
            transaction_id: "tx-049".into(),
            from_category_id: None,
            to_category_id: Some("cat-groceries".into()),
        }]
    );
    assert_eq!(edited_a.holds(&m), Ok(()));
    // The same edits on the same state give the same hash: it binds exactly this set.
    assert_eq!(
        edited(&a, &e, &none(), &m, None).unwrap().1.hash,
        edited_a.hash
    );
    // A landed write of the edited line is read as before it: a resume finds the same hash.
    let mut landed = m.clone();
    recategorise(&mut landed, "tx-049", Some("cat-groceries"));
    assert_eq!(edited_a.holds(&landed), Ok(()));
    // Someone edits the line between the approval and the write: it no longer holds.
    let mut moved = m.clone();
    recategorise(&mut moved, "tx-049", Some("cat-transport"));
    assert!(edited_a.holds(&moved).is_err());
}

#[test]
fn an_edit_to_a_category_nobody_may_use_is_refused() {
    let m = mirror();
    let a = approved(&m, proposal());
    for category in ["cat-old", "cat-nope", "cat-uncategorized"] {
        let e = edits(&[], &[("tx-049", category)]);
        let got = edited(&a, &e, &none(), &m, None);
        assert!(
            matches!(&got, Err(EditError::Invalid(text)) if text.contains(category)),
            "{category}: {got:?}"
        );
    }
}

#[test]
fn the_summary_names_the_first_edits_and_counts_the_rest() {
    let name = |id: &str| id.trim_start_matches("cat-").to_owned();
    assert_eq!(
        summary(&edits(&["tx-1"], &[("tx-2", "cat-groceries")]), name),
        "dropped tx-1; set tx-2 to groceries"
    );
    let many: Vec<String> = (0..10).map(|i| format!("tx-{i}")).collect();
    let many: Vec<&str> = many.iter().map(String::as_str).collect();
    assert_eq!(
        summary(&edits(&many, &[]), name),
        "dropped tx-0, tx-1, tx-2, tx-3, tx-4, tx-5, tx-6, tx-7, and 2 more"
    );
}
