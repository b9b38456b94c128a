//! A ConfigRepo of 1,000 Transaction files (a `file://` repository) synced by `ledgerops run`
//! into a real API server: the first sync (created → the revision applied with every object in
//! the inventory), an unchanged resync on request and a one-file change, each with the writes the
//! API server counted and the objects whose resourceVersion moved; beside
//! `kubectl apply --server-side -R` of the same tree (first and unchanged) in the same run.
//! No Budget exists: applying does not need YNAB. Prints figures; asserts nothing about time.
//!
//! `cargo bench -p ledgerops-e2e --bench config_repo` (`CONFIG_REPO_FILES=100` for fewer files)

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

use kube::api::{Api, ListParams};
use kube::{Client, ResourceExt};
use ledgerops::api::config_repo::ConfigRepo;
use ledgerops::api::transaction::Transaction;
use ledgerops_e2e::api_requests::{ApiRequests, Requests};
use ledgerops_e2e::config_repo::{self, transaction};
use ledgerops_e2e::controller::Ledgerops;
use ledgerops_e2e::git_work::{Work, bare};
use ledgerops_e2e::wait;
use ledgerops_testenv::ControlPlane;
use serde_json::json;

/// The target for the first sync of 1,000 files.
const TARGET: Duration = Duration::from_secs(10);
/// The figures of 1,000 files before a ConfigRepo checked ownership, limits and history (issue
/// 25), on this 2-core machine: first sync, unchanged resync.
const PREVIOUS: (Duration, Duration) = (Duration::from_millis(3_440), Duration::from_millis(360));
const REQUEST_NOW: &str = "ledgerops.dev/sync-requested-at";

#[tokio::main]
async fn main() {
    let n: usize = std::env::var("CONFIG_REPO_FILES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000);
    let plane = ControlPlane::start().await.expect("control plane");
    let client = plane.client().await.expect("admin client");
    ledgerops_e2e::install_crds(&client).await;
    let (root, cache) = (plane.dir().join("repos"), plane.dir().join("cache"));
    std::fs::create_dir_all(&root).unwrap();
    let (root_arg, cache_arg) = (root.display().to_string(), cache.display().to_string());
    let args = [
        "--config-repo-file-root",
        root_arg.as_str(),
        "--config-repo-cache",
        cache_arg.as_str(),
    ];
    let ledgerops = Ledgerops::start_with(&plane, &args, &[]).await;

    let mut files: Vec<(String, String)> = (0..n)
        .map(|i| {
            (
                format!("tx/t{i:04}.yaml"),
                transaction(&name(i), "declared"),
            )
        })
        .collect();
    let (_, url) = bare(&root, "household.git");
    let work = Work::new(root.join("work"), &url);
    let head = work.commit(&refs(&files), false);

    // First sync: created → the revision applied with every object in the inventory.
    let ns = plane.namespace("crepo-bench").await.expect("namespace");
    let repos: Api<ConfigRepo> = Api::namespaced(client.clone(), &ns);
    let txs: Api<Transaction> = Api::namespaced(client.clone(), &ns);
    let writes = ApiRequests::read(&client, Requests::TransactionWrites).await;
    let start = Instant::now();
    let spec = json!({"url": url, "path": "tx", "interval": "1h"});
    config_repo::create(&client, &ns, "household", spec).await;
    let repo = config_repo::wait_applied(&repos, "household", &head).await;
    let first = start.elapsed();
    let inventory = repo.status.map_or(0, |s| s.inventory.len());
    let first_writes = ApiRequests::read(&client, Requests::TransactionWrites)
        .await
        .since(&writes);

    // Unchanged: asked to sync now, the ConfigRepo fetches, compares and writes nothing.
    let versions = settled(&txs).await;
    let created = versions.len();
    let writes = ApiRequests::read(&client, Requests::TransactionWrites).await;
    let syncs = configrepo_syncs(&ledgerops).await;
    let start = Instant::now();
    annotate(&plane, &ns, "1");
    wait::eventually(
        "the requested resync",
        Duration::from_secs(60),
        async || configrepo_syncs(&ledgerops).await > syncs,
    )
    .await;
    let resync = start.elapsed();
    let resync_writes = ApiRequests::read(&client, Requests::TransactionWrites)
        .await
        .since(&writes);
    let resync_moved = moved(&versions, &settled(&txs).await);

    // One file changes: one object is applied.
    let changed = n / 2;
    files[changed].1 = transaction(&name(changed), "edited");
    let head = work.commit(&refs(&files), false);
    let versions = settled(&txs).await;
    let writes = ApiRequests::read(&client, Requests::TransactionWrites).await;
    let start = Instant::now();
    annotate(&plane, &ns, "2");
    config_repo::wait_applied(&repos, "household", &head).await;
    let one = start.elapsed();
    let one_writes = ApiRequests::read(&client, Requests::TransactionWrites)
        .await
        .since(&writes);
    let one_moved = moved(&versions, &settled(&txs).await);

    // Baseline: kubectl server-side applies the same tree into a namespace of its own, twice.
    let kubectl_ns = plane.namespace("kubectl-bench").await.expect("namespace");
    let tree = work.dir().join("tx");
    let (kubectl_first, kubectl_first_writes) =
        kubectl_apply(&plane, &client, &tree, &kubectl_ns).await;
    let (kubectl_again, kubectl_again_writes) =
        kubectl_apply(&plane, &client, &tree, &kubectl_ns).await;

    println!(
        "{n} Transaction files, {inventory} in the ConfigRepo's inventory after the first sync\n"
    );
    println!(
        "| | ledgerops (ConfigRepo) | API writes | objects changed | kubectl apply --server-side -R | API writes | time ratio |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|");
    println!(
        "| first sync | {} | {first_writes} | {created} | {} | {kubectl_first_writes} | {} |",
        secs(first),
        secs(kubectl_first),
        ratio(first, kubectl_first)
    );
    println!(
        "| unchanged resync | {} | {resync_writes} | {resync_moved} | {} | {kubectl_again_writes} | {} |",
        secs(resync),
        secs(kubectl_again),
        ratio(resync, kubectl_again)
    );
    println!(
        "| one file changed | {} | {one_writes} | {one_moved} | | | |",
        secs(one)
    );
    if n == 1_000 {
        println!(
            "\nagainst the previous figures (before ownership, limits and history checks): first sync {} → {} ({}), unchanged resync {} → {} ({})",
            secs(PREVIOUS.0),
            secs(first),
            ratio(first, PREVIOUS.0),
            secs(PREVIOUS.1),
            secs(resync),
            ratio(resync, PREVIOUS.1)
        );
    }
    let verdict = if first < TARGET { "met" } else { "NOT met" };
    println!(
        "\nfirst sync target < {} s: {verdict} ({}); API writes are non-dry-run requests on transactions the API server counted",
        TARGET.as_secs(),
        secs(first)
    );
}

fn name(i: usize) -> String {
    format!("t{i:04}")
}

fn refs(files: &[(String, String)]) -> Vec<(&str, &str)> {
    files
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .collect()
}

fn secs(d: Duration) -> String {
    format!("{:.2} s", d.as_secs_f64())
}

fn ratio(ours: Duration, theirs: Duration) -> String {
    format!("{:.2}×", ours.as_secs_f64() / theirs.as_secs_f64())
}

/// Asks the ConfigRepo to sync now, as a person would with `kubectl annotate`.
fn annotate(plane: &ControlPlane, ns: &str, nonce: &str) {
    let annotation = format!("{REQUEST_NOW}={nonce}");
    plane
        .kubectl_ok(&[
            "annotate",
            "configrepo",
            "household",
            "-n",
            ns,
            "--overwrite",
            &annotation,
        ])
        .expect("kubectl annotate");
}

/// ConfigRepo syncs `ledgerops run` has finished, from its `/metrics`.
async fn configrepo_syncs(ledgerops: &Ledgerops) -> u64 {
    let metrics = ledgerops.metrics().await;
    metrics
        .lines()
        .find_map(|l| {
            l.strip_prefix("ledgerops_reconcile_duration_seconds_count{kind=\"ConfigRepo\"} ")
        })
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0)
}

/// Every Transaction's resourceVersion once the Transaction controller has recorded its status
/// for every generation and nothing moved for a second (its status writes move versions too).
async fn settled(txs: &Api<Transaction>) -> BTreeMap<String, String> {
    let mut last = BTreeMap::new();
    loop {
        let list = txs
            .list(&ListParams::default())
            .await
            .expect("listing Transactions");
        let observed = list.items.iter().all(|t| {
            t.status.as_ref().and_then(|s| s.observed_generation) == t.metadata.generation
        });
        let now: BTreeMap<String, String> = list
            .items
            .iter()
            .map(|t| (t.name_any(), t.resource_version().unwrap_or_default()))
            .collect();
        if observed && now == last {
            return now;
        }
        last = now;
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

/// How many objects' resourceVersions differ between two snapshots.
fn moved(before: &BTreeMap<String, String>, after: &BTreeMap<String, String>) -> usize {
    after
        .iter()
        .filter(|(k, v)| before.get(*k) != Some(*v))
        .count()
}

/// Times `kubectl apply --server-side -R` of `tree` into `ns`; the API writes it made.
async fn kubectl_apply(
    plane: &ControlPlane,
    client: &Client,
    tree: &Path,
    ns: &str,
) -> (Duration, u64) {
    let writes = ApiRequests::read(client, Requests::TransactionWrites).await;
    let start = Instant::now();
    let tree = tree.display().to_string();
    plane
        .kubectl_ok(&["apply", "--server-side", "-R", "-f", &tree, "-n", ns])
        .expect("kubectl apply");
    let took = start.elapsed();
    (
        took,
        ApiRequests::read(client, Requests::TransactionWrites)
            .await
            .since(&writes),
    )
}
