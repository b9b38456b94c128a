//! Suspending a Budget, or taking its token Secret away (deleted, emptied or un-labelled), stops
//! every YNAB request of the Budget within one reconcile: a write already waiting in the batcher's
//! batch window is never sent, not even the read before it. Giving the Budget back lets the same
//! write go out once. Counts are the simulator's, not times.

use k8s_openapi::api::core::v1::Secret;
use kube::api::{DeleteParams, Patch, PatchParams, PostParams};
use ledgerops::api::budget::{Budget, BudgetPhase};
use ledgerops::api::plan::PlanPhase;
use ledgerops::api::transaction::{Transaction, TransactionPhase};
use ledgerops::logic::status::conditions;
use ledgerops_e2e::scenario::{
    PATCH, Scenario, WAIT, bakery_and_train_plan, category, household, token_secret,
};
use ledgerops_e2e::wait;
use serde_json::{Value, json};
use ynab_sim::demo;

/// The batch window the held write waits in: wide enough for the test to suspend the Budget
/// meanwhile on a loaded machine.
const HELD: &str = "10s";

/// A Budget that writes without asking and holds each write for [`HELD`].
async fn holding(prefix: &str) -> Scenario {
    household(
        prefix,
        json!({
            "writes": {"enabled": true, "batchWindow": HELD},
            "approval": {"autoApproveBelow": "100000", "askOnNewPayee": false}
        }),
    )
    .await
}

/// The bakery to Groceries, and its write queued in the batcher (its intent is recorded first).
async fn write_queued(s: &Scenario) {
    s.bakery_to_groceries().await;
    s.wait_transaction("bakery", TransactionPhase::Writing)
        .await;
}

async fn set_suspend(s: &Scenario, suspend: bool) {
    s.api::<Budget>()
        .patch(
            "household",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"suspend": suspend}})),
        )
        .await
        .unwrap();
}

fn ready(tx: &Transaction) -> (String, String) {
    let c = conditions::get(&tx.status.as_ref().unwrap().conditions, "Ready").unwrap();
    (c.reason.clone(), c.message.clone())
}

#[tokio::test]
async fn a_suspended_budget_never_sends_the_write_it_had_queued() {
    let s = holding("suspend-tx").await;
    write_queued(&s).await;
    let before = s.total_requests().await;
    set_suspend(&s, true).await;
    s.wait_budget("household", BudgetPhase::Suspended).await;
    // The held write comes out of its window, finds its permit withdrawn, and the Transaction
    // then says why it waits.
    let blocked = wait::until(&s.api::<Transaction>(), "bakery", WAIT, |t| {
        t.status.as_ref().and_then(|s| s.phase) == Some(TransactionPhase::Blocked)
    })
    .await;
    let (reason, message) = ready(&blocked);
    assert_eq!(reason, "Suspended", "{message}");
    assert!(message.contains("spec.suspend"), "{message}");
    assert_eq!(s.requests(PATCH).await, 0, "no PATCH after the suspension");
    assert_eq!(
        s.total_requests().await,
        before,
        "not even the read before the write"
    );
    assert_eq!(s.ynab_category("tx-048").await, None);

    // Resumed, the same write goes out once.
    set_suspend(&s, false).await;
    s.wait_transaction("bakery", TransactionPhase::Converged)
        .await;
    assert_eq!(s.requests(PATCH).await, 1);
    assert_eq!(s.ynab_category("tx-048").await, Some(category("Groceries")));
}

#[tokio::test]
async fn a_suspended_budget_never_sends_a_plan_it_had_queued() {
    let s = holding("suspend-plan").await;
    s.create_plan("september", "household", bakery_and_train_plan())
        .await;
    s.wait_plan("september", PlanPhase::Applying).await;
    let before = s.total_requests().await;
    set_suspend(&s, true).await;
    s.wait_budget("household", BudgetPhase::Suspended).await;
    // Out of its window, the bulk write is refused before anything is sent.
    s.wait_plan("september", PlanPhase::Pending).await;
    assert_eq!(s.requests(PATCH).await, 0);
    assert_eq!(s.total_requests().await, before);

    set_suspend(&s, false).await;
    s.wait_plan("september", PlanPhase::Applied).await;
    assert_eq!(s.requests(PATCH).await, 1, "one bulk PATCH for the plan");
}

/// How a token Secret is taken away, and given back.
#[derive(Debug, Clone, Copy)]
enum Taken {
    Deleted,
    Emptied,
    Unlabelled,
}

async fn take(s: &Scenario, how: Taken) {
    let secrets = s.api::<Secret>();
    let merge = |patch: Value| async move {
        s.api::<Secret>()
            .patch(
                "household-token",
                &PatchParams::default(),
                &Patch::Merge(patch),
            )
            .await
            .unwrap();
    };
    match how {
        Taken::Deleted => {
            secrets
                .delete("household-token", &DeleteParams::default())
                .await
                .unwrap();
        }
        Taken::Emptied => merge(json!({"data": {"token": ""}})).await,
        Taken::Unlabelled => {
            merge(json!({"metadata": {"labels": {"ledgerops.dev/ynab-token": null}}})).await;
        }
    }
}

async fn give_back(s: &Scenario, how: Taken) {
    let secrets = s.api::<Secret>();
    match how {
        Taken::Deleted => {
            wait::gone(&secrets, "household-token").await;
            secrets
                .create(
                    &PostParams::default(),
                    &token_secret("household-token", demo::TOKEN),
                )
                .await
                .unwrap();
        }
        Taken::Emptied | Taken::Unlabelled => {
            let fresh = token_secret("household-token", demo::TOKEN);
            let patch = json!({
                "metadata": {"labels": fresh.metadata.labels},
                "stringData": fresh.string_data,
            });
            secrets
                .patch(
                    "household-token",
                    &PatchParams::default(),
                    &Patch::Merge(patch),
                )
                .await
                .unwrap();
        }
    }
}

/// Takes the Secret away while a write waits in the batch window: the Budget says why within
/// one reconcile (the Secret is watched), the write is never sent, and giving the Secret back
/// lets it go out once.
async fn secret_taken_while_a_write_waits(prefix: &str, how: Taken, reason: &str) {
    let s = holding(prefix).await;
    write_queued(&s).await;
    let before = s.total_requests().await;
    take(&s, how).await;
    wait::until(&s.api::<Budget>(), "household", WAIT, |b| {
        b.status
            .as_ref()
            .and_then(|st| conditions::get(&st.conditions, "Ready"))
            .is_some_and(|c| c.reason == reason)
    })
    .await;
    // Out of its window the write finds its permit withdrawn; then it waits for a token.
    let waiting = s
        .wait_transaction("bakery", TransactionPhase::Pending)
        .await;
    let (_, message) = ready(&waiting);
    assert!(
        message.contains("Waiting for the YNAB token"),
        "{how:?}: {message}"
    );
    assert_eq!(s.requests(PATCH).await, 0, "{how:?}");
    assert_eq!(s.total_requests().await, before, "{how:?}");

    give_back(&s, how).await;
    s.wait_transaction("bakery", TransactionPhase::Converged)
        .await;
    assert_eq!(s.requests(PATCH).await, 1, "{how:?}");
}

#[tokio::test]
async fn a_deleted_token_secret_stops_a_queued_write() {
    secret_taken_while_a_write_waits("secret-deleted", Taken::Deleted, "TokenMissing").await;
}

#[tokio::test]
async fn an_emptied_token_secret_stops_a_queued_write() {
    secret_taken_while_a_write_waits("secret-emptied", Taken::Emptied, "TokenMissing").await;
}

#[tokio::test]
async fn an_unlabelled_token_secret_stops_a_queued_write() {
    secret_taken_while_a_write_waits("secret-unlabelled", Taken::Unlabelled, "TokenNotOptedIn")
        .await;
}
