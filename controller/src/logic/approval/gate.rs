//! Why the approval gate holds a write back, and what a Transaction's or a plan's status says
//! about it; and the id a write goes ahead under. The gate (in `reconcile::approval_gate`) finds
//! the facts; the words are here.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;

use crate::api::common::DecisionRecord;
use crate::api::plan::PlanPhase;
use crate::logic::plan::status::PlanVerdict;
use crate::logic::transaction::status::Verdict;

/// Why a write does not go ahead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Hold {
    /// A person is asked on `request`; `why` is the policy's reason for asking.
    AwaitingApproval { request: String, why: String },
    /// A person rejected `request`.
    Rejected {
        request: String,
        by: String,
        comment: Option<String>,
        /// When ledgerops saw the rejection, and the preview it was given on: kept with it.
        decided_at: Option<Time>,
        preview_hash: String,
    },
    /// Nobody approved `request` before it expired.
    Expired {
        request: String,
        expires_at: Timestamp,
    },
    /// The Budget's policy forbids the write; `why` is its reason.
    PolicyBlocked { why: String },
    /// The admission policies are not in force, so no approval can be trusted; says which.
    AdmissionPolicyMissing(String),
    /// Every name the request for `subject` could take is taken by an object ledgerops did not
    /// issue; they are named `base`-*.
    NameTaken { subject: String, base: String },
    /// The authority behind the write does not hold now (a decider without `approve`, four
    /// eyes, a Budget nobody governs); says who lacks what.
    NotAuthorized(String),
}

impl Hold {
    /// The ApprovalRequest the write waits on, or that refused it.
    pub fn request(&self) -> Option<&str> {
        match self {
            Self::AwaitingApproval { request, .. }
            | Self::Rejected { request, .. }
            | Self::Expired { request, .. } => Some(request),
            Self::PolicyBlocked { .. }
            | Self::AdmissionPolicyMissing(_)
            | Self::NameTaken { .. }
            | Self::NotAuthorized(_) => None,
        }
    }

    /// A person's rejection, as the subject keeps it after the request is gone.
    pub fn rejection(&self) -> Option<DecisionRecord> {
        let Self::Rejected {
            request,
            by,
            comment,
            decided_at,
            preview_hash,
        } = self
        else {
            return None;
        };
        Some(DecisionRecord {
            verdict: "Reject".into(),
            by: by.clone(),
            comment: comment.clone(),
            request: Some(request.clone()),
            decided_at: decided_at.clone(),
            preview_hash: preview_hash.clone(),
            edited_hash: None,
            edits: None,
        })
    }

    /// The status reason of a refusal; `None` while a person is asked.
    fn refusal_reason(&self) -> Option<&'static str> {
        match self {
            Self::AwaitingApproval { .. } => None,
            Self::Rejected { .. } => Some("Rejected"),
            Self::Expired { .. } => Some("Expired"),
            Self::PolicyBlocked { .. } => Some("Policy"),
            Self::AdmissionPolicyMissing(_) => Some("AdmissionPolicyMissing"),
            Self::NameTaken { .. } => Some("ApprovalRequestNameTaken"),
            Self::NotAuthorized(_) => Some("NotAuthorized"),
        }
    }

    /// What status says, telling a person what to do next.
    fn message(&self) -> String {
        match self {
            Self::AwaitingApproval { request, why } => format!(
                "Waiting for a person to approve ApprovalRequest {request} ({why}): kubectl patch approvalrequest {request} --type=merge -p '{{\"spec\":{{\"decision\":{{\"verdict\":\"Approve\",\"by\":\"<your user name>\"}}}}}}'"
            ),
            Self::Rejected {
                request,
                by,
                comment,
                ..
            } => format!(
                "{by} rejected ApprovalRequest {request}: {}. Change the spec to ask again.",
                comment.as_deref().unwrap_or("no reason given")
            ),
            Self::Expired {
                request,
                expires_at,
            } => format!(
                "Nobody approved ApprovalRequest {request} before it expired at {expires_at}; nothing was written. Change the spec to ask again."
            ),
            Self::PolicyBlocked { why } => {
                format!("The Budget's policy blocks this write: {why}.")
            }
            Self::AdmissionPolicyMissing(message) | Self::NotAuthorized(message) => message.clone(),
            Self::NameTaken { subject, base } => format!(
                "Every name ledgerops would give the ApprovalRequest for {subject} is taken by an object it did not issue: delete the ApprovalRequests named {base}-* that you created"
            ),
        }
    }
}

/// The id of a write the subject `uid` starts at `now`, if the gate lets it go ahead.
pub fn attempt_id(uid: &str, now: Timestamp) -> String {
    format!("{uid}-{}", now.as_millisecond())
}

/// A Transaction held back by the gate.
pub fn transaction_verdict(hold: &Hold) -> Verdict {
    let message = hold.message();
    match hold.refusal_reason() {
        None => Verdict::AwaitingApproval(message),
        Some(reason) => Verdict::Blocked { reason, message },
    }
}

/// A plan held back by the gate: a rejection and an expiry have phases of their own.
pub fn plan_verdict(hold: &Hold) -> PlanVerdict {
    let message = hold.message();
    let Some(reason) = hold.refusal_reason() else {
        return PlanVerdict::AwaitingApproval(message);
    };
    let phase = match hold {
        Hold::Rejected { .. } => PlanPhase::Rejected,
        Hold::Expired { .. } => PlanPhase::Expired,
        _ => PlanPhase::Blocked,
    };
    PlanVerdict::Blocked {
        phase,
        reason,
        message,
    }
}

#[cfg(test)]
#[path = "gate_tests.rs"]
mod tests;
