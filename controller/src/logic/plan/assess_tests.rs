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

#[test]
fn an_unknown_transaction_is_invalid_and_named() {
    let (p, basis) = plan(&[("tx-999", "cat-groceries")]);
    let m = mirror();
    let Err(PlanVerdict::Invalid(message)) = assess(
        &p,
        &budget(serde_json::json!({}), None),
        basis,
        &m,
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
        &m,
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
    let Err(PlanVerdict::Invalid(message)) = assess(&p, &closed, basis, &m, SCOPE, None) else {
        panic!("a closed month's change is invalid");
    };
    assert!(message.contains("tx-048"), "{message}");
}

#[test]
fn a_resumed_write_keeps_the_preview_that_was_decided() {
    let (p, basis) = plan(&[("tx-048", "cat-groceries")]);
    let m = mirror();
    let b = budget(serde_json::json!({}), None);
    let fresh = assess(&p, &b, basis.clone(), &m, SCOPE, None).unwrap_or_else(|v| panic!("{v:?}"));
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
    let resumed =
        assess(&p, &b, basis, &m, SCOPE, Some(&resume)).unwrap_or_else(|v| panic!("{v:?}"));
    assert_eq!(resumed.preview.hash, fresh.preview.hash);
}
