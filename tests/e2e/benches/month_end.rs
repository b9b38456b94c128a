//! A household's month-end (`ledgerops_e2e::month_end`: 300 purchases at six merchants with
//! Blessed rules, 10 no rule covers, 2 two rules disagree on) done two ways on the simulator and
//! a real API server: the autopilot's one plan approved once, against a per-transaction
//! baseline (one plan per purchase, each approved). Prints, for each: human actions, YNAB
//! requests by endpoint, plans and ApprovalRequests created, the time from the first request
//! to the last write, and the window between the last read and the last write decided on it.
//! Asserts nothing about time (the request counts are asserted in `tests/autopilot.rs`).
//!
//! `cargo bench -p ledgerops-e2e --bench month_end`

use std::time::{Duration, Instant};

use ledgerops::api::approval::ApprovalRequest;
use ledgerops::api::plan::{CategorizationPlan, PlanPhase};
use ledgerops_e2e::controller::Ledgerops;
use ledgerops_e2e::month_end::{self, MERCHANTS, PER_MERCHANT};
use ledgerops_e2e::scenario::{PATCH, Scenario, WAIT, category};
use ledgerops_e2e::wait;
use ledgerops_testenv::ControlPlane;
use serde_json::json;
use ynab_sim::Counters;

const READ: &str = "GET /v1/plans/{plan_id}";

#[tokio::main]
async fn main() {
    let plane = ControlPlane::start().await.expect("control plane");
    ledgerops_e2e::install_crds(&plane.client().await.expect("admin client")).await;
    let _ledgerops = Ledgerops::start(&plane).await;

    let batch = autopilot(&plane).await;
    let baseline = per_transaction(&plane).await;
    println!(
        "\n| month-end of {} purchases | human actions | YNAB requests | of which reads | of which PATCH | plans | ApprovalRequests | first request -> last write | last read -> last write |",
        MERCHANTS.len() * PER_MERCHANT
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|");
    for run in [&batch, &baseline] {
        run.print();
    }
    println!(
        "\nbaseline / autopilot: {:.0}x the human actions, {:.1}x the YNAB requests",
        baseline.human_actions as f64 / batch.human_actions as f64,
        baseline.counters.total as f64 / batch.counters.total as f64
    );
}

/// What one way of doing the month cost.
struct Run {
    name: &'static str,
    human_actions: usize,
    counters: Counters,
    plans: usize,
    requests: usize,
}

impl Run {
    fn print(&self) {
        let timeline = &self.counters.timeline;
        let first = timeline.iter().map(|s| s.came_ms).min().unwrap_or(0);
        let last_write = timeline
            .iter()
            .filter(|s| s.endpoint == PATCH)
            .map(|s| s.came_ms)
            .max()
            .unwrap_or(0);
        // The read the last write was decided on: the last one before it.
        let last_read = timeline
            .iter()
            .filter(|s| s.endpoint == READ && s.came_ms <= last_write)
            .map(|s| s.answered_ms)
            .max()
            .unwrap_or(last_write);
        println!(
            "| {} | {} | {} | {} | {} | {} | {} | {} ms | {} ms |",
            self.name,
            self.human_actions,
            self.counters.total,
            self.counters.endpoint(READ),
            self.counters.endpoint(PATCH),
            self.plans,
            self.requests,
            last_write.saturating_sub(first),
            last_write.saturating_sub(last_read)
        );
    }
}

/// A scenario on the month's fixture with the rules in place, its counters reset.
async fn month(plane: &ControlPlane, prefix: &str) -> Scenario {
    let s = Scenario::new(plane, prefix, month_end::fixture()).await;
    s.sim.control().set_rate_limit(u32::MAX).await.unwrap();
    month_end::prepare(&s, json!({})).await;
    s.sim.control().reset_counters().await.unwrap();
    s
}

/// The autopilot proposes; a person approves its one plan.
async fn autopilot(plane: &ControlPlane) -> Run {
    let s = month(plane, "bench-autopilot").await;
    month_end::autopilot_on(&s).await;
    let mut plans = Vec::new();
    wait::eventually("the autopilot's plan", WAIT, async || {
        plans = s.autopilot_plans().await;
        !plans.is_empty()
    })
    .await;
    let name = plans[0].metadata.name.clone().unwrap();
    s.wait_plan(&name, PlanPhase::AwaitingApproval).await;
    s.approve_plan(&name).await;
    Run {
        name: "autopilot, one plan",
        human_actions: 1,
        counters: s.sim.control().counters().await.unwrap(),
        plans: s.autopilot_plans().await.len(),
        requests: s.approval_requests().await.len(),
    }
}

/// One plan per purchase, each approved by a person.
async fn per_transaction(plane: &ControlPlane) -> Run {
    let s = month(plane, "bench-baseline").await;
    let mut names = Vec::new();
    for (merchant, category_name) in MERCHANTS {
        for i in 0..PER_MERCHANT {
            let id = month_end::purchase_id(merchant, i);
            let name = format!("one-{id}");
            let spec = json!({"assignments": [{"transactionId": id, "categoryId": category(category_name)}]});
            s.create_plan(&name, "household", spec).await;
            names.push(name);
        }
    }
    for name in &names {
        s.wait_plan(name, PlanPhase::AwaitingApproval).await;
    }
    let started = Instant::now();
    for name in &names {
        let request = s.plan_request(name).await;
        s.decide(&request, "Approve", "yes").await;
    }
    let plans = s.api::<CategorizationPlan>();
    let mut applied = 0;
    while started.elapsed() < WAIT * 5 {
        applied = 0;
        for name in &names {
            let plan = plans.get(name).await.unwrap();
            if plan.status.and_then(|st| st.phase) == Some(PlanPhase::Applied) {
                applied += 1;
            }
        }
        if applied == names.len() {
            break;
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    if applied < names.len() {
        println!(
            "baseline: {applied} of {} plans applied within {:?} (the token's hourly request budget?)",
            names.len(),
            WAIT * 5
        );
    }
    let requests = s
        .api::<ApprovalRequest>()
        .list(&Default::default())
        .await
        .unwrap()
        .items
        .len();
    Run {
        name: "per-transaction baseline",
        human_actions: names.len(),
        counters: s.sim.control().counters().await.unwrap(),
        plans: names.len(),
        requests,
    }
}
