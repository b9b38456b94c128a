//! Webhook intake: signed `/agent` deliveries posted to `POST /webhooks/gitea` of a real
//! `ledgerops run`, each persisted as an AgentJob (with its receive sequence) in a real API
//! server. Prints deliveries accepted per second and latency percentiles, for unique deliveries
//! and for a stream where 10% repeat an earlier delivery. Asserts only correctness (one job per
//! distinct comment), nothing about time.
//!
//! The controller's Gitea URL points at a closed port, so the jobs stay Received, with their
//! first error: the figures are the intake path alone (signature, conversion, de-duplication,
//! sequence, create), with the reconciler's status writes competing for the same API server as
//! they would in production. Also printed: the requests about single AgentJobs per job until
//! every job has its first status, and the API server's ceiling for a delivery's least work.
//!
//! `cargo bench -p ledgerops-e2e --bench webhook`

use std::time::{Duration, Instant};

use futures::StreamExt;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, ListParams, PostParams};
use ledgerops::api::agent_job::AgentJob;
use ledgerops::logic::job::persisted::{from_persisted, to_status};
use ledgerops::logic::job::webhook::sign;
use ledgerops_e2e::api_requests::{ApiRequests, Requests};
use ledgerops_e2e::controller::Ledgerops;
use ledgerops_e2e::cpu::Cores;
use ledgerops_e2e::install_crds;
use ledgerops_testenv::ControlPlane;
use serde_json::json;

const SECRET: &str = "bench-secret";
const DELIVERIES: usize = 600;
const CONCURRENCY: usize = 16;
const WARMUP: usize = 20;

struct Figures {
    accepted_per_sec: f64,
    new: usize,
    duplicates: usize,
    p50: Duration,
    p99: Duration,
    max: Duration,
    jobs: usize,
    /// The API server's writes per second meanwhile, everyone's.
    api_writes_per_sec: f64,
    /// Requests about single AgentJobs per new job, until every job has its first status.
    job_requests_per_job: f64,
    /// Cores busy meanwhile: the control plane (API server, kine, controller manager), and
    /// ledgerops.
    plane_cores: f64,
    ledgerops_cores: f64,
}

fn payload(comment_id: i64) -> Vec<u8> {
    serde_json::to_vec_pretty(&json!({
        "action": "created",
        "issue": {"number": 1, "pull_request": null},
        "comment": {"id": comment_id, "body": "/agent status", "user": {"login": "writer"}},
        "repository": {"full_name": "household/ledger-config"},
        "sender": {"login": "writer"},
        "is_pull": false,
    }))
    .unwrap()
}

async fn scenario(plane: &ControlPlane, duplicate_every: Option<usize>) -> Figures {
    let client = plane.client().await.unwrap();
    let ns = plane.namespace("bench-webhook").await.unwrap();
    let controller = Ledgerops::start_with(
        plane,
        &[
            "--gitea-url",
            "http://127.0.0.1:1",
            "--gitea-bot-login",
            "ledgerops-bot",
            "--gitea-repository",
            "household/ledger-config",
            "--agent-namespace",
            &ns,
        ],
        &[
            ("LEDGEROPS_GITEA_TOKEN", "unused"),
            ("LEDGEROPS_GITEA_WEBHOOK_SECRET", SECRET),
            ("RUST_LOG", "warn"),
        ],
    )
    .await;
    let url = controller.webhook_url().to_owned();
    // Delivery i repeats delivery i-7 when it is a duplicate (same comment, same delivery id).
    let plan: Vec<(String, i64)> = (0..DELIVERIES)
        .map(|i| match duplicate_every {
            Some(n) if i >= 7 && i % n == 0 => (format!("d-{}", i - 7), (i - 7) as i64 + 1),
            _ => (format!("d-{i}"), i as i64 + 1),
        })
        .collect();
    let distinct: std::collections::HashSet<i64> = plan.iter().map(|p| p.1).collect();
    let http = reqwest::Client::new();
    // Warm up (connections, the API server's caches), outside the measurement.
    for i in 0..WARMUP {
        let body = payload(1_000_000 + i as i64);
        let status = http
            .post(&url)
            .header("X-Gitea-Event", "issue_comment")
            .header("X-Gitea-Delivery", format!("warmup-{i}"))
            .header("X-Gitea-Signature", sign(SECRET.as_bytes(), &body))
            .body(body)
            .send()
            .await
            .unwrap()
            .status();
        assert_eq!(status.as_u16(), 202);
    }
    let writes = ApiRequests::read(&client, Requests::Writes).await;
    let job_requests = ApiRequests::read(&client, Requests::AgentJobs).await;
    let plane_cpu = Cores::measure(plane.pids());
    let ledgerops_cpu = Cores::measure(vec![controller.pid()]);
    let started = Instant::now();
    let results: Vec<(u16, Duration)> = futures::stream::iter(plan)
        .map(|(delivery, comment)| {
            let http = http.clone();
            let url = url.clone();
            async move {
                let body = payload(comment);
                let t = Instant::now();
                let status = http
                    .post(&url)
                    .header("Content-Type", "application/json")
                    .header("X-Gitea-Event", "issue_comment")
                    .header("X-Gitea-Event-Type", "issue_comment")
                    .header("X-Gitea-Delivery", delivery)
                    .header("X-Gitea-Signature", sign(SECRET.as_bytes(), &body))
                    .body(body)
                    .send()
                    .await
                    .map(|r| r.status().as_u16())
                    .unwrap_or(0);
                (status, t.elapsed())
            }
        })
        .buffer_unordered(CONCURRENCY)
        .collect()
        .await;
    let elapsed = started.elapsed();
    let (plane_cores, ledgerops_cores) = (plane_cpu.busy(), ledgerops_cpu.busy());
    let api_writes = ApiRequests::read(&client, Requests::Writes)
        .await
        .since(&writes);
    let new = results.iter().filter(|r| r.0 == 202).count();
    let duplicates = results.iter().filter(|r| r.0 == 200).count();
    assert_eq!(
        new + duplicates,
        DELIVERIES,
        "some deliveries failed: {:?}",
        results
            .iter()
            .filter(|r| r.0 != 202 && r.0 != 200)
            .take(5)
            .collect::<Vec<_>>()
    );
    let jobs = with_status(&Api::namespaced(client.clone(), &ns)).await;
    let job_requests = ApiRequests::read(&client, Requests::AgentJobs)
        .await
        .since(&job_requests);
    assert_eq!(
        jobs.len(),
        distinct.len() + WARMUP,
        "one AgentJob per distinct comment"
    );
    let mut seqs: Vec<i64> = jobs.iter().map(|j| j.spec.sequence).collect();
    seqs.sort_unstable();
    seqs.dedup();
    assert_eq!(seqs.len(), jobs.len(), "receive sequences are unique");
    drop(controller);
    let (p50, p99, max) = percentiles(results.iter().map(|r| r.1).collect());
    Figures {
        accepted_per_sec: DELIVERIES as f64 / elapsed.as_secs_f64(),
        new,
        duplicates,
        p50,
        p99,
        max,
        jobs: jobs.len() - WARMUP,
        api_writes_per_sec: api_writes as f64 / elapsed.as_secs_f64(),
        job_requests_per_job: job_requests as f64 / new as f64,
        plane_cores,
        ledgerops_cores,
    }
}

/// Every AgentJob, once each has its first status (Gitea is unreachable: its first error), so
/// that the requests counted are each job's whole intake.
async fn with_status(api: &Api<AgentJob>) -> Vec<AgentJob> {
    let started = Instant::now();
    loop {
        let jobs = api.list(&ListParams::default()).await.unwrap().items;
        if jobs.iter().all(|j| j.status.is_some()) {
            return jobs;
        }
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "jobs without status after 120 s"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// p50, p99 and the maximum of `latencies`.
fn percentiles(mut latencies: Vec<Duration>) -> (Duration, Duration, Duration) {
    latencies.sort_unstable();
    let pct = |p: usize| latencies[(latencies.len() * p / 100).min(latencies.len() - 1)];
    (pct(50), pct(99), *latencies.last().unwrap())
}

/// The API server's own ceiling beside the webhook's: as many creates of a ConfigMap about the
/// size of an AgentJob, as many in flight, by a client of its own. A delivery costs at least
/// one such create (its job) plus the receive sequence's update.
async fn api_server_alone(plane: &ControlPlane) -> (f64, Duration, Duration, Duration) {
    let client = plane.client().await.unwrap();
    let ns = plane.namespace("bench-api").await.unwrap();
    let api: Api<ConfigMap> = Api::namespaced(client, &ns);
    let body = String::from_utf8(payload(1)).unwrap();
    let started = Instant::now();
    let latencies: Vec<Duration> = futures::stream::iter(0..DELIVERIES)
        .map(|i| {
            let (api, body) = (api.clone(), body.clone());
            async move {
                let cm: ConfigMap = serde_json::from_value(json!({
                    "metadata": {"name": format!("job-{i}")}, "data": {"delivery": body}
                }))
                .unwrap();
                let t = Instant::now();
                api.create(&PostParams::default(), &cm).await.unwrap();
                t.elapsed()
            }
        })
        .buffer_unordered(CONCURRENCY)
        .collect()
        .await;
    let per_sec = DELIVERIES as f64 / started.elapsed().as_secs_f64();
    let (p50, p99, max) = percentiles(latencies);
    (per_sec, p50, p99, max)
}

#[tokio::main]
async fn main() {
    let plane = ControlPlane::start().await.expect("control plane");
    install_crds(&plane.client().await.unwrap()).await;
    println!(
        "{DELIVERIES} signed deliveries, {CONCURRENCY} in flight, into a real kube-apiserver (kine, in memory)\n"
    );
    println!(
        "| stream | accepted/s | 202 new | 200 duplicate | AgentJobs | p50 | p99 | max | API server writes/s meanwhile | AgentJob requests per job | cores busy meanwhile: control plane / ledgerops (of {}) |",
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for (label, dup) in [("unique", None), ("10% duplicates", Some(10))] {
        let f = scenario(&plane, dup).await;
        println!(
            "| {label} | {:.0} | {} | {} | {} | {:.1} ms | {:.1} ms | {:.1} ms | {:.0} | {:.2} | {:.2} / {:.2} |",
            f.accepted_per_sec,
            f.new,
            f.duplicates,
            f.jobs,
            f.p50.as_secs_f64() * 1e3,
            f.p99.as_secs_f64() * 1e3,
            f.max.as_secs_f64() * 1e3,
            f.api_writes_per_sec,
            f.job_requests_per_job,
            f.plane_cores,
            f.ledgerops_cores
        );
    }
    let ceilings = [
        (
            format!(
                "the API server alone ({DELIVERIES} ConfigMap creates, {CONCURRENCY} in flight)"
            ),
            api_server_alone(&plane).await,
        ),
        (
            format!(
                "the API server alone ({DELIVERIES} AgentJob creates, each with a status write, {CONCURRENCY} in flight)"
            ),
            least_work(&plane).await,
        ),
    ];
    for (label, (per_sec, p50, p99, max)) in ceilings {
        println!(
            "| {label} | {per_sec:.0} | | | | {:.1} ms | {:.1} ms | {:.1} ms | | | |",
            p50.as_secs_f64() * 1e3,
            p99.as_secs_f64() * 1e3,
            max.as_secs_f64() * 1e3
        );
    }
}

/// The API server's ceiling for what a delivery costs it at least: its AgentJob's create and
/// one status write (received, with its first outcome), as many in flight, by a client of its
/// own. The latency is the create's, which is what a delivery waits for.
async fn least_work(plane: &ControlPlane) -> (f64, Duration, Duration, Duration) {
    let client = plane.client().await.unwrap();
    let ns = plane.namespace("bench-least").await.unwrap();
    let api: Api<AgentJob> = Api::namespaced(client, &ns);
    let started = Instant::now();
    let latencies: Vec<Duration> = futures::stream::iter(0..DELIVERIES)
        .map(|i| {
            let api = api.clone();
            async move {
                let job: AgentJob = serde_json::from_value(json!({
                    "apiVersion": "ledgerops.dev/v1alpha1", "kind": "AgentJob",
                    "metadata": {"name": format!("job-{i}")},
                    "spec": {
                        "deliveryId": format!("d-{i}"), "event": "IssueComment",
                        "repository": "household/ledger-config", "issueNumber": 1,
                        "commentId": i + 1, "author": "writer", "command": "/agent status",
                        "sequence": i + 1, "receivedAt": "2026-12-01T00:00:00Z"
                    }
                }))
                .unwrap();
                let t = Instant::now();
                let mut created = api.create(&PostParams::default(), &job).await.unwrap();
                let latency = t.elapsed();
                let state = from_persisted(&created.spec, None, created.metadata.generation);
                created.status = Some(to_status(&state));
                api.replace_status(&format!("job-{i}"), &PostParams::default(), &created)
                    .await
                    .unwrap();
                latency
            }
        })
        .buffer_unordered(CONCURRENCY)
        .collect()
        .await;
    let per_sec = DELIVERIES as f64 / started.elapsed().as_secs_f64();
    let (p50, p99, max) = percentiles(latencies);
    (per_sec, p50, p99, max)
}
