//! CategorizationPlans: the latency from the approving `kubectl patch` to `Applied` (p50, p99
//! over 100 plans applied one after another), and what one plan of 1, 100, 1,000 and 5,000
//! assignments costs: YNAB requests, the size of its status, and the time from create to
//! `Applied` against the one-assignment plan. Prints figures; asserts nothing about time.
//!
//! `cargo bench -p ledgerops-e2e --bench approval`

use std::time::{Duration, Instant};

use kube::api::{ListParams, Patch, PatchParams};
use ledgerops::api::approval::ApprovalRequest;
use ledgerops::api::budget::BudgetPhase;
use ledgerops::api::plan::PlanPhase;
use ledgerops_e2e::controller::Ledgerops;
use ledgerops_e2e::scenario::{Scenario, category, demo_with_uncategorised};
use ledgerops_testenv::ControlPlane;
use serde_json::json;

const PLANS: usize = 100;

#[tokio::main]
async fn main() {
    let plane = ControlPlane::start().await.expect("control plane");
    ledgerops_e2e::install_crds(&plane.client().await.expect("admin client")).await;
    let _ledgerops = Ledgerops::start(&plane).await;

    // Each apply costs two YNAB requests (the fresh read, the PATCH): 100 plans on one token
    // would spend its hourly budget, so they are spread over two simulated YNABs.
    let mut latencies = Vec::with_capacity(PLANS);
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
            json!({"writes": {"enabled": true}, "requestsPerHour": 200}),
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
            let start = Instant::now();
            s.api::<ApprovalRequest>()
                .patch(&request, &PatchParams::default(), &Patch::Merge(&approve))
                .await
                .unwrap();
            s.wait_plan(&plan, PlanPhase::Applied).await;
            latencies.push(start.elapsed());
        }
    }
    latencies.sort();
    let pick = |q: f64| latencies[((latencies.len() as f64 * q) as usize).min(latencies.len() - 1)];
    println!(
        "approve patch -> Applied over {PLANS} plans: p50 {:.0} ms, p99 {:.0} ms",
        ms(pick(0.50)),
        ms(pick(0.99))
    );

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

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}
