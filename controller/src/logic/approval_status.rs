//! An ApprovalRequest's state: decided, waiting, expired (with one escalation), or stale.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;

use super::conditions::{self, Observed};
use crate::api::approval::{ApprovalPhase, ApprovalRequestSpec, ApprovalRequestStatus, Verdict};

/// The next status, and the escalation to announce when the request has just expired.
pub fn next(
    spec: &ApprovalRequestSpec,
    previous: &ApprovalRequestStatus,
    generation: Option<i64>,
    now: Timestamp,
) -> (ApprovalRequestStatus, Option<String>) {
    let mut status = previous.clone();
    let mut escalation = None;
    let (phase, ready, reason, message) = match (&spec.decision, previous.phase) {
        (Some(d), _) => {
            status.decided_at = previous.decided_at.clone().or(Some(Time(now)));
            let phase = if d.verdict == Verdict::Approve {
                ApprovalPhase::Approved
            } else {
                ApprovalPhase::Rejected
            };
            let how = if phase == ApprovalPhase::Approved {
                "approved"
            } else {
                "rejected"
            };
            (
                phase,
                true,
                if phase == ApprovalPhase::Approved {
                    "Approved"
                } else {
                    "Rejected"
                },
                format!("{} {how} it", d.by),
            )
        }
        (None, Some(ApprovalPhase::Stale)) => (
            ApprovalPhase::Stale,
            true,
            "Stale",
            "The plan changed between the preview and the answer: a new request follows".into(),
        ),
        (None, _) if spec.expires_at.0 <= now => {
            if previous.escalated_at.is_none() {
                status.escalated_at = Some(Time(now));
                let whom = if spec.escalate_to.is_empty() {
                    "the Budget's owners".to_owned()
                } else {
                    spec.escalate_to.join(", ")
                };
                escalation = Some(format!(
                    "No decision before {}: nothing was applied. Tell {whom}.",
                    spec.expires_at.0
                ));
            }
            (
                ApprovalPhase::Expired,
                true,
                "Expired",
                format!(
                    "Nobody decided before {}: nothing is applied",
                    spec.expires_at.0
                ),
            )
        }
        (None, _) => (
            ApprovalPhase::Pending,
            false,
            "Pending",
            format!(
                "Waiting for a person to decide before {}",
                spec.expires_at.0
            ),
        ),
    };
    status.conditions = conditions::set(
        &previous.conditions,
        Observed::new("Ready", ready, reason, message),
        generation,
        now,
    );
    status.phase = Some(phase);
    status.observed_generation = generation;
    (status, escalation)
}

/// The status that marks a request stale: its preview no longer holds.
pub fn stale(
    previous: &ApprovalRequestStatus,
    generation: Option<i64>,
    now: Timestamp,
) -> ApprovalRequestStatus {
    let mut status = previous.clone();
    let message = "The plan changed between the preview and the answer: a new request follows";
    status.conditions = conditions::set(
        &previous.conditions,
        Observed::new("Ready", true, "Stale", message),
        generation,
        now,
    );
    status.phase = Some(ApprovalPhase::Stale);
    status
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::approval::{Decision, Subject, SubjectKind};
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
            expires_at: Time(at(100)),
            escalate_to: vec!["finance-manager".into()],
            decision,
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
            comment: None,
        };
        let (s, _) = next(
            &spec(Some(approve)),
            &ApprovalRequestStatus::default(),
            Some(2),
            at(5),
        );
        assert_eq!(
            (s.phase, s.decided_at.clone()),
            (Some(ApprovalPhase::Approved), Some(Time(at(5))))
        );
        let (later, _) = next(
            &spec(s.phase.map(|_| Decision {
                verdict: Verdict::Approve,
                by: "bob".into(),
                comment: None,
            })),
            &s,
            Some(2),
            at(50),
        );
        assert_eq!(later.decided_at, Some(Time(at(5))));
        let reject = Decision {
            verdict: Verdict::Reject,
            by: "alice".into(),
            comment: Some("no".into()),
        };
        assert_eq!(
            next(
                &spec(Some(reject)),
                &ApprovalRequestStatus::default(),
                Some(2),
                at(5)
            )
            .0
            .phase,
            Some(ApprovalPhase::Rejected)
        );
    }

    #[test]
    fn stale_holds_until_a_decision() {
        let s = stale(&ApprovalRequestStatus::default(), Some(1), at(0));
        assert_eq!(
            next(&spec(None), &s, Some(1), at(500)).0.phase,
            Some(ApprovalPhase::Stale)
        );
    }
}
