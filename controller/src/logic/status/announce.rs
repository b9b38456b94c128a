//! The Events ledgerops publishes when a resource's state changes: every decision (asked,
//! approved, rejected, blocked, diverged) and every write (started, landed, failed) of a
//! Transaction or a plan shows in `kubectl get events` and `kubectl describe`, not only in
//! status.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;

use crate::api::plan::PlanPhase;
use crate::api::transaction::TransactionPhase;
use crate::logic::status::conditions;

/// An Event to publish.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Announcement {
    pub warning: bool,
    pub reason: String,
    pub note: String,
}

/// The Event for a change of phase: the new `Ready` condition's reason and message, a Warning
/// when `warning`; `None` when the phase held (a reconcile that changed nothing says nothing).
pub fn on_phase_change<P: PartialEq>(
    before: Option<P>,
    after: Option<P>,
    conditions: &[Condition],
    warning: bool,
) -> Option<Announcement> {
    if before == after || after.is_none() {
        return None;
    }
    let ready = conditions::get(conditions, conditions::READY)?;
    Some(Announcement {
        warning,
        reason: ready.reason.clone(),
        note: ready.message.clone(),
    })
}

/// Whether a Transaction in `phase` needs a person: its Event is a Warning.
pub fn transaction_warning(phase: Option<TransactionPhase>) -> bool {
    matches!(
        phase,
        Some(
            TransactionPhase::Diverged
                | TransactionPhase::Blocked
                | TransactionPhase::Invalid
                | TransactionPhase::Interrupted
        )
    )
}

/// Whether a plan in `phase` needs a person: its Event is a Warning.
pub fn plan_warning(phase: Option<PlanPhase>) -> bool {
    matches!(
        phase,
        Some(
            PlanPhase::Invalid
                | PlanPhase::Rejected
                | PlanPhase::Expired
                | PlanPhase::Blocked
                | PlanPhase::Failed
                | PlanPhase::PartiallyApplied
        )
    )
}

#[cfg(test)]
#[path = "announce_tests.rs"]
mod tests;
