//! The journal of an applied plan, and the preview of its undo: put back what ledgerops moved,
//! and leave alone what someone changed since.

use serde::{Deserialize, Serialize};

use super::preview::{PlanPreview, State, assemble};
use super::preview_step::PreviewStep;
use crate::api::common::CategoryChange;

/// One transaction an applied plan moved, as journaled for its undo.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AppliedChange {
    pub transaction_id: String,
    /// Category before the plan; `None` for none.
    pub from_category_id: Option<String>,
    /// Category the plan wrote; `None` for none.
    pub to_category_id: Option<String>,
}

impl From<&CategoryChange> for AppliedChange {
    fn from(change: &CategoryChange) -> Self {
        Self {
            transaction_id: change.transaction_id.clone(),
            from_category_id: change.from_category_id.clone(),
            to_category_id: change.to_category_id.clone(),
        }
    }
}

/// Previews reverting `applied`: a transaction still in the category the plan wrote goes back
/// to where it was, with no category when it had none. One already back counts as unchanged.
/// One in any other category, or deleted, was changed by someone since: it is a conflict, left
/// alone.
pub fn undo_preview(applied: &[AppliedChange], state: &State<'_>) -> PlanPreview {
    let steps = applied
        .iter()
        .map(|a| match state.transaction(&a.transaction_id) {
            Some(transaction)
                if transaction.category_id == a.to_category_id
                    || transaction.category_id == a.from_category_id =>
            {
                PreviewStep::Set {
                    transaction,
                    to: a.from_category_id.as_deref(),
                }
            }
            current => PreviewStep::Conflict {
                transaction_id: &a.transaction_id,
                current,
            },
        })
        .collect();
    assemble(steps, state)
}

#[cfg(test)]
#[path = "undo_tests.rs"]
mod tests;
