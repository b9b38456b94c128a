//! Transactions converging: YNAB requests and wall time for N = 10, 100, 1,000 and 10,000
//! Transactions through `ledgerops run` (a real API server, the simulator), beside a naive
//! per-record baseline measured in the same run (read, write, read back each transaction, as the
//! seed's system does), and the controller's RSS at the largest N. Then the controller restarts
//! and looks at every Transaction again (a full resync): its time, YNAB requests and RSS. Prints
//! a table; asserts nothing about time.
//!
//! `cargo bench -p ledgerops-e2e --bench converge` (set `CONVERGE_MAX` to stop at a smaller N)

use std::time::{Duration, Instant};

use futures::StreamExt;
use kube::Api;
use kube::api::PostParams;
use kube::runtime::{WatchStreamExt, reflector, watcher};
use ledgerops::api::budget::BudgetPhase;
use ledgerops::api::transaction::{Transaction, TransactionPhase};
use ledgerops_e2e::api_requests::{ApiRequests, Requests};
use ledgerops_e2e::controller::Ledgerops;
use ledgerops_e2e::cpu::Cores;
use ledgerops_e2e::scenario::{Scenario, category, demo_with_uncategorised};
use ledgerops_testenv::ControlPlane;
use serde_json::json;
use ynab_sim::demo;

#[tokio::main]
async fn main() {
    let max: usize = std::env::var("CONVERGE_MAX")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000);
    let plane = ControlPlane::start().await.expect("control plane");
    ledgerops_e2e::install_crds(&plane.client().await.expect("admin client")).await;
    let ledgerops = start(&plane).await;
    println!(
        "| N | ledgerops requests | ledgerops wall time | of which creating the N objects | baseline requests | baseline wall time | request ratio |"
    );
    println!("|---:|---:|---:|---:|---:|---:|---:|");
    let sizes: Vec<usize> = [10, 100, 1_000, 10_000]
        .into_iter()
        .filter(|n| *n <= max)
        .collect();
    let mut largest = None;
    let mut tail = None;
    for &n in &sizes {
        let (s, requests, took, creating, after) = ledgerops_run(&plane, n).await;
        tail = Some(after);
        let (base_requests, base_took) = baseline(n).await;
        println!(
            "| {n} | {requests} | {:.1} s | {:.1} s | {base_requests} | {:.1} s | {:.0}× |",
            took.as_secs_f64(),
            creating.as_secs_f64(),
            base_took.as_secs_f64(),
            base_requests as f64 / requests as f64
        );
        largest = Some((n, s));
    }
    let (Some((n, s)), Some(tail)) = (largest, tail) else {
        return;
    };
    let converged_rss = mib(ledgerops.rss_kib());
    println!("\ncontroller RSS after converging N = {n}: {converged_rss}");
    println!(
        "after the last of the {n} creates: the first Transaction Converged {:.1} s later, the last {:.1} s later; the API server took {} writes meanwhile ({:.0}/s), the control plane keeping {:.2} of {} cores busy. While creating: {:.0} creates/s, {:.0} writes/s in all",
        tail.first.as_secs_f64(),
        tail.last.as_secs_f64(),
        tail.writes,
        tail.writes as f64 / tail.last.as_secs_f64(),
        tail.plane_cores,
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        tail.create_rate,
        tail.writes_while_creating,
    );

    // A full resync: the controller starts again (a new pod, or a new leader) and looks at every
    // Transaction of every size above again, with the largest one's Budget live.
    let everything: usize = sizes.iter().sum();
    ledgerops.stop().await;
    s.sim.control().reset_counters().await.unwrap();
    let start_at = Instant::now();
    let again = start(&plane).await;
    while reconciled(&again, "Transaction").await < everything {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    wait_converged(&s.api::<Transaction>(), n).await;
    let took = start_at.elapsed();
    let counters = s.sim.control().counters().await.unwrap();
    println!(
        "full resync after a restart: {everything} Transactions looked at again in {:.1} s with {} YNAB request(s) {:?}; RSS then {}",
        took.as_secs_f64(),
        counters.total,
        counters.by_endpoint,
        mib(again.rss_kib())
    );
}

/// The controller as the image and the chart run it (two glibc malloc arenas).
async fn start(plane: &ControlPlane) -> Ledgerops {
    Ledgerops::start_with(plane, &[], &[("MALLOC_ARENA_MAX", "2")]).await
}

fn mib(kib: Option<u64>) -> String {
    kib.map_or_else(
        || "unknown".into(),
        |k| format!("{:.1} MiB", k as f64 / 1024.0),
    )
}

/// Reconciles of `kind` the controller has finished, from its `/metrics`.
async fn reconciled(ledgerops: &Ledgerops, kind: &str) -> usize {
    let wanted = format!("ledgerops_reconcile_duration_seconds_count{{kind=\"{kind}\"}} ");
    ledgerops
        .metrics()
        .await
        .lines()
        .find_map(|l| l.strip_prefix(&wanted))
        .and_then(|v| v.trim().parse::<f64>().ok())
        .map_or(0, |v| v as usize)
}

/// What happens after the last create: when the first and the last Transaction are Converged,
/// and how many writes the API server took meanwhile (ledgerops' intents, outcomes and Events).
struct Tail {
    first: Duration,
    last: Duration,
    writes: u64,
    /// Creates per second while the objects were created, and the API server's writes per
    /// second meanwhile (the creates, and ledgerops' intents).
    create_rate: f64,
    writes_while_creating: f64,
    /// Cores the control plane kept busy after the last create.
    plane_cores: f64,
}

/// The Scenario, its YNAB requests, the wall time from the first create to all Converged, how
/// much of it creating the objects took (the API server's write rate, 16 at a time), and the
/// time after.
async fn ledgerops_run(
    plane: &ControlPlane,
    n: usize,
) -> (Scenario, u64, Duration, Duration, Tail) {
    let admin = plane.client().await.expect("admin client");
    let s = Scenario::new(plane, &format!("bench{n}"), demo_with_uncategorised(n)).await;
    s.sim.control().set_rate_limit(u32::MAX).await.unwrap();
    s.create_writing_budget(
        "household",
        json!({"writes": {"batchWindow": "2s"}, "requestsPerHour": 200}),
    )
    .await;
    s.wait_budget("household", BudgetPhase::Ready).await;
    s.sim.control().reset_counters().await.unwrap();
    let writes_at_start = ApiRequests::read(&admin, Requests::Writes).await;
    let start = Instant::now();
    let groceries = category("Groceries");
    let api = s.api::<Transaction>();
    futures::stream::iter(0..n)
        .for_each_concurrent(16, |i| {
            let (api, groceries) = (&api, groceries.clone());
            async move {
                let name = format!("load-{i:05}");
                let tx: Transaction = serde_json::from_value(json!({
                    "apiVersion": "ledgerops.dev/v1alpha1", "kind": "Transaction", "metadata": {"name": name},
                    "spec": {"budgetRef": {"name": "household"}, "transactionId": name, "categoryId": groceries}
                }))
                .unwrap();
                // A loaded API server may drop a connection: try again, a few times.
                for attempt in 1..=5u64 {
                    match api.create(&PostParams::default(), &tx).await {
                        Ok(_) => return,
                        Err(kube::Error::Api(e)) if e.code == 409 => return,
                        Err(e) if attempt == 5 => panic!("creating {name}: {e}"),
                        Err(_) => tokio::time::sleep(Duration::from_millis(200 * attempt)).await,
                    }
                }
            }
        })
        .await;
    let creating = start.elapsed();
    let created_at = Instant::now();
    let writes_before = ApiRequests::read(&admin, Requests::Writes).await;
    let plane_cpu = Cores::measure(plane.pids());
    let first = wait_converged(&api, n).await;
    let took = start.elapsed();
    let tail = Tail {
        plane_cores: plane_cpu.busy(),
        first: first.saturating_duration_since(created_at),
        last: created_at.elapsed(),
        writes: ApiRequests::read(&admin, Requests::Writes)
            .await
            .since(&writes_before),
        create_rate: n as f64 / creating.as_secs_f64(),
        writes_while_creating: writes_before.since(&writes_at_start) as f64
            / creating.as_secs_f64(),
    };
    let requests = s.total_requests().await;
    (s, requests, took, creating, tail)
}

/// Waits until the namespace's `n` Transactions are all Converged, following one watch (paged
/// list, then changes; retried with backoff when the API server drops it) instead of listing
/// every object again each half second, which a loaded API server refused at 10,000. Returns
/// when the first was seen Converged.
async fn wait_converged(api: &Api<Transaction>, n: usize) -> Instant {
    let (store, writer) = reflector::store();
    let events = watcher(api.clone(), watcher::Config::default())
        .default_backoff()
        .reflect(writer);
    futures::pin_mut!(events);
    let every = Duration::from_millis(250);
    let mut looked = Instant::now();
    let mut first = None;
    loop {
        // Counting scans the cache: a few times a second, and also when the watch is quiet.
        match tokio::time::timeout(every, events.next()).await {
            Ok(None) => panic!("the Transaction watch ended"),
            Ok(Some(_)) if looked.elapsed() < every => continue,
            _ => {}
        }
        looked = Instant::now();
        let converged = store
            .state()
            .iter()
            .filter(|t| {
                t.status.as_ref().and_then(|s| s.phase) == Some(TransactionPhase::Converged)
            })
            .count();
        if converged > 0 {
            first.get_or_insert_with(Instant::now);
        }
        if converged == n {
            return first.unwrap_or_else(Instant::now);
        }
    }
}

/// What the seed's system does per record: read it, write it, read it back.
async fn baseline(n: usize) -> (u64, Duration) {
    let sim = ynab_sim::Simulator::start(ynab_sim::SimConfig {
        fixture: Some(demo_with_uncategorised(n)),
        rate_limit: u32::MAX,
        ..Default::default()
    })
    .await
    .unwrap();
    let http = reqwest::Client::new();
    let base = format!("{}/plans/{}/transactions", sim.api_url(), demo::PLAN_ID);
    let groceries = category("Groceries");
    let start = Instant::now();
    for i in 0..n {
        let url = format!("{base}/load-{i:05}");
        let get = || http.get(&url).bearer_auth(demo::TOKEN).send();
        get().await.unwrap().error_for_status().unwrap();
        let body = json!({"transaction": {"category_id": groceries}});
        http.put(&url)
            .bearer_auth(demo::TOKEN)
            .json(&body)
            .send()
            .await
            .unwrap()
            .error_for_status()
            .unwrap();
        get().await.unwrap().error_for_status().unwrap();
    }
    (
        sim.control().counters().await.unwrap().total,
        start.elapsed(),
    )
}
