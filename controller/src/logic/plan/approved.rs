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
#[path = "approved_tests.rs"]
mod tests;
