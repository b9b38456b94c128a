//! Unit tests of `logic/plan/approved.rs`.

use super::*;
use crate::logic::plan::fixtures::{self, assign, mirror, recategorise};

fn approved(m: &Mirror, assignments: Vec<Assignment>) -> Approved {
    fixtures::approved(m, Basis::Assignments(assignments))
}

fn seed_002() -> Vec<Assignment> {
    vec![
        assign("tx-048", "cat-groceries"),
        assign("tx-049", "cat-transport"),
    ]
}

#[test]
fn holds_on_the_state_it_was_approved_on_and_after_its_writes_landed() {
    let mut m = mirror();
    let a = approved(&m, seed_002());
    assert_eq!(a.holds(&m), Ok(()));
    recategorise(&mut m, "tx-048", Some("cat-groceries"));
    assert_eq!(a.holds(&m), Ok(()), "one landed");
    recategorise(&mut m, "tx-049", Some("cat-transport"));
    assert_eq!(a.holds(&m), Ok(()), "both landed");
}

#[test]
fn fails_when_anything_it_covers_changed() {
    type Change = fn(&mut Mirror);
    let cases: Vec<(&str, Change)> = vec![
        ("another category", |m| {
            recategorise(m, "tx-048", Some("cat-transport"))
        }),
        ("amount", |m| {
            m.transactions.get_mut("tx-048").unwrap().amount -= 1_000
        }),
        ("date", |m| {
            m.transactions.get_mut("tx-049").unwrap().date = "2026-09-01".into()
        }),
        ("account", |m| {
            m.transactions.get_mut("tx-049").unwrap().account_id = "acc-other".into()
        }),
        ("payee", |m| {
            m.transactions.get_mut("tx-049").unwrap().payee_id = Some("payee-other".into())
        }),
        ("deleted", |m| {
            m.transactions.remove("tx-049");
        }),
    ];
    for (what, change) in cases {
        let mut m = mirror();
        let a = approved(&m, seed_002());
        change(&mut m);
        assert!(a.holds(&m).is_err(), "{what}");
    }
}

#[test]
fn fails_for_another_spec_scope_or_hash() {
    let m = mirror();
    let a = approved(&m, seed_002());
    let mut more = a.clone();
    more.basis = Basis::Assignments(vec![
        assign("tx-048", "cat-groceries"),
        assign("tx-049", "cat-transport"),
        assign("tx-065", "cat-groceries"),
    ]);
    assert!(more.holds(&m).is_err(), "a plan edited after approval");
    let mut elsewhere = a.clone();
    elsewhere.scope = "ns/other-budget/plan".into();
    assert!(elsewhere.holds(&m).is_err(), "another Budget");
    let mut forged = a.clone();
    forged.hash = "0".repeat(64);
    assert!(forged.holds(&m).is_err(), "a hash nobody approved");
    // Claiming a change the approval did not list adopts nothing: the hash still differs.
    let mut m2 = mirror();
    recategorise(&mut m2, "tx-065", Some("cat-groceries"));
    let mut claims_more = a;
    claims_more.changes.push(AppliedChange {
        transaction_id: "tx-065".into(),
        from_category_id: m.transactions["tx-065"].category_id.clone(),
        to_category_id: Some("cat-groceries".into()),
    });
    assert_eq!(
        claims_more.holds(&m2),
        Ok(()),
        "tx-065 is not in the plan's spec"
    );
}
