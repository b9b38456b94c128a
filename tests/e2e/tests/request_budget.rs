//! The token's hour spent by priority, with `ledgerops run`, a real API server and the YNAB
//! simulator: periodic syncs nobody waits for are paced, and a person's approved write goes out
//! at once from the share kept for people. Counts requests, never time.

use std::time::Duration;

use k8s_openapi::api::events::v1::Event;
use kube::api::{Api, ListParams, Patch, PatchParams};
use ledgerops::api::budget::{Budget, BudgetPhase, RequestUse};
use ledgerops::api::transaction::TransactionPhase;
use ledgerops_e2e::attacker;
use ledgerops_e2e::scenario::{PATCH, Scenario, bakery_and_train_plan, household};
use ledgerops_e2e::wait::eventually;
use ledgerops_testenv::ControlPlane;
use serde_json::json;

async fn requests(s: &Scenario) -> RequestUse {
    let budget = s.api::<Budget>().get("household").await.unwrap();
    budget.status.and_then(|st| st.requests).unwrap_or_default()
}

/// 8 requests an hour, half kept for people: the pool of 4 allows a burst of one and then one
/// every 20 minutes. A sync every second would spend the hour in eight seconds; it sends one,
/// the Budget stays Ready and says when the next may go, and the plan a person approves meanwhile
/// is read and written at once, two requests from the reserve.
#[tokio::test]
async fn background_syncs_are_paced_and_an_approved_write_goes_out_at_once() {
    let s = household(
        "paced",
        json!({
            "writes": {"enabled": true},
            "requestsPerHour": 8,
            "reservedRequestsPercent": 50,
            "syncInterval": "1s"
        }),
    )
    .await;
    eventually(
        "the Budget says when its next background request may go",
        Duration::from_secs(30),
        async || requests(&s).await.next_paced_at.is_some(),
    )
    .await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(s.total_requests().await, 1, "one sync, the rest paced");
    let shown = requests(&s).await;
    assert_eq!((shown.limit_per_hour, shown.reserved_per_hour), (8, 4));
    s.wait_budget("household", BudgetPhase::Ready).await;

    s.create_plan("september", "household", bakery_and_train_plan())
        .await;
    s.approve_plan("september").await;
    let counters = s.sim.control().counters().await.unwrap();
    assert_eq!(
        counters.total, 3,
        "the fresh read and one PATCH: {counters:?}"
    );
    assert_eq!(counters.endpoint(PATCH), 1);
    eventually(
        "the status counts the hour by why each request went out",
        Duration::from_secs(30),
        async || {
            requests(&s).await.by_priority.is_some_and(|by| {
                (by.approved, by.asked, by.unasked, by.background) == (2, 0, 0, 1)
            })
        },
    )
    .await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(s.total_requests().await, 3, "the pace still holds");
}

/// An editor (ledgerops-edit, as any automation with `edit` may be) annotating the Budget in a
/// loop to spend the share kept for people: three asked syncs run in ten minutes, the rest wait,
/// and the Budget says so in one Event.
#[tokio::test]
async fn an_editor_asking_for_syncs_in_a_loop_spends_three() {
    let s = household("asking", json!({"syncInterval": "1h"})).await;
    let carol = attacker::editor(ControlPlane::shared(), &s.ns, "carol").await;
    let budgets = Api::<Budget>::namespaced(carol, &s.ns);
    for i in 0..10 {
        let ask = json!({"metadata": {"annotations": {"ledgerops.dev/sync-requested-at": format!("ask-{i}")}}});
        budgets
            .patch("household", &PatchParams::default(), &Patch::Merge(&ask))
            .await
            .expect("an editor may ask for a sync");
        tokio::time::sleep(Duration::from_millis(400)).await;
    }
    let events = Api::<Event>::namespaced(s.client.clone(), &s.ns);
    eventually(
        "the Budget says the asked syncs wait",
        Duration::from_secs(30),
        async || {
            let list = events.list(&ListParams::default()).await.unwrap();
            list.items
                .iter()
                .any(|e| e.reason.as_deref() == Some("SyncAskedTooOften"))
        },
    )
    .await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let counters = s.sim.control().counters().await.unwrap();
    assert_eq!(
        counters.total, 4,
        "the first sync and three asked: {counters:?}"
    );
    assert_eq!(counters.writes(), 0);
    eventually(
        "the status counts three asked syncs",
        Duration::from_secs(30),
        async || {
            requests(&s)
                .await
                .by_priority
                .is_some_and(|by| by.asked == 3)
        },
    )
    .await;
}

/// 24 an hour, none kept: a burst of two (one 5-minute span's share), then one every 2 min 44 s.
/// The first sync takes one, the write the policy runs unasked takes the other for its fresh
/// read, and its bulk update follows that read at once rather than wait for the next turn (and
/// send the read again then).
#[tokio::test]
async fn an_unasked_write_follows_its_read_at_the_edge_of_the_burst() {
    let s = household(
        "follows",
        json!({
            "writes": {"enabled": true},
            "requestsPerHour": 24,
            "reservedRequestsPercent": 0,
            "syncInterval": "1h",
            "approval": {"autoApproveBelow": "20", "askOnNewPayee": false}
        }),
    )
    .await;
    s.bakery_to_groceries().await;
    s.wait_transaction("bakery", TransactionPhase::Converged)
        .await;
    let counters = s.sim.control().counters().await.unwrap();
    assert_eq!(counters.total, 3, "sync, read, write: {counters:?}");
    assert_eq!(counters.endpoint(PATCH), 1);
}

/// Two syncs asked while the Budget waits for its turn behind a write (YNAB answering slowly):
/// the read that goes out once the write is done serves both, one request rather than two.
#[tokio::test]
async fn syncs_asked_while_the_budget_waits_for_its_turn_are_one_read() {
    let s = household(
        "together",
        json!({
            "writes": {"enabled": true},
            "syncInterval": "1h",
            "approval": {"autoApproveBelow": "20", "askOnNewPayee": false}
        }),
    )
    .await;
    let before = s.total_requests().await;
    s.sim.control().set_latency(1500).await.unwrap();
    s.bakery_to_groceries().await;
    eventually(
        "the write's fresh read is in flight, holding the Budget's turn",
        Duration::from_secs(30),
        async || s.total_requests().await > before,
    )
    .await;
    for ask in ["sync, please", "and again"] {
        s.annotate::<Budget>("household", "ledgerops.dev/sync-requested-at", ask)
            .await;
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    s.wait_transaction("bakery", TransactionPhase::Converged)
        .await;
    eventually("the asked sync", Duration::from_secs(30), async || {
        s.total_requests().await == before + 3
    })
    .await;
    tokio::time::sleep(Duration::from_secs(4)).await;
    s.sim.control().set_latency(0).await.unwrap();
    let counters = s.sim.control().counters().await.unwrap();
    assert_eq!(
        counters.total,
        before + 3,
        "the write's read and bulk update, and one sync for both asks: {counters:?}"
    );
    assert_eq!(counters.endpoint(PATCH), 1);
}
