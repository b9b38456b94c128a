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
mod tests {
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{OwnerReference, Time};

    use super::*;
    use crate::api::approval::{
        ApprovalRequestSpec, ApprovalRequestStatus, ApprovalUse, Decision, Issuance, Subject,
    };
    use crate::api::common::LocalRef;

    fn at(s: i64) -> Timestamp {
        Timestamp::from_second(1_790_000_000 + s).unwrap()
    }

    const EXPECTED: Expected<'static> = Expected {
        subject_uid: "uid-1",
        subject_kind: SubjectKind::CategorizationPlan,
        subject_name: "groceries",
        budget: "household",
        hash: "hash-1",
    };

    fn issued() -> ApprovalRequestStatus {
        ApprovalRequestStatus {
            issued_for: Some(Issuance {
                subject_uid: "uid-1".into(),
                preview_hash: "hash-1".into(),
                at: Time(at(0)),
            }),
            ..ApprovalRequestStatus::default()
        }
    }

    fn request(
        decision: Option<(Verdict, &str)>,
        status: ApprovalRequestStatus,
    ) -> ApprovalRequest {
        let mut r = ApprovalRequest::new(
            "groceries-abc",
            ApprovalRequestSpec {
                budget_ref: LocalRef {
                    name: "household".into(),
                },
                subject: Subject {
                    kind: SubjectKind::CategorizationPlan,
                    name: "groceries".into(),
                },
                preview_hash: "hash-1".into(),
                summary: "s".into(),
                reason: "r".into(),
                changes: vec![],
                change_count: 0,
                expires_at: Time(at(100)),
                escalate_to: vec![],
                proposed_by: String::new(),
                four_eyes: false,
                decision: decision.map(|(verdict, by)| Decision {
                    verdict,
                    by: by.into(),
                    comment: Some("ok".into()),
                    edits: None,
                }),
                review: None,
            },
        );
        r.metadata.owner_references = Some(vec![OwnerReference {
            api_version: "ledgerops.dev/v1alpha1".into(),
            kind: "CategorizationPlan".into(),
            name: "groceries".into(),
            uid: "uid-1".into(),
            controller: Some(true),
            block_owner_deletion: None,
        }]);
        r.status = Some(status);
        r
    }

    fn approved_by_bob() -> Option<(Verdict, &'static str)> {
        Some((Verdict::Approve, "bob"))
    }

    #[test]
    fn the_gate_prefers_a_write_in_flight_then_an_approval() {
        let approved = Authority::Approved {
            by: "bob".into(),
            comment: None,
            decided_at: at(1),
        };
        let in_use = Authority::InUse {
            attempt_id: "op".into(),
        };
        let rejected = Authority::Rejected {
            by: "carol".into(),
            comment: None,
        };
        let foreign = Authority::NotIssued("x".into());
        let cases: Vec<(&str, Vec<Authority>, Next)> = vec![
            ("none", vec![], Next::Issue),
            (
                "only unusable ones",
                vec![Authority::Stale, Authority::Spent, foreign.clone()],
                Next::Issue,
            ),
            (
                "in flight wins",
                vec![approved.clone(), in_use],
                Next::Resume(1, "op".into()),
            ),
            (
                "approval over a foreign one",
                vec![foreign.clone(), approved.clone()],
                Next::Proceed(1),
            ),
            (
                "waiting over a refusal",
                vec![rejected.clone(), Authority::Pending],
                Next::Wait(1),
            ),
            (
                "adopt an undecided one of ours",
                vec![Authority::Spent, Authority::Unissued],
                Next::Adopt(1),
            ),
            ("rejected", vec![foreign, rejected], Next::Stop(1)),
            ("expired", vec![Authority::Expired], Next::Stop(0)),
        ];
        for (what, judged, want) in cases {
            assert_eq!(next(&judged), want, "{what}");
        }
    }

    #[test]
    fn only_an_unfinished_use_of_an_issued_owned_request_is_in_flight() {
        let mut r = request(approved_by_bob(), issued());
        assert_eq!(in_flight_attempt(&r, "uid-1"), None, "not spent");
        r.status.as_mut().unwrap().used = Some(ApprovalUse {
            attempt_id: "op".into(),
            started_at: Time(at(1)),
            completed_at: None,
            written: false,
            preview_hash: None,
        });
        assert_eq!(in_flight_attempt(&r, "uid-1"), Some("op"));
        assert_eq!(in_flight_attempt(&r, "uid-2"), None, "another subject's");
        let mut foreign = r.clone();
        foreign.metadata.owner_references.as_mut().unwrap()[0].uid = "uid-2".into();
        assert_eq!(
            in_flight_attempt(&foreign, "uid-1"),
            None,
            "owned elsewhere"
        );
        let mut orphaned = r.clone();
        orphaned.metadata.owner_references = None;
        assert_eq!(
            in_flight_attempt(&orphaned, "uid-1"),
            Some("op"),
            "a decided request outlives its owner"
        );
        let mut unissued = r.clone();
        unissued.status.as_mut().unwrap().issued_for = None;
        assert_eq!(in_flight_attempt(&unissued, "uid-1"), None, "not issued");
        r.status
            .as_mut()
            .unwrap()
            .used
            .as_mut()
            .unwrap()
            .completed_at = Some(Time(at(2)));
        assert_eq!(in_flight_attempt(&r, "uid-1"), None, "completed");
    }

    #[test]
    fn which_requests_go_stale() {
        let fresh = |hash: &str| {
            let mut r = request(None, issued());
            r.spec.preview_hash = hash.into();
            r
        };
        assert!(goes_stale(&fresh("old"), "uid-1", "hash-1"));
        assert!(!goes_stale(&fresh("hash-1"), "uid-1", "hash-1"), "current");
        assert!(
            !goes_stale(&fresh("old"), "uid-2", "hash-1"),
            "another subject's"
        );
        let mut approved = fresh("old");
        approved.spec.decision = approved_by_bob().map(|(verdict, by)| Decision {
            verdict,
            by: by.into(),
            comment: None,
            edits: None,
        });
        assert!(
            goes_stale(&approved, "uid-1", "hash-1"),
            "an unspent approval"
        );
        let mut spent = approved.clone();
        spent.status.as_mut().unwrap().used = Some(ApprovalUse {
            attempt_id: "op".into(),
            started_at: Time(at(1)),
            completed_at: None,
            written: false,
            preview_hash: None,
        });
        assert!(!goes_stale(&spent, "uid-1", "hash-1"), "a write in flight");
        for phase in [
            ApprovalPhase::Stale,
            ApprovalPhase::Expired,
            ApprovalPhase::Applied,
            ApprovalPhase::Ignored,
        ] {
            let mut r = fresh("old");
            r.status.as_mut().unwrap().phase = Some(phase);
            assert!(!goes_stale(&r, "uid-1", "hash-1"), "{phase:?}");
        }
        let mut foreign = fresh("old");
        foreign.status = None;
        assert!(!goes_stale(&foreign, "uid-1", "hash-1"), "not issued");
    }

    #[test]
    fn a_timely_approval_of_an_issued_request_authorizes() {
        let mut status = issued();
        status.decided_at = Some(Time(at(50)));
        assert_eq!(
            judge(&request(approved_by_bob(), status), &EXPECTED, at(60)),
            Authority::Approved {
                by: "bob".into(),
                comment: Some("ok".into()),
                decided_at: at(50)
            }
        );
        // Not recorded yet: seen now.
        assert!(matches!(
            judge(&request(approved_by_bob(), issued()), &EXPECTED, at(99)),
            Authority::Approved { decided_at, .. } if decided_at == at(99)
        ));
    }

    #[test]
    fn the_binding_must_hold_on_every_field() {
        type Tamper = fn(&mut ApprovalRequest);
        let cases: Vec<(&str, Tamper)> = vec![
            ("hash", |r| r.spec.preview_hash = "other".into()),
            ("subject name", |r| r.spec.subject.name = "other".into()),
            ("subject kind", |r| {
                r.spec.subject.kind = SubjectKind::Transaction
            }),
            ("budget", |r| r.spec.budget_ref.name = "other".into()),
            ("owner uid", |r| {
                r.metadata.owner_references.as_mut().unwrap()[0].uid = "uid-2".into()
            }),
            ("issued for another uid", |r| {
                r.status
                    .as_mut()
                    .unwrap()
                    .issued_for
                    .as_mut()
                    .unwrap()
                    .subject_uid = "uid-2".into()
            }),
            ("issued for another hash", |r| {
                r.status
                    .as_mut()
                    .unwrap()
                    .issued_for
                    .as_mut()
                    .unwrap()
                    .preview_hash = "other".into()
            }),
            ("decided before issuance", |r| {
                r.status.as_mut().unwrap().issued_for = None
            }),
        ];
        for (what, tamper) in cases {
            let mut r = request(approved_by_bob(), issued());
            tamper(&mut r);
            assert!(
                matches!(judge(&r, &EXPECTED, at(10)), Authority::NotIssued(m) if m.contains("groceries-abc")),
                "{what}"
            );
        }
    }

    #[test]
    fn each_state_of_a_request() {
        let with = |f: fn(&mut ApprovalRequestStatus)| {
            let mut s = issued();
            f(&mut s);
            s
        };
        let used = |completed: bool| ApprovalUse {
            attempt_id: "op-1".into(),
            started_at: Time(at(60)),
            completed_at: completed.then(|| Time(at(61))),
            written: completed,
            preview_hash: None,
        };
        let cases: Vec<(&str, ApprovalRequest, i64, Authority)> = vec![
            ("waiting", request(None, issued()), 10, Authority::Pending),
            (
                "unanswered past expiry",
                request(None, issued()),
                100,
                Authority::Expired,
            ),
            (
                "approved after expiry",
                request(approved_by_bob(), issued()),
                100,
                Authority::Expired,
            ),
            (
                "approval recorded late",
                request(
                    approved_by_bob(),
                    with(|s| s.decided_at = Some(Time(at(100)))),
                ),
                10,
                Authority::Expired,
            ),
            (
                "approved on an expired request",
                request(
                    approved_by_bob(),
                    with(|s| s.phase = Some(ApprovalPhase::Expired)),
                ),
                10,
                Authority::Expired,
            ),
            (
                "approved on a stale request",
                request(
                    approved_by_bob(),
                    with(|s| s.phase = Some(ApprovalPhase::Stale)),
                ),
                10,
                Authority::Stale,
            ),
            (
                "rejected",
                request(Some((Verdict::Reject, "carol")), issued()),
                10,
                Authority::Rejected {
                    by: "carol".into(),
                    comment: Some("ok".into()),
                },
            ),
            (
                "undecided, not issued yet",
                request(None, ApprovalRequestStatus::default()),
                10,
                Authority::Unissued,
            ),
            (
                "no status at all",
                {
                    let mut r = request(None, issued());
                    r.status = None;
                    r
                },
                10,
                Authority::Unissued,
            ),
        ];
        for (what, r, now, want) in cases {
            assert_eq!(judge(&r, &EXPECTED, at(now)), want, "{what}");
        }
        let mut in_use = request(approved_by_bob(), issued());
        in_use.status.as_mut().unwrap().used = Some(used(false));
        assert_eq!(
            judge(&in_use, &EXPECTED, at(500)),
            Authority::InUse {
                attempt_id: "op-1".into()
            },
            "a started write resumes even after expiry"
        );
        in_use.status.as_mut().unwrap().used = Some(used(true));
        assert_eq!(judge(&in_use, &EXPECTED, at(10)), Authority::Spent);
    }
}
