//! A CategorizationPlan's phase and conditions from what its reconcile concluded.

use k8s_openapi::jiff::Timestamp;

use crate::api::common::DecisionRecord;
use crate::api::plan::{CategorizationPlanStatus, PlanPhase};
use crate::logic::status::conditions::{
    self, AWAITING_APPROVAL, BLOCKED, INTERRUPTED, Observed, READY, VALID,
};
use crate::logic::status::kstatus;

/// What a reconcile concluded about a plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PlanVerdict {
    /// The Budget has not synced yet.
    Pending(String),
    /// The plan cannot be applied as written: every problem, each naming its id.
    Invalid(String),
    /// Every assignment already holds.
    NothingToDo,
    /// Waiting for a person on an ApprovalRequest.
    AwaitingApproval(String),
    /// A policy forbids it, or a person rejected it, or nobody answered in time.
    Blocked {
        phase: PlanPhase,
        reason: &'static str,
        message: String,
    },
    /// Approved, but the Budget does not allow writes.
    ReadOnly(String),
    /// The write is in flight, or failed and is retried.
    Applying { interrupted: Option<String> },
    /// Written and journaled.
    Applied(String),
    /// Some changes landed, then the write stopped for good; journaled.
    PartiallyApplied(String),
    /// YNAB did not end up as the plan said.
    Failed(String),
}

/// A person's rejection of exactly the preview `hash`, as the plan's status keeps it: it stands
/// even after its ApprovalRequest is gone, until the spec or YNAB changes the preview.
pub fn standing_rejection(decision: Option<&DecisionRecord>, hash: &str) -> Option<PlanVerdict> {
    let rejected = decision.filter(|d| d.verdict == "Reject" && d.preview_hash == hash)?;
    let request = rejected
        .request
        .as_ref()
        .map(|r| format!(" (ApprovalRequest {r})"))
        .unwrap_or_default();
    Some(PlanVerdict::Blocked {
        phase: PlanPhase::Rejected,
        reason: "Rejected",
        message: format!(
            "{} rejected this preview{request}: {}. Change the spec to ask again.",
            rejected.by,
            rejected.comment.as_deref().unwrap_or("no reason given")
        ),
    })
}

/// Whether the plan's write is over for its current spec: applied (wholly or partly), or failed
/// for a reason a retry cannot fix, at this generation. An edit of the spec afterwards is previewed anew; what already holds is skipped.
pub fn settled(status: &CategorizationPlanStatus, generation: Option<i64>) -> bool {
    let finished = match status.phase {
        // Plans applied before finishedGeneration existed count as applied at their generation.
        Some(PlanPhase::Applied) => status.finished_generation.or(status.observed_generation),
        Some(PlanPhase::PartiallyApplied | PlanPhase::Failed) => status.finished_generation,
        _ => None,
    };
    finished.is_some() && finished == generation
}

/// Sets phase and conditions on `status`.
pub fn apply(
    status: &mut CategorizationPlanStatus,
    verdict: &PlanVerdict,
    generation: Option<i64>,
    now: Timestamp,
) {
    let (phase, ready, reason, message): (PlanPhase, bool, &'static str, String) = match verdict {
        PlanVerdict::Pending(m) => (PlanPhase::Pending, false, "Pending", m.clone()),
        PlanVerdict::Invalid(m) => (PlanPhase::Invalid, false, "Invalid", m.clone()),
        PlanVerdict::NothingToDo => (
            PlanPhase::NothingToDo,
            true,
            "NothingToDo",
            "Every assignment already holds in YNAB".into(),
        ),
        PlanVerdict::AwaitingApproval(m) => (
            PlanPhase::AwaitingApproval,
            false,
            "AwaitingApproval",
            m.clone(),
        ),
        PlanVerdict::Blocked {
            phase,
            reason,
            message,
        } => (*phase, false, reason, message.clone()),
        PlanVerdict::ReadOnly(m) => (PlanPhase::ReadOnly, false, "WritesDisabled", m.clone()),
        PlanVerdict::Applying { interrupted: None } => (
            PlanPhase::Applying,
            false,
            "Applying",
            "Writing the approved changes to YNAB".into(),
        ),
        PlanVerdict::Applying {
            interrupted: Some(m),
        } => (PlanPhase::Applying, false, "Interrupted", m.clone()),
        PlanVerdict::Applied(m) => (PlanPhase::Applied, true, "Applied", m.clone()),
        PlanVerdict::PartiallyApplied(m) => (
            PlanPhase::PartiallyApplied,
            false,
            "PartiallyApplied",
            m.clone(),
        ),
        PlanVerdict::Failed(m) => (PlanPhase::Failed, false, "Failed", m.clone()),
    };
    let valid = match verdict {
        PlanVerdict::Invalid(m) => Observed::new(VALID, false, "Invalid", m.clone()),
        _ => Observed::new(VALID, true, "Valid", "Every assignment can be applied"),
    };
    let mut c = conditions::set(
        &status.conditions,
        Observed::new(READY, ready, reason, message.clone()),
        generation,
        now,
    );
    c = conditions::set(&c, valid, generation, now);
    let blocked =
        matches!(verdict, PlanVerdict::Blocked { .. }).then_some((reason, message.as_str()));
    let flags = [
        (
            AWAITING_APPROVAL,
            matches!(verdict, PlanVerdict::AwaitingApproval(_))
                .then_some(("ApprovalRequested", message.as_str())),
        ),
        (BLOCKED, blocked),
        (
            INTERRUPTED,
            matches!(
                verdict,
                PlanVerdict::Applying {
                    interrupted: Some(_)
                }
            )
            .then_some(("OutcomeUnknown", message.as_str())),
        ),
    ];
    let c = conditions::set_flags(&c, &flags, generation, now);
    status.conditions = kstatus::summarize(&c, kstatus::plan(phase), generation, now);
    status.phase = Some(phase);
    status.observed_generation = generation;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rejection_stands_for_its_own_preview_only() {
        let record = |verdict: &str| DecisionRecord {
            verdict: verdict.into(),
            by: "bob".into(),
            comment: Some("the train was a gift".into()),
            request: Some("september-abc".into()),
            decided_at: None,
            preview_hash: "h1".into(),
            edited_hash: None,
            edits: None,
        };
        let stands = standing_rejection(Some(&record("Reject")), "h1");
        assert!(matches!(
            &stands,
            Some(PlanVerdict::Blocked { phase: PlanPhase::Rejected, message, .. })
                if message.contains("bob") && message.contains("september-abc") && message.contains("gift")
        ));
        assert_eq!(standing_rejection(Some(&record("Reject")), "h2"), None);
        assert_eq!(standing_rejection(Some(&record("Approve")), "h1"), None);
        assert_eq!(standing_rejection(None, "h1"), None);
    }

    #[test]
    fn a_plan_is_settled_only_for_the_generation_it_was_applied_at() {
        let status = |phase, applied: Option<i64>, observed| CategorizationPlanStatus {
            phase: Some(phase),
            finished_generation: applied,
            observed_generation: observed,
            ..Default::default()
        };
        let cases = [
            (status(PlanPhase::Applied, Some(2), Some(2)), Some(2), true),
            (
                status(PlanPhase::PartiallyApplied, Some(2), Some(2)),
                Some(2),
                true,
            ),
            // Edited after it was applied: previewed again.
            (status(PlanPhase::Applied, Some(2), Some(3)), Some(3), false),
            (status(PlanPhase::Applied, Some(2), Some(2)), Some(3), false),
            // Applied by a version that did not record the generation.
            (status(PlanPhase::Applied, None, Some(2)), Some(2), true),
            (
                status(PlanPhase::Applying, Some(2), Some(2)),
                Some(2),
                false,
            ),
            (status(PlanPhase::Failed, Some(2), Some(2)), Some(2), true),
            // A failure recorded before finishedGeneration existed is looked at again.
            (status(PlanPhase::Failed, None, Some(2)), Some(2), false),
        ];
        for (s, generation, want) in cases {
            assert_eq!(settled(&s, generation), want, "{s:?} at {generation:?}");
        }
    }

    fn at(s: i64) -> Timestamp {
        Timestamp::from_second(1_790_000_000 + s).unwrap()
    }

    #[test]
    fn phases_and_conditions_follow_the_verdict() {
        let cases = [
            (
                PlanVerdict::Pending("p".into()),
                PlanPhase::Pending,
                "False",
                None,
            ),
            (
                PlanVerdict::Invalid("Transaction tx-1 is assigned twice".into()),
                PlanPhase::Invalid,
                "False",
                None,
            ),
            (
                PlanVerdict::NothingToDo,
                PlanPhase::NothingToDo,
                "True",
                None,
            ),
            (
                PlanVerdict::AwaitingApproval("ask".into()),
                PlanPhase::AwaitingApproval,
                "False",
                Some(AWAITING_APPROVAL),
            ),
            (
                PlanVerdict::Blocked {
                    phase: PlanPhase::Rejected,
                    reason: "Rejected",
                    message: "no".into(),
                },
                PlanPhase::Rejected,
                "False",
                Some(BLOCKED),
            ),
            (
                PlanVerdict::ReadOnly("ro".into()),
                PlanPhase::ReadOnly,
                "False",
                None,
            ),
            (
                PlanVerdict::Applying {
                    interrupted: Some("lost".into()),
                },
                PlanPhase::Applying,
                "False",
                Some(INTERRUPTED),
            ),
            (
                PlanVerdict::Applied("op-1".into()),
                PlanPhase::Applied,
                "True",
                None,
            ),
            (
                PlanVerdict::PartiallyApplied("2 of 5".into()),
                PlanPhase::PartiallyApplied,
                "False",
                None,
            ),
            (
                PlanVerdict::Failed("f".into()),
                PlanPhase::Failed,
                "False",
                None,
            ),
        ];
        for (verdict, phase, ready, flag) in cases {
            let mut s = CategorizationPlanStatus::default();
            apply(&mut s, &verdict, Some(4), at(0));
            assert_eq!(s.phase, Some(phase), "{verdict:?}");
            assert_eq!(
                conditions::get(&s.conditions, READY).unwrap().status,
                ready,
                "{verdict:?}"
            );
            let valid = conditions::get(&s.conditions, VALID).unwrap();
            assert_eq!(
                valid.status == "False",
                matches!(verdict, PlanVerdict::Invalid(_))
            );
            for type_ in [AWAITING_APPROVAL, BLOCKED, INTERRUPTED] {
                assert_eq!(
                    conditions::get(&s.conditions, type_).is_some(),
                    flag == Some(type_),
                    "{verdict:?} {type_}"
                );
            }
        }
    }
}
