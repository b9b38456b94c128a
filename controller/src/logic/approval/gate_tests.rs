//! Unit tests of `logic/approval/gate.rs`.

use super::*;

fn at(s: i64) -> Timestamp {
    Timestamp::from_second(1_790_000_000 + s).unwrap()
}

fn rejected(comment: Option<&str>) -> Hold {
    Hold::Rejected {
        request: "groceries-abc".into(),
        by: "carol".into(),
        comment: comment.map(str::to_owned),
        decided_at: Some(Time(at(5))),
        preview_hash: "hash-1".into(),
    }
}

fn blocked(reason: &'static str, message: &str) -> Verdict {
    Verdict::Blocked {
        reason,
        message: message.into(),
    }
}

fn plan_blocked(phase: PlanPhase, reason: &'static str, message: &str) -> PlanVerdict {
    PlanVerdict::Blocked {
        phase,
        reason,
        message: message.into(),
    }
}

const ASKING: &str = "Waiting for a person to approve ApprovalRequest groceries-abc (a new payee): kubectl patch approvalrequest groceries-abc --type=merge -p '{\"spec\":{\"decision\":{\"verdict\":\"Approve\",\"by\":\"<your user name>\"}}}'";
const REJECTED: &str =
    "carol rejected ApprovalRequest groceries-abc: a gift. Change the spec to ask again.";
const REJECTED_SILENTLY: &str =
    "carol rejected ApprovalRequest groceries-abc: no reason given. Change the spec to ask again.";
const EXPIRED: &str = "Nobody approved ApprovalRequest groceries-abc before it expired at 2026-09-21T14:15:00Z; nothing was written. Change the spec to ask again.";
const POLICY: &str = "The Budget's policy blocks this write: amount over 500.00.";
const NO_ADMISSION: &str = "ValidatingAdmissionPolicy ledgerops-approval is missing";
const TAKEN: &str = "Every name ledgerops would give the ApprovalRequest for groceries is taken by an object it did not issue: delete the ApprovalRequests named groceries-hash1-* that you created";

#[test]
fn each_hold_in_a_transaction_and_a_plan() {
    let cases: Vec<(Hold, Option<&str>, Verdict, PlanVerdict)> = vec![
        (
            Hold::AwaitingApproval {
                request: "groceries-abc".into(),
                why: "a new payee".into(),
            },
            Some("groceries-abc"),
            Verdict::AwaitingApproval(ASKING.into()),
            PlanVerdict::AwaitingApproval(ASKING.into()),
        ),
        (
            rejected(Some("a gift")),
            Some("groceries-abc"),
            blocked("Rejected", REJECTED),
            plan_blocked(PlanPhase::Rejected, "Rejected", REJECTED),
        ),
        (
            rejected(None),
            Some("groceries-abc"),
            blocked("Rejected", REJECTED_SILENTLY),
            plan_blocked(PlanPhase::Rejected, "Rejected", REJECTED_SILENTLY),
        ),
        (
            Hold::Expired {
                request: "groceries-abc".into(),
                expires_at: at(100),
            },
            Some("groceries-abc"),
            blocked("Expired", EXPIRED),
            plan_blocked(PlanPhase::Expired, "Expired", EXPIRED),
        ),
        (
            Hold::PolicyBlocked {
                why: "amount over 500.00".into(),
            },
            None,
            blocked("Policy", POLICY),
            plan_blocked(PlanPhase::Blocked, "Policy", POLICY),
        ),
        (
            Hold::AdmissionPolicyMissing(NO_ADMISSION.into()),
            None,
            blocked("AdmissionPolicyMissing", NO_ADMISSION),
            plan_blocked(PlanPhase::Blocked, "AdmissionPolicyMissing", NO_ADMISSION),
        ),
        (
            Hold::NameTaken {
                subject: "groceries".into(),
                base: "groceries-hash1".into(),
            },
            None,
            blocked("ApprovalRequestNameTaken", TAKEN),
            plan_blocked(PlanPhase::Blocked, "ApprovalRequestNameTaken", TAKEN),
        ),
    ];
    for (hold, request, transaction, plan) in cases {
        assert_eq!(hold.request(), request, "{hold:?}");
        assert_eq!(transaction_verdict(&hold), transaction, "{hold:?}");
        assert_eq!(plan_verdict(&hold), plan, "{hold:?}");
    }
}

#[test]
fn only_a_rejection_is_kept_as_a_decision() {
    let record = DecisionRecord {
        verdict: "Reject".into(),
        by: "carol".into(),
        comment: Some("a gift".into()),
        request: Some("groceries-abc".into()),
        decided_at: Some(Time(at(5))),
        preview_hash: "hash-1".into(),
        edited_hash: None,
        edits: None,
    };
    let cases: Vec<(Hold, Option<DecisionRecord>)> = vec![
        (rejected(Some("a gift")), Some(record)),
        (
            Hold::AwaitingApproval {
                request: "groceries-abc".into(),
                why: "a new payee".into(),
            },
            None,
        ),
        (
            Hold::Expired {
                request: "groceries-abc".into(),
                expires_at: at(100),
            },
            None,
        ),
        (Hold::PolicyBlocked { why: "no".into() }, None),
    ];
    for (hold, want) in cases {
        assert_eq!(hold.rejection(), want, "{hold:?}");
    }
}

#[test]
fn a_write_attempt_is_named_by_its_subject_and_start() {
    let cases = [
        ("uid-1", at(0), "uid-1-1790000000000"),
        (
            "uid-1",
            Timestamp::from_millisecond(1_790_000_000_123).unwrap(),
            "uid-1-1790000000123",
        ),
        ("local", at(1), "local-1790000001000"),
    ];
    for (uid, now, want) in cases {
        assert_eq!(attempt_id(uid, now), want);
    }
}
