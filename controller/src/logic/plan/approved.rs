//! The last check before a plan is written: the changes are computed again from the plan's spec
//! and YNAB's fresh state, and must hash to the preview that was approved. A status, a cached
//! preview or an old approval can never stand in for that.

use std::collections::HashMap;

use super::preview::{PlanPreview, State, preview};
use super::undo::{AppliedChange, undo_preview};
use crate::api::plan::Assignment;
use crate::logic::budget::mirror::Mirror;
use crate::ynab_model::TransactionSummary;

/// What a plan's spec asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Basis {
    Assignments(Vec<Assignment>),
    /// Revert these journaled changes.
    Undo(Vec<AppliedChange>),
}

impl Basis {
    /// The preview of this basis in `state`.
    pub fn preview(&self, state: &State<'_>) -> PlanPreview {
        match self {
            Self::Assignments(assignments) => preview(assignments, state),
            Self::Undo(journal) => undo_preview(journal, state),
        }
    }
}

/// A preview someone approved (a person, or the Budget's policy), bound to its hash.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Approved {
    /// The Budget and YNAB plan the preview was computed in.
    pub scope: String,
    pub basis: Basis,
    /// The changes the approved preview listed.
    pub changes: Vec<AppliedChange>,
    pub hash: String,
    pub decimal_digits: u8,
}

impl Approved {
    /// The preview of the spec on `mirror`, reading each transaction that already shows its
    /// approved change as it was before (a write of this approval that landed before a crash,
    /// or the same edit made by hand), so that only what the approval covers is adopted.
    pub fn recompute(&self, mirror: &Mirror) -> PlanPreview {
        let before = before_landing(mirror, &self.changes);
        let state = State {
            before: Some(&before),
            ..State::new(&self.scope, mirror, self.decimal_digits)
        };
        self.basis.preview(&state)
    }

    /// `Err` says why the approval no longer covers what would be written.
    pub fn holds(&self, mirror: &Mirror) -> Result<(), String> {
        if self.recompute(mirror).hash == self.hash {
            Ok(())
        } else {
            Err(
                "the plan or YNAB changed between the preview and the write (a transaction's category, amount, date, account or payee, or the plan's spec): nothing was written, a new preview and request follow"
                    .into(),
            )
        }
    }
}

/// The transactions among `changes` that now show the change's "after", as they were before it.
fn before_landing(
    mirror: &Mirror,
    changes: &[AppliedChange],
) -> HashMap<String, TransactionSummary> {
    changes
        .iter()
        .filter(|c| c.from_category_id != c.to_category_id)
        .filter_map(|c| {
            let tx = mirror.transactions.get(&c.transaction_id)?;
            (tx.category_id == c.to_category_id).then(|| {
                let mut before = tx.clone();
                before.category_id.clone_from(&c.from_category_id);
                (c.transaction_id.clone(), before)
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::logic::plan::test_support::{self, assign, mirror, recategorise};

    fn approved(m: &Mirror, assignments: Vec<Assignment>) -> Approved {
        test_support::approved(m, Basis::Assignments(assignments))
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
}
