//! Transactions with `ledgerops run` as a process, a real API server and the YNAB simulator:
//! convergence at scale with a constant number of requests, divergence without a write,
//! guards, approval before writing, read-only Budgets, and faults in the middle of a batch.

use std::time::Duration;

use kube::ResourceExt;
use kube::api::{Api, ListParams, Patch, PatchParams};
use ledgerops::api::approval::ApprovalRequest;
use ledgerops::api::budget::BudgetPhase;
use ledgerops::api::transaction::{Transaction, TransactionPhase};
use ledgerops::logic::status::conditions;
use ledgerops_e2e::attacker::automation;
use ledgerops_e2e::controller::Ledgerops;
use ledgerops_e2e::scenario::{PATCH, Scenario, WAIT, category, demo_with_uncategorised};
use ledgerops_e2e::wait;
use ledgerops_testenv::ControlPlane;
use serde_json::json;
use ynab_sim::{RequestMatch, StatusFault, demo};

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

/// A scenario whose Budget writes without asking, synced and ready.
async fn writing(prefix: &str, budget: serde_json::Value) -> Scenario {
    let s = scenario(prefix, 0).await;
    s.create_writing_budget("household", budget).await;
    s.wait_budget("household", BudgetPhase::Ready).await;
    s
}

fn reason(tx: &Transaction, type_: &str) -> (String, String, String) {
    let c = conditions::get(&tx.status.as_ref().unwrap().conditions, type_)
        .unwrap_or_else(|| panic!("no {type_} condition"));
    (c.status.clone(), c.reason.clone(), c.message.clone())
}

async fn converge_many(n: usize) -> (u64, u64) {
    let s = scenario(&format!("scale{n}"), n).await;
    // Reconciles of a thousand objects arrive over seconds, with pauses of a second or more on a
    // loaded machine (CI runs every suite at once on two cores): a three-second quiet window
    // keeps them in one batch.
    s.create_writing_budget("household", json!({"writes": {"batchWindow": "3s"}}))
        .await;
    s.wait_budget("household", BudgetPhase::Ready).await;
    let groceries = category("Groceries");
    let creates = (0..n).map(|i| {
        let s = &s;
        let groceries = groceries.clone();
        async move {
            let spec = json!({"categoryId": groceries});
            s.create_transaction(
                &format!("load-{i:05}"),
                "household",
                &format!("load-{i:05}"),
                spec,
            )
            .await;
        }
    });
    futures::future::join_all(creates).await;
    let api = s.api::<Transaction>();
    let deadline = std::time::Instant::now() + Duration::from_secs(240);
    loop {
        let list = api.list(&ListParams::default()).await.unwrap();
        let done = list
            .items
            .iter()
            .filter(|t| {
                t.status.as_ref().and_then(|s| s.phase) == Some(TransactionPhase::Converged)
            })
            .count();
        if done == n {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{done} of {n} converged in time"
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    for i in [0, n / 2, n - 1] {
        assert_eq!(
            s.ynab_category(&format!("load-{i:05}")).await,
            Some(groceries.clone())
        );
    }
    (s.requests(PATCH).await, s.total_requests().await)
}

#[tokio::test]
async fn a_thousand_transactions_converge_with_as_few_requests_as_ten() {
    let (patches_10, total_10) = converge_many(10).await;
    let (patches_1000, total_1000) = converge_many(1000).await;
    println!(
        "10 transactions: {total_10} requests ({patches_10} PATCH); 1000: {total_1000} ({patches_1000} PATCH)"
    );
    // A full sync, then per batch one delta read and one PATCH: the count depends on how the
    // reconciles fall into batch windows, never on N.
    assert!(
        patches_1000 <= 2,
        "{patches_1000} PATCH requests for 1000 transactions"
    );
    assert!(
        total_1000 <= total_10 + 2,
        "{total_1000} requests for 1000 transactions, {total_10} for 10"
    );
}

#[tokio::test]
async fn an_out_of_band_recategorisation_is_reported_and_not_overwritten() {
    let s = writing("diverge", json!({})).await;
    s.bakery_to_groceries().await;
    s.wait_transaction("bakery", TransactionPhase::Converged)
        .await;
    assert_eq!(s.requests(PATCH).await, 1);
    s.sim.control().reset_counters().await.unwrap();

    // The spouse moves it to Restaurants in the YNAB app; the next sync sees it.
    s.recategorise_in_ynab("tx-048", "Restaurants").await;
    let diverged = s
        .wait_transaction("bakery", TransactionPhase::Diverged)
        .await;
    let (status, _, message) = reason(&diverged, "Diverged");
    assert_eq!(status, "True");
    assert!(
        message.contains("Restaurants") && message.contains("Groceries"),
        "{message}"
    );
    assert_eq!(
        s.requests(PATCH).await,
        0,
        "a divergence is never overwritten"
    );
    assert_eq!(
        s.ynab_category("tx-048").await,
        Some(category("Restaurants"))
    );
    // `kubectl describe` shows it too: a Warning Event naming both categories.
    let why = reason(&diverged, "Ready").1;
    let event = s.wait_event(&why, Some("bakery")).await;
    assert_eq!(event.type_.as_deref(), Some("Warning"));
    let note = event.note.unwrap_or_default();
    assert!(
        note.contains("Restaurants") && note.contains("Groceries"),
        "{note}"
    );

    // Keeping theirs is a decision, not a write.
    s.annotate::<Transaction>("bakery", "ledgerops.dev/resolve", "theirs")
        .await;
    // The status records the decision first, then the annotation goes (see the reconciler).
    let kept = wait::until(&s.api::<Transaction>(), "bakery", WAIT, |t| {
        t.status.as_ref().and_then(|s| s.phase) == Some(TransactionPhase::Converged)
            && !t.annotations().contains_key("ledgerops.dev/resolve")
    })
    .await;
    assert_eq!(reason(&kept, "Ready").1, "AcceptedTheirs");
    assert_eq!(s.requests(PATCH).await, 0);
}

/// Anyone who may edit a Transaction can set `resolve: ours`, so it is asked like any write over
/// an edit, however small: an automation holding the built-in `edit` role gets an ApprovalRequest
/// and no write; a person's approval writes the spec once.
#[tokio::test]
async fn resolving_with_ours_asks_a_person_then_writes_the_spec_once() {
    let s = writing("ours", json!({})).await;
    s.create_transaction(
        "rail",
        "household",
        "tx-049",
        json!({"categoryId": category("Transport")}),
    )
    .await;
    s.wait_transaction("rail", TransactionPhase::Converged)
        .await;
    s.recategorise_in_ynab("tx-049", "Groceries").await;
    s.wait_transaction("rail", TransactionPhase::Diverged).await;
    s.sim.control().reset_counters().await.unwrap();
    let bot = automation(ControlPlane::shared(), &s.ns, "ci").await;
    // Admission puts whoever asks for ours on the lineage of the write.
    let lineage = format!("admin,system:serviceaccount:{}:ci", s.ns);
    let ours = json!({"metadata": {"annotations": {
        "ledgerops.dev/resolve": "ours", "ledgerops.dev/proposed-by": lineage}}});
    Api::<Transaction>::namespaced(bot, &s.ns)
        .patch("rail", &PatchParams::default(), &Patch::Merge(&ours))
        .await
        .expect("an editor may annotate");
    let waiting = s
        .wait_transaction("rail", TransactionPhase::AwaitingApproval)
        .await;
    let message = reason(&waiting, "AwaitingApproval").2;
    assert!(
        message.contains("tx-049 shows \"Groceries\"") && message.contains("a person decides"),
        "{message}"
    );
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(
        s.requests(PATCH).await,
        0,
        "nothing written on an annotation alone"
    );
    assert_eq!(s.ynab_category("tx-049").await, Some(category("Groceries")));

    let request = s.approval_requests().await.pop().expect("a request");
    assert_eq!(request.spec.proposed_by.join(","), lineage);
    s.decide(&request.name_any(), "Approve", "the spec wins")
        .await;
    s.wait_transaction("rail", TransactionPhase::Converged)
        .await;
    assert_eq!(s.requests(PATCH).await, 1);
    assert_eq!(s.ynab_category("tx-049").await, Some(category("Transport")));
}

#[tokio::test]
async fn a_reconciled_transaction_is_blocked_and_not_written() {
    let s = writing("reconciled", json!({})).await;
    s.create_transaction(
        "old",
        "household",
        "tx-062",
        json!({"categoryId": category("Groceries")}),
    )
    .await;
    let blocked = s.wait_transaction("old", TransactionPhase::Blocked).await;
    let (status, why, message) = reason(&blocked, "Blocked");
    assert_eq!((status.as_str(), why.as_str()), ("True", "Reconciled"));
    assert!(message.contains("tx-062"), "{message}");
    assert_eq!(s.requests(PATCH).await, 0);
}

#[tokio::test]
async fn a_closed_month_is_blocked() {
    let s = scenario("closed", 0).await;
    s.create_writing_budget("household", json!({"closedThrough": "2026-09"}))
        .await;
    s.wait_budget("household", BudgetPhase::Ready).await;
    s.bakery_to_groceries().await;
    let blocked = s
        .wait_transaction("bakery", TransactionPhase::Blocked)
        .await;
    assert_eq!(reason(&blocked, "Blocked").1, "ClosedMonth");
    assert_eq!(s.requests(PATCH).await, 0);
}

#[tokio::test]
async fn nothing_is_written_before_a_person_approves() {
    let s = scenario("approval", 0).await;
    s.create_budget(
        "household",
        demo::TOKEN,
        json!({"writes": {"enabled": true}, "approval": {"escalateTo": ["finance"]}}),
    )
    .await;
    s.wait_budget("household", BudgetPhase::Ready).await;
    s.bakery_to_groceries().await;
    let waiting = s
        .wait_transaction("bakery", TransactionPhase::AwaitingApproval)
        .await;
    assert!(
        reason(&waiting, "AwaitingApproval")
            .2
            .contains("autoApproveBelow")
    );
    let requests = s
        .api::<ApprovalRequest>()
        .list(&ListParams::default())
        .await
        .unwrap()
        .items;
    assert_eq!(requests.len(), 1);
    let request = &requests[0];
    assert_eq!(
        request.spec.changes[0].to_category.as_deref(),
        Some("Groceries")
    );
    assert_eq!(request.spec.changes[0].amount.0, "-8.40");
    assert_eq!(
        request.metadata.owner_references.as_ref().unwrap()[0].name,
        "bakery"
    );
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(s.requests(PATCH).await, 0, "no write before approval");

    let approve =
        json!({"spec": {"decision": {"verdict": "Approve", "by": "admin", "comment": "fine"}}});
    let name = request.metadata.name.clone().unwrap();
    s.api::<ApprovalRequest>()
        .patch(&name, &PatchParams::default(), &Patch::Merge(&approve))
        .await
        .unwrap();
    s.wait_transaction("bakery", TransactionPhase::Converged)
        .await;
    assert_eq!(s.requests(PATCH).await, 1);
}

#[tokio::test]
async fn a_read_only_budget_shows_what_would_change_and_its_first_write_keeps_an_edit_made_meanwhile()
 {
    let s = scenario("readonly", 0).await;
    s.create_budget(
        "household",
        demo::TOKEN,
        json!({"approval": {"autoApproveBelow": "1000"}}),
    )
    .await;
    s.wait_budget("household", BudgetPhase::Ready).await;
    s.bakery_to_groceries().await;
    let would = s
        .wait_transaction("bakery", TransactionPhase::WouldWrite)
        .await;
    let (_, why, message) = reason(&would, "Converged");
    assert_eq!(why, "WritesDisabled");
    assert!(message.contains("uncategorized → Groceries"), "{message}");
    assert_eq!(s.requests(PATCH).await, 0);

    // Someone categorises it in the YNAB app while it waits, then writes are enabled: its
    // first write holds to what YNAB showed when the spec was first read (the soak's
    // person-overwritten), so nothing is written and a person says which side wins.
    s.recategorise_in_ynab("tx-048", "Restaurants").await;
    let enable = json!({"spec": {"writes": {"enabled": true, "batchWindow": "300ms"}}});
    s.api::<ledgerops::api::budget::Budget>()
        .patch("household", &PatchParams::default(), &Patch::Merge(&enable))
        .await
        .unwrap();
    let diverged = s
        .wait_transaction("bakery", TransactionPhase::Diverged)
        .await;
    let (_, _, message) = reason(&diverged, "Diverged");
    assert!(message.contains("Restaurants"), "{message}");
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(
        s.ynab_category("tx-048").await,
        Some(category("Restaurants"))
    );
    assert_eq!(s.writes().await, 0);
}

#[tokio::test]
async fn server_errors_in_a_batch_are_retried_and_nothing_is_lost() {
    let s = writing("faults", json!({})).await;
    let only_patch = RequestMatch {
        method: Some("PATCH".into()),
        path: None,
        body_contains: None,
    };
    s.sim
        .control()
        .inject_status(&StatusFault {
            status: 503,
            count: 2,
            detail: None,
            only: only_patch,
        })
        .await
        .unwrap();
    for (name, id) in [("a", "tx-048"), ("b", "tx-049"), ("c", "tx-264")] {
        s.create_transaction(
            name,
            "household",
            id,
            json!({"categoryId": category("Groceries")}),
        )
        .await;
    }
    for name in ["a", "b", "c"] {
        s.wait_transaction(name, TransactionPhase::Converged).await;
    }
    for id in ["tx-048", "tx-049", "tx-264"] {
        assert_eq!(
            s.ynab_category(id).await,
            Some(category("Groceries")),
            "{id}"
        );
    }
    let counters = s.sim.control().counters().await.unwrap();
    assert_eq!(counters.status("503"), 2);
    assert!(s.requests(PATCH).await <= 5, "{counters:?}");
}

#[tokio::test]
async fn a_429_mid_batch_is_waited_out_and_nothing_is_lost() {
    let s = writing("toomany", json!({})).await;
    let only_patch = RequestMatch {
        method: Some("PATCH".into()),
        path: None,
        body_contains: None,
    };
    s.sim
        .control()
        .inject_status(&StatusFault {
            status: 429,
            count: 1,
            detail: None,
            only: only_patch,
        })
        .await
        .unwrap();
    s.bakery_to_groceries().await;
    let interrupted = s
        .wait_transaction("bakery", TransactionPhase::Interrupted)
        .await;
    assert!(
        reason(&interrupted, "Interrupted").2.contains("429"),
        "{:?}",
        reason(&interrupted, "Interrupted")
    );
    // YNAB asked for a pause; the write goes out after it, once.
    let done = ledgerops_e2e::wait::until(
        &s.api::<Transaction>(),
        "bakery",
        Duration::from_secs(150),
        |t| t.status.as_ref().and_then(|s| s.phase) == Some(TransactionPhase::Converged),
    )
    .await;
    assert_eq!(reason(&done, "Ready").1, "Written");
    assert_eq!(s.sim.control().counters().await.unwrap().status("429"), 1);
    assert_eq!(
        s.requests(PATCH).await,
        2,
        "the refused PATCH and the one that landed"
    );
}
