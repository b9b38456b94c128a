//! Unit tests of `logic/plan/status.rs`.

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
            PlanVerdict::Unsynced("not synced since the start".into()),
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

#[test]
fn before_the_first_sync_after_a_restart_every_conclusion_stands() {
    let concluded = [
        PlanVerdict::AwaitingApproval("ask".into()),
        PlanVerdict::Blocked {
            phase: PlanPhase::Expired,
            reason: "Expired",
            message: "nobody answered".into(),
        },
        PlanVerdict::Applied("op-1".into()),
        PlanVerdict::Invalid("Transaction tx-1 is assigned twice".into()),
    ];
    for verdict in concluded {
        let mut s = CategorizationPlanStatus::default();
        apply(&mut s, &verdict, Some(4), at(0));
        let before = s.clone();
        apply(
            &mut s,
            &PlanVerdict::Unsynced("waiting".into()),
            Some(4),
            at(9),
        );
        assert_eq!(s, before, "{verdict:?}");
    }
}
