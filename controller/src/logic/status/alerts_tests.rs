//! Unit tests of `logic/status/alerts.rs`.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use serde_json::json;

use super::*;
use crate::api::approval::ApprovalPhase;
use crate::api::autopilot::AutopilotStatus;

fn at(s: i64) -> Timestamp {
    // 2026-09-21T00:00:00Z plus `s` seconds.
    Timestamp::from_second(1_790_000_000 - 1_790_000_000 % 86_400 + s).unwrap()
}

fn budget(name: &str, ready: &str) -> Budget {
    let mut b: Budget = serde_json::from_value(json!({
        "apiVersion": "ledgerops.dev/v1alpha1", "kind": "Budget",
        "metadata": {"name": name, "namespace": "home"},
        "spec": {"planId": "last-used", "tokenSecretRef": {"name": "t", "key": "token"}},
    }))
    .unwrap();
    b.status = Some(Default::default());
    b.status.as_mut().unwrap().conditions = vec![Condition {
        type_: "Ready".into(),
        status: ready.into(),
        reason: "Synced".into(),
        message: String::new(),
        last_transition_time: Time(at(0)),
        observed_generation: None,
    }];
    b
}

/// A request for Budget `budget` created at `created`, expiring at `expires`, in `phase`,
/// issued by ledgerops or not.
fn request(
    budget: &str,
    created: i64,
    expires: i64,
    phase: Option<ApprovalPhase>,
    issued: bool,
) -> ApprovalRequest {
    let mut r: ApprovalRequest = serde_json::from_value(json!({
        "apiVersion": "ledgerops.dev/v1alpha1", "kind": "ApprovalRequest",
        "metadata": {"name": format!("r{created}"), "namespace": "home"},
        "spec": {"budgetRef": {"name": budget},
                 "subject": {"kind": "CategorizationPlan", "name": "p"},
                 "previewHash": "h", "summary": "s", "reason": "r",
                 "expiresAt": at(expires).to_string()},
    }))
    .unwrap();
    r.metadata.creation_timestamp = Some(Time(at(created)));
    let mut status = crate::api::approval::ApprovalRequestStatus {
        phase,
        ..Default::default()
    };
    if issued {
        status.issued_for = Some(crate::api::approval::Issuance {
            subject_uid: "u".into(),
            preview_hash: "h".into(),
            at: Time(at(created)),
        });
    }
    r.status = Some(status);
    r
}

fn gauges(budgets: &[Budget], requests: &[ApprovalRequest], now: i64) -> Vec<BudgetGauges> {
    budget_gauges(budgets, requests, &BTreeMap::new(), at(now))
}

#[test]
fn counts_waiting_requests_per_budget_with_the_oldest_age() {
    let pending = Some(ApprovalPhase::Pending);
    let requests = [
        request("a", 100, 10_000, pending, true),
        request("a", 400, 10_000, pending, true),
        // Not yet reconciled, but issued: it waits.
        request("a", 700, 10_000, None, true),
        request("b", 900, 10_000, pending, true),
    ];
    let rows = gauges(
        &[budget("a", "True"), budget("b", "True")],
        &requests,
        1_000,
    );
    let by: Vec<(&str, u32, f64)> = rows
        .iter()
        .map(|r| (r.budget.as_str(), r.waiting, r.oldest_waiting_seconds))
        .collect();
    assert_eq!(by, [("a", 3, 900.0), ("b", 1, 100.0)]);
}

#[test]
fn only_requests_a_person_can_still_decide_count() {
    let cases = [
        ("decided", {
            let mut r = request("a", 0, 10_000, Some(ApprovalPhase::Pending), true);
            r.spec.decision = Some(crate::api::approval::Decision {
                verdict: crate::api::approval::Verdict::Approve,
                by: "bob".into(),
                groups: Vec::new(),
                comment: None,
                edits: None,
            });
            r
        }),
        (
            "expired phase",
            request("a", 0, 10_000, Some(ApprovalPhase::Expired), true),
        ),
        (
            "past its expiry, not yet marked",
            request("a", 0, 1_000, Some(ApprovalPhase::Pending), true),
        ),
        (
            "stale",
            request("a", 0, 10_000, Some(ApprovalPhase::Stale), true),
        ),
        (
            "not issued by ledgerops",
            request("a", 0, 10_000, Some(ApprovalPhase::Pending), false),
        ),
        (
            "of a Budget that is not there",
            request("gone", 0, 10_000, Some(ApprovalPhase::Pending), true),
        ),
    ];
    for (case, r) in cases {
        let rows = gauges(&[budget("a", "True")], &[r], 1_000);
        assert_eq!(rows.len(), 1, "{case}");
        assert_eq!(
            (rows[0].waiting, rows[0].oldest_waiting_seconds),
            (0, 0.0),
            "{case}"
        );
    }
}

#[test]
fn readiness_and_suspension_come_from_the_budget() {
    let mut suspended = budget("s", "False");
    suspended.spec.suspend = true;
    let mut unknown = budget("u", "True");
    unknown.status = None;
    let rows = gauges(
        &[
            budget("r", "True"),
            budget("n", "False"),
            suspended,
            unknown,
        ],
        &[],
        0,
    );
    let by: Vec<(&str, bool, bool)> = rows
        .iter()
        .map(|r| (r.budget.as_str(), r.ready, r.suspended))
        .collect();
    assert_eq!(
        by,
        [
            ("n", false, false),
            ("r", true, false),
            ("s", false, true),
            ("u", false, false)
        ]
    );
}

#[test]
fn the_autopilot_is_stopped_only_on_the_day_its_breaker_tripped() {
    let tripped = |day: &str, enabled: bool, why: Option<&str>| {
        let mut b = budget("a", "True");
        b.spec.autopilot.enabled = enabled;
        b.status.as_mut().unwrap().autopilot = Some(AutopilotStatus {
            day: day.into(),
            transactions: 20,
            amount: crate::api::common::Amount("10".into()),
            plans: vec![],
            tripped: why.map(str::to_owned),
            disagreements: vec![],
        });
        b
    };
    let today = at(0).strftime("%Y-%m-%d").to_string();
    let yesterday = at(-1).strftime("%Y-%m-%d").to_string();
    let cases = [
        ("tripped today", tripped(&today, true, Some("full")), true),
        (
            "tripped yesterday",
            tripped(&yesterday, true, Some("full")),
            false,
        ),
        ("counting today", tripped(&today, true, None), false),
        ("turned off", tripped(&today, false, Some("full")), false),
        ("never ran", budget("a", "True"), false),
    ];
    for (case, b, stopped) in cases {
        // The last second of the day still counts as the day.
        let rows = gauges(&[b], &[], 86_399);
        assert_eq!(rows[0].autopilot_stopped, stopped, "{case}");
    }
}

#[test]
fn request_use_is_joined_by_budget_and_gives_a_ratio() {
    let uses = BTreeMap::from([
        (
            ("home".to_owned(), "a".to_owned()),
            RequestUse {
                used: 162,
                limit: 180,
            },
        ),
        (
            ("home".to_owned(), "deleted".to_owned()),
            RequestUse { used: 1, limit: 1 },
        ),
    ]);
    let rows = budget_gauges(
        &[budget("a", "True"), budget("b", "True")],
        &[],
        &uses,
        at(0),
    );
    assert_eq!(rows.len(), 2, "the deleted Budget has no row");
    assert_eq!(rows[0].requests.map(RequestUse::ratio), Some(0.9));
    assert_eq!(rows[1].requests, None);
    assert_eq!(RequestUse { used: 0, limit: 0 }.ratio(), 1.0);
}

/// [`request`] about subject `subject`.
fn about(subject: &str, mut r: ApprovalRequest) -> ApprovalRequest {
    r.status
        .as_mut()
        .unwrap()
        .issued_for
        .as_mut()
        .unwrap()
        .subject_uid = subject.into();
    r
}

#[test]
fn an_expired_request_counts_until_its_subject_is_asked_again() {
    let (pending, expired) = (Some(ApprovalPhase::Pending), Some(ApprovalPhase::Expired));
    let cases = [
        (
            "expired",
            vec![about("s1", request("a", 0, 500, expired, true))],
            1,
        ),
        (
            "past its expiry, not yet marked",
            vec![about("s1", request("a", 0, 500, pending, true))],
            1,
        ),
        (
            "still waiting",
            vec![about("s1", request("a", 0, 5_000, pending, true))],
            0,
        ),
        (
            "asked again since",
            vec![
                about("s1", request("a", 0, 500, expired, true)),
                about("s1", request("a", 600, 5_000, pending, true)),
            ],
            0,
        ),
        (
            "two subjects",
            vec![
                about("s1", request("a", 0, 500, expired, true)),
                about("s2", request("a", 100, 600, expired, true)),
            ],
            2,
        ),
        (
            "not issued by ledgerops",
            vec![request("a", 0, 500, expired, false)],
            0,
        ),
        (
            "of a Budget that is not there",
            vec![about("s1", request("gone", 0, 500, expired, true))],
            0,
        ),
        (
            "rejected",
            vec![about(
                "s1",
                request("a", 0, 500, Some(ApprovalPhase::Rejected), true),
            )],
            0,
        ),
    ];
    for (case, requests, expected) in cases {
        let rows = gauges(&[budget("a", "True")], &requests, 1_000);
        assert_eq!(rows[0].expired_unanswered, expected, "{case}");
    }
}

#[test]
fn the_last_sync_is_the_budgets() {
    let mut b = budget("a", "True");
    assert_eq!(gauges(&[b.clone()], &[], 0)[0].last_sync_seconds, None);
    b.status.as_mut().unwrap().last_sync_time = Some(Time(at(60)));
    assert_eq!(
        gauges(&[b], &[], 0)[0].last_sync_seconds,
        Some(at(60).as_second())
    );
}
