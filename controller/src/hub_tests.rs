//! Unit tests of `hub.rs` against a local HTTP server standing in for the hub.

use std::sync::Mutex;
use std::time::Duration;

use axum::http::StatusCode;
use axum::routing::post;

use super::*;
use crate::logic::status::hub::{Involved, Published};

/// A hub that answers each post with the next of `answers` (the last one from then on) and
/// keeps what it was sent. `hang`: it never answers.
async fn hub(answers: Vec<u16>, hang: bool) -> (String, Arc<Mutex<Vec<serde_json::Value>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let kept = seen.clone();
    let app = axum::Router::new().route(
        "/",
        post(move |body: axum::Json<serde_json::Value>| {
            let kept = kept.clone();
            let answers = answers.clone();
            async move {
                if hang {
                    std::future::pending::<()>().await;
                }
                let mut seen = kept.lock().unwrap();
                seen.push(body.0);
                let n = seen.len().min(answers.len()) - 1;
                StatusCode::from_u16(answers[n]).unwrap()
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    (format!("http://{addr}/"), seen)
}

fn event(reason: &str) -> HubEvent {
    let object = serde_json::json!({"spec": {"budgetRef": {"name": "home"}}});
    hub::event(
        Published {
            involved: Involved {
                kind: "Transaction".into(),
                name: "t1".into(),
                ..Involved::default()
            },
            warning: true,
            reason,
            note: "bob edited it in YNAB",
            object: &object,
            instance: "ledgerops-0",
        },
        k8s_openapi::jiff::Timestamp::UNIX_EPOCH,
    )
}

fn dropped(metrics: &Metrics, reason: &'static str) -> u64 {
    metrics
        .hub_events_dropped
        .get_or_create(&HubDropLabels { reason })
        .get()
}

async fn until(what: &str, done: impl Fn() -> bool) {
    for _ in 0..200 {
        if done() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("timed out waiting until {what}");
}

#[tokio::test]
async fn a_hub_that_is_down_for_a_while_gets_the_event_once_it_is_back() {
    let (url, seen) = hub(vec![503, 502, 202], false).await;
    let metrics = Metrics::default();
    let h = Hub::start(&url, "ledgerops-0", &metrics).unwrap();
    h.post(event("Diverged"));
    until("delivered", || metrics.hub_events_delivered.get() == 1).await;
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 3, "two failed posts and the one taken");
    assert_eq!(seen[2]["reason"], "Diverged");
    assert_eq!(seen[2]["severity"], "error");
    assert_eq!(seen[2]["involvedObject"]["kind"], "Transaction");
    assert_eq!(seen[2]["metadata"]["ledgerops.dev/budget"], "/home");
    assert_eq!(dropped(&metrics, "undeliverable"), 0);
}

#[tokio::test]
async fn a_duplicate_the_hub_already_has_is_delivered_and_a_refused_one_dropped() {
    let (url, seen) = hub(vec![429, 400], false).await;
    let metrics = Metrics::default();
    let h = Hub::start(&url, "ledgerops-0", &metrics).unwrap();
    h.post(event("Diverged"));
    h.post(event("Failed"));
    until("both settled", || dropped(&metrics, "refused") == 1).await;
    assert_eq!(metrics.hub_events_delivered.get(), 1);
    assert_eq!(seen.lock().unwrap().len(), 2, "neither was posted again");
}

#[tokio::test]
async fn a_hub_that_never_answers_is_given_up_on_and_counted() {
    let metrics = Metrics::default();
    // Nothing listens on port 1: every post fails at once, so only the backoff takes time.
    let h = Hub::start("http://127.0.0.1:1/", "ledgerops-0", &metrics).unwrap();
    h.post(event("Diverged"));
    until("dropped", || dropped(&metrics, "undeliverable") == 1).await;
    assert_eq!(metrics.hub_events_delivered.get(), 0);
}

#[tokio::test]
async fn a_burst_beyond_the_queue_is_dropped_without_waiting() {
    let (url, _) = hub(vec![202], true).await;
    let metrics = Metrics::default();
    let h = Hub::start(&url, "ledgerops-0", &metrics).unwrap();
    for _ in 0..QUEUE + 10 {
        h.post(event("Written"));
    }
    // The worker holds at most one; the queue the next QUEUE; the rest are dropped, at once.
    let full = dropped(&metrics, "queue_full");
    assert!((9..=10).contains(&full), "{full} dropped");
}

#[test]
fn only_an_http_url_is_a_hub() {
    let metrics = Metrics::default();
    for bad in [
        "",
        "notification-controller",
        "ftp://hub/",
        "file:///tmp/x",
        "http://",
    ] {
        let e = Hub::start(bad, "x", &metrics).err();
        assert!(matches!(e, Some(HubError::Address(_))), "{bad}");
    }
}
