//! The Budget reconciler with `ledgerops run` as a process, a real API server and the YNAB
//! simulator: Ready, errors, delta syncs, rate limiting, and exact request counts.

use std::time::Duration;

use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, Patch, PatchParams};
use ledgerops::api::budget::{Budget, BudgetPhase};
use ledgerops::logic::status::conditions;
use ledgerops_e2e::controller::Ledgerops;
use ledgerops_e2e::scenario::{Scenario, WAIT};
use ledgerops_e2e::wait;
use ledgerops_testenv::{ControlPlane, Storage};
use serde_json::json;
use ynab_sim::{RecordKind, RequestMatch, StatusFault, demo};

const PLAN_ENDPOINT: &str = "GET /v1/plans/{plan_id}";

/// A namespace and a simulator of the test's own, on the shared controller.
async fn setup(prefix: &str) -> Scenario {
    let s = Scenario::new(ControlPlane::shared(), prefix, demo::generate()).await;
    Ledgerops::shared().await;
    s
}

#[tokio::test]
async fn a_budget_becomes_ready_with_one_request() {
    let s = setup("ready").await;
    s.create_budget("household", demo::TOKEN, json!({})).await;
    let budget = s.wait_budget("household", BudgetPhase::Ready).await;
    let status = budget.status.unwrap();
    let ready = conditions::get(&status.conditions, "Ready").expect("Ready condition");
    assert_eq!(
        (ready.status.as_str(), ready.reason.as_str()),
        ("True", "Synced")
    );
    assert_eq!(ready.observed_generation, budget.metadata.generation);
    let fixture = demo::generate();
    let plan = &fixture.plans[0];
    let counts = status.counts.unwrap();
    assert_eq!(counts.transactions as usize, plan.transactions.len());
    assert_eq!(counts.accounts as usize, plan.accounts.len());
    assert_eq!(
        status.plan_name.as_deref(),
        Some(plan.summary.name.as_str())
    );
    assert_eq!(status.currency.map(|c| c.iso_code).as_deref(), Some("EUR"));
    assert_eq!(
        s.sim.control().counters().await.unwrap().total,
        1,
        "one request for a full sync"
    );
    assert_eq!(status.requests.unwrap().used_last_hour, 1);
    // kubectl wait works on it.
    ControlPlane::shared()
        .kubectl_ok(&[
            "wait",
            "-n",
            &s.ns,
            "--for=condition=Ready",
            "budget/household",
            "--timeout=10s",
        ])
        .unwrap();
}

#[tokio::test]
async fn a_bad_token_is_unauthorized_without_a_retry_storm() {
    let s = setup("badtoken").await;
    s.create_budget("household", "not-a-real-token", json!({}))
        .await;
    let budget = s.wait_budget("household", BudgetPhase::Unauthorized).await;
    let ready = conditions::get(&budget.status.as_ref().unwrap().conditions, "Ready")
        .unwrap()
        .clone();
    assert_eq!(
        (ready.status.as_str(), ready.reason.as_str()),
        ("False", "Unauthorized")
    );
    assert!(
        ready.message.contains("spec.tokenSecretRef"),
        "{}",
        ready.message
    );
    assert!(
        !ready.message.contains("not-a-real-token"),
        "the token leaked into the status"
    );
    // Its Secret touched and the Budget nudged, the same token is not sent again.
    let secrets = Api::<Secret>::namespaced(s.client.clone(), &s.ns);
    let touch = json!({"metadata": {"annotations": {"touched": "yes"}}});
    secrets
        .patch(
            "household-token",
            &PatchParams::default(),
            &Patch::Merge(&touch),
        )
        .await
        .unwrap();
    let nudge = json!({"metadata": {"annotations": {"ledgerops.dev/sync-requested-at": "now"}}});
    Api::<Budget>::namespaced(s.client.clone(), &s.ns)
        .patch("household", &PatchParams::default(), &Patch::Merge(&nudge))
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(
        s.sim.control().counters().await.unwrap().total,
        1,
        "a refused token is not retried at once"
    );
    // A new token is tried at once.
    let fixed = json!({"stringData": {"token": demo::TOKEN}});
    secrets
        .patch(
            "household-token",
            &PatchParams::default(),
            &Patch::Merge(&fixed),
        )
        .await
        .unwrap();
    s.wait_budget("household", BudgetPhase::Ready).await;
}

#[tokio::test]
async fn an_out_of_band_edit_reaches_the_mirror_in_one_delta_request() {
    let s = setup("delta").await;
    s.create_budget("household", demo::TOKEN, json!({})).await;
    let ready = s
        .wait_budget("household", BudgetPhase::Ready)
        .await
        .status
        .unwrap();
    let (knowledge, transactions) = (
        ready.server_knowledge.unwrap(),
        ready.counts.unwrap().transactions,
    );

    // Someone deletes a transaction in the YNAB app, then ledgerops is asked to sync.
    s.sim
        .control()
        .delete_transaction(demo::PLAN_ID, "tx-049")
        .await
        .unwrap();
    s.sim
        .control()
        .edit(
            demo::PLAN_ID,
            RecordKind::Transaction,
            "tx-048",
            &json!({"memo": "edited in the app"}),
        )
        .await
        .unwrap();
    s.annotate::<Budget>("household", "ledgerops.dev/sync-requested-at", "1")
        .await;
    let after = wait::until(&s.api::<Budget>(), "household", WAIT, |b| {
        b.status
            .as_ref()
            .and_then(|s| s.server_knowledge)
            .is_some_and(|k| k > knowledge)
    })
    .await
    .status
    .unwrap();
    assert_eq!(after.counts.unwrap().transactions, transactions - 1);
    assert_eq!(
        s.requests(PLAN_ENDPOINT).await,
        2,
        "one full sync, then one delta"
    );
    let delta_seen = s.sim.control().counters().await.unwrap();
    assert_eq!(delta_seen.total, 2);
}

#[tokio::test]
async fn a_429_is_respected() {
    let s = setup("ratelimit").await;
    let fault = StatusFault {
        status: 429,
        count: 1,
        detail: None,
        only: RequestMatch::default(),
    };
    s.sim.control().inject_status(&fault).await.unwrap();
    s.create_budget("household", demo::TOKEN, json!({})).await;
    let budget = s.wait_budget("household", BudgetPhase::RateLimited).await;
    let status = budget.status.unwrap();
    let limited =
        conditions::get(&status.conditions, "RateLimited").expect("RateLimited condition");
    assert_eq!(limited.status, "True");
    assert!(status.requests.unwrap().rate_limited_until.is_some());
    // Asking again during the pause sends nothing to YNAB.
    s.annotate::<Budget>("household", "ledgerops.dev/sync-requested-at", "again")
        .await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(
        s.sim.control().counters().await.unwrap().total,
        1,
        "no request while YNAB asked us to wait"
    );
    let still = s.api::<Budget>().get("household").await.unwrap();
    assert_eq!(still.status.unwrap().phase, Some(BudgetPhase::RateLimited));
}

#[tokio::test]
async fn metrics_count_ynab_requests_and_time_reconciles() {
    let s = setup("metrics").await;
    s.create_budget("household", demo::TOKEN, json!({})).await;
    s.wait_budget("household", BudgetPhase::Ready).await;
    let text = Ledgerops::shared().await.metrics().await;
    assert!(
        text.contains(
            r#"ledgerops_ynab_requests_total{endpoint="GET /plans/{plan_id}",status="200",priority="background"}"#
        ),
        "{text}"
    );
    assert!(
        text.contains("ledgerops_reconciles_total{kind=\"Budget\"}"),
        "{text}"
    );
    assert!(
        text.contains("ledgerops_reconcile_duration_seconds_count{kind=\"Budget\"}"),
        "{text}"
    );
    assert!(
        !text.contains(demo::TOKEN),
        "the token leaked into /metrics"
    );
}

/// `--watch-namespace` scopes a controller to one namespace: it syncs the Budget there and
/// leaves another namespace's alone (no status, not one request to its YNAB). A plane of the
/// test's own: the binary's shared controller watches every namespace.
#[tokio::test]
async fn a_controller_watching_one_namespace_leaves_the_others_alone() {
    let plane = ControlPlane::start_private(Storage::Memory)
        .await
        .expect("control plane");
    let ours = Scenario::new(&plane, "watched", demo::generate()).await;
    let theirs = Scenario::new(&plane, "unwatched", demo::generate()).await;
    let _ledgerops = Ledgerops::start_with(&plane, &["--watch-namespace", &ours.ns], &[]).await;
    // Theirs first: by the time ours is Ready, the watch has long delivered it, were it seen.
    theirs
        .create_budget("household", demo::TOKEN, json!({}))
        .await;
    ours.create_budget("household", demo::TOKEN, json!({}))
        .await;
    ours.wait_budget("household", BudgetPhase::Ready).await;
    // Its status is what the API server's defaults make of none.
    let left = theirs.api::<Budget>().get("household").await.unwrap();
    let untouched = left
        .status
        .as_ref()
        .is_none_or(|s| s.conditions.is_empty() && s.phase.is_none() && s.counts.is_none());
    assert!(untouched, "{:?}", left.status);
    assert_eq!(theirs.sim.control().counters().await.unwrap().total, 0);
}
