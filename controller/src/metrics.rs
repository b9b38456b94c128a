//! Prometheus metrics served on `/metrics`: YNAB requests, sync time, reconciles and their
//! duration, leadership.

use std::sync::Arc;
use std::time::Instant;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

/// A YNAB request, by route template (never the ids in it) and outcome.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RequestLabels {
    pub endpoint: &'static str,
    /// The HTTP status, or `transport` when no answer came.
    pub status: String,
}

/// One kind of resource.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct KindLabels {
    pub kind: &'static str,
}

/// A failed reconcile.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ErrorLabels {
    pub kind: &'static str,
    pub reason: &'static str,
}

/// Every metric ledgerops exports.
pub struct Metrics {
    registry: Registry,
    pub ynab_requests: Family<RequestLabels, Counter>,
    pub sync_duration: Histogram,
    pub reconciles: Family<KindLabels, Counter>,
    pub reconcile_duration: Family<KindLabels, Histogram, fn() -> Histogram>,
    pub reconcile_errors: Family<ErrorLabels, Counter>,
    /// 1 while this replica holds the leader lease (always 1 without leader election once the
    /// controllers run).
    pub leader: Gauge,
}

impl Default for Metrics {
    fn default() -> Self {
        let mut registry = Registry::with_prefix("ledgerops");
        let ynab_requests = Family::<RequestLabels, Counter>::default();
        registry.register(
            "ynab_requests",
            "YNAB API requests by endpoint and status",
            ynab_requests.clone(),
        );
        let sync_duration = Histogram::new(exponential_buckets(0.005, 2.0, 14));
        registry.register(
            "budget_sync_duration_seconds",
            "Time to bring a Budget's mirror up to date",
            sync_duration.clone(),
        );
        let reconciles = Family::<KindLabels, Counter>::default();
        registry.register("reconciles", "Reconciles run, by kind", reconciles.clone());
        let reconcile_duration: Family<KindLabels, Histogram, fn() -> Histogram> =
            Family::new_with_constructor(|| Histogram::new(exponential_buckets(0.001, 2.0, 16)));
        registry.register(
            "reconcile_duration_seconds",
            "Time a reconcile took, by kind",
            reconcile_duration.clone(),
        );
        let reconcile_errors = Family::<ErrorLabels, Counter>::default();
        registry.register(
            "reconcile_errors",
            "Reconciles that failed, by kind and reason",
            reconcile_errors.clone(),
        );
        let leader = Gauge::default();
        registry.register(
            "leader",
            "1 while this replica leads: syncs, writes and runs jobs",
            leader.clone(),
        );
        Self {
            leader,
            registry,
            ynab_requests,
            sync_duration,
            reconciles,
            reconcile_duration,
            reconcile_errors,
        }
    }
}

impl Metrics {
    /// The OpenMetrics text exposition.
    pub fn render(&self) -> String {
        let mut out = String::new();
        prometheus_client::encoding::text::encode(&mut out, &self.registry)
            .expect("writing to a String cannot fail");
        out
    }
}

/// One reconcile of `kind`: counted when it starts, its duration recorded when this is dropped
/// at its end, however it ends.
pub struct Measure {
    metrics: Arc<Metrics>,
    kind: &'static str,
    start: Instant,
}

impl Measure {
    pub fn start(metrics: &Arc<Metrics>, kind: &'static str) -> Self {
        metrics.reconciles.get_or_create(&KindLabels { kind }).inc();
        Self {
            metrics: metrics.clone(),
            kind,
            start: Instant::now(),
        }
    }
}

impl Drop for Measure {
    fn drop(&mut self) {
        self.metrics
            .reconcile_duration
            .get_or_create(&KindLabels { kind: self.kind })
            .observe(self.start.elapsed().as_secs_f64());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_counters_with_their_labels() {
        let m = Metrics::default();
        m.ynab_requests
            .get_or_create(&RequestLabels {
                endpoint: "GET /plans/{plan_id}",
                status: "200".into(),
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
                r#"ledgerops_ynab_requests_total{endpoint="GET /plans/{plan_id}",status="200"} 1"#
            ),
            "{text}"
        );
        assert!(
            text.contains(
                r#"ledgerops_reconcile_errors_total{kind="Budget",reason="Unauthorized"} 1"#
            ),
            "{text}"
        );
        assert!(text.contains("ledgerops_budget_sync_duration_seconds_bucket"));
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
}
