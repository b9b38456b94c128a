//! What still stands for a generation of the spec, whatever YNAB shows: a person's choice of
//! YNAB's state, or YNAB's refusal of the write.

use super::{Step, converged, refused};
use crate::api::transaction::TransactionStatus;
use crate::logic::status::conditions::{self, BLOCKED};

/// A verdict that still stands for `generation` of the spec: a person chose YNAB's state, or
/// YNAB refused the write. The marks an earlier generation left are cleared from `status`.
pub fn standing(
    status: &mut TransactionStatus,
    generation: Option<i64>,
    transaction_id: &str,
) -> Option<Step> {
    if status.accepted_generation.is_some() && status.accepted_generation == generation {
        let message = "A person chose YNAB's state: ledgerops writes again when the spec changes";
        return Some(Step::idle(converged("AcceptedTheirs", message)));
    }
    status.accepted_generation = None;
    if status.refused_generation.is_some() && status.refused_generation == generation {
        // Looked at again, the refusal keeps the words YNAB gave it (status and detail).
        let message = conditions::get(&status.conditions, BLOCKED)
            .filter(|c| c.reason == "RefusedByYnab")
            .map(|c| c.message.clone())
            .unwrap_or_else(|| {
                format!(
                    "YNAB refused the write of {transaction_id} for this spec; sending it again would fail the same way: change the spec"
                )
            });
        return Some(Step::idle(refused(message)));
    }
    status.refused_generation = None;
    None
}

#[cfg(test)]
#[path = "standing_tests.rs"]
mod tests;
