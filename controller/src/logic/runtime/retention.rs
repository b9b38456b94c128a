//! What finished objects are deleted, and when: an AgentJob some time after it finished, an
//! ApprovalRequest some time after it settled once a newer request of the same subject replaced
//! it. Time comes in as an argument.

use std::time::Duration;

use k8s_openapi::jiff::{SignedDuration, Timestamp};

use crate::api::agent_job::JobPhase;
use crate::api::approval::{ApprovalPhase, ApprovalRequest, ApprovalRequestStatus};
use crate::logic::job::state::is_terminal;
use crate::logic::status::conditions;

/// What to do with one object now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Retention {
    /// Still needed; nothing to schedule.
    Keep,
    /// Kept until then: look again after this long.
    LookAgainIn(Duration),
    /// Its time is up.
    Delete,
}

/// An object settled at `settled_at` and kept for `retention`.
pub fn after(settled_at: Timestamp, retention: Duration, now: Timestamp) -> Retention {
    let kept = SignedDuration::try_from(retention).unwrap_or(SignedDuration::MAX);
    let due = settled_at.checked_add(kept).unwrap_or(Timestamp::MAX);
    if now >= due {
        return Retention::Delete;
    }
    Retention::LookAgainIn(Duration::try_from(due.duration_since(now)).unwrap_or_default())
}

/// An AgentJob is deleted `retention` after it finished (Succeeded, Rejected or Failed); one
/// that has not finished is kept. A finished job without its finishing time counts from when it
/// was received.
pub fn agent_job(
    phase: JobPhase,
    finished_at: Option<Timestamp>,
    received_at: Timestamp,
    retention: Duration,
    now: Timestamp,
) -> Retention {
    if !is_terminal(phase) {
        return Retention::Keep;
    }
    after(finished_at.unwrap_or(received_at), retention, now)
}

/// An ApprovalRequest, whose status is now `status`, among the requests of its namespace.
///
/// It is deleted `retention` after it settled (Stale, Ignored, Expired, Rejected or Applied), and
/// only once another request of the same subject replaced it: one created later, or one still
/// open (creation times have whole seconds, so two requests of one second are told apart by that).
/// The gate follows a subject's open or newest request, and the decision is kept by the subject's
/// status and the journal. A request the gate may still follow is never deleted: Pending,
/// Approved, or spent on a write whose outcome is not recorded. A settled request not yet
/// replaced is looked at again after `retention`, unless its subject is gone (`subject_gone`): a
/// decided request outlives its subject as the record of who decided (nobody else may delete
/// it), and goes by age alone, `retention` after it settled.
pub fn approval_request(
    request: &ApprovalRequest,
    status: &ApprovalRequestStatus,
    namespace_requests: &[&ApprovalRequest],
    subject_gone: bool,
    retention: Duration,
    now: Timestamp,
) -> Retention {
    if !settled(status) {
        return Retention::Keep;
    }
    let (Some(subject), Some(born)) = (subject_of(request), created(request)) else {
        return Retention::Keep;
    };
    let settled_at = conditions::get(&status.conditions, conditions::READY)
        .filter(|c| c.status == "True")
        .map_or(born, |c| c.last_transition_time.0);
    if subject_gone {
        return after(settled_at, retention, now);
    }
    let replaced = namespace_requests.iter().any(|other| {
        let open = other.status.as_ref().is_none_or(|s| !settled(s));
        other.metadata.name != request.metadata.name
            && subject_of(other) == Some(subject)
            && (open || created(other).is_some_and(|t| t > born))
    });
    if !replaced {
        return Retention::LookAgainIn(retention);
    }
    after(settled_at, retention, now)
}

/// Whether the request is done with: decided one way or another, and not in use by a write.
fn settled(status: &ApprovalRequestStatus) -> bool {
    let done = matches!(
        status.phase,
        Some(
            ApprovalPhase::Stale
                | ApprovalPhase::Ignored
                | ApprovalPhase::Expired
                | ApprovalPhase::Rejected
                | ApprovalPhase::Applied
        )
    );
    let in_use = status
        .used
        .as_ref()
        .is_some_and(|u| u.completed_at.is_none());
    done && !in_use
}

/// The uid of the object a request asks about (`None`: it names none ledgerops knows of): its controlling owner, else what ledgerops
/// recorded issuing it for.
pub fn subject_of(request: &ApprovalRequest) -> Option<&str> {
    let owner = request
        .metadata
        .owner_references
        .iter()
        .flatten()
        .find(|o| o.controller == Some(true))
        .map(|o| o.uid.as_str());
    owner.or_else(|| {
        request
            .status
            .as_ref()?
            .issued_for
            .as_ref()
            .map(|i| i.subject_uid.as_str())
    })
}

fn created(request: &ApprovalRequest) -> Option<Timestamp> {
    request.metadata.creation_timestamp.as_ref().map(|t| t.0)
}

#[cfg(test)]
#[path = "retention_tests.rs"]
mod tests;
