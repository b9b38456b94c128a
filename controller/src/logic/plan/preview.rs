//! What applying a plan would change, computed from the mirror: before and after for every
//! transaction that moves, how many already hold, and the hash an approval binds to.

use std::cmp::Ordering;
use std::collections::HashMap;

use super::hash::preview_hash;
use super::preview_step::PreviewStep;
use crate::api::budget::ManagedField;
use crate::api::common::{Amount, CategoryChange};
use crate::api::plan::{Assignment, Preview};
use crate::logic::budget::mirror::Mirror;
use crate::logic::values::money::to_decimal;
use crate::ynab_model::TransactionSummary;

/// One transaction whose category a write would change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannedChange {
    /// Before and after, as the person who approves sees it.
    pub change: CategoryChange,
    /// YNAB id of the payee: the approval policy tells a new payee by it, not by its name.
    pub payee_id: Option<String>,
    /// Split lines the money moves out of (YNAB's) and into (the target's); empty when neither
    /// side is a split, as in every plan.
    pub lines: LineMoves,
    /// Managed fields other than a single category that the change writes; empty in a plan.
    pub fields: Vec<ManagedField>,
}

/// The categories of the split lines on either side of a change.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LineMoves {
    pub out_of: Vec<CategoryRef>,
    pub into: Vec<CategoryRef>,
}

/// A category id, with its name when the mirror knows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CategoryRef {
    pub id: String,
    pub name: Option<String>,
}

/// What applying a plan, or undoing one, would change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanPreview {
    /// SHA-256 (hex) over what would be written and the state of every transaction involved.
    pub hash: String,
    /// The mirror's `server_knowledge` the preview was computed at.
    pub server_knowledge: i64,
    /// Ordered by date, then transaction id.
    pub changes: Vec<PlannedChange>,
    /// Transactions already where the plan puts them.
    pub unchanged_count: u32,
    /// For an undo: transactions changed since the operation, left alone. Sorted.
    pub conflicts: Vec<String>,
}

impl PlanPreview {
    /// Nothing would be written.
    pub fn nothing_to_do(&self) -> bool {
        self.changes.is_empty()
    }
}

/// How many changes (and conflicts) a status or an ApprovalRequest lists: a plan may hold 5,000,
/// and every object must stay far below etcd's size limit. The counts cover them all, and the
/// hash binds every one.
pub const SHOWN: usize = 100;

impl From<PlanPreview> for Preview {
    fn from(p: PlanPreview) -> Self {
        Self {
            hash: p.hash,
            server_knowledge: p.server_knowledge,
            change_count: count(p.changes.len()),
            changes: p
                .changes
                .into_iter()
                .take(SHOWN)
                .map(|c| c.change)
                .collect(),
            unchanged_count: p.unchanged_count,
            conflicts: p.conflicts.into_iter().take(SHOWN).collect(),
            review: None,
        }
    }
}

/// What a preview reads: one Budget's mirror, optionally with some transactions shown as they
/// were before an approved write landed (see [`super::approved`]).
#[derive(Debug, Clone, Copy)]
pub struct State<'a> {
    /// Names the Budget and YNAB plan: the same moves in another Budget hash apart.
    pub scope: &'a str,
    pub mirror: &'a Mirror,
    /// Transactions to read instead of the mirror's.
    pub before: Option<&'a HashMap<String, TransactionSummary>>,
    pub decimal_digits: u8,
}

impl<'a> State<'a> {
    /// The mirror as it is.
    pub fn new(scope: &'a str, mirror: &'a Mirror, decimal_digits: u8) -> Self {
        Self {
            scope,
            mirror,
            before: None,
            decimal_digits,
        }
    }

    /// The transaction `id` as this state shows it.
    pub fn transaction(&self, id: &str) -> Option<&'a TransactionSummary> {
        self.before
            .and_then(|b| b.get(id))
            .or_else(|| self.mirror.transactions.get(id))
    }
}

/// Previews `assignments`, which [`super::validate`] accepted: a transaction missing from the
/// mirror has nothing to preview and is left out.
pub fn preview(assignments: &[Assignment], state: &State<'_>) -> PlanPreview {
    let steps = assignments
        .iter()
        .filter_map(|a| {
            let transaction = state.transaction(&a.transaction_id)?;
            Some(PreviewStep::Set {
                transaction,
                to: Some(&a.category_id),
            })
        })
        .collect();
    assemble(steps, state)
}

/// The preview of `steps`: plans and undos differ only in how they choose the steps.
pub(super) fn assemble(steps: Vec<PreviewStep<'_>>, state: &State<'_>) -> PlanPreview {
    let (mirror, decimal_digits) = (state.mirror, state.decimal_digits);
    let hash = preview_hash(state.scope, &steps);
    let mut changes = Vec::new();
    let mut unchanged = 0;
    let mut conflicts = Vec::new();
    for step in steps {
        match step {
            PreviewStep::Set { transaction, to } if transaction.category_id.as_deref() == to => {
                unchanged += 1;
            }
            PreviewStep::Set { transaction, to } => {
                changes.push(planned_change(transaction, to, mirror, decimal_digits));
            }
            PreviewStep::Conflict { transaction_id, .. } => {
                conflicts.push(transaction_id.to_owned())
            }
        }
    }
    changes.sort_by(|a, b| by_date_then_id(&a.change, &b.change));
    conflicts.sort();
    PlanPreview {
        hash,
        server_knowledge: mirror.server_knowledge,
        changes,
        unchanged_count: count(unchanged),
        conflicts,
    }
}

pub(super) fn planned_change(
    tx: &TransactionSummary,
    to: Option<&str>,
    mirror: &Mirror,
    decimal_digits: u8,
) -> PlannedChange {
    let name = |id: Option<&str>| Some(mirror.categories.get(id?)?.name.clone());
    let from = tx.category_id.as_deref();
    PlannedChange {
        change: CategoryChange {
            transaction_id: tx.id.clone(),
            date: tx.date.clone(),
            amount: Amount(to_decimal(tx.amount, decimal_digits)),
            // Bank text, carried as data only.
            payee: tx
                .payee_id
                .as_ref()
                .and_then(|id| mirror.payees.get(id))
                .map(|p| p.name.clone()),
            from_category_id: from.map(str::to_owned),
            from_category: name(from),
            to_category_id: to.map(str::to_owned),
            to_category: name(to),
        },
        payee_id: tx.payee_id.clone(),
        lines: LineMoves::default(),
        fields: Vec::new(),
    }
}

fn by_date_then_id(a: &CategoryChange, b: &CategoryChange) -> Ordering {
    (&a.date, &a.transaction_id).cmp(&(&b.date, &b.transaction_id))
}

fn count(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

#[cfg(test)]
#[path = "preview_tests.rs"]
mod tests;
