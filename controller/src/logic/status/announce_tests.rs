//! Unit tests of `logic/status/announce.rs`.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;

use super::*;

fn ready(status: &str, reason: &str, message: &str) -> Vec<Condition> {
    vec![Condition {
        type_: "Ready".into(),
        status: status.into(),
        reason: reason.into(),
        message: message.into(),
        observed_generation: Some(1),
        last_transition_time: Time(Timestamp::UNIX_EPOCH),
    }]
}

#[test]
fn only_a_new_phase_is_announced_with_the_ready_condition() {
    use TransactionPhase::*;
    let c = ready("False", "AwaitingApproval", "asks bob");
    let cases = [
        (None, Some(AwaitingApproval), true),
        (Some(Pending), Some(AwaitingApproval), true),
        (Some(AwaitingApproval), Some(AwaitingApproval), false),
        (Some(Writing), None, false),
        (None, None, false),
    ];
    for (before, after, announced) in cases {
        let a = on_phase_change(before, after, &c, false);
        assert_eq!(a.is_some(), announced, "{before:?} → {after:?}");
    }
    let a = on_phase_change(Some(Pending), Some(AwaitingApproval), &c, true).unwrap();
    assert_eq!(
        a,
        Announcement {
            warning: true,
            reason: "AwaitingApproval".into(),
            note: "asks bob".into()
        }
    );
    assert_eq!(
        on_phase_change(Some(Pending), Some(Writing), &[], false),
        None,
        "no Ready condition, nothing to say"
    );
}

#[test]
fn phases_that_need_a_person_are_warnings() {
    use TransactionPhase as T;
    for (phase, warning) in [
        (T::Pending, false),
        (T::Converged, false),
        (T::WouldWrite, false),
        (T::AwaitingApproval, false),
        (T::Writing, false),
        (T::Diverged, true),
        (T::Blocked, true),
        (T::Invalid, true),
        (T::Interrupted, true),
    ] {
        assert_eq!(transaction_warning(Some(phase)), warning, "{phase:?}");
    }
    assert!(!transaction_warning(None));
    use PlanPhase as P;
    for (phase, warning) in [
        (P::Pending, false),
        (P::Invalid, true),
        (P::NothingToDo, false),
        (P::AwaitingApproval, false),
        (P::ReadOnly, false),
        (P::Applying, false),
        (P::Applied, false),
        (P::PartiallyApplied, true),
        (P::Rejected, true),
        (P::Expired, true),
        (P::Blocked, true),
        (P::Failed, true),
    ] {
        assert_eq!(plan_warning(Some(phase)), warning, "{phase:?}");
    }
    assert!(!plan_warning(None));
}
