//! Unit tests of `logic/plan/rest.rs`.

use std::collections::BTreeSet;

use super::*;
use crate::api::common::CategoryEdit;
use crate::logic::plan::fixtures::{mirror, recategorise};

fn change(tx: &str, to: &str) -> AppliedChange {
    AppliedChange {
        transaction_id: tx.into(),
        from_category_id: None,
        to_category_id: Some(to.into()),
    }
}

/// A write decided at the fixture's knowledge: tx-048 to Groceries, tx-049 to Transport.
fn journal() -> Vec<AppliedChange> {
    vec![
        change("tx-048", "cat-groceries"),
        change("tx-049", "cat-transport"),
    ]
}

/// (case, knowledge, moved since, elsewhere, what is left alone)
type Case = (
    &'static str,
    Option<i64>,
    BTreeSet<String>,
    BTreeSet<String>,
    Option<BTreeSet<String>>,
);

fn ids(of: &[&str]) -> BTreeSet<String> {
    of.iter().map(|s| (*s).to_owned()).collect()
}

#[test]
fn the_rest_goes_on_only_when_every_other_line_is_untouched_since_the_decision() {
    let decided = mirror().server_knowledge;
    let none = BTreeSet::new();
    let mut m = mirror();
    // The spouse moved tx-049 after the write was decided; tx-048 did not move.
    recategorise(&mut m, "tx-049", Some("cat-dining"));
    let elsewhere = ids(&["tx-049"]);
    let cases: Vec<Case> = vec![
        (
            "tx-049 moved, tx-048 untouched",
            Some(decided),
            none.clone(),
            elsewhere.clone(),
            Some(elsewhere.clone()),
        ),
        (
            "nothing moved: settled as before",
            Some(decided),
            none.clone(),
            none.clone(),
            None,
        ),
        (
            "no knowledge recorded: no proof",
            None,
            none.clone(),
            elsewhere.clone(),
            None,
        ),
        (
            "a later operation moved on from it: it had landed",
            Some(decided),
            ids(&["tx-048"]),
            elsewhere.clone(),
            None,
        ),
        (
            "older than the mirror remembers",
            Some(decided - 1),
            none.clone(),
            elsewhere.clone(),
            None,
        ),
        (
            "every line moved: nothing left",
            Some(decided),
            none.clone(),
            ids(&["tx-048", "tx-049"]),
            None,
        ),
    ];
    for (case, knowledge, moved_since, elsewhere, want) in cases {
        assert_eq!(
            rest_of(&journal(), &m, knowledge, &moved_since, &elsewhere),
            want,
            "{case}"
        );
    }
    // tx-048 changed since too (the write may have landed on it): nothing goes on.
    recategorise(&mut m, "tx-048", Some("cat-groceries"));
    assert_eq!(
        rest_of(&journal(), &m, Some(decided), &none, &elsewhere),
        None
    );
}

#[test]
fn the_rest_keeps_the_approvers_edits_and_drops_what_is_left_alone() {
    let left_alone = ids(&["tx-049", "tx-050"]);
    assert_eq!(
        edits(None, &left_alone),
        Edits {
            drop: vec!["tx-049".into(), "tx-050".into()],
            set: vec![],
        }
    );
    let approver = Edits {
        drop: vec!["tx-050".into(), "tx-051".into()],
        set: vec![
            CategoryEdit {
                transaction_id: "tx-049".into(),
                category_id: "cat-dining".into(),
            },
            CategoryEdit {
                transaction_id: "tx-048".into(),
                category_id: "cat-dining".into(),
            },
        ],
    };
    let got = edits(Some(&approver), &left_alone);
    assert_eq!(got.drop, ["tx-050", "tx-051", "tx-049"]);
    assert_eq!(got.set, approver.set[1..]);
}

#[test]
fn the_rest_holds_only_when_it_is_the_write_without_the_lines_left_alone() {
    let left_alone = ids(&["tx-049"]);
    let written = journal();
    assert!(holds(&written[..1], &written, &left_alone));
    assert!(!holds(&written, &written, &left_alone), "a line left alone");
    let elsewhere = [change("tx-048", "cat-dining")];
    assert!(
        !holds(&elsewhere, &written, &left_alone),
        "another category"
    );
    assert!(!holds(&[], &written, &left_alone), "a line missing");
    let three = [
        written[0].clone(),
        written[1].clone(),
        change("tx-050", "cat-dining"),
    ];
    let reordered = [three[2].clone(), three[0].clone()];
    assert!(
        holds(&reordered, &three, &left_alone),
        "order does not matter"
    );
}

#[test]
fn a_rest_written_in_full_is_partly_applied_and_names_what_was_left_alone() {
    let left_alone = ids(&["tx-049"]);
    let Conclusion::PartiallyApplied(said) = conclude(Conclusion::Applied, &left_alone) else {
        panic!("partly applied")
    };
    assert!(
        said.contains("YNAB changed tx-049 since it was decided"),
        "{said}"
    );
    assert!(
        said.contains("the rest was written under the same approval"),
        "{said}"
    );
    let Conclusion::PartiallyApplied(both) =
        conclude(Conclusion::PartiallyApplied("1 of 2.".into()), &left_alone)
    else {
        panic!("partly applied")
    };
    assert!(
        both.starts_with("1 of 2. Also, a restart cut the write off"),
        "{both}"
    );
    let failed = Conclusion::Failed("refused".into());
    assert_eq!(conclude(failed.clone(), &left_alone), failed);
}
