//! The ApprovalRequest the approval gate opens for a change, and what the gate records on it:
//! the names it may take, its spec, the decision record an approval gives the write, the hold a
//! refusal means, and the gate's own status fields (its issuance and its one use).

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{OwnerReference, Time};
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use kube::ResourceExt;
use serde_json::json;

use super::authority::Authority;
use super::gate::Hold;
use crate::api::approval::{
    ApprovalRequest, ApprovalRequestSpec, ApprovalUse, SUBJECT_UID, Subject, SubjectKind,
};
use crate::api::budget::Budget;
use crate::api::common::{DecisionRecord, LocalRef, Review};
use crate::logic::plan::PlannedChange;
use crate::logic::plan::preview::SHOWN;
use crate::logic::values::duration;

/// How many names a request may try: the base, then `-1` to `-7`. A subject whose names are all
/// taken by objects ledgerops did not issue waits (`NameTaken`) rather than look further.
const NAMES: usize = 8;

/// The names a request for `subject` and preview `hash` may take, in the order they are tried.
pub fn names(subject: &str, hash: &str) -> Vec<String> {
    let base = base_name(subject, hash);
    std::iter::once(base.clone())
        .chain((1..NAMES).map(|n| format!("{base}-{n}")))
        .collect()
}

/// The first name of a request: the subject's name and the hash's first ten characters.
pub fn base_name(subject: &str, hash: &str) -> String {
    format!("{}-{}", truncate(subject, 200), &hash[..hash.len().min(10)])
}

/// What a request asks about, as its spec records it.
pub struct Draft<'a> {
    pub budget: &'a Budget,
    pub kind: SubjectKind,
    pub subject: &'a str,
    pub subject_uid: &'a str,
    /// Everyone who shaped the change (see `lineage::gather`).
    pub lineage: Vec<String>,
    pub owner: Option<OwnerReference>,
    pub hash: &'a str,
    pub summary: &'a str,
    pub reason: &'a str,
    pub changes: &'a [PlannedChange],
    pub review: Option<Review>,
}

/// The request `name` for `draft`, expiring after the Budget's `approval.expiry` (a day when it
/// does not parse).
pub fn new_request(draft: &Draft<'_>, name: &str, now: Timestamp) -> ApprovalRequest {
    let policy = &draft.budget.spec.approval;
    let expiry =
        duration::parse(&policy.expiry.0).unwrap_or(std::time::Duration::from_secs(86_400));
    let expires = now + SignedDuration::try_from(expiry).unwrap_or(SignedDuration::from_hours(24));
    let mut request = ApprovalRequest::new(
        name,
        ApprovalRequestSpec {
            budget_ref: LocalRef {
                name: draft.budget.name_any(),
            },
            subject: Subject {
                kind: draft.kind,
                name: draft.subject.to_owned(),
            },
            preview_hash: draft.hash.to_owned(),
            summary: truncate(draft.summary, 200),
            reason: truncate(draft.reason, 500),
            changes: draft
                .changes
                .iter()
                .take(SHOWN)
                .map(|c| c.change.clone())
                .collect(),
            change_count: u32::try_from(draft.changes.len()).unwrap_or(u32::MAX),
            expires_at: Time(expires),
            escalate_to: policy.escalate_to.clone(),
            proposed_by: draft.lineage.clone(),
            four_eyes: policy.four_eyes,
            decision: None,
            review: draft.review.clone(),
        },
    );
    request.metadata.labels = Some([(SUBJECT_UID.to_owned(), draft.subject_uid.to_owned())].into());
    request.metadata.owner_references = draft.owner.clone().map(|o| vec![o]);
    request
}

/// What the gate does with a request found under a name it meant to create.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Taken {
    /// Not ours for this preview (someone else's, spent, or stale): try the next name.
    PassOver,
    /// Ours for this preview but not yet marked issued: record the issuance, then follow it.
    Issue,
    /// Ours for this preview: follow it.
    Follow,
}

/// What the gate does with the request it found, judged for the current preview.
pub fn taken(judged: &Authority) -> Taken {
    match judged {
        Authority::NotIssued(_) | Authority::Spent | Authority::Stale => Taken::PassOver,
        Authority::Unissued => Taken::Issue,
        _ => Taken::Follow,
    }
}

/// The record of the policy running the change `hash` without asking, for `reason`.
pub fn policy_record(reason: &str, hash: &str, now: Timestamp) -> DecisionRecord {
    DecisionRecord {
        verdict: "Policy".into(),
        by: "policy".into(),
        comment: Some(reason.to_owned()),
        request: None,
        decided_at: Some(Time(now)),
        preview_hash: hash.to_owned(),
        edited_hash: None,
        edits: None,
    }
}

/// The record of the approval of `request`, judged `judged`, with the approver's edits.
pub fn approval_record(request: &ApprovalRequest, judged: &Authority) -> DecisionRecord {
    let decision = request.spec.decision.as_ref();
    let decided_at = match judged {
        Authority::Approved { decided_at, .. } => Some(Time(*decided_at)),
        _ => request.status.as_ref().and_then(|s| s.decided_at.clone()),
    };
    DecisionRecord {
        verdict: "Approve".into(),
        by: decision.map(|d| d.by.clone()).unwrap_or_default(),
        comment: decision.and_then(|d| d.comment.clone()),
        request: Some(request.name_any()),
        decided_at,
        preview_hash: request.spec.preview_hash.clone(),
        edited_hash: None,
        edits: decision.and_then(|d| d.edits.clone()),
    }
}

/// What a request that refuses the write (rejected, or expired unanswered) holds it back with.
pub fn refusal(request: &ApprovalRequest, judged: &Authority) -> Hold {
    let name = request.name_any();
    match judged {
        Authority::Rejected { by, comment } => Hold::Rejected {
            request: name,
            by: by.clone(),
            comment: comment.clone(),
            decided_at: request.status.as_ref().and_then(|s| s.decided_at.clone()),
            preview_hash: request.spec.preview_hash.clone(),
        },
        _ => Hold::Expired {
            request: name,
            expires_at: request.spec.expires_at.0,
        },
    }
}

/// Why an approval of `request` authorizes nothing for a subject of `kind`: only a plan's write
/// knows how to apply edits, so any other subject's approval that carries them is refused rather
/// than applied unedited.
pub fn misplaced_edits(request: &ApprovalRequest, kind: SubjectKind) -> Option<String> {
    let edited = request
        .spec
        .decision
        .as_ref()
        .and_then(|d| d.edits.as_ref());
    (kind != SubjectKind::CategorizationPlan && edited.is_some()).then(|| {
        format!(
            "ApprovalRequest {} was approved with edits, which only a CategorizationPlan's approval may carry: nothing is written. Change the {kind:?} to ask again, and approve it without edits.",
            request.name_any(),
        )
    })
}

/// The use that spends a request's approval on write `attempt` of the preview `hash`.
pub fn spent(attempt: &str, hash: &str, now: Timestamp) -> ApprovalUse {
    ApprovalUse {
        attempt_id: attempt.to_owned(),
        started_at: Time(now),
        completed_at: None,
        written: false,
        preview_hash: Some(hash.to_owned()),
    }
}

/// The use of `request` once write `attempt` ended (`written`: YNAB holds the change), keeping
/// when it started and, unless `hash` says otherwise, the preview it was spent on.
pub fn completed(
    request: &ApprovalRequest,
    attempt: &str,
    now: Timestamp,
    written: bool,
    hash: Option<String>,
) -> ApprovalUse {
    let used = request.status.as_ref().and_then(|s| s.used.as_ref());
    ApprovalUse {
        attempt_id: attempt.to_owned(),
        started_at: used.map_or(Time(now), |u| u.started_at.clone()),
        completed_at: Some(Time(now)),
        written,
        preview_hash: hash.or_else(|| used.and_then(|u| u.preview_hash.clone())),
    }
}

/// Every status field the gate owns on `request`, with `fields` set: the gate applies them all
/// each time, so that no earlier field of its own is dropped.
pub fn gate_fields(request: &ApprovalRequest, fields: serde_json::Value) -> serde_json::Value {
    let mut owned = json!({});
    let status = request.status.as_ref();
    if let Some(issued) = status.and_then(|s| s.issued_for.as_ref()) {
        owned["issuedFor"] = serde_json::to_value(issued).expect("an issuance serializes");
    }
    if let Some(used) = status.and_then(|s| s.used.as_ref()) {
        owned["used"] = serde_json::to_value(used).expect("a use serializes");
    }
    for (k, v) in fields.as_object().into_iter().flatten() {
        owned[k] = v.clone();
    }
    owned
}

fn truncate(text: &str, max: usize) -> String {
    text.chars().take(max).collect()
}

#[cfg(test)]
#[path = "request_tests.rs"]
mod tests;
