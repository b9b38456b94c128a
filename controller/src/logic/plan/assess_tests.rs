//! Unit tests of `logic/plan/assess.rs`.

use super::*;
use crate::api::plan::CategorizationPlanSpec;
use crate::logic::approval::policy::Action;
use crate::logic::plan::fixtures::{assign, mirror};

fn budget(approval: serde_json::Value, closed_through: Option<&str>) -> Budget {
    let spec = serde_json::from_value(serde_json::json!({
        "planId": "plan-1",
        "tokenSecretRef": {"name": "t"},
        "approval": approval,
        "closedThrough": closed_through,
    }))
    .unwrap();
    Budget::new("household", spec)
}

fn plan(assignments: &[(&str, &str)]) -> (CategorizationPlan, Basis) {
    let assignments: Vec<_> = assignments.iter().map(|(t, c)| assign(t, c)).collect();
    let spec: CategorizationPlanSpec = serde_json::from_value(serde_json::json!({
        "budgetRef": {"name": "household"},
        "assignments": assignments,
    }))
    .unwrap();
    (
        CategorizationPlan::new("september", spec),
        Basis::Assignments(assignments),
    )
}

const SCOPE: &str = "ns/household/plan-1";

fn nothing_written(_: &HashSet<&str>) -> Option<LastWritten> {
    Some(LastWritten::default())
}

#[test]
fn an_unknown_transaction_is_invalid_and_named() {
    let (p, basis) = plan(&[("tx-999", "cat-groceries")]);
    let m = mirror();
    let Err(PlanVerdict::Invalid(message)) = assess(
        &p,
        &budget(serde_json::json!({}), None),
        basis,
        (&m, nothing_written),
        SCOPE,
        None,
    ) else {
        panic!("an unknown transaction is invalid");
    };
    assert!(message.contains("tx-999"), "{message}");
}

#[test]
fn a_valid_plan_is_previewed_and_its_approval_bound_to_the_preview() {
    let (p, basis) = plan(&[("tx-048", "cat-groceries"), ("tx-049", "cat-transport")]);
    let m = mirror();
    let assessed = assess(
        &p,
        &budget(serde_json::json!({}), None),
        basis,
        (&m, nothing_written),
        SCOPE,
        None,
    )
    .unwrap_or_else(|v| panic!("{v:?}"));
    assert_eq!(assessed.preview.changes.len(), 2);
    assert_eq!(assessed.approved.hash, assessed.preview.hash);
    assert_eq!(assessed.approved.changes.len(), 2);
    assert_eq!(assessed.approved.scope, SCOPE);
    // Asked by default: nothing in the policy lets it run on its own.
    assert_eq!(assessed.decision.action, Action::Ask);
}

#[test]
fn a_change_in_a_closed_month_is_invalid_before_anyone_is_asked() {
    let (p, basis) = plan(&[("tx-048", "cat-groceries")]);
    let m = mirror();
    let closed = budget(serde_json::json!({}), Some("2026-09"));
    let Err(PlanVerdict::Invalid(message)) =
        assess(&p, &closed, basis, (&m, nothing_written), SCOPE, None)
    else {
        panic!("a closed month's change is invalid");
    };
    assert!(message.contains("tx-048"), "{message}");
}

#[test]
fn a_resumed_write_keeps_the_preview_that_was_decided() {
    let (p, basis) = plan(&[("tx-048", "cat-groceries")]);
    let m = mirror();
    let b = budget(serde_json::json!({}), None);
    let fresh = assess(&p, &b, basis.clone(), (&m, nothing_written), SCOPE, None)
        .unwrap_or_else(|v| panic!("{v:?}"));
    let resume = Resume {
        attempt_id: "attempt-1".into(),
        started_at: k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
            k8s_openapi::jiff::Timestamp::UNIX_EPOCH,
        ),
        hash: fresh.approved.hash.clone(),
        changes: fresh.approved.changes.clone(),
        decision: None,
        moved_since: Default::default(),
        knowledge: Some(m.server_knowledge),
        elsewhere: Default::default(),
    };
    let resumed = assess(&p, &b, basis, (&m, nothing_written), SCOPE, Some(&resume))
        .unwrap_or_else(|v| panic!("{v:?}"));
    assert_eq!(resumed.preview.hash, fresh.preview.hash);
}

#[test]
fn the_policy_runs_nothing_over_an_edit_made_since_ledgerops_wrote() {
    let (p, basis) = plan(&[("tx-065", "cat-transport")]);
    let m = mirror();
    let b = budget(
        serde_json::json!({"autoApproveBelow": "1000", "askOnNewPayee": false}),
        None,
    );
    let untouched = assess(&p, &b, basis.clone(), (&m, nothing_written), SCOPE, None)
        .unwrap_or_else(|v| panic!("{v:?}"));
    assert_eq!(untouched.decision.action, Action::Run);
    // ledgerops wrote Transport to tx-065; it shows Groceries now.
    let wrote_transport = |ids: &HashSet<&str>| {
        assert_eq!(ids, &HashSet::from(["tx-065"]));
        let mut last = LastWritten::default();
        last.record(
            "tx-065",
            k8s_openapi::jiff::Timestamp::UNIX_EPOCH,
            Some("cat-transport".into()),
        );
        Some(last)
    };
    let edited = assess(&p, &b, basis, (&m, wrote_transport), SCOPE, None)
        .unwrap_or_else(|v| panic!("{v:?}"));
    assert_eq!(edited.decision.action, Action::Ask);
    assert!(
        edited
            .decision
            .reason
            .starts_with("tx-065 shows \"Groceries\" (cat-groceries) in YNAB"),
        "{}",
        edited.decision.reason
    );
}

#[test]
fn a_plan_the_policy_would_run_waits_until_what_ledgerops_wrote_is_known() {
    let (p, basis) = plan(&[("tx-065", "cat-transport")]);
    let m = mirror();
    let b = budget(
        serde_json::json!({"autoApproveBelow": "1000", "askOnNewPayee": false}),
        None,
    );
    let not_listed = |_: &HashSet<&str>| None;
    let Err(PlanVerdict::Pending(message)) = assess(&p, &b, basis, (&m, not_listed), SCOPE, None)
    else {
        panic!("a write that would run waits");
    };
    assert!(
        message.starts_with("Waiting until every Transaction and plan is read"),
        "{message}"
    );
}
