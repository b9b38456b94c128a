//! A CategorizationPlan's phase and conditions from what its reconcile concluded.

use k8s_openapi::jiff::Timestamp;

use crate::api::common::DecisionRecord;
use crate::api::plan::{CategorizationPlanStatus, PlanPhase};
use crate::logic::status::conditions::{
    self, AWAITING_APPROVAL, BLOCKED, INTERRUPTED, Observed, READY, VALID,
};
use crate::logic::status::kstatus;

/// What a reconcile concluded about a plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PlanVerdict {
    /// The Budget has not synced yet.
    Pending(String),
    /// The Budget's mirror has not synced since ledgerops started, so nothing new is known: the
    /// last conclusion stands (a restart neither flaps the phase nor announces it again), or
    /// Pending when there is none.
    Unsynced(String),
    /// The plan cannot be applied as written: every problem, each naming its id.
    Invalid(String),
    /// Every assignment already holds.
    NothingToDo,
    /// Waiting for a person on an ApprovalRequest.
    AwaitingApproval(String),
    /// A policy forbids it, or a person rejected it, or nobody answered in time.
    Blocked {
        phase: PlanPhase,
        reason: &'static str,
        message: String,
    },
    /// Approved, but the Budget does not allow writes.
    ReadOnly(String),
    /// The write is in flight, or failed and is retried.
    Applying { interrupted: Option<String> },
    /// Written and journaled.
    Applied(String),
    /// Some changes landed, then the write stopped for good; journaled.
    PartiallyApplied(String),
    /// YNAB did not end up as the plan said.
    Failed(String),
}

/// A person's rejection of exactly the preview `hash`, as the plan's status keeps it: it stands
/// even after its ApprovalRequest is gone, until the spec or YNAB changes the preview.
pub fn standing_rejection(decision: Option<&DecisionRecord>, hash: &str) -> Option<PlanVerdict> {
    let rejected = decision.filter(|d| d.verdict == "Reject" && d.preview_hash == hash)?;
    let request = rejected
        .request
        .as_ref()
        .map(|r| format!(" (ApprovalRequest {r})"))
        .unwrap_or_default();
    Some(PlanVerdict::Blocked {
        phase: PlanPhase::Rejected,
        reason: "Rejected",
        message: format!(
            "{} rejected this preview{request}: {}. Change the spec to ask again.",
            rejected.by,
            rejected.comment.as_deref().unwrap_or("no reason given")
        ),
    })
}

/// Whether the plan's write is over for its current spec: applied (wholly or partly), or failed
/// for a reason a retry cannot fix, at this generation. An edit of the spec afterwards is previewed anew; what already holds is skipped.
pub fn settled(status: &CategorizationPlanStatus, generation: Option<i64>) -> bool {
    let finished = match status.phase {
        // Plans applied before finishedGeneration existed count as applied at their generation.
        Some(PlanPhase::Applied) => status.finished_generation.or(status.observed_generation),
        Some(PlanPhase::PartiallyApplied | PlanPhase::Failed) => status.finished_generation,
        _ => None,
    };
    finished.is_some() && finished == generation
}

/// Sets phase and conditions on `status`.
pub fn apply(
    status: &mut CategorizationPlanStatus,
    verdict: &PlanVerdict,
    generation: Option<i64>,
    now: Timestamp,
) {
    if matches!(verdict, PlanVerdict::Unsynced(_)) && status.phase.is_some() {
        return;
    }
    let (phase, ready, reason, message): (PlanPhase, bool, &'static str, String) = match verdict {
        PlanVerdict::Pending(m) | PlanVerdict::Unsynced(m) => {
            (PlanPhase::Pending, false, "Pending", m.clone())
        }
        PlanVerdict::Invalid(m) => (PlanPhase::Invalid, false, "Invalid", m.clone()),
        PlanVerdict::NothingToDo => (
            PlanPhase::NothingToDo,
            true,
            "NothingToDo",
            "Every assignment already holds in YNAB".into(),
        ),
        PlanVerdict::AwaitingApproval(m) => (
            PlanPhase::AwaitingApproval,
            false,
            "AwaitingApproval",
            m.clone(),
        ),
        PlanVerdict::Blocked {
            phase,
            reason,
            message,
        } => (*phase, false, reason, message.clone()),
        PlanVerdict::ReadOnly(m) => (PlanPhase::ReadOnly, false, "WritesDisabled", m.clone()),
        PlanVerdict::Applying { interrupted: None } => (
            PlanPhase::Applying,
            false,
            "Applying",
            "Writing the approved changes to YNAB".into(),
        ),
        PlanVerdict::Applying {
            interrupted: Some(m),
        } => (PlanPhase::Applying, false, "Interrupted", m.clone()),
        PlanVerdict::Applied(m) => (PlanPhase::Applied, true, "Applied", m.clone()),
        PlanVerdict::PartiallyApplied(m) => (
            PlanPhase::PartiallyApplied,
            false,
            "PartiallyApplied",
            m.clone(),
        ),
        PlanVerdict::Failed(m) => (PlanPhase::Failed, false, "Failed", m.clone()),
    };
    let valid = match verdict {
        PlanVerdict::Invalid(m) => Observed::new(VALID, false, "Invalid", m.clone()),
        _ => Observed::new(VALID, true, "Valid", "Every assignment can be applied"),
    };
    let mut c = conditions::set(
        &status.conditions,
        Observed::new(READY, ready, reason, message.clone()),
        generation,
        now,
    );
    c = conditions::set(&c, valid, generation, now);
    let blocked =
        matches!(verdict, PlanVerdict::Blocked { .. }).then_some((reason, message.as_str()));
    let flags = [
        (
            AWAITING_APPROVAL,
            matches!(verdict, PlanVerdict::AwaitingApproval(_))
                .then_some(("ApprovalRequested", message.as_str())),
        ),
        (BLOCKED, blocked),
        (
            INTERRUPTED,
            matches!(
                verdict,
                PlanVerdict::Applying {
                    interrupted: Some(_)
                }
            )
            .then_some(("OutcomeUnknown", message.as_str())),
        ),
    ];
    let c = conditions::set_flags(&c, &flags, generation, now);
    status.conditions = kstatus::summarize(
        &c,
        "CategorizationPlan",
        kstatus::plan(phase),
        generation,
        now,
    );
    status.phase = Some(phase);
    status.observed_generation = generation;
}

#[cfg(test)]
#[path = "status_tests.rs"]
mod tests;
