//! Events to the notification hub operators run, on the real thing: Flux's notification-controller
//! built from its Go module, its Alert CRD patched with the file ledgerops ships
//! (`examples/flux-notifications/alerts-crd-patch.yaml`), and a `generic-hmac` Provider delivering
//! to a webhook here that checks every signature. A request waiting for a person, its expiry and
//! a Transaction someone changed in YNAB each reach the webhook with the right severity and the
//! Budget and request named; a restart posts nothing again.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Bytes;
use axum::http::{HeaderMap, StatusCode};
use hmac::{KeyInit, Mac};
use ledgerops::api::approval::{ApprovalPhase, ApprovalRequest};
use ledgerops::api::transaction::TransactionPhase;
use ledgerops_e2e::scenario::{PATCH, WAIT, category};
use ledgerops_e2e::wait;
use ledgerops_e2e::world::World;
use ledgerops_testenv::ControlPlane;
use ledgerops_testenv::flux::NotificationController;
use ledgerops_testenv::gitea::Gitea;
use serde_json::{Value, json};

/// The key the Provider signs with and the webhook checks.
const KEY: &str = "household-hook-key-0123456789";

/// What the webhook received: each body, and whether its signature held.
type Received = Arc<Mutex<Vec<(bool, Value)>>>;

/// A webhook on a free loopback port that keeps every post and checks its `X-Signature`
/// (`sha256=` and the hex HMAC-SHA256 of the body under [`KEY`]), as a receiver of Flux's
/// generic-hmac Provider must.
async fn webhook() -> (String, Received) {
    let got: Received = Arc::default();
    let kept = got.clone();
    let app = axum::Router::new().route(
        "/hook",
        axum::routing::post(move |headers: HeaderMap, body: Bytes| {
            let kept = kept.clone();
            async move {
                let mut mac = hmac::Hmac::<sha2::Sha256>::new_from_slice(KEY.as_bytes()).unwrap();
                mac.update(&body);
                let want = format!("sha256={}", hex::encode(mac.finalize().into_bytes()));
                let signed = headers
                    .get("X-Signature")
                    .is_some_and(|s| s.as_bytes() == want.as_bytes());
                let event = serde_json::from_slice(&body).unwrap_or(Value::Null);
                kept.lock().unwrap().push((signed, event));
                StatusCode::OK
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    (url, got)
}

/// The hub: Flux's notification-controller, with ledgerops's kinds added to its Alert API by the
/// patch ledgerops ships. It drops a repeat for one second only, so a repeat would show.
async fn hub(plane: &ControlPlane) -> NotificationController {
    let hub = NotificationController::start(plane, Duration::from_secs(1))
        .await
        .unwrap();
    let patch = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/flux-notifications/alerts-crd-patch.yaml"
    );
    plane
        .kubectl_ok(&[
            "patch",
            "crd",
            "alerts.notification.toolkit.fluxcd.io",
            "--type=json",
            "--patch-file",
            patch,
        ])
        .unwrap();
    hub
}

/// The household's Secret, Provider and Alert: every ledgerops Event of `ns`, info and up, to
/// `url`, signed.
fn subscribe(plane: &ControlPlane, ns: &str, url: &str) {
    let sources: Vec<Value> = [
        "ApprovalRequest",
        "CategorizationPlan",
        "Transaction",
        "Budget",
    ]
    .iter()
    .map(|kind| json!({"kind": kind, "name": "*"}))
    .collect();
    let docs = [
        json!({"apiVersion": "v1", "kind": "Secret",
               "metadata": {"name": "household-hook", "namespace": ns},
               "stringData": {"token": KEY}}),
        json!({"apiVersion": "notification.toolkit.fluxcd.io/v1beta3", "kind": "Provider",
               "metadata": {"name": "household-hook", "namespace": ns},
               "spec": {"type": "generic-hmac", "address": url,
                        "secretRef": {"name": "household-hook"}}}),
        json!({"apiVersion": "notification.toolkit.fluxcd.io/v1beta3", "kind": "Alert",
               "metadata": {"name": "household", "namespace": ns},
               "spec": {"providerRef": {"name": "household-hook"}, "eventSeverity": "info",
                        "eventSources": sources}}),
    ];
    let file = plane.dir().join(format!("hub-{ns}.json"));
    let list = json!({"apiVersion": "v1", "kind": "List", "items": docs});
    std::fs::write(&file, list.to_string()).unwrap();
    plane
        .kubectl_ok(&["apply", "-f", &file.to_string_lossy()])
        .unwrap();
}

/// Waits until the webhook got an Event of `kind` `name` with `reason`; returns it.
async fn delivered(got: &Received, kind: &str, name: &str, reason: &str) -> Value {
    let find = || {
        got.lock()
            .unwrap()
            .iter()
            .map(|(_, e)| e)
            .find(|e| {
                e["involvedObject"]["kind"] == kind
                    && e["involvedObject"]["name"] == name
                    && e["reason"] == reason
            })
            .cloned()
    };
    let what = format!("{kind} {name} {reason} reaches the webhook");
    wait::eventually(&what, WAIT, async || find().is_some()).await;
    find().unwrap()
}

#[tokio::test]
async fn waiting_expired_and_diverged_reach_the_hub_signed_and_a_restart_posts_nothing_again() {
    let plane = ControlPlane::shared();
    let hub = hub(plane).await;
    let (url, got) = webhook().await;
    let escalate = Gitea::shared().writer().login().to_owned();
    // The bakery Transaction (8.40) is approved by policy; the plan on the train (45.00) waits.
    let household = json!({
        "writes": {"enabled": true, "batchWindow": "300ms"},
        "approval": {"expiry": "1m", "escalateTo": [escalate], "autoApproveBelow": "20",
                     "askOnNewPayee": false},
    });
    let events = hub.events_url();
    let mut w = World::build("hub")
        .agent(&[])
        .args(&["--events-address", &events])
        .household(household)
        .build()
        .await;
    let ns = w.sc.ns.clone();
    subscribe(plane, &ns, &url);
    // The inbox too: the config repository in Gitea, where the waiting request is an issue.
    w.follow_repo(json!({})).await;

    // Waiting: told as news, naming the Budget and the request.
    let train = json!({"assignments": [
        {"transactionId": "tx-049", "categoryId": category("Transport")}
    ]});
    w.sc.create_plan("september", "household", train).await;
    let request = w.sc.plan_request("september").await;
    let waiting = delivered(&got, "CategorizationPlan", "september", "AwaitingApproval").await;
    assert_eq!(waiting["severity"], "info", "{waiting:#}");
    assert_eq!(waiting["reportingController"], "ledgerops");
    // The hub passes on the keys under ledgerops's group, the group cut off.
    assert_eq!(
        waiting["metadata"],
        json!({"budget": format!("{ns}/household"), "approvalRequest": request}),
        "{waiting:#}"
    );

    // Diverged: the spouse recategorises in YNAB what the controller had written.
    w.sc.bakery_to_groceries().await;
    w.sc.wait_transaction("bakery", TransactionPhase::Converged)
        .await;
    w.sc.recategorise_in_ynab("tx-048", "Restaurants").await;
    w.sc.wait_transaction("bakery", TransactionPhase::Diverged)
        .await;
    let diverged = delivered(&got, "Transaction", "bakery", "Diverged").await;
    assert_eq!(diverged["severity"], "error", "{diverged:#}");
    assert!(
        diverged["message"]
            .as_str()
            .is_some_and(|m| m.contains("Restaurants")),
        "{diverged:#}"
    );

    // Expired unanswered: an error, on the request, naming whom to escalate to.
    wait::until(&w.sc.api::<ApprovalRequest>(), &request, WAIT, |r| {
        r.status.as_ref().and_then(|s| s.phase) == Some(ApprovalPhase::Expired)
    })
    .await;
    let expired = delivered(&got, "ApprovalRequest", &request, "Escalated").await;
    assert_eq!(expired["severity"], "error", "{expired:#}");
    assert!(
        expired["message"]
            .as_str()
            .is_some_and(|m| m.contains(&escalate)),
        "{expired:#}"
    );

    // The plan follows its request: its Expired reaches the hub too, before the count is taken.
    let plan_expired = delivered(&got, "CategorizationPlan", "september", "Expired").await;
    assert_eq!(plan_expired["severity"], "error", "{plan_expired:#}");

    // Every delivery was signed with the Provider's key; nothing was dropped on the way.
    let received = got.lock().unwrap().clone();
    assert!(received.iter().all(|(signed, _)| *signed), "{received:#?}");
    let metrics = w.controller().metrics().await;
    assert!(
        !metrics.contains("ledgerops_hub_events_dropped_total{"),
        "{metrics}"
    );

    // A restart posts nothing it posted before (the hub would pass a repeat after a second).
    w.restart_until_logged("expired request already announced in Gitea")
        .await;
    tokio::time::sleep(Duration::from_secs(5)).await;
    let after = got.lock().unwrap().clone();
    let new: Vec<&Value> = after[received.len()..].iter().map(|(_, e)| e).collect();
    assert!(new.is_empty(), "posted again after a restart: {new:#?}");
    assert_eq!(w.sc.requests(PATCH).await, 1, "only the bakery was written");
}
