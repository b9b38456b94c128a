use super::*;

#[test]
fn renders_counters_with_their_labels() {
    let m = Metrics::default();
    m.ynab_requests
        .get_or_create(&RequestLabels {
            endpoint: "GET /plans/{plan_id}",
            status: "200".into(),
            priority: "approved",
        })
        .inc();
    m.reconcile_errors
        .get_or_create(&ErrorLabels {
            kind: "Budget",
            reason: "Unauthorized",
        })
        .inc();
    let text = m.render();
    assert!(
        text.contains(
            r#"ledgerops_ynab_requests_total{endpoint="GET /plans/{plan_id}",status="200",priority="approved"} 1"#
        ),
        "{text}"
    );
    assert!(
        text.contains(r#"ledgerops_reconcile_errors_total{kind="Budget",reason="Unauthorized"} 1"#),
        "{text}"
    );
    assert!(text.contains("ledgerops_budget_sync_duration_seconds_bucket"));
}

#[test]
fn the_budget_gauges_are_computed_at_each_scrape() {
    let m = Metrics::default();
    assert!(
        !m.render().contains("approval_requests_waiting"),
        "a standby shows no Budget gauges"
    );
    let rows = std::sync::Mutex::new(vec![BudgetGauges {
        namespace: "home".into(),
        budget: "family".into(),
        ready: false,
        suspended: false,
        autopilot_stopped: true,
        waiting: 2,
        oldest_waiting_seconds: 90.5,
        expired_unanswered: 1,
        last_sync_seconds: Some(1_790_000_000),
        requests: Some(crate::logic::status::alerts::RequestUse {
            used: 45,
            limit: 180,
        }),
    }]);
    let shown = Arc::new(rows);
    m.observe_state(Box::new({
        let shown = shown.clone();
        move |_| shown.lock().unwrap().clone()
    }));
    let text = m.render();
    let labels = r#"{namespace="home",budget="family"}"#;
    for line in [
        format!("ledgerops_approval_requests_waiting{labels} 2"),
        format!("ledgerops_approval_request_oldest_waiting_seconds{labels} 90.5"),
        format!("ledgerops_approval_requests_expired_unanswered{labels} 1"),
        format!("ledgerops_budget_last_sync_timestamp_seconds{labels} 1790000000"),
        format!("ledgerops_budget_ready{labels} 0"),
        format!("ledgerops_budget_suspended{labels} 0"),
        format!("ledgerops_autopilot_stopped{labels} 1"),
        format!("ledgerops_ynab_requests_last_hour{labels} 45"),
        format!("ledgerops_ynab_requests_hourly_limit{labels} 180"),
        format!("ledgerops_ynab_request_budget_used_ratio{labels} 0.25"),
    ] {
        assert!(text.contains(&line), "{line} in\n{text}");
    }
    shown.lock().unwrap().clear();
    assert!(
        !m.render().contains(labels),
        "a deleted Budget leaves no series"
    );
}

#[test]
fn a_measured_reconcile_is_counted_and_timed_by_kind() {
    let metrics = Arc::new(Metrics::default());
    drop(Measure::start(&metrics, "Transaction"));
    let text = metrics.render();
    assert!(
        text.contains("ledgerops_reconciles_total{kind=\"Transaction\"} 1"),
        "{text}"
    );
    assert!(
        text.contains("ledgerops_reconcile_duration_seconds_count{kind=\"Transaction\"} 1"),
        "{text}"
    );
}

#[test]
fn a_stopwatch_reports_only_the_steps_a_person_waits_on() {
    let m = Metrics::default();
    let mut unasked = Stopwatch::start();
    unasked.lap("read");
    unasked.report(&m);
    assert!(!m.render().contains("approved_write_step_seconds_count"));
    let mut approved = Stopwatch::start();
    approved.lap("read");
    approved.person_waits();
    approved.lap("ynab");
    approved.report(&m);
    let text = m.render();
    for step in ["read", "ynab"] {
        assert!(
            text.contains(&format!(
                r#"ledgerops_approved_write_step_seconds_count{{step="{step}"}} 1"#
            )),
            "{text}"
        );
    }
}
