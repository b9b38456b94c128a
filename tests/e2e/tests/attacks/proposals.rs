//! What the authority suites propose and decide, and how they read a refusal.

use std::time::Duration;

use kube::Api;
use kube::api::{Patch, PatchParams};
use ledgerops::api::approval::ApprovalRequest;
use ledgerops::api::common::PROPOSED_BY;
use ledgerops::api::plan::CategorizationPlan;
use ledgerops_e2e::scenario::{Scenario, bakery_and_train_plan};
use ledgerops_e2e::wait;
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
    let mut plan = september();
    plan["metadata"]["annotations"] = json!({PROPOSED_BY: by});
    serde_json::from_value(plan).unwrap()
}

/// The household's plan `september` ([`bakery_and_train_plan`]), as a repository holds it.
pub fn september() -> Value {
    json!({
        "apiVersion": "ledgerops.dev/v1alpha1", "kind": "CategorizationPlan",
        "metadata": {"name": "september"},
        "spec": {"budgetRef": {"name": "household"}, "assignments": bakery_and_train_plan()["assignments"]},
    })
}

/// `user`'s approval of request `name`, sent through `requests` (acting as someone, who need
/// not be `user`).
pub async fn send_approval(
    requests: &Api<ApprovalRequest>,
    name: &str,
    user: &str,
) -> Result<ApprovalRequest, kube::Error> {
    let approval =
        json!({"spec": {"decision": {"verdict": "Approve", "by": user, "comment": "fine"}}});
    requests
        .patch(name, &PatchParams::default(), &Patch::Merge(&approval))
        .await
}

/// The one request of `plan`, once ledgerops has issued it.
pub async fn request_of(s: &Scenario, plan: &str) -> String {
    let name = s.plan_request(plan).await;
    wait::until(
        &s.api::<ApprovalRequest>(),
        &name,
        Duration::from_secs(30),
        |r| r.status.as_ref().is_some_and(|st| st.issued_for.is_some()),
    )
    .await;
    name
}

/// The message of plan `plan`'s condition with reason `NotAuthorized`, once it has one.
pub async fn not_authorized(s: &Scenario, plan: &str) -> String {
    let held = wait::until(
        &s.api::<CategorizationPlan>(),
        plan,
        Duration::from_secs(60),
        |p| {
            p.status.as_ref().is_some_and(|st| {
                st.conditions
                    .iter()
                    .any(|c| c.reason == "NotAuthorized" && c.status == "False")
            })
        },
    )
    .await;
    held.status
        .unwrap()
        .conditions
        .into_iter()
        .find(|c| c.reason == "NotAuthorized")
        .unwrap()
        .message
}
