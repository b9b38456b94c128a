//! CategorizationPlans: the latency from the approving `kubectl patch` to `Applied` (p50, p99
//! over 100 plans applied one after another, `Applied` seen on a watch), where that time goes
//! (the controller's `ledgerops_approved_write_step_seconds`, the rest being the API server's
//! answer to the patch, the watch and the controller's queue, and reconciles that met a
//! conflict), and what one plan of 1, 100, 1,000 and 5,000
//! assignments costs: YNAB requests, the size of its status, and the time from create to
//! `Applied` against the one-assignment plan. Prints figures; asserts nothing about time.
//!
//! `cargo bench -p ledgerops-e2e --bench approval`

use std::time::{Duration, Instant};

use kube::api::{ListParams, Patch, PatchParams};
use kube::runtime::wait::await_condition;
use ledgerops::api::approval::ApprovalRequest;
use ledgerops::api::budget::BudgetPhase;
use ledgerops::api::plan::{CategorizationPlan, PlanPhase};
use ledgerops_e2e::controller::Ledgerops;
use ledgerops_e2e::scenario::{Scenario, category, demo_with_uncategorised};
use ledgerops_testenv::ControlPlane;
use serde_json::json;

const PLANS: usize = 100;

#[tokio::main]
async fn main() {
    let plane = ControlPlane::start().await.expect("control plane");
    ledgerops_e2e::install_crds(&plane.client().await.expect("admin client")).await;
    let ledgerops = Ledgerops::start(&plane).await;

    // Each apply costs two YNAB requests (the fresh read, the PATCH): 100 plans on one token
    // would spend its hourly budget, so they are spread over two simulated YNABs.
    let mut latencies = Vec::with_capacity(PLANS);
    let mut met_conflicts = [0.0; 2];
    for half in 0..2 {
        let s = Scenario::new(
            &plane,
            &format!("latency{half}"),
            demo_with_uncategorised(PLANS),
        )
        .await;
        s.sim.control().set_rate_limit(u32::MAX).await.unwrap();
        s.create_budget(
            "household",
            ynab_sim::demo::TOKEN,
            // 50 approvals on the token, each a read and a bulk update: all kept for people, so
            // none waits for the pace.
            json!({"writes": {"enabled": true}, "requestsPerHour": 200, "reservedRequestsPercent": 90}),
        )
        .await;
        s.wait_budget("household", BudgetPhase::Ready).await;
        for i in (half * PLANS / 2)..((half + 1) * PLANS / 2) {
            let plan = format!("plan-{i:03}");
            let assignment = json!({"assignments": [{"transactionId": format!("load-{i:05}"), "categoryId": category("Groceries")}]});
            s.create_plan(&plan, "household", assignment).await;
            s.wait_plan(&plan, PlanPhase::AwaitingApproval).await;
            let requests = s
                .api::<ApprovalRequest>()
                .list(&ListParams::default())
                .await
                .unwrap()
                .items;
            let request = requests
                .iter()
                .find(|r| r.spec.subject.name == plan)
                .unwrap()
                .metadata
                .name
                .clone()
                .unwrap();
            let approve = json!({"spec": {"decision": {"verdict": "Approve", "by": "admin"}}});
            // Watched, not polled: the figure is the controller's, not a poll interval's.
            let applied = await_condition(
                s.api::<CategorizationPlan>(),
                &plan,
                |p: Option<&CategorizationPlan>| {
                    p.and_then(|p| p.status.as_ref()).and_then(|s| s.phase)
                        == Some(PlanPhase::Applied)
                },
            );
            let before = conflicts(&ledgerops.metrics().await);
            let start = Instant::now();
            s.api::<ApprovalRequest>()
                .patch(&request, &PatchParams::default(), &Patch::Merge(&approve))
                .await
                .unwrap();
            tokio::time::timeout(Duration::from_secs(60), applied)
                .await
                .expect("the plan was not Applied within a minute")
                .unwrap();
            latencies.push(start.elapsed());
            let after = conflicts(&ledgerops.metrics().await);
            for (total, (a, b)) in met_conflicts.iter_mut().zip(after.iter().zip(before)) {
                *total += a - b;
            }
        }
    }
    latencies.sort();
    let pick = |q: f64| latencies[((latencies.len() as f64 * q) as usize).min(latencies.len() - 1)];
    println!(
        "approve patch -> Applied over {PLANS} plans: p50 {:.0} ms, p99 {:.0} ms",
        ms(pick(0.50)),
        ms(pick(0.99))
    );
    print_steps(&ledgerops.metrics().await, &latencies);
    for (kind, n) in CONFLICTING.iter().zip(met_conflicts) {
        println!("{kind} reconciles that met a conflict between approve and Applied: {n}");
    }

    println!(
        "\n| assignments | YNAB requests for the plan | of which PATCH | plan status bytes | create -> Applied | time vs 1 assignment |"
    );
    println!("|---:|---:|---:|---:|---:|---:|");
    let mut baseline = None;
    for n in [1, 100, 1_000, 5_000] {
        let s = Scenario::new(&plane, &format!("size{n}"), demo_with_uncategorised(n)).await;
        s.sim.control().set_rate_limit(u32::MAX).await.unwrap();
        s.create_budget("household", ynab_sim::demo::TOKEN, json!({"writes": {"enabled": true, "maxBatchSize": 1000}, "approval": {"autoApproveBelow": "100000", "autoApproveMaxChanges": 5000, "askOnNewPayee": false}})).await;
        s.wait_budget("household", BudgetPhase::Ready).await;
        s.sim.control().reset_counters().await.unwrap();
        let assignments: Vec<_> = (0..n).map(|i| json!({"transactionId": format!("load-{i:05}"), "categoryId": category("Transport")})).collect();
        let start = Instant::now();
        s.create_plan("bulk", "household", json!({"assignments": assignments}))
            .await;
        let applied = s.wait_plan("bulk", PlanPhase::Applied).await;
        let took = start.elapsed();
        let base = *baseline.get_or_insert(took);
        let patches = s.requests(ledgerops_e2e::scenario::PATCH).await;
        let status_bytes = serde_json::to_vec(&applied.status).unwrap().len();
        println!(
            "| {n} | {} | {patches} | {status_bytes} | {:.0} ms | {:.1}x |",
            s.total_requests().await,
            ms(took),
            took.as_secs_f64() / base.as_secs_f64()
        );
    }
}

/// The mean of each step of the reconciles that spent the approvals, beside the mean of the
/// whole.
fn print_steps(metrics: &str, latencies: &[Duration]) {
    let mean = latencies.iter().map(|d| ms(*d)).sum::<f64>() / latencies.len() as f64;
    println!("\n| step (mean of the reconciles that spent an approval) | ms | share |");
    println!("|---|---:|---:|");
    let mut accounted = 0.0;
    for step in [
        "read", "gate", "spend", "record", "ynab", "finish", "status",
    ] {
        let labels = format!("{{step=\"{step}\"}}");
        let sum = sample(
            metrics,
            &format!("ledgerops_approved_write_step_seconds_sum{labels}"),
        );
        let count = sample(
            metrics,
            &format!("ledgerops_approved_write_step_seconds_count{labels}"),
        );
        let step_ms = if count > 0.0 {
            sum / count * 1000.0
        } else {
            0.0
        };
        accounted += step_ms;
        println!("| {step} | {step_ms:.1} | {:.0}% |", step_ms / mean * 100.0);
    }
    let rest = mean - accounted;
    println!(
        "| patch answered, watch, queue, conflicts | {rest:.1} | {:.0}% |",
        rest / mean * 100.0
    );
    println!("| approve patch -> Applied (mean) | {mean:.1} | 100% |");
}

/// The kinds whose reconcilers write an ApprovalRequest as it is approved.
const CONFLICTING: [&str; 2] = ["CategorizationPlan", "ApprovalRequest"];

/// How many reconciles of each of `CONFLICTING` have met a conflict so far.
fn conflicts(metrics: &str) -> [f64; 2] {
    CONFLICTING.map(|kind| {
        let name =
            format!("ledgerops_reconcile_errors_total{{kind=\"{kind}\",reason=\"Conflict\"}}");
        sample(metrics, &name)
    })
}

/// The value of the sample `name` (with its labels), 0 when absent.
fn sample(metrics: &str, name: &str) -> f64 {
    metrics
        .lines()
        .find_map(|l| l.strip_prefix(name)?.trim().parse().ok())
        .unwrap_or(0.0)
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}
