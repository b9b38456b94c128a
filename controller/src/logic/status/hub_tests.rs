//! Unit tests of `logic/status/hub.rs`.

use serde_json::json;

use super::*;

fn involved(kind: &str, name: &str) -> Involved {
    Involved {
        api_version: "ledgerops.dev/v1alpha1".into(),
        kind: kind.into(),
        namespace: "household".into(),
        name: name.into(),
        uid: "u-1".into(),
        resource_version: "42".into(),
    }
}

#[test]
fn warnings_are_errors_except_a_persons_decision() {
    let cases = [
        (true, "Diverged", Severity::Error),
        (true, "Failed", Severity::Error),
        (true, "PartiallyApplied", Severity::Error),
        (true, "RateLimited", Severity::Error),
        (true, "AutopilotStopped", Severity::Error),
        (true, "Escalated", Severity::Error),
        (true, "Rejected", Severity::Info),
        (false, "AwaitingApproval", Severity::Info),
        (false, "Written", Severity::Info),
        (false, "Approved", Severity::Info),
    ];
    for (warning, reason, want) in cases {
        assert_eq!(severity(warning, reason), want, "{warning} {reason}");
    }
}

#[test]
fn the_event_names_its_budget_and_request_under_the_groups_prefix() {
    let plan =
        json!({"spec": {"budgetRef": {"name": "home"}}, "status": {"approvalRequest": "p1-abc"}});
    let now: Timestamp = "2026-12-06T08:00:00.123456Z".parse().unwrap();
    let e = event(
        Published {
            involved: involved("CategorizationPlan", "p1"),
            warning: false,
            reason: "AwaitingApproval",
            note: "asks bob",
            object: &plan,
            instance: "ledgerops-0",
        },
        now,
    );
    assert_eq!(
        serde_json::to_value(&e).unwrap(),
        json!({
            "involvedObject": {"apiVersion": "ledgerops.dev/v1alpha1", "kind": "CategorizationPlan",
                "namespace": "household", "name": "p1", "uid": "u-1", "resourceVersion": "42"},
            "severity": "info",
            "timestamp": "2026-12-06T08:00:00Z",
            "message": "asks bob",
            "reason": "AwaitingApproval",
            "metadata": {"ledgerops.dev/budget": "household/home", "ledgerops.dev/approvalRequest": "p1-abc"},
            "reportingController": "ledgerops",
            "reportingInstance": "ledgerops-0",
        })
    );
}

#[test]
fn a_budget_and_a_request_name_themselves_and_what_has_neither_names_nothing() {
    let object = json!({"spec": {"budgetRef": {"name": "home"}}});
    let meta = |kind: &str, name: &str, object: &Value| {
        metadata(&involved(kind, name), object)
            .into_iter()
            .collect::<Vec<_>>()
    };
    let key = |k: &str| format!("ledgerops.dev/{k}");
    assert_eq!(
        meta("Budget", "home", &json!({"spec": {}})),
        [(key("budget"), "household/home".into())]
    );
    assert_eq!(
        meta("ApprovalRequest", "r1", &object),
        [
            (key("approvalRequest"), "r1".into()),
            (key("budget"), "household/home".into())
        ]
    );
    assert_eq!(
        meta("Transaction", "t1", &object),
        [(key("budget"), "household/home".into())]
    );
    assert_eq!(
        meta(
            "ConfigRepo",
            "repo",
            &json!({"spec": {"budgetRef": {"name": ""}}})
        ),
        []
    );
}

#[test]
fn only_a_hub_that_is_down_is_asked_again() {
    let cases = [
        (Some(202), Delivery::Delivered),
        (Some(200), Delivery::Delivered),
        (Some(429), Delivery::Delivered),
        (Some(400), Delivery::Refused),
        (Some(404), Delivery::Refused),
        (Some(408), Delivery::Retry),
        (Some(500), Delivery::Retry),
        (Some(503), Delivery::Retry),
        (None, Delivery::Retry),
    ];
    for (status, want) in cases {
        assert_eq!(delivery(status), want, "{status:?}");
    }
}

#[test]
fn retries_wait_a_random_share_of_a_doubling_ceiling() {
    let ms = Duration::from_millis;
    // A draw of the ceiling itself waits it all: 0.5 s, 1 s, 2 s, … up to 30 s.
    assert_eq!(retry_delay(1, 500), ms(500));
    assert_eq!(retry_delay(2, 1000), ms(1000));
    assert_eq!(retry_delay(3, 2000), ms(2000));
    assert_eq!(retry_delay(10, 30_001), ms(0));
    assert_eq!(retry_delay(10, 30_000), ms(30_000));
    assert_eq!(retry_delay(u32::MAX, 30_000), ms(30_000));
    assert_eq!(retry_delay(1, 0), ms(0));
    for draw in [0, 1, 7, 499, 500, 501, u64::MAX] {
        for attempt in 0..=ATTEMPTS + 20 {
            assert!(retry_delay(attempt, draw) <= ms(30_000), "{attempt} {draw}");
        }
        assert!(retry_delay(1, draw) <= ms(500));
    }
}
