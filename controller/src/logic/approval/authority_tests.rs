//! Unit tests of `logic/approval/authority.rs`.

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

fn request(decision: Option<(Verdict, &str)>, status: ApprovalRequestStatus) -> ApprovalRequest {
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
            proposed_by: Vec::new(),
            four_eyes: false,
            decision: decision.map(|(verdict, by)| Decision {
                verdict,
                by: by.into(),
                groups: Vec::new(),
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
        groups: Vec::new(),
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

/// The gate granted a write on a cached copy; by the time it spends it, another write changed
/// the request. Only a copy that grants exactly the same write may be spent instead.
#[test]
fn a_fresh_copy_is_spent_only_if_it_still_grants_the_same_write() {
    let mut granted = request(approved_by_bob(), issued());
    granted.metadata.uid = Some("req-uid".into());
    let recorded = |f: fn(&mut ApprovalRequest)| {
        let mut fresh = granted.clone();
        let status = fresh.status.as_mut().unwrap();
        status.phase = Some(ApprovalPhase::Approved);
        status.decided_at = Some(Time(at(50)));
        f(&mut fresh);
        fresh
    };
    type Case = (&'static str, fn(&mut ApprovalRequest), bool);
    let cases: [Case; 7] = [
        (
            "the request's reconciler recorded the decision",
            |_| {},
            true,
        ),
        (
            "its owner reference was dropped as it was decided",
            |r| r.metadata.owner_references = None,
            true,
        ),
        (
            "spent meanwhile",
            |r| {
                r.status.as_mut().unwrap().used = Some(ApprovalUse {
                    attempt_id: "other".into(),
                    started_at: Time(at(55)),
                    completed_at: None,
                    written: false,
                    preview_hash: None,
                });
            },
            false,
        ),
        (
            "deleted and made again under the name",
            |r| r.metadata.uid = Some("other".into()),
            false,
        ),
        (
            "another preview",
            |r| r.spec.preview_hash = "hash-2".into(),
            false,
        ),
        (
            "marked stale",
            |r| r.status.as_mut().unwrap().phase = Some(ApprovalPhase::Stale),
            false,
        ),
        (
            "another decider",
            |r| r.spec.decision.as_mut().unwrap().by = "mallory".into(),
            false,
        ),
    ];
    for (what, change, grants) in cases {
        assert_eq!(
            still_grants(&recorded(change), &granted, &EXPECTED, at(60)),
            grants,
            "{what}"
        );
    }
    let unrecorded = recorded(|r| r.status.as_mut().unwrap().decided_at = None);
    assert!(
        !still_grants(&unrecorded, &granted, &EXPECTED, at(100)),
        "first seen once it had expired"
    );
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
