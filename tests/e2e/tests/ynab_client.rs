//! The YNAB client against the simulator: delta requests, error mapping, retries, the request
//! budget, and a token that never shows.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use ledgerops::leadership::Leadership;
use ledgerops::logic::budget::api_url::ApiUrlAllowlist;
use ledgerops::logic::runtime::lease::Timing;
use ledgerops::logic::runtime::request_priority::Priority;
use ledgerops::logic::runtime::request_window::RequestWindow;
use ledgerops::logic::values::token::Token;
use ledgerops::metrics::Metrics;
use ledgerops::ynab::client::YnabClient;
use ledgerops::ynab::error::YnabError;
use serde_json::json;
use ynab_sim::{RecordKind, RequestMatch, RunningSim, SimConfig, Simulator, StatusFault, demo};

async fn sim() -> RunningSim {
    Simulator::start(SimConfig {
        fixture: Some(demo::generate()),
        ..Default::default()
    })
    .await
    .expect("simulator")
}

fn client(sim: &RunningSim, token: &str, limit: u32) -> YnabClient {
    let window = Arc::new(Mutex::new(RequestWindow::new(limit)));
    let base = ApiUrlAllowlist::parse(["http://127.0.0.1:*/v1"])
        .and_then(|a| a.check(&sim.api_url()))
        .expect("the simulator's URL is allowed");
    YnabClient::new(
        &base,
        Token::new(token),
        window,
        Arc::new(Metrics::default()),
    )
    .expect("client")
}

fn fault(status: u16, count: u32) -> StatusFault {
    StatusFault {
        status,
        count,
        detail: None,
        only: RequestMatch::default(),
    }
}

#[tokio::test]
async fn a_delta_request_returns_only_what_changed() {
    let sim = sim().await;
    let ynab = client(&sim, demo::TOKEN, 180);
    let full = ynab
        .plan(demo::PLAN_ID, None, Priority::Approved)
        .await
        .unwrap();
    assert_eq!(
        full.plan.transactions.len(),
        demo::generate().plans[0].transactions.len()
    );
    let edit = json!({"memo": "edited in the app"});
    sim.control()
        .edit(demo::PLAN_ID, RecordKind::Transaction, "tx-048", &edit)
        .await
        .unwrap();
    let delta = ynab
        .plan(
            demo::PLAN_ID,
            Some(full.server_knowledge),
            Priority::Approved,
        )
        .await
        .unwrap();
    assert!(delta.server_knowledge > full.server_knowledge);
    let ids: Vec<&str> = delta
        .plan
        .transactions
        .iter()
        .map(|t| t.id.as_str())
        .collect();
    assert_eq!(ids, ["tx-048"]);
    assert_eq!(
        delta.plan.transactions[0].memo.as_deref(),
        Some("edited in the app")
    );
    assert_eq!(sim.control().counters().await.unwrap().total, 2);
}

#[tokio::test]
async fn errors_name_the_record_and_say_what_to_do() {
    let sim = sim().await;
    let refused = client(&sim, "wrong-token", 180)
        .plan(demo::PLAN_ID, None, Priority::Approved)
        .await
        .unwrap_err();
    assert!(
        matches!(refused, YnabError::Unauthorized { .. }),
        "{refused:?}"
    );
    assert!(refused.to_string().contains("spec.tokenSecretRef"));

    let missing = "0d9e8f7a-6b5c-4d3e-8f2a-1b0c9d8e7f6a";
    let unknown = client(&sim, demo::TOKEN, 180)
        .plan(missing, None, Priority::Approved)
        .await
        .unwrap_err();
    assert!(matches!(unknown, YnabError::NotFound { .. }), "{unknown:?}");
    assert!(unknown.to_string().contains(missing), "{unknown}");
}

#[tokio::test]
async fn reads_are_retried_after_server_errors_but_a_429_is_not() {
    let sim = sim().await;
    let ynab = client(&sim, demo::TOKEN, 180);
    sim.control().inject_status(&fault(503, 2)).await.unwrap();
    ynab.plan(demo::PLAN_ID, None, Priority::Approved)
        .await
        .expect("the third attempt succeeds");
    assert_eq!(sim.control().counters().await.unwrap().total, 3);

    sim.control().inject_status(&fault(429, 1)).await.unwrap();
    let limited = ynab
        .plan(demo::PLAN_ID, None, Priority::Approved)
        .await
        .unwrap_err();
    assert!(
        matches!(limited, YnabError::RateLimited { .. }),
        "{limited:?}"
    );
    // Paused: the next call does not reach YNAB.
    let paused = ynab
        .plan(demo::PLAN_ID, None, Priority::Approved)
        .await
        .unwrap_err();
    assert!(
        matches!(paused, YnabError::RateLimited { .. }),
        "{paused:?}"
    );
    assert_eq!(sim.control().counters().await.unwrap().total, 4);
}

#[tokio::test]
async fn the_request_budget_stops_requests_before_ynab_would() {
    let sim = sim().await;
    let ynab = client(&sim, demo::TOKEN, 2);
    ynab.plan(demo::PLAN_ID, None, Priority::Approved)
        .await
        .unwrap();
    ynab.plan(demo::PLAN_ID, None, Priority::Approved)
        .await
        .unwrap();
    let spent = ynab
        .plan(demo::PLAN_ID, None, Priority::Approved)
        .await
        .unwrap_err();
    assert!(
        matches!(spent, YnabError::BudgetSpent { limit: 2, .. }),
        "{spent:?}"
    );
    assert_eq!(
        sim.control().counters().await.unwrap().total,
        2,
        "the third request never left"
    );
}

#[tokio::test]
async fn the_token_never_shows() {
    let sim = sim().await;
    let ynab = client(&sim, "s3cr3t-token-value", 180);
    let error = ynab
        .plan(demo::PLAN_ID, None, Priority::Approved)
        .await
        .unwrap_err();
    for shown in [
        format!("{ynab:?}"),
        format!("{error}"),
        format!("{error:?}"),
    ] {
        assert!(!shown.contains("s3cr3t"), "{shown}");
    }
}

#[tokio::test]
async fn an_error_body_is_summarised_never_repeated() {
    let sim = sim().await;
    let marker = "BODY-MARKER-7f3a\u{1b}[31m";
    let loud = StatusFault {
        detail: Some(format!("{marker} password=hunter2")),
        ..fault(500, 3)
    };
    sim.control().inject_status(&loud).await.unwrap();
    let error = client(&sim, demo::TOKEN, 180)
        .plan(demo::PLAN_ID, None, Priority::Approved)
        .await
        .unwrap_err();
    let shown = error.to_string();
    assert!(
        shown.contains("HTTP 500, YNAB error 500 internal_server_error"),
        "{shown}"
    );
    for leaked in ["BODY-MARKER", "hunter2", "\u{1b}"] {
        assert!(!shown.contains(leaked), "{shown}");
        assert!(!format!("{error:?}").contains(leaked), "{error:?}");
    }
}

#[tokio::test]
async fn a_replica_that_does_not_lead_sends_nothing() {
    let sim = sim().await;
    let timing = Timing::new(
        Duration::from_secs(15),
        Duration::from_secs(10),
        Duration::from_secs(2),
    )
    .unwrap();
    let leadership = Leadership::elected(timing);
    let ynab = client(&sim, demo::TOKEN, 180).led_by(leadership.clone());
    let refused = ynab
        .plan(demo::PLAN_ID, None, Priority::Approved)
        .await
        .unwrap_err();
    assert!(matches!(refused, YnabError::NotLeader { .. }), "{refused}");
    assert!(
        refused.is_transient(),
        "the leader does it: nothing to report as failed"
    );
    assert_eq!(sim.control().counters().await.unwrap().total, 0);

    leadership.renewed(std::time::Instant::now());
    ynab.plan(demo::PLAN_ID, None, Priority::Approved)
        .await
        .unwrap();
    leadership.lost();
    let items = vec![];
    assert!(matches!(
        ynab.patch_transactions(demo::PLAN_ID, items, Priority::Approved)
            .await,
        Err(YnabError::NotLeader { .. })
    ));
    assert_eq!(sim.control().counters().await.unwrap().total, 1);
}
