//! Table tests of what is deleted and when.

// Tables of cases read best whole, however long.
#![allow(clippy::too_many_lines)]

use std::time::Duration;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, OwnerReference, Time};
use k8s_openapi::jiff::Timestamp;

use super::*;
use crate::api::approval::{ApprovalRequestSpec, ApprovalUse, Subject, SubjectKind};
use crate::api::common::LocalRef;

fn at(s: i64) -> Timestamp {
    Timestamp::from_second(1_790_000_000 + s).unwrap()
}

const HOUR: Duration = Duration::from_secs(3600);

#[test]
fn a_job_goes_once_finished_for_the_retention() {
    use JobPhase::*;
    let cases = [
        (Received, None, 10_000, Retention::Keep),
        (Queued, None, 10_000, Retention::Keep),
        (Running, None, 10_000, Retention::Keep),
        (Succeeded, Some(100), 100, Retention::LookAgainIn(HOUR)),
        (
            Failed,
            Some(100),
            3_000,
            Retention::LookAgainIn(Duration::from_secs(700)),
        ),
        (Rejected, Some(100), 3_700, Retention::Delete),
        (Succeeded, Some(100), 99_999, Retention::Delete),
        // No finishing time recorded: counted from receipt (at 0).
        (Rejected, None, 3_600, Retention::Delete),
        (
            Rejected,
            None,
            3_599,
            Retention::LookAgainIn(Duration::from_secs(1)),
        ),
    ];
    for (phase, finished, now, want) in cases {
        let got = agent_job(phase, finished.map(at), at(0), HOUR, at(now));
        assert_eq!(got, want, "{phase:?} finished {finished:?}, now {now}");
    }
}

#[test]
fn a_huge_retention_never_overflows() {
    assert!(matches!(
        after(at(0), Duration::MAX, at(1)),
        Retention::LookAgainIn(_)
    ));
}

fn request(name: &str, subject: &str, created: i64) -> ApprovalRequest {
    let mut r = ApprovalRequest::new(
        name,
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
            expires_at: Time(at(100_000)),
            escalate_to: vec![],
            proposed_by: Vec::new(),
            four_eyes: false,
            decision: None,
            review: None,
        },
    );
    r.metadata.creation_timestamp = Some(Time(at(created)));
    r.metadata.owner_references = Some(vec![OwnerReference {
        api_version: "ledgerops.dev/v1alpha1".into(),
        kind: "CategorizationPlan".into(),
        name: "p".into(),
        uid: subject.into(),
        controller: Some(true),
        block_owner_deletion: None,
    }]);
    r
}

fn status(phase: ApprovalPhase, settled_at: i64, used: Option<bool>) -> ApprovalRequestStatus {
    ApprovalRequestStatus {
        phase: Some(phase),
        conditions: vec![Condition {
            type_: "Ready".into(),
            status: if phase == ApprovalPhase::Pending {
                "False".into()
            } else {
                "True".into()
            },
            reason: format!("{phase:?}"),
            message: String::new(),
            last_transition_time: Time(at(settled_at)),
            observed_generation: None,
        }],
        used: used.map(|completed| ApprovalUse {
            attempt_id: "a".into(),
            started_at: Time(at(0)),
            completed_at: completed.then(|| Time(at(1))),
            written: true,
            preview_hash: None,
        }),
        ..ApprovalRequestStatus::default()
    }
}

#[test]
fn a_request_goes_only_when_settled_replaced_and_old_enough() {
    use ApprovalPhase::*;
    let old = request("old", "plan-1", 0);
    let newer = request("newer", "plan-1", 50);
    let other_subject = request("other", "plan-2", 50);
    let mut same_second = request("twin", "plan-1", 0);
    same_second.status = Some(status(Applied, 0, Some(true)));
    let mut open_twin = request("open-twin", "plan-1", 0);
    open_twin.status = Some(status(Pending, 0, None));
    let mut open_elsewhere = request("open-elsewhere", "plan-2", 0);
    open_elsewhere.status = Some(status(Pending, 0, None));
    let now = at(10 + 3600);
    let cases: Vec<(
        &str,
        ApprovalRequestStatus,
        Vec<&ApprovalRequest>,
        Retention,
    )> = vec![
        (
            "stale, replaced, settled an hour ago",
            status(Stale, 10, None),
            vec![&old, &newer],
            Retention::Delete,
        ),
        (
            "expired, replaced",
            status(Expired, 10, None),
            vec![&old, &newer],
            Retention::Delete,
        ),
        (
            "ignored, replaced",
            status(Ignored, 10, None),
            vec![&old, &newer],
            Retention::Delete,
        ),
        (
            "rejected, replaced",
            status(Rejected, 10, None),
            vec![&old, &newer],
            Retention::Delete,
        ),
        (
            "applied, replaced",
            status(Applied, 10, Some(true)),
            vec![&old, &newer],
            Retention::Delete,
        ),
        (
            "stale, replaced, settled just now",
            status(Stale, 3_600, None),
            vec![&old, &newer],
            Retention::LookAgainIn(Duration::from_secs(3_590)),
        ),
        (
            "pending",
            status(Pending, 10, None),
            vec![&old, &newer],
            Retention::Keep,
        ),
        (
            "approved, unspent",
            status(Approved, 10, None),
            vec![&old, &newer],
            Retention::Keep,
        ),
        (
            "stale but its write's outcome is not recorded",
            status(Stale, 10, Some(false)),
            vec![&old, &newer],
            Retention::Keep,
        ),
        (
            "not replaced: the subject's newest",
            status(Stale, 10, None),
            vec![&old],
            Retention::LookAgainIn(HOUR),
        ),
        (
            "only another subject's request is newer",
            status(Stale, 10, None),
            vec![&old, &other_subject],
            Retention::LookAgainIn(HOUR),
        ),
        (
            "a settled request of the same second is not newer",
            status(Stale, 10, None),
            vec![&old, &same_second],
            Retention::LookAgainIn(HOUR),
        ),
        (
            "an open request of the same second replaces it",
            status(Stale, 10, None),
            vec![&old, &open_twin],
            Retention::Delete,
        ),
        (
            "an open request of another subject does not",
            status(Stale, 10, None),
            vec![&old, &open_elsewhere],
            Retention::LookAgainIn(HOUR),
        ),
    ];
    for (name, status, namespace, want) in cases {
        assert_eq!(
            approval_request(&old, &status, &namespace, false, HOUR, now),
            want,
            "{name}"
        );
    }
}

#[test]
fn a_request_without_subject_or_creation_time_is_kept() {
    let mut orphan = request("orphan", "plan-1", 0);
    orphan.metadata.owner_references = None;
    let newer = request("newer", "plan-1", 50);
    let settled = status(ApprovalPhase::Stale, 0, None);
    assert_eq!(
        approval_request(
            &orphan,
            &settled,
            &[&orphan, &newer],
            true,
            HOUR,
            at(99_999)
        ),
        Retention::Keep
    );
    let mut undated = request("undated", "plan-1", 0);
    undated.metadata.creation_timestamp = None;
    assert_eq!(
        approval_request(
            &undated,
            &settled,
            &[&undated, &newer],
            true,
            HOUR,
            at(99_999)
        ),
        Retention::Keep
    );
}

#[test]
fn a_record_whose_subject_is_gone_goes_by_age_alone() {
    use ApprovalPhase::*;
    let mut record = request("record", "plan-1", 0);
    record.metadata.owner_references = None;
    // Released from its plan, as ledgerops leaves a decided request: issuedFor names the plan.
    record.status = Some(ApprovalRequestStatus {
        issued_for: Some(crate::api::approval::Issuance {
            subject_uid: "plan-1".into(),
            preview_hash: "h".into(),
            at: Time(at(0)),
        }),
        ..ApprovalRequestStatus::default()
    });
    let cases = [
        (
            "subject gone, not old enough",
            Rejected,
            true,
            3_000,
            Retention::LookAgainIn(Duration::from_secs(610)),
        ),
        (
            "subject gone, old enough",
            Rejected,
            true,
            3_610,
            Retention::Delete,
        ),
        (
            "subject gone, applied",
            Applied,
            true,
            99_999,
            Retention::Delete,
        ),
        (
            "subject still there, not replaced",
            Rejected,
            false,
            99_999,
            Retention::LookAgainIn(HOUR),
        ),
        (
            "subject gone, still waiting",
            Pending,
            true,
            99_999,
            Retention::Keep,
        ),
    ];
    for (what, phase, gone, now, want) in cases {
        let mut settled = status(phase, 10, None);
        settled.issued_for = record.status.as_ref().unwrap().issued_for.clone();
        assert_eq!(
            approval_request(&record, &settled, &[&record], gone, HOUR, at(now)),
            want,
            "{what}"
        );
    }
}
