//! Unit tests of `logic/approval/status.rs`.

use super::*;
use crate::api::approval::{ApprovalUse, Decision, Issuance, Subject, SubjectKind};
use crate::api::common::LocalRef;

fn at(s: i64) -> Timestamp {
    Timestamp::from_second(1_790_000_000 + s).unwrap()
}

fn spec(decision: Option<Decision>) -> ApprovalRequestSpec {
    ApprovalRequestSpec {
        budget_ref: LocalRef { name: "b".into() },
        subject: Subject {
            kind: SubjectKind::CategorizationPlan,
            name: "p".into(),
        },
        preview_hash: "h".into(),
        summary: "s".into(),
        reason: "r".into(),
        changes: vec![],
        change_count: 0,
        expires_at: Time(at(100)),
        escalate_to: vec!["finance-manager".into()],
        proposed_by: Vec::new(),
        four_eyes: false,
        decision,
        review: None,
    }
}

#[test]
fn waits_then_expires_once_with_an_escalation() {
    let (pending, none) = next(
        &spec(None),
        &ApprovalRequestStatus::default(),
        Some(1),
        at(0),
    );
    assert_eq!((pending.phase, none), (Some(ApprovalPhase::Pending), None));
    let (expired, escalation) = next(&spec(None), &pending, Some(1), at(100));
    assert_eq!(expired.phase, Some(ApprovalPhase::Expired));
    assert!(escalation.unwrap().contains("finance-manager"));
    let (again, second) = next(&spec(None), &expired, Some(1), at(200));
    assert_eq!(
        (again.phase, second),
        (Some(ApprovalPhase::Expired), None),
        "escalated once"
    );
}

#[test]
fn a_decision_is_recorded_with_its_time() {
    let approve = Decision {
        verdict: Verdict::Approve,
        by: "bob".into(),
        groups: Vec::new(),
        comment: None,
        edits: None,
    };
    let (s, _) = next(&spec(Some(approve)), &issued(), Some(2), at(5));
    assert_eq!(
        (s.phase, s.decided_at.clone()),
        (Some(ApprovalPhase::Approved), Some(Time(at(5))))
    );
    let (later, _) = next(
        &spec(s.phase.map(|_| Decision {
            verdict: Verdict::Approve,
            by: "bob".into(),
            groups: Vec::new(),
            comment: None,
            edits: None,
        })),
        &s,
        Some(2),
        at(50),
    );
    assert_eq!(later.decided_at, Some(Time(at(5))));
    let reject = Decision {
        verdict: Verdict::Reject,
        by: "alice".into(),
        groups: Vec::new(),
        comment: Some("no".into()),
        edits: None,
    };
    assert_eq!(
        next(&spec(Some(reject)), &issued(), Some(2), at(5)).0.phase,
        Some(ApprovalPhase::Rejected)
    );
}

fn issued() -> ApprovalRequestStatus {
    ApprovalRequestStatus {
        issued_for: Some(Issuance {
            subject_uid: "u".into(),
            preview_hash: "h".into(),
            at: Time(at(0)),
        }),
        ..ApprovalRequestStatus::default()
    }
}

fn approve(by: &str) -> Option<Decision> {
    Some(Decision {
        verdict: Verdict::Approve,
        by: by.into(),
        groups: Vec::new(),
        comment: None,
        edits: None,
    })
}

#[test]
fn the_phase_says_what_ledgerops_did_with_the_request() {
    let with = |f: fn(&mut ApprovalRequestStatus)| {
        let mut s = issued();
        f(&mut s);
        s
    };
    let cases: Vec<(
        &str,
        Option<Decision>,
        ApprovalRequestStatus,
        i64,
        ApprovalPhase,
    )> = vec![
        (
            "approved in time",
            approve("bob"),
            issued(),
            5,
            ApprovalPhase::Approved,
        ),
        (
            "approved after expiry",
            approve("bob"),
            issued(),
            100,
            ApprovalPhase::Expired,
        ),
        (
            "approved on an expired request",
            approve("bob"),
            with(|s| s.phase = Some(ApprovalPhase::Expired)),
            5,
            ApprovalPhase::Expired,
        ),
        (
            "approved on a stale request",
            approve("bob"),
            with(|s| s.phase = Some(ApprovalPhase::Stale)),
            5,
            ApprovalPhase::Stale,
        ),
        (
            "decided before ledgerops issued it",
            approve("bob"),
            ApprovalRequestStatus::default(),
            5,
            ApprovalPhase::Ignored,
        ),
        (
            "undecided and not issued yet",
            None,
            ApprovalRequestStatus::default(),
            5,
            ApprovalPhase::Pending,
        ),
        (
            "spent",
            approve("bob"),
            with(|s| {
                s.used = Some(ApprovalUse {
                    attempt_id: "op".into(),
                    started_at: Time(at(6)),
                    completed_at: Some(Time(at(7))),
                    written: true,
                    preview_hash: None,
                })
            }),
            8,
            ApprovalPhase::Applied,
        ),
        (
            "spent on a write that wrote nothing",
            approve("bob"),
            with(|s| {
                s.used = Some(ApprovalUse {
                    attempt_id: "op".into(),
                    started_at: Time(at(6)),
                    completed_at: Some(Time(at(7))),
                    written: false,
                    preview_hash: None,
                })
            }),
            8,
            ApprovalPhase::Stale,
        ),
    ];
    for (what, decision, status, now, want) in cases {
        let (next, _) = next(&spec(decision), &status, Some(1), at(now));
        assert_eq!(next.phase, Some(want), "{what}");
    }
}

#[test]
fn stale_holds_until_a_decision() {
    let s = stale(&issued(), Some(1), at(0));
    assert_eq!(
        next(&spec(None), &s, Some(1), at(500)).0.phase,
        Some(ApprovalPhase::Stale)
    );
}

#[test]
fn a_decided_request_is_released_from_its_subject_once() {
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
    let owned = |decision: Option<Decision>, owners: Option<Vec<OwnerReference>>| {
        let mut r = ApprovalRequest::new("r", spec(decision));
        r.metadata.owner_references = owners;
        r
    };
    let owner = || {
        Some(vec![OwnerReference {
            uid: "u".into(),
            controller: Some(true),
            ..OwnerReference::default()
        }])
    };
    let decided = || {
        Some(Decision {
            verdict: Verdict::Approve,
            by: "bob".into(),
            groups: Vec::new(),
            comment: None,
            edits: None,
        })
    };
    assert!(keep_as_record(&owned(decided(), owner())));
    assert!(!keep_as_record(&owned(None, owner())), "still waiting");
    assert!(!keep_as_record(&owned(decided(), None)), "released already");
    assert!(!keep_as_record(&owned(decided(), Some(vec![]))));
}
