//! Prometheus metrics served on `/metrics`: YNAB requests, sync time, reconciles and their
//! duration, leadership, and what a person is alerted on (waiting approvals, Budget readiness,
//! the autopilot's breaker, the request budget), computed from the caches at each scrape.

use std::fmt;
use std::sync::{Arc, OnceLock};
use std::time::Instant;

use k8s_openapi::jiff::Timestamp;
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeGaugeValue, EncodeLabelSet};
use prometheus_client::metrics::MetricType;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::metrics::info::Info;
use prometheus_client::registry::Registry;

use crate::logic::status::alerts::BudgetGauges;

/// A YNAB request, by route template (never the ids in it) and outcome.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RequestLabels {
    pub endpoint: &'static str,
    /// The HTTP status, or `transport` when no answer came.
    pub status: String,
    /// Why it went out: approved, asked, unasked or background.
    pub priority: &'static str,
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

/// A step of the write of a change a person approved.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct StepLabels {
    pub step: &'static str,
}

/// An Event the notification hub never got, by why: `queue_full`, `refused` (the hub answered
/// 4xx), `undeliverable` (every retry failed), `stopped`.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct HubDropLabels {
    pub reason: &'static str,
}

/// What this binary is: its version, and the commit it was built from (`LEDGEROPS_COMMIT` at
/// build time, as the image's `--build-arg`; `unknown` without it).
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct BuildLabels {
    version: &'static str,
    commit: &'static str,
}

/// Every metric ledgerops exports.
pub struct Metrics {
    registry: Registry,
    pub ynab_requests: Family<RequestLabels, Counter>,
    pub sync_duration: Histogram,
    pub reconciles: Family<KindLabels, Counter>,
    pub reconcile_duration: Family<KindLabels, Histogram, fn() -> Histogram>,
    pub reconcile_errors: Family<ErrorLabels, Counter>,
    /// Where the time between a person's approval and YNAB holding the change goes.
    pub approved_write_steps: Family<StepLabels, Histogram, fn() -> Histogram>,
    /// 1 while this replica holds the leader lease (always 1 without leader election once the
    /// controllers run).
    pub leader: Gauge,
    /// Events the notification hub (`--events-address`) took.
    pub hub_events_delivered: Counter,
    pub hub_events_dropped: Family<HubDropLabels, Counter>,
    state: StateGauges,
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
        let approved_write_steps: Family<StepLabels, Histogram, fn() -> Histogram> =
            Family::new_with_constructor(|| Histogram::new(exponential_buckets(0.001, 2.0, 16)));
        registry.register(
            "approved_write_step_seconds",
            "Time each step of the reconcile that spends a person's approval took, from reading the subject to its last status write",
            approved_write_steps.clone(),
        );
        let leader = Gauge::default();
        registry.register(
            "leader",
            "1 while this replica leads: syncs, writes and runs jobs",
            leader.clone(),
        );
        let hub_events_delivered = Counter::default();
        registry.register(
            "hub_events_delivered",
            "Events the notification hub (--events-address) took",
            hub_events_delivered.clone(),
        );
        let hub_events_dropped = Family::<HubDropLabels, Counter>::default();
        registry.register(
            "hub_events_dropped",
            "Events never posted to the notification hub, by reason",
            hub_events_dropped.clone(),
        );
        registry.register(
            "build",
            "The version and commit of this ledgerops binary (value 1)",
            Info::new(BuildLabels {
                version: env!("CARGO_PKG_VERSION"),
                commit: option_env!("LEDGEROPS_COMMIT").unwrap_or("unknown"),
            }),
        );
        let state = StateGauges::default();
        registry.register_collector(Box::new(state.clone()));
        Self {
            leader,
            hub_events_delivered,
            hub_events_dropped,
            state,
            registry,
            ynab_requests,
            sync_duration,
            reconciles,
            reconcile_duration,
            reconcile_errors,
            approved_write_steps,
        }
    }
}

impl Metrics {
    /// Computes the per-Budget gauges from `source` at each scrape from now on. Only the
    /// replica that runs the controllers has the caches to compute them from: a standby shows
    /// none, so a sum over replicas counts each Budget once.
    pub fn observe_state(&self, source: StateSource) {
        // One `run` per process: a second source would be a wiring mistake, and is ignored.
        let _ = self.state.0.set(source);
    }

    /// The OpenMetrics text exposition.
    pub fn render(&self) -> String {
        let mut out = String::new();
        prometheus_client::encoding::text::encode(&mut out, &self.registry)
            .expect("writing to a String cannot fail");
        out
    }
}

/// The gauges of every Budget at a given time, read from the caches (never a LIST).
pub type StateSource = Box<dyn Fn(Timestamp) -> Vec<BudgetGauges> + Send + Sync>;

/// A Budget, by namespace and name.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct BudgetLabels {
    namespace: String,
    budget: String,
}

/// The per-Budget gauges, computed when scraped: a deleted Budget is simply not there any more.
#[derive(Clone, Default)]
struct StateGauges(Arc<OnceLock<StateSource>>);

impl fmt::Debug for StateGauges {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StateGauges")
            .field("observing", &self.0.get().is_some())
            .finish()
    }
}

impl Collector for StateGauges {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), fmt::Error> {
        let Some(source) = self.0.get() else {
            return Ok(());
        };
        let rows = source(Timestamp::now());
        let e = &mut encoder;
        gauge(
            e,
            "approval_requests_waiting",
            "ApprovalRequests that ledgerops issued and a person can still decide (undecided, Pending, not expired), by Budget",
            &rows,
            |r| Some(i64::from(r.waiting)),
        )?;
        gauge(
            e,
            "approval_request_oldest_waiting_seconds",
            "Seconds the oldest waiting ApprovalRequest of the Budget has waited since it was created; 0 when none waits",
            &rows,
            |r| Some(r.oldest_waiting_seconds),
        )?;
        gauge(
            e,
            "approval_requests_expired_unanswered",
            "Plans and Transactions of the Budget whose newest ApprovalRequest expired without a decision and that nobody has asked again since: nothing of them was written",
            &rows,
            |r| Some(i64::from(r.expired_unanswered)),
        )?;
        gauge(
            e,
            "budget_last_sync_timestamp_seconds",
            "When the Budget's mirror last caught up with YNAB (Unix time), once it has",
            &rows,
            |r| r.last_sync_seconds,
        )?;
        gauge(
            e,
            "budget_ready",
            "1 when the Budget's Ready condition is True (its mirror synced), else 0",
            &rows,
            |r| Some(i64::from(r.ready)),
        )?;
        gauge(
            e,
            "budget_suspended",
            "1 when the Budget's spec.suspend is true (it makes no YNAB request), else 0",
            &rows,
            |r| Some(i64::from(r.suspended)),
        )?;
        gauge(
            e,
            "autopilot_stopped",
            "1 when the Budget's autopilot is enabled and its daily circuit breaker stopped it for today (UTC), else 0",
            &rows,
            |r| Some(i64::from(r.autopilot_stopped)),
        )?;
        gauge(
            e,
            "ynab_requests_last_hour",
            "YNAB requests made with the Budget's token in the last rolling hour (Budgets sharing a token show the same count); once the Budget has synced",
            &rows,
            |r| r.requests.map(|u| i64::from(u.used)),
        )?;
        gauge(
            e,
            "ynab_requests_hourly_limit",
            "The most YNAB requests ledgerops makes with the Budget's token per rolling hour (spec.requestsPerHour)",
            &rows,
            |r| r.requests.map(|u| i64::from(u.limit)),
        )?;
        gauge(
            e,
            "ynab_request_budget_used_ratio",
            "Share of the hourly YNAB request budget used, 0 to 1: ynab_requests_last_hour / ynab_requests_hourly_limit",
            &rows,
            |r| r.requests.map(|u| u.ratio()),
        )
    }
}

/// One gauge family with a sample per Budget that has a value.
fn gauge<V: EncodeGaugeValue>(
    encoder: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    rows: &[BudgetGauges],
    value: impl Fn(&BudgetGauges) -> Option<V>,
) -> Result<(), fmt::Error> {
    let mut family = encoder.encode_descriptor(name, help, None, MetricType::Gauge)?;
    for row in rows {
        let Some(v) = value(row) else {
            continue;
        };
        let labels = BudgetLabels {
            namespace: row.namespace.clone(),
            budget: row.budget.clone(),
        };
        family.encode_family(&labels)?.encode_gauge(&v)?;
    }
    Ok(())
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

/// The steps of one reconcile, timed back to back: reported only if it turns out to spend a
/// person's approval, so the figures are those of the writes people wait on.
pub struct Stopwatch {
    last: Instant,
    laps: Vec<(&'static str, f64)>,
    person_waits: bool,
}

impl Stopwatch {
    pub fn start() -> Self {
        Self {
            last: Instant::now(),
            laps: Vec::new(),
            person_waits: false,
        }
    }

    /// Ends the step `step` (its time runs from the end of the one before).
    pub fn lap(&mut self, step: &'static str) {
        let now = Instant::now();
        self.laps
            .push((step, now.duration_since(self.last).as_secs_f64()));
        self.last = now;
    }

    /// This reconcile spends a person's approval: its steps are reported.
    pub fn person_waits(&mut self) {
        self.person_waits = true;
    }

    /// Records the steps in `approved_write_step_seconds`, if a person waits on them.
    pub fn report(self, metrics: &Metrics) {
        if !self.person_waits {
            return;
        }
        for (step, seconds) in self.laps {
            metrics
                .approved_write_steps
                .get_or_create(&StepLabels { step })
                .observe(seconds);
        }
    }
}

#[cfg(test)]
#[path = "metrics_tests.rs"]
mod tests;
