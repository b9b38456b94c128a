//! Checks a plan's assignments against the mirror before anything is previewed: every problem
//! is reported, each naming the offending id and what to do.

use std::collections::HashSet;

use super::categories::{is_credit_card_payment, is_hidden, is_internal, is_uncategorized};
use crate::api::plan::Assignment;
use crate::logic::budget::mirror::Mirror;

/// Why an assignment cannot be applied. The message is shown as is in the plan's `Valid`
/// condition.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    #[error("Transaction {0} is assigned twice: keep one assignment.")]
    AssignedTwice(String),
    /// Deleted transactions are included: the mirror drops them, so they cannot be told apart.
    #[error(
        "Transaction {0} is not in the Budget's YNAB plan: use a transactionId from the Budget's transactions."
    )]
    UnknownTransaction(String),
    #[error("Transaction {0} is split across categories: change its lines in YNAB.")]
    Split(String),
    #[error("Transaction {0} is on an off-budget account: YNAB gives it no category.")]
    OffBudget(String),
    #[error(
        "Transaction {0} is a transfer between two on-budget accounts: YNAB gives it no category."
    )]
    Transfer(String),
    #[error("Category {0} is YNAB's internal Uncategorized: choose a real category.")]
    Uncategorized(String),
    #[error("Category {id} is YNAB's internal {name:?}: choose a real category.")]
    Internal { id: String, name: String },
    #[error(
        "Category {0} is a credit card payment category, which YNAB ignores on transactions: choose a spending category."
    )]
    CreditCardPayment(String),
    #[error("Category {0} is hidden: unhide it in YNAB or choose another.")]
    Hidden(String),
    #[error(
        "Category {0} is not in the Budget's YNAB plan: use a categoryId from the Budget's categories."
    )]
    UnknownCategory(String),
}

/// Every problem with `assignments`, in their order: at most one about each transaction and one
/// about its category. A transaction listed again is reported once, at its second listing.
pub fn validate(assignments: &[Assignment], mirror: &Mirror) -> Result<(), Vec<PlanError>> {
    let mut seen = HashSet::new();
    let mut reported_twice = HashSet::new();
    let mut errors = Vec::new();
    for a in assignments {
        let id = a.transaction_id.as_str();
        if !seen.insert(id) {
            if reported_twice.insert(id) {
                errors.push(PlanError::AssignedTwice(id.to_owned()));
            }
            continue;
        }
        errors.extend(transaction_problem(id, mirror));
        errors.extend(category_problem(&a.category_id, mirror));
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

/// The guards of the changes a preview would write (a reconciled transaction, or one in a month
/// up to `closed_through`): each message names the transaction and what to do. Checked before
/// anyone is asked, so that an approval is never given for a write that cannot happen.
pub fn guarded(
    changes: &[super::PlannedChange],
    mirror: &Mirror,
    closed_through: Option<&str>,
) -> Result<(), String> {
    let blocked: Vec<String> = changes
        .iter()
        .filter_map(|c| mirror.transactions.get(&c.change.transaction_id))
        .filter_map(|tx| crate::logic::transaction::converge::guard(tx, closed_through))
        .map(|b| b.message)
        .collect();
    if blocked.is_empty() {
        Ok(())
    } else {
        Err(blocked.join(" "))
    }
}

/// Whether a plan can give the transaction one category: YNAB lets it have one, and it is not
/// split (the API cannot change a split's lines).
fn transaction_problem(id: &str, mirror: &Mirror) -> Option<PlanError> {
    if mirror.transactions.contains_key(id) && mirror.subtransactions.contains_key(id) {
        return Some(PlanError::Split(id.to_owned()));
    }
    allocation_problem(id, mirror)
}

/// Whether YNAB lets the transaction have a category (or split lines) at all.
pub fn allocation_problem(id: &str, mirror: &Mirror) -> Option<PlanError> {
    let Some(tx) = mirror.transactions.get(id) else {
        return Some(PlanError::UnknownTransaction(id.to_owned()));
    };
    let on_budget = |account_id: &str| mirror.accounts.get(account_id).map(|a| a.on_budget);
    let problem = if on_budget(&tx.account_id) == Some(false) {
        PlanError::OffBudget
    } else if let Some(other) = &tx.transfer_account_id
        // Money leaving the budget for a tracking account is spending, so YNAB wants its
        // on-budget side categorised. Between two budget accounts it is not, and an account the
        // mirror does not know cannot be shown to be off-budget.
        && on_budget(other) != Some(false)
    {
        PlanError::Transfer
    } else {
        return None;
    };
    Some(problem(id.to_owned()))
}

/// Whether the category is one a person may put a transaction in.
pub fn category_problem(id: &str, mirror: &Mirror) -> Option<PlanError> {
    let Some(category) = mirror.categories.get(id) else {
        return Some(PlanError::UnknownCategory(id.to_owned()));
    };
    let id = id.to_owned();
    if is_uncategorized(category) {
        Some(PlanError::Uncategorized(id))
    } else if is_internal(category, mirror) {
        Some(PlanError::Internal {
            id,
            name: category.name.clone(),
        })
    } else if is_credit_card_payment(category, mirror) {
        Some(PlanError::CreditCardPayment(id))
    } else if is_hidden(category, mirror) {
        Some(PlanError::Hidden(id))
    } else {
        None
    }
}

#[cfg(test)]
#[path = "validate_tests.rs"]
mod tests;
