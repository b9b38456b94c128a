//! An ApprovalRequest's state: decided, waiting, expired (with one escalation), or stale.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;

use crate::api::approval::{
    ApprovalPhase, ApprovalRequest, ApprovalRequestSpec, ApprovalRequestStatus, Verdict,
};
use crate::logic::status::conditions::{self, Observed};
use crate::logic::status::kstatus;

/// The next status, and the escalation to announce when the request has just expired. The
/// phase says what ledgerops did with the request, not merely what was written into it: an
/// approval that came too late, or on a stale or foreign request, is not shown as `Approved`.
pub fn next(
    spec: &ApprovalRequestSpec,
    previous: &ApprovalRequestStatus,
    generation: Option<i64>,
    now: Timestamp,
) -> (ApprovalRequestStatus, Option<String>) {
    let mut status = previous.clone();
    let mut escalation = None;
    if spec.decision.is_some() {
        status.decided_at = previous.decided_at.clone().or(Some(Time(now)));
    }
    let (phase, ready, reason, message) = state(spec, previous, status.decided_at.as_ref(), now);
    // The request has just expired undecided: told once.
    if reason == EXPIRED && previous.escalated_at.is_none() {
        status.escalated_at = Some(Time(now));
        let whom = if spec.escalate_to.is_empty() {
            "the Budget's owners".to_owned()
        } else {
            spec.escalate_to.join(", ")
        };
        let expires = spec.expires_at.0;
        escalation = Some(format!(
            "No decision before {expires}: nothing was applied. Tell {whom}."
        ));
    }
    let c = conditions::set(
        &previous.conditions,
        Observed::new(conditions::READY, ready, reason, message),
        generation,
        now,
    );
    status.conditions = kstatus::summarize(
        &c,
        "ApprovalRequest",
        kstatus::approval(phase),
        generation,
        now,
    );
    status.phase = Some(phase);
    status.observed_generation = generation;
    (status, escalation)
}

/// The `Ready` reason of a request nobody decided in time.
const EXPIRED: &str = "Expired";

/// A request's phase, whether it is at rest, and its `Ready` reason and message.
type State = (ApprovalPhase, bool, &'static str, String);

/// The state of a request whose decision ledgerops first saw at `decided_at`.
fn state(
    spec: &ApprovalRequestSpec,
    previous: &ApprovalRequestStatus,
    decided_at: Option<&Time>,
    now: Timestamp,
) -> State {
    if let Some(spent) = spent(previous) {
        return spent;
    }
    let seen = decided_at.map(|t| t.0);
    let expires = spec.expires_at.0;
    match (&spec.decision, previous.phase) {
        (Some(_), _) if previous.issued_for.is_none() => (
            ApprovalPhase::Ignored,
            true,
            "NotIssued",
            "ledgerops did not issue this request before it was decided: it authorizes nothing"
                .into(),
        ),
        (_, Some(ApprovalPhase::Ignored)) => (
            ApprovalPhase::Ignored,
            true,
            "NotIssued",
            "ledgerops did not issue this request before it was decided: it authorizes nothing"
                .into(),
        ),
        (decision, Some(ApprovalPhase::Stale)) => (
            ApprovalPhase::Stale,
            true,
            "Stale",
            match decision {
                Some(d) => format!(
                    "{} answered after the plan changed between the preview and the answer: nothing is applied, a new request follows",
                    d.by
                ),
                None => {
                    "The plan changed between the preview and the answer: a new request follows"
                        .into()
                }
            },
        ),
        (Some(d), previous_phase)
            if d.verdict == Verdict::Approve
                && (previous_phase == Some(ApprovalPhase::Expired)
                    || seen.is_some_and(|t| t >= expires)) =>
        {
            (
                ApprovalPhase::Expired,
                true,
                "ApprovedTooLate",
                format!(
                    "{} approved after the request expired at {expires}: nothing is applied",
                    d.by
                ),
            )
        }
        (Some(d), _) => {
            let (phase, reason, how) = if d.verdict == Verdict::Approve {
                (ApprovalPhase::Approved, "Approved", "approved")
            } else {
                (ApprovalPhase::Rejected, "Rejected", "rejected")
            };
            (phase, true, reason, format!("{} {how} it", d.by))
        }
        (None, _) if expires <= now => (
            ApprovalPhase::Expired,
            true,
            EXPIRED,
            format!("Nobody decided before {expires}: nothing is applied"),
        ),
        (None, _) => (
            ApprovalPhase::Pending,
            false,
            "Pending",
            format!("Waiting for a person to decide before {expires}"),
        ),
    }
}

/// The state of a request whose approval was spent on a write: applied, or stale when nothing
/// was written under it.
fn spent(previous: &ApprovalRequestStatus) -> Option<State> {
    let used = previous
        .used
        .as_ref()
        .filter(|u| u.completed_at.is_some())?;
    Some(if used.written {
        (
            ApprovalPhase::Applied,
            true,
            "Applied",
            format!(
                "The approval was spent on write {}; a further change needs a new request",
                used.attempt_id
            ),
        )
    } else {
        (
            ApprovalPhase::Stale,
            true,
            "Stale",
            "Nothing was written under this approval: YNAB or the spec changed between the preview and the write. A new request follows".into(),
        )
    })
}

/// The part of `status` the ApprovalRequest reconciler writes: everything but the approval
/// gate's issuance and use records, which it never writes (see `k8s::status::GATE_FIELD_MANAGER`).
pub fn reconciler_part(status: &ApprovalRequestStatus) -> ApprovalRequestStatus {
    ApprovalRequestStatus {
        issued_for: None,
        used: None,
        ..status.clone()
    }
}

/// The status that marks a request stale: its preview no longer holds.
pub fn stale(
    previous: &ApprovalRequestStatus,
    generation: Option<i64>,
    now: Timestamp,
) -> ApprovalRequestStatus {
    let mut status = previous.clone();
    let message = "The plan changed between the preview and the answer: a new request follows";
    let c = conditions::set(
        &previous.conditions,
        Observed::new(conditions::READY, true, "Stale", message),
        generation,
        now,
    );
    let health = kstatus::approval(ApprovalPhase::Stale);
    status.conditions = kstatus::summarize(&c, "ApprovalRequest", health, generation, now);
    status.phase = Some(ApprovalPhase::Stale);
    status
}

/// Whether `request` is decided but still owned by its subject: its owner reference is dropped,
/// so that it stays as the record of who decided when the subject goes.
pub fn keep_as_record(request: &ApprovalRequest) -> bool {
    request.spec.decision.is_some()
        && request
            .metadata
            .owner_references
            .as_ref()
            .is_some_and(|o| !o.is_empty())
}

#[cfg(test)]
#[path = "status_tests.rs"]
mod tests;
