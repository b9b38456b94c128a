//! Unit tests of `logic/approval/request.rs`.

use k8s_openapi::jiff::Timestamp;

use super::*;
use crate::api::approval::{ApprovalRequestStatus, Decision, Verdict};
use crate::api::budget::BudgetSpec;
use crate::api::common::Edits;

fn at(secs: i64) -> Timestamp {
    Timestamp::from_second(secs).unwrap()
}

fn budget() -> Budget {
    let mut b = Budget::new(
        "household",
        serde_json::from_value::<BudgetSpec>(serde_json::json!({
            "planId": "plan-1",
            "tokenSecretRef": {"name": "t"},
            "approval": {"expiry": "2h", "escalateTo": ["finance"]}
        }))
        .unwrap(),
    );
    b.metadata.namespace = Some("ns".into());
    b
}

fn draft(budget: &Budget) -> Draft<'_> {
    Draft {
        budget,
        kind: SubjectKind::CategorizationPlan,
        subject: "september",
        subject_uid: "uid-1",
        lineage: vec!["alice".to_owned()],
        owner: None,
        hash: "0123456789abcdef",
        summary: "3 changes",
        reason: "above autoApproveBelow",
        changes: &[],
        review: None,
    }
}

#[test]
fn names_start_with_the_subject_and_the_hash_then_are_numbered() {
    let names = names("september", "0123456789abcdef");
    assert_eq!(names.len(), 8);
    assert_eq!(names[0], "september-0123456789");
    assert_eq!(names[7], "september-0123456789-7");
    assert_eq!(
        base_name(&"x".repeat(300), "ab"),
        format!("{}-ab", "x".repeat(200))
    );
}

#[test]
fn a_new_request_is_bound_to_the_subject_the_hash_and_the_expiry() {
    let b = budget();
    let r = new_request(&draft(&b), "september-0123456789", at(1_000));
    assert_eq!(r.spec.preview_hash, "0123456789abcdef");
    assert_eq!(r.spec.proposed_by, vec!["alice".to_owned()]);
    assert_eq!(r.spec.expires_at.0, at(1_000 + 7_200));
    assert_eq!(r.spec.escalate_to, vec!["finance".to_owned()]);
    assert_eq!(
        r.labels().get(SUBJECT_UID).map(String::as_str),
        Some("uid-1")
    );
    assert!(r.spec.decision.is_none());
}

#[test]
fn a_found_name_is_followed_only_when_it_is_ours_for_this_preview() {
    let cases = [
        (
            Authority::NotIssued("someone else's".into()),
            Taken::PassOver,
        ),
        (Authority::Spent, Taken::PassOver),
        (Authority::Stale, Taken::PassOver),
        (Authority::Unissued, Taken::Issue),
        (Authority::Pending, Taken::Follow),
        (Authority::Expired, Taken::Follow),
        (
            Authority::Rejected {
                by: "bob".into(),
                comment: None,
            },
            Taken::Follow,
        ),
    ];
    for (judged, want) in cases {
        assert_eq!(taken(&judged), want, "{judged:?}");
    }
}

fn decided(edits: Option<Edits>) -> ApprovalRequest {
    let b = budget();
    let mut r = new_request(&draft(&b), "september-0123456789", at(1_000));
    r.spec.decision = Some(Decision {
        verdict: Verdict::Approve,
        by: "bob".into(),
        groups: Vec::new(),
        comment: Some("fine".into()),
        edits,
    });
    r
}

#[test]
fn an_approval_record_names_the_decider_and_the_request() {
    let judged = Authority::Approved {
        by: "bob".into(),
        comment: None,
        decided_at: at(2_000),
    };
    let record = approval_record(&decided(None), &judged);
    assert_eq!(record.verdict, "Approve");
    assert_eq!(record.by, "bob");
    assert_eq!(record.request.as_deref(), Some("september-0123456789"));
    assert_eq!(record.decided_at, Some(Time(at(2_000))));
    let policy = policy_record("small", "h", at(5));
    assert_eq!(
        (policy.verdict.as_str(), policy.by.as_str()),
        ("Policy", "policy")
    );
}

#[test]
fn edits_are_refused_on_anything_but_a_plan() {
    let edits = Edits {
        drop: vec!["tx-1".into()],
        set: vec![],
    };
    let r = decided(Some(edits));
    assert!(misplaced_edits(&r, SubjectKind::CategorizationPlan).is_none());
    let why = misplaced_edits(&r, SubjectKind::Transaction).unwrap();
    assert!(why.contains("september-0123456789"), "{why}");
    assert!(misplaced_edits(&decided(None), SubjectKind::Transaction).is_none());
}

#[test]
fn a_rejection_holds_with_its_decider_and_anything_else_expired() {
    let r = decided(None);
    let rejected = refusal(
        &r,
        &Authority::Rejected {
            by: "bob".into(),
            comment: None,
        },
    );
    assert!(matches!(rejected, Hold::Rejected { ref by, .. } if by == "bob"));
    assert!(matches!(
        refusal(&r, &Authority::Expired),
        Hold::Expired { .. }
    ));
}

#[test]
fn a_completed_use_keeps_when_it_started_and_its_preview() {
    let mut r = decided(None);
    r.status = Some(ApprovalRequestStatus {
        used: Some(spent("attempt-1", "hash-a", at(10))),
        ..Default::default()
    });
    let done = completed(&r, "attempt-1", at(20), true, None);
    assert_eq!(done.started_at, Time(at(10)));
    assert_eq!(done.completed_at, Some(Time(at(20))));
    assert_eq!(done.preview_hash.as_deref(), Some("hash-a"));
    assert!(done.written);
    let fresh = completed(
        &decided(None),
        "attempt-2",
        at(30),
        false,
        Some("hash-b".into()),
    );
    assert_eq!(fresh.started_at, Time(at(30)));
    assert_eq!(fresh.preview_hash.as_deref(), Some("hash-b"));
}

#[test]
fn the_gate_re_applies_every_field_it_owns() {
    let mut r = decided(None);
    r.status = Some(ApprovalRequestStatus {
        used: Some(spent("attempt-1", "hash-a", at(10))),
        ..Default::default()
    });
    let fields = gate_fields(&r, serde_json::json!({"issuedFor": {"x": 1}}));
    assert_eq!(fields["issuedFor"], serde_json::json!({"x": 1}));
    assert_eq!(fields["used"]["attemptId"], "attempt-1");
}
