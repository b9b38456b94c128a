//! What the authority suites propose and decide, and how they read a refusal.

use ledgerops::api::common::PROPOSED_BY;
use ledgerops::api::plan::CategorizationPlan;
use ledgerops_e2e::scenario::bakery_and_train_plan;
use serde_json::{Value, json};

/// Every write asks a person, and four eyes hold (as they do by default).
pub fn asking() -> Value {
    json!({"writes": {"enabled": true}, "approval": {"fourEyes": true}})
}

/// The message of a 403 refusal; anything else fails the test, saying `what` was tried.
pub fn forbidden(what: &str, result: Result<impl std::fmt::Debug, kube::Error>) -> String {
    match result {
        Err(kube::Error::Api(e)) if e.code == 403 => e.message,
        other => panic!("{what}: expected a 403 refusal, got {other:?}"),
    }
}

pub fn assert_says(message: &str, parts: &[&str]) {
    for part in parts {
        assert!(message.contains(part), "{part:?} missing from: {message}");
    }
}

/// [`bakery_and_train_plan`] as the plan `september` of Budget `household`, proposed by `by`.
pub fn september_by(by: &str) -> CategorizationPlan {
    serde_json::from_value(json!({
        "apiVersion": "ledgerops.dev/v1alpha1", "kind": "CategorizationPlan",
        "metadata": {"name": "september", "annotations": {PROPOSED_BY: by}},
        "spec": {"budgetRef": {"name": "household"}, "assignments": bakery_and_train_plan()["assignments"]},
    }))
    .unwrap()
}

/// The merge patch approving a request in `user`'s name.
pub fn approve_as(user: &str) -> Value {
    json!({"spec": {"decision": {"verdict": "Approve", "by": user, "comment": "fine"}}})
}
