use super::*;

#[test]
fn renders_counters_with_their_labels() {
    let m = every_family_used();
    let text = m.render();
    assert!(
        text.contains(
            r#"ledgerops_ynab_requests_total{endpoint="GET /plans/{plan_id}",status="200",priority="background"} 1"#
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

#[test]
fn the_build_is_named_by_version_and_commit() {
    let text = Metrics::default().render();
    let line = text
        .lines()
        .find(|l| l.starts_with("ledgerops_build_info{"))
        .unwrap_or_else(|| panic!("no ledgerops_build_info in {text}"));
    assert!(
        line.starts_with(&format!(
            r#"ledgerops_build_info{{version="{}",commit=""#,
            env!("CARGO_PKG_VERSION")
        )),
        "{line}"
    );
    assert!(line.ends_with("} 1"), "{line}");
    assert!(text.contains("# TYPE ledgerops_build info"), "{text}");
}

/// Metrics in which every family has a sample (a family nobody used yet is not rendered).
fn every_family_used() -> Metrics {
    let m = Metrics::default();
    m.ynab_requests
        .get_or_create(&RequestLabels {
            endpoint: "GET /plans/{plan_id}",
            status: "200".into(),
            priority: "background",
        })
        .inc();
    m.reconcile_errors
        .get_or_create(&ErrorLabels {
            kind: "Budget",
            reason: "Unauthorized",
        })
        .inc();
    m.hub_events_dropped
        .get_or_create(&HubDropLabels {
            reason: "queue_full",
        })
        .inc();
    m.reconciles
        .get_or_create(&KindLabels { kind: "Budget" })
        .inc();
    m.reconcile_duration
        .get_or_create(&KindLabels { kind: "Budget" })
        .observe(0.1);
    m.approved_write_steps
        .get_or_create(&StepLabels { step: "ynab" })
        .observe(0.1);
    m.observe_state(Box::new(|_| {
        vec![BudgetGauges {
            namespace: "home".into(),
            budget: "family".into(),
            ready: true,
            suspended: false,
            autopilot_stopped: false,
            waiting: 0,
            oldest_waiting_seconds: 0.0,
            expired_unanswered: 0,
            last_sync_seconds: Some(1),
            requests: Some(crate::logic::status::alerts::RequestUse {
                used: 1,
                limit: 180,
            }),
        }]
    }));
    m
}

/// The `ledgerops_…` names in `text`.
fn metric_names(text: &str) -> std::collections::BTreeSet<&str> {
    let mut names = std::collections::BTreeSet::new();
    let mut rest = text;
    while let Some(at) = rest.find("ledgerops_") {
        let tail = &rest[at..];
        let end = tail
            .find(|c: char| !(c.is_ascii_lowercase() || c == '_'))
            .unwrap_or(tail.len());
        names.insert(&tail[..end]);
        rest = &tail[end..];
    }
    names
}

#[test]
fn the_charts_dashboard_and_alerts_name_only_exposed_metrics() {
    // The sample names each family allows, from its `# TYPE` line.
    let text = every_family_used().render();
    let mut exposed = Vec::new();
    for line in text.lines() {
        let Some((name, kind)) = line.strip_prefix("# TYPE ").and_then(|t| t.split_once(' '))
        else {
            continue;
        };
        let suffixes: &[&str] = match kind {
            "counter" => &["_total"],
            "histogram" => &["_bucket", "_sum", "_count"],
            "info" => &["_info"],
            _ => &[""],
        };
        exposed.extend(suffixes.iter().map(|s| format!("{name}{s}")));
    }
    for (file, text) in [
        (
            "dashboards/ledgerops.json",
            include_str!("../../charts/ledgerops/dashboards/ledgerops.json"),
        ),
        (
            "templates/prometheusrule.yaml",
            include_str!("../../charts/ledgerops/templates/prometheusrule.yaml"),
        ),
    ] {
        let named = metric_names(text);
        assert!(named.len() >= 7, "{file}: {named:?}");
        for name in named {
            assert!(
                exposed.iter().any(|e| e == name),
                "{file} queries {name}, which ledgerops does not expose: {exposed:?}"
            );
        }
    }
}
