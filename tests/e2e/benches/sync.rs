//! Budget sync cost: YNAB requests and wall time for a full sync of the demo plan grown to
//! ~1,300 transactions, and for delta syncs after 1 and 1,000 out-of-band edits, beside two
//! baselines measured in the same run: re-reading the whole plan, and re-reading each
//! transaction by id. Prints a table; asserts nothing about time.
//!
//! `cargo bench -p ledgerops-e2e --bench sync`

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ledgerops::logic::budget::api_url::ApiUrlAllowlist;
use ledgerops::logic::budget::mirror::Mirror;
use ledgerops::logic::runtime::request_priority::Priority;
use ledgerops::logic::runtime::request_window::RequestWindow;
use ledgerops::logic::values::token::Token;
use ledgerops::metrics::Metrics;
use ledgerops::ynab::client::YnabClient;
use serde_json::json;
use ynab_sim::{RecordKind, RunningSim, SimConfig, Simulator, demo};

const EXTRA: usize = 1_000;

#[tokio::main]
async fn main() {
    println!("| scenario | YNAB requests | wall time (median of 5) | transactions received |");
    println!("|---|---:|---:|---:|");
    let plain = Simulator::start(SimConfig {
        fixture: Some(demo::generate()),
        rate_limit: u32::MAX,
        ..Default::default()
    })
    .await
    .expect("simulator");
    let ynab = client(&plain);
    let full = measure(&plain, 5, || async {
        ynab.plan(demo::PLAN_ID, None, Priority::Approved)
            .await
            .unwrap()
            .plan
            .transactions
            .len()
    })
    .await;
    row("full sync of the demo plan", full);

    let mut fixture = demo::generate();
    let plan = &mut fixture.plans[0];
    let template = plan.transactions[0].clone();
    for i in 0..EXTRA {
        let mut t = template.clone();
        t.summary.id = format!("bench-{i:05}");
        t.summary.import_id = None;
        t.summary.memo = Some(format!("bench {i}"));
        plan.transactions.push(t);
    }
    let total = plan.transactions.len();
    let ids: Vec<String> = plan
        .transactions
        .iter()
        .map(|t| t.summary.id.clone())
        .collect();
    let sim = Simulator::start(SimConfig {
        fixture: Some(fixture),
        rate_limit: u32::MAX,
        ..Default::default()
    })
    .await
    .expect("simulator");
    let ynab = client(&sim);

    let mut mirror = Mirror::default();
    let full = measure(&sim, 5, || async {
        let data = ynab
            .plan(demo::PLAN_ID, None, Priority::Approved)
            .await
            .unwrap();
        data.plan.transactions.len()
    })
    .await;
    row(
        &format!("full sync, plan grown to {total} transactions"),
        full,
    );
    let data = ynab
        .plan(demo::PLAN_ID, None, Priority::Approved)
        .await
        .unwrap();
    mirror.apply(data.plan, data.server_knowledge);

    for edits in [1, EXTRA] {
        for id in ids.iter().take(edits) {
            let memo = json!({"memo": format!("edited {edits}")});
            sim.control()
                .edit(demo::PLAN_ID, RecordKind::Transaction, id, &memo)
                .await
                .unwrap();
        }
        let since = mirror.server_knowledge;
        let delta = measure(&sim, 5, || async {
            let data = ynab
                .plan(demo::PLAN_ID, Some(since), Priority::Approved)
                .await
                .unwrap();
            data.plan.transactions.len()
        })
        .await;
        row(&format!("delta sync after {edits} edit(s)"), delta);
        let data = ynab
            .plan(demo::PLAN_ID, Some(since), Priority::Approved)
            .await
            .unwrap();
        mirror.apply(data.plan, data.server_knowledge);

        let refetch = measure(&sim, 5, || async {
            let data = ynab
                .plan(demo::PLAN_ID, None, Priority::Approved)
                .await
                .unwrap();
            data.plan.transactions.len()
        })
        .await;
        row(
            &format!("baseline: full re-read after {edits} edit(s)"),
            refetch,
        );
    }

    let http = reqwest::Client::new();
    let per_record = measure(&sim, 1, || async {
        for id in &ids {
            http.get(format!(
                "{}/plans/{}/transactions/{id}",
                sim.api_url(),
                demo::PLAN_ID
            ))
            .bearer_auth(demo::TOKEN)
            .send()
            .await
            .unwrap()
            .error_for_status()
            .unwrap();
        }
        ids.len()
    })
    .await;
    row("baseline: one GET per transaction", per_record);
}

fn client(sim: &RunningSim) -> YnabClient {
    let window = Arc::new(Mutex::new(RequestWindow::new(u32::MAX)));
    let base = ApiUrlAllowlist::parse(["http://127.0.0.1:*/v1"])
        .and_then(|a| a.check(&sim.api_url()))
        .expect("the simulator's URL is allowed");
    YnabClient::new(
        &base,
        Token::new(demo::TOKEN),
        window,
        Arc::new(Metrics::default()),
    )
    .unwrap()
}

struct Measured {
    requests_per_run: u64,
    median: Duration,
    received: usize,
}

async fn measure<F, Fut>(sim: &RunningSim, runs: usize, mut run: F) -> Measured
where
    F: FnMut() -> Fut,
    Fut: Future<Output = usize>,
{
    let before = sim.control().counters().await.unwrap().total;
    let mut times = Vec::with_capacity(runs);
    let mut received = 0;
    for _ in 0..runs {
        let start = Instant::now();
        received = run().await;
        times.push(start.elapsed());
    }
    times.sort();
    let after = sim.control().counters().await.unwrap().total;
    Measured {
        requests_per_run: (after - before) / runs as u64,
        median: times[runs / 2],
        received,
    }
}

fn row(name: &str, m: Measured) {
    println!(
        "| {name} | {} | {:.1} ms | {} |",
        m.requests_per_run,
        m.median.as_secs_f64() * 1000.0,
        m.received
    );
}
