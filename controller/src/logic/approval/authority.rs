//! Whether an ApprovalRequest authorizes a write. Nothing a user can write by themselves counts:
//! the request must be bound to the asking object by uid (owner reference) and to the exact
//! preview hash, carry ledgerops' own issuance record (status, which only ledgerops writes), hold
//! a person's approval seen before it expired, and not be spent on an earlier write.

use k8s_openapi::jiff::Timestamp;

use crate::api::approval::{ApprovalPhase, ApprovalRequest, SubjectKind, Verdict};

/// The object that asks, and the preview it asks about.
#[derive(Debug, Clone, Copy)]
pub struct Expected<'a> {
    pub subject_uid: &'a str,
    pub subject_kind: SubjectKind,
    pub subject_name: &'a str,
    pub budget: &'a str,
    pub hash: &'a str,
}

/// [`Expected`], owned: a grant keeps it, to judge its request again right before spending it.
#[derive(Debug, Clone)]
pub struct Binding {
    subject_uid: String,
    subject_kind: SubjectKind,
    subject_name: String,
    budget: String,
    hash: String,
}

impl Binding {
    pub fn of(expected: &Expected<'_>) -> Self {
        Self {
            subject_uid: expected.subject_uid.to_owned(),
            subject_kind: expected.subject_kind,
            subject_name: expected.subject_name.to_owned(),
            budget: expected.budget.to_owned(),
            hash: expected.hash.to_owned(),
        }
    }

    pub fn expected(&self) -> Expected<'_> {
        Expected {
            subject_uid: &self.subject_uid,
            subject_kind: self.subject_kind,
            subject_name: &self.subject_name,
            budget: &self.budget,
            hash: &self.hash,
        }
    }
}

/// What a request means for the write it is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Authority {
    /// A person approved it in time: one write may go ahead.
    Approved {
        by: String,
        comment: Option<String>,
        decided_at: Timestamp,
    },
    /// Already spent on the write `attempt_id`, whose outcome is not recorded: only that write
    /// may resume.
    InUse { attempt_id: String },
    /// Spent on a write that completed: it authorizes nothing more.
    Spent,
    /// A person rejected it.
    Rejected { by: String, comment: Option<String> },
    /// Waiting for a person.
    Pending,
    /// Nobody approved before it expired (an approval seen after expiry counts as none).
    Expired,
    /// The preview changed since: it authorizes nothing.
    Stale,
    /// Created for this subject and preview but not yet marked issued, and undecided: ledgerops
    /// may adopt it by recording its issuance.
    Unissued,
    /// Not a request ledgerops issued for this subject and preview.
    NotIssued(String),
}

/// What the approval gate does next, from every request of the subject judged for the current
/// preview.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Next {
    /// Finish the write the request at this index was spent on.
    Resume(usize, String),
    /// Write, spending the approval of the request at this index.
    Proceed(usize),
    /// Wait for a person on the request at this index.
    Wait(usize),
    /// Record the issuance of the request at this index (ledgerops created it and stopped
    /// before recording it), then wait.
    Adopt(usize),
    /// Stop: the request at this index was rejected, or expired unanswered.
    Stop(usize),
    /// No request can serve: issue a new one.
    Issue,
}

/// Chooses among `judged` (one verdict per request, same order): a write in flight first, then
/// an approval, a waiting request, one to adopt, a refusal; otherwise a new request.
pub fn next(judged: &[Authority]) -> Next {
    let find = |f: fn(&Authority) -> bool| judged.iter().position(f);
    if let Some(i) = find(|a| matches!(a, Authority::InUse { .. })) {
        let Authority::InUse { attempt_id } = &judged[i] else {
            unreachable!("found as InUse")
        };
        return Next::Resume(i, attempt_id.clone());
    }
    if let Some(i) = find(|a| matches!(a, Authority::Approved { .. })) {
        return Next::Proceed(i);
    }
    if let Some(i) = find(|a| *a == Authority::Pending) {
        return Next::Wait(i);
    }
    if let Some(i) = find(|a| *a == Authority::Unissued) {
        return Next::Adopt(i);
    }
    if let Some(i) = find(|a| matches!(a, Authority::Rejected { .. } | Authority::Expired)) {
        return Next::Stop(i);
    }
    Next::Issue
}

/// Whether `request`, issued for `subject_uid`, no longer holds now that the preview hash is
/// `hash`: it must be marked Stale so that nobody approves what would not be written.
pub fn goes_stale(request: &ApprovalRequest, subject_uid: &str, hash: &str) -> bool {
    let spec = &request.spec;
    let Some(status) = &request.status else {
        return false;
    };
    let issued_here = status
        .issued_for
        .as_ref()
        .is_some_and(|i| i.subject_uid == subject_uid);
    let settled = matches!(
        status.phase,
        Some(
            ApprovalPhase::Stale
                | ApprovalPhase::Applied
                | ApprovalPhase::Ignored
                | ApprovalPhase::Expired
                | ApprovalPhase::Rejected
        )
    );
    let rejected = spec
        .decision
        .as_ref()
        .is_some_and(|d| d.verdict == Verdict::Reject);
    issued_here && spec.preview_hash != hash && status.used.is_none() && !settled && !rejected
}

/// Judges `request` for `expected` at `now` (ledgerops' own clock).
pub fn judge(request: &ApprovalRequest, expected: &Expected<'_>, now: Timestamp) -> Authority {
    let name = request.metadata.name.as_deref().unwrap_or_default();
    if let Err(why) = binding(request, expected) {
        return Authority::NotIssued(format!(
            "ApprovalRequest {name} was not issued by ledgerops for {} {}: {why}",
            kind_word(expected.subject_kind),
            expected.subject_name
        ));
    }
    let status = request.status.clone().unwrap_or_default();
    let decision = request.spec.decision.as_ref();
    match &status.issued_for {
        None if decision.is_none() => return Authority::Unissued,
        None => {
            return Authority::NotIssued(format!(
                "ApprovalRequest {name} carried a decision before ledgerops issued it"
            ));
        }
        Some(issued)
            if issued.subject_uid != expected.subject_uid
                || issued.preview_hash != expected.hash =>
        {
            return Authority::NotIssued(format!(
                "ApprovalRequest {name} was issued for another object or preview"
            ));
        }
        Some(_) => {}
    }
    if let Some(used) = &status.used {
        return match used.completed_at {
            Some(_) => Authority::Spent,
            None => Authority::InUse {
                attempt_id: used.attempt_id.clone(),
            },
        };
    }
    if status.phase == Some(ApprovalPhase::Stale) {
        return Authority::Stale;
    }
    let expires = request.spec.expires_at.0;
    let Some(decision) = decision else {
        return if now >= expires {
            Authority::Expired
        } else {
            Authority::Pending
        };
    };
    // The moment ledgerops first saw the decision; a decision not recorded yet is seen now.
    let seen = status.decided_at.as_ref().map_or(now, |t| t.0);
    match decision.verdict {
        Verdict::Reject => Authority::Rejected {
            by: decision.by.clone(),
            comment: decision.comment.clone(),
        },
        Verdict::Approve if seen >= expires || status.phase == Some(ApprovalPhase::Expired) => {
            Authority::Expired
        }
        Verdict::Approve => Authority::Approved {
            by: decision.by.clone(),
            comment: decision.comment.clone(),
            decided_at: seen,
        },
    }
}

/// Whether `fresh`, the request as the API server holds it now, still grants the write the
/// gate granted on `granted`, an older copy: the same object with the same spec (the decision,
/// the preview, the subject), and still a timely approval of `expected` that nobody has spent.
/// Someone else's write in between (usually the request's own reconciler recording the
/// decision) changes nothing else.
pub fn still_grants(
    fresh: &ApprovalRequest,
    granted: &ApprovalRequest,
    expected: &Expected<'_>,
    now: Timestamp,
) -> bool {
    fresh.metadata.uid == granted.metadata.uid
        && fresh.spec == granted.spec
        && matches!(judge(fresh, expected, now), Authority::Approved { .. })
}

/// `request` is controlled by (owned as controller by) no other object than the one with `uid`.
/// ledgerops creates every request owned by its subject and drops the owner once a person has
/// decided (a decided request is a record that outlives its subject), and only ledgerops may
/// change owner references (admission): an owner naming another object is not ours.
pub fn owner_agrees(request: &ApprovalRequest, uid: &str) -> bool {
    request
        .metadata
        .owner_references
        .iter()
        .flatten()
        .filter(|o| o.controller == Some(true))
        .all(|o| o.uid == uid)
}

/// The write attempt `request` was spent on and whose outcome is not recorded yet, when the
/// request is one ledgerops issued for the object with `uid`.
pub fn in_flight_attempt<'a>(request: &'a ApprovalRequest, uid: &str) -> Option<&'a str> {
    let status = request.status.as_ref()?;
    let issued_here = status
        .issued_for
        .as_ref()
        .is_some_and(|i| i.subject_uid == uid);
    let used = status.used.as_ref().filter(|u| u.completed_at.is_none())?;
    (issued_here && owner_agrees(request, uid)).then_some(used.attempt_id.as_str())
}

/// The spec and owner reference tie the request to `expected`.
fn binding(request: &ApprovalRequest, expected: &Expected<'_>) -> Result<(), &'static str> {
    let spec = &request.spec;
    if spec.preview_hash != expected.hash {
        return Err("it names another preview hash");
    }
    if spec.subject.kind != expected.subject_kind || spec.subject.name != expected.subject_name {
        return Err("it names another subject");
    }
    if spec.budget_ref.name != expected.budget {
        return Err("it names another Budget");
    }
    if !owner_agrees(request, expected.subject_uid) {
        return Err("it is owned by another object");
    }
    Ok(())
}

fn kind_word(kind: SubjectKind) -> &'static str {
    match kind {
        SubjectKind::CategorizationPlan => "CategorizationPlan",
        SubjectKind::Transaction => "Transaction",
    }
}

#[cfg(test)]
#[path = "authority_tests.rs"]
mod tests;
