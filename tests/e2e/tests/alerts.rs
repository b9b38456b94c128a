//! What a person is alerted on, with `ledgerops run` on a real API server: the metrics the
//! chart's PrometheusRule watches, scraped and checked with promtool (the escalation of an
//! expired ApprovalRequest in Gitea is the inbox's: `inbox.rs`).

use kube::api::{DeleteParams, PostParams};
use ledgerops::api::approval::{ApprovalPhase, ApprovalRequest};
use ledgerops::api::budget::Budget;
use ledgerops_e2e::controller::Ledgerops;
use ledgerops_e2e::scenario::{PATCH, WAIT, bakery_and_train_plan, by_admin, household};
use ledgerops_e2e::{promtool, wait};
use serde_json::json;
use ynab_sim::demo;

/// The gauges the chart's alerts are written on.
const GAUGES: [&str; 10] = [
    "ledgerops_approval_requests_waiting",
    "ledgerops_approval_request_oldest_waiting_seconds",
    "ledgerops_approval_requests_expired_unanswered",
    "ledgerops_budget_last_sync_timestamp_seconds",
    "ledgerops_budget_ready",
    "ledgerops_budget_suspended",
    "ledgerops_autopilot_stopped",
    "ledgerops_ynab_requests_last_hour",
    "ledgerops_ynab_requests_hourly_limit",
    "ledgerops_ynab_request_budget_used_ratio",
];

/// The value of the sample of `metric` with exactly `labels`, if the exposition has one.
fn sample(text: &str, metric: &str, labels: &str) -> Option<f64> {
    let prefix = format!("{metric}{{{labels}}} ");
    text.lines()
        .find_map(|l| l.strip_prefix(&prefix))
        .map(|v| v.parse().expect("a number"))
}

#[tokio::test]
async fn the_alert_metrics_follow_the_budgets_and_requests_and_pass_promtool() {
    let s = household("alertmetrics", json!({"writes": {"enabled": true}})).await;
    let controller = Ledgerops::shared().await;
    // A Budget whose token Secret does not exist: never Ready.
    let broken: Budget = serde_json::from_value(json!({
        "apiVersion": "ledgerops.dev/v1alpha1", "kind": "Budget", "metadata": by_admin("broken"),
        "spec": {"planId": demo::PLAN_ID, "tokenSecretRef": {"name": "nowhere"}, "apiUrl": s.sim.api_url()},
    }))
    .unwrap();
    s.api::<Budget>()
        .create(&PostParams::default(), &broken)
        .await
        .unwrap();
    s.create_plan("september", "household", bakery_and_train_plan())
        .await;
    let request = s.plan_request("september").await;
    wait::until(&s.api::<ApprovalRequest>(), &request, WAIT, |r| {
        r.status.as_ref().and_then(|st| st.phase) == Some(ApprovalPhase::Pending)
    })
    .await;

    let label = |budget: &str| format!(r#"namespace="{}",budget="{budget}""#, s.ns);
    let (household, broken) = (label("household"), label("broken"));
    let mut text = String::new();
    wait::eventually("the gauges show both Budgets", WAIT, async || {
        text = controller.metrics().await;
        sample(&text, "ledgerops_budget_ready", &broken) == Some(0.0)
            && sample(&text, "ledgerops_approval_requests_waiting", &household) == Some(1.0)
    })
    .await;
    // Only the gauges: the counters are exposed as OpenMetrics (`# HELP x` over `x_total`
    // samples), which promtool's Prometheus-text lint reads as counters without help.
    let gauges: String = text
        .lines()
        .filter(|l| {
            let name = l
                .trim_start_matches("# HELP ")
                .trim_start_matches("# TYPE ");
            GAUGES
                .iter()
                .any(|g| name.starts_with(&format!("{g} ")) || name.starts_with(&format!("{g}{{")))
        })
        .map(|l| format!("{l}\n"))
        .collect();
    assert_eq!(
        gauges.lines().filter(|l| l.starts_with("# HELP")).count(),
        GAUGES.len(),
        "{gauges}"
    );
    promtool::check_metrics(&gauges).unwrap_or_else(|e| panic!("promtool: {e}\n{gauges}"));
    check_dashboard();
    assert_eq!(
        sample(&text, "ledgerops_budget_ready", &household),
        Some(1.0)
    );
    assert_eq!(
        sample(&text, "ledgerops_budget_suspended", &household),
        Some(0.0)
    );
    assert_eq!(
        sample(&text, "ledgerops_autopilot_stopped", &household),
        Some(0.0)
    );
    assert_eq!(
        sample(&text, "ledgerops_approval_requests_waiting", &broken),
        Some(0.0)
    );
    let age = sample(
        &text,
        "ledgerops_approval_request_oldest_waiting_seconds",
        &household,
    )
    .expect("the age of the waiting request");
    assert!((0.0..WAIT.as_secs_f64()).contains(&age), "{age}");
    // The household synced with its token; the broken Budget never reached YNAB.
    assert_eq!(
        sample(&text, "ledgerops_ynab_requests_hourly_limit", &household),
        Some(180.0)
    );
    let used = sample(&text, "ledgerops_ynab_requests_last_hour", &household).unwrap();
    let ratio = sample(
        &text,
        "ledgerops_ynab_request_budget_used_ratio",
        &household,
    )
    .unwrap();
    assert!(
        used >= 1.0 && (ratio - used / 180.0).abs() < 1e-9,
        "{used} {ratio}"
    );
    assert_eq!(
        sample(&text, "ledgerops_ynab_requests_last_hour", &broken),
        None
    );

    // Decided: nothing waits any more. Deleted: no series is left behind.
    s.decide(&request, "Reject", "not now").await;
    s.api::<Budget>()
        .delete("broken", &DeleteParams::default())
        .await
        .unwrap();
    wait::eventually("the gauges follow", WAIT, async || {
        text = controller.metrics().await;
        sample(&text, "ledgerops_approval_requests_waiting", &household) == Some(0.0)
            && !text.contains(&broken)
    })
    .await;
    assert_eq!(
        sample(
            &text,
            "ledgerops_approval_request_oldest_waiting_seconds",
            &household
        ),
        Some(0.0)
    );
    assert_eq!(s.requests(PATCH).await, 0);
}

/// The chart's Grafana dashboard: every query is PromQL that promtool accepts, Grafana's
/// variables given values as Grafana would (that it names only metrics ledgerops exposes is the
/// controller's unit test `metrics_tests::the_charts_dashboard_and_alerts_name_only_exposed_metrics`).
fn check_dashboard() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../charts/ledgerops/dashboards/ledgerops.json"
    );
    let text = std::fs::read_to_string(path).expect("the chart's dashboard");
    let dashboard: serde_json::Value = serde_json::from_str(&text).expect("dashboard JSON");
    let mut rules = String::from("groups:\n  - name: dashboard\n    rules:\n");
    let mut queries = 0;
    for panel in dashboard["panels"].as_array().expect("panels") {
        for target in panel["targets"].as_array().into_iter().flatten() {
            let expr = target["expr"].as_str().expect("an expr");
            let expr = expr
                .replace("$__rate_interval", "5m")
                .replace("$namespace", ".*")
                .replace("$budget", ".*");
            queries += 1;
            rules.push_str(&format!(
                "      - record: dashboard:query{queries}\n        expr: {}\n",
                serde_json::to_string(&expr).unwrap()
            ));
        }
    }
    assert!(queries >= 15, "{queries} queries in the dashboard");
    promtool::check_rules(&rules).unwrap_or_else(|e| panic!("promtool: {e}\n{rules}"));
}
