//! Unit tests of `logic/job/report.rs`.

use super::*;
use crate::api::approval::{ApprovalRequestSpec, Decision, Subject, SubjectKind, Verdict};
use crate::api::common::LocalRef;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};

fn apr(name: &str, secs: i64, decided: bool) -> ApprovalRequest {
    let mut r = ApprovalRequest::new(
        name,
        ApprovalRequestSpec {
            budget_ref: LocalRef {
                name: "home".into(),
            },
            subject: Subject {
                kind: SubjectKind::CategorizationPlan,
                name: "plan|x".into(),
            },
            preview_hash: "h".into(),
            summary: "2 changes\n| injected".into(),
            reason: "policy".into(),
            changes: vec![],
            change_count: 0,
            expires_at: Time(Timestamp::from_second(1_790_100_000).unwrap()),
            escalate_to: vec![],
            proposed_by: Vec::new(),
            four_eyes: false,
            decision: decided.then(|| Decision {
                verdict: Verdict::Approve,
                by: "alice".into(),
                groups: Vec::new(),
                comment: None,
                edits: None,
            }),
            review: None,
        },
    );
    r.metadata = ObjectMeta {
        name: Some(name.into()),
        creation_timestamp: Some(Time(Timestamp::from_second(1_790_000_000 + secs).unwrap())),
        ..ObjectMeta::default()
    };
    r
}

#[test]
fn waiting_approvals_oldest_first_and_cells_are_sanitised() {
    let report = status_report(
        &[
            apr("newer", 50, false),
            apr("decided", 0, true),
            apr("older", 10, false),
        ],
        &[],
        &[],
    );
    assert!(report.contains("### Waiting approvals (2)"), "{report}");
    let older = report.find("`older`").unwrap();
    let newer = report.find("`newer`").unwrap();
    assert!(older < newer, "{report}");
    assert!(!report.contains("`decided`"));
    assert!(report.contains("2 changes \\| injected"), "{report}");
    assert!(
        report.contains("| CategorizationPlan `plan\\|x` |"),
        "{report}"
    );
    assert!(report.contains("### Diverged or Blocked Transactions (0)"));
    assert!(report.contains("### Budgets (0)"));
}
