//! The approval policy with `ledgerops run`, a real API server and the YNAB simulator: a memo
//! or flag change asks a person like any change other than a category (seed 001: "any other
//! tool asks"), and the auto-approve limits bound a plan as a whole, its total and its count,
//! so many small changes never run unasked.

use kube::api::{Patch, PatchParams};
use ledgerops::api::approval::ApprovalRequest;
use ledgerops::api::budget::BudgetPhase;
use ledgerops::api::plan::PlanPhase;
use ledgerops::api::transaction::TransactionPhase;
use ledgerops_e2e::controller::Ledgerops;
use ledgerops_e2e::scenario::{PATCH, Scenario, category, demo_with_uncategorised};
use ledgerops_testenv::ControlPlane;
use serde_json::json;
use ynab_sim::demo;

async fn scenario(prefix: &str, extra: usize) -> Scenario {
    let s = Scenario::new(
        ControlPlane::shared(),
        prefix,
        demo_with_uncategorised(extra),
    )
    .await;
    Ledgerops::shared().await;
    s
}

async fn approve(s: &Scenario, request: &ApprovalRequest) {
    let approve =
        json!({"spec": {"decision": {"verdict": "Approve", "by": "admin", "comment": "fine"}}});
    s.api::<ApprovalRequest>()
        .patch(
            request.metadata.name.as_deref().unwrap(),
            &PatchParams::default(),
            &Patch::Merge(&approve),
        )
        .await
        .unwrap();
}

#[tokio::test]
async fn memo_and_flag_changes_ask_and_nothing_is_written_before_approval() {
    let s = scenario("policyfields", 0).await;
    // Category changes up to 100,000 run unasked here; nothing lets a memo or a flag run.
    s.create_writing_budget("household", json!({})).await;
    s.wait_budget("household", BudgetPhase::Ready).await;
    s.create_transaction(
        "note",
        "household",
        "tx-048",
        json!({"memo": "school trip"}),
    )
    .await;
    s.create_transaction("flag", "household", "tx-049", json!({"flagColor": "red"}))
        .await;
    s.wait_transaction("note", TransactionPhase::AwaitingApproval)
        .await;
    s.wait_transaction("flag", TransactionPhase::AwaitingApproval)
        .await;
    let requests = s.approval_requests().await;
    assert_eq!(requests.len(), 2, "{requests:#?}");
    let about = |id: &str| {
        requests
            .iter()
            .find(|r| r.spec.summary.starts_with(id))
            .unwrap_or_else(|| panic!("no request about {id}: {requests:#?}"))
    };
    let memo = about("tx-048");
    assert!(
        memo.spec.summary.contains("memo") && memo.spec.summary.contains("\"school trip\""),
        "{}",
        memo.spec.summary
    );
    assert!(
        memo.spec.reason.contains("tx-048 changes its memo")
            && memo.spec.reason.contains("autoApproveFields"),
        "{}",
        memo.spec.reason
    );
    assert!(
        about("tx-049").spec.reason.contains("flagColor"),
        "{}",
        about("tx-049").spec.reason
    );
    assert_eq!(s.writes().await, 0, "nothing before a person approves");

    approve(&s, memo).await;
    s.wait_transaction("note", TransactionPhase::Converged)
        .await;
    assert_eq!(s.requests(PATCH).await, 1, "the approved memo, and only it");
    let held = s
        .sim
        .control()
        .transaction(demo::PLAN_ID, "tx-048")
        .await
        .unwrap();
    assert_eq!(held.summary.memo.as_deref(), Some("school trip"));
    assert_eq!(
        s.wait_transaction("flag", TransactionPhase::AwaitingApproval)
            .await
            .spec
            .flag_color,
        Some(ledgerops::api::transaction::Flag::Red),
        "the flag still waits for its own approval"
    );
}

#[tokio::test]
async fn many_small_changes_ask_when_their_total_or_count_is_too_large() {
    const SMALL: usize = 30;
    let s = scenario("policytotal", SMALL).await;
    // Each of the 30 transactions moves 8.40: below 10 alone, 252.00 together.
    s.create_budget(
        "by-total",
        demo::TOKEN,
        json!({"writes": {"enabled": true},
               "approval": {"autoApproveBelow": "10", "autoApproveMaxChanges": 5000, "askOnNewPayee": false}}),
    )
    .await;
    // A total limit nothing reaches, and the default count limit (25).
    s.create_budget(
        "by-count",
        demo::TOKEN,
        json!({"writes": {"enabled": true},
               "approval": {"autoApproveBelow": "100000", "askOnNewPayee": false}}),
    )
    .await;
    s.wait_budget("by-total", BudgetPhase::Ready).await;
    s.wait_budget("by-count", BudgetPhase::Ready).await;
    let assignments = |n: usize| -> Vec<serde_json::Value> {
        (0..n)
            .map(|i| json!({"transactionId": format!("load-{i:05}"), "categoryId": category("Groceries")}))
            .collect()
    };
    s.create_plan("ten", "by-total", json!({"assignments": assignments(10)}))
        .await;
    s.create_plan(
        "thirty",
        "by-count",
        json!({"assignments": assignments(SMALL)}),
    )
    .await;
    s.wait_plan("ten", PlanPhase::AwaitingApproval).await;
    s.wait_plan("thirty", PlanPhase::AwaitingApproval).await;
    let requests = s.approval_requests().await;
    let reason = |plan: &str| {
        requests
            .iter()
            .find(|r| r.spec.subject.name == plan)
            .unwrap_or_else(|| panic!("no request for {plan}: {requests:#?}"))
            .spec
            .reason
            .clone()
    };
    assert_eq!(
        reason("ten"),
        "the 10 changes move 84.00 in total, at or above the auto-approve limit of 10"
    );
    assert_eq!(
        reason("thirty"),
        "30 changes are more than the 25 that spec.approval.autoApproveMaxChanges lets run without asking"
    );
    assert_eq!(s.writes().await, 0, "nothing runs unasked");

    // Within both limits, the same kind of plan runs on its own: the bound is the plan's size.
    s.create_plan(
        "two",
        "by-count",
        json!({"assignments": [
            {"transactionId": "load-00028", "categoryId": category("Transport")},
            {"transactionId": "load-00029", "categoryId": category("Transport")}
        ]}),
    )
    .await;
    s.wait_plan("two", PlanPhase::Applied).await;
    assert_eq!(s.requests(PATCH).await, 1);
}
