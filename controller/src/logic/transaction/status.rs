//! A Transaction's status from what its reconcile concluded: the phase, and conditions that
//! follow API conventions (`Ready` and `Converged` always; `Diverged`, `Blocked`,
//! `AwaitingApproval` and `Interrupted` only while true).

use k8s_openapi::jiff::Timestamp;

use crate::api::transaction::{TransactionPhase, TransactionStatus};
use crate::logic::status::conditions::{
    self, AWAITING_APPROVAL, BLOCKED, INTERRUPTED, Observed, READY, VALID,
};
use crate::logic::status::kstatus;

/// What a reconcile concluded about one Transaction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// The Budget has not synced yet.
    Pending(String),
    /// The Budget's mirror has not synced since ledgerops started, so nothing new is known: the
    /// last conclusion stands (a restart does not flap Ready), or Pending when there is none.
    Unsynced(String),
    /// The spec cannot be applied as written.
    Invalid(String),
    /// A guard or a person forbids the write.
    Blocked {
        reason: &'static str,
        message: String,
    },
    /// Someone else changed the record.
    Diverged(String),
    /// Writes are disabled on the Budget; this is what would change.
    WouldWrite(String),
    /// Waiting for a person on an ApprovalRequest.
    AwaitingApproval(String),
    /// A write is in flight: its intent is recorded, its outcome not yet.
    Writing(String),
    /// A write failed or its outcome could not be settled; it is tried again.
    Interrupted(String),
    /// YNAB holds the declared state.
    Converged {
        reason: &'static str,
        message: String,
    },
}

pub const CONVERGED: &str = "Converged";
pub const DIVERGED: &str = "Diverged";

/// Whether a person's `resolve` annotation has been acted on once the Transaction is in `phase`:
/// while the write it asked for waits for an approval, the resolution must stay, or the approved
/// write would find the divergence again and never happen.
pub fn resolution_handled(phase: Option<TransactionPhase>) -> bool {
    phase != Some(TransactionPhase::AwaitingApproval)
}

/// Sets phase and conditions on `status` (the other fields are the reconciler's).
pub fn apply(
    status: &mut TransactionStatus,
    verdict: &Verdict,
    generation: Option<i64>,
    now: Timestamp,
) {
    if matches!(verdict, Verdict::Unsynced(_)) && status.phase.is_some() {
        return;
    }
    // Looked at again and still converged for this generation: how it converged (Written,
    // Adopted, NoChange) stays as recorded, so a resync of 10,000 converged Transactions
    // rewrites none of them.
    if matches!(verdict, Verdict::Converged { .. })
        && status.phase == Some(TransactionPhase::Converged)
        && status.observed_generation == generation
    {
        return;
    }
    let (phase, ready_reason, ready_message) = parts(verdict);
    let converged = Observed::new(
        CONVERGED,
        phase == TransactionPhase::Converged,
        ready_reason,
        ready_message,
    );
    let ready = Observed::new(
        READY,
        phase == TransactionPhase::Converged,
        ready_reason,
        ready_message,
    );
    let valid = match verdict {
        Verdict::Invalid(m) => Observed::new(VALID, false, "Invalid", m),
        _ => Observed::new(
            VALID,
            true,
            "Valid",
            "The spec can be applied to this transaction",
        ),
    };
    let mut c = status.conditions.clone();
    for observed in [converged, ready, valid] {
        c = conditions::set(&c, observed, generation, now);
    }
    let flags = [
        (
            DIVERGED,
            matches!(verdict, Verdict::Diverged(_))
                .then_some(("EditedInYnab", ready_message.as_str())),
        ),
        (
            BLOCKED,
            matches!(verdict, Verdict::Blocked { .. })
                .then_some((ready_reason, ready_message.as_str())),
        ),
        (
            AWAITING_APPROVAL,
            matches!(verdict, Verdict::AwaitingApproval(_))
                .then_some(("ApprovalRequested", ready_message.as_str())),
        ),
        (
            INTERRUPTED,
            matches!(verdict, Verdict::Interrupted(_))
                .then_some(("OutcomeUnknown", ready_message.as_str())),
        ),
    ];
    let c = conditions::set_flags(&c, &flags, generation, now);
    status.conditions = kstatus::summarize(
        &c,
        "Transaction",
        kstatus::transaction(phase),
        generation,
        now,
    );
    status.phase = Some(phase);
    status.observed_generation = generation;
}

/// The phase a verdict puts the Transaction in, with the reason and message its `Converged`
/// and `Ready` conditions give.
fn parts(verdict: &Verdict) -> (TransactionPhase, &'static str, &String) {
    match verdict {
        Verdict::Pending(m) | Verdict::Unsynced(m) => (TransactionPhase::Pending, "Pending", m),
        Verdict::Invalid(m) => (TransactionPhase::Invalid, "Invalid", m),
        Verdict::Blocked { reason, message } => (TransactionPhase::Blocked, *reason, message),
        Verdict::Diverged(m) => (TransactionPhase::Diverged, "Diverged", m),
        Verdict::WouldWrite(m) => (TransactionPhase::WouldWrite, "WritesDisabled", m),
        Verdict::AwaitingApproval(m) => (TransactionPhase::AwaitingApproval, "AwaitingApproval", m),
        Verdict::Writing(m) => (TransactionPhase::Writing, "Writing", m),
        Verdict::Interrupted(m) => (TransactionPhase::Interrupted, "Interrupted", m),
        Verdict::Converged { reason, message } => (TransactionPhase::Converged, *reason, message),
    }
}

#[cfg(test)]
#[path = "status_tests.rs"]
mod tests;
