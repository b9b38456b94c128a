//! CategorizationPlans and ApprovalRequests with `ledgerops run`, a real API server and the YNAB
//! simulator: seed 002's example from preview to approval to one bulk write, then undo; every
//! validation error; rejection; expiry with escalation; a stale preview; a read-only Budget.

use std::time::Duration;

use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Patch, PatchParams};
use ledgerops::api::approval::{ApprovalPhase, ApprovalRequest};
use ledgerops::api::plan::{CategorizationPlan, PlanPhase};
use ledgerops::logic::status::conditions;
use ledgerops_e2e::scenario::{PATCH, bakery_and_train_plan, category, household};
use ledgerops_e2e::wait;
use ledgerops_testenv::ControlPlane;
use serde_json::json;

fn message(plan: &CategorizationPlan, type_: &str) -> String {
    conditions::get(&plan.status.as_ref().unwrap().conditions, type_)
        .map(|c| c.message.clone())
        .unwrap_or_default()
}

#[tokio::test]
async fn seed_002_is_previewed_approved_applied_in_one_request_and_undone() {
    let s = household(
        "seed002",
        json!({"writes": {"enabled": true}, "approval": {"escalateTo": ["finance-manager"]}}),
    )
    .await;
    s.create_plan("september", "household", bakery_and_train_plan())
        .await;
    let waiting = s.wait_plan("september", PlanPhase::AwaitingApproval).await;
    let preview = waiting.status.as_ref().unwrap().preview.clone().unwrap();
    assert_eq!((preview.change_count, preview.unchanged_count), (2, 0));
    let bakery = &preview.changes[0];
    assert_eq!(bakery.transaction_id, "tx-048");
    assert_eq!(bakery.amount.0, "-8.40");
    assert_eq!(
        bakery.payee.as_deref(),
        Some("CB BOULANGERIE DU PORT FACT 160926 525130******1")
    );
    assert_eq!(
        (
            bakery.from_category_id.as_deref(),
            bakery.to_category.as_deref()
        ),
        (None, Some("Groceries"))
    );
    assert_eq!(preview.changes[1].amount.0, "-45.00");

    let pending = s.approval_requests().await;
    assert_eq!(pending.len(), 1);
    let request = pending[0].metadata.name.clone().unwrap();
    assert_eq!(pending[0].spec.preview_hash, preview.hash);
    wait::until(
        &s.api::<ApprovalRequest>(),
        &request,
        Duration::from_secs(30),
        |r| r.status.as_ref().and_then(|s| s.phase) == Some(ApprovalPhase::Pending),
    )
    .await;
    // The morning queue shows it.
    let queue = ControlPlane::shared()
        .kubectl_ok(&["get", "approvalrequests", "-n", &s.ns])
        .unwrap();
    assert!(
        queue.contains("Pending") && queue.contains("2 transactions to recategorise"),
        "{queue}"
    );
    assert_eq!(
        s.requests(PATCH).await,
        0,
        "nothing written before approval"
    );

    ControlPlane::shared()
        .kubectl_ok(&[
            "patch",
            "approvalrequest",
            &request,
            "-n",
            &s.ns,
            "--type=merge",
            "-p",
            r#"{"spec":{"decision":{"verdict":"Approve","by":"admin","comment":"fine"}}}"#,
        ])
        .unwrap();
    let applied = s.wait_plan("september", PlanPhase::Applied).await;
    // Asked, then written: both show in the plan's Events.
    for reason in ["AwaitingApproval", "Applied"] {
        let event = s.wait_event(reason, Some("september")).await;
        assert_eq!(event.type_.as_deref(), Some("Normal"), "{reason}");
    }
    let operation = applied
        .status
        .as_ref()
        .unwrap()
        .operation_id
        .clone()
        .unwrap();
    assert_eq!(
        s.requests(PATCH).await,
        1,
        "one bulk request for the whole plan"
    );
    assert_eq!(s.ynab_category("tx-048").await, Some(category("Groceries")));
    assert_eq!(s.ynab_category("tx-049").await, Some(category("Transport")));
    let journal = s
        .api::<ConfigMap>()
        .get(&format!("ledgerops-journal-{operation}"))
        .await
        .expect("journal entry");
    assert!(
        journal.metadata.owner_references.is_none(),
        "the journal outlives the plan"
    );

    // Deleting the plan keeps the journal: undo still works.
    s.api::<CategorizationPlan>()
        .delete("september", &Default::default())
        .await
        .unwrap();
    s.create_plan(
        "undo-september",
        "household",
        json!({"undoOf": "september"}),
    )
    .await;
    let undo = s
        .wait_plan("undo-september", PlanPhase::AwaitingApproval)
        .await;
    let reverts = undo.status.unwrap().preview.unwrap();
    assert_eq!((reverts.change_count, reverts.conflicts.len()), (2, 0));
    let request = s
        .approval_requests()
        .await
        .into_iter()
        .find(|r| r.spec.subject.name == "undo-september")
        .unwrap();
    s.decide(&request.metadata.name.unwrap(), "Approve", "put them back")
        .await;
    s.wait_plan("undo-september", PlanPhase::Applied).await;
    assert_eq!(s.requests(PATCH).await, 2);
    assert_eq!(s.ynab_category("tx-048").await, None);
    assert_eq!(s.ynab_category("tx-049").await, None);
}

#[tokio::test]
async fn every_validation_error_is_reported_and_nothing_is_asked() {
    let s = household("invalid", json!({"writes": {"enabled": true}})).await;
    let uncategorized = "48b9df70-8724-4cad-a258-cf0e342f8dac";
    let unknown_category = "00000000-0000-4000-8000-000000000000";
    s.create_plan(
        "bad",
        "household",
        json!({"assignments": [
            {"transactionId": "tx-999", "categoryId": category("Groceries")},
            {"transactionId": "tx-048", "categoryId": uncategorized},
            {"transactionId": "tx-049", "categoryId": unknown_category},
            {"transactionId": "tx-057", "categoryId": category("Groceries")},
            {"transactionId": "tx-003", "categoryId": category("Groceries")},
            {"transactionId": "tx-050", "categoryId": category("Groceries")}
        ]}),
    )
    .await;
    let invalid = s.wait_plan("bad", PlanPhase::Invalid).await;
    let text = message(&invalid, "Valid");
    for expected in [
        "Transaction tx-999 is not in the Budget's YNAB plan",
        &format!("Category {uncategorized} is YNAB's internal Uncategorized"),
        &format!("Category {unknown_category} is not in the Budget's YNAB plan"),
        "Transaction tx-057 is split across categories",
        "Transaction tx-003 is on an off-budget account",
        "Transaction tx-050 is a transfer between two on-budget accounts",
    ] {
        assert!(text.contains(expected), "missing {expected:?} in {text}");
    }
    assert!(
        s.approval_requests().await.is_empty(),
        "an invalid plan asks nothing"
    );
    assert_eq!(s.requests(PATCH).await, 0);
}

#[tokio::test]
async fn a_rejected_plan_writes_nothing() {
    let s = household("reject", json!({"writes": {"enabled": true}})).await;
    s.create_plan("september", "household", bakery_and_train_plan())
        .await;
    s.wait_plan("september", PlanPhase::AwaitingApproval).await;
    let request = s.approval_requests().await[0]
        .metadata
        .name
        .clone()
        .unwrap();
    s.decide(&request, "Reject", "the train was a gift").await;
    let rejected = s.wait_plan("september", PlanPhase::Rejected).await;
    assert!(message(&rejected, "Ready").contains("the train was a gift"));
    assert_eq!(s.requests(PATCH).await, 0);
    // The decision shows in the plan's Events too, as a Warning: nothing was written.
    let event = s.wait_event("Rejected", Some("september")).await;
    assert_eq!(event.type_.as_deref(), Some("Warning"));
    assert!(
        event
            .note
            .unwrap_or_default()
            .contains("the train was a gift"),
        "the Event says why"
    );
}

#[tokio::test]
async fn an_unanswered_request_expires_and_escalates() {
    let s = household("expire", json!({"writes": {"enabled": true}, "approval": {"expiry": "1m", "escalateTo": ["finance-manager"]}})).await;
    s.create_plan("september", "household", bakery_and_train_plan())
        .await;
    s.wait_plan("september", PlanPhase::AwaitingApproval).await;
    let request = s.approval_requests().await[0]
        .metadata
        .name
        .clone()
        .unwrap();
    // The shortest expiry a Budget accepts is one minute.
    wait::until(
        &s.api::<ApprovalRequest>(),
        &request,
        Duration::from_secs(90),
        |r| r.status.as_ref().and_then(|s| s.phase) == Some(ApprovalPhase::Expired),
    )
    .await;
    // The Event is published right after the phase is written: give it a moment to arrive.
    let escalation = s.wait_event("Escalated", None).await;
    assert!(
        escalation
            .note
            .as_deref()
            .unwrap_or_default()
            .contains("finance-manager")
    );
    // The plan follows its request.
    s.wait_plan("september", PlanPhase::Expired).await;
    assert_eq!(s.requests(PATCH).await, 0);
}

#[tokio::test]
async fn an_edit_in_ynab_between_preview_and_answer_makes_the_request_stale() {
    let s = household("stale", json!({"writes": {"enabled": true}})).await;
    s.create_plan("september", "household", bakery_and_train_plan())
        .await;
    let first = s
        .wait_plan("september", PlanPhase::AwaitingApproval)
        .await
        .status
        .unwrap()
        .preview
        .unwrap()
        .hash;
    let old = s.approval_requests().await[0]
        .metadata
        .name
        .clone()
        .unwrap();

    // Someone categorises the bakery in the app; the next sync changes the preview.
    s.recategorise_in_ynab("tx-048", "Restaurants").await;
    let stale = wait::until(
        &s.api::<ApprovalRequest>(),
        &old,
        Duration::from_secs(30),
        |r| r.status.as_ref().and_then(|s| s.phase) == Some(ApprovalPhase::Stale),
    )
    .await;
    assert!(
        conditions::get(&stale.status.unwrap().conditions, "Ready")
            .unwrap()
            .message
            .contains("The plan changed between the preview and the answer")
    );
    let all = s.approval_requests().await;
    assert_eq!(all.len(), 2, "a new request follows");
    let fresh = all.iter().find(|r| r.spec.preview_hash != first).unwrap();
    assert_eq!(
        fresh.spec.changes[0].from_category.as_deref(),
        Some("Restaurants")
    );
    // Approving the stale request is refused at admission (crds/admission-approvalrequests.yaml).
    let late =
        json!({"spec": {"decision": {"verdict": "Approve", "by": "admin", "comment": "too late"}}});
    match s
        .api::<ApprovalRequest>()
        .patch(&old, &PatchParams::default(), &Patch::Merge(&late))
        .await
    {
        Err(kube::Error::Api(e)) if e.code == 403 => {
            assert!(e.message.contains("it is Stale"), "{}", e.message)
        }
        other => panic!("approving a Stale request: expected 403, got {other:?}"),
    }
    assert_eq!(s.requests(PATCH).await, 0);
    s.decide(&fresh.metadata.name.clone().unwrap(), "Approve", "ok")
        .await;
    s.wait_plan("september", PlanPhase::Applied).await;
    assert_eq!(s.requests(PATCH).await, 1);
}

#[tokio::test]
async fn a_read_only_budget_previews_and_asks_but_never_applies() {
    let s = household("readonly", json!({})).await;
    s.create_plan("september", "household", bakery_and_train_plan())
        .await;
    s.wait_plan("september", PlanPhase::AwaitingApproval).await;
    s.decide(
        &s.approval_requests().await[0]
            .metadata
            .name
            .clone()
            .unwrap(),
        "Approve",
        "ok",
    )
    .await;
    let read_only = s.wait_plan("september", PlanPhase::ReadOnly).await;
    assert!(message(&read_only, "Ready").contains("spec.writes.enabled"));
    assert_eq!(s.requests(PATCH).await, 0);
}
